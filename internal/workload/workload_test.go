package workload

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/pubsub-conformance/harness/backends"
	"github.com/pubsub-conformance/harness/backends/memory"
	"github.com/pubsub-conformance/harness/backends/mutants"
	"github.com/pubsub-conformance/harness/internal/history"
)

// open returns a recorded client of a fresh reference broker, decorated by variant when set
// (a variant of memory's own, or a contract decorator of backends/mutants whatever its bases).
func open(t testing.TB, variant string) (backends.Backend, *history.Recorder) {
	t.Helper()
	b, err := memory.NewBroker().Open(context.Background(), backends.Config{Backend: memory.Name})
	if err != nil {
		t.Fatal(err)
	}
	var be backends.Backend = b
	if variant != "" {
		v, ok := mutants.LookupFor(memory.Name, variant)
		if !ok {
			for _, c := range mutants.All() {
				if c.Name == variant {
					v, ok = c, true
				}
			}
		}
		if !ok || v.Wrap == nil {
			t.Fatalf("no decorating variant %q", variant)
		}
		be = v.Wrap(be)
	}
	rec := history.NewRecorder()
	return history.Wrap(be, rec, "workload"), rec
}

var runs int

// onReference opens a fresh in-process reference broker for one run of a test: the broker (for
// a nemesis over it), its backend (closed when the test ends), a recorder, and the reference
// configuration with a prefix of its own (tag and the run's number).
func onReference(t *testing.T, tag string) (*memory.Broker, backends.Backend, *history.Recorder, Config) {
	t.Helper()
	runs++
	br := memory.NewBroker()
	b, err := br.Open(context.Background(), backends.Config{Backend: memory.Name})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close(context.Background()) })
	return br, b, history.NewRecorder(), ReferenceConfig(fmt.Sprintf("%s%d", tag, runs))
}

func runOn(t testing.TB, variant string, prog Program) Result {
	t.Helper()
	runs++
	b, rec := open(t, variant)
	defer b.Close(context.Background())
	res, err := Run(context.Background(), b, rec, prog, ReferenceConfig(fmt.Sprintf("w%d", runs)))
	if err != nil {
		t.Fatalf("program %s: %v", prog, err)
	}
	return res
}

// TestReferenceHasNoAnomalies: every program on the reference backend gives a history the
// checkers find nothing in, and the same outcome twice. A failure prints rapid's seed and the
// program rapid shrank it to.
func TestReferenceHasNoAnomalies(t *testing.T) {
	checks := "25"
	if testing.Short() {
		checks = "15"
	}
	if f := flag.Lookup("rapid.checks"); f != nil && f.Value.String() == f.DefValue {
		_ = flag.Set("rapid.checks", checks) // an explicit -rapid.checks wins
	}
	rapid.Check(t, func(rt *rapid.T) {
		prog := Gen(5, 40).Draw(rt, "program")
		a, b := runOn(t, "", prog), runOn(t, "", prog)
		if len(a.Findings) > 0 {
			rt.Fatalf("program %s:\n%s", prog, history.Report(time.Now(), a.Findings, 3))
		}
		if d := Compare(a.Outcome, b.Outcome, fmt.Sprintf("w%d", runs-1), fmt.Sprintf("w%d", runs)); len(d) > 0 {
			rt.Fatalf("program %s: two reference runs differ: %v", prog, d)
		}
		if len(a.Outcome) < 2 {
			rt.Fatalf("program %s: only %d subscriptions drained", prog, len(a.Outcome))
		}
	})
}

// TestGenerateIsDeterministic: a seed names a program (the seed a failure prints reproduces it).
func TestGenerateIsDeterministic(t *testing.T) {
	if a, b := Generate(7, 10, 30), Generate(7, 10, 30); a.String() != b.String() || len(a) < 10 {
		t.Fatalf("seed 7 gave %s and %s", a, b)
	}
}

// TestShrink: delta debugging finds the minimal failing subsequence of a made-up predicate.
func TestShrink(t *testing.T) {
	prog := Generate(3, 30, 30)
	prog = append(prog, Step{Op: Nack, Arg: 5, Pick: 2})
	fails := func(p Program) bool {
		return slices.ContainsFunc(p, func(s Step) bool { return s.Op == Nack }) &&
			slices.ContainsFunc(p, func(s Step) bool { return s.Op == Receive })
	}
	got, tries := Shrink(prog, fails, time.Minute)
	if len(got) != 2 || !fails(got) {
		t.Fatalf("shrunk %d steps to %s in %d tries: want the 2 steps the predicate needs", len(prog), got, tries)
	}
	if got[1].Arg != 0 || got[1].Pick != 0 {
		t.Errorf("arguments not lowered: %s", got)
	}
}

