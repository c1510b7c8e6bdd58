package specs

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/pubsub-conformance/harness/backends"
)

// Bounds of the fault specs.
const (
	// faultCallWithin is the context of each call made while the network is cut: long enough
	// for a client to see refused connections and give up or time out, short enough that F4
	// stays near 15 s. The calls run concurrently (C-BE-1), so the cut lasts about this long.
	faultCallWithin = 10 * time.Second
	// faultLate is how long after its deadline a call may still return before the spec calls
	// it hung: scheduling on a loaded machine, not a grace the contract gives.
	faultLate = 2 * time.Second
	// faultCut is how long F1 keeps the network cut.
	faultCut = 5 * time.Second
	// sendAttemptWithin bounds each Send attempt of F1's retrying sender.
	sendAttemptWithin = 3 * time.Second
)

// timeline records what happened when during a fault spec; its String goes into every failure
// message, so a failure says when the network was cut and healed and what each call did.
type timeline struct {
	start time.Time
	mu    sync.Mutex
	lines []string
}

func newTimeline() *timeline { return &timeline{start: time.Now()} }

func (t *timeline) add(format string, args ...any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	line := fmt.Sprintf("  +%7.3fs  %s", time.Since(t.start).Seconds(), fmt.Sprintf(format, args...))
	t.lines = append(t.lines, line)
	fmt.Fprintln(GinkgoWriter, line) // shown with -v, and with a failure
}

func (t *timeline) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return "fault timeline:\n" + strings.Join(t.lines, "\n")
}

// faultArea is the F area's private broker behind a proxy, shared by its specs.
type faultArea = sharedBroker[FaultyBroker]

// afterFault leaves the shared proxied broker as the next F spec expects it: healed, whatever
// the spec did or where it failed; a failed spec gets the private broker's log tail.
func afterFault(ctx SpecContext, area *faultArea) {
	if !area.started() { // nothing started: the spec skipped or failed on that
		return
	}
	area.after()
	Expect(area.b.Heal(ctx)).To(Succeed(), "heal the network after the spec")
}

// cutCall is one contract call made while the network is cut.
type cutCall struct {
	name string
	// call returns what it answered besides the error ("exists=false"), for the timeline.
	call func(ctx context.Context) (string, error)
}

type cutResult struct {
	took   time.Duration
	answer string
	err    error
}

// openFaulty opens a client on fb (through its proxy), closed after the spec.
func openFaulty(ctx context.Context, fb FaultyBroker) backends.Backend {
	GinkgoHelper()
	b, err := fb.Open(ctx)
	Expect(err).NotTo(HaveOccurred(), "open a client on the private broker")
	DeferCleanup(func(ctx SpecContext) { Expect(b.Close(ctx)).To(Succeed(), "close the client") }, NodeTimeout(callWithin))
	return b
}

// roundTripBeforeCut subscribes (earliest) to a new flow topic, opens its producer and makes
// one round trip (<tag>-before-0 sent, received and acked), so the client holds live
// connections when the network is cut.
func roundTripBeforeCut(ctx context.Context, b backends.Backend, tag string, tl *timeline) (backends.Consumer, backends.Producer) {
	GinkgoHelper()
	topic := newTopic(backends.ClassFlow, tag)
	c := subscribe(ctx, b, topic, unique(tag), backends.WithPosition(backends.Earliest))
	p := produce(ctx, b, topic)
	sendAll(ctx, p, msg(tag+"-before", 0))
	r := receiveN(ctx, c, 1, arriveWithin, ack)
	Expect(payloads(r.Got)).To(ConsistOf(tag+"-before-0"), "round trip before the cut; %s", r.describe())
	tl.add("before: sent, received and acked %s-before-0 (consumer subscribed at earliest, producer open)", tag)
	return c, p
}

// networkCutSpecs declares F1, F4, F3 and F6 on area's broker (the private-broker area's, in its
// Ordered container: one spec after another, healed after each).
func networkCutSpecs(area *faultArea) {
	Behaviour("F1", func(ctx SpecContext) { consumerWaitsThroughCut(ctx, area) }, SpecTimeout(3*time.Minute))
	Behaviour("F4", func(ctx SpecContext) { callsEndWhileCut(ctx, area) }, SpecTimeout(3*time.Minute))
	Behaviour("F3", func(ctx SpecContext) { sendsDuringCut(ctx, area) }, SpecTimeout(2*time.Minute)) // specs/faults_send.go
	Behaviour("F6", func(ctx SpecContext) { ackDuringCut(ctx, area) }, SpecTimeout(2*time.Minute))   // specs/faults_ack.go
}

