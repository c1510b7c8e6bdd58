package specs

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/pubsub-conformance/harness/backends"
)

// Bounds and sizes of the leader-failover spec (F5).
const (
	// failoverProducers clients each run failoverSenders concurrent send loops: several Sends
	// in flight at any moment, as under a real steady load, so that the kill lands while some
	// are unconfirmed and some are confirmed but perhaps not yet replicated.
	failoverProducers = 2
	failoverSenders   = 4
	// failoverWarmup confirmed Sends before the kill: the load is steady when the leader dies.
	failoverWarmup = 300
	// failoverAfter confirmed Sends after the kill end the load: writes flow again.
	failoverAfter = 300
	// failoverLag is how long the leader's followers are cut off from it before it is killed:
	// every write a leader confirmed in that time without its followers is one it alone has.
	failoverLag = time.Second
	// failoverSendWithin bounds each Send: longer than a failover (fencing after 4 s of missed
	// heartbeats, plus a controller election when the leader was also the active controller),
	// so a Send in flight at the kill can complete through the new leader.
	failoverSendWithin = 15 * time.Second
	// failoverRecoverWithin is how long after the kill a Send must succeed again: two of three
	// replicas remain, which min.insync.replicas 2 accepts.
	failoverRecoverWithin = 30 * time.Second
	// failoverReadWithin bounds reading back every confirmed message.
	failoverReadWithin = 30 * time.Second
)

// sendRecord is one Send of the failover load.
type sendRecord struct {
	payload    string
	start, end time.Time
	err        error
}

// failoverLoad is the steady send of F5: failoverProducers clients, each with failoverSenders
// loops sending numbered messages until stopped.
type failoverLoad struct {
	mu      sync.Mutex
	records []sendRecord

	ok       atomic.Int64
	killedAt atomic.Pointer[time.Time]
	okAfter  atomic.Int64 // confirmed Sends started after the kill

	warm    chan struct{} // closed at failoverWarmup confirmed Sends
	warmO   sync.Once
	enough  chan struct{} // closed at failoverAfter confirmed Sends started after the kill
	enoughO sync.Once
	stop    chan struct{}
}

func (l *failoverLoad) run(ctx context.Context, p backends.Producer, tag string, tl *timeline) {
	for i := 0; ; i++ {
		select {
		case <-l.stop:
			return
		case <-ctx.Done():
			return
		default:
		}
		m := msg(tag, i)
		sctx, cancel := context.WithTimeout(ctx, failoverSendWithin)
		start := time.Now()
		err := p.Send(sctx, m)
		end := time.Now()
		cancel()
		l.mu.Lock()
		l.records = append(l.records, sendRecord{payload: string(m.Payload), start: start, end: end, err: err})
		l.mu.Unlock()
		killed := l.killedAt.Load()
		if err != nil {
			if killed == nil {
				tl.add("Send %s failed before the kill after %s: %v", m.Payload, end.Sub(start).Round(time.Millisecond), err)
			}
			if ctx.Err() != nil {
				return
			}
			continue
		}
		if l.ok.Add(1) >= failoverWarmup {
			l.warmO.Do(func() { close(l.warm) })
		}
		if killed != nil && start.After(*killed) && l.okAfter.Add(1) >= failoverAfter {
			l.enoughO.Do(func() { close(l.enough) })
		}
	}
}

// failoverStats is what the load measured around the kill.
type failoverStats struct {
	sends, confirmed, failed int
	lastOKBefore             time.Time // last confirmed Send that returned before the kill
	firstOKAfter             time.Time // first confirmed Send that returned after the kill
	firstStartedOK           time.Time // first confirmed Send that started after the kill
	inFlightOK, inFlightErr  int       // Sends in flight at the kill, by outcome
	errs                     map[string]int
}

