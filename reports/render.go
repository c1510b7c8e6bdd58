package reports

import (
	"fmt"
	"io"
	"regexp"
	"strings"
	"unicode/utf8"
)

// Options tune the rendered outputs.
type Options struct {
	// Baseline, when set, marks cells whose result differs from the accepted one.
	Baseline *Baseline
	// Color enables ANSI colours in the terminal table (only when stdout is a terminal).
	Color bool
	// Width is the terminal table's maximum width; 0 means 120.
	Width int
	// Bench results (bench-*.json) for the Performance section; none means no section.
	Bench []*Bench
	// BenchChart is the latency chart's path relative to the Markdown file ("" = none).
	BenchChart string
}

// accepted returns the accepted result for a cell, or "" when there is no baseline entry.
func (o Options) accepted(backend, key string) Status {
	if o.Baseline == nil {
		return ""
	}
	return o.Baseline.Backends[backend][key].Result
}

// differs reports whether a baseline exists for the cell and disagrees with it. A cell the run
// did not select agrees: what a run left out is never a difference (the gate's rule).
func (o Options) differs(backend, key string, c *Cell) (Status, bool) {
	a := o.accepted(backend, key)
	return a, a != "" && a != c.Status && !c.NotSelected
}

func (b *Backend) displayLabel() string {
	if b.Reference() {
		return b.Label + " (reference)"
	}
	return b.Label
}

func (b *Backend) countsText() string {
	s := fmt.Sprintf("%d pass, %d fail, %d skip, %d not run", b.Counts[Pass], b.Counts[Fail], b.Counts[Skip], b.Counts[NotRun])
	if n := b.Counts[Unknown]; n > 0 {
		s += fmt.Sprintf(", %d unknown", n)
	}
	return s
}

func (b *Backend) provider() string {
	if b.Meta == nil {
		return ""
	}
	return b.Meta.Provider
}

func (b *Backend) brokerVersion() string {
	if b.Meta == nil {
		return ""
	}
	return b.Meta.BrokerVersion
}

// Markdown writes the matrix as GitHub-flavoured Markdown.
func Markdown(w io.Writer, m *Matrix, o Options) error {
	var sb strings.Builder
	sb.WriteString("# Conformance: behaviour x backend\n\n")
	if note := m.InterruptedNote(); note != "" {
		sb.WriteString("> **" + mdEscape(note) + "**\n\n")
	}
	sb.WriteString("| Backend | Provider | Broker | Broker startup | Suite time | Results | Verdict |\n|---|---|---|---|---|---|---|\n")
	for i, b := range m.Backends {
		results := b.countsText()
		if b.Reference() {
			results += " - reference backend, not a conformance result"
		}
		fmt.Fprintf(&sb, "| %s | %s | %s | %s | %s | %s | %s |\n", mdEscape(b.displayLabel()), mdEscape(b.provider()),
			mdEscape(b.brokerVersion()), mdEscape(b.Meta.StartupList()), fmtSeconds(b.SuiteSeconds), results, mdEscape(m.Verdict(i).String()))
	}
	sb.WriteString("\nA failed MUST (❌) breaks TrustGraph's contract; a failed SHOULD (⚠️) is a finding beyond it (reports/catalogue.md has each level's source).\n")
	if unknownCells(m) {
		sb.WriteString("❔ unknown: the spec passed but its checkers could not vouch for the run (its history overflowed); not a pass.\n")
	}
	findings := make([][]Finding, len(m.Backends))
	numbers := make([]map[string]int, len(m.Backends))
	for i := range m.Backends {
		findings[i] = m.Findings(i)
		numbers[i] = FindingNumbers(findings[i])
	}
	sb.WriteString("\n| ID | Level | Behaviour |")
	for _, b := range m.Backends {
		sb.WriteString(" " + mdEscape(b.displayLabel()) + " |")
	}
	sb.WriteString("\n|---|---|---|" + strings.Repeat("---|", len(m.Backends)) + "\n")
	for _, r := range m.Rows {
		fmt.Fprintf(&sb, "| %s | %s | %s |", mdEscape(r.ID), r.Level, mdEscape(r.Title))
		for i, c := range r.Cells {
			text := ViewCell(c, r, numbers[i][r.Key]).MarkdownText()
			if a, ok := o.differs(m.Backends[i].Label, r.Key, c); ok {
				text += fmt.Sprintf(" (baseline: %s)", a)
			}
			sb.WriteString(" " + mdEscape(text) + " |")
		}
		sb.WriteString("\n")
	}
	sb.WriteString(findingsMarkdown(m, findings))
	var setup []string
	for _, b := range m.Backends {
		for _, s := range b.Setup {
			if s.Status == Fail {
				setup = append(setup, fmt.Sprintf("- **%s** %s failed: %s", mdEscape(b.Label), s.SetupName(), mdEscape(s.Message)))
			}
		}
	}
	if len(setup) > 0 {
		sb.WriteString("\n## Suite setup failures\n\n" + strings.Join(setup, "\n") + "\n")
	}
	var settings []string
	for _, b := range m.Backends {
		if s := b.Meta.SettingsList(); len(s) > 0 {
			settings = append(settings, fmt.Sprintf("- **%s**: `%s`", mdEscape(b.Label), strings.Join(s, " ")))
		}
	}
	if len(settings) > 0 {
		sb.WriteString("\n## Backend settings\n\n" + strings.Join(settings, "\n") + "\n")
	}
	sb.WriteString(PerformanceMarkdown(o.Bench, o.BenchChart))
	_, err := io.WriteString(w, sb.String())
	return err
}

