package specs

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/pubsub-conformance/harness/backends"
)

func acks(env *Env) {
	Describe("ack and nack", func() {
		var b backends.Backend
		BeforeEach(func(ctx SpecContext) { b = open(ctx, env) }, NodeTimeout(callWithin))

		BehaviourTable("A1",
			func(ctx SpecContext, cl backends.Class) {
				needForClass(b, cl, backends.CapTransientRedelivery)
				nackRedelivers(ctx, b, cl, nil)
			},
			func(cl backends.Class) string { return fmt.Sprintf("class %s", cl) },
			Entry(nil, backends.ClassFlow, SpecTimeout(specTimeout)),
			Entry(nil, backends.ClassRequest, SpecTimeout(specTimeout)),
		)

		Behaviour("A2", func(ctx SpecContext) { ackOnlyThat(ctx, b, nil) }, SpecTimeout(specTimeout))

		Behaviour("A3", func(ctx SpecContext) {
			topic := newTopic(backends.ClassFlow, "a3")
			sub := unique("a3")
			c := subscribe(ctx, b, topic, sub)
			sendAll(ctx, produce(ctx, b, topic), msg("a3", 0))
			r := receiveN(ctx, c, 1, arriveWithin, keep)
			Expect(r.Got).To(HaveLen(1), "expected the message; %s", r.describe())
			closeNow(ctx, c)
			c2 := subscribe(ctx, b, topic, sub)
			again := receivePayload(ctx, c2, "a3-0", redeliverWithin, ack)
			Expect(payloads(again.Got)).To(ContainElement("a3-0"),
				"received-but-unacked a3-0 must be delivered again after close + reopen; %s", again.describe())
		}, SpecTimeout(specTimeout))

		Behaviour("A4", func(ctx SpecContext) {
			topic := newTopic(backends.ClassFlow, "a4")
			sub := unique("a4")
			c := subscribe(ctx, b, topic, sub)
			p := produce(ctx, b, topic)
			sendAll(ctx, p, batch("a4", 3)...)
			r := receiveN(ctx, c, 3, arriveWithin, ack)
			Expect(r.Got).To(HaveLen(3), "expected 3 messages; %s", r.describe())
			closeNow(ctx, c)
			c2 := subscribe(ctx, b, topic, sub)
			sendAll(ctx, p, msg("a4-marker", 0))
			after := receivePayload(ctx, c2, "a4-marker-0", redeliverWithin, ack)
			Expect(payloads(after.Got)).To(ContainElement("a4-marker-0"), "the marker sent after reopen must arrive; %s", after.describe())
			Expect(payloads(after.Got)).To(Equal([]string{"a4-marker-0"}),
				"acked a4-0..a4-2 must not come again after reopen; %s", after.describe())
		}, SpecTimeout(specTimeout))

		Behaviour("A5", func(ctx SpecContext) {
			topic := newTopic(backends.ClassFlow, "a5")
			c := subscribe(ctx, b, topic, unique("a5"))
			sendAll(ctx, produce(ctx, b, topic), batch("a5", 2)...)
			r := receiveN(ctx, c, 2, arriveWithin, keep)
			Expect(payloads(r.Got)).To(Equal([]string{"a5-0", "a5-1"}), "expected a5-0 and a5-1 in order; %s", r.describe())
			// a5-0 is nacked while a5-1 is still held; a5-1 is acked once a5-0 came back (a
			// backend that refetches after a nack may hold a5-1 fetched again by then).
			Expect(c.Nack(ctx, r.Got[0])).To(Succeed(), "nack a5-0 (a5-1 held)")
			again := receivePayload(ctx, c, "a5-0", redeliverWithin, keep)
			Expect(payloads(again.Got)).To(ContainElement("a5-0"), "a5-0, nacked while a5-1 was held, must come again; %s", again.describe())
			Expect(c.Ack(ctx, r.Got[1])).To(Succeed(), "ack a5-1 after a5-0 came again")
			for _, d := range again.Got { // the redelivered a5-0, and a5-1 if it came again before its ack
				Expect(c.Ack(ctx, d)).To(Succeed(), "ack %s", brief(d.Payload))
			}
			quiet := receiveFor(ctx, c, quietFor*2, ack)
			Expect(payloads(quiet.Got)).NotTo(ContainElement(BeElementOf("a5-0", "a5-1")),
				"a5-0 (acked after its redelivery) or a5-1 (acked) came again within %s; %s", quietFor*2, quiet.describe())
		}, SpecTimeout(specTimeout))

		// A6 and A7 ack in completion order, as TrustGraph's receiver pool does (its handlers
		// run concurrently, so a later message is often acked before an earlier one).
		Behaviour("A6", func(ctx SpecContext) {
			topic := newTopic(backends.ClassFlow, "a6")
			sub := unique("a6")
			c := subscribe(ctx, b, topic, sub)
			p := produce(ctx, b, topic)
			sendAll(ctx, p, batch("a6", 3)...)
			r := receiveN(ctx, c, 3, arriveWithin, keep)
			Expect(payloads(r.Got)).To(Equal([]string{"a6-0", "a6-1", "a6-2"}), "expected m1, m2, m3 in order; %s", r.describe())
			Expect(c.Ack(ctx, r.Got[2])).To(Succeed(), "ack m3 (a6-2)")
			Expect(c.Ack(ctx, r.Got[1])).To(Succeed(), "ack m2 (a6-1)")
			closeNow(ctx, c)
			c2 := subscribe(ctx, b, topic, sub)
			sendAll(ctx, p, msg("a6-marker", 0))
			after := receivePayload(ctx, c2, "a6-marker-0", redeliverWithin, ack)
			Expect(payloads(after.Got)).To(ContainElement("a6-0"),
				"unacked m1 (a6-0) must come again after reopen: only m3 and m2 were acked, and an ack must not acknowledge an earlier message; %s", after.describe())
			Expect(payloads(after.Got)).NotTo(ContainElement(BeElementOf("a6-1", "a6-2")),
				"m2 (a6-1) and m3 (a6-2) were acked (out of order) but came again after reopen: out-of-order acks were not kept; %s", after.describe())
		}, SpecTimeout(specTimeout))

		Behaviour("A7", func(ctx SpecContext) {
			const n, rounds, perRound, workers = 240, 4, 50, 4
			rng := rand.New(rand.NewPCG(uint64(GinkgoRandomSeed()), 7))
			topic := newTopic(backends.ClassFlow, "a7")
			sub := unique("a7")
			c := subscribe(ctx, b, topic, sub)
			sent := batch("a7", n)
			sendConcurrently(ctx, produce(ctx, b, topic), sent, workers)

			acked := map[string]bool{}
			var ackedAgain []string // acked in an earlier round, delivered again after a reopen
			for round := range rounds {
				r := receiveN(ctx, c, perRound, arriveWithin, keep)
				Expect(r.Got).NotTo(BeEmpty(), "round %d: nothing arrived (%d of %d acked so far); %s", round+1, len(acked), n, r.describe())
				for _, d := range r.Got {
					if acked[string(d.Payload)] {
						ackedAgain = append(ackedAgain, string(d.Payload))
					}
				}
				// Ack about three in four, in random order, from several goroutines at once.
				var toAck []backends.Delivery
				for _, i := range rng.Perm(len(r.Got)) {
					if rng.IntN(4) != 0 {
						toAck = append(toAck, r.Got[i])
					}
				}
				errs := ackConcurrently(ctx, c, toAck, workers)
				Expect(errs).To(BeEmpty(), "round %d: acks from %d goroutines failed", round+1, workers)
				for _, d := range toAck {
					acked[string(d.Payload)] = true
				}
				closeNow(ctx, c)
				c = subscribe(ctx, b, topic, sub)
			}
			want := msgPayloads(sent)
			final := receiveUntil(ctx, c, redeliverWithin, ack, func(got []backends.Delivery) bool {
				if len(got) > 0 {
					last := string(got[len(got)-1].Payload)
					if acked[last] {
						ackedAgain = append(ackedAgain, last)
					}
					acked[last] = true
				}
				return len(missing(want, counts(asDeliveries(acked)))) == 0
			})
			lost := missing(want, counts(asDeliveries(acked)))
			Expect(lost).To(BeEmpty(),
				"after %d restarts with out-of-order acks from %d goroutines, %d of %d messages never arrived: %s; final loop: %s",
				rounds, workers, len(lost), n, show(lost), final.describe())
			Expect(ackedAgain).To(BeEmpty(),
				"%d messages acked (out of order) in one round came again after the reopen: %s", len(ackedAgain), show(ackedAgain))
			checkHistory(b, false)
		}, SpecTimeout(3*time.Minute))

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

// nackRedelivers is A1's body for class cl on client b (the caller skips a class b lacks
// CapTransientRedelivery for); F2 runs it under network latency. note, when not nil, is
// appended to its failure messages (F2's fault timeline).
func nackRedelivers(ctx context.Context, b backends.Backend, cl backends.Class, note fmt.Stringer) {
	topic := newTopic(cl, "a1")
	c := subscribe(ctx, b, topic, unique("a1"), backends.WithMode(backends.Shared))
	sent := backends.Message{Payload: []byte("a1-nack-me"), Properties: map[string]string{"p": "ü", "n": "1"}}
	sendAll(ctx, produce(ctx, b, topic), sent)
	r := receiveN(ctx, c, 1, arriveWithin, keep)
	Expect(r.Got).To(HaveLen(1), "expected the message before nacking it; %s%s", r.describe(), noted(note))
	nacked := time.Now()
	nctx, cancel := context.WithTimeout(ctx, callWithin)
	Expect(c.Nack(nctx, r.Got[0])).To(Succeed(), "nack%s", noted(note))
	cancel()
	again := receivePayload(ctx, c, "a1-nack-me", redeliverWithin, ack)
	Expect(payloads(again.Got)).To(ContainElement("a1-nack-me"),
		"%s: nacked message was not delivered again within %s of the nack; %s%s", cl, redeliverWithin, again.describe(), noted(note))
	d := again.Got[len(again.Got)-1]
	Expect(d.Properties).To(equalProps(sent.Properties), "redelivered properties differ (%d sent, %d redelivered, %s after the nack)%s",
		len(sent.Properties), len(d.Properties), since(nacked), noted(note))
}

// ackOnlyThat is A2's body on client b; F2 runs it under network latency. note, when not
// nil, is appended to its failure messages (F2's fault timeline).
func ackOnlyThat(ctx context.Context, b backends.Backend, note fmt.Stringer) {
	topic := newTopic(backends.ClassFlow, "a2")
	sub := unique("a2")
	c := subscribe(ctx, b, topic, sub)
	sendAll(ctx, produce(ctx, b, topic), batch("a2", 2)...)
	r := receiveN(ctx, c, 2, arriveWithin, keep)
	Expect(payloads(r.Got)).To(Equal([]string{"a2-0", "a2-1"}), "expected m1 and m2 in order; %s%s", r.describe(), noted(note))
	Expect(c.Ack(ctx, r.Got[0])).To(Succeed(), "ack m1%s", noted(note))
	closeNow(ctx, c)
	c2 := subscribe(ctx, b, topic, sub)
	again := receivePayload(ctx, c2, "a2-1", redeliverWithin, ack)
	Expect(payloads(again.Got)).To(ContainElement("a2-1"),
		"unacked m2 (a2-1) must come again after reopen (only m1 was acked); %s%s", again.describe(), noted(note))
	Expect(payloads(again.Got)).NotTo(ContainElement("a2-0"),
		"acked m1 (a2-0) came again after reopen; %s%s", again.describe(), noted(note))
}

// sendConcurrently sends msgs from workers goroutines, each send confirmed.
func sendConcurrently(ctx context.Context, p backends.Producer, msgs []backends.Message, workers int) {
	GinkgoHelper()
	failed := concurrently(msgs, workers, func(m backends.Message) error {
		sctx, cancel := context.WithTimeout(ctx, callWithin)
		defer cancel()
		return p.Send(sctx, m)
	}, func(m backends.Message) string { return string(m.Payload) })
	Expect(failed).To(BeEmpty(), "%d of %d concurrent sends failed", len(failed), len(msgs))
}

// ackConcurrently acks ds from workers goroutines, in the order of ds as the goroutines take
// them; it returns the failures.
func ackConcurrently(ctx context.Context, c backends.Consumer, ds []backends.Delivery, workers int) []string {
	return concurrently(ds, workers, func(d backends.Delivery) error {
		actx, cancel := context.WithTimeout(ctx, callWithin)
		defer cancel()
		return c.Ack(actx, d)
	}, func(d backends.Delivery) string { return "ack " + string(d.Payload) })
}

// concurrently hands items, in order, to workers goroutines that call do on each; it returns
// "<name>: <error>" for every call that failed.
func concurrently[T any](items []T, workers int, do func(T) error, name func(T) string) []string {
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failed []string
	next := make(chan T)
	for range workers {
		wg.Go(func() {
			for it := range next {
				if err := do(it); err != nil {
					mu.Lock()
					failed = append(failed, fmt.Sprintf("%s: %v", name(it), err))
					mu.Unlock()
				}
			}
		})
	}
	for _, it := range items {
		next <- it
	}
	close(next)
	wg.Wait()
	return failed
}

// asDeliveries turns a payload set into deliveries for counts/missing.
func asDeliveries(set map[string]bool) []backends.Delivery {
	out := make([]backends.Delivery, 0, len(set))
	for p := range set {
		out = append(out, backends.Delivery{Payload: []byte(p)})
	}
	return out
}
