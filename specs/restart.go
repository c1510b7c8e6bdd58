package specs

import (
	"context"
	"fmt"
	"slices"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/pubsub-conformance/harness/backends"
)

func restart(env *Env) {
	Describe("flow restart without loss", func() {
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

		Behaviour("R5", func(ctx SpecContext) {
			topic := newTopic(backends.ClassFlow, "r5")
			sub := unique("r5")
			subscribeAhead(ctx, b, topic, sub)
			sendAll(ctx, produce(ctx, b, topic), batch("r5", 5)...)
			crashed, killed := crash(ctx, env, topic, sub, CrashPlan{Receive: 3})

			c := subscribe(ctx, b, topic, sub, backends.WithPosition(backends.Earliest))
			want := payloads(crashed)
			r := receiveUntil(ctx, c, crashRedeliverWithin, ack, func(got []backends.Delivery) bool {
				return len(missing(want, counts(got))) == 0
			})
			Expect(missing(want, counts(r.Got))).To(BeEmpty(),
				"messages %s held unacked by the killed consumer must reach the next member (%s after the kill); %s",
				show(want), since(killed), r.describe())
		}, SpecTimeout(4*time.Minute))

		Behaviour("R7", func(ctx SpecContext) {
			topic := newTopic(backends.ClassFlow, "r7")
			sub := unique("r7")
			subscribeAhead(ctx, b, topic, sub)
			sendAll(ctx, produce(ctx, b, topic), batch("r7", 5)...)
			// m5, m3, m4 acked out of order; m1 and m2 never. The hold gives a backend that
			// commits in the background the time to commit what it would (C-ACK-6), so an ack
			// that committed through m1 and m2 has surely reached the broker before the kill.
			crashed, killed := crash(ctx, env, topic, sub, CrashPlan{Receive: 5, Ack: []int{4, 2, 3}, HoldAfterAcks: backends.AckCrashBound})

			c := subscribe(ctx, b, topic, sub, backends.WithPosition(backends.Earliest))
			want := payloads(crashed[:2])
			r := receiveUntil(ctx, c, crashRedeliverWithin, ack, func(got []backends.Delivery) bool {
				return len(missing(want, counts(got))) == 0
			})
			Expect(missing(want, counts(r.Got))).To(BeEmpty(),
				"messages %s, never acked by the killed consumer (which acked %s, out of order, %v before its kill), must reach the next member (%s after the kill); %s",
				show(want), show(payloads([]backends.Delivery{crashed[4], crashed[2], crashed[3]})), backends.AckCrashBound, since(killed), r.describe())
		}, SpecTimeout(4*time.Minute))

		Behaviour("R8", func(ctx SpecContext) {
			topic := newTopic(backends.ClassFlow, "r8")
			sub := unique("r8")
			subscribeAhead(ctx, b, topic, sub)
			p := produce(ctx, b, topic)
			sendAll(ctx, p, batch("r8-acked", 5)...)
			crashed, killed := crash(ctx, env, topic, sub, CrashPlan{Receive: 5, Ack: []int{0, 1, 2, 3, 4}, HoldAfterAcks: backends.AckCrashBound})
			after := batch("r8-after", 2)
			sendAll(ctx, p, after...)

			// What was sent after the kill comes after any redelivery of the acked messages on a
			// log (Kafka) and in the same dispatch as a redelivery on a queue; the quiet window
			// after it catches a redelivery that comes late.
			c := subscribe(ctx, b, topic, sub, backends.WithPosition(backends.Earliest))
			want := msgPayloads(after)
			r := receiveUntil(ctx, c, crashRedeliverWithin, ack, func(got []backends.Delivery) bool {
				return len(missing(want, counts(got))) == 0
			})
			Expect(missing(want, counts(r.Got))).To(BeEmpty(), "the messages sent after the kill must reach the next member; %s", r.describe())
			late := receiveFor(ctx, c, quietFor, ack)
			acked := payloads(crashed)
			var again []string
			for _, d := range append(r.Got, late.Got...) {
				if slices.Contains(acked, string(d.Payload)) {
					again = append(again, string(d.Payload))
				}
			}
			Expect(again).To(BeEmpty(),
				"messages %s were acked by the killed consumer %v or more before its kill (the contract's ack crash bound) and must not come again; the next member (%s after the kill) got %s",
				show(acked), backends.AckCrashBound, since(killed), show(payloads(append(r.Got, late.Got...))))
		}, SpecTimeout(4*time.Minute))
	})
}

