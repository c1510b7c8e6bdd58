package backends

import (
	"context"
	"fmt"
	"io"
	"maps"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/pubsub-conformance/harness/internal/envvars"
)

// Config is everything a backend constructor needs. It names no concrete backend: each backend
// package parses and validates its own keys of Settings (backends/kafka.ParseConfig,
// backends/pulsar.ParseConfig), and an out-of-process adapter receives them as its environment.
type Config struct {
	// Backend is the registry name ("kafka", "pulsar", "memory", "kafka~nack-noop", ...).
	Backend string

	// Settings are the backend's client settings under TrustGraph's environment names
	// (KAFKA_BOOTSTRAP_SERVERS, KAFKA_SASL_USERNAME, KAFKA_CONFIG_<KEY>, PULSAR_HOST,
	// PULSAR_ADMIN_URL, PULSAR_API_KEY, ...). An empty value means unset. A suite builds them as
	// environment, then broker endpoints, then the Descriptor's fixed Settings (see Layer).
	Settings map[string]string

	// Retention overrides the class default retention for topics this backend creates
	// (PUBSUB_RETENTION_<CLASS>, see RetentionFromEnv).
	Retention map[Class]time.Duration

	// Log receives a backend's diagnostic output (client debug logs); nil discards it.
	Log io.Writer
}

// Setting returns the value of settings key k ("" when unset).
func (c Config) Setting(k string) string { return c.Settings[k] }

// WithSettings returns a copy of c whose Settings are c's with layers applied in order (later
// wins, see Layer). c's own map is never modified.
func (c Config) WithSettings(layers ...map[string]string) Config {
	c.Settings = Layer(append([]map[string]string{c.Settings}, layers...)...)
	return c
}

// Layer merges settings maps into a new map, later maps winning key by key. An empty value in
// a later map overrides (unsets) an earlier one: broker endpoints clear the credentials an
// environment may carry for another broker.
func Layer(layers ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, l := range layers {
		maps.Copy(out, l)
	}
	return out
}

// SettingsWithPrefix collects the non-empty settings whose key starts with prefix, keyed by the
// rest of the key: prefix "KAFKA_CONFIG_" turns KAFKA_CONFIG_FETCH_WAIT_MAX_MS=10 into
// FETCH_WAIT_MAX_MS=10. Nil when there are none.
func SettingsWithPrefix(settings map[string]string, prefix string) map[string]string {
	var out map[string]string
	for k, v := range settings {
		rest, ok := strings.CutPrefix(k, prefix)
		if !ok || rest == "" || v == "" {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		out[rest] = v
	}
	return out
}

// RetentionFor is the retention for class c: the override when set, else the class default.
func (c Config) RetentionFor(cl Class) time.Duration {
	if d, ok := c.Retention[cl]; ok && d > 0 {
		return d
	}
	return cl.DefaultRetention()
}

// RetentionFromEnv reads PUBSUB_RETENTION_<CLASS> (a positive Go duration such as 168h) for
// every class; getenv is os.Getenv in production. Nil when none is set.
func RetentionFromEnv(getenv func(string) string) (map[Class]time.Duration, error) {
	var out map[Class]time.Duration
	for _, cl := range Classes {
		key := "PUBSUB_RETENTION_" + strings.ToUpper(string(cl))
		v := getenv(key)
		if v == "" {
			continue
		}
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("%w: %s=%q is not a positive duration (e.g. 168h)", ErrInvalidConfig, key, v)
		}
		if out == nil {
			out = map[Class]time.Duration{}
		}
		out[cl] = d
	}
	return out, nil
}

// Constructor builds a Backend from cfg. It must fail fast (within ctx) with an error wrapping
// ErrUnavailable or ErrAuth when the broker cannot be reached or refuses the credentials, and
// ErrInvalidConfig for settings it cannot use.
type Constructor func(ctx context.Context, cfg Config) (Backend, error)

