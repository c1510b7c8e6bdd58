package specs

import (
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/pubsub-conformance/harness/backends"
)

// brokerRestarts holds the specs that restart a broker (R4, R6). They share one private broker
// per backend (see sharedBroker): each restarts it, one after another.
func brokerRestarts(env *Env) {
	Describe("flow restart without loss", Label("restart"), Ordered, ContinueOnFailure, startSecond, func() {
		area := &sharedBroker[PrivateBroker]{}
		BeforeAll(func(ctx SpecContext) {
			area.start(ctx, env.Backend, "private broker to restart", env.PrivateBroker)
		}, NodeTimeout(3*time.Minute))
		AfterEach(area.after)

		Behaviour("R4", func(ctx SpecContext) {
			pb := area.broker()
			before, err := pb.Open(ctx)
			Expect(err).NotTo(HaveOccurred(), "open a client on the private broker")
			DeferCleanup(func(ctx SpecContext) { Expect(before.Close(ctx)).To(Succeed()) }, NodeTimeout(callWithin))
			topic := newTopic(backends.ClassFlow, "r4")
			sub := unique("r4")
			c, err := before.Consumer(ctx, topic, sub, backends.WithPosition(backends.Earliest))
			Expect(err).NotTo(HaveOccurred(), "subscribe before the restart")
			Expect(c.Close(ctx)).To(Succeed())
			p, err := before.Producer(ctx, topic)
			Expect(err).NotTo(HaveOccurred(), "producer before the restart")
			sent := batch("r4", 10)
			sendAll(ctx, p, sent...)
			Expect(p.Close(ctx)).To(Succeed())
			Expect(before.Close(ctx)).To(Succeed(), "close the client before the restart")

			start := time.Now()
			err = pb.Restart(ctx)
			skipIfUnavailable(err)
			Expect(err).NotTo(HaveOccurred(), "restart the private broker")
			By(fmt.Sprintf("broker restarted in %s", since(start)))

			after, err := pb.Open(ctx)
			Expect(err).NotTo(HaveOccurred(), "open a client after the restart")
			DeferCleanup(func(ctx SpecContext) { Expect(after.Close(ctx)).To(Succeed()) }, NodeTimeout(callWithin))
			c2 := subscribe(ctx, after, topic, sub, backends.WithPosition(backends.Earliest))
			r := receiveUntil(ctx, c2, time.Minute, ack, func(got []backends.Delivery) bool {
				return len(missing(msgPayloads(sent), counts(got))) == 0
			})
			Expect(missing(msgPayloads(sent), counts(r.Got))).To(BeEmpty(),
				"flow messages confirmed before the broker restart must be delivered after it; %s", r.describe())
		}, SpecTimeout(6*time.Minute))

		Behaviour("R6", func(ctx SpecContext) {
			pb := area.broker()
			cli, err := pb.Open(ctx)
			Expect(err).NotTo(HaveOccurred(), "open a client on the private broker")
			DeferCleanup(func(ctx SpecContext) { Expect(cli.Close(ctx)).To(Succeed()) }, NodeTimeout(callWithin))
			topic := newTopic(backends.ClassFlow, "r6")
			c := subscribe(ctx, cli, topic, unique("r6"))
			p := produce(ctx, cli, topic)
			sendAll(ctx, p, msg("r6-before", 0))
			r := receiveN(ctx, c, 1, arriveWithin, ack)
			Expect(payloads(r.Got)).To(Equal([]string{"r6-before-0"}), "before the restart; %s", r.describe())

			start := time.Now()
			err = pb.Restart(ctx)
			skipIfUnavailable(err)
			Expect(err).NotTo(HaveOccurred(), "restart the private broker")
			By(fmt.Sprintf("broker restarted in %s", since(start)))

			// The same producer and consumer, never reopened.
			sent := batch("r6-after", 5)
			sendAll(ctx, p, sent...)
			after := receiveUntil(ctx, c, time.Minute, ack, func(got []backends.Delivery) bool {
				return len(missing(msgPayloads(sent), counts(got))) == 0
			})
			Expect(missing(msgPayloads(sent), counts(after.Got))).To(BeEmpty(),
				"messages sent after a broker restart through the producer opened before it must reach the consumer opened before it (no reopen); %s", after.describe())
		}, SpecTimeout(6*time.Minute))
	})
}
