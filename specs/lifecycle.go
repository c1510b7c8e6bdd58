package specs

import (
	"context"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/pubsub-conformance/harness/backends"
)

func lifecycle(env *Env) {
	Describe("topic lifecycle", func() {
		var b backends.Backend
		BeforeEach(func(ctx SpecContext) { b = open(ctx, env) }, NodeTimeout(callWithin))

		exists := func(ctx context.Context, topic string) bool {
			GinkgoHelper()
			ok, err := b.TopicExists(ctx, topic)
			Expect(err).NotTo(HaveOccurred(), "TopicExists(%s)", topic)
			return ok
		}

		BehaviourTable("L1",
			func(ctx SpecContext, cl backends.Class) {
				topic := newTopic(cl, "l1")
				Expect(exists(ctx, topic)).To(BeFalse(), "a fresh topic %s must not exist before CreateTopic", topic)
				Expect(b.CreateTopic(ctx, topic)).To(Succeed(), "create %s", topic)
				Expect(exists(ctx, topic)).To(BeTrue(), "%s must exist after CreateTopic returned", topic)
				Expect(b.CreateTopic(ctx, topic)).To(Succeed(), "creating an existing topic must not be an error")
				Expect(b.DeleteTopic(ctx, topic)).To(Succeed(), "delete %s", topic)
				Expect(exists(ctx, topic)).To(BeFalse(), "%s must not exist after DeleteTopic returned", topic)
				Expect(b.DeleteTopic(ctx, topic)).To(Succeed(), "deleting a missing topic must not be an error")
			},
			func(cl backends.Class) string { return fmt.Sprintf("class %s", cl) },
			Entry(nil, backends.ClassFlow, SpecTimeout(time.Minute)),
			Entry(nil, backends.ClassRequest, SpecTimeout(time.Minute)),
		)

		Behaviour("L2", func(ctx SpecContext) {
			topic := newTopic(backends.ClassFlow, "l2")
			Expect(exists(ctx, topic)).To(BeFalse(), "a fresh topic must not exist")
			Expect(b.EnsureTopic(ctx, topic)).To(Succeed(), "EnsureTopic on a missing topic")
			Expect(exists(ctx, topic)).To(BeTrue(), "EnsureTopic must create a missing topic")
			DeferCleanup(func(ctx SpecContext) { Expect(b.DeleteTopic(ctx, topic)).To(Succeed()) }, NodeTimeout(callWithin))
			sendAll(ctx, produce(ctx, b, topic), msg("l2", 0))
			Expect(b.EnsureTopic(ctx, topic)).To(Succeed(), "EnsureTopic on a present topic")
			c := subscribe(ctx, b, topic, unique("l2"), backends.WithPosition(backends.Earliest))
			r := receiveN(ctx, c, 1, arriveWithin, ack)
			Expect(payloads(r.Got)).To(Equal([]string{"l2-0"}),
				"EnsureTopic on a present topic must keep its messages (a re-create would lose them); %s", r.describe())
		}, SpecTimeout(specTimeout))

		Behaviour("L3", func(ctx SpecContext) {
			topic := newTopic(backends.ClassFlow, "l3")
			sub := unique("l3")
			c := subscribe(ctx, b, topic, sub, backends.WithPosition(backends.Earliest))
			p := produce(ctx, b, topic)
			sendAll(ctx, p, batch("l3-old", 3)...)
			r := receiveN(ctx, c, 3, arriveWithin, ack)
			Expect(r.Got).To(HaveLen(3), "expected 3 messages before the delete; %s", r.describe())
			closeNow(ctx, c)
			Expect(p.Close(ctx)).To(Succeed())

			Expect(b.DeleteTopic(ctx, topic)).To(Succeed(), "delete %s", topic)
			Expect(exists(ctx, topic)).To(BeFalse(), "%s must be gone after DeleteTopic", topic)
			Expect(b.CreateTopic(ctx, topic)).To(Succeed(), "re-create %s", topic)
			fresh := batch("l3-new", 4)
			sendAll(ctx, produce(ctx, b, topic), fresh...)
			c2 := subscribe(ctx, b, topic, sub, backends.WithPosition(backends.Earliest))
			after := receiveN(ctx, c2, len(fresh), arriveWithin, ack)
			Expect(payloads(after.Got)).To(Equal(msgPayloads(fresh)),
				"subscription %s must start fresh (earliest) on the re-created topic, not resume at its old position 3, and get the new messages in send order %v; %s", sub, msgPayloads(fresh), after.describe())
		}, SpecTimeout(specTimeout))

		BehaviourTable("L4",
			func(ctx SpecContext, bad string, wouldBe []string) {
				cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
				defer cancel()
				check := func(call string, err error) {
					GinkgoHelper()
					Expect(err).To(HaveOccurred(), "%s(%q) must fail", call, bad)
					Expect(err).To(MatchError(backends.ErrInvalidTopic),
						"%s(%q) failed with %q; expected an error wrapping backends.ErrInvalidTopic", call, bad, err)
				}
				check("CreateTopic", b.CreateTopic(cctx, bad))
				check("EnsureTopic", b.EnsureTopic(cctx, bad))
				_, err := b.TopicExists(cctx, bad)
				check("TopicExists", err)
				_, err = b.Producer(cctx, bad)
				check("Producer", err)
				_, err = b.Consumer(cctx, bad, unique("l4"))
				check("Consumer", err)
				check("DeleteTopic", b.DeleteTopic(cctx, bad))
				for _, t := range wouldBe {
					Expect(exists(ctx, t)).To(BeFalse(), "rejecting %q must create nothing, but %s exists", bad, t)
				}
			},
			func(bad string, _ []string) string { return fmt.Sprintf("%q", bad) },
			Entry(nil, "", nil, SpecTimeout(time.Minute)),
			Entry(nil, "tg:l4-two-parts", []string{"flow:tg:l4-two-parts", "flow:tg:tg.l4-two-parts"}, SpecTimeout(time.Minute)),
			Entry(nil, "bogus:tg:l4-bad-class", []string{"flow:tg:l4-bad-class"}, SpecTimeout(time.Minute)),
			Entry(nil, "flow::l4-empty-space", []string{"flow:tg:l4-empty-space"}, SpecTimeout(time.Minute)),
			Entry(nil, "flow:tg:", nil, SpecTimeout(time.Minute)),
			Entry(nil, "flow:t g:l4-space", []string{"flow:tg:l4-space"}, SpecTimeout(time.Minute)),
			Entry(nil, "flow:tg:l4/slash", []string{"flow:tg:l4"}, SpecTimeout(time.Minute)),
			Entry(nil, "FLOW:tg:l4-upper-class", []string{"flow:tg:l4-upper-class"}, SpecTimeout(time.Minute)),
		)

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

// closedWithin bounds a call on a closed object: it must fail at once, not wait out its context.
const closedWithin = 5 * time.Second
