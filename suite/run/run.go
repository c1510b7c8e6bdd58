// Package run resolves what a run tests, without the Ginkgo glue: the backend names of a run
// (the flag, else PUBSUB_BACKENDS, else the reference), the broker kind each needs, and the
// Config every client of a backend starts from. The suite and the bench both use it, so the
// bench links no test framework.
package run

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"unicode"

	"github.com/pubsub-conformance/harness/backends"
	"github.com/pubsub-conformance/harness/fixtures"
)

// KindFor returns the broker a registered backend needs (its Descriptor's Broker), and false
// for none. Known-bad variants "<base>~<variant>" carry their base's.
func KindFor(name string) (fixtures.Kind, bool) {
	d, err := backends.Lookup(name)
	if err != nil || d.Broker == "" {
		return "", false
	}
	return fixtures.Kind(d.Broker), true
}

// Selected parses the backend list: the flag value when set, else PUBSUB_BACKENDS, else the
// reference backend (the fast self-test). Names are checked against the registry; an unknown
// name is an error listing the known ones.
func Selected(flagValue string, getenv func(string) string) ([]string, error) {
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
	out, err := ParseBackends(v)
	if err != nil {
		return nil, fmt.Errorf("PUBSUB_BACKENDS: %w", err)
	}
	return out, nil
}

// ParseBackends checks a list of backend names, separated by commas or spaces, against the
// registry, in order and without duplicates: an unknown name is an error wrapping
// backends.ErrUnknownBackend that lists the known ones. The suite (Selected) and the preflight
// of make's targets (suite/cmd/preflight) both read backend lists with it.
func ParseBackends(v string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, n := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || unicode.IsSpace(r) }) {
		if seen[n] {
			continue
		}
		if _, err := backends.Lookup(n); err != nil {
			return nil, err
		}
		seen[n] = true
		out = append(out, n)
	}
	return out, nil
}

// Kinds lists the distinct brokers the backends need, sorted.
func Kinds(names []string) []fixtures.Kind {
	var out []fixtures.Kind
	for _, n := range names {
		if k, ok := KindFor(n); ok && !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// BaseConfig is the Config every client of backend name starts from: its settings are the
// environment's (the variables its Descriptor reads: KAFKA_DEBUG, KAFKA_CONFIG_<KEY>, ...), then
// broker (a broker's endpoint settings, fixtures.Endpoints.Settings; nil for none), then the
// Descriptor's fixed Settings; retention overrides come from PUBSUB_RETENTION_<CLASS>.
func BaseConfig(name string, broker map[string]string) (backends.Config, error) {
	d, err := backends.Lookup(name)
	if err != nil {
		return backends.Config{}, err
	}
	ret, err := backends.RetentionFromEnv(os.Getenv)
	if err != nil {
		return backends.Config{}, fmt.Errorf("configuration from env: %w", err)
	}
	return backends.Config{
		Backend:   name,
		Settings:  backends.Layer(d.EnvSettings(os.Environ()), broker, d.Settings),
		Retention: ret,
	}, nil
}

// Settings returns the non-secret settings of cfg for report metadata.
func Settings(cfg backends.Config) map[string]any {
	s := map[string]any{"backend": cfg.Backend}
	d, err := backends.Lookup(cfg.Backend)
	if err != nil {
		return s
	}
	for k, v := range d.Public(cfg.Settings) {
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
