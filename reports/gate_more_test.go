package reports

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// gateLines is each change of g as "kind backend id".
func gateLines(g *GateResult) string {
	var got []string
	for _, c := range g.Changes {
		got = append(got, string(c.Kind)+" "+c.Backend+" "+c.ID)
	}
	return strings.Join(got, "; ")
}

// A broker release's column the run did not run is one line, "not selected: make versions runs
// it", whether or not its backend has entries: it is not also judged against them. A release
// column that ran while its backend is not in the baseline is judged by its own entries alone,
// with no line saying it borrowed any.
func TestReleaseColumnNotRunIsOneNotSelectedLine(t *testing.T) {
	b := &Baseline{Backends: map[string]map[string]Accepted{
		"kafka":       {"D1": {Result: Pass}},
		"kafka@3.7.2": {"G1": {Result: Fail, Note: "accepted on 3.7.2"}},
		"pulsar@4.0":  {"D1": {Result: Pass}},
	}}
	m := Build([]*Run{{File: "ginkgo-kafka.json", Label: "kafka", Meta: &Meta{Backend: "kafka", Selected: []string{"kafka"}},
		Cases: []Case{{ID: "D1", Status: Pass}}}})
	g := GateWith(m, b, GateOptions{})
	if got, want := gateLines(g), "not selected kafka@3.7.2 *; not selected pulsar@4.0 *"; got != want || g.Failed() {
		t.Errorf("changes %q, want %q:\n%s", got, want, g.Report())
	}
	for _, c := range g.Changes {
		if !strings.Contains(c.Detail, "make versions runs it") {
			t.Errorf("%s: %q, want the release column's reason", c.Backend, c.Detail)
		}
	}
	// pulsar@4.0 ran; pulsar has no entries: its own entries judge it, nothing is borrowed.
	m = Build([]*Run{{File: "ginkgo-pulsar@4.0.json", Label: "pulsar@4.0", Meta: &Meta{Backend: "pulsar@4.0", Selected: []string{"pulsar@4.0"}},
		Cases: []Case{{ID: "D1", Status: Pass}}}})
	g = GateWith(m, b, GateOptions{Only: []string{"pulsar@4.0"}})
	if got, want := gateLines(g), ""; got != want || g.Failed() {
		t.Errorf("changes %q, want none:\n%s", got, g.Report())
	}
}

// The legacy list survives make baseline (FromMatrix, Write, ReadBaseline): a legacy backend
// that lost it would be missing from the next default run. A baseline without legacy backends
// writes no legacy key.
func TestBaselineKeepsItsLegacyList(t *testing.T) {
	prev := &Baseline{Legacy: []string{"tg-old"}, Backends: map[string]map[string]Accepted{
		"tg-old": {"D1": {Result: Pass}},
		"kafka":  {"D1": {Result: Pass}},
	}}
	m := Build([]*Run{{File: "ginkgo-kafka.json", Label: "kafka", Meta: &Meta{Backend: "kafka", Selected: []string{"kafka"}},
		Cases: []Case{{ID: "D1", Status: Pass}}}})
	dir := t.TempDir()
	path := filepath.Join(dir, "baseline.yaml")
	if err := FromMatrix(m, prev).Write(path); err != nil {
		t.Fatal(err)
	}
	b, err := ReadBaseline(path)
	if err != nil {
		t.Fatal(err)
	}
	if !b.IsLegacy("tg-old") || len(b.Legacy) != 1 {
		t.Errorf("legacy %q after make baseline, want [tg-old]", b.Legacy)
	}
	if g := GateWith(m, b, GateOptions{AllBackends: true}); g.Failed() {
		t.Errorf("the legacy backend is missing from a default run:\n%s", g.Report())
	}
	plain := filepath.Join(dir, "plain.yaml")
	if err := (&Baseline{Backends: prev.Backends}).Write(plain); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(plain)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "legacy") {
		t.Errorf("a baseline without legacy backends writes a legacy key:\n%s", data)
	}
}
