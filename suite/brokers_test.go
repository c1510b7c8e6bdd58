package suite

import (
	"slices"
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/pubsub-conformance/harness/fixtures"
	"github.com/pubsub-conformance/harness/reports"
	"github.com/pubsub-conformance/harness/suite/run"
)

// The run starts an auth-enabled broker per kind only where the shared broker has no
// authenticated listener and S1 or S2 runs there: once for both Pulsar backends, never for
// Kafka (its shared broker's SASL listener serves S1), never when the filter leaves S1 and S2
// out.
func TestAuthKinds(t *testing.T) {
	sel := func(filter string) reports.Selection {
		return reports.NewSelection(types.SuiteConfig{LabelFilter: filter})
	}
	both := []string{"kafka", "pulsar", "pulsar-persistent"}
	cases := []struct {
		names  []string
		filter string
		want   []fixtures.Kind
	}{
		{both, "", []fixtures.Kind{fixtures.Pulsar}},
		{both, "id:S1", []fixtures.Kind{fixtures.Pulsar}},
		{both, "id:S2", []fixtures.Kind{fixtures.Pulsar}},
		{both, "id:D1 || id:S10", nil},
		{both, "!security", nil},
		{both, "backend:pulsar-persistent && id:S1", []fixtures.Kind{fixtures.Pulsar}},
		{both, "backend:kafka", nil},
		{[]string{"kafka"}, "", nil},
		{[]string{"memory"}, "", nil},
	}
	for _, tc := range cases {
		ts, err := run.ParseTargets(strings.Join(tc.names, " "))
		if err != nil {
			t.Fatal(err)
		}
		if got := AuthKinds(ts, sel(tc.filter)); !slices.Equal(got, tc.want) {
			t.Errorf("AuthKinds(%v, %q) = %v; want %v", tc.names, tc.filter, got, tc.want)
		}
	}
}
