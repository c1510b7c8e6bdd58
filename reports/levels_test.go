package reports

import (
	"strings"
	"testing"

	"github.com/pubsub-conformance/harness/specs/catalogue"
)

// levelRuns: kafka fails D2 (a MUST) and D4 (a SHOULD); F5 was left out by the filter; the run
// selected kafka and pulsar only.
func levelRuns() []*Run {
	meta := &Meta{Backend: "kafka", Selected: []string{"kafka", "pulsar"}}
	return []*Run{{File: "ginkgo-kafka.json", Label: "kafka", Meta: meta, Cases: []Case{
		{ID: "D1", Status: Pass},
		{ID: "D2", Status: Fail, Message: "message never arrived"},
		{ID: "D4", Status: Fail, Message: "out of order"},
		{ID: "F5", Status: Skip, Message: "not selected by this run's filter --label-filter=\"!cluster\"", NotSelected: true},
	}}, {File: "ginkgo-pulsar.json", Label: "pulsar", Meta: &Meta{Backend: "pulsar", Selected: []string{"kafka", "pulsar"}}, Cases: []Case{
		{ID: "D1", Status: Pass}, {ID: "D2", Status: Pass}, {ID: "D4", Status: Fail, Message: "out of order"},
	}}}
}

func TestVerdictCountsByLevel(t *testing.T) {
	if b, _ := catalogue.Lookup("D4"); b.Level != catalogue.SHOULD {
		t.Fatalf("D4 is %s; this test needs a SHOULD", b.Level)
	}
	m := Build(levelRuns())
	if got, want := m.Verdict(0).String(), "TrustGraph's contract: 1 MUST failure; 1 SHOULD failure"; got != want {
		t.Errorf("kafka verdict %q, want %q", got, want)
	}
	if got := m.Verdict(1).String(); !strings.HasPrefix(got, "TrustGraph's contract: conforms; 1 SHOULD failure") {
		t.Errorf("pulsar verdict %q", got)
	}
	var term strings.Builder
	if err := Terminal(&term, m, Options{}); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"FAIL(S)", "kafka D4 FAIL (SHOULD): out of order", "kafka D2 FAIL: message never arrived", "n/s"} {
		if !strings.Contains(term.String(), s) {
			t.Errorf("terminal lacks %q:\n%s", s, term.String())
		}
	}
	var md, html strings.Builder
	if err := Markdown(&md, m, Options{}); err != nil {
		t.Fatal(err)
	}
	if err := HTML(&html, m, Options{}); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"⚠️ SHOULD fail", "❌ fail", "TrustGraph's contract: 1 MUST failure"} {
		if !strings.Contains(md.String(), s) {
			t.Errorf("markdown lacks %q", s)
		}
	}
	for _, s := range []string{`class="cell fail should"`, "SHOULD FAIL", `class="verdict"`} {
		if !strings.Contains(html.String(), s) {
			t.Errorf("html lacks %q", s)
		}
	}
}

func TestGateSelectionAndLevel(t *testing.T) {
	b := &Baseline{Backends: map[string]map[string]Accepted{
		"kafka":            {"D1": {Result: Pass}, "D2": {Result: Pass}, "D4": {Result: Pass}, "F5": {Result: Pass}},
		"pulsar":           {"D1": {Result: Pass}, "D2": {Result: Pass}, "D4": {Result: Fail}},
		"trustgraph-kafka": {"D1": {Result: Fail, Note: "JSON"}},
	}}
	m := Build(levelRuns(), b.IDs()...)
	kinds := func(g *GateResult) map[string]ChangeKind {
		out := map[string]ChangeKind{}
		for _, c := range g.Changes {
			out[c.Backend+" "+c.ID] = c.Kind
		}
		return out
	}
	g := GateWith(m, b, GateOptions{})
	k := kinds(g)
	if k["kafka F5"] != NotSelected || k["trustgraph-kafka *"] != NotSelected {
		t.Errorf("not selected: %v\n%s", k, g.Report())
	}
	if k["kafka D2"] != NewFailure || k["kafka D4"] != NewFailure || !g.Failed() {
		t.Errorf("regressions at level should: %v", k)
	}
	// At level must, D4 (a SHOULD) is reported and does not block; D2 still does.
	g = GateWith(m, b, GateOptions{Level: catalogue.MUST})
	blocking := 0
	for _, c := range g.Changes {
		if c.Blocking() {
			blocking++
			if c.ID != "D2" {
				t.Errorf("blocks at level must: %s", c)
			}
		}
	}
	if blocking != 1 || !strings.Contains(g.Report(), "kafka D4: pass -> fail: out of order [SHOULD] [not blocking") {
		t.Errorf("level must:\n%s", g.Report())
	}
	// A backend no run selected is missing when named, or when every backend is required.
	for _, o := range []GateOptions{{Only: []string{"trustgraph-kafka"}}, {AllBackends: true}} {
		if k := kinds(GateWith(m, b, o)); k["trustgraph-kafka *"] != Missing {
			t.Errorf("%+v: %v", o, k)
		}
	}
	// A legacy backend is never required, not even by -all-backends; named, it is.
	legacy := *b
	legacy.Legacy = []string{"trustgraph-kafka"}
	if k := kinds(GateWith(m, &legacy, GateOptions{AllBackends: true})); k["trustgraph-kafka *"] != NotSelected {
		t.Errorf("legacy, all backends: %v", k)
	}
	if k := kinds(GateWith(m, &legacy, GateOptions{Only: []string{"trustgraph-kafka"}})); k["trustgraph-kafka *"] != Missing {
		t.Errorf("legacy, named: %v", k)
	}
	if nb := FromMatrix(m, &legacy); !nb.IsLegacy("trustgraph-kafka") {
		t.Errorf("FromMatrix dropped the legacy list: %v", nb.Legacy)
	}
	// Without selection in the meta (a foreign or older report) a backend without a report is missing.
	runs := levelRuns()
	runs[0].Meta.Selected, runs[1].Meta.Selected = nil, nil
	if k := kinds(GateWith(Build(runs, b.IDs()...), b, GateOptions{})); k["trustgraph-kafka *"] != Missing {
		t.Errorf("no selection known: %v", k)
	}
	// Writing the baseline from this run keeps what it did not select.
	nb := FromMatrix(m, b)
	if nb.Backends["kafka"]["F5"].Result != Pass || nb.Backends["trustgraph-kafka"]["D1"].Note != "JSON" {
		t.Errorf("FromMatrix dropped what the run did not select: %+v", nb.Backends)
	}
}
