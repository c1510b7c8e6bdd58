package reports

import (
	"path/filepath"
	"strings"
	"testing"
)

// An isolation-mode column (PUBSUB_ISOLATE=topics) sits beside the normal one in the matrix,
// but the gate does not gate it and a written baseline leaves it out.
func TestIsolatedColumnIsNotGated(t *testing.T) {
	runs := []*Run{
		{File: "ginkgo-tg.json", Label: "tg", Meta: &Meta{Backend: "tg"}, Cases: []Case{{ID: "D1", Status: Pass}, {ID: "L1", Status: Fail, Message: "x"}}},
		{File: "ginkgo-tg+isolated.json", Label: "tg+isolated", Meta: &Meta{Backend: "tg+isolated", Isolated: true},
			Cases: []Case{{ID: "D1", Status: Fail, Message: "y"}, {ID: "L1", Status: Fail, Message: "x"}}},
	}
	m := Build(runs)
	if len(m.Backends) != 2 || m.Backend("tg+isolated") == nil {
		t.Fatalf("want both columns, got %d", len(m.Backends))
	}
	b := FromMatrix(m, nil)
	if _, ok := b.Backends["tg+isolated"]; ok {
		t.Errorf("a written baseline must leave the isolation-mode column out")
	}
	g := GateWith(m, b, GateOptions{})
	if g.Failed() {
		t.Errorf("the gate failed on the isolated column:\n%s", g.Report())
	}
	if !strings.Contains(g.Report(), "tg+isolated: isolation-mode column") {
		t.Errorf("the gate must say it left the isolated column out:\n%s", g.Report())
	}
}

// Column labels too long for the terminal's cells drop the start they share, so a column and
// its isolated twin stay apart ("kafka", "kafka+isolated"), and the shared start reads once.
func TestTerminalLabelsStayApart(t *testing.T) {
	var runs []*Run
	for _, l := range []string{"trustgraph-kafka", "trustgraph-kafka+isolated", "trustgraph-pulsar", "trustgraph-pulsar+isolated"} {
		runs = append(runs, &Run{File: "ginkgo-" + l + ".json", Label: l, Cases: []Case{{ID: "D1", Status: Pass}}})
	}
	var term strings.Builder
	if err := Terminal(&term, Build(runs), Options{}); err != nil {
		t.Fatal(err)
	}
	header := strings.SplitN(term.String(), "\n", 3)
	if header[0] != "(columns: trustgraph-…)" || !strings.Contains(header[1], " kafka+isolated ") || !strings.Contains(header[1], " pulsar+isolated") {
		t.Errorf("header:\n%s", term.String())
	}
	if got := midTruncate("pulsar-persistent", 15); got != "pulsar-…sistent" {
		t.Errorf("midTruncate: %q", got)
	}
}

// An isolated column the baseline lists is gated, also when its key has no entries (YAML
// `tg+isolated:`, a null): then its failures are new, and the report does not also call it a
// diagnosis that is not gated. Each column then has at most one whole-backend change.
func TestIsolatedColumnListedWithoutEntriesIsGated(t *testing.T) {
	path := filepath.Join(t.TempDir(), "baseline.yaml")
	writeFile(t, path, "backends:\n  tg:\n    D1: pass\n  tg+isolated:\n")
	b, err := ReadBaseline(path)
	if err != nil {
		t.Fatal(err)
	}
	m := Build([]*Run{{File: "ginkgo-tg+isolated.json", Label: "tg+isolated", Meta: &Meta{Backend: "tg+isolated", Isolated: true},
		Cases: []Case{{ID: "D1", Status: Fail, Message: "y"}, {ID: "D2", Status: Pass}}}})
	g := GateWith(m, b, GateOptions{Only: []string{"tg+isolated"}})
	var got []string
	for _, c := range g.Changes {
		got = append(got, string(c.Kind)+" "+c.Backend+" "+c.ID)
	}
	if want := "new failure tg+isolated D1; new spec tg+isolated *"; strings.Join(got, "; ") != want || !g.Failed() {
		t.Errorf("changes %q, want %q:\n%s", got, want, g.Report())
	}
}