// findingsMarkdown is the section of findings: per backend, its failures grouped by cause.
func findingsMarkdown(m *Matrix, findings [][]Finding) string {
	var sb strings.Builder
	for i, b := range m.Backends {
		fs := findings[i]
		if len(fs) == 0 {
			continue
		}
		failed := 0
		for _, f := range fs {
			failed += len(f.IDs)
		}
		if sb.Len() == 0 {
			sb.WriteString("\n## Findings: failures that share a cause\n\nEach finding is one cause (the failure text with topic names, ids and durations normalised, the failing call, what the client logged); the matrix cells carry its number.\n")
		}
		fmt.Fprintf(&sb, "\n### %s: %s behind %s\n\n| # | Level | Specs | First | Cause | Failing calls |\n|---|---|---|---|---|---|\n",
			mdEscape(b.Label), plural(len(fs), "finding"), plural(failed, "failed spec"))
		for _, f := range fs {
			level := "MUST"
			if !f.Must {
				level = "SHOULD"
			}
			fmt.Fprintf(&sb, "| %d | %s | %d: %s | %s | %s: %s | %s |\n", f.N, level, len(f.IDs), strings.Join(f.IDs, " "),
				f.First, f.Cause.Kind, mdEscape(truncate(f.Cause.Clue, 240)), mdEscape(f.CallList()))
		}
	}
	return sb.String()
}

func mdEscape(s string) string {
	s = strings.ReplaceAll(s, "\r", " ")
	s = strings.ReplaceAll(s, "\n", " ")
	s = strings.ReplaceAll(s, "|", `\|`)
	return s
}

// truncate cuts s to at most n runes, marking the cut.
func truncate(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	if n == 1 {
		return "…"
	}
	return string(r[:n-1]) + "…"
}

// sharedPrefix is the start every label shares, up to and including its last '-' (a whole
// word), or "".
func sharedPrefix(labels []string) string {
	if len(labels) == 0 {
		return ""
	}
	p := labels[0]
	for _, l := range labels[1:] {
		n := 0
		for n < len(p) && n < len(l) && p[n] == l[n] {
			n++
		}
		p = p[:n]
	}
	if i := strings.LastIndex(p, "-"); i >= 0 {
		return p[:i+1]
	}
	return ""
}

// midTruncate cuts s to n runes in the middle, keeping its start and end: column labels that
// share a start ("trustgraph-kafka", "trustgraph-kafka+isolated") stay apart.
func midTruncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n || n < 5 {
		return truncate(s, n)
	}
	head := (n - 1) / 2
	tail := n - 1 - head
	return string(r[:head]) + "…" + string(r[len(r)-tail:])
}

func pad(s string, n int) string {
	s = truncate(s, n)
	return s + strings.Repeat(" ", n-utf8.RuneCountInString(s))
}

const (
	ansiReset   = "\x1b[0m"
	ansiGreen   = "\x1b[32m"
	ansiRed     = "\x1b[31m"
	ansiYellow  = "\x1b[33m"
	ansiGrey    = "\x1b[90m"
	ansiMagenta = "\x1b[35m"
	ansiCyan    = "\x1b[36m"
)

