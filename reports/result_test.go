package reports

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/reporters"
	"github.com/onsi/ginkgo/v2/types"

	"github.com/pubsub-conformance/harness/specs/catalogue"
)

func resultSpec(id string, state types.SpecState, attempts int, msg string) types.SpecReport {
	return types.SpecReport{
		ContainerHierarchyTexts:  []string{"pub/sub conformance of kafka", "delivery"},
		ContainerHierarchyLabels: [][]string{{"backend:kafka"}, {"delivery"}},
		LeafNodeType:             types.NodeTypeIt,
		LeafNodeText:             "[" + id + "] behaviour of " + id,
		LeafNodeLabels:           []string{"id:" + id},
		State:                    state,
		NumAttempts:              attempts,
		Failure:                  types.Failure{Message: msg},
		RunTime:                  1500 * time.Millisecond,
	}
}

// NewResult reads Ginkgo's record of a spec into the result the suite attaches: the one-line
// cause of a failure (Gomega's shapes folded), a skip's reason, not selected with the filter,
// the catalogue's level, the column and the run time.
func TestNewResult(t *testing.T) {
	sel := types.SuiteConfig{LabelFilter: "id:D1 || id:D2 || id:T3 || id:D4 || id:D5"}
	tests := []struct {
		spec types.SpecReport
		want Result
	}{
		{resultSpec("D1", types.SpecStatePassed, 1, ""), Result{Status: Pass}},
		{resultSpec("D2", types.SpecStateFailed, 1, "Timed out after 10.001s.\nmessage never arrived\nExpected\n    <bool>: false\nto be true"),
			Result{Status: Fail, Cause: "Timed out after 10.001s: message never arrived"}},
		{resultSpec("D4", types.SpecStateTimedout, 1, "A node timeout occurred"), Result{Status: Fail, Cause: "timedout: A node timeout occurred"}},
		{resultSpec("T3", types.SpecStateSkipped, 1, "backend lacks retention-expiry: because\nmore"), Result{Status: Skip, Reason: "backend lacks retention-expiry: because"}},
		{resultSpec("D5", types.SpecStateSkipped, 0, ""), Result{Status: Skip}}, // selected, never started: WithResults decides
		{resultSpec("A1", types.SpecStateSkipped, 0, ""), Result{Status: Skip, NotSelected: true,
			Reason: `not selected by this run's filter --label-filter="id:D1 || id:D2 || id:T3 || id:D4 || id:D5"`}},
	}
	for _, tt := range tests {
		id := catalogue.IDFromLabels(tt.spec.Labels())
		got := NewResult(tt.spec, "kafka+isolated", sel)
		b, _ := catalogue.Lookup(id)
		tt.want.ID, tt.want.Backend, tt.want.Level, tt.want.Seconds = id, "kafka+isolated", b.Level, 1.5
		if got != tt.want {
			t.Errorf("%s:\n got %+v\nwant %+v", id, got, tt.want)
		}
	}
	if got := NewResult(resultSpec("T3", types.SpecStateSkipped, 0, ""), "kafka", sel); got.Level != catalogue.SHOULD {
		t.Errorf("T3's level %q, want the catalogue's SHOULD", got.Level)
	}
}

