package specs

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/pubsub-conformance/harness/backends"
)

// Specs for contract sentences no earlier spec asserted (reports/contract.md).

// closedWithin bounds a call on a closed object: it must fail at once, not wait out its context.
const closedWithin = 5 * time.Second

func deliveryMore(env *Env) {
	Describe("delivery", Label("delivery"), func() {
		var b backends.Backend
		BeforeEach(func(ctx SpecContext) { b = open(ctx, env) }, NodeTimeout(callWithin))

		Behaviour("D8", func(ctx SpecContext) {
			topic := newTopic(backends.ClassFlow, "d8")
			c := subscribe(ctx, b, topic, unique("d8"))
			props := map[string]string{
				"Content-Type":            "Application/JSON; charset=UTF-8",
				"content-type":            "lower case key, a different key",
				"X-Trace.Span-ID":         "a.b-c_d",
				"key with spaces":         "  leading and trailing spaces  ",
				"dots.in.key.":            ".",
				"dash-":                   "-",
				"MiXeD":                   "MiXeD CaSe VaLuE",
				"unicode ключ ✓":          "значение ✓ 値",
				strings.Repeat("K", 300):  "long key",
				"long-value":              strings.Repeat("0123456789abcdef", 512) + "end",
				"tg.routing:key/with=sym": "a=b&c=d;e,f",
			}
			sendAll(ctx, produce(ctx, b, topic), backends.Message{Payload: []byte("d8"), Properties: props})
			r := receiveN(ctx, c, 1, arriveWithin, ack)
			Expect(r.Got).To(HaveLen(1), "expected the message; %s", r.describe())
			Expect(propDiff(props, r.Got[0].Properties)).To(BeEmpty(), "properties must come back byte-exact")
		}, SpecTimeout(specTimeout))

		BehaviourTable("D9",
			func(ctx SpecContext, cl backends.Class) {
				topic := newTopic(cl, "d9")
				p := produce(ctx, b, topic) // creates the topic
				before := batch("d9-before", 3)
				sendAll(ctx, p, before...)
				c := subscribe(ctx, b, topic, unique("d9"), backends.WithPosition(backends.Latest))
				sendAll(ctx, p, msg("d9-after", 0))
				r := receivePayload(ctx, c, "d9-after-0", arriveWithin, ack)
				Expect(payloads(r.Got)).To(ContainElement("d9-after-0"), "the message sent after Consumer() returned must arrive; %s", r.describe())
				more := receiveFor(ctx, c, quietFor, ack)
				all := append(r.Got, more.Got...)
				var early []string
				for _, m := range msgPayloads(before) {
					if contains(all, m) {
						early = append(early, m)
					}
				}
				Expect(early).To(BeEmpty(),
					"%s: a new subscription at latest received %s, sent before it was live (latest acted as earliest); got %s",
					cl, show(early), show(payloads(all)))
			},
			func(cl backends.Class) string { return fmt.Sprintf("class %s", cl) },
			Entry(nil, backends.ClassFlow, SpecTimeout(specTimeout)),
			Entry(nil, backends.ClassRequest, SpecTimeout(specTimeout)),
		)
	})
}

func acksUnknown(env *Env) {
	Describe("ack and nack of unknown deliveries", Label("acks"), func() {
		var b backends.Backend
		BeforeEach(func(ctx SpecContext) { b = open(ctx, env) }, NodeTimeout(callWithin))

		Behaviour("A8", func(ctx SpecContext) {
			t1, t2 := newTopic(backends.ClassFlow, "a8-one"), newTopic(backends.ClassFlow, "a8-two")
			sub1 := unique("a8")
			c1 := subscribe(ctx, b, t1, sub1)
			c2 := subscribe(ctx, b, t2, unique("a8"))
			sendAll(ctx, produce(ctx, b, t1), msg("a8-one", 0))
			sendAll(ctx, produce(ctx, b, t2), msg("a8-two", 0))
			r1 := receiveN(ctx, c1, 1, arriveWithin, keep)
			Expect(r1.Got).To(HaveLen(1), "consumer 1; %s", r1.describe())
			r2 := receiveN(ctx, c2, 1, arriveWithin, keep)
			Expect(r2.Got).To(HaveLen(1), "consumer 2; %s", r2.describe())
			mine, theirs := r1.Got[0], r2.Got[0]
			made := backends.Delivery{ID: "made-up-" + unique("id"), Topic: t1, Payload: mine.Payload, Properties: mine.Properties}

			for _, tc := range []struct {
				what string
				d    backends.Delivery
			}{{"another consumer's delivery (ID " + theirs.ID + ")", theirs}, {"a made-up ID", made}} {
				for _, op := range []struct {
					name string
					call func(context.Context, backends.Delivery) error
				}{{"Ack", c1.Ack}, {"Nack", c1.Nack}} {
					cctx, cancel := context.WithTimeout(ctx, callWithin)
					err := op.call(cctx, tc.d)
					cancel()
					Expect(err).To(MatchError(backends.ErrUnknownDelivery),
						"%s of %s on consumer 1 must fail with ErrUnknownDelivery; got %v", op.name, tc.what, err)
				}
			}
			// The wrong acks and nacks touched nothing: consumer 1's own message is still unacked
			// (it comes again after a reopen) and acking it works.
			closeNow(ctx, c1)
			again := subscribe(ctx, b, t1, sub1)
			r := receivePayload(ctx, again, "a8-one-0", redeliverWithin, ack)
			Expect(payloads(r.Got)).To(ContainElement("a8-one-0"),
				"consumer 1's own unacked message must come again after reopen (an Ack meant for another delivery acknowledged it?); %s", r.describe())
			Expect(c2.Ack(ctx, theirs)).To(Succeed(), "consumer 2 acks its own delivery")
		}, SpecTimeout(specTimeout))
	})
}

