package evidence

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func history(n, focus int) History {
	h := History{Evidence: "history", Calls: n + 10, Focus: focus}
	for i := 11; i <= n+10; i++ {
		op := Op{Seq: i, Client: "kafka#1", Handle: "c1", Call: "Receive", At: float64(i) / 1000, Delivery: fmt.Sprint(i), Summary: "2B \"m\""}
		if i == focus {
			op.Code, op.Error = "timeout", "receive: nothing arrived"
		}
		h.Ops = append(h.Ops, op)
	}
	return h
}

// The console gets a digest of a history, whatever its length: the count and where the whole
// is, the call behind the failure with two before it, and the last calls; the whole in Text.
func TestHistoryDigest(t *testing.T) {
	h := history(5000, 100)
	d := h.String()
	lines := strings.Split(d, "\n")
	if len(lines) > 2+3+1+DigestCalls {
		t.Errorf("digest of %d lines:\n%s", len(lines), d)
	}
	for _, want := range []string{"history of contract calls: 5010 calls; the last 5000 attached; all of them in the JSON report and the HTML page",
		"the call behind the failure:", "ERROR timeout: receive: nothing arrived", "id=98 ", "the last 8 calls:", "id=5010 "} {
		if !strings.Contains(d, want) {
			t.Errorf("digest lacks %q:\n%s", want, d)
		}
	}
	if strings.Contains(d, "id=97 ") || strings.Contains(d, "id=5002 ") {
		t.Errorf("digest shows more than it should:\n%s", d)
	}
	if n := strings.Count(h.Text(), "\n"); n != 5000 {
		t.Errorf("Text has %d lines after its head, want every call", n)
	}
	// A failure among the last calls is shown once; a short history is shown whole.
	if d := history(5, 14).String(); strings.Contains(d, "the call behind the failure") || strings.Count(d, "\n") != 5 {
		t.Errorf("short history digest:\n%s", d)
	}
}

func TestLogDigest(t *testing.T) {
	var lines []string
	for i := 1; i <= 120; i++ {
		lines = append(lines, fmt.Sprintf("line %d", i))
	}
	l := NewLog(strings.Join(lines, "\n") + "\n")
	if d := l.String(); strings.Count(d, "\n") != LogDigestLines || !strings.HasPrefix(d, "(105 lines before") || !strings.HasSuffix(d, "line 120") {
		t.Errorf("log digest:\n%s", d)
	}
	if l.Text() != strings.Join(lines, "\n") {
		t.Error("Text is not the whole log")
	}
}

// Text renders a history or a log whole from the typed value or its JSON, and nothing else.
func TestText(t *testing.T) {
	h := history(30, 0)
	data, _ := json.Marshal(h)
	var decoded any
	_ = json.Unmarshal(data, &decoded)
	for name, in := range map[string][2]any{"typed": {h, ""}, "json": {nil, string(data)}, "decoded": {decoded, ""}} {
		got, ok := Text(in[0], in[1].(string))
		if !ok || got != h.Text() {
			t.Errorf("%s: %v %q", name, ok, got)
		}
	}
	if _, ok := Text("a string entry", ""); ok {
		t.Error("a string entry rendered as evidence")
	}
	if _, ok := Text(Failure{Kind: KindHang}, ""); ok {
		t.Error("a failure record rendered as a history")
	}
	if got, ok := Text(NewLog("a\nb"), ""); !ok || got != "a\nb" {
		t.Errorf("log: %v %q", ok, got)
	}
}

// A failure record in one line names its kind, its call and what the history owed it, and
// then the anomaly, or for a Receive that timed out that nothing arrived, or the error with its
// contract code: two records that differ in any of these read apart.
func TestFailureString(t *testing.T) {
	for want, f := range map[string]Failure{
		"assertion":                     {Kind: KindAssertion},
		"anomaly: Receive: lost":        {Kind: KindAnomaly, Call: "Receive", Anomaly: "lost", Code: "timeout", Error: "e"},
		"anomaly: unexpected duplicate": {Kind: KindAnomaly, Anomaly: "unexpected duplicate"},
		"hang: Receive after Nack: nothing arrived before the deadline": {Kind: KindHang, Call: "Receive", Context: "after Nack", Code: "timeout", Error: "context deadline exceeded"},
		"hang: Send: timeout: no answer":                                {Kind: KindHang, Call: "Send", Code: "timeout", Error: "no answer"},
		"error: Receive: closed: consumer closed":                       {Kind: KindError, Call: "Receive", Code: "closed", Error: "consumer closed"},
		"error: Send after Nack: internal: boom":                        {Kind: KindError, Call: "Send", Context: "after Nack", Code: "internal", Error: "boom"},
		"error":                                                         {Kind: KindError, Context: "after Nack"},
	} {
		if got := f.String(); got != want {
			t.Errorf("%+v: %q, want %q", f, got, want)
		}
	}
}