// Descriptor is everything a run needs to know about one registered backend. A backend package
// exports one (or more, e.g. pulsar and pulsar-persistent) and backends/all registers it with one
// line; nothing else in the harness names a concrete backend.
type Descriptor struct {
	// Name is the registry name, used in PUBSUB_BACKENDS, labels ("backend:<name>") and reports.
	Name string
	// Description says in one line what the backend is, for help texts and report metadata.
	Description string
	// Source describes the code under test when it is not what the backend ships with (a
	// working copy: path, git commit, dirty state); recorded in the run's meta.
	Source string
	// Broker is the broker kind the backend needs ("kafka", "pulsar"; a fixtures.Kind); "" means
	// none (an in-process backend).
	Broker string
	// Reference marks the in-process reference backend: a self-test of the specs, never a
	// conformance result.
	Reference bool
	// New constructs the backend.
	New Constructor
	// Settings are fixed by this registration (PULSAR_ALL_PERSISTENT=true) and win over the
	// environment and the broker endpoints.
	Settings map[string]string
	// Vars is the backend's table of the environment variables it reads (its settings.go):
	// name, meaning, default, and whether the value is secret. EnvSettings reads exactly
	// these names (and Env's), Public leaves out their secrets (and Secret's), and
	// docs/settings.md is generated from it (backends/cmd/settings).
	Vars envvars.Table
	// Env lists further environment variables the backend reads into Config.Settings, as
	// path.Match patterns ("KAFKA_*"), for a backend without a table of its own (an adapter,
	// which passes its broker kind's settings through).
	Env []string
	// Secret lists further settings (path.Match patterns) whose values never reach a report.
	Secret []string
	// OptIn keeps the backend out of the default sets - ConformanceNames (make conformance, make
	// mutants, make bench without BACKENDS) and, for a reference, the suite's default self-test
	// run: it runs when named. For backends under test that
	// are not ours to fix (TrustGraph's own, through backends/remote), whose known failures
	// would otherwise fail every make test.
	OptIn bool

	// MinBroker, when set, is the oldest broker release the backend can be tested on (a
	// fixtures release number, "4.0.0"); on an older one every spec skips with MinBrokerWhy.
	MinBroker, MinBrokerWhy string

	// Prepare, when set, readies what the backend needs before a run's first spec (an
	// adapter's build or virtualenv): called once per run, bounded by ctx, so that New only
	// starts a client.
	Prepare func(ctx context.Context) error

	// InProcess, for a backend without a broker (Broker == ""), starts a private instance for a
	// spec that restarts its broker (R4); nil when it has none. A client such a backend returns
	// may also have a Kill() method (drop the connection at once, without Close, as a crashed
	// process would): a consumer crash (R5) then happens in-process instead of in a child
	// process, which could not reach an in-process backend's state.
	InProcess func() Instance

	// Base and Variant are set on the registrations of known-bad variants ("kafka~nack-noop":
	// Base "kafka", Variant "nack-noop"; see backends/mutants), empty otherwise.
	Base, Variant string
}

// EnvSettings picks the variables d reads (d.Vars and d.Env) out of environ ("KEY=value"
// strings, as os.Environ returns them). Empty values are kept: they unset a setting.
func (d Descriptor) EnvSettings(environ []string) map[string]string {
	out := map[string]string{}
	env := append(d.Vars.Names(), d.Env...)
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if ok && matchAny(env, k) {
			out[k] = v
		}
	}
	return out
}

// Public returns the settings with d's secrets (d.Vars' and d.Secret) left out, for report
// metadata.
func (d Descriptor) Public(settings map[string]string) map[string]string {
	out := map[string]string{}
	secret := append(d.Vars.Secrets(), d.Secret...)
	for k, v := range settings {
		if v != "" && !matchAny(secret, k) {
			out[k] = v
		}
	}
	return out
}

func matchAny(patterns []string, key string) bool {
	return slices.ContainsFunc(patterns, func(p string) bool {
		ok, err := path.Match(p, key)
		return ok && err == nil
	})
}

