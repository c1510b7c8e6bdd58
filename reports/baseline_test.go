package reports

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pubsub-conformance/harness/specs/catalogue"
)

const fixtureBaseline = `# accepted results
backends:
  kafka:
    D1: pass
    D2: pass
    D7: {result: fail, note: "KAFKA-1: cancel maps to the wrong error"}
    G1: {result: skip, note: "was unsupported"}
    T1: skip
    T3: pass
    R4: pass
  pulsar:
    D1: pass
  nosuch:
    D1: pass
`

func TestGate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "baseline.yaml")
	writeFile(t, path, fixtureBaseline)
	b, err := ReadBaseline(path)
	if err != nil {
		t.Fatal(err)
	}
	if b.Backends["kafka"]["D7"].Note == "" || b.Backends["kafka"]["T1"].Result != Skip {
		t.Fatalf("both YAML forms should parse: %+v", b.Backends["kafka"])
	}
	m := fixtureMatrix(t, b.IDs()...)

	g := Gate(m, b, nil)
	var got []string
	for _, c := range g.Changes {
		got = append(got, string(c.Kind)+" "+c.Backend+" "+c.ID)
	}
	want := []string{
		"new failure kafka D2",
		"missing kafka R4",
		"newly skipped kafka T3",
		"missing nosuch *",
		"missing pulsar D1",
		"new failure python A1",
		"newly skipped python T3",
		"improvement kafka G1",
		"new spec python *",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("changes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !g.Failed() {
		t.Error("gate should fail")
	}
	report := g.Report()
	for _, s := range []string{"gate FAIL", "NEW FAILURE", "kafka D2: pass -> fail: Timed out after 0.050s: message never arrived",
		"MISSING", "pulsar D1: pass -> not-run: not run: BeforeSuite failed", "IMPROVEMENT", "kafka G1: skip -> pass: was unsupported"} {
		if !strings.Contains(report, s) {
			t.Errorf("report lacks %q:\n%s", s, report)
		}
	}

	t.Run("only kafka", func(t *testing.T) {
		g := Gate(m, b, []string{"kafka"})
		for _, c := range g.Changes {
			if c.Backend != "kafka" {
				t.Errorf("unexpected %v", c)
			}
		}
		if len(g.Changes) != 4 || !g.Failed() {
			t.Errorf("changes %v", g.Changes)
		}
	})

	t.Run("accepting the current results passes, improvements alone pass", func(t *testing.T) {
		nb := FromMatrix(m, b)
		if _, ok := nb.Backends["memory"]; ok {
			t.Error("reference backend must not be baselined")
		}
		if nb.Backends["kafka"]["D7"].Note == "" {
			t.Error("notes of unchanged results must be kept")
		}
		if _, ok := nb.Backends["nosuch"]; !ok {
			t.Error("a baseline backend this run did not report must be kept as it was")
		}
		delete(nb.Backends, "nosuch")
		out := filepath.Join(t.TempDir(), "b.yaml")
		if err := nb.Write(out); err != nil {
			t.Fatal(err)
		}
		rb, err := ReadBaseline(out)
		if err != nil {
			t.Fatal(err)
		}
		if g := Gate(m, rb, nil); g.Failed() || len(g.Changes) != 0 {
			t.Errorf("gate against own results: %s", g.Report())
		}
		// Accept a failure where the run passes: an improvement, reported, not failing.
		rb.Backends["kafka"]["D1"] = Accepted{Result: Fail}
		g := Gate(m, rb, nil)
		if g.Failed() || len(g.Changes) != 1 || g.Changes[0].Kind != Improvement {
			t.Errorf("improvement only: %s", g.Report())
		}
	})
}

func TestReadBaselineErrors(t *testing.T) {
	tests := []struct{ name, content, want string }{
		{"bad result", "backends:\n  kafka:\n    D1: passed\n", `result "passed": want pass, skip or fail`},
		{"unknown field", "backends:\n  kafka:\n    D1: {result: pass, note: x, extra: 1}\n", "extra"},
		{"no backends", "# nothing\n", "baseline has no backends"},
		{"not yaml", "backends: [unclosed\n", "malformed baseline"},
		{"wrong top level", "kafka:\n  D1: pass\n", "malformed baseline"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "baseline.yaml")
			writeFile(t, path, tt.content)
			_, err := ReadBaseline(path)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), path) {
				t.Errorf("err %v, want %q naming the file", err, tt.want)
			}
		})
	}
}

// The mapping form is held to the same results as the short one: a note does not let a
// result through that is not pass, skip or fail.
func TestReadBaselineMappingResult(t *testing.T) {
	path := filepath.Join(t.TempDir(), "baseline.yaml")
	writeFile(t, path, "backends:\n  kafka:\n    D1: {result: passed, note: \"typo\"}\n")
	if _, err := ReadBaseline(path); err == nil || !strings.Contains(err.Error(), `result "passed"`) {
		t.Errorf("err %v, want the bad result named", err)
	}
}

