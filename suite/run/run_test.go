package run

import (
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/pubsub-conformance/harness/backends"
	"github.com/pubsub-conformance/harness/backends/all"
	"github.com/pubsub-conformance/harness/backends/mutants"
	"github.com/pubsub-conformance/harness/fixtures"
)

// The names resolved are the registry's, as a suite run has them: the backends and their
// known-bad variants.
func TestMain(m *testing.M) {
	if all.AdapterError != nil {
		panic(all.AdapterError)
	}
	if err := mutants.RegisterAll(); err != nil {
		panic(err)
	}
	os.Exit(m.Run())
}

func TestSelected(t *testing.T) {
	env := func(v string) func(string) string { return func(string) string { return v } }
	got, err := Selected("", env(""))
	if err != nil || !slices.Equal(got, []string{"memory"}) {
		t.Errorf("default = %v, %v; want [memory]", got, err)
	}
	got, err = Selected("", env(" kafka, pulsar ,kafka,"))
	if err != nil || !slices.Equal(got, []string{"kafka", "pulsar"}) {
		t.Errorf("env list = %v, %v; want [kafka pulsar]", got, err)
	}
	got, err = Selected("pulsar-persistent", env("kafka"))
	if err != nil || !slices.Equal(got, []string{"pulsar-persistent"}) {
		t.Errorf("flag over env = %v, %v", got, err)
	}
	_, err = Selected("kafak", env(""))
	if !errors.Is(err, backends.ErrUnknownBackend) || !strings.Contains(err.Error(), "kafka") || !strings.Contains(err.Error(), "PUBSUB_BACKENDS") {
		t.Errorf("unknown backend error %v should name the variable and list the known backends", err)
	}
}

func TestParseBackends(t *testing.T) {
	got, err := ParseBackends(" kafka pulsar,kafka  rabbitmq,")
	if err != nil || !slices.Equal(got, []string{"kafka", "pulsar", "rabbitmq"}) {
		t.Errorf("ParseBackends = %v, %v; want [kafka pulsar rabbitmq]", got, err)
	}
	_, err = ParseBackends("kafka nosuch")
	if !errors.Is(err, backends.ErrUnknownBackend) || !strings.HasPrefix(err.Error(), `unknown backend "nosuch" (known: `) ||
		!strings.Contains(err.Error(), "rabbitmq") {
		t.Errorf("unknown backend: %v", err)
	}
}

func TestKinds(t *testing.T) {
	if k, ok := KindFor("pulsar~nack-noop"); !ok || k != fixtures.Pulsar {
		t.Errorf("a mutant needs its base's broker: %v %v", k, ok)
	}
	if _, ok := KindFor("memory"); ok {
		t.Error("memory needs no broker")
	}
	got := Kinds([]string{"pulsar-persistent", "memory", "kafka", "pulsar"})
	if !slices.Equal(got, []fixtures.Kind{fixtures.Kafka, fixtures.Pulsar}) {
		t.Errorf("Kinds = %v; want one Kafka and one Pulsar", got)
	}
}
