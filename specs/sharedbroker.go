package specs

import (
	"context"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/pubsub-conformance/harness/internal/evidence"
)

// ownedBroker is what a private broker offers whoever shares it (PrivateBroker, FaultyBroker).
type ownedBroker interface {
	Stop(ctx context.Context) error
	MarkLog() (since func() string)
}

// sharedBroker is a private broker shared by the specs of one Ordered container (the F area,
// the broker restarts R4 and R6): Ordered runs them one after another on one process, so a
// spec's restart or network fault never reaches another spec, and one broker start serves them
// all (a broker start was most of each such spec's time). Each spec opens its own clients and
// topics.
//
// Lifecycle: start, from the container's BeforeAll, starts the broker and registers its Stop
// with DeferCleanup (so it stops after the container's last spec); it never skips or fails the
// container: each spec's get does that from what start recorded, so every spec's report
// carries the real reason (a Skip in BeforeAll reaches only the first spec's report). after,
// from an AfterEach, attaches to a failed spec what the broker logged while that spec ran.
type sharedBroker[B ownedBroker] struct {
	b     B
	ok    bool          // b was started
	skip  string        // why the specs cannot run here (a skip), when set
	err   error         // why the broker did not start (a failure), when set
	since func() string // the running spec's log mark (broker), nil before
}

// start starts the broker with open (nil: the suite provides none, a skip); what names it in
// messages ("a private broker behind a fault proxy").
func (s *sharedBroker[B]) start(ctx context.Context, backend, what string, open func(context.Context) (B, error)) {
	if open == nil {
		s.skip = fmt.Sprintf("%s suite provides no %s", backend, what)
		return
	}
	b, err := open(ctx)
	if reason, ok := skipReason(err); ok {
		s.skip = reason
		return
	}
	if err != nil {
		s.err = fmt.Errorf("start %s: %w", what, err)
		return
	}
	s.b, s.ok = b, true
	DeferCleanup(func(ctx SpecContext) { Expect(b.Stop(ctx)).To(Succeed(), "stop %s", what) }, NodeTimeout(2*time.Minute))
}

// share makes s serve b, which another sharedBroker started (and stops after the last spec).
func (s *sharedBroker[B]) share(b B) { s.b, s.ok = b, true }

// broker returns the shared broker, or skips or fails the calling spec with start's reason.
func (s *sharedBroker[B]) broker() B {
	GinkgoHelper()
	if s.skip != "" {
		Skip(s.skip)
	}
	failSetup(s.err, "") // "start <what>: ...", from start
	Expect(s.ok).To(BeTrue(), "the shared broker was not started (BeforeAll did not run?)")
	// This spec's clients reach this broker, not the run's: a failure shows this broker's log
	// from here on, and not the run's broker log, which other specs write to.
	s.since = s.b.MarkLog()
	specBrokerLog.private = true
	return s.b
}

// started reports whether the broker runs (false after a skip or a failed start).
func (s *sharedBroker[B]) started() bool { return s.ok }

// after attaches to a failed spec what the broker logged while it ran.
func (s *sharedBroker[B]) after() {
	since := s.since
	s.since = nil
	if !s.ok || since == nil || !CurrentSpecReport().Failed() {
		return
	}
	if lines := since(); lines != "" {
		AddReportEntry("private broker log (written during this spec)", evidence.NewLog(lines), ReportEntryVisibilityFailureOrVerbose)
	}
}

// specBrokerLog is the running spec's mark in the run's broker log; one spec runs at a time
// per Ginkgo process.
var specBrokerLog struct {
	since   func() string // nil when the backend has no broker
	private bool          // the spec reaches a private broker (sharedBroker.broker): its log is that one
}

// markBrokerLog, before each spec, marks the run's broker log.
func markBrokerLog(env *Env) {
	specBrokerLog.since, specBrokerLog.private = nil, false
	if env.MarkBrokerLog != nil {
		specBrokerLog.since = env.MarkBrokerLog()
	}
}

// attachBrokerLog, after each spec, attaches to a failed spec what the run's broker logged
// while it ran - unless the spec's clients reached a private broker.
func attachBrokerLog() {
	since, private := specBrokerLog.since, specBrokerLog.private
	specBrokerLog.since = nil
	if since == nil || private || !CurrentSpecReport().Failed() {
		return
	}
	if lines := since(); lines != "" {
		AddReportEntry("broker log (written during this spec, by every process using the run's broker)", evidence.NewLog(lines), ReportEntryVisibilityFailureOrVerbose)
	}
}
