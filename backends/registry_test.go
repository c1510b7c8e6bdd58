package backends

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pubsub-conformance/harness/internal/envvars"
)

func TestRegistryLookupAndOpen(t *testing.T) {
	nop := func(_ context.Context, cfg Config) (Backend, error) { return nil, nil }
	Register(Descriptor{Name: "regtest-a", New: nop})
	Register(Descriptor{Name: "regtest-b", Settings: map[string]string{"FIXED": "reg"}, New: func(_ context.Context, cfg Config) (Backend, error) {
		return nil, errors.New("b: " + cfg.Setting("HOST") + " " + cfg.Setting("FIXED"))
	}})
	if d, err := Lookup("regtest-a"); err != nil || d.Name != "regtest-a" {
		t.Fatalf("Lookup(regtest-a): %+v %v", d, err)
	}
	_, err := Lookup("nope")
	if !errors.Is(err, ErrUnknownBackend) || Code(err) != "unknown_backend" {
		t.Fatalf("Lookup(nope) = %v; want ErrUnknownBackend", err)
	}
	for _, want := range []string{`"nope"`, "regtest-a", "regtest-b"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("unknown-backend error %q does not list %s", err, want)
		}
	}
	// Known-bad variants are counted, not listed, so the real names stay readable.
	Register(Descriptor{Name: "regtest-a~broken", Base: "regtest-a", Variant: "broken", New: nop})
	_, err = Lookup("nope")
	if msg := err.Error(); strings.Contains(msg, "regtest-a~broken") || !strings.Contains(msg, "known-bad variants named <backend>~<defect>") {
		t.Errorf("unknown-backend error %q should count variants instead of listing them", msg)
	}
	if n := len(Descriptors(true)) - len(Descriptors(false)); n != 1 {
		t.Errorf("Descriptors: %d variants; want 1", n)
	}
	Register(Descriptor{Name: "regtest-ref", Reference: true, New: nop})
	if got := ConformanceNames(); !slices.Equal(got, []string{"regtest-a", "regtest-b"}) {
		t.Errorf("ConformanceNames = %v; want the two that are neither reference nor variant", got)
	}
	// Open passes the config and lays the registration's fixed settings over it.
	cfg := Config{Backend: "regtest-b", Settings: map[string]string{"HOST": "h:1", "FIXED": "env"}}
	if _, err := Open(context.Background(), cfg); err == nil || err.Error() != "b: h:1 reg" {
		t.Errorf("Open: got %v; want b: h:1 reg", err)
	}
	if cfg.Settings["FIXED"] != "env" {
		t.Error("Open modified the caller's settings")
	}
	for _, bad := range []Descriptor{{Name: "regtest-a", New: nop}, {Name: "", New: nop}, {Name: "regtest-c"}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Register(%+v) did not panic", bad)
				}
			}()
			Register(bad)
		}()
	}
}

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestSettingsLayersEnvAndSecrets(t *testing.T) {
	got := Layer(map[string]string{"A": "env", "B": "env", "C": "env"}, map[string]string{"B": "broker", "C": ""}, map[string]string{"A": "fixed"})
	if got["A"] != "fixed" || got["B"] != "broker" || got["C"] != "" {
		t.Errorf("Layer = %v; later layers win, an empty value unsets", got)
	}
	base := Config{Settings: map[string]string{"X": "1"}}
	with := base.WithSettings(map[string]string{"X": "2"})
	if base.Setting("X") != "1" || with.Setting("X") != "2" {
		t.Errorf("WithSettings must copy: base %v with %v", base.Settings, with.Settings)
	}
	if p := SettingsWithPrefix(map[string]string{"K_C_A_B": "1", "K_C_": "x", "K_C_E": "", "O": "2"}, "K_C_"); len(p) != 1 || p["A_B"] != "1" {
		t.Errorf("SettingsWithPrefix = %v", p)
	}
	d := Descriptor{Env: []string{"K_HOST", "K_CONFIG_*"}, Secret: []string{"K_*PASSWORD*"}}
	s := d.EnvSettings([]string{"K_HOST=h", "K_CONFIG_SASL_PASSWORD=p", "K_CONFIG_X=1", "K_HOSTS=no", "OTHER=1", "K_CONFIG_EMPTY="})
	if len(s) != 4 || s["K_HOST"] != "h" || s["K_CONFIG_EMPTY"] != "" {
		t.Errorf("EnvSettings = %v", s)
	}
	if p := d.Public(s); len(p) != 2 || p["K_CONFIG_X"] != "1" || p["K_HOST"] != "h" {
		t.Errorf("Public = %v; want the secret and the empty one left out", p)
	}
	// The same through a table of variables (Descriptor.Vars): read exactly its names, its
	// secrets, a family's secret members included, never in the metadata.
	d = Descriptor{Vars: envvars.Table{
		{Name: "K_HOST", Meaning: "h"}, {Name: "K_PASSWORD", Meaning: "p", Secret: true},
		{Name: "K_CONFIG_<KEY>", Meaning: "c", SecretIf: []string{"K_CONFIG_*PASSWORD*"}},
	}}
	s = d.EnvSettings([]string{"K_HOST=h", "K_PASSWORD=p", "K_CONFIG_SASL_PASSWORD=p", "K_CONFIG_X=1", "K_HOSTS=no", "K_OTHER=1"})
	if len(s) != 4 || s["K_HOST"] != "h" || s["K_CONFIG_X"] != "1" {
		t.Errorf("EnvSettings with Vars = %v", s)
	}
	if p := d.Public(s); len(p) != 2 || p["K_CONFIG_X"] != "1" || p["K_HOST"] != "h" {
		t.Errorf("Public with Vars = %v; want both secrets left out", p)
	}
}

