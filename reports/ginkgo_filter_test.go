package reports

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2/types"
)

// A spec the run's filters left out is "not selected by this run's filter ...", not a skip with
// no reason; a real skip keeps its reason, and a run without filters changes nothing.
func TestGinkgoJSONFilteredSpecsAreNotSelected(t *testing.T) {
	spec := func(id string, state types.SpecState, msg string) types.SpecReport {
		return types.SpecReport{
			LeafNodeType:   types.NodeTypeIt,
			LeafNodeText:   "[" + id + "] behaviour",
			LeafNodeLabels: []string{"id:" + id},
			State:          state,
			Failure:        types.Failure{Message: msg},
		}
	}
	build := func(cfg types.SuiteConfig) *Run {
		t.Helper()
		rep := types.Report{SuiteDescription: "s", SuiteConfig: cfg, SpecReports: types.SpecReports{
			spec("D1", types.SpecStateSkipped, ""),
			spec("D2", types.SpecStateSkipped, "lacks capability x: because"),
			spec("D3", types.SpecStatePassed, ""),
		}}
		data, err := json.Marshal([]types.Report{rep})
		if err != nil {
			t.Fatal(err)
		}
		run, err := ParseGinkgoJSON("ginkgo-x.json", strings.NewReader(string(data)))
		if err != nil {
			t.Fatal(err)
		}
		return run
	}
	byID := func(r *Run) map[string]Case {
		m := map[string]Case{}
		for _, c := range r.Cases {
			m[c.ID] = c
		}
		return m
	}

	got := byID(build(types.SuiteConfig{LabelFilter: "fault || slow", FocusStrings: []string{`\[F4\]`}}))
	if want := `not selected by this run's filter --label-filter="fault || slow" --focus="\\[F4\\]"`; got["D1"].Message != want {
		t.Errorf("filtered-out spec: message %q, want %q", got["D1"].Message, want)
	}
	if got["D1"].Status != Skip {
		t.Errorf("filtered-out spec: status %v, want skip", got["D1"].Status)
	}
	if got["D2"].Message != "lacks capability x: because" {
		t.Errorf("a real skip lost its reason: %q", got["D2"].Message)
	}

	got = byID(build(types.SuiteConfig{}))
	if got["D1"].Message != "" {
		t.Errorf("without filters a reasonless skip must stay reasonless (the matrix says so): %q", got["D1"].Message)
	}
}
