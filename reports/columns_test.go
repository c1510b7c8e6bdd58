package reports

import (
	"path/filepath"
	"strings"
	"testing"
)

// Column names carry every suffix a run gives them, in the suite's order (a run.Target's
// column, suite.InRun): <backend>[~<variant>][@<broker release>][+isolated]. Each
// combination is one column.
var suffixedLabels = []string{
	"kafka",
	"kafka~latest-race",
	"kafka@3.9.1",
	"kafka+isolated",
	"kafka~latest-race@3.9.1",
	"kafka~latest-race+isolated",
	"kafka@3.9.1+isolated",
	"kafka~latest-race@3.9.1+isolated",
	"trustgraph-kafka-sync~ack-noop@4.0.0-rc1+isolated",
}

// A report's file names its whole column, every suffix included, and its meta sidecar is the
// one of that whole name: ginkgo-<label>.json and junit-<label>.xml beside meta-<label>.json.
func TestColumnLabelFromFileNameKeepsEverySuffix(t *testing.T) {
	for _, label := range suffixedLabels {
		for _, file := range []struct{ from, name string }{
			{"testdata/ginkgo-basic.xml", "junit-" + label + ".xml"},
			{"testdata/ginkgo-fixture.json", "ginkgo-" + label + ".json"},
		} {
			dir := t.TempDir()
			copyFile(t, file.from, filepath.Join(dir, file.name))
			// A sidecar that names no backend: the label must come from the file's name, and the
			// sidecar is found only under the whole name.
			writeFile(t, filepath.Join(dir, "meta-"+label+".json"), `{"provider":"local","brokerVersion":"v-`+label+`"}`)
			run, err := ReadRun(filepath.Join(dir, file.name))
			if err != nil {
				t.Fatalf("%s: %v", file.name, err)
			}
			if run.Label != label {
				t.Errorf("%s: column %q, want %q", file.name, run.Label, label)
			}
			if run.Meta == nil || run.Meta.BrokerVersion != "v-"+label {
				t.Errorf("%s: meta %+v, want meta-%s.json's", file.name, run.Meta, label)
			}
		}
	}
}

// The suffixed columns of one run stay apart in the matrix: none merges into another whose
// name it starts with.
func TestSuffixedColumnsStayApart(t *testing.T) {
	var runs []*Run
	for _, l := range suffixedLabels {
		runs = append(runs, &Run{File: "ginkgo-" + l + ".json", Label: l, Meta: &Meta{Backend: l},
			Cases: []Case{{ID: "D1", Status: Pass}}})
	}
	m := Build(runs)
	if len(m.Backends) != len(suffixedLabels) {
		t.Fatalf("%d columns, want %d", len(m.Backends), len(suffixedLabels))
	}
	for _, l := range suffixedLabels {
		if b := m.Backend(l); b == nil || len(b.Files) != 1 {
			t.Errorf("column %q: %+v", l, b)
		}
	}
}

