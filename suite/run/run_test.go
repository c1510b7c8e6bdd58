package run

import (
	"context"
	"errors"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/pubsub-conformance/harness/backends"
	"github.com/pubsub-conformance/harness/backends/all"
	"github.com/pubsub-conformance/harness/backends/mutants"
	"github.com/pubsub-conformance/harness/fixtures"
	"github.com/pubsub-conformance/harness/internal/column"
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

func TestSelect(t *testing.T) {
	env := func(v string) func(string) string { return func(string) string { return v } }
	got, err := Select("", env(""))
	if err != nil || !slices.Equal(Names(got), []string{"memory"}) {
		t.Errorf("default = %v, %v; want [memory]", Names(got), err)
	}
	got, err = Select("", env(" kafka, pulsar ,kafka,"))
	if err != nil || !slices.Equal(Names(got), []string{"kafka", "pulsar"}) {
		t.Errorf("env list = %v, %v; want [kafka pulsar]", Names(got), err)
	}
	got, err = Select("pulsar-persistent", env("kafka"))
	if err != nil || !slices.Equal(Names(got), []string{"pulsar-persistent"}) {
		t.Errorf("flag over env = %v, %v", Names(got), err)
	}
	_, err = Select("kafak", env(""))
	if !errors.Is(err, backends.ErrUnknownBackend) || !strings.HasPrefix(err.Error(), `PUBSUB_BACKENDS: unknown backend "kafak" (known: `) ||
		!strings.Contains(err.Error(), "kafka") {
		t.Errorf("unknown backend error %v should name the variable and list the known backends", err)
	}
}

func TestParseTargets(t *testing.T) {
	got, err := ParseTargets(" kafka pulsar,kafka  rabbitmq,")
	if err != nil || !slices.Equal(Names(got), []string{"kafka", "pulsar", "rabbitmq"}) {
		t.Errorf("ParseTargets = %v, %v; want [kafka pulsar rabbitmq]", Names(got), err)
	}
	_, err = ParseTargets("kafka nosuch")
	if !errors.Is(err, backends.ErrUnknownBackend) || !strings.HasPrefix(err.Error(), `unknown backend "nosuch" (known: `) ||
		!strings.Contains(err.Error(), "rabbitmq") {
		t.Errorf("unknown backend: %v", err)
	}
	if got, err := ParseTargets(" , "); err != nil || len(got) != 0 {
		t.Errorf("no names: %v, %v", got, err)
	}
}

// A name resolved once carries everything the run asks of it later: the registration, the
// broker kind (a variant its base's) and the column, whose name is the registry name and
// parses back to the same column.
func TestResolveOnce(t *testing.T) {
	for _, tc := range []struct {
		name string
		kind fixtures.Kind
		col  column.Column
	}{
		{"kafka", fixtures.Kafka, column.Column{Backend: "kafka"}},
		{"pulsar-persistent", fixtures.Pulsar, column.Column{Backend: "pulsar-persistent"}},
		{"pulsar~nack-noop", fixtures.Pulsar, column.Column{Backend: "pulsar", Variant: "nack-noop"}},
		{"memory", "", column.Column{Backend: "memory"}},
		{"memory~nack-noop", "", column.Column{Backend: "memory", Variant: "nack-noop"}},
	} {
		got, err := Resolve(tc.name)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if got.Name() != tc.name || got.Descriptor.Name != tc.name || got.Kind != tc.kind || got.NeedsBroker() != (tc.kind != "") || got.Column != tc.col {
			t.Errorf("%s: name %q kind %q (needs broker %v) column %+v; want kind %q column %+v", tc.name, got.Name(), got.Kind, got.NeedsBroker(), got.Column, tc.kind, tc.col)
		}
		if s := got.Column.String(); s != tc.name || got.Column.Registered() != tc.name {
			t.Errorf("%s: column name %q, registered %q", tc.name, s, got.Column.Registered())
		}
		if back, err := column.Parse(got.Column.String()); err != nil || back != got.Column {
			t.Errorf("%s: column %q parses back to %+v, %v", tc.name, got.Column, back, err)
		}
		// The same name resolved again (another process of the run) is the same target.
		again, _ := Resolve(tc.name)
		if again.Kind != got.Kind || again.Column != got.Column || again.Descriptor.Description != got.Descriptor.Description {
			t.Errorf("%s: resolved twice differently: %+v, %+v", tc.name, got, again)
		}
	}
	_, err := Resolve("kafka~no-such-defect")
	if !errors.Is(err, backends.ErrUnknownBackend) || !strings.HasPrefix(err.Error(), `unknown backend "kafka~no-such-defect" (known: `) {
		t.Errorf("an unknown variant: %v", err)
	}
}

// A registration whose broker is no kind the fixtures describe fails where the name is
// resolved, not when the run starts brokers.
func TestResolveValidatesTheBrokerKind(t *testing.T) {
	const name = "runtest-unknown-kind"
	backends.Register(backends.Descriptor{Name: name, Broker: "kafak", New: func(context.Context, backends.Config) (backends.Backend, error) {
		return nil, errors.New("not opened")
	}})
	_, err := ParseTargets("kafka " + name)
	if err == nil || err.Error() != `backend "runtest-unknown-kind" needs broker "kafak", which is no known broker kind (known: `+fixtures.KindNames()+")" {
		t.Errorf("unknown kind: %v", err)
	}
}

func TestKinds(t *testing.T) {
	ts, err := ParseTargets("pulsar-persistent memory kafka pulsar pulsar~nack-noop")
	if err != nil {
		t.Fatal(err)
	}
	if got := Kinds(ts); !slices.Equal(got, []fixtures.Kind{fixtures.Kafka, fixtures.Pulsar}) {
		t.Errorf("Kinds = %v; want one Kafka and one Pulsar", got)
	}
	if got := Kinds(nil); len(got) != 0 {
		t.Errorf("no targets: %v", got)
	}
}

// A target's base config layers the environment, the broker's settings and the registration's
// fixed settings, in that order, and its report settings leave the secrets out; both work from
// the resolved Descriptor (this one is not even registered).
func TestBaseConfigLayersAndSettingsHideSecrets(t *testing.T) {
	tg := Target{Descriptor: backends.Descriptor{
		Name:     "runtest-config",
		Env:      []string{"RUNTEST_*"},
		Secret:   []string{"RUNTEST_PASSWORD"},
		Settings: map[string]string{"RUNTEST_FIXED": "registration"},
	}}
	t.Setenv("RUNTEST_ENV", "env")
	t.Setenv("RUNTEST_OVER", "env")
	t.Setenv("RUNTEST_FIXED", "env")
	t.Setenv("RUNTEST_PASSWORD", "hunter2")
	t.Setenv("PUBSUB_RETENTION_FLOW", "2h")
	cfg, err := tg.BaseConfig(map[string]string{"RUNTEST_OVER": "broker", "RUNTEST_FIXED": "broker"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"RUNTEST_ENV": "env", "RUNTEST_OVER": "broker", "RUNTEST_FIXED": "registration", "RUNTEST_PASSWORD": "hunter2"}
	if cfg.Backend != "runtest-config" || !maps.Equal(cfg.Settings, want) {
		t.Errorf("config %s %v; want %v", cfg.Backend, cfg.Settings, want)
	}
	s := tg.Settings(cfg)
	if _, ok := s["RUNTEST_PASSWORD"]; ok || s["RUNTEST_OVER"] != "broker" || s["backend"] != "runtest-config" {
		t.Errorf("report settings %v", s)
	}
	if r, ok := s["retention"].(map[string]string); !ok || r["flow"] != "2h0m0s" {
		t.Errorf("retention in the report settings: %v", s["retention"])
	}
	t.Setenv("PUBSUB_RETENTION_FLOW", "a week")
	if _, err := tg.BaseConfig(nil); err == nil || !strings.Contains(err.Error(), "PUBSUB_RETENTION_FLOW") {
		t.Errorf("a bad retention: %v", err)
	}
}
