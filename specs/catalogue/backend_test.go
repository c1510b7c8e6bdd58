package catalogue

import "testing"

func TestBackendLabel(t *testing.T) {
	if got := BackendLabel("kafka~latest-race"); got != "backend:kafka~latest-race" {
		t.Errorf("BackendLabel = %q", got)
	}
	for _, tt := range []struct {
		labels []string
		want   string
	}{
		{[]string{"id:D1", "backend:pulsar-persistent", "delivery"}, "pulsar-persistent"},
		{[]string{"id:D1", "delivery"}, ""},
		{nil, ""},
	} {
		if got := BackendFromLabels(tt.labels); got != tt.want {
			t.Errorf("BackendFromLabels(%v) = %q, want %q", tt.labels, got, tt.want)
		}
	}
}

// A column name keeps every suffix through its label: <backend>~<variant>@<release>+isolated
// reads back whole, and a label that only contains "backend:" is not the backend label.
func TestBackendLabelKeepsEverySuffix(t *testing.T) {
	for _, n := range []string{"kafka", "kafka~latest-race", "kafka@3.9.1", "kafka+isolated",
		"kafka~latest-race@3.9.1", "kafka@3.9.1+isolated", "trustgraph-kafka-sync~ack-noop@4.0.0-rc1+isolated"} {
		if got := BackendFromLabels([]string{"id:D1", BackendLabel(n), "delivery"}); got != n {
			t.Errorf("BackendFromLabels(BackendLabel(%q)) = %q", n, got)
		}
	}
	if got := BackendFromLabels([]string{"not-backend:kafka", "backend:pulsar"}); got != "pulsar" {
		t.Errorf("BackendFromLabels = %q, want pulsar", got)
	}
}