// One call in one line: its offset, who, the call, the arguments of its kind, the result and
// the duration; a deadline only where a call has one (Send, Receive), an error with its code.
func TestOpLine(t *testing.T) {
	base := Op{Client: "kafka#1", At: 1.5, Seconds: 0.25}
	with := func(f func(o *Op)) Op { o := base; f(&o); return o }
	for want, o := range map[string]Op{
		`   +1.500s kafka#1/c1         Consumer      "tg.x" sub="s" position=earliest mode=shared -> ok (0.250s)`: with(func(o *Op) {
			o.Handle, o.Call, o.Topic, o.Subscription, o.Position, o.Mode = "c1", "Consumer", "tg.x", "s", "earliest", "shared"
		}),
		`   +1.500s kafka#1            TopicExists   "tg.x" -> true (0.250s)`: with(func(o *Op) { o.Call, o.Topic, o.Result = "TopicExists", "tg.x", "true" }),
		`   +1.500s kafka#1            Send          2B "m" deadline=+9.750s -> ok (0.250s)`: with(func(o *Op) {
			o.Call, o.Summary, o.Deadline = "Send", `2B "m"`, 9.75
		}),
		`   +1.500s kafka#1            Receive       id=7 2B "m" -> ok (0.250s)`: with(func(o *Op) { o.Call, o.Delivery, o.Summary = "Receive", "7", `2B "m"` }),
		`   +1.500s kafka#1            Receive       deadline=-0.001s -> ERROR timeout: nothing (0.250s)`: with(func(o *Op) {
			o.Call, o.Delivery, o.Summary, o.Deadline, o.Code, o.Error = "Receive", "7", `2B "m"`, -0.001, "timeout", "nothing"
		}),
		`   +1.500s kafka#1            Ack           id=7 2B "m" -> ok (0.250s)`:       with(func(o *Op) { o.Call, o.Delivery, o.Summary, o.Deadline = "Ack", "7", `2B "m"`, 5 }),
		`   +1.500s kafka#1            Nack          id=8  -> ERROR : closed (0.250s)`: with(func(o *Op) { o.Call, o.Delivery, o.Error = "Nack", "8", "closed" }),
		`   +1.500s kafka#1            Open           -> kafka 3.9.1 (0.250s)`:         with(func(o *Op) { o.Call, o.Result = "Open", "kafka 3.9.1" }),
		`   +1.500s kafka#1            Close          -> ERROR internal:  (0.250s)`:    with(func(o *Op) { o.Call, o.Code = "Close", "internal" }),
	} {
		if got := o.Line(); got != want {
			t.Errorf("%+v:\n got %q\nwant %q", o, got, want)
		}
	}
}

// A history that overflowed is unknown, and says how many calls it kept and dropped.
func TestHistoryFull(t *testing.T) {
	u := HistoryFull(5000, 12)
	if u.Recorded != 5000 || u.Dropped != 12 || !strings.Contains(u.Reason, "12 calls after the first 5000 not recorded") {
		t.Errorf("%+v", u)
	}
	if !strings.HasPrefix(u.String(), "unknown: the history overflowed") {
		t.Errorf("String %q", u.String())
	}
}

// A digest says when the history dropped calls and when not all of it is attached; the call
// behind the failure comes with at most two before it, none after, and only when the last
// calls do not already show it.
func TestHistoryDigestEdges(t *testing.T) {
	h := history(20, 13) // Seq 11..30: the focus third, the last 8 from Seq 23
	h.Dropped, h.Calls = 7, 20
	d := h.String()
	for _, want := range []string{"history of contract calls: 20 calls (and 7 not recorded: the history was full); all of them",
		"the call behind the failure:\n" + h.Ops[0].Line() + "\n" + h.Ops[1].Line() + "\n" + h.Ops[2].Line() + "\nthe last 8 calls:"} {
		if !strings.Contains(d, want) {
			t.Errorf("digest lacks %q:\n%s", want, d)
		}
	}
	if strings.Contains(d, "attached") || strings.Contains(d, h.Ops[3].Line()) {
		t.Errorf("digest of a whole history with its focus third:\n%s", d)
	}
	// The focus first: nothing before it; the focus just before the last calls: two before it.
	for focus, lines := range map[int][]int{11: {0}, 22: {9, 10, 11}} {
		d := history(20, focus).String()
		_, tail, _ := strings.Cut(d, "the call behind the failure:\n")
		got, _, _ := strings.Cut(tail, "\nthe last")
		var want []string
		for _, i := range lines {
			want = append(want, history(20, focus).Ops[i].Line())
		}
		if got != strings.Join(want, "\n") {
			t.Errorf("focus %d: shown\n%s\nwant\n%s", focus, got, strings.Join(want, "\n"))
		}
	}
	// The focus the first of the last calls: shown there, once, with no focus heading.
	if d := history(20, 23).String(); strings.Contains(d, "the call behind the failure") || strings.Count(d, "nothing arrived") != 1 {
		t.Errorf("focus among the last calls:\n%s", d)
	}
	// Exactly DigestCalls calls: all of them, no "last" heading.
	if d := history(DigestCalls, 0).String(); strings.Contains(d, "the last 8 calls:") || strings.Count(d, "\n") != DigestCalls {
		t.Errorf("a history of %d calls:\n%s", DigestCalls, d)
	}
	// Text's head says what is attached and what was dropped.
	h = history(3, 0)
	h.Calls, h.Dropped = 5, 2
	if head, _, _ := strings.Cut(h.Text(), "\n"); head != "5 calls, the last 3 attached, 2 more not recorded (the history was full)" {
		t.Errorf("Text head %q", head)
	}
	h.Calls, h.Dropped = 3, 0
	if head, _, _ := strings.Cut(h.Text(), "\n"); head != "3 calls" {
		t.Errorf("Text head %q", head)
	}
	// A history with no call attached (a spec that failed before its first call) is its head.
	if got := (History{Evidence: "history"}).Text(); got != "0 calls" {
		t.Errorf("empty history: %q", got)
	}
}

