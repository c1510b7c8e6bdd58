package reports

import (
	"strings"
	"testing"
)

// A Gomega message is read once (readGomega): its parts are what the cell's one-line cause
// (cause) says and what a foreign failure's finding is keyed by (CauseOf), so the two paths give
// the same result - the same line, normalised, or for an error the same error.
func TestGomegaMessageReadOnceForCauseAndFinding(t *testing.T) {
	for _, c := range []struct {
		name, msg                              string
		shape                                  int
		assertion, actual, expected, desc, out string
	}{
		{"error with a description", "send m1 failed:\nUnexpected error:\n    <*errors.errorString | 0xc1>: \n    broker down\n    {s: \"broker down\"}\noccurred",
			gomegaError, "Unexpected error", "broker down", "", "send m1 failed", "send m1 failed: broker down"},
		{"error without one", "Unexpected error:\n    <*errors.errorString | 0xc1>: broker down\noccurred",
			gomegaError, "Unexpected error", "broker down", "", "", "unexpected error: broker down"},
		{"error cut short", "send m1 failed\nUnexpected error:\n    <*errors.errorString | 0xc1>: ",
			gomegaError, "Unexpected error", "", "", "send m1 failed", "send m1 failed"},
		{"expected to equal", "Expected\n    <int>: 0\nto equal\n    <int>: 1",
			gomegaExpected, "to equal", "0", "1", "", "Expected 0 to equal 1"},
		{"expected past a struct dump", "Expected\n    <*errors.errorString | 0x1>: \n    nope\n    {\n        s: \"nope\",\n    }\nnot to match error\n    <string>: timeout",
			gomegaExpected, "not to match error", "nope", "timeout", "", "Expected nope not to match error timeout"},
		{"expected without a matcher line", "Expected\n    <int>: 1\nwhatever",
			gomegaExpected, "", "1", "", "", "Expected 1"},
		{"Eventually with a description", "Timed out after 10.001s.\nno message arrived\nExpected\n    <int>: 0\nto equal\n    <int>: 1",
			gomegaOther, "", "", "", "no message arrived", "Timed out after 10.001s: no message arrived"},
		{"Consistently", "Failed after 3.2s.\nthe topic still exists",
			gomegaOther, "", "", "", "the topic still exists", "Failed after 3.2s: the topic still exists"},
		{"Eventually bare", "Timed out after 10.001s.\nExpected\n    <int>: 0\nto equal\n    <int>: 1",
			gomegaOther, "", "", "", "", "Timed out after 10.001s."},
		{"no Gomega shape", "D4: out of order\nExpected\n    <int>: 2\nto equal 1",
			gomegaOther, "", "", "", "", "D4: out of order"},
	} {
		g := readGomega(c.msg)
		if g.Shape != c.shape || g.Assertion != c.assertion || g.Actual != c.actual || g.Expected != c.expected || g.Desc != c.desc {
			t.Errorf("%s: read shape %d assertion %q actual %q expected %q desc %q; want %d %q %q %q %q",
				c.name, g.Shape, g.Assertion, g.Actual, g.Expected, g.Desc, c.shape, c.assertion, c.actual, c.expected, c.desc)
		}
		if got := cause(c.msg); got != c.out {
			t.Errorf("%s: cause %q, want %q", c.name, got, c.out)
		}
		// The finding's clue is the same reading: the error itself, or else the cell's line.
		want := normalise(c.out)
		if c.shape == gomegaError && c.actual != "" {
			want = normalise(c.actual)
		}
		if got := CauseOf(c.msg); got.Clue != want {
			t.Errorf("%s: CauseOf clue %q, want %q (the cell says %q)", c.name, got.Clue, want, c.out)
		}
	}
}

// Two different "Expected" failures of a foreign report are two findings, not one "Expected":
// the finding reads the values and the matcher, as the cell does. The spec whose line shows
// the clue is direct.
func TestForeignExpectedFailuresAreTwoFindings(t *testing.T) {
	empty := "Expected\n    <[]string | len:1, cap:1>: [\"x\"]\nto be empty"
	nilErr := "Expected\n    <*errors.errorString | 0xc1>: \n    gone\nto be nil"
	a, b := CauseOf(empty), CauseOf(nilErr)
	if a.Key == b.Key || !strings.Contains(a.Key, "to be empty") || !strings.Contains(b.Key, "to be nil") {
		t.Errorf("keys %q and %q: want two findings, each naming its matcher", a.Key, b.Key)
	}
	if !a.Direct || !b.Direct {
		t.Errorf("direct %v %v: the cell's line shows the clue", a.Direct, b.Direct)
	}
	m := Build([]*Run{{File: "junit-py.xml", Label: "py", Cases: []Case{failCase("D2", empty), failCase("D3", nilErr)}}})
	if got, want := findingLines(m.Findings(0)), "#1 D2 first D2 must true; #2 D3 first D3 must true"; got != want {
		t.Errorf("findings %s, want %s", got, want)
	}
}

// A foreign failure shows its cause directly when the cell's line (cause) carries the clue: an
// error after its description does; a client's log line above the description, or an error
// past the length the cell keeps, does not.
func TestForeignCauseIsDirectWhenTheCellShowsIt(t *testing.T) {
	errorShape := func(desc, err string) string {
		return desc + "\nUnexpected error:\n    <*errors.errorString | 0xc1>: \n    " + err + "\noccurred"
	}
	for _, c := range []struct {
		name, failure string
		direct        bool
	}{
		{"the error after its description", errorShape("send m1 failed", "producer.send('x'): broker down"), true},
		{"a log line above the description", "send failed; meanwhile TrustGraph's client logged: broker gone\n" + errorShape("step 2", "consumer closed"), false},
		{"the log line is the cell's", "producer.send('x'): failed; meanwhile TrustGraph's client logged: broker gone", true},
		{"an error past what the cell keeps", errorShape(strings.Repeat("d", causeLen), "broker down"), false},
		{"an error just inside it", errorShape(strings.Repeat("d", causeLen-len(": broker down")), "broker down"), true},
	} {
		got := CauseOf(c.failure)
		if got.Direct != c.direct {
			t.Errorf("%s: direct %v, want %v (clue %q, cell %q)", c.name, got.Direct, c.direct, got.Clue, cause(c.failure))
		}
	}
}
