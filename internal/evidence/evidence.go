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
	"strings"
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

// History is a spec's history of contract calls as attached to its report: all of it in the
// JSON (Value.AsJSON) and the HTML page, a digest on the console (String).
type History struct {
	Evidence string `json:"evidence"` // "history": tells the value apart from others (Text)
	Calls    int    `json:"calls"`    // calls recorded
	Dropped  int    `json:"dropped"`  // calls that did not fit (the history overflowed)
	Ops      []Op   `json:"ops"`      // the calls attached: the last ones when not all
	// Focus is the Seq of the call behind the failure (Failure.Seq); 0 when none.
	Focus int `json:"focus,omitempty"`
}

// DigestCalls is how many of a history's last calls its digest shows.
const DigestCalls = 8

// String is the history's digest for the console: how many calls there are and where the
// whole is, the call behind the failure with its neighbours, and the last DigestCalls calls.
func (h History) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "history of contract calls: %d calls", h.Calls)
	if h.Dropped > 0 {
		fmt.Fprintf(&b, " (and %d not recorded: the history was full)", h.Dropped)
	}
	if len(h.Ops) < h.Calls {
		fmt.Fprintf(&b, "; the last %d attached", len(h.Ops))
	}
	b.WriteString("; all of them in the JSON report and the HTML page")
	shown := map[int]bool{}
	line := func(i int) {
		if !shown[i] {
			shown[i] = true
			b.WriteString("\n" + h.Ops[i].Line())
		}
	}
	last := max(0, len(h.Ops)-DigestCalls)
	if h.Focus > 0 {
		for i, op := range h.Ops {
			if op.Seq == h.Focus && i < last {
				b.WriteString("\nthe call behind the failure:")
				for j := max(0, i-2); j <= i; j++ { // i < last: none of these is among the last
					line(j)
				}
			}
		}
	}
	if last > 0 {
		fmt.Fprintf(&b, "\nthe last %d calls:", len(h.Ops)-last)
	}
	for i := last; i < len(h.Ops); i++ {
		line(i)
	}
	return b.String()
}

// Text is the whole history, one line a call.
func (h History) Text() string {
	lines := make([]string, 0, len(h.Ops)+1)
	head := fmt.Sprintf("%d calls", h.Calls)
	if len(h.Ops) < h.Calls {
		head += fmt.Sprintf(", the last %d attached", len(h.Ops))
	}
	if h.Dropped > 0 {
		head += fmt.Sprintf(", %d more not recorded (the history was full)", h.Dropped)
	}
	lines = append(lines, head)
	for _, op := range h.Ops {
		lines = append(lines, op.Line())
	}
	return strings.Join(lines, "\n")
}

// Line renders the call as one line: offset from the history's start, client and handle,
// call, arguments, result, duration.
func (o Op) Line() string {
	who := o.Client
	if o.Handle != "" {
		who += "/" + o.Handle
	}
	var args []string
	switch o.Call {
	case "Consumer":
		args = append(args, fmt.Sprintf("%q sub=%q position=%s mode=%s", o.Topic, o.Subscription, o.Position, o.Mode))
	case "Producer", "CreateTopic", "DeleteTopic", "TopicExists", "EnsureTopic", "Retention":
		args = append(args, fmt.Sprintf("%q", o.Topic))
	case "Send":
		args = append(args, o.Summary)
	case "Receive":
		if !o.Failed() {
			args = append(args, "id="+o.Delivery, o.Summary)
		}
	case "Ack", "Nack":
		args = append(args, "id="+o.Delivery, o.Summary)
	}
	if o.Deadline != 0 && (o.Call == "Receive" || o.Call == "Send") {
		args = append(args, fmt.Sprintf("deadline=%+.3fs", o.Deadline))
	}
	res := "ok"
	switch {
	case o.Call == "Open":
		res = o.Result
	case o.Failed():
		res = fmt.Sprintf("ERROR %s: %s", o.Code, o.Error)
	case o.Result != "":
		res = o.Result
	}
	return fmt.Sprintf("%+9.3fs %-18s %-13s %s -> %s (%.3fs)", o.At, who, o.Call, strings.Join(args, " "), res, o.Seconds)
}

// Log is an excerpt of a log (what a broker wrote while a spec ran) as attached to a report:
// all of it in the JSON and the HTML page, its last LogDigestLines on the console.
type Log struct {
	Evidence string   `json:"evidence"` // "log"
	Lines    []string `json:"lines"`
}

// LogDigestLines is how many of a log's last lines its digest shows.
const LogDigestLines = 15

// NewLog is the Log of text, one line a line.
func NewLog(text string) Log {
	return Log{Evidence: "log", Lines: strings.Split(strings.TrimRight(text, "\n"), "\n")}
}

// String is the log's digest for the console: its last LogDigestLines lines.
func (l Log) String() string {
	if len(l.Lines) <= LogDigestLines {
		return strings.Join(l.Lines, "\n")
	}
	return fmt.Sprintf("(%d lines before; all of them in the JSON report and the HTML page)\n", len(l.Lines)-LogDigestLines) +
		strings.Join(l.Lines[len(l.Lines)-LogDigestLines:], "\n")
}

// Text is the whole excerpt.
func (l Log) Text() string { return strings.Join(l.Lines, "\n") }

// Text renders a report entry's value whole when it is a History or a Log (their "evidence"
// field says which), for the HTML page; false for any other value.
func Text(raw any, asJSON string) (string, bool) {
	switch v := raw.(type) {
	case History:
		return v.Text(), true
	case Log:
		return v.Text(), true
	}
	var kind struct {
		Evidence string `json:"evidence"`
	}
	if Decode(raw, asJSON, &kind) != nil {
		return "", false
	}
	switch kind.Evidence {
	case "history":
		var h History
		if Decode(raw, asJSON, &h) == nil {
			return h.Text(), true
		}
	case "log":
		var l Log
		if Decode(raw, asJSON, &l) == nil {
			return l.Text(), true
		}
	}
	return "", false
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
