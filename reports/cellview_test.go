package reports

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"
)

// verdictMatrix has one column ("col") with a cell of every verdict, by row ID.
func verdictMatrix() (*Matrix, map[string]CellVerdict) {
	want := map[string]CellVerdict{
		"D1": VerdictPass, "D2": VerdictFailMust, "D4": VerdictFailShould, "D3": VerdictUnknown,
		"A1": VerdictNotSelected, "T3": VerdictSkip, "R6": VerdictNotRun,
	}
	run := &Run{File: "ginkgo-col.json", Label: "col", Cases: []Case{
		{ID: "D1", Status: Pass, Duration: 1500000},
		{ID: "D2", Status: Fail, Message: "lost m3"},
		{ID: "D4", Status: Fail, Message: "out of order"},
		{ID: "D3", Status: Unknown, Message: "the history overflowed"},
		{ID: "A1", Status: Skip, NotSelected: true, Message: "not selected by this run's filter x"},
		{ID: "T3", Status: Skip, Message: "backend lacks retention-expiry"},
		{ID: "R6", Status: NotRun, Message: "the run was interrupted"},
	}}
	return Build([]*Run{run}), want
}

// inverse reads a rendered cell back to its verdict: the verdict whose spelling (by get) is the
// longest prefix of text; "" when none is.
func inverse(text string, get func(spelling) string) CellVerdict {
	var best CellVerdict
	n := -1
	for v, sp := range spellings {
		if w := get(sp); strings.HasPrefix(text, w) && len(w) > n {
			best, n = v, len(w)
		}
	}
	return best
}

// The three renderers agree on every verdict: each cell of each output reads back (by that
// output's spelling) to the verdict the view model decided, and the decision is the one
// intended for the cell. A renderer that decided a cell on its own would read back wrong.
func TestRenderersAgreeOnEveryVerdict(t *testing.T) {
	m, want := verdictMatrix()
	covered := map[CellVerdict]bool{}
	for _, r := range m.Rows {
		w, ok := want[r.Key]
		if !ok {
			continue
		}
		if got := ViewCell(r.Cells[0], r, 0).Verdict; got != w {
			t.Errorf("%s: view verdict %s, want %s", r.Key, got, w)
		}
		covered[w] = true
	}
	for _, v := range Verdicts {
		if !covered[v] {
			t.Errorf("verdict %s: no cell of the test matrix has it", v)
		}
		if _, ok := spellings[v]; !ok {
			t.Errorf("verdict %s has no spelling", v)
		}
	}

	var term, md, page bytes.Buffer
	if err := Terminal(&term, m, Options{Width: 120}); err != nil {
		t.Fatal(err)
	}
	if err := Markdown(&md, m, Options{}); err != nil {
		t.Fatal(err)
	}
	if err := HTML(&page, m, Options{}); err != nil {
		t.Fatal(err)
	}

	// Terminal: the cell is the column under the label "col" in the header.
	lines := strings.Split(term.String(), "\n")
	at := -1
	for _, l := range lines {
		if strings.HasPrefix(l, "ID ") {
			at = utf8.RuneCountInString(l[:strings.Index(l, " col")+1])
			break
		}
	}
	if at < 0 {
		t.Fatalf("no header in\n%s", term.String())
	}
	termCells := map[string]string{}
	for _, l := range lines {
		if f := strings.Fields(l); len(f) > 0 && want[f[0]] != "" && utf8.RuneCountInString(l) > at {
			termCells[f[0]] = strings.TrimSpace(string([]rune(l)[at:]))
		}
	}
	// Markdown: the last cell of the row.
	mdCells := map[string]string{}
	for _, l := range strings.Split(md.String(), "\n") {
		if f := strings.Split(l, " | "); strings.HasPrefix(l, "| ") && len(f) > 3 {
			id := strings.TrimPrefix(f[0], "| ")
			mdCells[id] = strings.TrimSuffix(f[len(f)-1], " |")
		}
	}
	// HTML: the word of the row's cell.
	htmlCells := map[string]string{}
	for _, tr := range strings.Split(page.String(), `<tr class="spec" data-id="`)[1:] {
		id, rest, _ := strings.Cut(tr, `"`)
		_, rest, _ = strings.Cut(rest, `<span class="word">`)
		htmlCells[id], _, _ = strings.Cut(rest, "</span>")
	}
	for id, w := range want {
		if got := inverse(termCells[id], func(s spelling) string { return s.term }); got != w {
			t.Errorf("terminal %s: %q reads as %q, want %s", id, termCells[id], got, w)
		}
		if got := inverse(mdCells[id], func(s spelling) string { return s.md }); got != w {
			t.Errorf("markdown %s: %q reads as %q, want %s", id, mdCells[id], got, w)
		}
		if htmlCells[id] != spellings[w].html {
			t.Errorf("html %s: word %q, want %q (%s)", id, htmlCells[id], spellings[w].html, w)
		}
	}
	// The terminal's lines under the table name each cell that is neither a pass nor a failure
	// (failures are findings) by the same verdict.
	for id, w := range want {
		if w == VerdictPass || w == VerdictFailMust || w == VerdictFailShould {
			continue
		}
		note := "col " + id + " " + spellings[w].note + ": "
		if !strings.Contains(term.String(), note) {
			t.Errorf("terminal lacks the line %q:\n%s", note, term.String())
		}
	}
	if !strings.Contains(term.String(), "col D2 FAIL: lost m3") || !strings.Contains(term.String(), "col D4 FAIL (SHOULD): out of order") {
		t.Errorf("terminal lacks the failures' lines:\n%s", term.String())
	}
}

// Every output spells the verdicts apart: no two verdicts share a word in any of them.
func TestVerdictSpellingsAreDistinct(t *testing.T) {
	for name, get := range map[string]func(spelling) string{
		"term": func(s spelling) string { return s.term }, "note": func(s spelling) string { return s.note },
		"md": func(s spelling) string { return s.md }, "html": func(s spelling) string { return s.html },
	} {
		seen := map[string]CellVerdict{}
		for _, v := range Verdicts {
			w := get(spellings[v])
			if o, dup := seen[w]; dup {
				t.Errorf("%s: %s and %s are both %q", name, o, v, w)
			}
			seen[w] = v
		}
	}
}

// The HTML page marks a failed SHOULD apart from a failed MUST (class should, data-level) and
// no other cell: a MUST failure styled as a SHOULD one would read as a finding, not a breach.
func TestHTMLMarksOnlyTheShouldFailure(t *testing.T) {
	m, want := verdictMatrix()
	var page bytes.Buffer
	if err := HTML(&page, m, Options{}); err != nil {
		t.Fatal(err)
	}
	for _, tr := range strings.Split(page.String(), `<tr class="spec" data-id="`)[1:] {
		id, rest, _ := strings.Cut(tr, `"`)
		_, rest, _ = strings.Cut(rest, `<td class="cell`)
		cell, _, _ := strings.Cut(rest, ">")
		marked := strings.Contains(cell, `data-level="SHOULD"`) && strings.Contains(cell, " should")
		if marked != (want[id] == VerdictFailShould) {
			t.Errorf("%s (%s): marked as a SHOULD failure: %v\n%s", id, want[id], marked, cell)
		}
	}
}
