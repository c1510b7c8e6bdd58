package reports

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/pubsub-conformance/harness/specs/catalogue"
)

// Backend is one column of the matrix: every run (JUnit file) that carried its label.
type Backend struct {
	Label        string
	Files        []string
	Meta         *Meta // from the first file that had a sidecar; nil when none had
	SuiteSeconds float64
	Setup        []Case // suite-level nodes (BeforeSuite, AfterSuite, ...)
	// SetupFailure is the first line of a failed BeforeSuite/SynchronizedBeforeSuite: when set,
	// Ginkgo ran no spec at all and every row of this backend is NotRun.
	SetupFailure string
	// Interrupted says why a run of this backend stopped before every spec ran (Run.Interrupted).
	Interrupted string
	Counts      map[Status]int // per row, after aggregation
}

// Reference reports whether this column is the in-memory reference backend: shown, but not a
// conformance result.
func (b *Backend) Reference() bool { return b.Meta != nil && b.Meta.Reference }

// Cell is the aggregated result of one behaviour on one backend. A behaviour with several
// testcases (DescribeTable entries) fails if any entry failed, is not run if any entry did not
// run, is unknown if any entry is unknown, is skipped only if all entries were skipped, and
// passes otherwise; durations add up.
type Cell struct {
	Status   Status
	Message  string   // fail: first failing entry's first line; not-run, unknown: why
	Reasons  []string // skip: the distinct reasons
	Duration time.Duration
	Entries  []Case // per-entry detail for the HTML page
	// NotSelected: every entry was left out by the run's spec filters (Status is Skip).
	NotSelected bool
}

// Summary is the one-line text of a cell: the cause of a failure, the reason(s) of a skip.
func (c *Cell) Summary() string {
	switch c.Status {
	case Skip:
		if len(c.Reasons) == 0 {
			return "no reason given"
		}
		return strings.Join(c.Reasons, "; ")
	default:
		return c.Message
	}
}

// Row is one behaviour: a catalogue ID, or for foreign reports a testcase name.
type Row struct {
	Key    string // the catalogue ID, or the testcase name when there is none
	ID     string
	Title  string
	Labels []string
	// Level is the catalogue entry's (MUST or SHOULD); "" for a row without a catalogue entry
	// (a foreign testcase), which the verdict and the gate count as MUST.
	Level catalogue.Level
	Cells []*Cell // one per Matrix.Backends, same order
}

// Must reports whether a failure of this row breaks TrustGraph's contract: a MUST, or a row
// of unknown level.
func (r *Row) Must() bool { return r.Level != catalogue.SHOULD }

// Matrix is the behaviour x backend comparison.
type Matrix struct {
	Backends []*Backend
	Rows     []*Row
}

// Verdict is one backend's standing against TrustGraph's contract: its MUST and SHOULD
// failures, its unknown results (MUST ones apart), and the MUST behaviours that gave no result
// (skipped, not run, not selected).
type Verdict struct {
	MustFailures, ShouldFailures, MustOpen int
	// MustUnknown, ShouldUnknown: results the checkers could not vouch for (Unknown).
	MustUnknown, ShouldUnknown int
}

// Verdict counts column i's failures by level.
func (m *Matrix) Verdict(i int) Verdict {
	var v Verdict
	for _, r := range m.Rows {
		c := r.Cells[i]
		switch {
		case c.Status == Fail && r.Must():
			v.MustFailures++
		case c.Status == Fail:
			v.ShouldFailures++
		case c.Status == Unknown && r.Must():
			v.MustUnknown++
		case c.Status == Unknown:
			v.ShouldUnknown++
		case c.Status != Pass && r.Must():
			v.MustOpen++
		}
	}
	return v
}

