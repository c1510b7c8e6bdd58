package workload

import (
	"slices"
	"testing"
	"time"

	"github.com/pubsub-conformance/harness/internal/history"
)

// What a shrink costs is its candidates, each a broker run of seconds: on a program no
// candidate of which fails, Shrink runs the removal of each half, then of each quarter, ...
// then of each single step (never the empty program), then one lowering per nonzero Arg and
// Pick, and returns the program unchanged; it reports as many runs as it made.
func TestShrinkCandidates(t *testing.T) {
	prog := Program{{Send, 1, 0}, {Receive, 0, 1}, {Ack, 2, 3}, {Join, 0, 0}, {Send, 0, 0}, {Nack, 1, 1}, {Close, 0, 0}, {Subscribe, 5, 0}}
	var lengths []int
	got, tries := Shrink(prog, func(p Program) bool { lengths = append(lengths, len(p)); return false }, time.Minute)
	want := []int{4, 4, 6, 6, 6, 6, 7, 7, 7, 7, 7, 7, 7, 7}
	for range 7 { // Arg 1, Pick 1, Arg 2, Pick 3, Arg 1, Pick 1, Arg 5
		want = append(want, 8)
	}
	if !slices.Equal(lengths, want) {
		t.Errorf("candidates of lengths %v, want %v", lengths, want)
	}
	if tries != len(lengths) || got.String() != prog.String() {
		t.Errorf("Shrink = %s after %d tries (%d candidates run), want the program unchanged", got, tries, len(lengths))
	}
}

// ShrinkFailure keeps a candidate only when it fails exactly as the program did: a program
// whose failure is a lost message (here: it has a nack and a receive) never shrinks to one
// that fails with a duplicate (a receive alone), though that is smaller and fails too.
func TestShrinkFailureKeepsTheAnomaly(t *testing.T) {
	run := func(p Program) Failure {
		has := func(o Op) bool { return slices.ContainsFunc(p, func(s Step) bool { return s.Op == o }) }
		switch {
		case has(Nack) && has(Receive):
			return Failure{Anomaly: history.Lost}
		case has(Receive):
			return Failure{Anomaly: history.Duplicate}
		}
		return Failure{}
	}
	prog, _ := ParseProgram("send(0) receive(1) join(0) send(2) receive(0,long) nack(3,1) close(1) send(1)")
	small, _ := ShrinkFailure(prog, Failure{Anomaly: history.Lost}, run, time.Minute)
	if got := run(small); got != (Failure{Anomaly: history.Lost}) || len(small) != 2 {
		t.Errorf("shrunk to %s, failing with %s; want the two steps that fail with lost", small, got)
	}
}
