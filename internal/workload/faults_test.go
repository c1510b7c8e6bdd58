package workload

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pubsub-conformance/harness/backends"
	"github.com/pubsub-conformance/harness/backends/memory"
	"github.com/pubsub-conformance/harness/internal/history"
)

// settling is the memory reference with two behaviours of real brokers the reference lacks:
// while down is set, Ack, Nack and Close fail for want of the broker (the reference's cut
// fails only the calls that reach it: Consumer, Send, topic calls), and with refuseMoved, an
// Ack or Nack of a delivery made before its subscription's members changed is refused with
// ErrUnknownDelivery (C-ACK-8: the message may have moved to another member).
type settling struct {
	backends.Backend
	down        *atomic.Bool
	refuseMoved bool
	mu          *sync.Mutex
	epoch       map[string]int // subscription -> Consumer and Close calls so far
	at          map[string]int // delivery ID -> its subscription's epoch when delivered
}

func newSettling(b backends.Backend, down *atomic.Bool, refuseMoved bool) *settling {
	return &settling{Backend: b, down: down, refuseMoved: refuseMoved, mu: &sync.Mutex{}, epoch: map[string]int{}, at: map[string]int{}}
}

func (s *settling) Consumer(ctx context.Context, topic, sub string, opts ...backends.ConsumerOption) (backends.Consumer, error) {
	c, err := s.Backend.Consumer(ctx, topic, sub, opts...)
	if err != nil {
		return c, err
	}
	s.mu.Lock()
	s.epoch[topic+"/"+sub]++
	s.mu.Unlock()
	return &settlingConsumer{Consumer: c, s: s, sub: topic + "/" + sub}, nil
}

type settlingConsumer struct {
	backends.Consumer
	s   *settling
	sub string
}

func (c *settlingConsumer) Receive(ctx context.Context) (backends.Delivery, error) {
	d, err := c.Consumer.Receive(ctx)
	if err == nil {
		c.s.mu.Lock()
		c.s.at[d.ID] = c.s.epoch[c.sub]
		c.s.mu.Unlock()
	}
	return d, err
}

func (c *settlingConsumer) settle(d backends.Delivery, what string, fn func() error) error {
	if c.s.down.Load() {
		return fmt.Errorf("%s: %w: down", what, backends.ErrUnavailable)
	}
	c.s.mu.Lock()
	moved := c.s.refuseMoved && c.s.epoch[c.sub] != c.s.at[d.ID]
	c.s.mu.Unlock()
	if moved {
		return fmt.Errorf("%s: %w: the members changed", what, backends.ErrUnknownDelivery)
	}
	return fn()
}

func (c *settlingConsumer) Ack(ctx context.Context, d backends.Delivery) error {
	return c.settle(d, "ack", func() error { return c.Consumer.Ack(ctx, d) })
}

func (c *settlingConsumer) Nack(ctx context.Context, d backends.Delivery) error {
	return c.settle(d, "nack", func() error { return c.Consumer.Nack(ctx, d) })
}

func (c *settlingConsumer) Close(ctx context.Context) error {
	if c.s.down.Load() {
		return fmt.Errorf("close: %w: down", backends.ErrUnavailable)
	}
	c.s.mu.Lock()
	c.s.epoch[c.sub]++
	c.s.mu.Unlock()
	return c.Consumer.Close(ctx)
}

// runSettling runs prog on a settling reference under sched (nil: no faults) with nem made from
// the broker and the down switch (nil: the reference's own nemesis, with down cut and healed
// along with it).
func runSettling(t *testing.T, prog string, sched string, refuseMoved bool, cfgf func(*Config)) (Result, error, []history.Op) {
	t.Helper()
	p, err := ParseProgram(prog)
	if err != nil {
		t.Fatal(err)
	}
	br, mb, rec, cfg := onReference(t, "f")
	down := &atomic.Bool{}
	if sched != "" {
		s, err := ParseSchedule(sched)
		if err != nil {
			t.Fatal(err)
		}
		n := memoryNemesis(br)
		cut, heal := n.Cut, n.Heal
		n.Cut = func(ctx context.Context) error { down.Store(true); return cut(ctx) }
		n.Heal = func(ctx context.Context) error { down.Store(false); return heal(ctx) }
		n.Long = 400 * time.Millisecond
		cfg.Nemesis, cfg.Schedule = n, s
	}
	if cfgf != nil {
		cfgf(&cfg)
	}
	res, err := Run(context.Background(), history.Wrap(newSettling(mb, down, refuseMoved), rec, "workload"), rec, p, cfg)
	return res, err, rec.Ops()
}

