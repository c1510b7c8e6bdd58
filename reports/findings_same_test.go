package reports

import (
	"fmt"
	"strings"
	"testing"
)

// unexpected is a Gomega "Unexpected error:" failure of call with err, under desc.
func unexpected(desc, call, err string) string {
	s := "Unexpected error:\n    <*errors.errorString | 0xc000123>: \n    " + call + ": " + err + "\noccurred"
	if desc != "" {
		s = desc + "\n" + s
	}
	return s
}

func findingLines(fs []Finding) string {
	var out []string
	for _, f := range fs {
		out = append(out, fmt.Sprintf("#%d %s first %s must %v", f.N, strings.Join(f.IDs, " "), f.First, f.Must))
	}
	return strings.Join(out, "; ")
}

// A finding is one column's: the same cause in two columns is a finding in each, of that
// column's specs only. It breaks TrustGraph's contract when any of its specs is a MUST,
// wherever that spec sits among them; SHOULD specs alone make a SHOULD-only finding.
func TestFindingsArePerColumnAndMustIfAnySpecIs(t *testing.T) {
	down := unexpected("", "producer.send('flow:tg:x')", "broker down")
	m := Build([]*Run{
		{File: "ginkgo-k1.json", Label: "k1", Meta: &Meta{Backend: "k1"}, Cases: []Case{
			failCase("D4", down), // SHOULD, first in the catalogue
			failCase("D5", down), // MUST, between two SHOULDs
			failCase("D8", down), // SHOULD, last
		}},
		{File: "ginkgo-k2.json", Label: "k2", Meta: &Meta{Backend: "k2"}, Cases: []Case{
			{ID: "D4", Status: Pass},
			failCase("D5", down),
			failCase("D8", unexpected("", "consumer.ack", "delivery unknown")),
		}},
	})
	if got, want := findingLines(m.Findings(0)), "#1 D4 D5 D8 first D4 must true"; got != want {
		t.Errorf("k1: %s, want %s", got, want)
	}
	fs := m.Findings(1)
	if got, want := findingLines(fs), "#1 D5 first D5 must true; #2 D8 first D8 must false"; got != want {
		t.Errorf("k2: %s, want %s", got, want)
	}
	if len(fs) == 2 && (!strings.Contains(fs[1].Summary(), "SHOULD only") || strings.Contains(fs[0].Summary(), "SHOULD only")) {
		t.Errorf("summaries %q, %q", fs[0].Summary(), fs[1].Summary())
	}
	// The last spec's level alone does not decide it either.
	m = Build([]*Run{{File: "ginkgo-k.json", Label: "k", Meta: &Meta{Backend: "k"}, Cases: []Case{
		failCase("D5", down), failCase("D8", down),
	}}})
	if got, want := findingLines(m.Findings(0)), "#1 D5 D8 first D5 must true"; got != want {
		t.Errorf("MUST then SHOULD: %s, want %s", got, want)
	}
}

// Two failures are the same finding when their kind and normalised clue agree: a call that hung
// and one that failed fast with the same words are two causes; errors that share a long start
// and differ at the end are two; the same error with other names, numbers and addresses is one.
func TestSameFindingIsKindAndWholeClue(t *testing.T) {
	long := "the broker refused the request because the subscription's cursor was already closed by a concurrent"
	cases := []struct {
		name    string
		a, b    string
		sameKey bool
	}{
		{"a hang and an error of the same words",
			unexpected("send m1 did not return within 10s", "producer.send('flow:tg:x')", "broker down"),
			unexpected("", "producer.send('flow:tg:x')", "broker down"), false},
		{"a long shared start, another end",
			unexpected("", "consumer.ack", long+" unsubscribe"),
			unexpected("", "consumer.ack", long+" reconnect"), false},
		{"a clue past 60 characters differing at its end",
			unexpected("", "consumer.ack", strings.Repeat("x", 70)+" topic"),
			unexpected("", "consumer.ack", strings.Repeat("x", 70)+" group"), false},
		{"the same error, other topic, port and count",
			unexpected("", "producer.send('flow:tg:a-abcdef-p1-2')", long+" close of tg.flow.a-abcdef-p1-2 at 127.0.0.1:39001 after 3 tries"),
			unexpected("", "producer.send('flow:tg:b-012345-p7-9')", long+" close of tg.flow.b-012345-p7-9 at 127.0.0.1:41777 after 12 tries"), true},
	}
	for _, c := range cases {
		ka, kb := CauseOf(c.a).Key, CauseOf(c.b).Key
		if (ka == kb) != c.sameKey {
			t.Errorf("%s: keys %q and %q, same %v", c.name, ka, kb, c.sameKey)
		}
		m := Build([]*Run{{File: "ginkgo-k.json", Label: "k", Meta: &Meta{Backend: "k"}, Cases: []Case{
			failCase("D5", c.a), failCase("D6", c.b)}}})
		want := 2
		if c.sameKey {
			want = 1
		}
		if fs := m.Findings(0); len(fs) != want {
			t.Errorf("%s: %d findings (%s), want %d", c.name, len(fs), findingLines(fs), want)
		}
	}
}