// Terminal writes the matrix as a plain-text table that fits o.Width (default 120) columns,
// followed by one line per failure, skip and not-run cell with its cause or reason.
func Terminal(w io.Writer, m *Matrix, o Options) error {
	width := o.Width
	if width <= 0 {
		width = 120
	}
	const idW, cellMin, cellMax = 4, 12, 15
	cellW := cellMin
	for _, b := range m.Backends {
		if l := utf8.RuneCountInString(b.Label); l > cellW {
			cellW = min(l, cellMax)
		}
	}
	// Too many backends for one table of width columns: split them over several tables,
	// each keeping the behaviour names readable.
	const titleMin = 24
	perTable := max(1, (width-idW-1-titleMin)/(cellW+1))
	findings := make([][]Finding, len(m.Backends))
	numbers := make([]map[string]int, len(m.Backends))
	for i := range m.Backends {
		findings[i] = m.Findings(i)
		numbers[i] = FindingNumbers(findings[i])
	}
	var sb strings.Builder
	if note := m.InterruptedNote(); note != "" {
		sb.WriteString(note + "\n\n")
	}
	for start := 0; start < len(m.Backends) || start == 0; start += perTable {
		end := min(start+perTable, len(m.Backends))
		if start > 0 {
			sb.WriteString("\n")
		}
		terminalTable(&sb, m, o, numbers, start, end, width, idW, cellW)
		if end >= len(m.Backends) {
			break
		}
	}
	var notes []string
	// Behaviours not run for one shared cause (a failed or interrupted setup) get one line per
	// backend and cause, not one per behaviour: the cause once, plainly.
	type group struct {
		at   int
		keys []string
	}
	notRun := map[string]*group{}
	var notRunOrder []string
	for _, r := range m.Rows {
		for i, c := range r.Cells {
			v := ViewCell(c, r, 0)
			if v.Verdict == VerdictPass {
				continue
			}
			key := r.Key
			if r.ID == "" {
				key = "(" + truncate(r.Key, 30) + ")"
			}
			if v.NoResult() {
				g := m.Backends[i].Label + "\x00" + v.NoteWord() + "\x00" + v.Summary
				if notRun[g] == nil {
					notRun[g] = &group{at: len(notes)}
					notRunOrder = append(notRunOrder, g)
					notes = append(notes, "")
				}
				notRun[g].keys = append(notRun[g].keys, key)
				continue
			}
			if v.Failed() {
				continue // one line per finding, below
			}
			notes = append(notes, truncate(fmt.Sprintf("%s %s %s: %s", m.Backends[i].Label, key, v.NoteWord(), v.Summary), width))
		}
	}
	// Failures: one finding per cause (Matrix.Findings), not one line per failed behaviour.
	for i, b := range m.Backends {
		for _, f := range findings[i] {
			if len(f.IDs) == 1 {
				word := spellings[VerdictFailMust].note
				if !f.Must {
					word = spellings[VerdictFailShould].note
				}
				notes = append(notes, truncate(fmt.Sprintf("%s %s %s: %s", b.Label, f.First, word, f.Message), width))
				continue
			}
			detail := "    blocks " + f.SpecList(24)
			if calls := f.CallList(); calls != "" {
				detail += "; failing calls: " + calls
			}
			notes = append(notes, truncate(b.Label+" finding "+f.Summary(), width), truncate(detail, width))
		}
	}
	for _, g := range notRunOrder {
		parts := strings.SplitN(g, "\x00", 3)
		label, word, why := parts[0], parts[1], parts[2]
		keys := strings.Join(notRun[g].keys, " ")
		if n := len(notRun[g].keys); n > 3 {
			keys = fmt.Sprintf("%d behaviours", n)
		}
		notes[notRun[g].at] = truncate(fmt.Sprintf("%s %s %s: %s", label, keys, word, why), width)
	}
	sb.WriteString("\n")
	for bi, b := range m.Backends {
		line := b.Label + ": " + b.countsText()
		if b.Reference() {
			line += " (reference backend, not a conformance result)"
		}
		var extra []string
		if p := b.provider(); p != "" {
			extra = append(extra, "provider "+p)
		}
		if v := b.brokerVersion(); v != "" {
			extra = append(extra, "broker "+v)
		}
		if s := b.Meta.StartupList(); s != "" {
			extra = append(extra, "startup "+s)
		}
		if s := fmtSeconds(b.SuiteSeconds); s != "" {
			extra = append(extra, "suite "+s)
		}
		if len(extra) > 0 {
			line += "; " + strings.Join(extra, ", ")
		}
		sb.WriteString(truncate(line, width) + "\n")
		verdict := b.Label + ": " + m.Verdict(bi).String()
		if n := len(findings[bi]); n > 0 {
			verdict += fmt.Sprintf("; the failures have %s", plural(n, "cause"))
		}
		sb.WriteString(truncate(verdict, width) + "\n")
		for _, s := range setupFailures(b) {
			sb.WriteString(truncate(fmt.Sprintf("%s %s FAILED: %s", b.Label, s.SetupName(), s.Message), width) + "\n")
		}
	}
	if len(notes) > 0 {
		sb.WriteString("\n" + strings.Join(notes, "\n") + "\n")
	}
	sb.WriteString("\n(FAIL: a MUST failed; FAIL(S): a SHOULD failed, stronger than TrustGraph requires; n/s: not selected)\n")
	if unknownCells(m) {
		sb.WriteString("(UNKNOWN: the spec passed but its checkers could not vouch for the run - its history overflowed; not a pass)\n")
	}
	sb.WriteString("(FAIL#n: finding n below: failures of one column that share a cause)\n")
	if o.Baseline != nil {
		sb.WriteString("(!p/!s/!f: differs from the accepted baseline result pass/skip/fail)\n")
	}
	_, err := io.WriteString(w, sb.String())
	return err
}

