package reports

// Message un-parsing: what a spec's failure or skip text says, for reports that carry nothing
// else (foreign JUnit and Ginkgo files), and the one-line cause of a failure (cause), which the
// suite's structured result (Result) takes from here too. A Gomega message is read in one
// place (readGomega), for the cause and for a foreign failure's finding (CauseOf) alike.

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// splitAtID splits a spec's full text at "[id] ": the ID is in the text for people, the label
// said which, so the containers' texts come before it and the behaviour's after. Without an ID
// (or without it in the text) the whole text is the spec's own.
func splitAtID(name, id string) (container, text string) {
	if id != "" {
		if k := strings.Index(name, "["+id+"] "); k >= 0 {
			return strings.TrimSpace(name[:k]), strings.TrimSpace(name[k+len(id)+3:])
		}
	}
	return "", strings.TrimSpace(name)
}

// skipReason turns Ginkgo's "skipped - <reason>" into "<reason>"; a bare "skipped" gives "".
func skipReason(msg string) string {
	msg = firstLine(msg)
	if r, ok := strings.CutPrefix(msg, "skipped - "); ok {
		return strings.TrimSpace(r)
	}
	if msg == "skipped" {
		return ""
	}
	return msg
}

// firstLine returns the first non-blank line of s, trimmed.
func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return l
		}
	}
	return ""
}

// parseSeconds reads a JUnit time attribute; missing or unreadable values count as zero
// because a foreign report's timing is informational, not a reason to reject it.
func parseSeconds(s string) float64 {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || f < 0 {
		return 0
	}
	return f
}

var gomegaValue = regexp.MustCompile(`^<[^<>]*>: ?(.*)$`)

// The shapes of a Gomega failure message readGomega knows.
const (
	// gomegaOther: any other message; its first line says it.
	gomegaOther = iota
	// gomegaError: Expect(err).NotTo(HaveOccurred()): "[desc]\nUnexpected error:\n<T>: err".
	gomegaError
	// gomegaExpected: "Expected\n<T>: actual\n<matcher>\n<T>: expected".
	gomegaExpected
)

// A gomegaMessage is a Gomega failure message read into its parts, in this one place: the
// one-line cause of every failure (cause, the cells' and results' text) and the finding a
// foreign report's failure belongs to (CauseOf) both take them from here, so the two cannot
// read one message two ways.
type gomegaMessage struct {
	// Lines are the message's non-blank lines, trimmed.
	Lines []string
	// Shape is gomegaError, gomegaExpected or gomegaOther.
	Shape int
	// Assertion is what was asserted: "Unexpected error" (gomegaError), the matcher line
	// ("to equal", "not to be nil") of gomegaExpected, "" when there is none (or the dump of the
	// actual value hid it).
	Assertion string
	// Actual is the error (gomegaError) or the actual value (gomegaExpected), without its
	// "<type>:" prefix; Expected the matcher's value.
	Actual, Expected string
	// Desc is the spec's description of the assertion: the line before "Unexpected error:"
	// (without a final colon), or the line after an Eventually's or Consistently's first line.
	Desc string
	// Timeout is that first line ("Timed out after 10.001s.", "Failed after 3s."), else "".
	Timeout string
}

// readGomega reads msg's Gomega shape and parts; a message in none of Gomega's shapes is
// gomegaOther with only its Lines.
func readGomega(msg string) gomegaMessage {
	var g gomegaMessage
	for _, l := range strings.Split(msg, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			g.Lines = append(g.Lines, l)
		}
	}
	lines := g.Lines
	if len(lines) == 0 {
		return g
	}
	// value returns the Gomega-formatted value starting at line i and the index after it.
	value := func(i int) (string, int) {
		if i >= len(lines) {
			return "", i
		}
		m := gomegaValue.FindStringSubmatch(lines[i])
		if m == nil {
			return lines[i], i + 1
		}
		if m[1] != "" {
			return m[1], i + 1
		}
		if i+1 < len(lines) {
			return lines[i+1], i + 2
		}
		return "", i + 1
	}
	first := lines[0]
	if strings.HasPrefix(first, "Timed out after ") || strings.HasPrefix(first, "Failed after ") {
		g.Timeout = first
		if len(lines) > 1 && lines[1] != "Expected" && !strings.HasPrefix(lines[1], "<") {
			g.Desc = lines[1]
		}
	}
	if k := slices.Index(lines, "Unexpected error:"); k >= 0 {
		g.Shape, g.Assertion, g.Desc = gomegaError, "Unexpected error", ""
		g.Actual, _ = value(k + 1)
		if k > 0 {
			g.Desc = strings.TrimSuffix(lines[k-1], ":")
		}
		return g
	}
	if first == "Expected" && len(lines) > 2 {
		g.Shape = gomegaExpected
		var next int
		g.Actual, next = value(1)
		// Skip a struct dump ("{ ... }") to the matcher line ("to equal", "not to be nil").
		for ; next < len(lines); next++ {
			if strings.HasPrefix(lines[next], "to ") || strings.HasPrefix(lines[next], "not to ") {
				g.Assertion = lines[next]
				g.Expected, _ = value(next + 1)
				break
			}
		}
	}
	return g
}

// Line is the message in one line: its first line, except that Gomega's multi-line shapes,
// whose first line alone says little, are folded into one:
//
//	"desc\nUnexpected error:\n    <*T | 0x..>: \n    the error"   -> "desc: the error"
//	"Expected\n    <T>: a\nto equal\n    <T>: b"                 -> "Expected a to equal b"
//	"Timed out after 10.001s.\ndesc\nExpected..."               -> "Timed out after 10.001s: desc"
//
// A message cut short after "Unexpected error:" is its description alone.
func (g gomegaMessage) Line() string {
	switch {
	case len(g.Lines) == 0:
		return ""
	case g.Shape == gomegaError:
		desc := g.Desc
		if desc == "" {
			desc = "unexpected error"
		}
		if g.Actual == "" {
			return desc
		}
		return desc + ": " + g.Actual
	case g.Timeout != "" && g.Desc != "":
		return strings.TrimSuffix(g.Timeout, ".") + ": " + g.Desc
	case g.Shape == gomegaExpected: // without a matcher line (Assertion and Expected ""): "Expected <actual>"
		return strings.TrimSpace("Expected " + g.Actual + " " + g.Assertion + " " + g.Expected)
	}
	return g.Lines[0]
}

// causeLen is how much of a failure's one line its cell keeps.
const causeLen = 300

// cause is the one-line cause of a failure message (gomegaMessage.Line), cut to causeLen
// characters.
func cause(msg string) string { return truncate(readGomega(msg).Line(), causeLen) }

// InterruptedReason picks, from Ginkgo's special suite failure reasons (JUnit property
// SpecialSuiteFailureReason, JSON SpecialSuiteFailureReasons), the one that means the run
// stopped early: a signal (Ctrl-C), another process aborting, or the suite timeout. "" when
// none does, e.g. a run that only failed specs.
func InterruptedReason(reasons []string) string {
	for _, r := range reasons {
		r = strings.TrimSpace(r)
		if strings.HasPrefix(r, "Interrupted") || r == "Suite Timeout Elapsed" {
			return r
		}
	}
	return ""
}