func (l *failoverLoad) stats(killed time.Time) failoverStats {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := failoverStats{sends: len(l.records), errs: map[string]int{}}
	for _, r := range l.records {
		if r.err != nil {
			s.failed++
			s.errs[firstErrLine(r.err)]++
			if r.start.Before(killed) && r.end.After(killed) {
				s.inFlightErr++
			}
			continue
		}
		s.confirmed++
		switch {
		case r.end.Before(killed):
			if r.end.After(s.lastOKBefore) {
				s.lastOKBefore = r.end
			}
		default:
			if s.firstOKAfter.IsZero() || r.end.Before(s.firstOKAfter) {
				s.firstOKAfter = r.end
			}
			if r.start.Before(killed) {
				s.inFlightOK++
			} else if s.firstStartedOK.IsZero() || r.end.Before(s.firstStartedOK) {
				s.firstStartedOK = r.end
			}
		}
	}
	return s
}

// confirmed lists the payloads whose Send returned nil, with their records by payload.
func (l *failoverLoad) confirmed() ([]string, map[string]sendRecord) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	by := map[string]sendRecord{}
	for _, r := range l.records {
		if r.err == nil {
			out = append(out, r.payload)
			by[r.payload] = r
		}
	}
	return out, by
}

// describe is the measurement in the report: the unavailability window and what the load saw.
func (s failoverStats) describe(killed time.Time) string {
	at := func(t time.Time) string {
		if t.IsZero() {
			return "never"
		}
		return fmt.Sprintf("%+.3fs", t.Sub(killed).Seconds())
	}
	window := "unmeasured (no confirmed Send on one side of the kill)"
	if !s.lastOKBefore.IsZero() && !s.firstStartedOK.IsZero() {
		window = s.firstStartedOK.Sub(s.lastOKBefore).Round(time.Millisecond).String()
	}
	var errs []string
	for _, e := range slices.Sorted(maps.Keys(s.errs)) {
		errs = append(errs, fmt.Sprintf("%dx %s", s.errs[e], e))
	}
	return fmt.Sprintf("unavailability window %s (last confirmed Send before the kill returned at %s, first confirmed Send started after it returned at %s; the first confirmed return of any Send after the kill at %s); %d Sends, %d confirmed, %d failed; in flight at the kill: %d confirmed, %d failed; errors: %s",
		window, at(s.lastOKBefore), at(s.firstStartedOK), at(s.firstOKAfter),
		s.sends, s.confirmed, s.failed, s.inFlightOK, s.inFlightErr, strings.Join(errs, "; "))
}

func firstErrLine(err error) string {
	line, _, _ := strings.Cut(err.Error(), "\n")
	if len(line) > 160 {
		line = line[:160] + "..."
	}
	return line
}

func failover(env *Env) {
	// The cluster starts in BeforeAll, under its own bound: on a loaded machine it may wait
	// minutes for start slots (three JVMs at once), which is the machine, not the behaviour;
	// the spec's own timeout then counts only the spec.
	Describe("leader failover", Ordered, func() {
		area := &sharedBroker[Cluster]{}
		BeforeAll(func(ctx SpecContext) {
			area.start(ctx, env.Backend, "replicated cluster", env.Cluster)
		}, NodeTimeout(4*time.Minute))
		AfterEach(func() { area.after() })

		Behaviour("F5", func(ctx SpecContext) { leaderFailover(ctx, area.broker()) }, SpecTimeout(2*time.Minute))
	})
}

