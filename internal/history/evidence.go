package history

import (
	"strings"
	"time"

	"github.com/pubsub-conformance/harness/backends"
	"github.com/pubsub-conformance/harness/internal/evidence"
)

// The history as data for a spec's report (internal/evidence): the calls, the checkers'
// anomalies, and the failure record that names the call behind a failure.

// Data is op as evidence, its times relative to origin (the history's start).
func Data(origin time.Time, op Op) evidence.Op {
	d := evidence.Op{Seq: op.Seq, Client: op.Client, Handle: op.Handle, Call: string(op.Kind),
		Topic: op.Topic, Subscription: op.Subscription, Summary: op.Summary, Delivery: op.Delivery,
		At: op.Start.Sub(origin).Seconds(), Seconds: op.End.Sub(op.Start).Seconds(), Result: op.Result}
	if op.Kind == NewConsumer {
		d.Position, d.Mode = op.Position.String(), op.Mode.String()
	}
	if !op.Deadline.IsZero() {
		d.Deadline = op.Deadline.Sub(op.Start).Seconds()
	}
	if op.Err != nil {
		d.Code, d.Error = backends.Code(op.Err), op.Err.Error()
	}
	return d
}

// Evidence is r's history as data: the last calls, at most last of them (all when last <= 0).
func (r *Recorder) Evidence(last int) evidence.History {
	ops := r.Ops()
	h := evidence.History{Evidence: "history", Calls: len(ops), Dropped: r.Dropped()}
	if last > 0 && len(ops) > last {
		ops = ops[len(ops)-last:]
	}
	h.Ops = make([]evidence.Op, len(ops))
	for i, op := range ops {
		h.Ops[i] = Data(r.start, op)
	}
	return h
}

// Anomalies is the checkers' findings as data.
func Anomalies(fs []Finding) []evidence.Anomaly {
	out := make([]evidence.Anomaly, len(fs))
	for i, f := range fs {
		a := evidence.Anomaly{Anomaly: string(f.Anomaly), Contract: f.Contract, Key: f.Key, Subscription: f.Subscription, Detail: f.Detail}
		for _, op := range f.Ops {
			a.Ops = append(a.Ops, op.Seq)
		}
		out[i] = a
	}
	return out
}

// AnomalyFailure is the failure record of a spec the checkers failed: the first anomaly and
// the last call of its evidence.
func AnomalyFailure(fs []Finding) evidence.Failure {
	f := evidence.Failure{Kind: evidence.KindAnomaly}
	if len(fs) == 0 {
		return f
	}
	f.Anomaly = string(fs[0].Anomaly)
	if ops := fs[0].Ops; len(ops) > 0 {
		f.Call, f.Seq = string(ops[len(ops)-1].Kind), ops[len(ops)-1].Seq
	}
	return f
}

// quoteLen is how much of a call's error a failure message must quote to be about that call.
const quoteLen = 60

// FailureOf is the failure record of a spec whose failure message is msg and whose history
// is ops (in start order): the first call whose error the message quotes (a Gomega
// "Unexpected error", an assertion that prints the error it got), a hang when that error is a
// timeout, else an error; with no such call, an assertion. The call's context comes from what
// the history did before it (callContext).
func FailureOf(ops []Op, msg string) evidence.Failure {
	for i, op := range ops {
		if op.Err == nil {
			continue
		}
		text := op.Err.Error()
		probe := text
		if r := []rune(probe); len(r) > quoteLen {
			probe = string(r[:quoteLen])
		}
		if strings.TrimSpace(probe) == "" || !strings.Contains(msg, probe) {
			continue
		}
		f := evidence.Failure{Kind: evidence.KindError, Call: string(op.Kind), Code: backends.Code(op.Err),
			Error: text, Seq: op.Seq, Context: callContext(ops, i)}
		if f.Code == "timeout" {
			f.Kind = evidence.KindHang
		}
		return f
	}
	return evidence.Failure{Kind: evidence.KindAssertion}
}

// callContext says, for a consumer's call ops[i], what the history owed it, when that names
// a cause better than the call alone: it came after a Nack of the same consumer; its
// subscription had been opened before (a reopen must resume it); or its subscription is new,
// at the earliest position, and messages were sent to the topic before it was opened (it must
// replay them). "" otherwise.
func callContext(ops []Op, i int) string {
	op := ops[i]
	switch op.Kind {
	case Receive, Ack, Nack:
	default:
		return ""
	}
	var open *Op
	for j := i - 1; j >= 0; j-- {
		if ops[j].Kind == NewConsumer && ops[j].Handle == op.Handle && ops[j].Err == nil {
			open = &ops[j]
			break
		}
	}
	for j := i - 1; j >= 0; j-- {
		if ops[j].Handle == op.Handle && ops[j].Kind == Nack && ops[j].Err == nil {
			return "after Nack"
		}
	}
	if open == nil {
		return ""
	}
	opens, sentBefore := 0, false
	for _, o := range ops[:i] {
		switch {
		case o.Kind == NewConsumer && o.Topic == open.Topic && o.Subscription == open.Subscription && o.Start.Before(open.End):
			opens++
		case o.Kind == Send && o.Err == nil && o.Topic == open.Topic && o.End.Before(open.Start):
			sentBefore = true
		}
	}
	switch {
	case opens > 1:
		return "on a reopened subscription"
	case open.Position == backends.Earliest && sentBefore:
		return "on a new earliest subscription, for messages sent before it"
	}
	return ""
}
