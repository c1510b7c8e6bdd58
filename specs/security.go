package specs

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/pubsub-conformance/harness/backends"
)

func security(env *Env) {
	Describe("security", func() {
		Behaviour("S1", func(ctx SpecContext) {
			if env.Auth == nil {
				Skip(env.Backend + " suite provides no auth-enabled broker")
			}
			target, err := env.Auth(ctx)
			skipIfUnavailable(err)
			failSetup(err, "prepare the auth-enabled broker")
			if target.Stop != nil {
				DeferCleanup(func(ctx SpecContext) { Expect(target.Stop(ctx)).To(Succeed()) }, NodeTimeout(2*time.Minute))
			}

			By("good credentials: admin, consumer and producer work")
			good, err := target.Good(ctx)
			Expect(err).NotTo(HaveOccurred(), "open with good credentials (admin, producer and consumer must all use them)")
			DeferCleanup(func(ctx SpecContext) { Expect(good.Close(ctx)).To(Succeed()) }, NodeTimeout(callWithin))
			topic := newTopic(backends.ClassFlow, "s1")
			Expect(good.CreateTopic(ctx, topic)).To(Succeed(), "admin CreateTopic with good credentials")
			ok, err := good.TopicExists(ctx, topic)
			Expect(err).NotTo(HaveOccurred(), "admin TopicExists with good credentials")
			Expect(ok).To(BeTrue(), "created topic must exist")
			c := subscribe(ctx, good, topic, unique("s1"))
			sendAll(ctx, produce(ctx, good, topic), msg("s1", 0))
			r := receiveN(ctx, c, 1, arriveWithin, ack)
			Expect(payloads(r.Got)).To(Equal([]string{"s1-0"}), "round trip with good credentials; %s", r.describe())

			By("bad credentials: every client fails fast with ErrAuth")
			const bound = 20 * time.Second // a hang would run into this and show as a timeout
			authFail := func(what string, call func(ctx context.Context) error) {
				GinkgoHelper()
				cctx, cancel := context.WithTimeout(ctx, bound)
				defer cancel()
				start := time.Now()
				err := call(cctx)
				took := since(start)
				Expect(err).To(HaveOccurred(), "%s with bad credentials succeeded (after %s)", what, took)
				Expect(err).To(MatchError(backends.ErrAuth),
					"%s with bad credentials failed after %s with %q; expected an error wrapping backends.ErrAuth (a timeout means it hung)", what, took, err)
			}
			var bad backends.Backend
			openErr := func(ctx context.Context) error {
				var err error
				bad, err = target.Bad(ctx)
				return err
			}
			cctx, cancel := context.WithTimeout(ctx, bound)
			err = openErr(cctx)
			cancel()
			if err != nil {
				// Refusing at construction covers admin, producer and consumer at once.
				Expect(err).To(MatchError(backends.ErrAuth),
					"opening with bad credentials failed with %q; expected an error wrapping backends.ErrAuth", err)
				return
			}
			DeferCleanup(func(ctx SpecContext) { _ = bad.Close(ctx) }, NodeTimeout(callWithin))
			authFail("admin CreateTopic", func(ctx context.Context) error { return bad.CreateTopic(ctx, newTopic(backends.ClassFlow, "s1-bad")) })
			authFail("Producer+Send", func(ctx context.Context) error {
				p, err := bad.Producer(ctx, topic)
				if err != nil {
					return err
				}
				defer func() { _ = p.Close(ctx) }()
				return p.Send(ctx, msg("s1-bad", 0))
			})
			authFail("Consumer+Receive", func(ctx context.Context) error {
				c, err := bad.Consumer(ctx, topic, unique("s1-bad"))
				if err != nil {
					return err
				}
				defer func() { _ = c.Close(ctx) }()
				_, err = c.Receive(ctx)
				return err
			})
		}, SpecTimeout(5*time.Minute))
	})
}
