package specs

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// Bounds of F3 (the F area's shared ones are in faults.go).
const (
	// f3SendWithin is the context of each Send of the first two waves, made while the network
	// is cut: a client either fails it or keeps it queued; both are allowed.
	f3SendWithin = 2 * time.Second
	// f3StraddleWithin is the context of each Send of the last wave, issued while cut and
	// healed f3HealAfter later: long enough for a client that reconnects promptly to confirm
	// them, so that F3 also sees Sends issued during a cut that return nil.
	f3StraddleWithin = 6 * time.Second
	f3HealAfter      = 1 * time.Second
	// f3PerWave Sends run concurrently in each wave (C-PROD-3).
	f3PerWave = 3
	// f3Straggle: once everything that must arrive has, the consumer keeps receiving this long
	// to count the Sends that failed but were delivered anyway. A report, not an assertion:
	// a later straggler is simply not counted.
	f3Straggle = time.Second
)

// f3Send is one Send made during F3's cut.
type f3Send struct {
	payload string
	within  time.Duration
	took    time.Duration
	err     error
	ended   bool // returned before the spec stopped waiting for it
}

// F3Tally is F3's count of the Sends made during the cut, recorded as a report entry (the
// JSON report keeps the fields): what a retrying sender must expect from this backend.
type F3Tally struct {
	Sends            int      // Sends issued while the network was cut
	Errored          int      // ... that returned an error
	DeliveredAnyway  []string // ... of those, delivered after the heal all the same
	ReturnedNil      int      // ... that returned nil (each must be delivered)
	NilNotDelivered  []string // ... of those, not delivered: silent loss
	Hung             []string // ... that did not return within their context (+ faultLate)
	Duplicates       []string // payloads delivered more than once
	CutFor           string   // how long the network was cut
	AfterHealArrival string   // from the heal until everything that must arrive had
}

func (t F3Tally) String() string {
	list := func(ps []string) string {
		if len(ps) == 0 {
			return ""
		}
		return " " + show(ps)
	}
	s := fmt.Sprintf("%d Sends during the cut (%s): %d returned an error, of which %d were delivered anyway%s; %d returned nil, of which %d were not delivered%s",
		t.Sends, t.CutFor, t.Errored, len(t.DeliveredAnyway), list(t.DeliveredAnyway), t.ReturnedNil, len(t.NilNotDelivered), list(t.NilNotDelivered))
	if len(t.Hung) > 0 {
		s += fmt.Sprintf("; %d did not return within their context %s", len(t.Hung), show(t.Hung))
	}
	if len(t.Duplicates) > 0 {
		s += "; delivered more than once: " + strings.Join(t.Duplicates, " ")
	}
	if t.AfterHealArrival != "" {
		s += "; everything due arrived " + t.AfterHealArrival + " after the heal"
	}
	return s
}

