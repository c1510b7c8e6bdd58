package history

import (
	"errors"
	"fmt"
	"testing"

	"github.com/pubsub-conformance/harness/backends"
	"github.com/pubsub-conformance/harness/internal/evidence"
)

// The failure record names the call whose error the failure message quotes, its code and
// kind, and what the history owed that call.
func TestFailureOf(t *testing.T) {
	timeout := fmt.Errorf("receive: nothing arrived before the deadline: %w", backends.ErrTimeout)
	closed := fmt.Errorf("send on a closed producer: %w", backends.ErrClosed)
	for _, tc := range []struct {
		name string
		ops  func(b *builder) *builder
		msg  string
		want evidence.Failure
	}{
		{"a new earliest subscription that replays nothing",
			func(b *builder) *builder {
				b.send("p1", flow, "m1", 0, 10, nil).consumer("c2", flow, "s", backends.Earliest, backends.Shared, 20, 30)
				b.add(Op{Kind: Receive, Handle: "c2", Topic: flow, Subscription: "s", Err: timeout}, 40, 50)
				return b
			},
			"expected m1: " + timeout.Error(),
			evidence.Failure{Kind: evidence.KindHang, Call: "Receive", Context: "on a new earliest subscription, for messages sent before it",
				Code: "timeout", Error: timeout.Error(), Seq: 3}},
		{"a new latest subscription: no context",
			func(b *builder) *builder {
				b.send("p1", flow, "m1", 0, 10, nil).consumer("c2", flow, "s", backends.Latest, backends.Shared, 20, 30)
				b.add(Op{Kind: Receive, Handle: "c2", Topic: flow, Subscription: "s", Err: timeout}, 40, 50)
				return b
			},
			"Unexpected error:\n    <*fmt.wrapError | 0x1>: \n    " + timeout.Error(),
			evidence.Failure{Kind: evidence.KindHang, Call: "Receive", Code: "timeout", Error: timeout.Error(), Seq: 3}},
		{"after a nack",
			func(b *builder) *builder {
				b.consumer("c1", flow, "s", backends.Latest, backends.Shared, 0, 10).send("p1", flow, "m1", 20, 30, nil).
					recv("c1", "m1", "d1", 40, 50).settle(Nack, "c1", "m1", "d1", 60, 70)
				b.add(Op{Kind: Receive, Handle: "c1", Topic: flow, Subscription: "s", Err: timeout}, 80, 90)
				return b
			},
			"the nacked message never came again: " + timeout.Error(),
			evidence.Failure{Kind: evidence.KindHang, Call: "Receive", Context: "after Nack", Code: "timeout", Error: timeout.Error(), Seq: 5}},
		{"on a reopened subscription",
			func(b *builder) *builder {
				b.consumer("c1", flow, "s", backends.Latest, backends.Shared, 0, 10).close("c1", 20, 30).
					send("p1", flow, "m1", 40, 50, nil).consumer("c2", flow, "s", backends.Latest, backends.Shared, 60, 70)
				b.add(Op{Kind: Receive, Handle: "c2", Topic: flow, Subscription: "s", Err: timeout}, 80, 90)
				return b
			},
			timeout.Error(),
			evidence.Failure{Kind: evidence.KindHang, Call: "Receive", Context: "on a reopened subscription", Code: "timeout", Error: timeout.Error(), Seq: 5}},
		{"an error that is not a timeout",
			func(b *builder) *builder { return b.send("p1", flow, "m1", 0, 10, closed) },
			"Send: " + closed.Error(),
			evidence.Failure{Kind: evidence.KindError, Call: "Send", Code: "closed", Error: closed.Error(), Seq: 1}},
		{"an error the message does not quote: an assertion",
			func(b *builder) *builder { return b.send("p1", flow, "m1", 0, 10, errors.New("boom")) },
			"Expected 3 to equal 4",
			evidence.Failure{Kind: evidence.KindAssertion}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := tc.ops(newBuilder())
			if got := FailureOf(b.ops, tc.msg); got != tc.want {
				t.Errorf("got  %#v\nwant %#v", got, tc.want)
			}
		})
	}
}

// The history and the checkers' findings as data keep what the text showed.
func TestEvidence(t *testing.T) {
	r := NewRecorder()
	r.SetLimit(3)
	for i := 0; i < 5; i++ {
		seq := r.begin()
		r.end(Op{Seq: seq, Client: "x#1", Kind: Send, Topic: flow, Summary: "1B", Start: r.start, End: r.start,
			Err: map[bool]error{true: backends.ErrTimeout}[i == 2]})
	}
	h := r.Evidence(2)
	if h.Calls != 3 || h.Dropped != 2 || len(h.Ops) != 2 || h.Ops[0].Seq != 2 || h.Ops[1].Code != "timeout" || h.Ops[1].Call != "Send" {
		t.Errorf("evidence %+v", h)
	}
	fs := []Finding{{Anomaly: Lost, Contract: "C-SUB-2", Key: "m1", Detail: "never received", Ops: r.Ops()[:2]}}
	if a := Anomalies(fs); len(a) != 1 || a[0].Anomaly != "lost" || len(a[0].Ops) != 2 || a[0].Ops[1] != 2 {
		t.Errorf("anomalies %+v", a)
	}
	if f := AnomalyFailure(fs); f.Kind != evidence.KindAnomaly || f.Anomaly != "lost" || f.Call != "Send" || f.Seq != 2 {
		t.Errorf("anomaly failure %+v", f)
	}
}