func TestRetentionFromEnv(t *testing.T) {
	r, err := RetentionFromEnv(env(map[string]string{"PUBSUB_RETENTION_REQUEST": "90s"}))
	cfg := Config{Retention: r}
	if err != nil || cfg.RetentionFor(ClassRequest) != 90*time.Second || cfg.RetentionFor(ClassFlow) != 7*24*time.Hour {
		t.Errorf("retention override: %v %v", r, err)
	}
	if r, err := RetentionFromEnv(env(nil)); r != nil || err != nil {
		t.Errorf("no override: %v %v", r, err)
	}
	_, err = RetentionFromEnv(env(map[string]string{"PUBSUB_RETENTION_FLOW": "-1h"}))
	if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "PUBSUB_RETENTION_FLOW") || strings.Contains(err.Error(), "\n") {
		t.Errorf("bad retention: %v; want one ErrInvalidConfig line naming the variable", err)
	}
}

func TestCodeAndCtxErr(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Nanosecond)
	defer cancel()
	<-ctx.Done()
	err := CtxErr(ctx, "receive")
	if !errors.Is(err, ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) || Code(err) != "timeout" {
		t.Errorf("deadline: %v (code %s)", err, Code(err))
	}
	cctx, ccancel := context.WithCancel(context.Background())
	ccancel()
	if err := CtxErr(cctx, "receive"); !errors.Is(err, context.Canceled) || Code(err) != "canceled" {
		t.Errorf("cancel: %v", err)
	}
	if CtxErr(context.Background(), "x") != nil || Code(nil) != "" || Code(errors.New("x")) != "internal" {
		t.Error("live context / nil / plain error codes")
	}
	for sentinel, code := range map[error]string{ErrInvalidTopic: "invalid_topic", ErrClosed: "closed", ErrAuth: "auth",
		ErrUnavailable: "unavailable", ErrUnknownDelivery: "unknown_delivery", ErrInvalidConfig: "invalid_config"} {
		if got := Code(errors.Join(errors.New("ctx"), sentinel)); got != code {
			t.Errorf("Code(%v) = %q; want %q", sentinel, got, code)
		}
	}
}
