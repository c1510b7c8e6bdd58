package evidence

import (
	"encoding/json"
	"fmt"
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
