package suite

import (
	"strings"
	"testing"

	"github.com/pubsub-conformance/harness/fixtures"
	"github.com/pubsub-conformance/harness/fixtures/maven"
)

// defaultColumns clears what a column name reads besides the backend (ReportName: the
// isolation mode and each broker kind's release), for the test's life: the caller's settings
// (PUBSUB_KAFKA_VERSION=3.9.1 go tool ginkgo ./suite) must not reach the suite's unit tests.
func defaultColumns(t *testing.T) {
	t.Helper()
	t.Setenv(IsolateEnv, "")
	for _, k := range fixtures.Kinds() {
		t.Setenv(maven.VersionEnv(string(k)), "")
	}
}

func TestIsolatedSetting(t *testing.T) {
	defaultColumns(t)
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
	defaultColumns(t)
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

func TestVersionSuffixNamesARabbitMQRelease(t *testing.T) {
	defaultColumns(t)
	if got := ReportName("rabbitmq"); got != "rabbitmq" {
		t.Errorf("the system's release: %q", got)
	}
	t.Setenv("PUBSUB_RABBITMQ_VERSION", "4.3.6")
	for n, want := range map[string]string{"rabbitmq": "rabbitmq@4.3.6", "trustgraph-rabbitmq": "trustgraph-rabbitmq@4.3.6", "kafka": "kafka"} {
		if got := ReportName(n); got != want {
			t.Errorf("PUBSUB_RABBITMQ_VERSION=4.3.6: ReportName(%s) = %q, want %q", n, got, want)
		}
	}
}
