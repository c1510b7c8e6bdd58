package specs

import (
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/pubsub-conformance/harness/backends"
)

func restartMore(env *Env) {
	Describe("flow restart without loss", Label("restart"), func() {
		Behaviour("R6", startSecond, func(ctx SpecContext) {
			if env.PrivateBroker == nil {
				Skip(env.Backend + " suite provides no private broker to restart")
			}
			pb, err := env.PrivateBroker(ctx)
			skipIfUnavailable(err)
			Expect(err).NotTo(HaveOccurred(), "start a private broker")
			DeferCleanup(func(ctx SpecContext) { Expect(pb.Stop(ctx)).To(Succeed(), "stop the private broker") }, NodeTimeout(2*time.Minute))
			DeferCleanup(func() {
				if CurrentSpecReport().Failed() {
					AddReportEntry("private broker log (tail)", pb.LogTail(), ReportEntryVisibilityFailureOrVerbose)
				}
			})

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
