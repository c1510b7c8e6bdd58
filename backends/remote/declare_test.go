package remote

import (
	"reflect"
	"strings"
	"testing"
)

func TestFromEnviron(t *testing.T) {
	got, err := FromEnviron([]string{
		"PUBSUB_ADAPTER_MY_KAFKA={python} -m my_adapter --flag 'a b'",
		"PUBSUB_ADAPTER_MY_KAFKA_BROKER=kafka",
		"PUBSUB_ADAPTER_MY_KAFKA_REQUIREMENTS=backends/remote/python/requirements.txt my/reqs.txt",
		"PUBSUB_ADAPTER_MY_KAFKA_DIR=adapters",
		"PUBSUB_ADAPTER_LISTEN=unix:/x", // the child's own variable, not a declaration
		"PUBSUB_ADAPTER_RUST=./target/release/adapter",
		"OTHER=1",
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []Adapter{
		{Name: "my-kafka", Broker: "kafka", Dir: "adapters", Command: []string{"{python}", "-m", "my_adapter", "--flag", "a b"},
			Requirements: []string{"backends/remote/python/requirements.txt", "my/reqs.txt"},
			Description:  "user-declared adapter: {python} -m my_adapter --flag 'a b'", OptIn: true},
		{Name: "rust", Command: []string{"./target/release/adapter"}, Description: "user-declared adapter: ./target/release/adapter", OptIn: true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %+v\nwant %+v", got, want)
	}
	_, err = FromEnviron([]string{"PUBSUB_ADAPTER_X=cmd", "PUBSUB_ADAPTER_X_BROKER=rabbit", "PUBSUB_ADAPTER_Y='unterminated"})
	if err == nil || !strings.Contains(err.Error(), `PUBSUB_ADAPTER_X_BROKER="rabbit"`) || !strings.Contains(err.Error(), "PUBSUB_ADAPTER_Y=") {
		t.Fatalf("bad declarations: %v", err)
	}
}

// TestMissingPythonIsOneLine: without python3 on PATH, a Python adapter fails with one line
// that says what to install.
func TestMissingPythonIsOneLine(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := Venv(t.Context(), []string{SDKRequirements})
	if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "python3 not found on PATH") {
		t.Fatalf("got %q", err)
	}
}

// A declared broker kind is any registered one (fixtures.KindRecord), and the adapter reads
// its kind's environment (EnvPrefix) into its settings.
func TestBrokerKindFromRecords(t *testing.T) {
	got, err := FromEnviron([]string{"PUBSUB_ADAPTER_MQ=cmd", "PUBSUB_ADAPTER_MQ_BROKER=rabbitmq"})
	if err != nil || len(got) != 1 || got[0].Broker != "rabbitmq" {
		t.Fatalf("rabbitmq declaration: %+v, %v", got, err)
	}
	if env := got[0].Descriptor().Env; !reflect.DeepEqual(env, []string{"RABBITMQ_*"}) {
		t.Errorf("descriptor env %v, want [RABBITMQ_*]", env)
	}
	_, err = FromEnviron([]string{"PUBSUB_ADAPTER_X=cmd", "PUBSUB_ADAPTER_X_BROKER=nats"})
	if err == nil || !strings.Contains(err.Error(), "kafka, pulsar, rabbitmq") {
		t.Errorf("unknown kind: %v; want the known kinds listed", err)
	}
}
