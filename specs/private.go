package specs

import (
	"context"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/pubsub-conformance/harness/backends"
)

// privateArea is the private broker that the broker restarts (R4, R6), the network cuts (F1,
// F3, F4, F6) and the network latency (F2) share, one spec after another (see sharedBroker): a
// broker behind a fault proxy, which restarts like any private broker. F2 had a broker of its
// own to shorten this chain; one start fewer per backend saves more (about 10 CPU-s a
// broker, issue 33) than the ~40 s the chain grows, on a run that W1 outlasts anyway. Where the run cannot put a proxy in front of
// a broker (container and external providers, an in-process backend that cannot simulate a
// cut), the F specs skip with that reason and the R specs get a plain private broker.
//
// R4 and R6 share one restart: the area's BeforeAll also prepares R4 (a subscription and ten
// confirmed messages, every client closed), R6 restarts the broker with its producer and
// consumer open, and R4 then checks that its messages survived that restart (restarting the
// broker itself when no restart happened after its preparation: R6 filtered out, skipped, or
// failed before restarting).
type privateArea struct {
	faults   faultArea                   // the broker behind a proxy; not started when unavailable
	restarts sharedBroker[PrivateBroker] // the same broker, or a plain private one

	r4          r4Prepared
	restartedAt time.Time     // when the last restart of the broker returned (zero: none yet)
	restartBy   string        // which spec restarted it
	restartTook time.Duration // how long that restart took
}

// r4Prepared is what R4 left on the broker before the restart.
type r4Prepared struct {
	topic, sub string
	sent       []backends.Message
	at         time.Time // when the last message was confirmed
	err        error     // why the preparation failed (nil when it did not)
}

func privateBrokerArea(env *Env) {
	Describe("on a private broker", Ordered, ContinueOnFailure, func() {
		area := &privateArea{}
		BeforeAll(func(ctx SpecContext) {
			area.faults.start(ctx, env.Backend, "private broker behind a fault proxy", env.FaultyBroker)
			switch {
			case area.faults.started():
				area.restarts.share(area.faults.b)
			case area.faults.skip != "":
				// No proxy here: the R specs still get a broker of their own.
				area.restarts.start(ctx, env.Backend, "private broker to restart", env.PrivateBroker)
			default:
				area.restarts.err = area.faults.err // a broker that did not start: R fails the same way
			}
			if area.restarts.started() {
				area.prepareR4(ctx)
			}
		}, NodeTimeout(3*time.Minute))
		AfterEach(func(ctx SpecContext) {
			if area.faults.started() {
				afterFault(ctx, &area.faults)
				return
			}
			area.restarts.after()
		}, NodeTimeout(callWithin))

		if env.AuthOnPrivateBroker {
			// First, on the broker as it started: S1 and S2 open their own clients on new
			// topics, so the restarts and faults after them see no trace of them.
			Describe("security", func() {
				securitySpecs(env, area.auth)
			})
		}
		Describe("flow restart without loss", func() {
			brokerRestartSpecs(area)
		})
		Describe("network faults", func() {
			networkCutSpecs(&area.faults)
		})
		Describe("network latency", func() {
			faultLatencySpec(&area.faults) // F2: specs/faults_latency.go
		})
	})
}

// auth is the area's broker's authenticated side for S1 and S2 (Env.AuthOnPrivateBroker), or
// skips or fails the calling spec with why there is none.
func (a *privateArea) auth() AuthTarget {
	GinkgoHelper()
	ab, ok := any(a.restarts.broker()).(AuthBroker)
	if !ok {
		Skip("the private broker of this run cannot authenticate clients (no AuthBroker)")
	}
	t, err := ab.Auth()
	skipIfUnavailable(err)
	Expect(err).NotTo(HaveOccurred(), "the private broker's authenticated side")
	return t
}

// prepareR4 subscribes (earliest), sends R4's ten messages, each confirmed, and closes every
// client, before any restart. A failure is recorded for R4's report, never failing BeforeAll
// (that would fail every spec of the area).
func (a *privateArea) prepareR4(ctx context.Context) {
	p := &a.r4
	p.topic, p.sub, p.sent = newTopic(backends.ClassFlow, "r4"), unique("r4"), batch("r4", 10)
	p.err = InterceptGomegaFailure(func() {
		before, err := a.restarts.b.Open(ctx)
		Expect(err).NotTo(HaveOccurred(), "open a client on the private broker")
		closed := false
		defer func() {
			if !closed { // a failure stopped the preparation before its Close
				_ = before.Close(ctx)
			}
		}()
		c, err := before.Consumer(ctx, p.topic, p.sub, backends.WithPosition(backends.Earliest))
		Expect(err).NotTo(HaveOccurred(), "subscribe before the restart")
		Expect(c.Close(ctx)).To(Succeed(), "close the consumer before the restart")
		prod, err := before.Producer(ctx, p.topic)
		Expect(err).NotTo(HaveOccurred(), "producer before the restart")
		sendAll(ctx, prod, p.sent...)
		p.at = time.Now()
		Expect(prod.Close(ctx)).To(Succeed(), "close the producer before the restart")
		closed = true
		Expect(before.Close(ctx)).To(Succeed(), "close the client before the restart")
	})
}

// restart restarts the area's broker for spec (skipping the spec when the broker cannot
// restart) and records when, so R4 knows whether its messages went through a restart.
func (a *privateArea) restart(ctx context.Context, spec string) {
	GinkgoHelper()
	start := time.Now()
	err := a.restarts.b.Restart(ctx)
	skipIfUnavailable(err)
	Expect(err).NotTo(HaveOccurred(), "restart the private broker")
	a.restartedAt, a.restartBy, a.restartTook = time.Now(), spec, since(start)
	By(fmt.Sprintf("broker restarted in %s", a.restartTook))
}
