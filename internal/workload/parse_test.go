package workload

import (
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// normal is what the printed form of a step keeps: the Pick only where the run reads it (a
// settle's whole, a receive's parity).
func normal(s Step) Step {
	switch s.Op {
	case Ack, Nack:
	case Receive:
		s.Pick %= 2
	default:
		s.Pick = 0
	}
	return s
}

// TestParseProgramRoundTrip: every drawn program parses back from its printed form to the
// program that runs the same (the same steps, less what no step of its kind reads) and prints
// the same.
func TestParseProgramRoundTrip(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		prog := Gen(0, 60).Draw(rt, "program")
		got, err := ParseProgram(prog.String())
		if err != nil {
			rt.Fatalf("%s: %v", prog, err)
		}
		if len(got) != len(prog) {
			rt.Fatalf("%s: parsed %d steps", prog, len(got))
		}
		for i := range prog {
			if got[i] != normal(prog[i]) {
				rt.Fatalf("step %d %s parsed as %#v, want %#v", i+1, prog[i], got[i], normal(prog[i]))
			}
		}
		if got.String() != prog.String() {
			rt.Fatalf("printed %q, parsed and printed %q", prog, got)
		}
	})
	// The shrunk program, as printed by a failure.
	const s = "send(1) receive(3,long) join(3) close(0) ack(7,0) nack(4,2) subscribe(t1,earliest,shared) subscribe(t0,latest,unique)"
	p, err := ParseProgram(s)
	if err != nil || p.String() != s {
		t.Fatalf("ParseProgram(%q) = %s, %v", s, p, err)
	}
	if want := (Step{Op: Subscribe, Arg: 0 + 2 + 4}); p[7] != want {
		t.Errorf("%s parsed as %#v, want %#v", p[7], p[7], want)
	}
}

func TestParseProgramRejects(t *testing.T) {
	for _, bad := range []string{
		"sned(1)", "send", "send()", "send(-1)", "send(1,2)", "receive(1,short)", "ack(1)",
		"nack(a,1)", "subscribe(t2,earliest,shared)", "subscribe(t0,first,shared)",
		"subscribe(t0,earliest)", "join(1", "close(x)", "subscribe(1,earliest,shared)", "subscribe(tt0,earliest,shared)",
	} {
		if p, err := ParseProgram("send(0) " + bad); err == nil {
			t.Errorf("ParseProgram(%q) = %s, want an error", bad, p)
		} else if !strings.Contains(err.Error(), "step 2") {
			t.Errorf("ParseProgram(%q): %v, want it to name step 2", bad, err)
		}
	}
	if p, err := ParseProgram("  "); err != nil || len(p) != 0 {
		t.Errorf("an empty program: %v, %v", p, err)
	}
}

// TestParseScheduleRoundTrip: every drawn schedule parses back to one that runs the same.
func TestParseScheduleRoundTrip(t *testing.T) {
	all := []Fault{FaultCut, FaultLatency, FaultReset, FaultLimit, FaultPause, FaultRestart, FaultKill}
	rapid.Check(t, func(rt *rapid.T) {
		s := GenSchedule(rapid.IntRange(0, 40).Draw(rt, "steps"), all).Draw(rt, "schedule")
		got, err := ParseSchedule(s.String())
		if err != nil {
			rt.Fatalf("%s: %v", s, err)
		}
		for i, f := range s {
			want := f
			switch f.Fault {
			case FaultRestart:
				want.Long, want.Arg = false, 0
			case FaultKill:
				want.Long = false
			default:
				want.Arg = 0
			}
			if got[i] != want {
				rt.Fatalf("fault %d %s parsed as %#v, want %#v", i+1, f, got[i], want)
			}
		}
		if got.String() != s.String() {
			rt.Fatalf("printed %q, parsed and printed %q", s, got)
		}
	})
	for _, bad := range []string{"cut@1", "cut(medium)@1", "restart(long)@1", "kill@2", "kill(x)@2", "cut(long)", "flood(long)@1", "cut(long)@3 cut(long)@1"} {
		if s, err := ParseSchedule(bad); err == nil {
			t.Errorf("ParseSchedule(%q) = %s, want an error", bad, s)
		}
	}
}
