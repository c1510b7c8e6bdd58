package reports

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"
)

// A duration reads in the unit it reaches, from the unit's first value on: exactly 1 ms is
// "1ms", exactly 1 s "1.0s", exactly a minute "1m0s"; nothing (zero or less) is blank.
func TestFmtDurationUnitsFromTheirFirstValue(t *testing.T) {
	for d, want := range map[time.Duration]string{
		-time.Second:                          "",
		0:                                     "",
		time.Nanosecond:                       "<1ms",
		time.Millisecond - 1:                  "<1ms",
		time.Millisecond:                      "1ms",
		999 * time.Millisecond:                "999ms",
		time.Second:                           "1.0s",
		59*time.Second + 940*time.Millisecond: "59.9s",
		time.Minute:                           "1m0s",
		90*time.Second + 400*time.Millisecond: "1m30s",
	} {
		if got := fmtDuration(d); got != want {
			t.Errorf("fmtDuration(%v) = %q, want %q", d, got, want)
		}
	}
	for s, want := range map[float64]string{0: "", -1: "", 0.0005: "<1ms", 1: "1.0s", 75.5: "1m16s"} {
		if got := fmtSeconds(s); got != want {
			t.Errorf("fmtSeconds(%v) = %q, want %q", s, got, want)
		}
	}
}

// Milliseconds: three decimals below 1 ms, one below 100 ms, none from 100 ms on; a ratio
// of nothing is "-".
func TestFmtMsAndRatioBoundaries(t *testing.T) {
	for v, want := range map[float64]string{
		-1: "-", 0: "-", 0.0004: "0.000 ms", 0.25: "0.250 ms", 1: "1.0 ms", 99.94: "99.9 ms", 100: "100 ms", 1234.4: "1234 ms",
	} {
		if got := fmtMs(v); got != want {
			t.Errorf("fmtMs(%v) = %q, want %q", v, got, want)
		}
	}
	for r, want := range map[float64]string{-0.5: "-", 0: "-", 0.001: "0.00x", 1: "1.00x"} {
		if got := fmtRatio(r); got != want {
			t.Errorf("fmtRatio(%v) = %q, want %q", r, got, want)
		}
	}
}

// What a spec wrote is cut to its last n lines with a count of the rest; exactly n lines is
// whole, with no marker.
func TestTailLinesKeepsExactlyN(t *testing.T) {
	lines := func(n int) string {
		var s []string
		for i := 1; i <= n; i++ {
			s = append(s, fmt.Sprintf("l%d", i))
		}
		return strings.Join(s, "\n")
	}
	if got := tailLines(lines(3), 3); got != "l1\nl2\nl3" {
		t.Errorf("3 lines of 3: %q", got)
	}
	if got := tailLines(lines(4), 3); got != "... (1 lines before)\nl2\nl3\nl4" {
		t.Errorf("4 lines of 3: %q", got)
	}
}

// A failed cell's full failure on the page is its failed entry's, never the detail an entry
// that passed or skipped before it carries.
func TestHTMLDetailIsTheFailedEntrys(t *testing.T) {
	m := Build([]*Run{{File: "a", Label: "k", Cases: []Case{
		{ID: "D7", Text: "on deadline", Status: Skip, Message: "lacks x", Detail: "skipped\n\nnot the failure"},
		{ID: "D7", Text: "on cancel", Status: Fail, Message: "late", Detail: "late\n\nhistory: 3 calls"},
	}}})
	var buf bytes.Buffer
	if err := HTML(&buf, m, Options{}); err != nil {
		t.Fatal(err)
	}
	if page := buf.String(); !strings.Contains(page, "<pre>late\n\nhistory: 3 calls</pre>") || strings.Contains(page, "<pre>skipped") {
		t.Errorf("page shows another entry's detail:\n%s", page)
	}
}

// A column label cut to 5 runes keeps its start and its end, as longer cuts do; below 5 it
// keeps only its start.
func TestMidTruncateFromFiveRunes(t *testing.T) {
	if got := midTruncate("kafka+isolated", 5); got != "ka…ed" {
		t.Errorf("midTruncate to 5: %q", got)
	}
	if got := midTruncate("kafka+isolated", 4); got != "kaf…" {
		t.Errorf("midTruncate to 4: %q", got)
	}
}

// A matrix with nothing to note (every cell passed) has no empty notes block: one blank line
// between the table and the legend.
func TestTerminalWithoutNotesHasNoEmptyBlock(t *testing.T) {
	m := Build([]*Run{{File: "a", Label: "k", Meta: &Meta{Backend: "k"}, Cases: []Case{{ID: "D1", Status: Pass}}}})
	var buf bytes.Buffer
	if err := Terminal(&buf, m, Options{}); err != nil {
		t.Fatal(err)
	}
	if out := buf.String(); strings.Contains(out, "\n\n\n") || !strings.Contains(out, "\n\n(FAIL: a MUST failed") {
		t.Errorf("terminal:\n%q", out)
	}
}

// A cell that did not run (here: a table whose second entry never started) shows no duration
// in the terminal, though its first entry took time; a passing cell shows its own.
func TestTerminalNotRunCellHasNoDuration(t *testing.T) {
	m := Build([]*Run{{File: "a", Label: "k", Meta: &Meta{Backend: "k"}, Cases: []Case{
		{ID: "D7", Text: "on cancel", Status: Pass, Duration: 2 * time.Second},
		{ID: "D7", Text: "on deadline", Status: NotRun, Message: "interrupted"},
		{ID: "D1", Status: Pass, Duration: 3 * time.Second},
	}}})
	if c := m.Cell("D7", "k"); c == nil || c.Status != NotRun || c.Duration != 2*time.Second {
		t.Fatalf("D7 cell %+v", c)
	}
	var buf bytes.Buffer
	if err := Terminal(&buf, m, Options{}); err != nil {
		t.Fatal(err)
	}
	if out := buf.String(); strings.Contains(out, "2.0s") || !strings.Contains(out, "3.0s") {
		t.Errorf("terminal:\n%s", out)
	}
}

// Setup failures for the terminal: process 1's own failure once, the other processes' echoes
// of it left out; only echoes keep one of them.
func TestSetupFailuresLeaveOutEchoes(t *testing.T) {
	own := Case{Setup: true, NodeType: "SynchronizedBeforeSuite", Status: Fail, Message: "broker did not start"}
	echo := Case{Setup: true, NodeType: "SynchronizedBeforeSuite", Status: Fail, Message: "\x1b[1mSynchronizedBeforeSuite failed on Ginkgo parallel process #1\x1b[0m"}
	if got := setupFailures(&Backend{Setup: []Case{echo, own, echo}}); len(got) != 1 || got[0].Message != own.Message {
		t.Errorf("own and echoes: %+v", got)
	}
	if got := setupFailures(&Backend{Setup: []Case{echo, echo}}); len(got) != 1 || got[0].Message != "SynchronizedBeforeSuite failed on Ginkgo parallel process #1" {
		t.Errorf("echoes only: %+v", got)
	}
}
