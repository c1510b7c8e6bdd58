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