// Instance is a private instance of a backend that needs no broker (Descriptor.InProcess): the
// in-process counterpart of a broker owned by one spec.
type Instance interface {
	// Settings connect a Config to this instance (laid over its other settings).
	Settings() map[string]string
	// Restart simulates a broker restart: clients stay usable, what they held unacknowledged
	// becomes deliverable again, durable state survives.
	Restart()
	// Close releases the instance. Idempotent.
	Close()
}

// Cuttable is implemented by Instances that can simulate a network cut between their clients
// and their broker (the fault specs, F*): SetUnreachable(true) cuts, SetUnreachable(false)
// heals; clients opened before the cut must work again after the heal.
type Cuttable interface {
	SetUnreachable(cut bool)
}

// Laggable is implemented by Instances that can simulate network latency between their
// clients and their broker (F2): SetLatency(d) adds d each way, so every client call that
// reaches the broker takes at least 2d longer (and ends with its context, like a real call);
// SetLatency(0) removes it. Clients opened before keep working.
type Laggable interface {
	SetLatency(d time.Duration)
}

var (
	registryMu sync.RWMutex
	registry   = map[string]Descriptor{}
)

// Register adds a backend. The explicit list of backends lives in backends/all; known-bad
// variants are registered by backends/mutants. Register panics on a duplicate or empty name
// or a nil New, because that is a programming error, not input.
func Register(d Descriptor) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if d.Name == "" || d.New == nil {
		panic(fmt.Sprintf("backends: registration %q lacks a name or a constructor", d.Name))
	}
	if _, dup := registry[d.Name]; dup {
		panic("backends: duplicate registration of " + d.Name)
	}
	registry[d.Name] = d
}

// Names lists the registered backends, sorted.
func Names() []string {
	registryMu.RLock()
	defer registryMu.RUnlock()
	return slices.Sorted(maps.Keys(registry))
}

// Descriptors lists the registered backends sorted by name; known-bad variants only when
// variants is true.
func Descriptors(variants bool) []Descriptor {
	var out []Descriptor
	for _, n := range Names() {
		d, _ := Lookup(n)
		if d.Variant == "" || variants {
			out = append(out, d)
		}
	}
	return out
}

// ConformanceNames lists the registered backends whose results are conformance results: neither
// the in-process reference nor a known-bad variant. It is the default of every run that tests
// "the backends" (make conformance, make mutants, make bench), so a registration is all it takes
// to be among them (unless it is OptIn).
func ConformanceNames() []string {
	var out []string
	for _, d := range Descriptors(false) {
		if !d.Reference && !d.OptIn {
			out = append(out, d.Name)
		}
	}
	return out
}

// Lookup returns the descriptor registered as name, or an error wrapping ErrUnknownBackend that
// lists the known names.
func Lookup(name string) (Descriptor, error) {
	registryMu.RLock()
	d, ok := registry[name]
	registryMu.RUnlock()
	if ok {
		return d, nil
	}
	return Descriptor{}, fmt.Errorf("%w %q (known: %s)", ErrUnknownBackend, name, Known())
}

// Known says which names Lookup knows, for a message: the registered backends, and the number
// of known-bad variants ("kafka~nack-noop", see backends/mutants), which are counted, not
// listed: a user who mistyped a backend wants the few real names.
func Known() string {
	var real []string
	all := Descriptors(true)
	for _, d := range all {
		if d.Variant == "" {
			real = append(real, d.Name)
		}
	}
	known := strings.Join(real, ", ")
	if n := len(all) - len(real); n > 0 {
		known += fmt.Sprintf("; and %d known-bad variants named <backend>~<defect>", n)
	}
	return known
}

// Open looks up cfg.Backend and constructs it, with the descriptor's fixed Settings over
// cfg's (so a caller cannot open pulsar-persistent with non-persistent topics).
func Open(ctx context.Context, cfg Config) (Backend, error) {
	d, err := Lookup(cfg.Backend)
	if err != nil {
		return nil, err
	}
	if len(d.Settings) > 0 {
		cfg = cfg.WithSettings(d.Settings)
	}
	return d.New(ctx, cfg)
}
