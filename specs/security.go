package specs

import (
	"context"
	"errors"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/pubsub-conformance/harness/backends"
)

// security declares S1 and S2 in an Ordered container that shares one auth-enabled broker
// (Env.Auth: the shared broker's authenticated side); ContinueOnFailure keeps S1's failure
// from skipping S2. With Env.AuthOnPrivateBroker the private-broker area declares them
// instead, on its own broker (privateBrokerArea).
func security(env *Env) {
	if env.AuthOnPrivateBroker {
		return
	}
	Describe("security", Ordered, ContinueOnFailure, func() {
		var (
			target AuthTarget
			skip   string
			err    error
		)
		BeforeAll(func(ctx SpecContext) {
			if env.Auth == nil {
				skip = env.Backend + " suite provides no auth-enabled broker"
				return
			}
			var e error
			target, e = env.Auth(ctx)
			if reason, ok := skipReason(e); ok {
				skip = reason
				return
			}
			if e != nil {
				err = e
				return
			}
			if target.Stop != nil {
				DeferCleanup(func(ctx SpecContext) { Expect(target.Stop(ctx)).To(Succeed()) }, NodeTimeout(2*time.Minute))
			}
		}, NodeTimeout(4*time.Minute))
		securitySpecs(env, func() AuthTarget {
			GinkgoHelper()
			if skip != "" {
				Skip(skip)
			}
			failSetup(err, "prepare the auth-enabled broker")
			Expect(target.Good).NotTo(BeNil(), "the auth-enabled broker was not prepared (BeforeAll did not run?)")
			return target
		})
	})
}

// securitySpecs declares S1 and S2; auth gives the broker they check (or skips or fails the
// spec with why there is none).
func securitySpecs(env *Env, auth func() AuthTarget) {
	Behaviour("S1", func(ctx SpecContext) { s1(ctx, auth()) }, SpecTimeout(5*time.Minute))
	Behaviour("S2", func(ctx SpecContext) { s2(ctx, env, auth()) }, SpecTimeout(3*time.Minute))
}

// failBound bounds a call that must fail fast: a hang runs into it and shows as a timeout.
const failBound = 20 * time.Second

// roundTripAs checks that admin (CreateTopic, TopicExists), consumer and producer of b work:
// a message sent on a new topic arrives on a subscription made before. how names the clients.
func roundTripAs(ctx context.Context, b backends.Backend, tag, how string) string {
	GinkgoHelper()
	topic := newTopic(backends.ClassFlow, tag)
	Expect(b.CreateTopic(ctx, topic)).To(Succeed(), "admin CreateTopic %s", how)
	ok, err := b.TopicExists(ctx, topic)
	Expect(err).NotTo(HaveOccurred(), "admin TopicExists %s", how)
	Expect(ok).To(BeTrue(), "created topic must exist")
	c := subscribe(ctx, b, topic, unique(tag))
	sendAll(ctx, produce(ctx, b, topic), msg(tag, 0))
	r := receiveN(ctx, c, 1, arriveWithin, ack)
	Expect(payloads(r.Got)).To(Equal([]string{tag + "-0"}), "round trip %s; %s", how, r.describe())
	return topic
}

// failFast runs what each client does (admin, producer, consumer) on a Backend opened with
// open, and gives each error, which must come within failBound, to check. Refusing at
// construction covers all three at once: then only that error is checked.
func failFast(ctx context.Context, open func(context.Context) (backends.Backend, error), topic, tag string,
	check func(what string, took time.Duration, err error)) {
	GinkgoHelper()
	run := func(what string, call func(ctx context.Context) error) {
		GinkgoHelper()
		cctx, cancel := context.WithTimeout(ctx, failBound)
		defer cancel()
		start := time.Now()
		err := call(cctx)
		check(what, since(start), err)
	}
	var bad backends.Backend
	var openErr error
	run("open", func(ctx context.Context) error {
		bad, openErr = open(ctx)
		if openErr == nil {
			return errOpened
		}
		return openErr
	})
	if openErr != nil {
		return
	}
	DeferCleanup(func(ctx SpecContext) { _ = bad.Close(ctx) }, NodeTimeout(callWithin))
	run("admin CreateTopic", func(ctx context.Context) error { return bad.CreateTopic(ctx, newTopic(backends.ClassFlow, tag)) })
	run("Producer+Send", func(ctx context.Context) error {
		p, err := bad.Producer(ctx, topic)
		if err != nil {
			return err
		}
		defer func() { _ = p.Close(ctx) }()
		return p.Send(ctx, msg(tag, 0))
	})
	run("Consumer+Receive", func(ctx context.Context) error {
		c, err := bad.Consumer(ctx, topic, unique(tag))
		if err != nil {
			return err
		}
		defer func() { _ = c.Close(ctx) }()
		_, err = c.Receive(ctx)
		return err
	})
}