// sendsDuringCut is F3: three waves of concurrent Sends while the network is cut (the last
// still waiting at the heal), one more after it, and the consumer subscribed before the cut
// receiving every message whose Send returned nil.
func sendsDuringCut(ctx SpecContext, area *faultArea) {
	fb := area.broker()
	tl := newTimeline()
	b := openFaulty(ctx, fb)
	c, p := roundTripBeforeCut(ctx, b, "f3", tl)

	heal := cutNetwork(ctx, fb, tl)
	cutAt := time.Now()

	// launch issues one wave of concurrent Sends, each with its own context; the returned
	// wait collects them, giving up on a Send faultLate after its context ended.
	var sends []*f3Send
	launch := func(tag string, within time.Duration) (wait func()) {
		type result struct {
			i    int
			took time.Duration
			err  error
		}
		results := make(chan result, f3PerWave)
		wave := make([]*f3Send, f3PerWave)
		for i := range wave {
			m := msg(tag, i)
			wave[i] = &f3Send{payload: string(m.Payload), within: within}
			go func() {
				defer GinkgoRecover()
				sctx, cancel := context.WithTimeout(ctx, within)
				defer cancel()
				start := time.Now()
				err := p.Send(sctx, m)
				took := time.Since(start)
				tl.add("Send %s (context %s) returned after %s: %v", m.Payload, within, took.Round(time.Millisecond), err)
				results <- result{i, took, err}
			}()
		}
		sends = append(sends, wave...)
		tl.add("issued %d concurrent Sends %s-0..%d", f3PerWave, tag, f3PerWave-1)
		return func() {
			late := time.NewTimer(within + faultLate)
			defer late.Stop()
			for n := 0; n < f3PerWave; n++ {
				select {
				case res := <-results:
					s := wave[res.i]
					s.ended, s.took, s.err = true, res.took, res.err
				case <-late.C:
					return
				case <-ctx.Done():
					return
				}
			}
		}
	}

	// Two waves while cut, the second issued after the first ended (a sender that goes on
	// sending after an error, as an application does), then a third whose Sends are still
	// waiting when the network comes back.
	launch("f3-w1", f3SendWithin)()
	launch("f3-w2", f3SendWithin)()
	wait3 := launch("f3-w3", f3StraddleWithin)
	select { // the fault's duration, not synchronisation
	case <-time.After(f3HealAfter):
	case <-ctx.Done():
	}
	Expect(heal(ctx)).To(Succeed(), "heal the network;\n%s", tl)
	healedAt := time.Now()
	tally := F3Tally{CutFor: healedAt.Sub(cutAt).Round(time.Millisecond).String()}
	tl.add("the cut lasted %s", tally.CutFor)
	wait3()

	// After the heal, one more Send on the same producer: it must succeed and arrive too,
	// and it marks the end of what the consumer must see.
	sctx, cancel := context.WithTimeout(ctx, callWithin)
	start := time.Now()
	err := p.Send(sctx, msg("f3-after", 0))
	cancel()
	tl.add("Send f3-after-0 after the heal returned after %s: %v", since(start), err)
	Expect(err).NotTo(HaveOccurred(), "Send on the producer opened before the cut, after the heal;\n%s", tl)

	var problems []string
	want := []string{"f3-after-0"}
	for _, s := range sends {
		tally.Sends++
		switch {
		case !s.ended:
			tally.Hung = append(tally.Hung, s.payload)
			problems = append(problems, fmt.Sprintf("Send %s did not return within its %s context (+%s)", s.payload, s.within, faultLate))
		case s.took > s.within+faultLate:
			problems = append(problems, fmt.Sprintf("Send %s returned after %s, past its %s context (+%s)", s.payload, s.took.Round(time.Millisecond), s.within, faultLate))
			fallthrough
		default:
			if s.err != nil {
				tally.Errored++
			} else {
				tally.ReturnedNil++
				want = append(want, s.payload)
			}
		}
	}

	// The consumer subscribed before the cut receives, without being reopened, every
	// message whose Send returned nil.
	r := newFaultReceiver(c, tl, true, 250*time.Millisecond)
	got := r.got
	_ = r.until(ctx, arriveWithin, func() bool { return len(missing(want, got)) == 0 })
	if len(missing(want, got)) == 0 {
		tally.AfterHealArrival = since(healedAt).String()
		_ = r.until(ctx, f3Straggle, nil) // count late deliveries of failed Sends (a report only)
	}
	for _, s := range sends {
		switch {
		case s.ended && s.err != nil && got[s.payload] > 0:
			tally.DeliveredAnyway = append(tally.DeliveredAnyway, s.payload)
		case s.ended && s.err == nil && got[s.payload] == 0:
			tally.NilNotDelivered = append(tally.NilNotDelivered, s.payload)
		}
	}
	tally.Duplicates = duplicated(got)
	slices.Sort(tally.DeliveredAnyway)
	tl.add("tally: %s", tally)
	AddReportEntry("F3 sends during the cut", tally, ReportEntryVisibilityAlways)

	if m := missing(want, got); len(m) > 0 {
		problems = append(problems, fmt.Sprintf("not delivered within %s although Send returned nil (silent loss): %s", arriveWithin, show(m)))
	}
	Expect(problems).To(BeEmpty(),
		"every Send made during the cut must end within its context, and every message whose Send returned nil must be delivered after the heal; %s; received %s;\n%s", tally, show(r.order), tl)
	checkHistory(b, true)
}
