package suite

import (
	"strings"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/pubsub-conformance/harness/reports"
)

func TestWithResults(t *testing.T) {
	cols := Columns{"kafka": {Backend: "kafka"}} // the results name the column "kafka"
	spec := func(text string, state types.SpecState, attempts int, msg string, labels ...string) types.SpecReport {
		return types.SpecReport{LeafNodeType: types.NodeTypeIt, LeafNodeText: text, State: state,
			NumAttempts: attempts, Failure: types.Failure{Message: msg}, RunTime: 20 * time.Second,
			LeafNodeLabels: append([]string{"backend:kafka", "id:" + text[1:3]}, labels...)}
	}
	r := types.Report{
		SuiteConfig: types.SuiteConfig{LabelFilter: "!security"},
		SpecReports: types.SpecReports{
			spec("[D1] ran", types.SpecStatePassed, 1, ""),
			spec("[D2] never started", types.SpecStateSkipped, 0, ""),
			spec("[T3] cut off", types.SpecStateInterrupted, 1, "Interrupted by User"),
			spec("[R4] skipped by the spec", types.SpecStateSkipped, 1, "no private broker"),
			spec("[S1] filtered out", types.SpecStateSkipped, 0, "", "security"),
		},
	}
	// The result ReportAfterEach attached is kept (here: one that says D1 failed).
	attached := reports.Result{ID: "D1", Backend: "kafka", Status: reports.Fail, Cause: "attached"}
	r.SpecReports[0].ReportEntries = reports.SetResult(nil, attached)

	type want struct {
		state        types.SpecState
		msgPrefix    string // Ginkgo's message (the skip message people read in the JUnit)
		status       reports.Status
		reason       string
		notSelected  bool
		reasonPrefix bool
		cause        string
	}
	check := func(got types.SpecReports, ws []want) {
		t.Helper()
		for i, w := range ws {
			s := got[i]
			res, ok := reports.ResultOf(s.ReportEntries)
			if !ok {
				t.Errorf("%s: no result attached", s.LeafNodeText)
				continue
			}
			reasonOK := res.Reason == w.reason || (w.reasonPrefix && strings.HasPrefix(res.Reason, w.reason))
			if s.State != w.state || !strings.HasPrefix(s.Failure.Message, w.msgPrefix) ||
				res.Status != w.status || !reasonOK || res.NotSelected != w.notSelected || res.Cause != w.cause || res.Backend != "kafka" {
				t.Errorf("%s: %s %q, result %+v; want %+v", s.LeafNodeText, s.State, s.Failure.Message, res, w)
			}
		}
	}
	check(WithResults(r, cols).SpecReports, []want{
		{state: types.SpecStatePassed, status: reports.Fail, cause: "attached"},
		{state: types.SpecStateSkipped, status: reports.Skip},
		{state: types.SpecStateInterrupted, msgPrefix: "Interrupted by User", status: reports.Fail, cause: "interrupted: Interrupted by User"},
		{state: types.SpecStateSkipped, msgPrefix: "no private broker", status: reports.Skip, reason: "no private broker"},
		{state: types.SpecStateSkipped, status: reports.Skip, notSelected: true, reason: `not selected by this run's filter --label-filter="!security"`},
	})

	r.SpecialSuiteFailureReasons = []string{"Interrupted by User"}
	check(WithResults(r, cols).SpecReports, []want{
		{state: types.SpecStatePassed, status: reports.Fail, cause: "attached"},
		{state: types.SpecStateSkipped, msgPrefix: "not run: the run was interrupted", status: reports.NotRun, reason: "the run was interrupted"},
		{state: types.SpecStateSkipped, msgPrefix: "not run: the run was interrupted while it ran (after 20s)", status: reports.NotRun, reason: "the run was interrupted while it ran (after 20s)"},
		{state: types.SpecStateSkipped, msgPrefix: "no private broker", status: reports.Skip, reason: "no private broker"},
		{state: types.SpecStateSkipped, status: reports.Skip, notSelected: true, reason: "not selected by this run's ", reasonPrefix: true},
	})
	// An unknown result: Ginkgo's pass becomes a skip that says so, interrupted run or not.
	for _, reasons := range [][]string{nil, {"Interrupted by User"}} {
		u := spec("[D3] overflowed", types.SpecStatePassed, 1, "")
		u.ReportEntries = reports.SetResult(nil, reports.Result{ID: "D3", Backend: "kafka", Status: reports.Unknown, Reason: "the history overflowed"})
		got := WithResults(types.Report{SpecialSuiteFailureReasons: reasons, SpecReports: types.SpecReports{u}}, cols).SpecReports[0]
		if res, _ := reports.ResultOf(got.ReportEntries); got.State != types.SpecStateSkipped ||
			got.Failure.Message != "unknown: the history overflowed" || res.Status != reports.Unknown {
			t.Errorf("unknown (interrupt %v): %s %q, result %+v", reasons, got.State, got.Failure.Message, res)
		}
	}
	if r.SpecReports[1].Failure.Message != "" || len(r.SpecReports[1].ReportEntries) != 0 {
		t.Error("WithResults changed its input")
	}
	// A result made here is in the column the run resolved for its backend, not the name.
	got := WithResults(r, Columns{"kafka": {Backend: "kafka", Release: "3.9.1", Isolated: true}}).SpecReports
	if res, _ := reports.ResultOf(got[1].ReportEntries); res.Backend != "kafka@3.9.1+isolated" {
		t.Errorf("made result in column %q, want kafka@3.9.1+isolated", res.Backend)
	}
}
