package specs

import (
	"context"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/pubsub-conformance/harness/backends"
)

func restart(env *Env) {
	Describe("flow restart without loss", Label("restart"), func() {
		var b backends.Backend
		BeforeEach(func(ctx SpecContext) { b = open(ctx, env) }, NodeTimeout(callWithin))

		Behaviour("R1", func(ctx SpecContext) {
			topic := newTopic(backends.ClassFlow, "r1")
			sub := unique("r1")
			c := subscribe(ctx, b, topic, sub, backends.WithPosition(backends.Latest))
			p := produce(ctx, b, topic)
			sendAll(ctx, p, batch("r1-before", 2)...)
			r := receiveN(ctx, c, 2, arriveWithin, ack)
			Expect(r.Got).To(HaveLen(2), "expected the 2 messages sent before the close; %s", r.describe())
			closeNow(ctx, c)
			gap := batch("r1-gap", 3)
			sendAll(ctx, p, gap...)
			c2 := subscribe(ctx, b, topic, sub, backends.WithPosition(backends.Latest))
			after := receiveUntil(ctx, c2, redeliverWithin, ack, func(got []backends.Delivery) bool {
				return len(missing(msgPayloads(gap), counts(got))) == 0
			})
			Expect(missing(msgPayloads(gap), counts(after.Got))).To(BeEmpty(),
				"messages sent while the subscription had no consumer were lost on reopen with latest; %s", after.describe())
		}, SpecTimeout(specTimeout))

		Behaviour("R2", func(ctx SpecContext) {
			topic := newTopic(backends.ClassFlow, "r2")
			sub := unique("r2")
			c := subscribe(ctx, b, topic, sub, backends.WithPosition(backends.Latest))
			closeNow(ctx, c)
			sent := batch("r2", 3)
			sendAll(ctx, produce(ctx, b, topic), sent...)
			c2 := subscribe(ctx, b, topic, sub, backends.WithPosition(backends.Latest))
			after := receiveUntil(ctx, c2, redeliverWithin, ack, func(got []backends.Delivery) bool {
				return len(missing(msgPayloads(sent), counts(got))) == 0
			})
			Expect(missing(msgPayloads(sent), counts(after.Got))).To(BeEmpty(),
				"a subscription created (live) and closed before any message must still exist; %s", after.describe())
		}, SpecTimeout(specTimeout))

		Behaviour("R3", func(ctx SpecContext) {
			const n, restarts = 120, 5
			topic := newTopic(backends.ClassFlow, "r3")
			sub := unique("r3")
			sent := batch("r3", n)
			first := subscribe(ctx, b, topic, sub)
			p := produce(ctx, b, topic)

			// Steady producer: one message every 20 ms (pacing, not synchronisation).
			done := make(chan error, 1)
			go func() {
				defer GinkgoRecover()
				tick := time.NewTicker(20 * time.Millisecond)
				defer tick.Stop()
				for _, m := range sent {
					select {
					case <-ctx.Done():
						done <- ctx.Err()
						return
					case <-tick.C:
					}
					sctx, cancel := context.WithTimeout(ctx, callWithin)
					err := p.Send(sctx, m)
					cancel()
					if err != nil {
						done <- fmt.Errorf("send %s: %w", m.Payload, err)
						return
					}
				}
				done <- nil
			}()

			var got []backends.Delivery
			c := first
			for range restarts {
				// Receive a few, then restart the consumer.
				r := receiveN(ctx, c, n/(restarts+2), arriveWithin, ack)
				got = append(got, r.Got...)
				closeNow(ctx, c)
				c = subscribe(ctx, b, topic, sub)
			}
			Eventually(done).WithTimeout(time.Minute).Should(Receive(BeNil()), "the steady producer must finish")
			want := msgPayloads(sent)
			r := receiveUntil(ctx, c, redeliverWithin, ack, func(ds []backends.Delivery) bool {
				return len(missing(want, counts(append(got, ds...)))) == 0
			})
			got = append(got, r.Got...)
			Expect(missing(want, counts(got))).To(BeEmpty(),
				"after %d consumer restarts, %d of %d messages never arrived (duplicates are allowed); last loop: %s",
				restarts, len(missing(want, counts(got))), n, r.describe())
			checkHistory(b, false)
		}, SpecTimeout(3*time.Minute))

		Behaviour("R5", startEarly, func(ctx SpecContext) {
			if env.CrashConsumer == nil {
				Skip(env.Backend + " suite provides no crashable consumer")
			}
			topic := newTopic(backends.ClassFlow, "r5")
			sub := unique("r5")
			sent := batch("r5", 5)
			sendAll(ctx, produce(ctx, b, topic), sent...)
			crashed, err := env.CrashConsumer(ctx, topic, sub, 3)
			skipIfUnavailable(err)
			Expect(err).NotTo(HaveOccurred(), "run and kill the crashing consumer")
			Expect(crashed).To(HaveLen(3), "the crashing consumer must have received 3 messages before it was killed")
			killed := time.Now()

			c := subscribe(ctx, b, topic, sub, backends.WithPosition(backends.Earliest))
			want := payloads(crashed)
			r := receiveUntil(ctx, c, 90*time.Second, ack, func(got []backends.Delivery) bool {
				return len(missing(want, counts(got))) == 0
			})
			Expect(missing(want, counts(r.Got))).To(BeEmpty(),
				"messages %s held unacked by the killed consumer must reach the next member (%s after the kill); %s",
				show(want), since(killed), r.describe())
		}, SpecTimeout(4*time.Minute))
	})
}
