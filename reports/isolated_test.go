package reports

import (
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