// leaderFailover is F5: steady sends from several producers, replication from the partition
// leader cut so its followers fall behind, the leader killed, and every confirmed write read
// back (readBackAfterFailover).
func leaderFailover(ctx SpecContext, cl Cluster) {
	AddReportEntry("cluster", cl.Describe())
	tl := newTimeline()
	tl.add("cluster ready: %s", cl.Describe())

	var clients []backends.Backend
	for i := range failoverProducers {
		b, err := cl.Open(ctx)
		Expect(err).NotTo(HaveOccurred(), "open client %d on the cluster", i+1)
		DeferCleanup(func(ctx SpecContext) { Expect(b.Close(ctx)).To(Succeed(), "close client %d", i+1) }, NodeTimeout(callWithin))
		clients = append(clients, b)
	}
	topic := newTopic(backends.ClassFlow, "f5")
	cctx, cancel := context.WithTimeout(ctx, callWithin)
	err := clients[0].CreateTopic(cctx, topic)
	cancel()
	Expect(err).NotTo(HaveOccurred(), "create %s on the cluster", topic)
	// The consumer is live before the kill (and so is its group coordinator's offsets
	// topic, replicated like the data); it reads everything back after the failover.
	c := subscribe(ctx, clients[0], topic, unique("f5"), backends.WithPosition(backends.Earliest))
	var producers []backends.Producer
	for _, b := range clients {
		producers = append(producers, produce(ctx, b, topic))
	}

	load := &failoverLoad{warm: make(chan struct{}), enough: make(chan struct{}), stop: make(chan struct{})}
	lctx, lcancel := context.WithCancel(ctx)
	defer lcancel()
	var wg sync.WaitGroup
	for pi, p := range producers {
		for si := range failoverSenders {
			wg.Go(func() {
				defer GinkgoRecover()
				load.run(lctx, p, fmt.Sprintf("f5-p%d-s%d", pi, si), tl)
			})
		}
	}
	stopped := false
	stopLoad := func() {
		if !stopped {
			stopped = true
			close(load.stop)
		}
	}
	DeferCleanup(func() { stopLoad(); lcancel(); wg.Wait() }) // the loops end within one Send's bound

	select {
	case <-load.warm:
	case <-ctx.Done():
		Fail(fmt.Sprintf("the load did not reach %d confirmed Sends before the kill (%d confirmed);\n%s", failoverWarmup, load.ok.Load(), tl))
	}
	lctx2, cancel2 := context.WithTimeout(ctx, callWithin)
	leader, err := cl.Leader(lctx2, topic)
	cancel2()
	Expect(err).NotTo(HaveOccurred(), "find the partition leader of %s;\n%s", topic, tl)
	tl.add("steady send: %d confirmed; partition leader is node %d", load.ok.Load(), leader)
	// What the topic really has, for the messages: a backend may create it with fewer
	// replicas than the cluster's three.
	replication := "replication factor unknown"
	lctx3, cancel3 := context.WithTimeout(ctx, callWithin)
	if replicas, isr, err := cl.Replicas(lctx3, topic); err == nil {
		replication = fmt.Sprintf("replication factor %d (replicas %v), in-sync replicas %v before the cut", len(replicas), replicas, isr)
	} else {
		replication += ": " + err.Error()
	}
	cancel3()
	tl.add("the topic has %s", replication)

	// The followers fall behind: replication from the leader is cut (clients and the
	// controllers still reach it) for failoverLag, the fault's duration.
	okAtCut := load.ok.Load()
	Expect(cl.CutReplication(ctx, leader)).To(Succeed(), "cut replication from the leader;\n%s", tl)
	tl.add("node %d (the leader): replication CUT for %s, its followers fall behind", leader, failoverLag)
	lag := time.NewTimer(failoverLag)
	select {
	case <-lag.C:
	case <-ctx.Done():
		lag.Stop()
	}
	tl.add("%d Sends confirmed while replication was cut", load.ok.Load()-okAtCut)

	killed := time.Now()
	load.killedAt.Store(&killed)
	kctx, cancel3 := context.WithTimeout(ctx, callWithin)
	err = cl.Kill(kctx, leader)
	cancel3()
	tl.add("node %d (the leader) KILLED (SIGKILL): %v", leader, err)
	Expect(err).NotTo(HaveOccurred(), "kill the partition leader;\n%s", tl)

	recovered := time.NewTimer(failoverRecoverWithin)
	defer recovered.Stop()
	select {
	case <-load.enough:
		tl.add("%d confirmed Sends started after the kill", failoverAfter)
	case <-recovered.C:
		tl.add("no %d confirmed Sends started after the kill within %s (%d)", failoverAfter, failoverRecoverWithin, load.okAfter.Load())
	case <-ctx.Done():
	}
	stopLoad()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		Fail(fmt.Sprintf("the send loops did not end;\n%s", tl))
	}
	st := load.stats(killed)
	tl.add("load stopped: %s", st.describe(killed))
	if l2, err := cl.Leader(ctx, topic); err == nil {
		tl.add("partition leader now node %d", l2)
	}
	AddReportEntry("F5 failover", fmt.Sprintf("killed the leader (node %d); %s", leader, st.describe(killed)))
	Expect(st.firstStartedOK.IsZero()).To(BeFalse(), "no Send succeeded within %s after the leader was killed (the topic has %s);\n%s", failoverRecoverWithin, replication, tl)

	readBackAfterFailover(ctx, load, killed, c, clients, topic, tl)
}