// consumerWaitsThroughCut is F1: a round trip, a cut of faultCut with a sender retrying one
// message through it and one more after the heal, and a consumer that Receives through it all.
func consumerWaitsThroughCut(ctx SpecContext, area *faultArea) {
	fb := area.broker()
	tl := newTimeline()
	b := openFaulty(ctx, fb)
	c, p := roundTripBeforeCut(ctx, b, "f1", tl)

	heal := cutNetwork(ctx, fb, tl)
	tl.add("the cut lasts %s", faultCut)
	healed := make(chan error, 1)
	healTimer := time.AfterFunc(faultCut, func() { healed <- heal(context.Background()) }) // the fault's duration, not synchronisation
	DeferCleanup(func() { healTimer.Stop() })

	sent := make(chan error, 1)
	go func() {
		defer GinkgoRecover()
		sent <- sendThroughCut(ctx, p, healed, tl)
	}()

	want := []string{"f1-during-0", "f1-after-0"}
	r := newFaultReceiver(c, tl, true, 250*time.Millisecond)
	_ = r.until(ctx, faultCut+callWithin+arriveWithin, func() bool { return len(missing(want, r.got)) == 0 })
	var sendErr error
	select {
	case sendErr = <-sent:
	case <-ctx.Done():
		sendErr = ctx.Err()
	}
	Expect(sendErr).NotTo(HaveOccurred(), "the sender;\n%s", tl)
	Expect(missing(want, r.got)).To(BeEmpty(),
		"the consumer that waited through the cut must receive what was sent during it and after the heal; got %s;\n%s", show(r.order), tl)
	Expect(r.order).NotTo(ContainElement("f1-before-0"), "a message acked before the cut was delivered again;\n%s", tl)
	checkHistory(b, true)
}

// sendThroughCut is F1's sender: f1-during is sent while the network is cut, retried (each
// attempt bounded, paced) until a Send returns nil; f1-after once healed reports the heal.
func sendThroughCut(ctx context.Context, p backends.Producer, healed <-chan error, tl *timeline) error {
	deadline := time.Now().Add(faultCut + callWithin)
	pace := time.NewTicker(250 * time.Millisecond) // pacing of retries, not synchronisation
	defer pace.Stop()
	for attempt := 1; ; attempt++ {
		sctx, cancel := context.WithTimeout(ctx, sendAttemptWithin)
		start := time.Now()
		err := p.Send(sctx, msg("f1-during", 0))
		cancel()
		tl.add("Send f1-during attempt %d returned after %s: %v", attempt, since(start), err)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no Send of f1-during succeeded in %d attempts by %s after the cut: %w", attempt, faultCut+callWithin, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-pace.C:
		}
	}
	select {
	case err := <-healed:
		if err != nil {
			return fmt.Errorf("heal: %w", err)
		}
	case <-ctx.Done():
		return ctx.Err()
	}
	sctx, cancel := context.WithTimeout(ctx, callWithin)
	defer cancel()
	start := time.Now()
	err := p.Send(sctx, msg("f1-after", 0))
	tl.add("Send f1-after returned after %s: %v", since(start), err)
	return err
}