// Our suite's reports are read from the results they carry, in Ginkgo JSON and in JUnit alike
// (as Ginkgo itself writes them): where the result and the text disagree, the result wins; the
// column is the results' backend, not the file's name.
func TestReadRunStructured(t *testing.T) {
	specs := types.SpecReports{
		{LeafNodeType: types.NodeTypeSynchronizedBeforeSuite, State: types.SpecStatePassed},
		resultSpec("D1", types.SpecStatePassed, 1, ""),
		resultSpec("D2", types.SpecStateFailed, 1, "text the reports must not parse"),
		resultSpec("A1", types.SpecStateSkipped, 0, "not run: the run was interrupted"),
		resultSpec("T3", types.SpecStateSkipped, 0, ""),
	}
	results := map[string]Result{
		"D1": {ID: "D1", Backend: "kafka", Status: Pass, Seconds: 1.5},
		"D2": {ID: "D2", Backend: "kafka", Status: Fail, Cause: "the cause as data", Seconds: 2},
		"A1": {ID: "A1", Backend: "kafka", Status: NotRun, Reason: "the run was interrupted"},
		"T3": {ID: "T3", Backend: "kafka", Status: Skip, NotSelected: true, Reason: "not selected by this run's filter x"},
	}
	for i, s := range specs {
		if r, ok := results[catalogue.IDFromLabels(s.Labels())]; ok {
			specs[i].ReportEntries = SetResult(s.ReportEntries, r)
		}
	}
	rep := types.Report{SuiteDescription: "pub/sub conformance - kafka", SuiteSucceeded: false, SpecReports: specs}
	dir := t.TempDir()
	jsonPath, junitPath := filepath.Join(dir, "ginkgo-x.json"), filepath.Join(dir, "junit-x.xml")
	if err := reporters.GenerateJSONReport(rep, jsonPath); err != nil {
		t.Fatal(err)
	}
	if err := reporters.GenerateJUnitReportWithConfig(rep, junitPath, reporters.JunitReportConfig{OmitLeafNodeType: true}); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{jsonPath, junitPath} {
		run, err := ReadRun(path)
		if err != nil {
			t.Fatal(err)
		}
		if run.Label != "kafka" {
			t.Errorf("%s: label %q, want the results' backend", path, run.Label)
		}
		n := 0
		for _, c := range run.Cases {
			if c.Setup {
				continue
			}
			n++
			w := results[c.ID]
			if c.Status != w.Status || c.Message != w.Message() || c.NotSelected != w.NotSelected || c.Backend != "kafka" || c.Duration != w.Duration() {
				t.Errorf("%s %s: %+v, want from %+v", filepath.Base(path), c.ID, c, w)
			}
			if c.ID == "D2" && c.Detail == "" {
				t.Errorf("%s D2: the failure's detail (for the HTML page) is lost", filepath.Base(path))
			}
		}
		if n != len(results) {
			t.Errorf("%s: %d specs, want %d", path, n, len(results))
		}
	}
}

// A foreign report (no results) is read from its text: a Ginkgo JSON report of someone else's
// suite, with its filter, and the JUnit fixtures (junit_test.go).
func TestReadRunForeignGinkgoJSON(t *testing.T) {
	rep := types.Report{SuiteDescription: "other", SuiteConfig: types.SuiteConfig{SkipStrings: []string{"D1"}}, SpecReports: types.SpecReports{
		resultSpec("D1", types.SpecStateSkipped, 0, ""),
		resultSpec("D2", types.SpecStateFailed, 1, "desc\nUnexpected error:\n    <*errors.errorString | 0x1>: \n    boom"),
		resultSpec("T3", types.SpecStateSkipped, 1, "no retention"),
	}}
	path := filepath.Join(t.TempDir(), "ginkgo-other.json")
	if err := reporters.GenerateJSONReport(rep, path); err != nil {
		t.Fatal(err)
	}
	run, err := ReadRun(path)
	if err != nil {
		t.Fatal(err)
	}
	if run.Label != "other" {
		t.Errorf("label %q, want the file's", run.Label)
	}
	want := map[string]Case{
		"D1": {Status: Skip, NotSelected: true, Message: `not selected by this run's filter --skip="D1"`},
		"D2": {Status: Fail, Message: "desc: boom"},
		"T3": {Status: Skip, Message: "no retention"},
	}
	for _, c := range run.Cases {
		w := want[c.ID]
		if c.Status != w.Status || c.Message != w.Message || c.NotSelected != w.NotSelected || c.Backend != "" {
			t.Errorf("%s: %s %q (not selected %v), want %s %q (%v)", c.ID, c.Status, c.Message, c.NotSelected, w.Status, w.Message, w.NotSelected)
		}
	}
}

// The selection is Ginkgo's: its label-filter grammar, focus and skip over the full text.
func TestSelection(t *testing.T) {
	d1, t3 := resultSpec("D1", types.SpecStateSkipped, 0, ""), resultSpec("T3", types.SpecStateSkipped, 0, "")
	t3.LeafNodeLabels = append(t3.LeafNodeLabels, "slow")
	for _, tt := range []struct {
		cfg    types.SuiteConfig
		d1, t3 bool
		desc   string
	}{
		{types.SuiteConfig{}, true, true, ""},
		{types.SuiteConfig{LabelFilter: "!slow"}, true, false, `filter --label-filter="!slow"`},
		{types.SuiteConfig{LabelFilter: "delivery && /^id:T/"}, false, true, `filter --label-filter="delivery && /^id:T/"`},
		{types.SuiteConfig{FocusStrings: []string{`\[D1\]`}}, true, false, `filter --focus="\\[D1\\]"`},
		{types.SuiteConfig{SkipStrings: []string{"kafka delivery"}}, false, false, `filter --skip="kafka delivery"`},
	} {
		s := NewSelection(tt.cfg)
		if s.Selects(d1) != tt.d1 || s.Selects(t3) != tt.t3 || s.String() != tt.desc {
			t.Errorf("%+v: D1 %v T3 %v %q, want %v %v %q", tt.cfg, s.Selects(d1), s.Selects(t3), s.String(), tt.d1, tt.t3, tt.desc)
		}
	}
}