// readBackAfterFailover checks F5's outcome: every confirmed payload arrives on the consumer
// that lived through the failover; what does not is looked for with a fresh subscription from
// earliest, to tell a lost write from one the consumer missed.
func readBackAfterFailover(ctx SpecContext, load *failoverLoad, killed time.Time, c backends.Consumer, clients []backends.Backend, topic string, tl *timeline) {
	// Read back: every confirmed payload must arrive on the consumer that lived
	// through the failover (opened before the kill, received nothing until now).
	want, records := load.confirmed()
	wanted := make(map[string]bool, len(want))
	for _, p := range want {
		wanted[p] = true
	}
	// Not acked: the check is what the log holds, and an ack per message (a commit each on
	// Kafka) would take longer than the failover itself. A consumer may report the failover
	// with errors; it keeps going.
	r := newFaultReceiver(c, tl, false, 100*time.Millisecond)
	r.quiet = true
	got := r.got
	left, seen := len(want), 0
	lastErr := r.until(ctx, failoverReadWithin, func() bool {
		for _, p := range r.order[seen:] {
			if got[p] == 1 && wanted[p] {
				left--
			}
		}
		seen = len(r.order)
		return left == 0
	})
	dups := 0
	for _, n := range got {
		dups += n - 1
	}
	tl.add("read back %d distinct payloads (%d duplicate deliveries) of %d confirmed", len(got), dups, len(want))
	AddReportEntry("F5 read back", fmt.Sprintf("%d confirmed Sends, %d distinct delivered, %d duplicate deliveries", len(want), len(got), dups))
	lost := missing(want, got)
	if len(lost) == 0 {
		checkHistory(clients[0], true)
		return
	}
	// Lost, or only missed by the consumer that lived through the failover? A fresh
	// subscription from earliest tells the two apart. It reads the same log, so once it
	// has as many distinct payloads as the first consumer had, it has read what that one
	// did and what is still missing is not in the log.
	c2 := subscribe(ctx, clients[1], topic, unique("f5-check"), backends.WithPosition(backends.Earliest))
	lostSet := map[string]bool{}
	for _, p := range lost {
		lostSet[p] = true
	}
	stillLost := len(lost)
	fr := newFaultReceiver(c2, nil, false, 100*time.Millisecond)
	fresh, fseen := fr.got, 0
	_ = fr.until(ctx, failoverReadWithin, func() bool {
		for _, p := range fr.order[fseen:] {
			if fresh[p] == 1 && lostSet[p] {
				stillLost--
			}
		}
		fseen = len(fr.order)
		return stillLost == 0 || len(fresh) >= len(got)+len(lost)-stillLost
	})
	onBroker := missing(lost, fresh)
	var detail []string
	for _, p := range onBroker[:min(len(onBroker), 12)] {
		r := records[p]
		detail = append(detail, fmt.Sprintf("%s sent %+.3fs..%+.3fs", p, r.start.Sub(killed).Seconds(), r.end.Sub(killed).Seconds()))
	}
	if len(onBroker) > 0 {
		Fail(fmt.Sprintf("%d of %d messages whose Send returned nil were lost in the failover (a fresh earliest subscription does not have them either): %s;\n%s",
			len(onBroker), len(want), strings.Join(detail, ", "), tl))
	}
	Fail(fmt.Sprintf("%d of %d confirmed messages did not reach the consumer that lived through the failover within %s (%v), though a fresh earliest subscription has them: %s;\n%s",
		len(lost), len(want), failoverReadWithin, lastErr, show(lost), tl))
}
