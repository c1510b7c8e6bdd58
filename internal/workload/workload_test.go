package workload

import (
	"context"
	"flag"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/pubsub-conformance/harness/backends"
	"github.com/pubsub-conformance/harness/backends/memory"
	"github.com/pubsub-conformance/harness/backends/mutants"
	"github.com/pubsub-conformance/harness/internal/history"
)

// weighted: sends and receives more often than the rest, so messages flow.
var weighted = []Op{Send, Send, Send, Receive, Receive, Receive, Ack, Ack, Nack, Close, Join}

var genStep = rapid.Custom(func(t *rapid.T) Step {
	return Step{Op: rapid.SampledFrom(weighted).Draw(t, "op"), Arg: rapid.IntRange(0, 3).Draw(t, "arg")}
})

var genProgram = rapid.Custom(func(t *rapid.T) Program {
	return Program(rapid.SliceOfN(genStep, 5, 60).Draw(t, "steps"))
})

// open returns a recorded client of a fresh reference broker, decorated by variant when set.
func open(t testing.TB, variant string) (backends.Backend, *history.Recorder) {
	t.Helper()
	b, err := memory.NewBroker().Open(context.Background(), backends.Config{Backend: memory.Name})
	if err != nil {
		t.Fatal(err)
	}
	var be backends.Backend = b
	if variant != "" {
		v, ok := mutants.LookupFor(memory.Name, variant)
		if !ok || v.Wrap == nil {
			t.Fatalf("no decorating variant %q of memory", variant)
		}
		be = v.Wrap(be)
	}
	rec := history.NewRecorder()
	return history.Wrap(be, rec, "workload"), rec
}

// TestReferenceHasNoAnomalies: every program on the reference backend gives a history the
// checkers find nothing in. A failure prints rapid's seed and the shrunk program.
func TestReferenceHasNoAnomalies(t *testing.T) {
	checks := "60" // about 14 s on the reference, mostly Receives waiting out their bounds
	if testing.Short() {
		checks = "25"
	}
	if f := flag.Lookup("rapid.checks"); f != nil && f.Value.String() == f.DefValue {
		_ = flag.Set("rapid.checks", checks) // an explicit -rapid.checks wins
	}
	rapid.Check(t, func(rt *rapid.T) {
		prog := genProgram.Draw(rt, "program")
		b, rec := open(t, "")
		defer b.Close(context.Background())
		fs, err := Run(context.Background(), b, rec, prog)
		if err != nil {
			rt.Fatalf("program %s: %v", prog, err)
		}
		if len(fs) > 0 {
			rt.Fatalf("program %s:\n%s", prog, history.Report(rec.Started(), fs, 3))
		}
	})
}

// TestWorkloadFindsKnownBadVariants: generated programs, checked by the history checkers, find
// the defect of reference variants no program was written for.
func TestWorkloadFindsKnownBadVariants(t *testing.T) {
	for variant, want := range map[string][]history.Anomaly{
		"duplicates": {history.Duplicate, history.AckedRedelivered}, // which one: whether the first copy was acked
		"ack-noop":   {history.AckedRedelivered},
	} {
		t.Run(variant, func(t *testing.T) {
			for seed := range 50 {
				prog := genProgram.Example(seed)
				b, rec := open(t, variant)
				fs, err := Run(context.Background(), b, rec, prog)
				_ = b.Close(context.Background())
				if err != nil {
					t.Fatalf("program %s: %v", prog, err)
				}
				for _, f := range fs {
					if slices.Contains(want, f.Anomaly) {
						t.Logf("example %d, program %s, found: %s", seed, prog, f)
						return
					}
				}
			}
			t.Errorf("50 generated programs found none of %q on memory~%s", want, variant)
		})
	}
}
