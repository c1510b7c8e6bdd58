package reports

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/pubsub-conformance/harness/internal/column"
	"github.com/pubsub-conformance/harness/specs/catalogue"
)

// Accepted is the accepted result of one spec on one backend. In YAML it is either a bare
// result ("pass") or a mapping with a note ({result: fail, note: "KAFKA-1234, fixed in 4.2"}).
type Accepted struct {
	Result Status `yaml:"result"`
	Note   string `yaml:"note,omitempty"`
}

// UnmarshalYAML accepts both the scalar and the mapping form.
func (a *Accepted) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		a.Result = Status(n.Value)
	} else {
		// KnownFields does not reach a custom unmarshaler: check the keys here.
		for i := 0; i+1 < len(n.Content); i += 2 {
			if k := n.Content[i].Value; k != "result" && k != "note" {
				return fmt.Errorf("line %d: unknown field %q: want result and note", n.Content[i].Line, k)
			}
		}
		type plain Accepted
		if err := n.Decode((*plain)(a)); err != nil {
			return err
		}
	}
	switch a.Result {
	case Pass, Fail, Skip:
		return nil
	}
	return fmt.Errorf("line %d: result %q: want pass, skip or fail", n.Line, a.Result)
}

// MarshalYAML writes the short form when there is no note.
func (a Accepted) MarshalYAML() (any, error) {
	if a.Note == "" {
		return string(a.Result), nil
	}
	type plain Accepted
	return plain(a), nil
}

// Baseline is ci/baseline.yaml: the accepted result per backend and spec ID. Written by
// people (or by compare -write-baseline) and read by the gate once per pipeline run.
type Baseline struct {
	// Legacy names baseline backends whose code no current release ships (TrustGraph's
	// synchronous KafkaBackend of 2.8.1): their accepted results gate a run that names them,
	// but no CI template runs them and -all-backends does not require them.
	Legacy   []string                       `yaml:"legacy,omitempty"`
	Backends map[string]map[string]Accepted `yaml:"backends"`
}

// IsLegacy reports whether label is one of b.Legacy.
func (b *Baseline) IsLegacy(label string) bool {
	for _, l := range b.Legacy {
		if l == label {
			return true
		}
	}
	return false
}

// ReadBaseline reads and validates a baseline file; errors name the file.
func ReadBaseline(path string) (*Baseline, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read baseline: %w", err)
	}
	var b Baseline
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&b); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: malformed baseline: %w", path, err)
	}
	if len(b.Backends) == 0 {
		return nil, fmt.Errorf("%s: baseline has no backends: expected `backends: {kafka: {D1: pass, ...}}`", path)
	}
	for _, l := range b.Legacy {
		if b.Backends[l] == nil {
			return nil, fmt.Errorf("%s: legacy backend %q has no accepted results under backends", path, l)
		}
	}
	return &b, nil
}