// terminalTable writes the rows for backends [from, to) as one plain-text table.
func terminalTable(sb *strings.Builder, m *Matrix, o Options, numbers []map[string]int, from, to, width, idW, cellW int) {
	bs := m.Backends[from:to]
	titleW := max(12, width-idW-1-len(bs)*(cellW+1))
	// Labels too long for a column lose the start they all share ("trustgraph-"), said once.
	var labels []string
	for _, b := range bs {
		labels = append(labels, b.Label)
	}
	prefix := sharedPrefix(labels)
	long := false
	for _, l := range labels {
		long = long || utf8.RuneCountInString(l) > cellW
	}
	if !long || len(bs) < 2 {
		prefix = ""
	}
	if prefix != "" {
		sb.WriteString("(columns: " + prefix + "…)\n")
	}
	sb.WriteString(pad("ID", idW) + " " + pad("Behaviour", titleW))
	for _, b := range bs {
		label := strings.TrimPrefix(b.Label, prefix)
		if b.Reference() {
			label = "(" + label + ")"
		}
		sb.WriteString(" " + pad(midTruncate(label, cellW), cellW))
	}
	sb.WriteString("\n" + strings.Repeat("-", min(width, idW+1+titleW+len(bs)*(cellW+1))) + "\n")
	for _, r := range m.Rows {
		title := r.Title
		if r.ID == "" {
			title = r.Key
		}
		sb.WriteString(pad(r.ID, idW) + " " + pad(title, titleW))
		for i, c := range r.Cells[from:to] {
			b := bs[i]
			v := ViewCell(c, r, numbers[from+i][r.Key]) // a finding is listed below the table
			text := v.TermWord()
			mark := ""
			if a, ok := o.differs(b.Label, r.Key, c); ok {
				mark = " !" + string(a[0])
			}
			if d := v.Duration; d != "" && utf8.RuneCountInString(text+mark)+1+utf8.RuneCountInString(d) <= cellW {
				text += " " + d
			}
			text += mark
			cell := pad(text, cellW)
			if o.Color {
				cell = v.TermColour() + cell + ansiReset
			}
			sb.WriteString(" " + cell)
		}
		sb.WriteString("\n")
	}
}

var ansiEscape = regexp.MustCompile(`\x1b\[[0-9;]*m`)

// setupFailures are b's failed suite nodes for the terminal, each cause once: the other Ginkgo
// processes only echo process 1's failure ("SynchronizedBeforeSuite failed on Ginkgo parallel
// process #1", in terminal colours), which says nothing new when process 1's own is there.
func setupFailures(b *Backend) []Case {
	var out []Case
	seen := map[string]bool{}
	echoes := 0
	for _, s := range b.Setup {
		if s.Status != Fail {
			continue
		}
		s.Message = ansiEscape.ReplaceAllString(s.Message, "")
		if strings.Contains(s.Message, "failed on Ginkgo parallel process #") {
			echoes++
			continue
		}
		if !seen[s.SetupName()+s.Message] {
			seen[s.SetupName()+s.Message] = true
			out = append(out, s)
		}
	}
	if len(out) == 0 && echoes > 0 { // only echoes: keep one, it is all there is
		for _, s := range b.Setup {
			if s.Status == Fail {
				s.Message = ansiEscape.ReplaceAllString(s.Message, "")
				return append(out, s)
			}
		}
	}
	return out
}

// unknownCells reports whether any cell of m is Unknown (the legend explains the word then).
func unknownCells(m *Matrix) bool {
	for _, r := range m.Rows {
		for _, c := range r.Cells {
			if c.Status == Unknown {
				return true
			}
		}
	}
	return false
}