// callsEndWhileCut is F4: every kind of call made while the network is cut ends within its
// context with ErrUnavailable or ErrTimeout, and the same client works after the heal.
func callsEndWhileCut(ctx SpecContext, area *faultArea) {
	fb := area.broker()
	tl := newTimeline()
	b := openFaulty(ctx, fb)

	// Before the cut: topics, a producer, and one round trip, so the client holds live
	// connections (metadata, coordinator, lookups) when they are cut.
	existing := newTopic(backends.ClassFlow, "f4")
	doomed := newTopic(backends.ClassFlow, "f4-del")
	for _, t := range []string{existing, doomed} {
		cctx, cancel := context.WithTimeout(ctx, callWithin)
		err := b.CreateTopic(cctx, t)
		cancel()
		Expect(err).NotTo(HaveOccurred(), "create %s before the cut", t)
	}
	p := produce(ctx, b, existing)
	c := subscribe(ctx, b, existing, unique("f4"), backends.WithPosition(backends.Earliest))
	sendAll(ctx, p, msg("f4-before", 0))
	r := receiveN(ctx, c, 1, arriveWithin, ack)
	Expect(r.Got).To(HaveLen(1), "round trip before the cut; %s", r.describe())
	closeNow(ctx, c)
	tl.add("round trip before the cut done")

	heal := cutNetwork(ctx, fb, tl)

	// What a call opened despite the cut is closed after the spec (never from the
	// calls' goroutines).
	var openedMu sync.Mutex
	var opened []func(context.Context) error
	keep := func(close func(context.Context) error) {
		openedMu.Lock()
		defer openedMu.Unlock()
		opened = append(opened, close)
	}
	DeferCleanup(func(ctx SpecContext) {
		openedMu.Lock()
		defer openedMu.Unlock()
		for _, c := range opened {
			_ = c(ctx)
		}
	}, NodeTimeout(callWithin))
	calls := []cutCall{
		{"Consumer()", func(ctx context.Context) (string, error) {
			c, err := b.Consumer(ctx, newTopic(backends.ClassFlow, "f4-cut"), unique("f4"))
			if c != nil {
				keep(c.Close)
			}
			return "", err
		}},
		{"Producer()", func(ctx context.Context) (string, error) {
			p, err := b.Producer(ctx, newTopic(backends.ClassFlow, "f4-cut"))
			if p != nil {
				keep(p.Close)
			}
			return "", err
		}},
		{"Send", func(ctx context.Context) (string, error) { return "", p.Send(ctx, msg("f4-during", 0)) }},
		{"CreateTopic", func(ctx context.Context) (string, error) {
			return "", b.CreateTopic(ctx, newTopic(backends.ClassFlow, "f4-new"))
		}},
		{"DeleteTopic", func(ctx context.Context) (string, error) { return "", b.DeleteTopic(ctx, doomed) }},
		{"TopicExists", func(ctx context.Context) (string, error) {
			ok, err := b.TopicExists(ctx, existing)
			return fmt.Sprintf("exists=%v", ok), err
		}},
	}
	results := make(chan struct {
		i int
		cutResult
	}, len(calls))
	for i, cl := range calls {
		go func() {
			defer GinkgoRecover()
			cctx, cancel := context.WithTimeout(ctx, faultCallWithin)
			defer cancel()
			start := time.Now()
			answer, err := cl.call(cctx)
			results <- struct {
				i int
				cutResult
			}{i, cutResult{time.Since(start), answer, err}}
		}()
	}
	got := map[int]cutResult{}
	hung := time.NewTimer(faultCallWithin + faultLate)
collect:
	for len(got) < len(calls) {
		select {
		case r := <-results:
			got[r.i] = r.cutResult
			tl.add("%s returned after %s: %s error=%v", calls[r.i].name, r.took.Round(time.Millisecond), r.answer, r.err)
		case <-hung.C:
			break collect
		case <-ctx.Done():
			break collect
		}
	}
	hung.Stop()
	var bad []string
	for i, cl := range calls {
		r, ok := got[i]
		switch {
		case !ok:
			tl.add("%s still running: it did not end within its %s context (+%s)", cl.name, faultCallWithin, faultLate)
			bad = append(bad, cl.name+" hung past its context")
		case r.err == nil:
			bad = append(bad, strings.TrimSpace(cl.name+" returned no error "+r.answer))
		case !errors.Is(r.err, backends.ErrUnavailable) && !errors.Is(r.err, backends.ErrTimeout):
			bad = append(bad, fmt.Sprintf("%s: error wraps neither ErrUnavailable nor ErrTimeout (%v)", cl.name, r.err))
		}
	}

	Expect(heal(ctx)).To(Succeed(), "heal the network")
	Expect(bad).To(BeEmpty(), "while the network was cut, every call must end within its context with an error wrapping ErrUnavailable or ErrTimeout;\n%s", tl)

	// After the heal: the same Backend and the producer from before the cut work again.
	// Each call once, with the ordinary bound: the client reconnects by itself.
	cctx, cancel := context.WithTimeout(ctx, callWithin)
	start := time.Now()
	exists, err := b.TopicExists(cctx, existing)
	cancel()
	tl.add("after heal: TopicExists after %s: %v, %v", since(start), exists, err)
	Expect(err).NotTo(HaveOccurred(), "TopicExists after the heal;\n%s", tl)
	Expect(exists).To(BeTrue(), "TopicExists after the heal of a topic created before the cut;\n%s", tl)

	cctx, cancel = context.WithTimeout(ctx, callWithin)
	start = time.Now()
	c2, err := b.Consumer(cctx, existing, unique("f4-after"), backends.WithPosition(backends.Latest))
	cancel()
	tl.add("after heal: Consumer() after %s: %v", since(start), err)
	Expect(err).NotTo(HaveOccurred(), "Consumer() after the heal;\n%s", tl)
	DeferCleanup(func(ctx SpecContext) { Expect(c2.Close(ctx)).To(Succeed()) }, NodeTimeout(callWithin))

	cctx, cancel = context.WithTimeout(ctx, callWithin)
	start = time.Now()
	err = p.Send(cctx, msg("f4-after", 0))
	cancel()
	tl.add("after heal: Send on the producer from before the cut after %s: %v", since(start), err)
	Expect(err).NotTo(HaveOccurred(), "Send on the producer opened before the cut, after the heal;\n%s", tl)
	r = receivePayload(ctx, c2, "f4-after-0", arriveWithin, ack)
	tl.add("after heal: received %s", show(payloads(r.Got)))
	Expect(payloads(r.Got)).To(ContainElement("f4-after-0"), "the message sent after the heal must arrive; %s\n%s", r.describe(), tl)
}

// countStrings counts payload strings like counts does deliveries.
func countStrings(ps []string) map[string]int {
	m := map[string]int{}
	for _, p := range ps {
		m[p]++
	}
	return m
}
