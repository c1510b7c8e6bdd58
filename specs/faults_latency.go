package specs

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/pubsub-conformance/harness/backends"
)

// faultLatency is the latency F2 adds in each direction between every client and the broker.
const faultLatency = 200 * time.Millisecond

// noted is what a shared spec body appends to its failure messages: nothing for the
// no-fault spec, the fault timeline when a fault spec runs the body.
func noted(note fmt.Stringer) string {
	if note == nil {
		return ""
	}
	return ";\n" + note.String()
}

// latencyCheck is one no-fault behaviour F2 runs under latency.
type latencyCheck struct {
	name string
	run  func(ctx context.Context, b backends.Backend, note fmt.Stringer)
}

// checkNote names the F2 check that failed, with the fault timeline.
type checkNote struct {
	check string
	tl    *timeline
}

func (n checkNote) String() string {
	return fmt.Sprintf("in F2's %s check, under %s of added latency each way;\n%s", n.check, faultLatency, n.tl)
}

// faultLatencySpec declares F2 on the private-broker area's proxied broker (specs/private.go);
// the area's AfterEach heals (removes the latency) after it.
func faultLatencySpec(area *faultArea) {
	Behaviour("F2", func(ctx SpecContext) {
		fb := area.broker()
		tl := newTimeline()
		DeferCleanup(func() {
			if CurrentSpecReport().Failed() {
				AddReportEntry("fault timeline", tl.String(), ReportEntryVisibilityFailureOrVerbose)
			}
		})

		err := fb.SetLatency(ctx, faultLatency)
		skipIfUnavailable(err)
		Expect(err).NotTo(HaveOccurred(), "add %s of latency each way", faultLatency)
		tl.add("LATENCY %s each way set", faultLatency)

		// One client per check, opened under latency, so a check's connections, lookups and
		// group traffic are its own; the first also answers which classes A1 can run.
		opening := time.Now()
		first, err := fb.Open(ctx)
		Expect(err).NotTo(HaveOccurred(), "open a client on the private broker under latency;\n%s", tl)
		DeferCleanup(func(ctx SpecContext) { Expect(first.Close(ctx)).To(Succeed(), "close the client") }, NodeTimeout(callWithin))

		checks := []latencyCheck{}
		for _, cl := range []backends.Class{backends.ClassFlow, backends.ClassRequest, backends.ClassResponse, backends.ClassNotify} {
			checks = append(checks, latencyCheck{fmt.Sprintf("D2 class %s", cl), func(ctx context.Context, b backends.Backend, note fmt.Stringer) {
				readyOnReturn(ctx, b, cl, note)
			}})
		}
		for _, cl := range []backends.Class{backends.ClassFlow, backends.ClassRequest} {
			if reason, lacks := first.Unsupported()[backends.CapTransientRedelivery]; lacks && !cl.Durable() {
				// A1 skips this class too; F2 runs the rest and says so.
				tl.add("A1 class %s not run: %s lacks capability %q: %s", cl, first.Name(), backends.CapTransientRedelivery, reason)
				AddReportEntry("F2 left out", fmt.Sprintf("A1 class %s: %s lacks %q: %s", cl, first.Name(), backends.CapTransientRedelivery, reason))
				continue
			}
			checks = append(checks, latencyCheck{fmt.Sprintf("A1 class %s", cl), func(ctx context.Context, b backends.Backend, note fmt.Stringer) {
				nackRedelivers(ctx, b, cl, note)
			}})
		}
		checks = append(checks,
			latencyCheck{"A2", ackOnlyThat},
			latencyCheck{"G1", func(ctx context.Context, b backends.Backend, note fmt.Stringer) {
				// Consumers and sends at once (see competing): one at a time under latency
				// costs a rebalance or a round trip each. G1's own 60 messages: an Ack need
				// not wait for the broker (C-ACK-5), so acking them is no round trip each.
				competing(ctx, b, true, competingN, note)
			}},
		)
		// The others at once: under latency each open costs round trips.
		bs := make([]backends.Backend, len(checks))
		bs[0] = first
		errs := make([]error, len(checks))
		var opens sync.WaitGroup
		for i := 1; i < len(bs); i++ {
			opens.Go(func() { bs[i], errs[i] = fb.Open(ctx) })
		}
		opens.Wait()
		for i, b := range bs {
			if b != nil && i > 0 {
				DeferCleanup(func(ctx SpecContext) { Expect(b.Close(ctx)).To(Succeed(), "close the client") }, NodeTimeout(callWithin))
			}
		}
		Expect(errors.Join(errs...)).NotTo(HaveOccurred(), "open a client per check on the private broker under latency;\n%s", tl)
		tl.add("opened %d clients, one per check, in %s", len(bs), since(opening))

		// The checks run at once (each on its own client and topics), so F2 costs about its
		// slowest check, not their sum; each asserts as its no-fault spec does.
		var wg sync.WaitGroup
		for i, ck := range checks {
			wg.Go(func() {
				defer GinkgoRecover()
				start := time.Now()
				tl.add("%s: start", ck.name)
				held := false
				defer func() {
					outcome := "FAILED"
					if held {
						outcome = "held"
					}
					tl.add("%s: %s after %s", ck.name, outcome, since(start))
				}()
				ck.run(ctx, bs[i], checkNote{ck.name, tl})
				held = true
			})
		}
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-ctx.Done():
			Fail(fmt.Sprintf("F2's checks did not end within the spec's time;\n%s", tl))
		}
	}, SpecTimeout(3*time.Minute))
}
