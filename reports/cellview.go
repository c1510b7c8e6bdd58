package reports

// One cell-verdict view model for every renderer: what a matrix cell is (its Verdict) is
// decided here once, from the cell and its row, and the terminal table, the Markdown matrix and
// the HTML page only spell it. So "not selected", a SHOULD failure or an unknown result cannot
// read differently in two outputs.

import "strconv"

// CellVerdict is what a cell says, in the order the decision takes: a failure (by the row's
// level), an unknown result, a spec the run did not select, a skip, not run, a pass.
type CellVerdict string

const (
	VerdictPass        CellVerdict = "pass"
	VerdictFailMust    CellVerdict = "fail"        // a MUST (or a row without a level) failed
	VerdictFailShould  CellVerdict = "should-fail" // a SHOULD failed: a finding, not a breach
	VerdictUnknown     CellVerdict = "unknown"     // the checkers could not vouch (Unknown)
	VerdictNotSelected CellVerdict = "not-selected"
	VerdictSkip        CellVerdict = "skip"
	VerdictNotRun      CellVerdict = "not-run"
)

// Verdicts lists every CellVerdict (tests hold each renderer to all of them).
var Verdicts = []CellVerdict{VerdictPass, VerdictFailMust, VerdictFailShould, VerdictUnknown, VerdictNotSelected, VerdictSkip, VerdictNotRun}

// verdictOf decides what c, a cell of row r, is: the one place that does.
func verdictOf(c *Cell, r *Row) CellVerdict {
	switch {
	case c.Status == Fail && r.Must():
		return VerdictFailMust
	case c.Status == Fail:
		return VerdictFailShould
	case c.Status == Unknown:
		return VerdictUnknown
	case c.Status == Skip && c.NotSelected:
		return VerdictNotSelected
	case c.Status == Skip:
		return VerdictSkip
	case c.Status == NotRun:
		return VerdictNotRun
	}
	return VerdictPass
}

// spelling is how each output writes a verdict.
type spelling struct {
	term   string // the terminal table's cell word
	colour string // its ANSI colour
	note   string // the word of the terminal's line under the table
	md     string // the Markdown cell's start (icon and word)
	html   string // the HTML cell's word
}

var spellings = map[CellVerdict]spelling{
	VerdictPass:        {"PASS", ansiGreen, "PASS", "✅ pass", "PASS"},
	VerdictFailMust:    {"FAIL", ansiRed, "FAIL", "❌ fail", "FAIL"},
	VerdictFailShould:  {"FAIL(S)", ansiMagenta, "FAIL (SHOULD)", "⚠️ SHOULD fail", "SHOULD FAIL"},
	VerdictUnknown:     {"UNKNOWN", ansiCyan, "UNKNOWN", "❔ unknown", "UNKNOWN"},
	VerdictNotSelected: {"n/s", ansiGrey, "NOT-SELECTED", "➖", "NOT SELECTED"},
	VerdictSkip:        {"skip", ansiYellow, "SKIP", "⏭️ skip", "SKIP"},
	VerdictNotRun:      {"--", ansiGrey, "NOT-RUN", "➖ not run", "NOT RUN"},
}

// CellView is one cell as every renderer shows it.
type CellView struct {
	Verdict CellVerdict
	Status  Status // the cell's status (the HTML class and data-status)
	// Summary: a failure's cause, the reasons of a skip, why a spec was not selected, did not
	// run or is unknown; "" for a pass.
	Summary string
	// Duration: the cell's run time as shown ("" when it has none or did not run).
	Duration string
	// Finding: the number of the finding (Matrix.Findings) a failure belongs to; 0 none.
	Finding int
}

// ViewCell is the view of c, the cell of row r; finding is its finding's number (0 none).
func ViewCell(c *Cell, r *Row, finding int) CellView {
	v := CellView{Verdict: verdictOf(c, r), Status: c.Status}
	if v.Verdict != VerdictPass {
		v.Summary = c.Summary()
	}
	if v.Verdict != VerdictNotRun && v.Verdict != VerdictNotSelected {
		v.Duration = fmtDuration(c.Duration)
	}
	if c.Status == Fail {
		v.Finding = finding
	}
	return v
}

// Failed reports whether the cell is a failure of either level.
func (v CellView) Failed() bool {
	return v.Verdict == VerdictFailMust || v.Verdict == VerdictFailShould
}

// Should reports whether the cell is a failed SHOULD.
func (v CellView) Should() bool { return v.Verdict == VerdictFailShould }

// NoResult reports whether the cell gave no result for a reason it shares with others (not run,
// not selected): the terminal lists those per cause, not per behaviour.
func (v CellView) NoResult() bool {
	return v.Verdict == VerdictNotRun || v.Verdict == VerdictNotSelected
}

// TermWord is the terminal table's word for the cell, with its finding ("FAIL#2").
func (v CellView) TermWord() string {
	w := spellings[v.Verdict].term
	if v.Finding > 0 {
		w += "#" + strconv.Itoa(v.Finding)
	}
	return w
}

// TermColour is the ANSI colour of the terminal cell.
func (v CellView) TermColour() string { return spellings[v.Verdict].colour }

// NoteWord is the word of the terminal's line about the cell under the table.
func (v CellView) NoteWord() string { return spellings[v.Verdict].note }

// MarkdownText is the Markdown cell: icon, word, finding, duration, summary.
func (v CellView) MarkdownText() string {
	s := spellings[v.Verdict].md
	if v.Finding > 0 {
		s += " (finding #" + strconv.Itoa(v.Finding) + ")"
	}
	if v.Duration != "" && (v.Verdict == VerdictPass || v.Failed() || v.Verdict == VerdictUnknown) {
		s += " " + v.Duration
	}
	switch v.Verdict {
	case VerdictPass:
	case VerdictNotSelected:
		s += " " + truncate(v.Summary, 120)
	case VerdictNotRun:
		s += ": " + truncate(v.Summary, 120)
	default:
		s += ": " + truncate(v.Summary, 160)
	}
	return s
}

// HTMLWord is the HTML cell's word.
func (v CellView) HTMLWord() string { return spellings[v.Verdict].html }