// Under a cut the calls that fail for want of the broker are tolerated, each named: an Ack, a
// Nack, a Close, a Consumer call (whose subscription is then uncertain); the cut is held, then
// ends, and the rest of the program and the drain run: every send counted, both subscriptions
// drained.
func TestRunToleratesWhatACutFails(t *testing.T) {
	res, err, _ := runSettling(t, "send(0) send(0) send(0) receive(0,long) receive(0,long) receive(0,long) ack(0,0) nack(0,0) subscribe(t0,earliest,shared) close(0) send(1)",
		"cut(long)@6", false, nil)
	if err != nil {
		t.Fatalf("run under a cut: %v", err)
	}
	tolerated := strings.Join(res.Tolerated, "\n")
	for _, want := range []string{"ack on t0/s0: ", "nack on t0/s0: ", "consumer on t0/s2: ", "close on t0/s0: "} {
		if !strings.Contains(tolerated, want) {
			t.Errorf("tolerated lacks %q:\n%s", want, tolerated)
		}
	}
	if !res.UncertainSubs["t0/s2"] {
		t.Errorf("the subscription whose Consumer call failed is not uncertain: %v", res.UncertainSubs)
	}
	if res.Sent != 4 || len(res.Outcome) < 2 {
		t.Errorf("sent %d (want 4: the last send after the cut), outcome %v", res.Sent, res.Outcome)
	}
	timeline := strings.Join(res.Timeline, "\n")
	if !strings.Contains(timeline, "cut(long)@6 started (400ms)") || !strings.Contains(timeline, "cut(long)@6 ended (ok)") || !strings.Contains(timeline, "drain starts") {
		t.Errorf("timeline:\n%s", timeline)
	}
}

// Without a schedule nothing is tolerated, whatever Nemesis the configuration carries: a
// failed Ack is the run's error. A schedule without a nemesis runs as no schedule.
func TestRunWithoutScheduleToleratesNothing(t *testing.T) {
	_, err, _ := runSettling(t, "send(0) receive(0,long) ack(0,0)", "", false, func(c *Config) {
		c.Nemesis = memoryNemesis(memory.NewBroker())
	})
	if err != nil {
		t.Fatalf("a run without faults: %v", err)
	}
	p, _ := ParseProgram("send(0) receive(0,long) ack(0,0)")
	mbr := memory.NewBroker()
	mb, _ := mbr.Open(context.Background(), backends.Config{Backend: memory.Name})
	defer mb.Close(context.Background())
	down := &atomic.Bool{}
	down.Store(true)
	rec := history.NewRecorder()
	cfg := ReferenceConfig("nosched")
	cfg.Nemesis = memoryNemesis(mbr)
	_, err = Run(context.Background(), history.Wrap(newSettling(mb, down, false), rec, "workload"), rec, p, cfg)
	if err == nil || !strings.Contains(err.Error(), "Ack") {
		t.Errorf("an Ack that failed without a schedule: %v, want the run's error", err)
	}
	s, _ := ParseSchedule("cut(long)@1")
	cfg = ReferenceConfig("nonem")
	cfg.Schedule = s
	rec = history.NewRecorder()
	down.Store(false)
	if _, err := Run(context.Background(), history.Wrap(newSettling(mb, down, false), rec, "workload"), rec, p, cfg); err != nil {
		t.Errorf("a schedule without a nemesis: %v", err)
	}
}

// A settle the backend refuses because the subscription's members changed since the delivery
// (a consumer joined, or another closed) is allowed (C-ACK-8), not the run's error; refused
// with no such change, it is.
func TestRunAllowsSettlesRefusedAfterMembersChanged(t *testing.T) {
	for _, prog := range []string{
		"send(0) receive(0,long) join(0) ack(0,0)",           // a member joined t0/s0
		"join(0) send(0) receive(0,long) close(2) nack(0,0)", // the joined member left
	} {
		res, err, _ := runSettling(t, prog, "", true, nil)
		if err != nil {
			t.Errorf("%s: %v", prog, err)
		}
		if len(res.Findings) > 0 {
			t.Errorf("%s: %s", prog, history.Report(time.Now(), res.Findings, 3))
		}
	}
	// Refused without a change of members: the backend's defect, the run's error.
	p, _ := ParseProgram("send(0) receive(0,long) ack(0,0)")
	mbr := memory.NewBroker()
	mb, _ := mbr.Open(context.Background(), backends.Config{Backend: memory.Name})
	defer mb.Close(context.Background())
	st := newSettling(mb, &atomic.Bool{}, true)
	rec := history.NewRecorder()
	b := history.Wrap(&refuseAll{st}, rec, "workload")
	if _, err := Run(context.Background(), b, rec, p, ReferenceConfig("refused")); err == nil || !errors.Is(err, backends.ErrUnknownDelivery) {
		t.Errorf("a refused Ack with nothing to allow it: %v", err)
	}
}

