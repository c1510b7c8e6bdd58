package workload

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"pgregory.net/rapid"

	"github.com/pubsub-conformance/harness/backends"
	"github.com/pubsub-conformance/harness/internal/history"
)

// Fault is one kind of fault the nemesis makes (W2): each is something the fixtures can do to
// a private broker behind the fault proxy.
type Fault int

// The faults.
const (
	FaultCut     Fault = iota // every client connection closed, new ones refused, for the fault's duration
	FaultLatency              // Nemesis.Delay each way on every connection
	FaultReset                // every connection reset when the broker's next answer comes (reset_peer): served, not answered
	FaultLimit                // every connection closed after a few more bytes of answers (limit_data): answers cut off
	FaultPause                // the broker's process stopped (SIGSTOP), then continued (SIGCONT)
	FaultRestart              // the broker restarted (graceful stop, start on the same data and ports)
	FaultKill                 // a new consumer's client receives, acks one delivery, holds another and is killed (no Close)
	numFaults
)

var faultNames = [...]string{"cut", "latency", "reset", "limit", "pause", "restart", "kill"}

func (f Fault) String() string { return faultNames[f] }

// FaultStep is one fault of a schedule: it starts before program step Before (Before >= the
// program's length: before the drain) and lasts Nemesis.Short or Nemesis.Long (restart and
// kill: as long as they take).
type FaultStep struct {
	Before int
	Fault  Fault
	Long   bool
	Arg    int // kill: which subscription's consumer (modulo the shared ones)
}

func (f FaultStep) String() string {
	switch f.Fault {
	case FaultRestart:
		return fmt.Sprintf("%s@%d", f.Fault, f.Before)
	case FaultKill:
		return fmt.Sprintf("%s(%d)@%d", f.Fault, f.Arg, f.Before)
	}
	d := "short"
	if f.Long {
		d = "long"
	}
	return fmt.Sprintf("%s(%s)@%d", f.Fault, d, f.Before)
}

// Schedule is a nemesis schedule, in the order of Before.
type Schedule []FaultStep

func (s Schedule) String() string {
	parts := make([]string, len(s))
	for i, f := range s {
		parts[i] = f.String()
	}
	return strings.Join(parts, " ")
}

// Nemesis is what the fixtures can do to the broker of a run; a nil function is a fault it
// cannot make (Can leaves it out). Heal ends a cut, a latency, a reset and a limit.
type Nemesis struct {
	Cut, Heal func(context.Context) error
	Latency   func(context.Context, time.Duration) error
	ResetPeer func(context.Context) error
	LimitData func(context.Context) error
	Pause     func(context.Context) error
	Resume    func(context.Context) error
	Restart   func(context.Context) error
	// Open returns a new client on the broker for FaultKill; it must implement backends.Killer.
	Open func(context.Context) (backends.Backend, error)
	// Short and Long are the durations of a fault: shorter and longer than the clients'
	// session and heartbeat timeouts (a broker gone longer than the group session expires
	// every member). Delay is FaultLatency's latency each way.
	Short, Long, Delay time.Duration
}

