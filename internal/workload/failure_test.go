package workload

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pubsub-conformance/harness/backends"
	"github.com/pubsub-conformance/harness/backends/memory"
	"github.com/pubsub-conformance/harness/internal/history"
)

// twoDefects is the reference with two planted defects of different kinds: every Nack is
// refused with ErrUnknownDelivery, and once a consumer joined after the run's first two (the
// workload's setup opens two), every Send fails with ErrTimeout.
type twoDefects struct {
	backends.Backend
	consumers *atomic.Int32
}

func (b twoDefects) Consumer(ctx context.Context, topic, sub string, opts ...backends.ConsumerOption) (backends.Consumer, error) {
	c, err := b.Backend.Consumer(ctx, topic, sub, opts...)
	if err != nil {
		return nil, err
	}
	b.consumers.Add(1)
	return refusingNacks{c}, nil
}

func (b twoDefects) Producer(ctx context.Context, topic string) (backends.Producer, error) {
	p, err := b.Backend.Producer(ctx, topic)
	if err != nil {
		return nil, err
	}
	return timingOutAfterJoins{p, b.consumers}, nil
}

type refusingNacks struct{ backends.Consumer }

func (c refusingNacks) Nack(context.Context, backends.Delivery) error {
	return fmt.Errorf("planted: %w", backends.ErrUnknownDelivery)
}

type timingOutAfterJoins struct {
	backends.Producer
	consumers *atomic.Int32
}

func (p timingOutAfterJoins) Send(ctx context.Context, m backends.Message) error {
	if p.consumers.Load() > 2 {
		return fmt.Errorf("planted: %w", backends.ErrTimeout)
	}
	return p.Producer.Send(ctx, m)
}

// failureOn runs prog on a fresh reference with both defects planted and returns its failure.
func failureOn(t *testing.T, prog Program) Failure {
	t.Helper()
	runs++
	b, err := memory.NewBroker().Open(context.Background(), backends.Config{Backend: memory.Name})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close(context.Background())
	rec := history.NewRecorder()
	bad := twoDefects{Backend: b, consumers: &atomic.Int32{}}
	res, err := Run(context.Background(), history.Wrap(bad, rec, "workload"), rec, prog, ReferenceConfig(fmt.Sprintf("f%d", runs)))
	return FailureOf(err, res.Findings)
}

// TestShrinkKeepsTheErrorKind: a program that fails with a refused Nack does not shrink to one
// whose Send timed out. Before Failure, "the same way" for an error was any error: the same
// program then shrank to a join and a send (the Kafka case of issue 32: a refused nack at
// step 19 shrank to `send(0) join(0)`). The coarse predicate's result is checked too, so the
// test shows the two defects really give different failures on these candidates.
func TestShrinkKeepsTheErrorKind(t *testing.T) {
	prog, err := ParseProgram("send(0) send(1) receive(0) receive(1,long) send(2) nack(0,0) join(0) send(0) receive(1) send(1) close(0)")
	if err != nil {
		t.Fatal(err)
	}
	nackRefused := Failure{Step: "nack", Call: "Nack", Class: "ErrUnknownDelivery"}
	if got := failureOn(t, prog); got != nackRefused {
		t.Fatalf("the program fails with %s, want %s", got, nackRefused)
	}
	sendTimedOut := Failure{Step: "send", Call: "Send", Class: "ErrTimeout"}
	withoutNack := slices.DeleteFunc(slices.Clone(prog), func(s Step) bool { return s.Op == Nack })
	if got := failureOn(t, withoutNack); got != sendTimedOut {
		t.Fatalf("without its nack the program fails with %s, want %s: the test's second defect does not work", got, sendTimedOut)
	}

	small, tries := ShrinkFailure(prog, nackRefused, func(p Program) Failure { return failureOn(t, p) }, time.Minute)
	t.Logf("shrunk %d steps to %d in %d runs: %s", len(prog), len(small), tries, small)
	if got := failureOn(t, small); got != nackRefused {
		t.Errorf("shrunk to %s, which fails with %s; want %s", small, got, nackRefused)
	}
	if want := "send(0) receive(0) nack(0,0)"; small.String() != want {
		t.Errorf("shrunk to %s, want the three steps the refused Nack needs: %s", small, want)
	}

	// The old notion, any error: the same shrink ends on the other defect.
	coarse, _ := Shrink(prog, func(p Program) bool { return failureOn(t, p).IsError() }, time.Minute)
	if got := failureOn(t, coarse); got == nackRefused {
		t.Errorf("with any error matching, the program shrank to %s failing with %s: the test no longer tells the two notions apart", coarse, got)
	} else {
		t.Logf("with any error matching it shrinks to %s, failing with %s", coarse, got)
	}
}

// TestFailureOf: an error's kind is its step, call and sentinel, wherever the CallError sits
// in the error's tree; an anomaly's is the first finding's class; none is no failure.
func TestFailureOf(t *testing.T) {
	ce := setStep(callErr("Ack", fmt.Errorf("on t0/s1: %w", backends.ErrClosed)), "drain")
	for _, c := range []struct {
		err  error
		fs   []history.Finding
		want Failure
		text string
	}{
		{err: fmt.Errorf("step 3 ack(0,1): %w", setStep(callErr("Ack", backends.ErrUnknownDelivery), "ack")),
			want: Failure{Step: "ack", Call: "Ack", Class: "ErrUnknownDelivery"}, text: "error: ack step, Ack: ErrUnknownDelivery"},
		{err: fmt.Errorf("drain: %w", errors.Join(ce, callErr("Receive", context.DeadlineExceeded))),
			want: Failure{Step: "drain", Call: "Ack", Class: "ErrClosed"}, text: "error: drain step, Ack: ErrClosed"},
		{err: fmt.Errorf("nemesis: start cut(long)@0: %w", fmt.Errorf("proxy gone")),
			want: Failure{Class: "no sentinel"}, text: "error: no sentinel"},
		{fs: []history.Finding{{Anomaly: history.Lost}, {Anomaly: history.Duplicate}},
			want: Failure{Anomaly: history.Lost}, text: "lost"},
		{want: Failure{}, text: "no failure"},
	} {
		got := FailureOf(c.err, c.fs)
		if got != c.want || got.String() != c.text {
			t.Errorf("FailureOf(%v, %v) = %#v (%s), want %#v (%s)", c.err, c.fs, got, got, c.want, c.text)
		}
	}
	// Every CallError of a joined error gets the step (the drain's members fail together).
	var second *CallError
	joined := setStep(errors.Join(callErr("Ack", backends.ErrClosed), callErr("Receive", backends.ErrClosed)), "drain")
	for _, e := range joined.(interface{ Unwrap() []error }).Unwrap() {
		second = e.(*CallError)
		if second.Step != "drain" {
			t.Errorf("%v: step %q, want drain", second, second.Step)
		}
	}
}

// A run's error carries the failing step's kind: a Send refused at step 2 on a planted defect.
func TestRunErrorNamesTheStep(t *testing.T) {
	prog := Program{{Op: Send}, {Op: Join}, {Op: Send, Arg: 1}}
	if got, want := failureOn(t, prog), (Failure{Step: "send", Call: "Send", Class: "ErrTimeout"}); got != want {
		t.Fatalf("%s: %s, want %s", prog, got, want)
	}
	if got := failureOn(t, Program{{Op: Send}, {Op: Receive, Pick: 1}, {Op: Ack}}); got.Failed() {
		t.Fatalf("a program without nack or join failed on the planted defects: %s", got)
	}
}