// findAndShrink: generated programs on the variant must show one of want, and the shrunk
// program too; it returns the shrunk program.
func findAndShrink(t *testing.T, variant string, want []history.Anomaly) Program {
	t.Helper()
	for seed := range 60 {
		prog := Generate(seed, 10, 40)
		hit := func(p Program) bool {
			for _, f := range runOn(t, variant, p).Findings {
				if slices.Contains(want, f.Anomaly) {
					return true
				}
			}
			return false
		}
		if !hit(prog) {
			continue
		}
		small, tries := Shrink(prog, hit, 4*time.Second)
		t.Logf("seed %d: %d steps shrunk to %d in %d runs: %s", seed, len(prog), len(small), tries, small)
		return small
	}
	t.Fatalf("60 generated programs found none of %q on memory with %s", want, variant)
	return nil
}

// TestWorkloadFindsKnownBadVariants: generated programs, checked by the history checkers, find
// the defect of variants no program was written for, and shrink to a few steps.
func TestWorkloadFindsKnownBadVariants(t *testing.T) {
	for variant, want := range map[string][]history.Anomaly{
		"duplicates": {history.Duplicate, history.AckedRedelivered}, // which one: whether the first copy was acked
		"ack-noop":   {history.AckedRedelivered},
		"nack-noop":  {history.NackNotRedelivered},
		// The variants written for the workload (backends/mutants/workload.go).
		"interleaved-send-drops":    {history.Lost, Differs},
		"interleaved-send-reorders": {history.Reordered, history.Lost, Differs},
		"timeout-duplicates-next":   {history.Duplicate, history.AckedRedelivered},
		"nack-drops-held-acks":      {history.AckedRedelivered},
		"nack-while-holding-noop":   {history.NackNotRedelivered},
		"latest-beside-earliest":    {history.WrongSubscription, Differs},
		"short-receive-overruns":    {history.LateReturn},
	} {
		t.Run(variant, func(t *testing.T) {
			if testing.Short() && !slices.Contains([]string{"duplicates", "ack-noop", "interleaved-send-drops"}, variant) {
				t.Skip("-short: three variants only")
			}
			// Shrink keeps only candidates that still fail (hit), within its budget.
			if small := findAndShrink(t, variant, want); len(small) == 0 {
				t.Errorf("shrunk to an empty program")
			}
		})
	}
}

// TestSettleErrAllowances: a settle refused with ErrUnknownDelivery is allowed only where the
// contract allows it - the ID handed out twice, the message acked through another delivery
// (C-ACK-9), the members changed since the delivery (C-ACK-8) - and any other error stays one.
func TestSettleErrAllowances(t *testing.T) {
	unknown := fmt.Errorf("nack: %w", backends.ErrUnknownDelivery)
	d := backends.Delivery{ID: "c:2:0:0", Payload: []byte("w1-x-p1-m0")}
	fresh := func() *member { return newMember(nil, &subscription{mode: backends.Shared}, "s0") }
	cases := []struct {
		name        string
		prepare     func(m *member)
		err         error
		wantErr     bool
		wantRefused bool
	}{
		{"nil stays nil", func(*member) {}, nil, false, false},
		{"refusal with nothing to allow it", func(*member) {}, unknown, true, false},
		{"another error even after a change", func(m *member) { m.sub.changes++ }, backends.ErrTimeout, true, false},
		{"id handed out twice", func(m *member) { m.ids[d.ID] = 2 }, unknown, false, true},
		{"message acked through another delivery", func(m *member) { m.acked[history.KeyOf(d.Payload)] = true }, unknown, false, true},
		{"another message acked", func(m *member) { m.acked["w1-x-p1-m1"] = true }, unknown, true, false},
		{"members changed since the delivery", func(m *member) { m.sub.changes++ }, unknown, false, true},
		{"members changed long before the delivery", func(m *member) {
			m.sub.changed(time.Now().Add(-time.Minute), true)
			m.heldAt[d.ID] = m.sub.heldFrom(time.Now(), 30*time.Second)
		}, unknown, true, false},
		// A join's rebalance reaches the members at their next heartbeat: a delivery handed
		// out just after the join step may still move (seen on trustgraph-kafka-patched:
		// aiokafka's CommitFailedError for a message received after join(6), seed 1796414882).
		{"handed out while the change's rebalance may be under way", func(m *member) {
			m.sub.changed(time.Now().Add(-time.Second), true)
			m.heldAt[d.ID] = m.sub.heldFrom(time.Now(), 30*time.Second)
		}, unknown, false, true},
		{"a lone first member's join moves nothing", func(m *member) {
			m.sub.changed(time.Now(), false)
			m.heldAt[d.ID] = m.sub.heldFrom(time.Now(), 30*time.Second)
		}, unknown, true, false},
		{"unique subscriptions have no changes", func(m *member) {
			m.sub.mode = backends.Unique
			m.sub.changed(time.Now(), true)
			m.heldAt[d.ID] = m.sub.heldFrom(time.Now(), 30*time.Second)
		}, unknown, true, false},
	}
	for _, tc := range cases {
		m := fresh()
		tc.prepare(m)
		err, refused := m.settleErr(d, tc.err)
		if (err != nil) != tc.wantErr || refused != tc.wantRefused {
			t.Errorf("%s: settleErr = %v, refused %v; want error %v, refused %v", tc.name, err, refused, tc.wantErr, tc.wantRefused)
		}
	}
}
