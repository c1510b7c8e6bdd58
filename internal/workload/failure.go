package workload

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/pubsub-conformance/harness/backends"
	"github.com/pubsub-conformance/harness/internal/history"
)

// CallError is a contract call of a run that failed where the contract says it must not: the
// step it was made for (the step's kind: "send", "nack", ...; or the phase outside the steps:
// "setup", "drain", "end"), the call ("Nack", "Consumer", ...) and its error. Run's errors wrap
// one (errors.As) whenever a call failed.
type CallError struct {
	Step string
	Call string
	Err  error
}

func (e *CallError) Error() string { return fmt.Sprintf("%s: %v", e.Call, e.Err) }
func (e *CallError) Unwrap() error { return e.Err }

func callErr(call string, err error) error { return &CallError{Call: call, Err: err} }

// setStep names step on every CallError in err's tree that has no step yet (the innermost
// caller that knows the step names it) and returns err.
func setStep(err error, step string) error {
	var walk func(error)
	walk = func(e error) {
		if ce, ok := e.(*CallError); ok && ce.Step == "" {
			ce.Step = step
		}
		switch u := e.(type) {
		case interface{ Unwrap() error }:
			if inner := u.Unwrap(); inner != nil {
				walk(inner)
			}
		case interface{ Unwrap() []error }:
			for _, inner := range u.Unwrap() {
				walk(inner)
			}
		}
	}
	if err != nil {
		walk(err)
	}
	return err
}

// sentinels are the contract's error classes (backends' sentinels, in backends.Code's order),
// with their names as a failure names them.
var sentinels = []struct {
	err  error
	name string
}{
	{backends.ErrTimeout, "ErrTimeout"}, {context.DeadlineExceeded, "ErrTimeout"},
	{context.Canceled, "context.Canceled"},
	{backends.ErrInvalidTopic, "ErrInvalidTopic"}, {backends.ErrClosed, "ErrClosed"},
	{backends.ErrUnknownDelivery, "ErrUnknownDelivery"}, {backends.ErrAuth, "ErrAuth"},
	{backends.ErrUnavailable, "ErrUnavailable"}, {backends.ErrUnknownBackend, "ErrUnknownBackend"},
	{backends.ErrInvalidConfig, "ErrInvalidConfig"},
}

// ErrorClass is the sentinel err wraps ("ErrUnknownDelivery"; a context deadline counts as
// ErrTimeout, as backends.Code has it), or "no sentinel".
func ErrorClass(err error) string {
	for _, s := range sentinels {
		if errors.Is(err, s.err) {
			return s.name
		}
	}
	return "no sentinel"
}

// Failure is the kind of a run's failure: what Shrink must keep, so that a program cut down is
// one that fails the same way, not one that fails at all. For an anomaly: its class (the first
// finding's). For an error: the step kind (or phase) and the call that failed, and the error's
// class. Two failures are the same when they are == (it is comparable); the zero Failure is a
// run that did not fail.
type Failure struct {
	Anomaly history.Anomaly
	// Step, Call and Class describe an error (Class is never empty for one): a Nack refused at
	// a nack step is {"nack", "Nack", "ErrUnknownDelivery"}, a Send that timed out
	// {"send", "Send", "ErrTimeout"}. Step and Call are empty when the error came from no call
	// (a fault the nemesis could not make); Step is "reference" for a failed reference run.
	Step, Call, Class string
}

// Failed reports whether f is a failure at all.
func (f Failure) Failed() bool { return f != Failure{} }

// IsError reports whether f is an error rather than an anomaly.
func (f Failure) IsError() bool { return f.Class != "" }

func (f Failure) String() string {
	switch {
	case !f.Failed():
		return "no failure"
	case !f.IsError():
		return string(f.Anomaly)
	case f.Call == "" && f.Step == "":
		return "error: " + f.Class
	case f.Call == "":
		return fmt.Sprintf("error: %s: %s", f.Step, f.Class)
	}
	return fmt.Sprintf("error: %s step, %s: %s", f.Step, f.Call, f.Class)
}

// FailureOf is the kind of a run's failure: its error's (Run's err), else the class of its
// first finding, else none.
func FailureOf(err error, findings []history.Finding) Failure {
	if err != nil {
		var ce *CallError
		if errors.As(err, &ce) {
			return Failure{Step: ce.Step, Call: ce.Call, Class: ErrorClass(ce.Err)}
		}
		return Failure{Class: ErrorClass(err)}
	}
	if cs := Classes(findings); len(cs) > 0 {
		return Failure{Anomaly: cs[0]}
	}
	return Failure{}
}

// ShrinkFailure is Shrink keeping want: a candidate is kept only when run gives exactly want,
// so a program that failed with a refused Nack never shrinks to one whose Send timed out.
func ShrinkFailure(prog Program, want Failure, run func(Program) Failure, budget time.Duration) (Program, int) {
	return Shrink(prog, func(p Program) bool { return run(p) == want }, budget)
}
