package reports

// Message un-parsing: what a spec's failure or skip text says, for reports that carry nothing
// else (foreign JUnit and Ginkgo files), and the one-line cause of a failure (cause), which the
// suite's structured result (Result) takes from here too.

import (
	"regexp"
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

// cause is the one-line cause of a failure message: its first line, except that Gomega's
// multi-line shapes, whose first line alone says little, are folded into one line:
//
//	"desc\nUnexpected error:\n    <*T | 0x..>: \n    the error"   -> "desc: the error"
//	"Expected\n    <T>: a\nto equal\n    <T>: b"                 -> "Expected a to equal b"
//	"Timed out after 10.001s.\ndesc\nExpected..."               -> "Timed out after 10.001s: desc"
func cause(msg string) string {
	var lines []string
	for _, l := range strings.Split(msg, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		return ""
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
	limit := func(s string) string { return truncate(s, 300) }
	first := lines[0]
	for k, l := range lines {
		if l == "Unexpected error:" {
			v, _ := value(k + 1)
			if k == 0 {
				return limit("unexpected error: " + v)
			}
			return limit(strings.TrimSuffix(lines[k-1], ":") + ": " + v)
		}
	}
	if strings.HasPrefix(first, "Timed out after ") || strings.HasPrefix(first, "Failed after ") {
		if len(lines) > 1 && lines[1] != "Expected" && !strings.HasPrefix(lines[1], "<") {
			return limit(strings.TrimSuffix(first, ".") + ": " + lines[1])
		}
		return limit(first)
	}
	if first == "Expected" && len(lines) > 2 {
		got, next := value(1)
		// Skip a struct dump ("{ ... }") to the matcher line ("to equal", "not to be nil").
		for ; next < len(lines); next++ {
			if strings.HasPrefix(lines[next], "to ") || strings.HasPrefix(lines[next], "not to ") {
				want, _ := value(next + 1)
				return limit(strings.TrimSpace("Expected " + got + " " + lines[next] + " " + want))
			}
		}
		return limit("Expected " + got)
	}
	return limit(first)
}

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
