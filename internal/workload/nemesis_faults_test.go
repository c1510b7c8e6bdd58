package workload

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pubsub-conformance/harness/backends"
	"github.com/pubsub-conformance/harness/backends/memory"
	"github.com/pubsub-conformance/harness/internal/history"
)

// callLog is the order in which a nemesis's functions were called.
type callLog struct {
	mu    sync.Mutex
	calls []string
}

func (l *callLog) add(s string) {
	l.mu.Lock()
	l.calls = append(l.calls, s)
	l.mu.Unlock()
}

func (l *callLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.calls, " ")
}

// loggingNemesis is the reference's nemesis with every fault the fixtures make, each call
// logged: reset, limit and pause are only logged (the reference has no connections or process
// to do them to).
func loggingNemesis(br *memory.Broker, l *callLog) *Nemesis {
	n := memoryNemesis(br)
	cut, heal, lat, restart := n.Cut, n.Heal, n.Latency, n.Restart
	n.Cut = func(ctx context.Context) error { l.add("Cut"); return cut(ctx) }
	n.Heal = func(ctx context.Context) error { l.add("Heal"); return heal(ctx) }
	n.Latency = func(ctx context.Context, d time.Duration) error {
		l.add("Latency(" + d.String() + ")")
		return lat(ctx, d)
	}
	n.Restart = func(ctx context.Context) error { l.add("Restart"); return restart(ctx) }
	n.ResetPeer = func(context.Context) error { l.add("ResetPeer"); return nil }
	n.LimitData = func(context.Context) error { l.add("LimitData"); return nil }
	n.Pause = func(context.Context) error { l.add("Pause"); return nil }
	n.Resume = func(context.Context) error { l.add("Resume"); return nil }
	return n
}

func runNemesis(t *testing.T, prog, sched string, n func(*memory.Broker) *Nemesis) (Result, error) {
	t.Helper()
	p, err := ParseProgram(prog)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ParseSchedule(sched)
	if err != nil {
		t.Fatal(err)
	}
	br, b, rec, cfg := onReference(t, "k")
	cfg.Nemesis, cfg.Schedule = n(br), s
	return Run(context.Background(), history.Wrap(b, rec, "workload"), rec, p, cfg)
}

// Every fault is started with its own call and ended with the call that ends its kind (Heal
// for cut, latency, reset and limit; Resume for pause; a restart is its own end), each ended
// before the next starts, all before the drain, and the nemesis heals once more after the run.
// A fault lasts the nemesis's Short or Long, as the schedule says.
func TestNemesisStartsAndEndsEachFault(t *testing.T) {
	l := &callLog{}
	res, err := runNemesis(t, "send(0) receive(0) send(1) receive(1) ack(0,0)",
		"latency(short)@0 reset(long)@1 limit(short)@1 pause(long)@2 restart@3 cut(short)@5",
		func(br *memory.Broker) *Nemesis { return loggingNemesis(br, l) })
	if err != nil {
		t.Fatal(err)
	}
	if got, want := l.String(), "Latency(5ms) Heal ResetPeer Heal LimitData Heal Pause Resume Restart Cut Heal Heal"; got != want {
		t.Errorf("the nemesis's calls:\n%s\nwant\n%s", got, want)
	}
	timeline := strings.Join(res.Timeline, "\n")
	for _, want := range []string{
		"latency(short)@0 started (20ms)", "latency(short)@0 ended (ok)",
		"reset(long)@1 started (60ms)", "reset(long)@1 ended (ok)",
		"limit(short)@1 started (20ms)", "pause(long)@2 started (60ms)", "pause(long)@2 ended (ok)",
		"restart@3 ended (ok)", "cut(short)@5 started (20ms)", "cut(short)@5 ended (ok)",
	} {
		if !strings.Contains(timeline, want) {
			t.Errorf("timeline lacks %q:\n%s", want, timeline)
		}
	}
	if i, j := strings.Index(timeline, "cut(short)@5 ended"), strings.Index(timeline, "drain starts"); i < 0 || j < i {
		t.Errorf("the last fault did not end before the drain:\n%s", timeline)
	}
}

