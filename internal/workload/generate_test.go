package workload

import (
	"slices"
	"testing"
)

// The program of a seed is fixed: Generate(seed, MinSteps, MaxSteps), 20 to 40 steps, draws
// today what it drew when these corpus entries were added (a failure's reproduce command,
// PUBSUB_WORKLOAD_SEED=N, relies on it; the corpus replays its stored programs whatever the
// generator draws, so only seeds printed before a change of the generator stop reproducing).
func TestGenerateProgramOfASeed(t *testing.T) {
	entries, err := Corpus()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"w1-1796307262", "w1-1796183137", "w2-1796190029"} {
		i := slices.IndexFunc(entries, func(e Entry) bool { return e.Name == name })
		if i < 0 {
			t.Fatalf("no corpus entry %s", name)
		}
		e := entries[i]
		if got := Generate(e.Seed, MinSteps, MaxSteps); got.String() != e.Program.String() {
			t.Errorf("seed %d draws\n%s\nthe corpus entry %s stores\n%s", e.Seed, got, name, e.Program)
		}
	}
}

// The schedule of a W2 seed is fixed: a failure prints the seed, and its reproduce command
// (PUBSUB_WORKLOAD_SEED=N make soak NEMESIS=1) draws the schedule again from it. Faults that
// start before the same step keep the order they were drawn in. If the generator changes on
// purpose, the seeds printed before it no longer reproduce their schedules (the corpus keeps
// the ones that failed): update these.
func TestGenerateScheduleOfASeed(t *testing.T) {
	all := []Fault{FaultCut, FaultLatency, FaultReset, FaultLimit, FaultPause, FaultRestart, FaultKill}
	for seed, want := range map[int]string{
		10: "latency(long)@0 pause(short)@0",
		44: "kill(3)@1 pause(short)@1",
		46: "limit(short)@0 latency(short)@0 latency(short)@0",
		48: "latency(long)@1 limit(short)@1 latency(short)@3",
		54: "cut(long)@0 reset(short)@0 cut(short)@17",
	} {
		if got := GenerateSchedule(seed, 30, all).String(); got != want {
			t.Errorf("seed %d draws %s, want %s", seed, got, want)
		}
	}
}

// The generator's bounds (docs/workload.md): a seed's program has MinSteps to MaxSteps steps,
// each step's Arg is 0 to 7 and its Pick 0 to 3, and over a few hundred seeds every step kind,
// every Arg and every Pick comes up, both lengths at the ends, sends and receives more often than the rest.
func TestGenerateBounds(t *testing.T) {
	ops := map[Op]int{}
	args, picks, lengths := map[int]bool{}, map[int]bool{}, map[int]int{}
	for seed := range 300 {
		prog := Generate(seed, MinSteps, MaxSteps)
		lengths[len(prog)]++
		if len(prog) < MinSteps || len(prog) > MaxSteps {
			t.Fatalf("seed %d: %d steps, want %d to %d", seed, len(prog), MinSteps, MaxSteps)
		}
		for _, s := range prog {
			if s.Op < 0 || s.Op >= numOps || s.Arg < 0 || s.Arg > 7 || s.Pick < 0 || s.Pick > 3 {
				t.Fatalf("seed %d: step %#v out of bounds", seed, s)
			}
			ops[s.Op]++
			args[s.Arg], picks[s.Pick] = true, true
		}
	}
	if lengths[MinSteps] == 0 || lengths[MaxSteps] == 0 {
		t.Errorf("300 seeds drew lengths %v: want both %d and %d", lengths, MinSteps, MaxSteps)
	}
	if len(ops) != int(numOps) || len(args) != 8 || len(picks) != 4 {
		t.Errorf("300 seeds drew ops %v, args %v, picks %v: want every kind, Arg 0-7, Pick 0-3", ops, args, picks)
	}
	for _, o := range []Op{Ack, Nack, Close, Join, Subscribe} {
		if ops[Send] <= ops[o] || ops[Receive] <= ops[o] {
			t.Errorf("%d sends and %d receives, %d %s: sends and receives must come more often", ops[Send], ops[Receive], ops[o], o)
		}
	}
}
