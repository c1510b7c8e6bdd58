// Package suite wires the shared specs to concrete backends and real brokers: which backends a
// run tests, which broker each needs, how every Ginkgo process reaches it, and the per-backend
// report files. The runnable Ginkgo suite is suite_test.go in this directory.
package suite

import (
	"fmt"
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
