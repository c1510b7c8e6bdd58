// Package evidence is what a spec attaches to its report as data, beside Ginkgo's own record:
// the names of the report entries and the types of their values. The specs write them
// (AddReportEntry stores a value with its JSON representation, Value.AsJSON) and package
// reports reads them back, so the evidence travels from the spec to the matrix cell without
// being formatted to text and parsed again. It imports nothing of the module: the specs and the
// reports, which may not import each other, both import it.
package evidence

import (
	"encoding/json"
	"fmt"
)

// UnknownEntry names the report entry of a spec whose checkers could not vouch for its run
// (Jepsen's :unknown): the spec's own assertions passed, but its history of contract calls
// overflowed, so the checkers judged nothing. The reports turn such a pass into the result
// "unknown", which is never a pass.
const UnknownEntry = "pubsub-unknown"

// Unknown is the value of UnknownEntry.
type Unknown struct {
	// Reason says why the spec's result cannot be vouched for, for people.
	Reason string `json:"reason"`
	// Recorded and Dropped count the history's calls: those it kept and those that did not fit.
	Recorded int `json:"recorded"`
	Dropped  int `json:"dropped"`
}

// String is the entry's representation in Ginkgo's reports.
func (u Unknown) String() string { return "unknown: " + u.Reason }

// HistoryFull is the Unknown of a history that kept recorded calls and dropped the rest.
func HistoryFull(recorded, dropped int) Unknown {
	return Unknown{
		Reason: fmt.Sprintf("the history overflowed: %d calls after the first %d not recorded, so its checkers judged nothing",
			dropped, recorded),
		Recorded: recorded, Dropped: dropped,
	}
}

// Decode reads a report entry's value into v (a pointer to one of this package's types): raw
// is the value as the process that added the entry holds it (Ginkgo's GetRawValue: the typed
// value itself in that process, a JSON-decoded map elsewhere), asJSON its JSON (Value.AsJSON,
// set when the report was read from JSON). An entry of another shape is an error.
func Decode(raw any, asJSON string, v any) error {
	data := []byte(asJSON)
	if asJSON == "" {
		var err error
		if data, err = json.Marshal(raw); err != nil {
			return fmt.Errorf("report entry value: %w", err)
		}
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("report entry value: %w", err)
	}
	return nil
}

// The report entries of a failed spec of our own runs: the evidence as data, read by the
// reports (findings, the HTML page) instead of the failure's text.
const (
	// HistoryEntry: the spec's history of contract calls (History).
	HistoryEntry = "pubsub-history"
	// AnomaliesEntry: what the history checkers found ([]Anomaly).
	AnomaliesEntry = "pubsub-anomalies"
	// FailureEntry: the failure as a record (Failure): the call that failed and how.
	FailureEntry = "pubsub-failure"
)

// Op is one recorded contract call as data (internal/history.Op without the Go error).
type Op struct {
	Seq    int    `json:"seq"`
	Client string `json:"client"`
	Handle string `json:"handle,omitempty"`
	Call   string `json:"call"` // the contract call: Consumer, Send, Receive, Ack, ...

	Topic        string `json:"topic,omitempty"`
	Subscription string `json:"subscription,omitempty"`
	Position     string `json:"position,omitempty"` // Consumer: earliest or latest
	Mode         string `json:"mode,omitempty"`     // Consumer: the resolved subscription mode
	Summary      string `json:"summary,omitempty"`  // the message: size, payload prefix, property names
	Delivery     string `json:"delivery,omitempty"`

	// At: seconds from the history's start to the call's start; Seconds: how long it took;
	// Deadline: seconds from the call's start to its context's deadline (0: none).
	At       float64 `json:"at"`
	Seconds  float64 `json:"seconds"`
	Deadline float64 `json:"deadline,omitempty"`
	// Code is the error's contract code (backends.Code: timeout, closed, auth, internal, ...),
	// Error its text; both "" for a call that returned nil.
	Code   string `json:"code,omitempty"`
	Error  string `json:"error,omitempty"`
	Result string `json:"result,omitempty"` // what a successful query returned
}

// Failed reports whether the call returned an error.
func (o Op) Failed() bool { return o.Code != "" || o.Error != "" }

// History is a spec's history of contract calls as attached to its report.
type History struct {
	Calls   int  `json:"calls"`   // calls recorded
	Dropped int  `json:"dropped"` // calls that did not fit (the history overflowed)
	Ops     []Op `json:"ops"`     // the calls attached: the last ones when not all
}

// Anomaly is one finding of the history checkers (internal/history.Finding) as data.
type Anomaly struct {
	Anomaly      string `json:"anomaly"`  // "lost", "unexpected duplicate", ...
	Contract     string `json:"contract"` // the contract sentences it breaks
	Key          string `json:"key"`      // the message
	Subscription string `json:"subscription,omitempty"`
	Detail       string `json:"detail"`
	Ops          []int  `json:"ops,omitempty"` // the evidence: Seq of the calls
}

// The kinds of Failure.
const (
	KindHang      = "hang"      // a call that did not return within its bound (code timeout)
	KindError     = "error"     // a call that returned another error
	KindAnomaly   = "anomaly"   // the history checkers found an anomaly
	KindAssertion = "assertion" // the spec saw a wrong result, no call's error behind it
)

// Failure is a failed spec's failure as a record: what the findings group our own runs by.
type Failure struct {
	Kind string `json:"kind"`
	// Call is the contract call behind the failure ("Receive"), "" for an assertion with no call.
	Call string `json:"call,omitempty"`
	// Context qualifies the call from the history, when it says what the call was owed:
	// "after Nack", "on a reopened subscription", "on a new earliest subscription, for
	// messages sent before it".
	Context string `json:"context,omitempty"`
	// Code and Error are the call's error (Op.Code, Op.Error).
	Code  string `json:"code,omitempty"`
	Error string `json:"error,omitempty"`
	// Anomaly is the checkers' first anomaly (KindAnomaly).
	Anomaly string `json:"anomaly,omitempty"`
	// Seq is the call's Op.Seq in the history; 0 when none.
	Seq int `json:"seq,omitempty"`
}

// String is the record in one line.
func (f Failure) String() string {
	s := f.Kind
	if f.Call != "" {
		s += ": " + f.Call
		if f.Context != "" {
			s += " " + f.Context
		}
	}
	switch {
	case f.Anomaly != "":
		s += ": " + f.Anomaly
	case f.Code == "timeout" && f.Call == "Receive":
		s += ": nothing arrived before the deadline"
	case f.Error != "":
		s += ": " + f.Code + ": " + f.Error
	}
	return s
}
