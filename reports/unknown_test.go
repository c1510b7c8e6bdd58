package reports

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2/reporters"
	"github.com/onsi/ginkgo/v2/types"

	"github.com/pubsub-conformance/harness/internal/evidence"
	"github.com/pubsub-conformance/harness/specs/catalogue"
)

// overflowed is a spec Ginkgo passed that attached evidence.Unknown, as specs/history.go does
// when the history overflowed: held as Ginkgo holds it in the process that added it (the typed
// value) or after JSON (a decoded map and AsJSON).
func overflowed(id string) types.SpecReport {
	s := resultSpec(id, types.SpecStatePassed, 1, "")
	s.ReportEntries = types.ReportEntries{{Name: evidence.UnknownEntry, Value: types.WrapEntryValue(evidence.HistoryFull(200000, 31))}}
	return s
}

// An overflowed history makes the spec unknown, never a pass: in the result the suite
// attaches, in our Ginkgo JSON and JUnit read back, and in a results-less JSON (the fallback).
func TestUnknownResult(t *testing.T) {
	r := NewResult(overflowed("D3"), "kafka", types.SuiteConfig{})
	if r.Status != Unknown || !strings.Contains(r.Reason, "31 calls after the first 200000 not recorded") {
		t.Fatalf("result %+v, want unknown with the overflow's reason", r)
	}
	if got := r.String(); !strings.Contains(got, "D3 on kafka: unknown: the history overflowed") {
		t.Errorf("String() = %q", got)
	}
	// A failed spec stays failed: its own assertions judged it.
	f := overflowed("D3")
	f.State, f.Failure.Message = types.SpecStateFailed, "lost messages"
	if r := NewResult(f, "kafka", types.SuiteConfig{}); r.Status != Fail {
		t.Errorf("a failed spec with an overflowed history: %s, want fail", r.Status)
	}

	withResult := overflowed("D3")
	withResult.ReportEntries = SetResult(withResult.ReportEntries, r)
	dir := t.TempDir()
	for name, specs := range map[string]types.SpecReports{"with-result": {withResult}, "without": {overflowed("D3")}} {
		rep := types.Report{SuiteDescription: "pub/sub conformance - kafka", SuiteSucceeded: true, SpecReports: specs}
		paths := []string{filepath.Join(dir, "ginkgo-"+name+".json")}
		if err := reporters.GenerateJSONReport(rep, paths[0]); err != nil {
			t.Fatal(err)
		}
		if name == "with-result" { // only our JUnit carries the result (a property)
			paths = append(paths, filepath.Join(dir, "junit-"+name+".xml"))
			if err := reporters.GenerateJUnitReportWithConfig(rep, paths[1], reporters.JunitReportConfig{OmitLeafNodeType: true}); err != nil {
				t.Fatal(err)
			}
		}
		for _, p := range paths {
			run, err := ReadRun(p)
			if err != nil {
				t.Fatal(err)
			}
			if c := run.Cases[0]; c.Status != Unknown || !strings.Contains(c.Message, "history overflowed") {
				t.Errorf("%s: case %s %q, want unknown with the reason", filepath.Base(p), c.Status, c.Message)
			}
		}
	}
	if _, err := decodeResult(`{"backend":"kafka","status":"unknown","reason":"x"}`); err != nil {
		t.Errorf("decode an unknown result: %v", err)
	}
	// An entry of an unexpected shape is still no pass.
	odd := resultSpec("D3", types.SpecStatePassed, 1, "")
	odd.ReportEntries = types.ReportEntries{{Name: evidence.UnknownEntry, Value: types.WrapEntryValue("full")}}
	if st, _ := outcome(odd); st != Unknown {
		t.Errorf("an unknown entry of another shape: %s, want unknown", st)
	}
}

// unknownMatrix: kafka's D3 (a MUST, accepted pass) and D4 (a SHOULD, accepted fail) are unknown.
func unknownMatrix() *Matrix {
	run := exitRun("kafka", []string{"kafka"}, map[string]Status{"D1": Pass, "D2": Pass, "D3": Unknown, "D4": Unknown, "R6": Pass})
	for i := range run.Cases {
		if run.Cases[i].Status == Unknown {
			run.Cases[i].Message = "the history overflowed"
		}
	}
	return Build([]*Run{run})
}