// A fault the nemesis could not start is the run's error, naming the fault, and ends no
// fault that never began.
func TestNemesisStartFailureFailsTheRun(t *testing.T) {
	l := &callLog{}
	_, err := runNemesis(t, "send(0) receive(0)", "pause(short)@1", func(br *memory.Broker) *Nemesis {
		n := loggingNemesis(br, l)
		n.Pause = func(context.Context) error { l.add("Pause"); return errors.New("kill -STOP: no such process") }
		return n
	})
	if err == nil || !strings.Contains(err.Error(), "nemesis: start pause(short)@1: kill -STOP: no such process") {
		t.Errorf("a pause that failed to start: %v", err)
	}
	if got := l.String(); strings.Contains(got, "Resume") {
		t.Errorf("the nemesis's calls %q: a resume of a pause that never started", got)
	}
}

// The kill's victim joins a shared subscription, never a unique one: kill(2) with a unique
// third subscription picks among the two shared ones (2 mod 2: the first).
func TestNemesisKillsOnlyOnSharedSubscriptions(t *testing.T) {
	res, err := runNemesis(t, "subscribe(t0,earliest,unique) send(0) send(0)", "kill(2)@3", memoryNemesis)
	if err != nil {
		t.Fatal(err)
	}
	if timeline := strings.Join(res.Timeline, "\n"); !strings.Contains(timeline, "kill(2): the victim on t0/s0 received 2, acked the first, killed") {
		t.Errorf("timeline:\n%s", timeline)
	}
}

// A victim that got nothing acked nothing, and the timeline says so.
func TestNemesisKillVictimWithNothing(t *testing.T) {
	res, err := runNemesis(t, "receive(0)", "kill(0)@1", memoryNemesis)
	if err != nil {
		t.Fatal(err)
	}
	if timeline := strings.Join(res.Timeline, "\n"); !strings.Contains(timeline, "kill(0): the victim on t0/s0 received 0, nothing to ack, killed") {
		t.Errorf("timeline:\n%s", timeline)
	}
}

// killableSettling is a settling reference client that can be killed: the kill's victim,
// sharing the members' count with the run's own client.
type killableSettling struct {
	*settling
	k backends.Killer
}

func (k killableSettling) Kill() { k.k.Kill() }

// The victim's join and death change its shared subscription's members (C-ACK-8): a delivery
// held across the kill may be refused by the backend, and that refusal is the contract's
// allowance, not a call that failed under the faults.
func TestNemesisKillChangesTheMembers(t *testing.T) {
	p, _ := ParseProgram("send(0) send(0) receive(0,long) ack(0,0)")
	s, _ := ParseSchedule("kill(0)@3")
	br := memory.NewBroker()
	mb, _ := br.Open(context.Background(), backends.Config{Backend: memory.Name})
	defer mb.Close(context.Background())
	st := newSettling(mb, &atomic.Bool{}, true)
	n := memoryNemesis(br)
	n.Open = func(ctx context.Context) (backends.Backend, error) {
		vb, err := br.Open(ctx, backends.Config{Backend: memory.Name})
		if err != nil {
			return nil, err
		}
		v := *st
		v.Backend = vb
		return killableSettling{&v, vb}, nil
	}
	runs++
	cfg := ReferenceConfig(fmt.Sprintf("k%d", runs))
	cfg.Nemesis, cfg.Schedule = n, s
	rec := history.NewRecorder()
	res, err := Run(context.Background(), history.Wrap(st, rec, "workload"), rec, p, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !ackRefused(rec.Ops()) {
		t.Fatal("the held delivery's Ack was not refused after the kill: the test proves nothing")
	}
	if len(res.Tolerated) > 0 {
		t.Errorf("a settle refused after the members changed was counted as a failed call: %q", res.Tolerated)
	}
}

func ackRefused(ops []history.Op) bool {
	for _, op := range ops {
		if op.Kind == history.Ack && errors.Is(op.Err, backends.ErrUnknownDelivery) {
			return true
		}
	}
	return false
}