// subscribeAhead creates the subscription sub (earliest) with a consumer it closes at once,
// before the crash specs send: the crashing consumer then resumes it rather than creating it,
// so what the specs judge is what the crash costs, not whether a new subscription replays the
// topic's past (D6; a RabbitMQ queue holds only what was sent after it existed).
func subscribeAhead(ctx context.Context, b backends.Backend, topic, sub string) {
	GinkgoHelper()
	closeNow(ctx, subscribe(ctx, b, topic, sub, backends.WithPosition(backends.Earliest)))
}

// crashRedeliverWithin bounds how long the next member may take to get a killed consumer's
// messages: the broker first has to notice the death (Kafka: the group's session timeout).
const crashRedeliverWithin = 90 * time.Second

// crash runs env's crashing consumer on topic and sub, following plan, and returns what it
// received and when it was killed; the spec skips when the suite has no crashable consumer.
func crash(ctx context.Context, env *Env, topic, sub string, plan CrashPlan) ([]backends.Delivery, time.Time) {
	GinkgoHelper()
	if env.CrashConsumer == nil {
		Skip(env.Backend + " suite provides no crashable consumer")
	}
	crashed, err := env.CrashConsumer(ctx, topic, sub, plan)
	skipIfUnavailable(err)
	Expect(err).NotTo(HaveOccurred(), "run and kill the crashing consumer")
	Expect(crashed).To(HaveLen(plan.Receive), "the crashing consumer must have received %d messages before it was killed", plan.Receive)
	return crashed, time.Now()
}

// brokerRestartSpecs declares R6 and R4 (in that order: R6 makes the restart R4 checks) in
// the private-broker area (private.go), on the broker they share with the network cuts.
func brokerRestartSpecs(a *privateArea) {
	Behaviour("R6", func(ctx SpecContext) {
		pb := a.restarts.broker()
		cli, err := pb.Open(ctx)
		Expect(err).NotTo(HaveOccurred(), "open a client on the private broker")
		DeferCleanup(func(ctx SpecContext) { Expect(cli.Close(ctx)).To(Succeed()) }, NodeTimeout(callWithin))
		topic := newTopic(backends.ClassFlow, "r6")
		c := subscribe(ctx, cli, topic, unique("r6"))
		p := produce(ctx, cli, topic)
		sendAll(ctx, p, msg("r6-before", 0))
		r := receiveN(ctx, c, 1, arriveWithin, ack)
		Expect(payloads(r.Got)).To(Equal([]string{"r6-before-0"}), "before the restart; %s", r.describe())

		a.restart(ctx, "R6")

		// The same producer and consumer, never reopened.
		sent := batch("r6-after", 5)
		sendAll(ctx, p, sent...)
		after := receiveUntil(ctx, c, time.Minute, ack, func(got []backends.Delivery) bool {
			return len(missing(msgPayloads(sent), counts(got))) == 0
		})
		Expect(missing(msgPayloads(sent), counts(after.Got))).To(BeEmpty(),
			"messages sent after a broker restart through the producer opened before it must reach the consumer opened before it (no reopen); %s", after.describe())
	}, SpecTimeout(6*time.Minute))

	Behaviour("R4", func(ctx SpecContext) {
		pb := a.restarts.broker()
		prep := a.r4
		failSetup(prep.err, "prepare R4 before the restart (in the area's BeforeAll)")
		By(fmt.Sprintf("before the restart: subscribed (earliest), sent %d confirmed flow messages, closed every client", len(prep.sent)))
		if a.restartedAt.Before(prep.at) {
			a.restart(ctx, "R4")
		} else {
			AddReportEntry("restart", fmt.Sprintf("%s restarted the broker %s after R4's messages were confirmed (the restart took %s)",
				a.restartBy, a.restartedAt.Sub(prep.at).Round(time.Millisecond), a.restartTook))
		}

		after, err := pb.Open(ctx)
		Expect(err).NotTo(HaveOccurred(), "open a client after the restart")
		DeferCleanup(func(ctx SpecContext) { Expect(after.Close(ctx)).To(Succeed()) }, NodeTimeout(callWithin))
		c2 := subscribe(ctx, after, prep.topic, prep.sub, backends.WithPosition(backends.Earliest))
		r := receiveUntil(ctx, c2, time.Minute, ack, func(got []backends.Delivery) bool {
			return len(missing(msgPayloads(prep.sent), counts(got))) == 0
		})
		Expect(missing(msgPayloads(prep.sent), counts(r.Got))).To(BeEmpty(),
			"flow messages confirmed before the broker restart must be delivered after it; %s", r.describe())
	}, SpecTimeout(6*time.Minute))
}
