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

// acksOutOfOrder: acks in completion order, as TrustGraph's receiver pool gives them (its
// handlers run concurrently, so a later message is often acked before an earlier one).
func acksOutOfOrder(env *Env) {
	Describe("acks out of order", Label("acks"), func() {
		var b backends.Backend
		BeforeEach(func(ctx SpecContext) { b = open(ctx, env) }, NodeTimeout(callWithin))

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
	})
}

// sendConcurrently sends msgs from workers goroutines, each send confirmed.
func sendConcurrently(ctx context.Context, p backends.Producer, msgs []backends.Message, workers int) {
	GinkgoHelper()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failed []string
	next := make(chan backends.Message)
	for range workers {
		wg.Go(func() {
			for m := range next {
				sctx, cancel := context.WithTimeout(ctx, callWithin)
				err := p.Send(sctx, m)
				cancel()
				if err != nil {
					mu.Lock()
					failed = append(failed, fmt.Sprintf("%s: %v", m.Payload, err))
					mu.Unlock()
				}
			}
		})
	}
	for _, m := range msgs {
		next <- m
	}
	close(next)
	wg.Wait()
	Expect(failed).To(BeEmpty(), "%d of %d concurrent sends failed", len(failed), len(msgs))
}

// ackConcurrently acks ds from workers goroutines, in the order of ds as the goroutines take
// them; it returns the failures.
func ackConcurrently(ctx context.Context, c backends.Consumer, ds []backends.Delivery, workers int) []string {
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failed []string
	next := make(chan backends.Delivery)
	for range workers {
		wg.Go(func() {
			for d := range next {
				actx, cancel := context.WithTimeout(ctx, callWithin)
				err := c.Ack(actx, d)
				cancel()
				if err != nil {
					mu.Lock()
					failed = append(failed, fmt.Sprintf("ack %s: %v", d.Payload, err))
					mu.Unlock()
				}
			}
		})
	}
	for _, d := range ds {
		next <- d
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
