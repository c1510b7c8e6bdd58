package suite

import (
	"fmt"
	"strings"
	"testing"

	"github.com/pubsub-conformance/harness/fixtures"
	"github.com/pubsub-conformance/harness/fixtures/maven"
	"github.com/pubsub-conformance/harness/suite/run"
)

// defaultColumns clears what a column name reads besides the backend (InRun: the
// isolation mode and each broker kind's release), for the test's life: the caller's settings
// (PUBSUB_KAFKA_VERSION=3.9.1 go tool ginkgo ./suite) must not reach the suite's unit tests.
func defaultColumns(t *testing.T) {
	t.Helper()
	t.Setenv(IsolateEnv, "")
	for _, k := range fixtures.Kinds() {
		t.Setenv(maven.VersionEnv(string(k)), "")
	}
}

// reportName is the column name InRun gives backend n in this environment; "" and a failed
// test for a bad setting.
func reportName(t *testing.T, n string) string {
	t.Helper()
	ts, err := run.ParseTargets(n)
	if err == nil {
		ts, err = InRun(ts)
	}
	if err != nil || len(ts) != 1 {
		t.Errorf("%s: %v", n, err)
		return ""
	}
	return ts[0].Column.String()
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
		ts, _ := run.ParseTargets("kafka memory")
		got, err := InRun(ts)
		if tc.fail {
			if err == nil || err.Error() != fmt.Sprintf("%s=%q: want topics (the harness creates every spec's topics outside the lifecycle area) or empty", IsolateEnv, strings.TrimSpace(tc.v)) {
				t.Errorf("%s=%q: InRun: %v", IsolateEnv, tc.v, err)
			}
			continue
		}
		if err != nil || len(got) != 2 || got[0].Column.Isolated != tc.on || got[1].Column.Isolated != tc.on {
			t.Errorf("%s=%q: InRun = %+v, %v", IsolateEnv, tc.v, got, err)
			continue
		}
		if want := map[bool]string{true: "kafka+isolated", false: "kafka"}[tc.on]; got[0].Column.String() != want {
			t.Errorf("%s=%q: kafka's column %q, want %q", IsolateEnv, tc.v, got[0].Column, want)
		}
		if ts[0].Column.Isolated {
			t.Error("InRun changed its input")
		}
	}
}

func TestVersionSuffixNamesANonDefaultRelease(t *testing.T) {
	defaultColumns(t)
	if got := reportName(t, "kafka"); got != "kafka" {
		t.Errorf("default release: %q", got)
	}
	t.Setenv("PUBSUB_KAFKA_VERSION", "3.9.1")
	for n, want := range map[string]string{"kafka": "kafka@3.9.1", "kafka~nack-noop": "kafka~nack-noop@3.9.1", "pulsar": "pulsar", "memory": "memory"} {
		if got := reportName(t, n); got != want {
			t.Errorf("PUBSUB_KAFKA_VERSION=3.9.1: %s's column %q, want %q", n, got, want)
		}
	}
	t.Setenv(IsolateEnv, "topics")
	if got := reportName(t, "kafka"); got != "kafka@3.9.1+isolated" {
		t.Errorf("isolated 3.9.1: %q", got)
	}
}

func TestVersionSuffixNamesARabbitMQRelease(t *testing.T) {
	defaultColumns(t)
	if got := reportName(t, "rabbitmq"); got != "rabbitmq" {
		t.Errorf("the system's release: %q", got)
	}
	t.Setenv("PUBSUB_RABBITMQ_VERSION", "4.3.6")
	for n, want := range map[string]string{"rabbitmq": "rabbitmq@4.3.6", "trustgraph-rabbitmq": "trustgraph-rabbitmq@4.3.6", "kafka": "kafka"} {
		if got := reportName(t, n); got != want {
			t.Errorf("PUBSUB_RABBITMQ_VERSION=4.3.6: %s's column %q, want %q", n, got, want)
		}
	}
}