// Can lists the faults n can make.
func (n *Nemesis) Can() []Fault {
	var out []Fault
	heal := n.Heal != nil
	for f, ok := range map[Fault]bool{
		FaultCut: heal && n.Cut != nil, FaultLatency: heal && n.Latency != nil, FaultReset: heal && n.ResetPeer != nil,
		FaultLimit: heal && n.LimitData != nil, FaultPause: n.Pause != nil && n.Resume != nil,
		FaultRestart: n.Restart != nil, FaultKill: n.Open != nil,
	} {
		if ok {
			out = append(out, f)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// GenSchedule draws schedules of 2 to 3 faults among can over a program of steps steps.
func GenSchedule(steps int, can []Fault) *rapid.Generator[Schedule] {
	return rapid.Custom(func(t *rapid.T) Schedule {
		if len(can) == 0 {
			return nil
		}
		n := rapid.IntRange(2, 3).Draw(t, "faults")
		s := make(Schedule, n)
		for i := range s {
			s[i] = FaultStep{
				Before: rapid.IntRange(0, steps).Draw(t, "before"),
				Fault:  rapid.SampledFrom(can).Draw(t, "fault"),
				Long:   rapid.Bool().Draw(t, "long"),
				Arg:    rapid.IntRange(0, 7).Draw(t, "arg"),
			}
		}
		sort.SliceStable(s, func(i, j int) bool { return s[i].Before < s[j].Before })
		return s
	})
}

// GenerateSchedule is the schedule of a seed for a program of steps steps.
func GenerateSchedule(seed, steps int, can []Fault) Schedule {
	if len(can) == 0 {
		return nil
	}
	return GenSchedule(steps, can).Example(seed)
}

// nemesisRun is the nemesis of one run: one fault at a time, each ended (healed, resumed,
// restart returned) before the next starts and before the drain.
type nemesisRun struct {
	n       *Nemesis
	start   time.Time
	mu      sync.Mutex
	lines   []string
	pending <-chan error // the running fault's end, nil when none runs
	// outages are the faults that kept the broker out of reach longer than a session (see
	// outage), for the history checker's C-ACK-6 allowance (history.Policy.Outages).
	outages []history.Window
}

// outage reports whether f keeps the broker out of reach for longer than a client session:
// a long cut, reset, limit or pause, and a restart (as long as it takes). Latency keeps it
// reachable; a kill is a consumer's crash, which the checker knows from the history.
func outage(f FaultStep) bool {
	switch f.Fault {
	case FaultRestart:
		return true
	case FaultCut, FaultReset, FaultLimit, FaultPause:
		return f.Long
	}
	return false
}

func (nr *nemesisRun) log(format string, args ...any) {
	nr.mu.Lock()
	defer nr.mu.Unlock()
	nr.lines = append(nr.lines, fmt.Sprintf("+%7.3fs %s", time.Since(nr.start).Seconds(), fmt.Sprintf(format, args...)))
}

// wait ends the running fault: it waits for its end (bounded by ctx) and returns its error.
func (nr *nemesisRun) wait(ctx context.Context) error {
	if nr.pending == nil {
		return nil
	}
	select {
	case err := <-nr.pending:
		nr.pending = nil
		return err
	case <-ctx.Done():
		return fmt.Errorf("nemesis: the running fault did not end: %w", ctx.Err())
	}
}

// hold runs end after d (or at once when ctx ends) on its own goroutine; wait returns its error.
func (nr *nemesisRun) hold(ctx context.Context, f FaultStep, d time.Duration, end func(context.Context) error) {
	done := make(chan error, 1)
	nr.pending = done
	started := time.Now()
	go func() {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
		}
		ectx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
		defer cancel()
		err := end(ectx)
		if outage(f) {
			nr.mu.Lock()
			nr.outages = append(nr.outages, history.Window{Start: started, End: time.Now()})
			nr.mu.Unlock()
		}
		nr.log("%s ended (%v)", f, errOK(err))
		if err != nil {
			err = fmt.Errorf("nemesis: end %s: %w", f, err)
		}
		done <- err
	}()
}

func errOK(err error) string {
	if err == nil {
		return "ok"
	}
	return err.Error()
}

// fault starts f after the running fault ended. Kill runs at once, to its end.
func (r *run) fault(f FaultStep) error {
	nr := r.nem
	if err := nr.wait(r.ctx); err != nil {
		return err
	}
	d := nr.n.Short
	if f.Long {
		d = nr.n.Long
	}
	ctx, cancel := r.call()
	defer cancel()
	var err error
	switch f.Fault {
	case FaultCut:
		err = nr.n.Cut(ctx)
		if err == nil {
			nr.hold(r.ctx, f, d, nr.n.Heal)
		}
	case FaultLatency:
		err = nr.n.Latency(ctx, nr.n.Delay)
		if err == nil {
			nr.hold(r.ctx, f, d, nr.n.Heal)
		}
	case FaultReset:
		err = nr.n.ResetPeer(ctx)
		if err == nil {
			nr.hold(r.ctx, f, d, nr.n.Heal)
		}
	case FaultLimit:
		err = nr.n.LimitData(ctx)
		if err == nil {
			nr.hold(r.ctx, f, d, nr.n.Heal)
		}
	case FaultPause:
		err = nr.n.Pause(ctx)
		if err == nil {
			nr.hold(r.ctx, f, d, nr.n.Resume)
		}
	case FaultRestart:
		nr.hold(r.ctx, f, 0, nr.n.Restart)
	case FaultKill:
		nr.log("%s started", f)
		return r.kill(f)
	}
	if err != nil {
		return fmt.Errorf("nemesis: start %s: %w", f, err)
	}
	nr.log("%s started (%s)", f, d)
	return nil
}

// kill is FaultKill: a consumer of a shared subscription on a client of its own receives up to
// two messages, acks the first, holds the second, and its client is killed.
func (r *run) kill(f FaultStep) error {
	var shared []*subscription
	for _, s := range r.subs {
		if s.mode == backends.Shared && !r.uncertainSubs[s.label] {
			shared = append(shared, s)
		}
	}
	if len(shared) == 0 {
		return nil
	}
	s := shared[f.Arg%len(shared)]
	ctx, cancel := r.call()
	kb, err := r.nem.n.Open(ctx)
	cancel()
	if err != nil {
		r.tolerate(fmt.Errorf("kill: open the victim's client: %w", err))
		return nil
	}
	kb = history.Wrap(kb, r.rec, "the consumer the nemesis kills")
	k, ok := kb.(backends.Killer)
	if !ok {
		ctx, cancel := r.call()
		_ = kb.Close(ctx)
		cancel()
		return fmt.Errorf("nemesis: kill: the client has no Kill")
	}
	defer k.Kill()
	opts := []backends.ConsumerOption{backends.WithPosition(s.pos)}
	if r.unique {
		opts = append(opts, backends.WithMode(s.mode))
	}
	ctx, cancel = r.call()
	c, err := kb.Consumer(ctx, r.topics[s.topic], s.name, opts...)
	cancel()
	if err != nil {
		r.tolerate(fmt.Errorf("kill: the victim's consumer on %s: %w", s.label, err))
		return nil
	}
	// The victim joins, and leaves when its client is killed.
	s.changed(time.Now(), r.openOn(s) > 0)
	s.changed(time.Now(), r.openOn(s) > 0)
	victim := newMember(c, s, s.label)
	for i := range 2 {
		ok, err := r.receive(victim, r.cfg.LongReceive)
		if err != nil || !ok {
			r.tolerate(err)
			break
		}
		if i == 0 {
			ctx, cancel := r.call()
			r.tolerate(victim.c.Ack(ctx, victim.held[0]))
			cancel()
		}
	}
	acked := "nothing to ack"
	if len(victim.held) > 0 {
		acked = "acked the first"
	}
	r.nem.log("kill(%d): the victim on %s received %d, %s, killed", f.Arg, s.label, len(victim.held), acked)
	return nil
}

// tolerate counts an error a call may return under faults (nil: nothing).
func (r *run) tolerate(err error) {
	if err == nil || errors.Is(err, backends.ErrTimeout) || errors.Is(err, context.DeadlineExceeded) {
		return
	}
	r.tolerated = append(r.tolerated, err.Error())
}

// faulty reports whether calls may fail now (a schedule runs).
func (r *run) faulty() bool { return r.nem != nil }