// A written baseline keeps what was accepted and why: a note written for a result stays while
// the result does, a changed result gets the run's cause in its place (a pass no note), and a
// result accepted without a note gets the run's cause; the file round-trips with its notes.
func TestFromMatrixNotes(t *testing.T) {
	m := Build([]*Run{{File: "ginkgo-k.json", Label: "k", Meta: &Meta{Backend: "k"}, Cases: []Case{
		{ID: "D1", Status: Pass},
		{ID: "D2", Status: Fail, Message: "lost m3"},
		{ID: "D3", Status: Skip, Message: "capability x unsupported"},
		{ID: "D4", Status: Pass},
		{ID: "D5", Status: Fail, Message: "still lost"},
	}}})
	prev := &Baseline{Backends: map[string]map[string]Accepted{"k": {
		"D2": {Result: Skip, Note: "was unsupported"},
		"D3": {Result: Skip},
		"D4": {Result: Fail, Note: "KAFKA-1"},
		"D5": {Result: Fail, Note: "KAFKA-2: known"},
	}}}
	got := FromMatrix(m, prev).Backends["k"]
	want := map[string]Accepted{
		"D1": {Result: Pass},
		"D2": {Result: Fail, Note: "lost m3"},
		"D3": {Result: Skip, Note: "capability x unsupported"},
		"D4": {Result: Pass},
		"D5": {Result: Fail, Note: "KAFKA-2: known"},
	}
	for id, w := range want {
		if got[id] != w {
			t.Errorf("%s: %+v, want %+v", id, got[id], w)
		}
	}
	path := filepath.Join(t.TempDir(), "b.yaml")
	if err := FromMatrix(m, prev).Write(path); err != nil {
		t.Fatal(err)
	}
	text := readFile(t, path)
	if !strings.Contains(text, "\n    D1: pass\n") || !strings.Contains(text, `D5: {result: fail, note: 'KAFKA-2: known'}`) {
		t.Errorf("written baseline:\n%s", text)
	}
	rb, err := ReadBaseline(path)
	if err != nil {
		t.Fatal(err)
	}
	if rb.Backends["k"]["D5"] != want["D5"] || rb.Backends["k"]["D1"] != want["D1"] {
		t.Errorf("read back: %+v", rb.Backends["k"])
	}
}

// The gate's report: its verdict, counts and the hint to accept improvements say what the
// changes are; changes of one backend come whole-backend first, then in catalogue order
// (D2 before D10), and a backend the baseline does not know counts its passes as checked.
func TestGateReportCountsAndOrder(t *testing.T) {
	b := &Baseline{Backends: map[string]map[string]Accepted{
		"kafka":       {"D2": {Result: Fail}, "D10": {Result: Fail}, "G1": {Result: Pass}},
		"kafka@3.9.1": {},
	}}
	m := Build([]*Run{
		{File: "ginkgo-kafka@3.9.1.json", Label: "kafka@3.9.1", Meta: &Meta{Backend: "kafka@3.9.1"},
			Cases: []Case{{ID: "D10", Status: Pass}, {ID: "D2", Status: Pass}, {ID: "G1", Status: Pass}}},
		{File: "ginkgo-new.json", Label: "new", Meta: &Meta{Backend: "new"},
			Cases: []Case{{ID: "D1", Status: Pass}, {ID: "D2", Status: Pass}}},
	})
	g := GateWith(m, b, GateOptions{Only: []string{"kafka@3.9.1", "new"}})
	var got []string
	for _, c := range g.Changes {
		got = append(got, string(c.Kind)+" "+c.Backend+" "+c.ID)
	}
	want := []string{"not selected kafka@3.9.1 *", "improvement kafka@3.9.1 D2", "improvement kafka@3.9.1 D10", "new spec new *"}
	if strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Errorf("changes %q, want %q", got, want)
	}
	rep := g.Report()
	if first, _, _ := strings.Cut(rep, "\n"); first != "gate PASS: 5 results checked, 0 blocking change(s), 4 other (improvements, new specs, not selected, SHOULD below the gate's level)" {
		t.Errorf("verdict line %q", first)
	}
	if !strings.Contains(rep, "accept improvements by updating the baseline") || !strings.Contains(rep, "no baseline entries of its own: judged against kafka's entries") {
		t.Errorf("report:\n%s", rep)
	}
	// Nothing to accept: no hint.
	g = GateWith(m, b, GateOptions{Only: []string{"kafka"}})
	if rep := g.Report(); !strings.HasPrefix(rep, "gate FAIL: 0 results checked, 1 blocking change(s), 0 other") || strings.Contains(rep, "accept improvements") {
		t.Errorf("report:\n%s", rep)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// What a baseline accepts is exactly its result: a spec accepted to fail that is now skipped is
// newly skipped (a skip hides whether the defect is still there), and at GATE_LEVEL=must a
// row without a level (a foreign testcase) still blocks: only SHOULD rows are below it.
func TestGateAcceptsExactlyTheResult(t *testing.T) {
	b := &Baseline{Backends: map[string]map[string]Accepted{"k": {"D2": {Result: Fail, Note: "KAFKA-1"}, "test_foreign": {Result: Pass}}}}
	m := Build([]*Run{{File: "a", Label: "k", Cases: []Case{
		{ID: "D2", Status: Skip, Message: "lacks x"},
		{Text: "test_foreign", Status: Fail, Message: "broke"},
	}}})
	g := GateWith(m, b, GateOptions{Level: catalogue.MUST})
	var blocking []string
	for _, c := range g.Changes {
		if c.Blocking() {
			blocking = append(blocking, string(c.Kind)+" "+c.ID)
		}
	}
	if strings.Join(blocking, ", ") != "newly skipped D2, new failure test_foreign" {
		t.Errorf("blocking changes %q, want D2 newly skipped and the foreign row's failure:\n%s", blocking, g.Report())
	}
}
