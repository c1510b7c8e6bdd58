package reports

import (
	"strings"
	"testing"
)

// A broker release's column (kafka@3.9.1, docs/versions.md) sits beside the pinned release's;
// without entries of its own the gate holds it to the backend's, and a default run never
// misses it, even with -all-backends.
func TestBrokerReleaseColumnsAreGatedByBackendAndRelease(t *testing.T) {
	b := &Baseline{Backends: map[string]map[string]Accepted{
		"kafka":       {"D1": {Result: Pass}, "G1": {Result: Pass}},
		"kafka@3.7.2": {"D1": {Result: Pass}, "G1": {Result: Fail, Note: "accepted on 3.7.2"}},
	}}
	runs := []*Run{
		{File: "ginkgo-kafka@3.9.1.json", Label: "kafka@3.9.1", Meta: &Meta{Backend: "kafka@3.9.1", BrokerVersion: "3.9.1", Selected: []string{"kafka@3.9.1"}},
			Cases: []Case{{ID: "D1", Status: Pass}, {ID: "G1", Status: Fail, Message: "rebalance differs"}}},
	}
	m := Build(runs)
	if m.Backend("kafka@3.9.1") == nil {
		t.Fatal("no kafka@3.9.1 column")
	}
	g := GateWith(m, b, GateOptions{}) // make versions gates without -all-backends
	rep := g.Report()
	if !g.Failed() || !strings.Contains(rep, "kafka@3.9.1 G1: pass -> fail") {
		t.Errorf("3.9.1 must be held to kafka's baseline:\n%s", rep)
	}
	if !strings.Contains(rep, "judged against kafka's entries") {
		t.Errorf("the gate must say whose baseline it used:\n%s", rep)
	}
	if strings.Contains(rep, "MISSING") {
		t.Errorf("neither kafka nor kafka@3.7.2 is missing from a 3.9.1 run:\n%s", rep)
	}

	// A default run: kafka@3.7.2's entries are not missing, even with -all-backends.
	def := Build([]*Run{{File: "ginkgo-kafka.json", Label: "kafka", Meta: &Meta{Backend: "kafka", Selected: []string{"kafka"}},
		Cases: []Case{{ID: "D1", Status: Pass}, {ID: "G1", Status: Pass}}}})
	if g := GateWith(def, b, GateOptions{AllBackends: true}); g.Failed() {
		t.Errorf("a default run failed the gate on another release's column:\n%s", g.Report())
	}
	// 3.7.2 lists only what differs (G1): its accepted failure holds, and kafka's D1 still
	// counts, so a D1 failure on 3.7.2 is a regression.
	b.Backends["kafka@3.7.2"] = map[string]Accepted{"G1": {Result: Fail, Note: "accepted on 3.7.2"}}
	r372 := Build([]*Run{{File: "ginkgo-kafka@3.7.2.json", Label: "kafka@3.7.2", Meta: &Meta{Backend: "kafka@3.7.2", Selected: []string{"kafka@3.7.2"}},
		Cases: []Case{{ID: "D1", Status: Pass}, {ID: "G1", Status: Fail, Message: "x"}}}})
	if g := GateWith(r372, b, GateOptions{}); g.Failed() || !strings.Contains(g.Report(), "1 of them replaced by its own") {
		t.Errorf("kafka@3.7.2's own accepted failure:\n%s", g.Report())
	}
	for _, r := range r372.Rows {
		if r.Key == "D1" {
			r.Cells[0].Status = Fail
		}
	}
	if g := GateWith(r372, b, GateOptions{}); !g.Failed() {
		t.Errorf("a D1 failure on 3.7.2 must fail the gate through kafka's entry:\n%s", g.Report())
	}
}
