// Package run resolves what a run tests, without the Ginkgo glue: the backends of a run (the
// flag, else PUBSUB_BACKENDS, else the reference), each resolved once into a Target - its
// registry Descriptor, the broker kind it needs and its report column - and the Config every
// client of a target starts from. The suite, its commands and the bench take Targets and look
// no name up again, so the registry is read here only; the bench links no test framework.
package run

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"unicode"

	"github.com/pubsub-conformance/harness/backends"
	"github.com/pubsub-conformance/harness/fixtures"
	"github.com/pubsub-conformance/harness/internal/column"
)

// Target is one backend of a run, resolved from its registry name once (Resolve).
type Target struct {
	// Descriptor is the backend's registration.
	Descriptor backends.Descriptor
	// Kind is the broker the backend needs, a registered fixtures kind (a known-bad variant
	// "<base>~<variant>" carries its base's); "" for an in-process backend.
	Kind fixtures.Kind
	// Column is the backend's report column: its base and variant from the registration,
	// on the pinned broker release and out of isolation mode; the suite sets Release and
	// Isolated for its run (suite.InRun).
	Column column.Column
}

// Name is the target's registry name ("kafka", "kafka~nack-noop").
func (t Target) Name() string { return t.Descriptor.Name }

// NeedsBroker says whether the target needs a broker (Kind is set).
func (t Target) NeedsBroker() bool { return t.Kind != "" }

// Resolve looks name up in the registry, once for a run: an unknown name is an error wrapping
// backends.ErrUnknownBackend that lists the known ones, a registration needing a broker kind
// no fixtures record describes an error naming the known kinds.
func Resolve(name string) (Target, error) {
	d, err := backends.Lookup(name)
	if err != nil {
		return Target{}, err
	}
	t := Target{Descriptor: d, Column: column.Column{Backend: d.Name}}
	if d.Variant != "" {
		t.Column = column.Column{Backend: d.Base, Variant: d.Variant}
	}
	if d.Broker != "" {
		k := fixtures.Kind(d.Broker)
		if _, ok := fixtures.LookupKind(k); !ok {
			return Target{}, fmt.Errorf("backend %q needs broker %q, which is no known broker kind (known: %s)", name, d.Broker, fixtures.KindNames())
		}
		t.Kind = k
	}
	return t, nil
}

// Select resolves the run's backend list: the flag value when set, else PUBSUB_BACKENDS, else
// the reference backend (the fast self-test). An unknown name is an error naming
// PUBSUB_BACKENDS and listing the known ones.
func Select(flagValue string, getenv func(string) string) ([]Target, error) {
	v := flagValue
	if v == "" {
		v = getenv("PUBSUB_BACKENDS")
	}
	if strings.TrimSpace(v) == "" {
		var refs []string
		for _, d := range backends.Descriptors(false) {
			// Opt-in references (the ports served through the adapter protocol,
			// python-memory and go-memory) are run by name: make adapter-selftest.
			if d.Reference && !d.OptIn {
				refs = append(refs, d.Name)
			}
		}
		v = strings.Join(refs, ",")
	}
	out, err := ParseTargets(v)
	if err != nil {
		return nil, fmt.Errorf("PUBSUB_BACKENDS: %w", err)
	}
	return out, nil
}

// ParseTargets resolves a list of backend names, separated by commas or spaces, in order and
// without duplicates (Resolve: an unknown name is an error wrapping backends.ErrUnknownBackend
// that lists the known ones). The suite (Select) and the preflight of make's targets
// (suite/cmd/preflight) both read backend lists with it.
func ParseTargets(v string) ([]Target, error) {
	var out []Target
	seen := map[string]bool{}
	for _, n := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || unicode.IsSpace(r) }) {
		if seen[n] {
			continue
		}
		t, err := Resolve(n)
		if err != nil {
			return nil, err
		}
		seen[n] = true
		out = append(out, t)
	}
	return out, nil
}

// Names are the targets' registry names, in order.
func Names(ts []Target) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Name()
	}
	return out
}

// Kinds lists the distinct brokers the targets need, sorted.
func Kinds(ts []Target) []fixtures.Kind {
	var out []fixtures.Kind
	for _, t := range ts {
		if t.NeedsBroker() && !slices.Contains(out, t.Kind) {
			out = append(out, t.Kind)
		}
	}
	slices.Sort(out)
	return out
}

// BaseConfig is the Config every client of t starts from: its settings are the environment's
// (the variables its Descriptor reads: KAFKA_DEBUG, KAFKA_CONFIG_<KEY>, ...), then broker (a
// broker's endpoint settings, fixtures.Endpoints.Settings; nil for none), then the
// Descriptor's fixed Settings; retention overrides come from PUBSUB_RETENTION_<CLASS>.
func (t Target) BaseConfig(broker map[string]string) (backends.Config, error) {
	ret, err := backends.RetentionFromEnv(os.Getenv)
	if err != nil {
		return backends.Config{}, fmt.Errorf("configuration from env: %w", err)
	}
	d := t.Descriptor
	return backends.Config{
		Backend:   d.Name,
		Settings:  backends.Layer(d.EnvSettings(os.Environ()), broker, d.Settings),
		Retention: ret,
	}, nil
}

// Settings returns the non-secret settings of cfg, a Config of t, for report metadata.
func (t Target) Settings(cfg backends.Config) map[string]any {
	s := map[string]any{"backend": cfg.Backend}
	for k, v := range t.Descriptor.Public(cfg.Settings) {
		s[k] = v
	}
	if len(cfg.Retention) > 0 {
		r := map[string]string{}
		for c, d := range cfg.Retention {
			r[string(c)] = d.String()
		}
		s["retention"] = r
	}
	return s
}