func lifecycleMore(env *Env) {
	Describe("topic and client lifecycle", Label("lifecycle"), func() {
		var b backends.Backend
		BeforeEach(func(ctx SpecContext) { b = open(ctx, env) }, NodeTimeout(callWithin))

		exists := func(ctx context.Context, topic string) bool {
			GinkgoHelper()
			ok, err := b.TopicExists(ctx, topic)
			Expect(err).NotTo(HaveOccurred(), "TopicExists(%s)", topic)
			return ok
		}

		BehaviourTable("L5",
			func(ctx SpecContext, cl backends.Class) {
				topic := newTopic(cl, "l5")
				Expect(exists(ctx, topic)).To(BeFalse(), "a fresh topic %s must not exist yet", topic)
				cctx, cancel := context.WithTimeout(ctx, arriveWithin)
				start := time.Now()
				c, err := b.Consumer(cctx, topic, unique("l5"))
				cancel()
				Expect(err).NotTo(HaveOccurred(), "Consumer() on the missing topic %s failed after %s", topic, since(start))
				DeferCleanup(func(ctx SpecContext) { Expect(c.Close(ctx)).To(Succeed()) }, NodeTimeout(callWithin))
				Expect(exists(ctx, topic)).To(BeTrue(), "Consumer() returned but %s does not exist", topic)
				sendAll(ctx, produce(ctx, b, topic), msg("l5", 0))
				r := receiveN(ctx, c, 1, arriveWithin, ack)
				Expect(payloads(r.Got)).To(Equal([]string{"l5-0"}),
					"the consumer made before its topic existed must receive what is sent afterwards; %s", r.describe())
			},
			func(cl backends.Class) string { return fmt.Sprintf("class %s", cl) },
			Entry(nil, backends.ClassFlow, SpecTimeout(specTimeout)),
			Entry(nil, backends.ClassResponse, SpecTimeout(specTimeout)),
		)

		Behaviour("L6", func(ctx SpecContext) {
			topic := newTopic(backends.ClassFlow, "l6")
			Expect(exists(ctx, topic)).To(BeFalse(), "a fresh topic %s must not exist yet", topic)
			p := produce(ctx, b, topic)
			Expect(exists(ctx, topic)).To(BeTrue(), "Producer(%s) returned but the topic does not exist (created only on the first Send?)", topic)
			sendAll(ctx, p, msg("l6", 0))
		}, SpecTimeout(specTimeout))

		Behaviour("L7", func(ctx SpecContext) {
			bare := unique("l7")
			c := subscribe(ctx, b, "flow:tg:"+bare, unique("l7"))
			sendAll(ctx, produce(ctx, b, bare), msg("l7-bare", 0))
			r := receiveN(ctx, c, 1, arriveWithin, ack)
			Expect(payloads(r.Got)).To(Equal([]string{"l7-bare-0"}),
				"a message sent to the bare topic %q must reach a consumer of flow:tg:%s; %s", bare, bare, r.describe())

			base := "request:tg:" + unique("l7")
			one, two := base+":one", base+":two"
			c1 := subscribe(ctx, b, one, unique("l7"))
			c2 := subscribe(ctx, b, two, unique("l7"))
			sendAll(ctx, produce(ctx, b, two), msg("l7-two", 0))
			sendAll(ctx, produce(ctx, b, one), msg("l7-one", 0))
			r1 := receivePayload(ctx, c1, "l7-one-0", arriveWithin, ack)
			Expect(payloads(r1.Got)).To(Equal([]string{"l7-one-0"}),
				"%s must receive only its own message (%s is another topic: further colons belong to the topic); %s", one, two, r1.describe())
			r2 := receivePayload(ctx, c2, "l7-two-0", arriveWithin, ack)
			Expect(payloads(r2.Got)).To(Equal([]string{"l7-two-0"}), "%s must receive only its own message; %s", two, r2.describe())
		}, SpecTimeout(specTimeout))

		Behaviour("L8", func(ctx SpecContext) {
			topic := newTopic(backends.ClassFlow, "l8")
			c := subscribe(ctx, b, topic, unique("l8"))
			p := produce(ctx, b, topic)
			sendAll(ctx, p, batch("l8", 2)...)
			r := receiveN(ctx, c, 2, arriveWithin, keep)
			Expect(r.Got).To(HaveLen(2), "expected 2 messages; %s", r.describe())
			closeNow(ctx, c)
			Expect(p.Close(ctx)).To(Succeed(), "close the producer")
			expectClosed := func(what string, call func(context.Context) error) {
				GinkgoHelper()
				cctx, cancel := context.WithTimeout(ctx, closedWithin)
				defer cancel()
				start := time.Now()
				err := call(cctx)
				Expect(err).To(MatchError(backends.ErrClosed),
					"%s after Close must fail at once with ErrClosed; got %v after %s", what, err, since(start))
			}
			expectClosed("Receive", func(ctx context.Context) error { _, err := c.Receive(ctx); return err })
			expectClosed("Ack", func(ctx context.Context) error { return c.Ack(ctx, r.Got[0]) })
			expectClosed("Nack", func(ctx context.Context) error { return c.Nack(ctx, r.Got[1]) })
			expectClosed("Send", func(ctx context.Context) error { return p.Send(ctx, msg("l8-late", 0)) })
		}, SpecTimeout(specTimeout))

		Behaviour("L9", func(ctx SpecContext) {
			topic := newTopic(backends.ClassFlow, "l9")
			own, err := env.Open(ctx)
			Expect(err).NotTo(HaveOccurred(), "open a second client")
			DeferCleanup(func(ctx SpecContext) { _ = own.Close(ctx) }, NodeTimeout(callWithin))
			p, err := own.Producer(ctx, topic)
			Expect(err).NotTo(HaveOccurred(), "producer")
			c, err := own.Consumer(ctx, topic, unique("l9"))
			Expect(err).NotTo(HaveOccurred(), "consumer")
			for i := 1; i <= 2; i++ {
				Expect(p.Close(ctx)).To(Succeed(), "producer Close #%d", i)
				Expect(c.Close(ctx)).To(Succeed(), "consumer Close #%d", i)
			}
			for i := 1; i <= 2; i++ {
				Expect(own.Close(ctx)).To(Succeed(), "backend Close #%d", i)
			}
		}, SpecTimeout(specTimeout))

		Behaviour("L10", func(ctx SpecContext) {
			topic := newTopic(backends.ClassFlow, "l10")
			own, err := env.Open(ctx)
			Expect(err).NotTo(HaveOccurred(), "open a second client")
			DeferCleanup(func(ctx SpecContext) { _ = own.Close(ctx) }, NodeTimeout(callWithin))
			p, err := own.Producer(ctx, topic)
			Expect(err).NotTo(HaveOccurred(), "producer")
			c, err := own.Consumer(ctx, topic, unique("l10"))
			Expect(err).NotTo(HaveOccurred(), "consumer")
			Expect(own.Close(ctx)).To(Succeed(), "close the backend with its producer and consumer still open")
			rctx, cancel := context.WithTimeout(ctx, closedWithin)
			start := time.Now()
			_, err = c.Receive(rctx)
			cancel()
			Expect(err).To(MatchError(backends.ErrClosed),
				"Receive on a consumer of a closed backend must fail at once with ErrClosed; got %v after %s", err, since(start))
			sctx, cancel := context.WithTimeout(ctx, closedWithin)
			start = time.Now()
			err = p.Send(sctx, msg("l10", 0))
			cancel()
			Expect(err).To(MatchError(backends.ErrClosed),
				"Send on a producer of a closed backend must fail at once with ErrClosed; got %v after %s", err, since(start))
		}, SpecTimeout(specTimeout))
	})
}

// propDiff lists how got differs from want, key by key (quoted, so spaces and case show).
func propDiff(want, got map[string]string) []string {
	var out []string
	for k, v := range want {
		g, ok := got[k]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("key %q missing", clipped(k)))
		case g != v:
			out = append(out, fmt.Sprintf("key %q: sent %q, got %q", clipped(k), clipped(v), clipped(g)))
		}
	}
	for k, v := range got {
		if _, ok := want[k]; !ok {
			out = append(out, fmt.Sprintf("extra key %q = %q", clipped(k), clipped(v)))
		}
	}
	sort.Strings(out)
	return out
}

func clipped(s string) string {
	if len(s) > 60 {
		return fmt.Sprintf("%s...(%d bytes)", s[:40], len(s))
	}
	return s
}
