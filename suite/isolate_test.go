package suite

import (
	"strings"
	"testing"
)

func TestIsolatedSetting(t *testing.T) {
	for _, tc := range []struct {
		v    string
		on   bool
		fail bool
	}{{"", false, false}, {"off", false, false}, {"topics", true, false}, {" topics ", true, false}, {"yes", false, true}, {"all", false, true}} {
		t.Setenv(IsolateEnv, tc.v)
		on, err := Isolated()
		if on != tc.on || (err != nil) != tc.fail {
			t.Errorf("%s=%q: on %v err %v", IsolateEnv, tc.v, on, err)
		}
		if err != nil && (!strings.Contains(err.Error(), IsolateEnv) || !strings.Contains(err.Error(), "topics")) {
			t.Errorf("%s=%q: the error must name the setting and its value: %v", IsolateEnv, tc.v, err)
		}
		if want := map[bool]string{true: "kafka+isolated", false: "kafka"}[tc.on]; ReportName("kafka") != want {
			t.Errorf("%s=%q: ReportName(kafka) = %q, want %q", IsolateEnv, tc.v, ReportName("kafka"), want)
		}
	}
}

func TestVersionSuffixNamesANonDefaultRelease(t *testing.T) {
	t.Setenv(IsolateEnv, "")
	t.Setenv("PUBSUB_KAFKA_VERSION", "")
	if got := ReportName("kafka"); got != "kafka" {
		t.Errorf("default release: %q", got)
	}
	t.Setenv("PUBSUB_KAFKA_VERSION", "3.9.1")
	if got := ReportName("kafka"); got != "kafka@3.9.1" {
		t.Errorf("3.9.1: %q", got)
	}
	if got := ReportName("pulsar"); got != "pulsar" {
		t.Errorf("pulsar on a kafka release: %q", got)
	}
	t.Setenv(IsolateEnv, "topics")
	if got := ReportName("kafka"); got != "kafka@3.9.1+isolated" {
		t.Errorf("isolated 3.9.1: %q", got)
	}
}
