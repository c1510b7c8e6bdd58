package specs

import (
	"context"
	"errors"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/pubsub-conformance/harness/backends"
)

// The openings and the receive loop the fault specs share.

// cutNetwork cuts the network between fb and its clients now and returns heal, which heals it
// once (later calls return the first call's result) and records it on tl. The spec's cleanup
// heals the network if the spec ended before it did.
func cutNetwork(ctx context.Context, fb FaultyBroker, tl *timeline) (heal func(context.Context) error) {
	GinkgoHelper()
	Expect(fb.Cut(ctx)).To(Succeed(), "cut the network")
	tl.add("network CUT")
	var once sync.Once
	var healErr error
	heal = func(ctx context.Context) error {
		once.Do(func() {
			healErr = fb.Heal(ctx)
			tl.add("network HEALED (%v)", healErr)
		})
		return healErr
	}
	DeferCleanup(func(ctx SpecContext) { _ = heal(ctx) }, NodeTimeout(callWithin))
	return heal
}

// faultReceiver receives through a fault as an application does: after a failed Receive it
// waits pace and receives again, never reopening the consumer. It counts every payload and
// keeps the arrival order; with ack it acks each delivery (a failed ack fails the spec).
// Repeated identical errors appear on the timeline once, with their count.
type faultReceiver struct {
	c    backends.Consumer
	tl   *timeline // where errors (and, unless quiet, deliveries) are recorded; nil: nothing
	ack  bool
	pace time.Duration // the pause after a failed Receive: pacing, not synchronisation
	// quiet leaves deliveries off the timeline (F5 reads thousands back).
	quiet bool

	got   map[string]int
	order []string
}

func newFaultReceiver(c backends.Consumer, tl *timeline, ack bool, pace time.Duration) *faultReceiver {
	return &faultReceiver{c: c, tl: tl, ack: ack, pace: pace, got: map[string]int{}}
}

// until receives until done reports true (nil: until within ends) or within ends, and returns
// the last Receive error when within ended on it.
func (r *faultReceiver) until(ctx context.Context, within time.Duration, done func() bool) error {
	GinkgoHelper()
	rctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	var lastErr error
	var lastText string
	repeats := 0
	flush := func() {
		if repeats > 0 && r.tl != nil {
			r.tl.add("... and %d more Receives returned that error", repeats)
		}
		repeats = 0
	}
	defer flush()
	for (done == nil || !done()) && rctx.Err() == nil {
		start := time.Now()
		d, err := r.c.Receive(rctx)
		if err != nil {
			lastErr = err
			if rctx.Err() != nil {
				break
			}
			if err.Error() == lastText {
				repeats++
			} else {
				flush()
				lastText = err.Error()
				if r.tl != nil {
					r.tl.add("Receive returned after %s: %v", since(start), err)
				}
			}
			select {
			case <-rctx.Done():
			case <-time.After(r.pace):
			}
			continue
		}
		lastErr = nil
		p := string(d.Payload)
		r.got[p]++
		r.order = append(r.order, p)
		if r.tl != nil && !r.quiet {
			r.tl.add("received %s", brief(d.Payload))
		}
		if r.ack {
			actx, acancel := context.WithTimeout(ctx, callWithin)
			err = r.c.Ack(actx, d)
			acancel()
			if errors.Is(err, backends.ErrUnknownDelivery) {
				// The fault cost the consumer its session and the message moved (C-ACK-8):
				// the ack is not in force and the message comes again.
				if r.tl != nil {
					r.tl.add("ack of %s refused, the message moved: %v", brief(d.Payload), err)
				}
				continue
			}
			Expect(err).NotTo(HaveOccurred(), "ack %q;\n%s", d.Payload, r.tl)
		}
	}
	return lastErr
}