// A behaviour of several entries (a DescribeTable) is grouped by its first failed entry's
// cause, read from that entry's whole failure: a later entry's other cause does not move it,
// and a passing entry before it has none.
func TestFindingsGroupByTheFirstFailedEntry(t *testing.T) {
	down := unexpected("", "producer.send('flow:tg:x')", "broker down")
	auth := unexpected("", "create_consumer('flow:tg:x')", "not authorised")
	table := Case{ID: "D2", Text: "class flow", Status: Pass}
	m := Build([]*Run{{File: "ginkgo-k.json", Label: "k", Meta: &Meta{Backend: "k"}, Cases: []Case{
		table,
		{ID: "D2", Text: "class request", Status: Fail, Message: "first line only", Detail: auth},
		{ID: "D2", Text: "class response", Status: Fail, Message: cause(down), Detail: down},
		failCase("D5", auth),
		failCase("D6", down),
	}}})
	if got, want := findingLines(m.Findings(0)), "#1 D2 D5 first D2 must true; #2 D6 first D6 must true"; got != want {
		t.Errorf("findings %s, want %s", got, want)
	}
}

// The call of a logged clue is the one after its line's first ": " (a list entry's label), even
// when that label is empty: the line then starts with the separator.
func TestCauseOfLoggedCallAfterAnEmptyLabel(t *testing.T) {
	for _, line := range []string{
		`"d2-s1-r0: Consumer() failed after 29.9s: did not return; meanwhile TrustGraph's client logged: gone",`,
		`": Consumer() failed after 29.9s: did not return; meanwhile TrustGraph's client logged: gone",`,
	} {
		c := CauseOf("calls failed\nExpected\n    <[]string | len:1, cap:1>: [\n        " + line + "\n    ]\nto be empty")
		if c.Call != "Consumer" || c.Kind != "error" || c.Clue != "gone" {
			t.Errorf("%s: call %q kind %q clue %q, want Consumer, error, gone", line, c.Call, c.Kind, c.Clue)
		}
	}
}

// The spec a finding shows first is one whose own failure line carries the clue: an earlier spec
// whose logged clue sits only below an unrelated "Unexpected error:" does not count as showing it.
func TestFindingsFirstIsTheSpecThatShowsTheClue(t *testing.T) {
	below := "step 2 failed\nUnexpected error:\n    <*errors.errorString | 0xc1>: \n    consumer closed\noccurred\nwhile TrustGraph's client logged: broker gone away"
	direct := "producer.send('flow:tg:x'): failed; meanwhile TrustGraph's client logged: broker gone away"
	if a, b := CauseOf(below), CauseOf(direct); a.Key != b.Key || a.Direct || !b.Direct {
		t.Fatalf("causes %+v and %+v: want one key, only the second direct", a, b)
	}
	m := Build([]*Run{{File: "ginkgo-k.json", Label: "k", Meta: &Meta{Backend: "k"}, Cases: []Case{
		failCase("D5", below), failCase("D6", direct)}}})
	if got, want := findingLines(m.Findings(0)), "#1 D5 D6 first D6 must true"; got != want {
		t.Errorf("findings %s, want %s", got, want)
	}
}