// errOpened stands for "the open succeeded" in failFast: not an error of the backend's; the
// calls after it are checked instead.
var errOpened = errors.New("opened")

func s1(ctx SpecContext, target AuthTarget) {
	By("good credentials: admin, consumer and producer work")
	good, err := target.Good(ctx)
	Expect(err).NotTo(HaveOccurred(), "open with good credentials (admin, producer and consumer must all use them)")
	DeferCleanup(func(ctx SpecContext) { Expect(good.Close(ctx)).To(Succeed()) }, NodeTimeout(callWithin))
	topic := roundTripAs(ctx, good, "s1", "with good credentials")

	By("bad credentials: every client fails fast with ErrAuth")
	failFast(ctx, target.Bad, topic, "s1-bad", func(what string, took time.Duration, err error) {
		GinkgoHelper()
		if errors.Is(err, errOpened) {
			return // opening succeeded: the clients' calls must fail
		}
		Expect(err).To(HaveOccurred(), "%s with bad credentials succeeded (after %s)", what, took)
		Expect(err).To(MatchError(backends.ErrAuth),
			"%s with bad credentials failed after %s with %q; expected an error wrapping backends.ErrAuth (a timeout means it hung)", what, took, err)
	})
}

// tlsWords are what a clear error about a certificate the client cannot verify names.
var tlsWords = []string{"certificate", "x509", "tls", "ssl", "handshake", "verify"}

func s2(ctx SpecContext, env *Env, target AuthTarget) {
	if target.TLSGood == nil {
		Skip(target.NoTLS)
	}
	plain, err := env.Open(ctx)
	Expect(err).NotTo(HaveOccurred(), "open a client on the run's broker (to read its capabilities)")
	need(plain, backends.CapTLS)
	Expect(plain.Close(ctx)).To(Succeed())

	By("TLS with the broker's CA and good credentials: admin, consumer and producer work")
	good, err := target.TLSGood(ctx)
	Expect(err).NotTo(HaveOccurred(), "open over TLS trusting the broker's CA, with good credentials")
	DeferCleanup(func(ctx SpecContext) { Expect(good.Close(ctx)).To(Succeed()) }, NodeTimeout(callWithin))
	topic := roundTripAs(ctx, good, "s2", "over TLS")

	By("TLS trusting another CA: every client fails fast, naming the certificate")
	failFast(ctx, target.TLSWrongCA, topic, "s2-wrong-ca", func(what string, took time.Duration, err error) {
		GinkgoHelper()
		if errors.Is(err, errOpened) {
			return
		}
		Expect(err).To(HaveOccurred(), "%s over TLS trusting the wrong CA succeeded (after %s)", what, took)
		Expect(errors.Is(err, backends.ErrTimeout) || errors.Is(err, context.DeadlineExceeded)).To(BeFalse(),
			"%s over TLS trusting the wrong CA ran into its %s bound (a hang): %q", what, failBound, err)
		Expect(errors.Is(err, backends.ErrAuth) || errors.Is(err, backends.ErrUnavailable)).To(BeTrue(),
			"%s over TLS trusting the wrong CA failed after %s with %q; expected an error wrapping backends.ErrAuth or backends.ErrUnavailable", what, took, err)
		low := strings.ToLower(err.Error())
		Expect(tlsWords).To(ContainElement(Satisfy(func(w string) bool { return strings.Contains(low, w) })),
			"%s over TLS trusting the wrong CA failed after %s with %q, which does not say that the broker's certificate did not verify", what, took, err)
		GinkgoWriter.Printf("S2: %s with the wrong CA failed after %s: %v\n", what, took, err)
	})
}
