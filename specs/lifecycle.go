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
	Describe("topic lifecycle", Label("lifecycle"), func() {
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
	})
}