// Which baseline entries judge a column: a broker release's column (@<release>) is held to its
// backend's entries, the backend being everything before the '@' - a variant's column
// (kafka~x@3.9.1) to the variant's, never to the unmutated backend's. A variant's column
// (~<variant>) and an isolated one (+isolated) are columns of their own: the backend's accepted
// failures accept nothing there.
func TestGateJudgesSuffixedColumnsByTheirOwnBackend(t *testing.T) {
	// kafka accepts D2's failure; the variant's own entry accepts G1's.
	b := &Baseline{Backends: map[string]map[string]Accepted{
		"kafka":             {"D1": {Result: Pass}, "D2": {Result: Fail, Note: "KAFKA-1"}, "G1": {Result: Pass}},
		"kafka~latest-race": {"D1": {Result: Pass}, "D2": {Result: Pass}, "G1": {Result: Fail, Note: "the variant's defect"}},
	}}
	failing := func(label string, isolated bool) *Run {
		return &Run{File: "ginkgo-" + label + ".json", Label: label, Meta: &Meta{Backend: label, Isolated: isolated},
			Cases: []Case{{ID: "D1", Status: Pass}, {ID: "D2", Status: Fail, Message: "lost"}, {ID: "G1", Status: Fail, Message: "split"}}}
	}
	for _, tt := range []struct {
		label    string
		isolated bool
		// the blocking changes: an accepted failure is not one
		blocking string
	}{
		{"kafka", false, "new failure G1"},
		{"kafka@3.9.1", false, "new failure G1"},                    // kafka's entries: D2 accepted
		{"kafka~latest-race", false, "new failure D2"},              // its own entries: G1 accepted
		{"kafka~latest-race@3.9.1", false, "new failure D2"},        // the variant's entries, not kafka's
		{"kafka+isolated", false, "new failure D2, new failure G1"}, // no entries of its own: nothing accepted
		{"kafka~other", false, "new failure D2, new failure G1"},
		{"kafka~other@3.9.1", false, "new failure D2, new failure G1"},
	} {
		m := Build([]*Run{failing(tt.label, tt.isolated)}, b.IDs()...)
		g := GateWith(m, b, GateOptions{Only: []string{tt.label}})
		if got := blockingChanges(g); got != tt.blocking {
			t.Errorf("%s: blocking %q, want %q\n%s", tt.label, got, tt.blocking, g.Report())
		}
	}
	// In isolation mode, with every suffix, a column the baseline does not list is a diagnosis:
	// not gated, whatever its backend accepts.
	for _, l := range []string{"kafka+isolated", "kafka@3.9.1+isolated", "kafka~latest-race@3.9.1+isolated"} {
		m := Build([]*Run{failing(l, true)}, b.IDs()...)
		g := GateWith(m, b, GateOptions{Only: []string{l}})
		if g.Failed() || len(g.Columns) != 0 || !strings.Contains(g.Report(), l+": isolation-mode column") {
			t.Errorf("%s: gated (columns %v):\n%s", l, g.Columns, g.Report())
		}
	}
}

// A broker release's own entry replaces its backend's, both ways: one that says pass where the
// backend accepts a failure (fixed in that release) takes the allowance away, and one that
// accepts a failure the backend does not have adds it for that release only.
func TestReleaseEntriesReplaceTheBackendsBothWays(t *testing.T) {
	b := &Baseline{Backends: map[string]map[string]Accepted{
		"kafka":       {"D1": {Result: Pass}, "D2": {Result: Fail, Note: "KAFKA-1"}, "G1": {Result: Pass}},
		"kafka@3.9.1": {"D2": {Result: Pass}, "G1": {Result: Fail, Note: "3.9.1 only"}},
	}}
	for _, tt := range []struct{ label, blocking string }{
		{"kafka@3.9.1", "new failure D2"}, // D2 fixed in 3.9.1: its failure is new there; G1 accepted
		{"kafka@4.4.0", "new failure G1"}, // no entries of its own: kafka's, D2 accepted
	} {
		m := Build([]*Run{{File: "ginkgo-" + tt.label + ".json", Label: tt.label, Meta: &Meta{Backend: tt.label},
			Cases: []Case{{ID: "D1", Status: Pass}, {ID: "D2", Status: Fail, Message: "lost"}, {ID: "G1", Status: Fail, Message: "split"}}}}, b.IDs()...)
		g := GateWith(m, b, GateOptions{Only: []string{tt.label}})
		if got := blockingChanges(g); got != tt.blocking {
			t.Errorf("%s: blocking %q, want %q\n%s", tt.label, got, tt.blocking, g.Report())
		}
	}
}

// blockingChanges lists g's blocking changes as "<kind> <ID>", in the gate's order.
func blockingChanges(g *GateResult) string {
	var out []string
	for _, c := range g.Changes {
		if c.Blocking() {
			out = append(out, string(c.Kind)+" "+c.ID)
		}
	}
	return strings.Join(out, ", ")
}