// No renderer shows an unknown cell as a pass, and the verdict does not say "conforms".
func TestUnknownIsNotRenderedAsAPass(t *testing.T) {
	m := unknownMatrix()
	c := m.Cell("D3", "kafka")
	if c == nil || c.Status != Unknown {
		t.Fatalf("D3 cell %+v, want unknown", c)
	}
	v := m.Verdict(0)
	if v.MustUnknown != 1 || v.ShouldUnknown != 1 || strings.Contains(v.String(), "conforms") {
		t.Errorf("verdict %+v %q: want 1 MUST and 1 SHOULD unknown, not conforms", v, v.String())
	}
	// The verdict line counts both, the MUST one apart.
	if want := "TrustGraph's contract: unknown; 0 SHOULD failures; 2 unknown results (1 MUST): the checkers could not vouch for them"; !strings.HasPrefix(v.String(), want) {
		t.Errorf("verdict line %q, want it to start %q", v.String(), want)
	}
	var term, md, page bytes.Buffer
	if err := Terminal(&term, m, Options{Width: 200}); err != nil {
		t.Fatal(err)
	}
	if err := Markdown(&md, m, Options{}); err != nil {
		t.Fatal(err)
	}
	if err := HTML(&page, m, Options{}); err != nil {
		t.Fatal(err)
	}
	row := func(text, prefix string) string {
		for _, l := range strings.Split(text, "\n") {
			if strings.HasPrefix(l, prefix) {
				return l
			}
		}
		t.Fatalf("no line %q in\n%s", prefix, text)
		return ""
	}
	if l := row(term.String(), "D3 "); !strings.Contains(l, "UNKNOWN") || strings.Contains(l, "PASS") {
		t.Errorf("terminal row: %q", l)
	}
	if !strings.Contains(term.String(), "kafka D3 UNKNOWN: the history overflowed") || !strings.Contains(term.String(), "3 pass, 0 fail, 0 skip, 0 not run, 2 unknown") {
		t.Errorf("terminal lacks the unknown note or count:\n%s", term.String())
	}
	if l := row(md.String(), "| D3 "); !strings.Contains(l, "unknown") || strings.Contains(l, "pass") {
		t.Errorf("markdown row: %q", l)
	}
	if !strings.Contains(page.String(), `data-status="unknown"`) || strings.Count(page.String(), `data-status="pass"`) != 3 {
		t.Errorf("html: want 2 unknown and 3 pass cells")
	}
}