// refuseAll refuses every Ack.
type refuseAll struct{ *settling }

func (r *refuseAll) Consumer(ctx context.Context, topic, sub string, opts ...backends.ConsumerOption) (backends.Consumer, error) {
	c, err := r.settling.Consumer(ctx, topic, sub, opts...)
	if err != nil {
		return c, err
	}
	return refusingConsumer{c}, nil
}

type refusingConsumer struct{ backends.Consumer }

func (refusingConsumer) Ack(context.Context, backends.Delivery) error {
	return fmt.Errorf("ack: %w", backends.ErrUnknownDelivery)
}

// A nacked message that comes again to another consumer of the same subscription came again:
// it is not awaited by the one that nacked it.
func TestRunNackRedeliveredToAnotherMember(t *testing.T) {
	res, err, _ := runSettling(t, "join(0) send(0) receive(0,long) nack(0,0) receive(2,long) ack(2,0)", "", false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Findings) > 0 {
		t.Errorf("%s", history.Report(time.Now(), res.Findings, 3))
	}
}

// Unique subscribers are counted from 1 (t0/s2#1, #2); SharedOnly makes them shared; an Ack or
// Nack step goes to a consumer that holds something; every send is counted.
func TestRunLabelsAndTargets(t *testing.T) {
	prog := "subscribe(t0,earliest,unique) join(2) send(0) send(0) receive(1,long) nack(0,0)"
	res, err, ops := runSettling(t, prog, "", false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(ops, func(op history.Op) bool { return op.Kind == history.Nack }) {
		t.Error("nack(0,0) nacked nothing: it goes to the first consumer holding a delivery")
	}
	var labels []string
	for l := range res.Outcome {
		labels = append(labels, l)
	}
	slices.Sort(labels)
	if got := strings.Join(labels, " "); got != "t0/s0 t0/s1 t0/s2#1 t0/s2#2" || res.Sent != 2 {
		t.Errorf("labels %q (sent %d), want t0/s0 t0/s1 t0/s2#1 t0/s2#2 and 2", got, res.Sent)
	}
	shared, err, _ := runSettling(t, prog, "", false, func(c *Config) { c.SharedOnly = true })
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := shared.Outcome["t0/s2"]; !ok {
		t.Errorf("SharedOnly: outcome %v, want t0/s2 shared", shared.Outcome)
	}
}

// A nemesis can make a fault when it has what starts it and what ends it: cut, latency, reset
// and limit need Heal, pause needs Resume, restart and kill need only their own.
func TestNemesisCan(t *testing.T) {
	f := func(context.Context) error { return nil }
	lat := func(context.Context, time.Duration) error { return nil }
	open := func(context.Context) (backends.Backend, error) { return nil, nil }
	for _, c := range []struct {
		n    Nemesis
		want []Fault
	}{
		{Nemesis{}, nil},
		{Nemesis{Cut: f, Latency: lat, ResetPeer: f, LimitData: f}, nil},
		{Nemesis{Heal: f}, nil},
		{Nemesis{Heal: f, Cut: f}, []Fault{FaultCut}},
		{Nemesis{Heal: f, Latency: lat}, []Fault{FaultLatency}},
		{Nemesis{Heal: f, ResetPeer: f, LimitData: f}, []Fault{FaultReset, FaultLimit}},
		{Nemesis{Pause: f}, nil},
		{Nemesis{Resume: f}, nil},
		{Nemesis{Pause: f, Resume: f}, []Fault{FaultPause}},
		{Nemesis{Restart: f, Open: open}, []Fault{FaultRestart, FaultKill}},
	} {
		if got := c.n.Can(); !slices.Equal(got, c.want) {
			t.Errorf("Can() = %v, want %v", got, c.want)
		}
	}
}

// The kill: a consumer of a shared subscription on a client of its own receives up to two
// messages, acks the first, holds the second, and its client dies; the timeline says so.
func TestNemesisKillVictim(t *testing.T) {
	res, err, ops := runSettling(t, "send(0) send(0) send(0) receive(1,long)", "kill(0)@3", false, nil)
	if err != nil {
		t.Fatal(err)
	}
	timeline := strings.Join(res.Timeline, "\n")
	if !strings.Contains(timeline, "kill(0): the victim on t0/s0 received 2, acked the first, killed") {
		t.Errorf("timeline:\n%s", timeline)
	}
	var victim []string
	for _, op := range ops {
		if strings.HasPrefix(op.Client, "memory#") && op.Client != ops[0].Client && op.Kind != history.Open {
			victim = append(victim, string(op.Kind))
		}
	}
	if got := strings.Join(victim, " "); got != "Consumer Receive Ack Receive Kill" {
		t.Errorf("the victim's calls %q, want Consumer Receive Ack Receive Kill", got)
	}
	if len(res.Findings) > 0 {
		t.Errorf("%s", history.Report(time.Now(), res.Findings, 3))
	}
}

// A fault's end gets time of its own (a heal may take a while), whatever the run's context
// has left; and after the run the nemesis heals once more, so a fault whose end failed is not
// left behind.
func TestNemesisEndsItsFaults(t *testing.T) {
	p, _ := ParseProgram("send(0) receive(0,long) send(0)")
	s, _ := ParseSchedule("cut(short)@1")
	br := memory.NewBroker()
	mb, _ := br.Open(context.Background(), backends.Config{Backend: memory.Name})
	defer mb.Close(context.Background())
	n := memoryNemesis(br)
	heals := 0
	var deadlines []time.Duration
	n.Heal = func(ctx context.Context) error {
		heals++
		if d, ok := ctx.Deadline(); ok {
			deadlines = append(deadlines, time.Until(d))
		}
		if heals == 1 {
			return errors.New("heal: the proxy did not answer")
		}
		br.SetUnreachable(false)
		return nil
	}
	cfg := ReferenceConfig("heal")
	cfg.Nemesis, cfg.Schedule = n, s
	rec := history.NewRecorder()
	_, err := Run(context.Background(), history.Wrap(mb, rec, "workload"), rec, p, cfg)
	if err == nil || !strings.Contains(err.Error(), "nemesis: end cut(short)@1: heal: the proxy did not answer") {
		t.Errorf("a failed heal: %v, want the run's error naming it", err)
	}
	if heals != 2 || len(deadlines) != 2 || deadlines[0] < time.Minute {
		t.Errorf("heals %d, deadlines %v: want the fault's end with minutes to go, then the heal after the run", heals, deadlines)
	}
	if _, err := mb.TopicExists(context.Background(), "flow:tg:x"); err != nil {
		t.Errorf("the broker is left cut after the run: %v", err)
	}
}

// A run's error names the step, by number and text, or the drain, with the call that failed.
func TestRunErrorNamesStepAndDrain(t *testing.T) {
	run := func(prog string) error {
		p, _ := ParseProgram(prog)
		mbr := memory.NewBroker()
		mb, _ := mbr.Open(context.Background(), backends.Config{Backend: memory.Name})
		defer mb.Close(context.Background())
		rec := history.NewRecorder()
		runs++
		_, err := Run(context.Background(), history.Wrap(&refuseAll{newSettling(mb, &atomic.Bool{}, false)}, rec, "workload"), rec, p, ReferenceConfig(fmt.Sprintf("e%d", runs)))
		return err
	}
	err := run("send(0) receive(0,long) ack(0,0)")
	if err == nil || !strings.HasPrefix(err.Error(), "step 3 ack(0,0): ") || FailureOf(err, nil) != (Failure{Step: "ack", Call: "Ack", Class: "ErrUnknownDelivery"}) {
		t.Errorf("a refused Ack at step 3: %v (%s)", err, FailureOf(err, nil))
	}
	if err := run("send(0)"); err == nil || FailureOf(err, nil) != (Failure{Step: "drain", Call: "Ack", Class: "ErrUnknownDelivery"}) {
		t.Errorf("a refused Ack in the drain: %v (%s)", err, FailureOf(err, nil))
	}
}

// Parse errors say where: the fault of a schedule by number, the line of a corpus entry.
func TestParseErrorsSayWhere(t *testing.T) {
	if _, err := ParseSchedule("cut(long)@0 cut(medium)@1"); err == nil || !strings.HasPrefix(err.Error(), `fault 2 "cut(medium)@1": `) {
		t.Errorf("a bad fault: %v", err)
	}
	if _, err := ParseSchedule("cut(long)@3 cut(long)@1"); err == nil || err.Error() != `fault 2 "cut(long)@1" starts before the fault ahead of it` {
		t.Errorf("faults out of order: %v", err)
	}
	ok := "workload: W1\nseed: 7\nprogram: send(0)\nfailed: 2026-12-03 kafka: lost\nstatus: open\n"
	if _, err := ParseEntry("w1-7.txt", ok+"\nfixed: yes\n"); err == nil || !strings.Contains(err.Error(), "w1-7.txt line 7: ") {
		t.Errorf("an unknown key on line 7: %v", err)
	}
}
