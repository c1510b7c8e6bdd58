package suite

import (
	"strings"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/types"
)

func TestMarkNotRun(t *testing.T) {
	spec := func(text string, state types.SpecState, attempts int, msg string, labels ...string) types.SpecReport {
		return types.SpecReport{LeafNodeType: types.NodeTypeIt, LeafNodeText: text, State: state,
			NumAttempts: attempts, Failure: types.Failure{Message: msg}, LeafNodeLabels: labels, RunTime: 20 * time.Second}
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
	if got := MarkNotRun(r); got.SpecReports[1].Failure.Message != "" {
		t.Fatalf("a complete run must stay as it is: %+v", got.SpecReports[1])
	}
	r.SpecialSuiteFailureReasons = []string{"Interrupted by User"}
	got := MarkNotRun(r).SpecReports
	want := []struct {
		state  types.SpecState
		prefix string
	}{
		{types.SpecStatePassed, ""},
		{types.SpecStateSkipped, "not run: the run was interrupted"},
		{types.SpecStateSkipped, "not run: the run was interrupted while it ran (after 20s)"},
		{types.SpecStateSkipped, "no private broker"},
		{types.SpecStateSkipped, ""},
	}
	for i, w := range want {
		if got[i].State != w.state || !strings.HasPrefix(got[i].Failure.Message, w.prefix) || (w.prefix == "" && got[i].Failure.Message != "") {
			t.Errorf("%s: %s %q, want %s %q", got[i].LeafNodeText, got[i].State, got[i].Failure.Message, w.state, w.prefix)
		}
	}
	if r.SpecReports[1].Failure.Message != "" {
		t.Error("MarkNotRun changed its input")
	}
}
