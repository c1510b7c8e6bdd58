package workload

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pubsub-conformance/harness/backends"
	"github.com/pubsub-conformance/harness/backends/memory"
	"github.com/pubsub-conformance/harness/internal/history"
)

// memoryNemesis is the reference's stand-in for the fixtures: its cut and latency switches,
// its restart and killable clients (no reset, limit or pause: the reference has no
// connections or process of its own).
func memoryNemesis(br *memory.Broker) *Nemesis {
	return &Nemesis{
		Cut:     func(context.Context) error { br.SetUnreachable(true); return nil },
		Heal:    func(context.Context) error { br.SetUnreachable(false); br.SetLatency(0); return nil },
		Latency: func(_ context.Context, d time.Duration) error { br.SetLatency(d); return nil },
		Restart: func(context.Context) error { br.Restart(); return nil },
		Open: func(ctx context.Context) (backends.Backend, error) {
			return br.Open(ctx, backends.Config{Backend: memory.Name})
		},
		Short: 20 * time.Millisecond, Long: 60 * time.Millisecond, Delay: 5 * time.Millisecond,
	}
}

func runUnder(t *testing.T, prog Program, sched Schedule) (Result, Result) {
	t.Helper()
	br, b, rec, cfg := onReference(t, "n")
	cfg.Nemesis, cfg.Schedule = memoryNemesis(br), sched
	got, err := Run(context.Background(), history.Wrap(b, rec, "workload"), rec, prog, cfg)
	if err != nil {
		t.Fatalf("program %s under %s: %v", prog, sched, err)
	}
	ref := runOn(t, "", prog)
	return got, ref
}

// The schedule of a seed is the same everywhere, draws only what the nemesis can do, and is
// ordered by the step it starts before.
func TestGenerateSchedule(t *testing.T) {
	can := memoryNemesis(memory.NewBroker()).Can()
	if want := []Fault{FaultCut, FaultLatency, FaultRestart, FaultKill}; !slices.Equal(can, want) {
		t.Fatalf("Can() = %v, want %v", can, want)
	}
	longs, shorts := 0, 0
	for seed := range 50 {
		s := GenerateSchedule(seed, 30, can)
		if s.String() != GenerateSchedule(seed, 30, can).String() {
			t.Fatalf("seed %d: two schedules", seed)
		}
		if len(s) < 2 || len(s) > 3 {
			t.Fatalf("seed %d: %d faults", seed, len(s))
		}
		for i, f := range s {
			if !slices.Contains(can, f.Fault) || f.Before < 0 || f.Before > 30 || (i > 0 && s[i-1].Before > f.Before) {
				t.Fatalf("seed %d: schedule %s", seed, s)
			}
			if f.Long {
				longs++
			} else {
				shorts++
			}
		}
	}
	if longs == 0 || shorts == 0 {
		t.Fatalf("50 schedules: %d long and %d short faults, want both", longs, shorts)
	}
	if GenerateSchedule(1, 30, nil) != nil {
		t.Fatal("a nemesis that can do nothing got a schedule")
	}
}

// Programs under the reference's faults show no anomaly with the faults' allowances and end
// as the fault-free reference does on the same program, less the uncertain sends.
func TestNemesisOnReference(t *testing.T) {
	can := memoryNemesis(memory.NewBroker()).Can()
	cut := 0
	for seed := range 12 {
		prog := Generate(seed, 15, 30)
		sched := GenerateSchedule(seed, len(prog), can)
		got, ref := runUnder(t, prog, sched)
		if len(got.Findings) > 0 {
			t.Fatalf("seed %d %s under %s: %s", seed, prog, sched, history.Report(time.Now(), got.Findings, 3))
		}
		if fs := CompareUnderFaults(ref.Outcome, got, fmt.Sprintf("w%d", runs), fmt.Sprintf("n%d", runs-1)); len(fs) > 0 {
			t.Fatalf("seed %d %s under %s: %s", seed, prog, sched, history.Report(time.Now(), fs, 3))
		}
		if len(got.Timeline) < len(sched) {
			t.Fatalf("seed %d: timeline %q for %s", seed, got.Timeline, sched)
		}
		if strings.Contains(sched.String(), "cut") {
			cut++
		}
	}
	if cut == 0 {
		t.Fatal("no schedule of 12 had a cut")
	}
}

// A cut makes the sends during it fail on the reference: they are uncertain, not lost.
func TestNemesisCutSendsUncertain(t *testing.T) {
	prog := Program{{Op: Send}, {Op: Send, Arg: 1}, {Op: Receive, Pick: 1}, {Op: Send}}
	got, ref := runUnder(t, prog, Schedule{{Before: 1, Fault: FaultCut, Long: true}})
	if len(got.Uncertain) == 0 || len(got.Tolerated) == 0 {
		t.Fatalf("no send failed during the cut: uncertain %v, tolerated %v, timeline %v", got.Uncertain, got.Tolerated, got.Timeline)
	}
	if len(got.Findings) > 0 {
		t.Fatal(history.Report(time.Now(), got.Findings, 3))
	}
	if fs := CompareUnderFaults(ref.Outcome, got, fmt.Sprintf("w%d", runs), fmt.Sprintf("n%d", runs-1)); len(fs) > 0 {
		t.Fatal(history.Report(time.Now(), fs, 3))
	}
	// Without the allowance the same outcome differs from the reference.
	if fs := Compare(ref.Outcome, got.Outcome, fmt.Sprintf("w%d", runs), fmt.Sprintf("n%d", runs-1)); len(fs) == 0 {
		t.Fatal("the failed sends are not missing without the allowance: the test proves nothing")
	}
}

// Only what keeps the broker out of reach longer than a session is an outage for the checker's
// C-ACK-6 allowance: a short fault or added latency leaves every session in place.
func TestOutageFaults(t *testing.T) {
	for _, c := range []struct {
		f    FaultStep
		want bool
	}{
		{FaultStep{Fault: FaultCut, Long: true}, true}, {FaultStep{Fault: FaultCut}, false},
		{FaultStep{Fault: FaultReset, Long: true}, true}, {FaultStep{Fault: FaultReset}, false},
		{FaultStep{Fault: FaultLimit, Long: true}, true}, {FaultStep{Fault: FaultLimit}, false},
		{FaultStep{Fault: FaultPause, Long: true}, true}, {FaultStep{Fault: FaultPause}, false},
		{FaultStep{Fault: FaultRestart}, true},
		{FaultStep{Fault: FaultLatency, Long: true}, false}, {FaultStep{Fault: FaultKill}, false},
	} {
		if got := outage(c.f); got != c.want {
			t.Errorf("outage(%s) = %v, want %v", c.f, got, c.want)
		}
	}
}