// IDs returns every spec key in the baseline, for Build's extra rows.
func (b *Baseline) IDs() []string {
	seen := map[string]bool{}
	var ids []string
	for _, specs := range b.Backends {
		for id := range specs {
			if !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
	}
	sort.Strings(ids)
	return ids
}

// FromMatrix makes a baseline that accepts the matrix as it is, keeping the notes of prev
// (may be nil). Reference backends and not-run cells are left out; what the run did not select
// (a spec its filters left out, a backend not in its BACKENDS) keeps prev's entry, and so does
// an unknown cell (a baseline never accepts unknown: the run said nothing new).
func FromMatrix(m *Matrix, prev *Baseline) *Baseline {
	b := &Baseline{Backends: map[string]map[string]Accepted{}}
	if prev != nil {
		b.Legacy = append([]string(nil), prev.Legacy...)
		for label, specs := range prev.Backends {
			if m.Backend(label) == nil {
				b.Backends[label] = specs
			}
		}
	}
	for i, be := range m.Backends {
		if be.Reference() || (be.Meta != nil && be.Meta.Isolated) { // isolation mode: a diagnosis
			continue
		}
		specs := map[string]Accepted{}
		for _, r := range m.Rows {
			c := r.Cells[i]
			if (c.NotSelected || c.Status == Unknown) && prev != nil {
				if old, ok := prev.Backends[be.Label][r.Key]; ok {
					specs[r.Key] = old
				}
				continue
			}
			if c.Status == NotRun || c.NotSelected || c.Status == Unknown {
				continue
			}
			a := Accepted{Result: c.Status}
			if c.Status != Pass {
				a.Note = truncate(c.Summary(), 200) // what was accepted, until someone writes why
			}
			if prev != nil {
				if old, ok := prev.Backends[be.Label][r.Key]; ok && old.Result == c.Status && old.Note != "" {
					a.Note = old.Note
				}
			}
			specs[r.Key] = a
		}
		b.Backends[be.Label] = specs
	}
	return b
}

// Write stores the baseline with a header explaining the format.
func (b *Baseline) Write(path string) error {
	var buf bytes.Buffer
	buf.WriteString("# Accepted conformance results per backend and spec ID: pass | skip | fail,\n" +
		"# or {result: fail, note: \"why this is accepted\"}. The gate fails on a new failure, a newly\n" +
		"# skipped spec or a missing one; improvements are reported and should be accepted here.\n")
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(b.node()); err != nil {
		return fmt.Errorf("encode baseline: %w", err)
	}
	if err := enc.Close(); err != nil {
		return fmt.Errorf("encode baseline: %w", err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write baseline: %w", err)
	}
	return nil
}

// ChangeKind classifies one difference between the baseline and a run.
type ChangeKind string

const (
	NewFailure   ChangeKind = "new failure"   // fails the gate
	NewlySkipped ChangeKind = "newly skipped" // fails the gate
	Missing      ChangeKind = "missing"       // fails the gate: accepted but not run / not reported
	Improvement  ChangeKind = "improvement"   // reported, does not fail
	NewSpec      ChangeKind = "new spec"      // passing spec not in the baseline: reported, does not fail
	// NotSelected: the run left the spec out by its filters, or the backend out of its
	// BACKENDS. Reported, does not fail: what a run did not select is not a regression.
	NotSelected ChangeKind = "not selected"
	// UnknownResult: the checkers could not vouch for the spec's run (Unknown). It fails the
	// gate where the baseline accepts a pass or has no entry: an unknown may hide a
	// regression, so it never counts as the pass. Where a failure or a skip is accepted
	// there was no pass to lose: reported, does not fail. A baseline cannot accept unknown.
	UnknownResult ChangeKind = "unknown"
)

// Change is one difference the gate found.
type Change struct {
	Kind     ChangeKind
	Backend  string
	ID       string
	Accepted Status // "" when the spec is not in the baseline
	Actual   Status
	Detail   string // cause, reason or note
	// Level of the behaviour (catalogue); "" for a foreign row or a whole backend.
	Level catalogue.Level
	// BelowLevel: the gate was set to block on MUST only and this is a SHOULD change, so it
	// is reported and does not block.
	BelowLevel bool
}

// Blocking reports whether the change fails the gate.
func (c Change) Blocking() bool {
	if c.BelowLevel {
		return false
	}
	switch c.Kind {
	case NewFailure, NewlySkipped, Missing:
		return true
	case UnknownResult:
		return c.Accepted == Pass || c.Accepted == ""
	}
	return false
}

func (c Change) String() string {
	if c.ID == "*" { // a whole backend
		return fmt.Sprintf("%-13s %s: %s", strings.ToUpper(string(c.Kind)), c.Backend, c.Detail)
	}
	from := string(c.Accepted)
	if from == "" {
		from = "(not in baseline)"
	}
	s := fmt.Sprintf("%-13s %s %s: %s -> %s", strings.ToUpper(string(c.Kind)), c.Backend, c.ID, from, c.Actual)
	if c.Detail != "" {
		s += ": " + c.Detail
	}
	if c.Level == catalogue.SHOULD {
		s += " [SHOULD]"
	}
	if c.BelowLevel {
		s += " [not blocking: the gate blocks on MUST only]"
	}
	return s
}

// GateResult is what Gate found; Failed() decides the exit code.
type GateResult struct {
	Changes []Change
	Checked int // cells compared
	// Columns are the matrix columns whose cells the gate compared with the baseline (a
	// reference column the baseline does not list, or an isolation-mode column, is not one).
	Columns []string
}

// Failed reports whether any change blocks the pipeline.
func (g *GateResult) Failed() bool {
	for _, c := range g.Changes {
		if c.Blocking() {
			return true
		}
	}
	return false
}

// ParseGateLevel reads a gate level as make's GATE_LEVEL and compare's -gate-level give it:
// must (only MUST behaviours' regressions block) or should, the default (every regression
// blocks); "" is should. The error names the value and what is allowed, for its caller to
// prefix with the setting's name.
func ParseGateLevel(v string) (catalogue.Level, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "should", "":
		return "", nil
	case "must":
		return catalogue.MUST, nil
	}
	return "", fmt.Errorf("%q: want must (only MUST regressions block) or should (every regression blocks)", v)
}

// GateOptions tune the gate.
type GateOptions struct {
	// Only restricts the check to these backends (empty: every backend in the baseline or the
	// matrix). A backend named here must have a report, whatever the runs selected.
	Only []string
	// Level is the lowest level whose regressions block: "" or SHOULD, every regression; MUST,
	// only those of MUST behaviours (and of rows without a level), SHOULD ones are reported.
	Level catalogue.Level
	// AllBackends makes every baseline backend required: one without a report is missing even
	// when no run selected it (a CI gate over per-backend jobs, where a job's reports can go
	// missing and the others' meta do not name it).
	AllBackends bool
}

// Gate compares the matrix with the baseline: GateWith with only as GateOptions.Only.
func Gate(m *Matrix, b *Baseline, only []string) *GateResult {
	return GateWith(m, b, GateOptions{Only: only})
}

// pinnedOf is, for the column of a broker release (label kafka~x@3.9.1 or
// kafka~x@3.9.1+isolated, internal/column), the column of its backend on the pinned release
// (kafka~x), whose baseline entries judge it; "" for any other label.
func pinnedOf(label string) string {
	c, err := column.Parse(label)
	if err != nil || c.Release == "" {
		return ""
	}
	return c.Registered()
}

// GateWith compares the matrix with the baseline. A baseline backend without any report is a
// failure (in CI a job's reports went missing) unless the runs' meta say they did not select
// it (their BACKENDS), o.Only does not name it and o.AllBackends is off: then it is not
// selected. A spec the run's filters left out is not selected too, whatever was accepted.
func GateWith(m *Matrix, b *Baseline, o GateOptions) *GateResult {
	g := &GateResult{}
	want := map[string]bool{}
	for _, x := range o.Only {
		want[x] = true
	}
	// What the runs selected: the union of their metas' lists; nil when no run says.
	var selected map[string]bool
	for _, be := range m.Backends {
		if be.Meta != nil && len(be.Meta.Selected) > 0 {
			if selected == nil {
				selected = map[string]bool{}
			}
			for _, s := range be.Meta.Selected {
				selected[s] = true
			}
		}
	}
	labels := map[string]bool{}
	for l := range b.Backends {
		labels[l] = true
	}
	for _, be := range m.Backends {
		if _, listed := b.Backends[be.Label]; be.Meta != nil && be.Meta.Isolated && !listed {
			// An isolation-mode column (docs/isolation.md) is a diagnosis, not a result to gate,
			// unless the baseline lists it (even with no entries: `kafka+isolated:`): then it is
			// gated, and only that.
			g.Changes = append(g.Changes, Change{Kind: NotSelected, Backend: be.Label, ID: "*", Actual: NotRun,
				Detail: "isolation-mode column (PUBSUB_ISOLATE=topics): a diagnosis, not gated"})
			continue
		}
		if !be.Reference() || b.Backends[be.Label] != nil {
			labels[be.Label] = true
		}
	}
	sorted := make([]string, 0, len(labels))
	for l := range labels {
		if len(want) == 0 || want[l] {
			sorted = append(sorted, l)
		}
	}
	sort.Strings(sorted)
	for _, label := range sorted {
		accepted := b.Backends[label]
		col := -1
		for i, be := range m.Backends {
			if be.Label == label {
				col = i
			}
		}
		if base := pinnedOf(label); base != "" && col >= 0 && b.Backends[base] != nil {
			// A broker release's column (kafka@3.9.1, docs/versions.md) is held to its
			// backend's accepted results on the pinned release, overlaid by the entries under
			// its own key: the baseline lists only what differs with the release.
			merged := map[string]Accepted{}
			for id, a := range b.Backends[base] {
				merged[id] = a
			}
			for id, a := range accepted {
				merged[id] = a
			}
			detail := "judged against " + base + "'s entries"
			if len(accepted) > 0 {
				detail += fmt.Sprintf(", %d of them replaced by its own", len(accepted))
			} else {
				detail = "no baseline entries of its own: " + detail
			}
			accepted = merged
			g.Changes = append(g.Changes, Change{Kind: NotSelected, Backend: label, ID: "*", Actual: NotRun, Detail: detail})
		}
		if col < 0 {
			if pinnedOf(label) != "" && !selected[label] && !want[label] {
				// Another broker release's column is only in the runs that ask for that release
				// (make versions): never missing from a default run, even with -all-backends.
				g.Changes = append(g.Changes, Change{Kind: NotSelected, Backend: label, ID: "*", Actual: NotRun,
					Detail: "a broker release's column: make versions runs it"})
				continue
			}
			if b.IsLegacy(label) && !selected[label] && !want[label] {
				// Code no current release ships: run by name only, never required.
				g.Changes = append(g.Changes, Change{Kind: NotSelected, Backend: label, ID: "*", Actual: NotRun,
					Detail: "legacy (the baseline's legacy list): run only when named"})
				continue
			}
			if selected != nil && !selected[label] && !want[label] && !o.AllBackends {
				runs := make([]string, 0, len(selected))
				for s := range selected {
					runs = append(runs, s)
				}
				sort.Strings(runs)
				g.Changes = append(g.Changes, Change{Kind: NotSelected, Backend: label, ID: "*", Actual: NotRun,
					Detail: "not in this run's backends (" + strings.Join(runs, " ") + ")"})
				continue
			}
			g.Changes = append(g.Changes, Change{Kind: Missing, Backend: label, ID: "*", Actual: NotRun,
				Detail: "no report for this backend"})
			continue
		}
		g.Columns = append(g.Columns, label)
		newPasses := 0
		for _, r := range m.Rows {
			cell := r.Cells[col]
			acc, inBaseline := accepted[r.Key]
			if !inBaseline && (cell.Status == NotRun || cell.NotSelected) {
				continue
			}
			if cell.NotSelected {
				g.Changes = append(g.Changes, Change{Kind: NotSelected, Backend: label, ID: r.Key, Level: r.Level,
					Accepted: acc.Result, Actual: cell.Status, Detail: cell.Summary()})
				continue
			}
			if accepted == nil && cell.Status == Pass {
				// A backend the baseline does not know: one line for its passes, not one each.
				g.Checked++
				newPasses++
				continue
			}
			g.Checked++
			ch := Change{Backend: label, ID: r.Key, Level: r.Level, Accepted: acc.Result, Actual: cell.Status, Detail: cell.Summary(),
				BelowLevel: o.Level == catalogue.MUST && !r.Must()}
			switch {
			case acc.Result == cell.Status:
				continue
			case cell.Status == Unknown:
				ch.Kind = UnknownResult
			case cell.Status == NotRun:
				ch.Kind = Missing
			case cell.Status == Fail:
				ch.Kind = NewFailure
			case cell.Status == Skip:
				ch.Kind = NewlySkipped
			case !inBaseline: // passing spec the baseline does not know yet
				ch.Kind, ch.Detail = NewSpec, ""
			default: // pass where fail or skip was accepted
				ch.Kind, ch.Detail = Improvement, acc.Note
			}
			g.Changes = append(g.Changes, ch)
		}
		if newPasses > 0 {
			g.Changes = append(g.Changes, Change{Kind: NewSpec, Backend: label, ID: "*", Actual: Pass,
				Detail: fmt.Sprintf("backend not in the baseline: %d passing specs", newPasses)})
		}
	}
	sort.SliceStable(g.Changes, func(i, j int) bool {
		a, b := g.Changes[i], g.Changes[j]
		if a.Blocking() != b.Blocking() {
			return a.Blocking()
		}
		if a.Backend != b.Backend {
			return a.Backend < b.Backend
		}
		if a.ID == "*" || b.ID == "*" || a.ID == "" || b.ID == "" {
			return a.ID < b.ID
		}
		return IDLess(a.ID, b.ID)
	})
	return g
}

// Report prints the gate's verdict and every change, blocking ones first.
func (g *GateResult) Report() string {
	var sb strings.Builder
	blocking, other, accept := 0, 0, 0
	for _, c := range g.Changes {
		switch {
		case c.Blocking():
			blocking++
		case c.Kind == Improvement || c.Kind == NewSpec:
			accept++
			other++
		default:
			other++
		}
	}
	verdict := "PASS"
	if blocking > 0 {
		verdict = "FAIL"
	}
	fmt.Fprintf(&sb, "gate %s: %d results checked, %d blocking change(s), %d other (improvements, new specs, not selected, SHOULD below the gate's level)\n",
		verdict, g.Checked, blocking, other)
	for _, c := range g.Changes {
		sb.WriteString("  " + c.String() + "\n")
	}
	if accept > 0 {
		sb.WriteString("  (accept improvements by updating the baseline: compare -write-baseline <file> FILE...)\n")
	}
	return sb.String()
}

// node builds the document by hand so backends sort by name and specs in catalogue order
// (a map would sort D10 before D2 and A before D).
func (b *Baseline) node() *yaml.Node {
	str := func(v string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Value: v} }
	labels := make([]string, 0, len(b.Backends))
	for l := range b.Backends {
		labels = append(labels, l)
	}
	sort.Strings(labels)
	backends := &yaml.Node{Kind: yaml.MappingNode}
	for _, l := range labels {
		specs := &yaml.Node{Kind: yaml.MappingNode}
		ids := make([]string, 0, len(b.Backends[l]))
		for id := range b.Backends[l] {
			ids = append(ids, id)
		}
		sort.Slice(ids, func(i, j int) bool { return IDLess(ids[i], ids[j]) })
		for _, id := range ids {
			a := b.Backends[l][id]
			v := str(string(a.Result))
			if a.Note != "" {
				v = &yaml.Node{Kind: yaml.MappingNode, Style: yaml.FlowStyle,
					Content: []*yaml.Node{str("result"), str(string(a.Result)), str("note"), str(a.Note)}}
			}
			specs.Content = append(specs.Content, str(id), v)
		}
		backends.Content = append(backends.Content, str(l), specs)
	}
	doc := &yaml.Node{Kind: yaml.MappingNode}
	if len(b.Legacy) > 0 {
		legacy := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
		for _, l := range b.Legacy {
			legacy.Content = append(legacy.Content, str(l))
		}
		doc.Content = append(doc.Content, str("legacy"), legacy)
	}
	doc.Content = append(doc.Content, str("backends"), backends)
	return doc
}