// A log of exactly LogDigestLines lines is shown whole; one line more is cut to the last ones.
func TestLogDigestEdges(t *testing.T) {
	lines := make([]string, LogDigestLines)
	for i := range lines {
		lines[i] = fmt.Sprint("l", i)
	}
	if l := NewLog(strings.Join(lines, "\n")); l.String() != strings.Join(lines, "\n") || len(l.Lines) != LogDigestLines {
		t.Errorf("a log of %d lines: %q", LogDigestLines, l.String())
	}
	l := NewLog(strings.Join(append(lines, "last"), "\n") + "\n\n")
	if d := l.String(); !strings.HasPrefix(d, "(1 lines before;") || strings.Contains(d, "l0\n") || !strings.HasSuffix(d, "\nlast") {
		t.Errorf("a log of %d lines:\n%s", LogDigestLines+1, d)
	}
}

// Decode reads a typed value, its JSON, or a decoded map; a value of another shape is an error.
func TestDecode(t *testing.T) {
	want := Failure{Kind: KindHang, Call: "Receive", Code: "timeout", Seq: 3}
	data, _ := json.Marshal(want)
	var m any
	_ = json.Unmarshal(data, &m)
	for name, in := range map[string][2]any{"typed": {want, ""}, "json": {nil, string(data)}, "map": {m, ""}} {
		var got Failure
		if err := Decode(in[0], in[1].(string), &got); err != nil || got != want {
			t.Errorf("%s: %+v, %v", name, got, err)
		}
	}
	var f Failure
	if err := Decode(nil, `{"kind": 3}`, &f); err == nil || !strings.Contains(err.Error(), "report entry value") {
		t.Errorf("a kind of another type: %v", err)
	}
	if err := Decode(make(chan int), "", &f); err == nil || !strings.Contains(err.Error(), "report entry value") {
		t.Errorf("a value JSON cannot hold: %v", err)
	}
	// Text of a value that says it is a history or a log but is not one: not evidence.
	for _, s := range []string{`{"evidence": "history", "ops": "x"}`, `{"evidence": "log", "lines": 3}`, `{"evidence": 3}`, `{"evidence": "other"}`} {
		if got, ok := Text(nil, s); ok {
			t.Errorf("%s rendered as %q", s, got)
		}
	}
}

// Every field of every evidence type survives its JSON (the report entry's AsJSON, our JUnit's
// property): a tag spelled twice would drop both fields silently, and a finding read back from
// a report would group by less than the spec recorded.
func TestEvidenceRoundTripsEveryField(t *testing.T) {
	op := Op{Seq: 1, Client: "c", Handle: "h", Call: "Consumer", Topic: "t", Subscription: "s", Position: "earliest", Mode: "shared",
		Summary: "2B", Delivery: "d", At: 1.5, Seconds: 2.5, Deadline: 3.5, Code: "timeout", Error: "e", Result: "r"}
	for name, pair := range map[string][2]any{
		"failure": {Failure{Kind: KindAnomaly, Call: "Receive", Context: "after Nack", Code: "timeout", Error: "e", Anomaly: "lost", Seq: 7}, &Failure{}},
		"history": {History{Evidence: "history", Calls: 9, Dropped: 2, Ops: []Op{op}, Focus: 1}, &History{}},
		"anomaly": {Anomaly{Anomaly: "lost", Contract: "C-ACK-1", Key: "m1", Subscription: "s", Detail: "d", Ops: []int{1, 2}}, &Anomaly{}},
		"unknown": {HistoryFull(3, 4), &Unknown{}},
		"log":     {NewLog("a\nb"), &Log{}},
	} {
		data, err := json.Marshal(pair[0])
		if err != nil {
			t.Fatal(err)
		}
		if err := Decode(nil, string(data), pair[1]); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got := reflect.ValueOf(pair[1]).Elem().Interface()
		if fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", pair[0]) {
			t.Errorf("%s: %+v read back as %+v (JSON %s)", name, pair[0], got, data)
		}
		// Every field is set, so every field must be in the JSON under a name of its own.
		var fields map[string]any
		_ = json.Unmarshal(data, &fields)
		if n := reflect.TypeOf(pair[0]).NumField(); len(fields) != n {
			t.Errorf("%s: %d JSON fields for %d Go fields: %s", name, len(fields), n, data)
		}
	}
}