// The gate never counts an unknown as the pass the baseline accepts: it blocks where a pass is
// accepted (or nothing is), is reported where a failure is accepted, and a baseline cannot
// accept it; the exit status follows.
func TestUnknownIsNotGatedAsAPass(t *testing.T) {
	m := unknownMatrix()
	b := &Baseline{Backends: map[string]map[string]Accepted{
		"kafka": {"D1": {Result: Pass}, "D2": {Result: Pass}, "D3": {Result: Pass}, "D4": {Result: Fail}, "R6": {Result: Pass}},
	}}
	g := GateWith(m, b, GateOptions{})
	kinds := map[string]Change{}
	for _, c := range g.Changes {
		kinds[c.ID] = c
	}
	if c := kinds["D3"]; c.Kind != UnknownResult || !c.Blocking() {
		t.Errorf("D3 (accepted pass, now unknown): %+v blocking=%v, want a blocking unknown", c, c.Blocking())
	}
	if c := kinds["D4"]; c.Kind != UnknownResult || c.Blocking() {
		t.Errorf("D4 (accepted fail, now unknown): %+v blocking=%v, want a non-blocking unknown", c, c.Blocking())
	}
	if !g.Failed() {
		t.Error("the gate passed a run whose accepted pass is unknown")
	}
	code, line := RunExit(m, g, RunExitOptions{})
	if code != ExitFailed || !strings.Contains(line, "kafka D3 (unknown)") {
		t.Errorf("exit %d %q, want 1 naming kafka D3 (unknown)", code, line)
	}
	// Without D3's pass accepted, the only unknown left is D4's: exit 0, said, unless strict.
	b.Backends["kafka"]["D3"] = Accepted{Result: Fail}
	g = GateWith(m, b, GateOptions{})
	if code, line := RunExit(m, g, RunExitOptions{}); code != ExitAccepted || !strings.Contains(line, "2 unknown results") {
		t.Errorf("exit %d %q, want 0 saying 2 unknown results", code, line)
	}
	if code, _ := RunExit(m, g, RunExitOptions{Strict: true}); code != ExitFailed {
		t.Errorf("strict: exit %d, want 1", code)
	}
	// A column the baseline does not judge: an unknown is not accepted.
	m2 := Build([]*Run{exitRun("new-adapter", []string{"new-adapter"}, map[string]Status{"D1": Pass, "D3": Unknown})})
	if code, line := RunExit(m2, GateWith(m2, b, GateOptions{}), RunExitOptions{}); code != ExitFailed {
		t.Errorf("new column with an unknown: exit %d %q, want 1", code, line)
	}
	// A baseline written from the matrix leaves unknown out (keeping the previous entry).
	nb := FromMatrix(m, b)
	if a := nb.Backends["kafka"]["D3"]; a.Result != Fail {
		t.Errorf("FromMatrix D3 = %+v, want the previous entry kept", a)
	}
	if _, ok := FromMatrix(m, nil).Backends["kafka"]["D3"]; ok {
		t.Error("FromMatrix without a previous baseline accepted an unknown")
	}
	path := filepath.Join(t.TempDir(), "baseline.yaml")
	if err := os.WriteFile(path, []byte("backends:\n  kafka:\n    D3: unknown\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadBaseline(path); err == nil || !strings.Contains(err.Error(), `result "unknown"`) {
		t.Errorf("a baseline accepting unknown: %v, want refused", err)
	}
}

// At gate level must, a SHOULD's unknown is reported, not blocking.
func TestUnknownBelowTheGateLevel(t *testing.T) {
	m := unknownMatrix()
	b := &Baseline{Backends: map[string]map[string]Accepted{"kafka": {"D3": {Result: Fail}, "D4": {Result: Pass}}}}
	for _, c := range GateWith(m, b, GateOptions{Level: catalogue.MUST}).Changes {
		if c.ID == "D4" && (c.Kind != UnknownResult || c.Blocking()) {
			t.Errorf("D4 (a SHOULD) at level must: %+v blocking=%v", c, c.Blocking())
		}
	}
}

// An unknown cell says why as a failed one does: an entry of a table names itself, a spec of
// one entry or an entry without a text does not.
func TestUnknownCellNamesItsEntry(t *testing.T) {
	m := Build([]*Run{{File: "a.json", Label: "k", Cases: []Case{
		{ID: "D3", Text: "one entry", Status: Unknown, Message: "overflowed"},
		{ID: "D7", Text: "on cancel", Status: Unknown, Message: "overflowed"},
		{ID: "D7", Text: "on deadline", Status: Pass},
		{ID: "D8", Status: Unknown, Message: "overflowed"},
		{ID: "D8", Text: "second", Status: Pass},
	}}})
	for id, want := range map[string]string{"D3": "overflowed", "D7": "overflowed (entry: on cancel)", "D8": "overflowed"} {
		if c := m.Cell(id, "k"); c.Status != Unknown || c.Message != want {
			t.Errorf("%s: %s %q, want unknown %q", id, c.Status, c.Message, want)
		}
	}
}

// The legend explains UNKNOWN, in the terminal and the Markdown, exactly when a cell is
// unknown: a matrix of passes and failures has no such line to puzzle over.
func TestUnknownLegendOnlyWithAnUnknownCell(t *testing.T) {
	for _, withUnknown := range []bool{false, true} {
		cases := []Case{{ID: "D1", Status: Pass}, {ID: "D2", Status: Fail, Message: "lost"}, {ID: "D4", Status: Skip, Message: "no"}}
		if withUnknown {
			cases = append(cases, Case{ID: "D3", Status: Unknown, Message: "overflowed"})
		}
		m := Build([]*Run{{File: "ginkgo-k.json", Label: "k", Cases: cases}})
		var term, md bytes.Buffer
		if err := Terminal(&term, m, Options{Width: 200}); err != nil {
			t.Fatal(err)
		}
		if err := Markdown(&md, m, Options{}); err != nil {
			t.Fatal(err)
		}
		for name, out := range map[string]string{"terminal": term.String(), "markdown": md.String()} {
			if got := strings.Contains(out, "could not vouch for the run"); got != withUnknown {
				t.Errorf("%s with an unknown cell %v: legend %v\n%s", name, withUnknown, got, out)
			}
		}
	}
}

// An unknown entry of another shape still makes the spec unknown, with a reason for people:
// an empty reason, or one from a value that did not decode, is replaced by the general one.
func TestUnknownEntryOfAnotherShape(t *testing.T) {
	for _, v := range []string{`{}`, `"overflowed"`, `{"reason": "half", "dropped": "x"}`} {
		u, ok := unknownOf(types.ReportEntries{{Name: evidence.UnknownEntry, Value: types.ReportEntryValue{AsJSON: v}}})
		if !ok || u.Reason != "the checkers could not vouch for the run" {
			t.Errorf("%s: %v %+v, want unknown with the general reason", v, ok, u)
		}
	}
	if u, ok := unknownOf(types.ReportEntries{{Name: evidence.UnknownEntry, Value: types.ReportEntryValue{AsJSON: `{"reason": "its own"}`}}}); !ok || u.Reason != "its own" {
		t.Errorf("a reason of its own: %v %+v", ok, u)
	}
}