// String is the verdict line: "TrustGraph's contract: conforms; 1 SHOULD failure" or
// "TrustGraph's contract: 3 MUST failures; 0 SHOULD failures", with the MUST behaviours that
// gave no result, so "conforms" is never read as "everything ran". A column with unknown MUST
// results and no MUST failure is "unknown", never "conforms".
func (v Verdict) String() string {
	s := "TrustGraph's contract: conforms"
	switch {
	case v.MustFailures > 0:
		s = "TrustGraph's contract: " + plural(v.MustFailures, "MUST failure")
	case v.MustUnknown > 0:
		s = "TrustGraph's contract: unknown"
	}
	s += "; " + plural(v.ShouldFailures, "SHOULD failure")
	if n := v.MustUnknown + v.ShouldUnknown; n > 0 {
		s += fmt.Sprintf("; %s (%d MUST): the checkers could not vouch for them", plural(n, "unknown result"), v.MustUnknown)
	}
	if v.MustOpen > 0 {
		s += fmt.Sprintf(" (%d MUST without a result: skipped, not run or not selected)", v.MustOpen)
	}
	return s
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// Interrupted lists "<backend>: <why>" for every backend whose run stopped before every spec
// ran; empty for complete runs.
func (m *Matrix) Interrupted() []string {
	var out []string
	for _, b := range m.Backends {
		if b.Interrupted != "" {
			out = append(out, b.Label+": "+b.Interrupted)
		}
	}
	return out
}

// InterruptedNote is the sentence the renderers put at the top of an interrupted matrix.
func (m *Matrix) InterruptedNote() string {
	in := m.Interrupted()
	if len(in) == 0 {
		return ""
	}
	return "INTERRUPTED RUN (" + strings.Join(in, "; ") + "): it stopped before every spec ran; specs that never ran show as not run. Not a complete result."
}

// Build aggregates runs into a matrix. Runs with the same label merge into one column.
// extraIDs (e.g. from a baseline) add rows that no run reported, so a backend whose
// BeforeSuite failed, or a spec that vanished, still shows up as NotRun.
func Build(runs []*Run, extraIDs ...string) *Matrix {
	m := &Matrix{}
	byLabel := map[string]*Backend{}
	rows := map[string]*Row{}
	cases := map[string]map[string][]Case{} // row key -> backend label -> cases
	addRow := func(key, id string) *Row {
		r, ok := rows[key]
		if !ok {
			r = &Row{Key: key, ID: id}
			if b, known := catalogue.Lookup(id); known {
				r.Level = b.Level
			}
			rows[key] = r
			cases[key] = map[string][]Case{}
		}
		return r
	}
	for _, run := range runs {
		b, ok := byLabel[run.Label]
		if !ok {
			b = &Backend{Label: run.Label, Counts: map[Status]int{}}
			byLabel[run.Label] = b
			m.Backends = append(m.Backends, b)
		}
		b.Files = append(b.Files, run.File)
		if b.Interrupted == "" {
			b.Interrupted = run.Interrupted
		}
		if b.Meta == nil {
			b.Meta = run.Meta
		}
		if run.Meta != nil && run.Meta.SuiteSeconds > 0 {
			b.SuiteSeconds += run.Meta.SuiteSeconds
		} else {
			b.SuiteSeconds += run.SuiteSeconds
		}
		specs := 0
		for _, c := range run.Cases {
			if !c.Setup {
				specs++
			}
		}
		for _, c := range run.Cases {
			if c.Setup {
				b.Setup = append(b.Setup, c)
				// A failed BeforeSuite means Ginkgo ran no spec. Without node types in the
				// names (OmitLeafNodeType) the sign is the same: a failed suite node and no spec.
				if c.Status == Fail && b.SetupFailure == "" &&
					(c.NodeType == "BeforeSuite" || c.NodeType == "SynchronizedBeforeSuite" || specs == 0) {
					b.SetupFailure = c.SetupName() + " failed: " + c.Message
				}
				continue
			}
			key := c.ID
			if key == "" {
				key = strings.TrimSpace(c.Container + " " + c.Text)
			}
			addRow(key, c.ID)
			cases[key][b.Label] = append(cases[key][b.Label], c)
		}
	}
	for _, id := range extraIDs {
		addRow(id, id)
	}
	sort.SliceStable(m.Backends, func(i, j int) bool {
		if m.Backends[i].Reference() != m.Backends[j].Reference() {
			return !m.Backends[i].Reference()
		}
		return m.Backends[i].Label < m.Backends[j].Label
	})
	for _, r := range rows {
		var all []Case
		for _, b := range m.Backends {
			cs := cases[r.Key][b.Label]
			all = append(all, cs...)
			cell := aggregate(cs)
			if cell == nil {
				cell = &Cell{Status: NotRun, Message: "not in this run"}
				if b.SetupFailure != "" {
					cell.Message = "not run: " + b.SetupFailure
				}
			}
			b.Counts[cell.Status]++
			r.Cells = append(r.Cells, cell)
		}
		r.Title, r.Labels = titleAndLabels(r.ID, all)
		m.Rows = append(m.Rows, r)
	}
	sort.Slice(m.Rows, func(i, j int) bool { return rowLess(m.Rows[i], m.Rows[j]) })
	return m
}

func aggregate(cs []Case) *Cell {
	if len(cs) == 0 {
		return nil
	}
	cell := &Cell{Status: Pass, Entries: cs}
	skipped, notRun, notSelected, unknown := 0, 0, 0, 0
	notRunWhy, unknownWhy := "", ""
	seen := map[string]bool{}
	for _, c := range cs {
		cell.Duration += c.Duration
		switch c.Status {
		case Fail:
			if cell.Status != Fail {
				cell.Status = Fail
				cell.Message = c.Message
				if len(cs) > 1 && c.Text != "" {
					cell.Message = c.Message + " (entry: " + c.Text + ")"
				}
			}
		case NotRun:
			notRun++
			if notRunWhy == "" {
				notRunWhy = c.Message
			}
		case Unknown:
			unknown++
			if unknownWhy == "" {
				unknownWhy = c.Message
				if len(cs) > 1 && c.Text != "" {
					unknownWhy += " (entry: " + c.Text + ")"
				}
			}
		case Skip:
			skipped++
			if c.NotSelected {
				notSelected++
			}
			if c.Message != "" && !seen[c.Message] {
				seen[c.Message] = true
				cell.Reasons = append(cell.Reasons, c.Message)
			}
		}
	}
	switch {
	case cell.Status == Fail:
	case notRun > 0:
		// Some entries never started (the run stopped early): not a result, whatever the others did.
		cell.Status, cell.Message = NotRun, notRunWhy
		if notRun < len(cs) {
			cell.Message += fmt.Sprintf(" (%d of %d entries ran)", len(cs)-notRun, len(cs))
		}
	case unknown > 0:
		// An entry the checkers could not vouch for: the behaviour is not known to pass.
		cell.Status, cell.Message = Unknown, unknownWhy
	case skipped == len(cs):
		cell.Status = Skip
		cell.NotSelected = notSelected == len(cs)
	}
	if cell.Status != Skip {
		cell.Reasons = nil
	}
	return cell
}

// titleAndLabels names a row: the one place row titles come from. A catalogue behaviour has its
// catalogue title (a DescribeTable's entries share words that are not part of its text, "class
// flow", "class request", so the catalogue knows better); any other row (a foreign testcase) is
// named after its testcases: the common leading words of their texts, or the first text when
// they share none.
func titleAndLabels(id string, cs []Case) (string, []string) {
	var labels []string
	seen := map[string]bool{}
	var texts [][]string
	for _, c := range cs {
		texts = append(texts, strings.Fields(c.Text))
		for _, l := range c.Labels {
			// The suite labels each spec with its backend; in a matrix the column says that.
			if !seen[l] && !strings.HasPrefix(l, catalogue.BackendLabelPrefix) {
				seen[l] = true
				labels = append(labels, l)
			}
		}
	}
	sort.Strings(labels)
	if b, ok := catalogue.Lookup(id); ok && b.Title != "" {
		return b.Title, labels
	}
	if len(texts) == 0 {
		return "", labels
	}
	common := texts[0]
	for _, t := range texts[1:] {
		n := 0
		for n < len(common) && n < len(t) && common[n] == t[n] {
			n++
		}
		common = common[:n]
	}
	if len(common) == 0 {
		common = texts[0]
	}
	return strings.Join(common, " "), labels
}

func rowLess(a, b *Row) bool {
	if (a.ID == "") != (b.ID == "") {
		return a.ID != ""
	}
	if a.ID == "" {
		return a.Key < b.Key
	}
	return IDLess(a.ID, b.ID)
}

// IDLess orders IDs in catalogue order (catalogue.Less): the one ID order of every tool.
func IDLess(a, b string) bool { return catalogue.Less(a, b) }

// Cell returns the cell of row key for backend label, or nil.
func (m *Matrix) Cell(key, label string) *Cell {
	for _, r := range m.Rows {
		if r.Key != key {
			continue
		}
		for i, b := range m.Backends {
			if b.Label == label {
				return r.Cells[i]
			}
		}
	}
	return nil
}

// Backend returns the column with the given label, or nil.
func (m *Matrix) Backend(label string) *Backend {
	for _, b := range m.Backends {
		if b.Label == label {
			return b
		}
	}
	return nil
}

func fmtDuration(d time.Duration) string {
	switch {
	case d <= 0:
		return ""
	case d < time.Millisecond:
		return "<1ms"
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	default:
		return d.Round(time.Second).String()
	}
}

func fmtSeconds(s float64) string {
	if s <= 0 {
		return ""
	}
	return fmtDuration(time.Duration(s * float64(time.Second)))
}

// SetupName names a suite node for people: its Ginkgo node type, or "suite setup" when the
// report omitted node types.
func (c Case) SetupName() string {
	if c.NodeType != "" {
		return c.NodeType
	}
	return "suite setup"
}