// The failure detail of the HTML page: the message, where, a forwarded panic, the report
// entries but the result (the message has its cause) and what the spec wrote.
func TestFailureDetail(t *testing.T) {
	s := resultSpec("D2", types.SpecStateFailed, 1, "message never arrived")
	s.ReportEntries = types.ReportEntries{
		{Name: ResultEntry, Value: types.WrapEntryValue("the result as data")},
		{Name: "history of contract calls", Value: types.WrapEntryValue("history: 3 calls")},
	}
	plain := failureDetail(s)
	if strings.Contains(plain, "panic:") || strings.Contains(plain, "output:") || strings.Contains(plain, "the result as data") ||
		!strings.Contains(plain, "history of contract calls:\nhistory: 3 calls") {
		t.Errorf("detail:\n%s", plain)
	}
	s.Failure.ForwardedPanic = "boom"
	s.CapturedGinkgoWriterOutput = "sent m1\n"
	if d := failureDetail(s); !strings.Contains(d, "\n\npanic: boom") || !strings.HasSuffix(d, "\n\noutput:\nsent m1") {
		t.Errorf("detail:\n%s", d)
	}
}

// Only a spec the filters left out without running it is "not selected": a pending spec, a
// skip with its own reason and a failure keep what they are, whatever the filter.
func TestNewResultNotSelectedOnlyForFilteredSkips(t *testing.T) {
	sel := types.SuiteConfig{LabelFilter: "id:D1"}
	for _, c := range []struct {
		spec        types.SpecReport
		status      Status
		message     string
		notSelected bool
	}{
		{resultSpec("D2", types.SpecStateSkipped, 0, ""), Skip, `not selected by this run's filter --label-filter="id:D1"`, true},
		{resultSpec("D2", types.SpecStatePending, 0, ""), Skip, "pending", false},
		{resultSpec("D2", types.SpecStateSkipped, 0, "lacks capability x"), Skip, "lacks capability x", false},
		{resultSpec("D2", types.SpecStateFailed, 0, "broke"), Fail, "broke", false},
	} {
		r := NewResult(c.spec, "kafka", sel)
		if r.Status != c.status || r.Message() != c.message || r.NotSelected != c.notSelected {
			t.Errorf("%s %s: %+v; want %s %q not selected %v", c.spec.State, c.spec.Failure.Message, r, c.status, c.message, c.notSelected)
		}
	}
	// A skip-file filter leaves out the specs of that file.
	s := resultSpec("D2", types.SpecStateSkipped, 0, "")
	s.LeafNodeLocation = types.CodeLocation{FileName: "/x/specs/delivery.go", LineNumber: 10}
	if r := NewResult(s, "kafka", types.SuiteConfig{SkipFiles: []string{"delivery.go"}}); !r.NotSelected {
		t.Errorf("a spec of a skipped file: %+v", r)
	}
	if r := NewResult(s, "kafka", types.SuiteConfig{SkipFiles: []string{"groups.go"}}); r.NotSelected {
		t.Errorf("a spec of another file than the skipped one: %+v", r)
	}
}

// A result reads "D1 on kafka: fail: <cause>" ("spec" without an ID, nothing after the status
// without a message), its duration is its seconds, and a result entry with a status that is
// none of the four is no result.
func TestResultStringDurationAndDecode(t *testing.T) {
	for r, want := range map[Result]string{
		{ID: "D1", Backend: "kafka", Status: Fail, Cause: "lost"}: "D1 on kafka: fail: lost",
		{Backend: "kafka", Status: Pass}:                          "spec on kafka: pass",
		{ID: "T3", Backend: "kafka", Status: Skip, Reason: "no"}:  "T3 on kafka: skip: no",
	} {
		if got := r.String(); got != want {
			t.Errorf("String %q, want %q", got, want)
		}
	}
	if d := (Result{Seconds: 1.5}).Duration(); d != 1500*time.Millisecond {
		t.Errorf("Duration %v", d)
	}
	bad := types.ReportEntries{{Name: ResultEntry, Value: types.ReportEntryValue{AsJSON: `{"status":"passed","id":"D1"}`}}}
	if r, ok := ResultOf(bad); ok {
		t.Errorf("a result with status \"passed\" was read: %+v", r)
	}
	good := types.ReportEntries{{Name: ResultEntry, Value: types.ReportEntryValue{AsJSON: `{"status":"pass","id":"D1"}`}}}
	if r, ok := ResultOf(good); !ok || r.ID != "D1" {
		t.Errorf("a good result: %+v %v", r, ok)
	}
}
