// Package suite wires the shared specs to concrete backends and real brokers: which backends a
// run tests, which broker each needs, how every Ginkgo process reaches it, and the per-backend
// report files. The runnable Ginkgo suite is suite_test.go in this directory.
package suite

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/onsi/ginkgo/v2"

	"github.com/pubsub-conformance/harness/backends"
	"github.com/pubsub-conformance/harness/backends/memory"
	"github.com/pubsub-conformance/harness/backends/mutants"
	"github.com/pubsub-conformance/harness/fixtures"
	"github.com/pubsub-conformance/harness/fixtures/providers"
	"github.com/pubsub-conformance/harness/specs"
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
			if d.Reference {
				refs = append(refs, d.Name)
			}
		}
		v = strings.Join(refs, ",")
	}
	var out []string
	seen := map[string]bool{}
	for _, n := range strings.Split(v, ",") {
		n = strings.TrimSpace(n)
		if n == "" || seen[n] {
			continue
		}
		if _, err := backends.Lookup(n); err != nil {
			return nil, fmt.Errorf("PUBSUB_BACKENDS: %w", err)
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

// Shared is what process 1 hands every Ginkgo process after starting the brokers: plain data.
type Shared struct {
	Provider    string                               `json:"provider"`
	ProviderWhy string                               `json:"providerWhy"`
	Brokers     map[fixtures.Kind]fixtures.Endpoints `json:"brokers"`
	StartedAt   time.Time                            `json:"startedAt"`
}

// StartBrokers starts one broker per needed kind (with its authenticated listener where
// fixtures.AuthOnShared says so: Kafka's SASL listener) through the
// provider PUBSUB_BROKERS selects. Called once per run, on Ginkgo process 1; the caller stops
// the returned brokers (StopBrokers) in SynchronizedAfterSuite, also on failure.
func StartBrokers(ctx context.Context, kinds []fixtures.Kind, progress func(string, ...any)) (Shared, []fixtures.Broker, error) {
	sh := Shared{Brokers: map[fixtures.Kind]fixtures.Endpoints{}, StartedAt: time.Now().UTC()}
	if len(kinds) == 0 {
		sh.Provider = "none"
		sh.ProviderWhy = "no selected backend needs a broker"
		return sh, nil, nil
	}
	p, why, err := providers.Choose(os.Getenv)
	if err != nil {
		return sh, nil, fmt.Errorf("choose broker provider: %w", err)
	}
	sh.Provider, sh.ProviderWhy = p.Name(), why
	progress("broker provider %s: %s", p.Name(), why)
	var started []fixtures.Broker
	for _, k := range kinds {
		opts := []fixtures.Option{fixtures.WithProgress(progress)}
		if fixtures.AuthOnShared(k) {
			opts = append(opts, fixtures.WithAuth()) // S1 uses the shared broker's authenticated listener
		}
		start := time.Now()
		b, err := p.Start(ctx, k, opts...)
		if err != nil {
			return sh, started, fmt.Errorf("%s provider: %w", p.Name(), err) // err names the broker
		}
		started = append(started, b)
		ep := b.Endpoints()
		sh.Brokers[k] = ep
		progress("%s %s ready in %s via %s (log %s)", k, ep.Version, time.Since(start).Round(10*time.Millisecond), p.Name(), ep.LogFile)
	}
	return sh, started, nil
}

// StopBrokers stops every broker, joining the errors.
func StopBrokers(ctx context.Context, bs []fixtures.Broker) error {
	var errs []error
	for _, b := range bs {
		if err := b.Stop(ctx); err != nil {
			errs = append(errs, fmt.Errorf("stop %s: %w", b.Endpoints().Kind, err))
		}
	}
	return errors.Join(errs...)
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

// NewEnv builds the specs' Env for backend name on the run's shared brokers. progress prints
// lines about private brokers the specs start.
func NewEnv(name string, sh *Shared, progress func(string, ...any)) *specs.Env {
	env := &specs.Env{Backend: name}
	kind, needsBroker := KindFor(name)
	config := func() (backends.Config, error) {
		if !needsBroker {
			return BaseConfig(name, nil)
		}
		ep, ok := sh.Brokers[kind]
		if !ok {
			return backends.Config{}, fmt.Errorf("no %s broker was started for %s", kind, name)
		}
		return BaseConfig(name, ep.Settings())
	}
	env.Open = func(ctx context.Context) (backends.Backend, error) {
		cfg, err := config()
		if err != nil {
			return nil, err
		}
		// Client logs (KAFKA_DEBUG, the Pulsar client's log) go to the spec's own output, which
		// Ginkgo shows when the spec fails (or with -v).
		cfg.Log = ginkgo.GinkgoWriter
		return backends.Open(ctx, cfg)
	}
	env.RetentionFor = func(c backends.Class) time.Duration {
		cfg, err := config()
		if err != nil {
			return c.DefaultRetention()
		}
		return cfg.RetentionFor(c)
	}
	if !needsBroker {
		memoryEnv(env, name)
		return env
	}
	env.BrokerLog = func() string {
		return tailFile(sh.Brokers[kind].LogFile, 80)
	}
	env.Auth = func(ctx context.Context) (specs.AuthTarget, error) { return authTarget(ctx, name, kind, sh, progress) }
	env.PrivateBroker = func(ctx context.Context) (specs.PrivateBroker, error) {
		return privateBroker(ctx, name, kind, sh, progress)
	}
	env.CrashConsumer = func(ctx context.Context, topic, sub string, n int) ([]backends.Delivery, error) {
		cfg, err := config()
		if err != nil {
			return nil, err
		}
		return crashInChild(ctx, cfg, topic, sub, n)
	}
	return env
}

// memoryEnv fills the parts of Env for the in-process reference backend (and its mutants).
func memoryEnv(env *specs.Env, name string) {
	wrap := func(b backends.Backend) backends.Backend { return b }
	if d, err := backends.Lookup(name); err == nil && d.Variant != "" {
		if v, ok := mutants.LookupFor(d.Base, d.Variant); ok && v.Wrap != nil {
			wrap = v.Wrap
		}
	}
	env.Auth = func(context.Context) (specs.AuthTarget, error) {
		return specs.AuthTarget{}, specs.Unavailable("the memory reference backend has no authentication")
	}
	env.PrivateBroker = func(context.Context) (specs.PrivateBroker, error) {
		return &memoryPrivate{broker: memory.NewBroker(), name: name, wrap: wrap}, nil
	}
	env.CrashConsumer = func(ctx context.Context, topic, sub string, n int) ([]backends.Delivery, error) {
		// The crashing "process" is a separate connection to the process's broker, dropped
		// without any Close (the reference backend cannot live in a child process).
		mb, err := memory.ProcessBroker().Open(ctx, backends.Config{Backend: memory.Name})
		if err != nil {
			return nil, err
		}
		defer mb.Kill()
		c, err := mb.Consumer(ctx, topic, sub, backends.WithPosition(backends.Earliest))
		if err != nil {
			return nil, fmt.Errorf("crash consumer: %w", err)
		}
		var got []backends.Delivery
		for len(got) < n {
			rctx, cancel := context.WithTimeout(ctx, 15*time.Second)
			d, err := c.Receive(rctx)
			cancel()
			if err != nil {
				return got, fmt.Errorf("crash consumer received %d of %d: %w", len(got), n, err)
			}
			got = append(got, d)
		}
		return got, nil
	}
}

type memoryPrivate struct {
	broker *memory.Broker
	name   string
	wrap   func(backends.Backend) backends.Backend
}

func (m *memoryPrivate) Open(ctx context.Context) (backends.Backend, error) {
	b, err := m.broker.Open(ctx, backends.Config{Backend: m.name})
	if err != nil {
		return nil, err
	}
	return m.wrap(b), nil
}
func (m *memoryPrivate) Restart(context.Context) error { m.broker.Restart(); return nil }
func (m *memoryPrivate) Stop(context.Context) error    { return nil }
func (m *memoryPrivate) LogTail() string               { return "" }

// chooseProvider picks the provider for a private broker on the calling process.
func chooseProvider(progress func(string, ...any)) (fixtures.Provider, error) {
	p, why, err := providers.Choose(os.Getenv)
	if err != nil {
		return nil, fmt.Errorf("choose broker provider: %w", err)
	}
	progress("private broker provider %s: %s", p.Name(), why)
	return p, nil
}

// authTarget reaches an auth-enabled broker of kind: the shared broker's authenticated
// listener where it has one (fixtures.AuthOnShared: Kafka's SASL listener), else a private
// auth-enabled broker (Pulsar's token auth), stopped by the spec through Stop.
func authTarget(ctx context.Context, name string, kind fixtures.Kind, sh *Shared, progress func(string, ...any)) (specs.AuthTarget, error) {
	target := func(good, bad map[string]string, stop func(context.Context) error) (specs.AuthTarget, error) {
		open := func(settings map[string]string) func(context.Context) (backends.Backend, error) {
			return func(ctx context.Context) (backends.Backend, error) {
				cfg, err := BaseConfig(name, settings)
				if err != nil {
					return nil, err
				}
				return backends.Open(ctx, cfg)
			}
		}
		return specs.AuthTarget{Good: open(good), Bad: open(bad), Stop: stop}, nil
	}
	if fixtures.AuthOnShared(kind) {
		ep := sh.Brokers[kind]
		good, bad, ok := ep.AuthSettings()
		if !ok {
			return specs.AuthTarget{}, specs.Unavailable("the %s provider started %s without an authenticated listener", ep.Provider, kind)
		}
		return target(good, bad, nil)
	}
	if sh.Provider == "external" {
		return specs.AuthTarget{}, specs.Unavailable("external %s: the run cannot start an auth-enabled broker", kind)
	}
	p, err := chooseProvider(progress)
	if err != nil {
		return specs.AuthTarget{}, err
	}
	start := time.Now()
	b, err := p.Start(ctx, kind, fixtures.WithAuth(), fixtures.WithProgress(progress))
	if err != nil {
		return specs.AuthTarget{}, fmt.Errorf("start auth-enabled %s: %w", kind, err)
	}
	progress("auth-enabled %s ready in %s", kind, time.Since(start).Round(10*time.Millisecond))
	good, bad, ok := b.Endpoints().AuthSettings()
	if !ok {
		_ = b.Stop(ctx)
		return specs.AuthTarget{}, specs.Unavailable("the %s provider has no auth-enabled %s", p.Name(), kind)
	}
	return target(good, bad, b.Stop)
}

// privateBroker starts a broker owned by the calling spec (R4).
func privateBroker(ctx context.Context, name string, kind fixtures.Kind, sh *Shared, progress func(string, ...any)) (specs.PrivateBroker, error) {
	if sh.Provider == "external" {
		return nil, specs.Unavailable("external brokers: %v", fixtures.ErrNoLifecycle)
	}
	p, err := chooseProvider(progress)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	b, err := p.Start(ctx, kind, fixtures.WithProgress(progress))
	if err != nil {
		return nil, fmt.Errorf("start private %s: %w", kind, err)
	}
	progress("private %s ready in %s", kind, time.Since(start).Round(10*time.Millisecond))
	return &realPrivate{b: b, name: name}, nil
}

type realPrivate struct {
	b    fixtures.Broker
	name string
}

func (r *realPrivate) Open(ctx context.Context) (backends.Backend, error) {
	cfg, err := BaseConfig(r.name, r.b.Endpoints().Settings())
	if err != nil {
		return nil, err
	}
	return backends.Open(ctx, cfg)
}

func (r *realPrivate) Restart(ctx context.Context) error {
	err := r.b.Restart(ctx)
	if errors.Is(err, fixtures.ErrNoLifecycle) {
		return specs.Unavailable("%v", err)
	}
	return err
}
func (r *realPrivate) Stop(ctx context.Context) error { return r.b.Stop(ctx) }
func (r *realPrivate) LogTail() string                { return r.b.LogTail(80) }

// CrashChildEnv names the variable that turns the suite's test binary into a crash child.
const CrashChildEnv = "PUBSUB_CRASH_CHILD"

type crashSpec struct {
	Config       backends.Config `json:"config"`
	Topic        string          `json:"topic"`
	Subscription string          `json:"subscription"`
	N            int             `json:"n"`
}

type crashLine struct {
	Ready    bool               `json:"ready,omitempty"`
	Delivery *backends.Delivery `json:"delivery,omitempty"`
	Error    string             `json:"error,omitempty"`
}

// crashInChild re-runs the current test binary as a crash child (see RunCrashChild), reads
// the deliveries it reports, SIGKILLs it after n, and returns what it received.
func crashInChild(ctx context.Context, cfg backends.Config, topic, sub string, n int) ([]backends.Delivery, error) {
	cfg.Log = nil // not serialisable; the child logs to its stderr
	spec, err := json.Marshal(crashSpec{Config: cfg, Topic: topic, Subscription: sub, N: n})
	if err != nil {
		return nil, fmt.Errorf("crash child spec: %w", err)
	}
	cmd := exec.Command(selfExe(), "-test.run=^$") // no tests: TestMain diverts before m.Run
	cmd.Env = append(os.Environ(), CrashChildEnv+"="+string(spec))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	var stderr strings.Builder
	cmd.Stderr = &limitedWriter{w: &stderr, n: 8 << 10}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("crash child pipe: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start crash child: %w", err)
	}
	var once sync.Once
	kill := func() {
		once.Do(func() {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			_ = cmd.Wait()
		})
	}
	defer kill()

	type result struct {
		got []backends.Delivery
		err error
	}
	done := make(chan result, 1)
	go func() {
		var got []backends.Delivery
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			var l crashLine
			if json.Unmarshal(sc.Bytes(), &l) != nil {
				continue
			}
			switch {
			case l.Error != "":
				done <- result{got, fmt.Errorf("crash child: %s", l.Error)}
				return
			case l.Delivery != nil:
				got = append(got, *l.Delivery)
				if len(got) == n {
					done <- result{got, nil}
					return
				}
			}
		}
		done <- result{got, fmt.Errorf("crash child exited after %d of %d messages: %s", len(got), n, strings.TrimSpace(stderr.String()))}
	}()
	select {
	case r := <-done:
		kill() // SIGKILL: no Close, no commit, no goodbye to the broker
		return r.got, r.err
	case <-ctx.Done():
		kill()
		return nil, backends.CtxErr(ctx, "crash child")
	}
}

// selfExe is the running test binary. Why /proc/self/exe: ginkgo deletes (and concurrent runs
// rewrite) suite/suite.test, while the running image stays reachable through /proc.
func selfExe() string {
	if _, err := os.Stat("/proc/self/exe"); err == nil {
		return "/proc/self/exe"
	}
	return os.Args[0]
}

// RunCrashChild is the crash child's whole life: open the backend, subscribe at earliest,
// report each message as a JSON line without acking, then wait to be killed. It returns the
// exit code. Called from the suite's TestMain when CrashChildEnv is set.
func RunCrashChild(specJSON string) int {
	var s crashSpec
	enc := json.NewEncoder(os.Stdout)
	fail := func(err error) int {
		_ = enc.Encode(crashLine{Error: err.Error()})
		return 1
	}
	if err := json.Unmarshal([]byte(specJSON), &s); err != nil {
		return fail(fmt.Errorf("parse %s: %w", CrashChildEnv, err))
	}
	// The parent kills us; this bound only guards against a parent that vanished.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	b, err := backends.Open(ctx, s.Config)
	if err != nil {
		return fail(fmt.Errorf("open %s: %w", s.Config.Backend, err))
	}
	c, err := b.Consumer(ctx, s.Topic, s.Subscription, backends.WithPosition(backends.Earliest))
	if err != nil {
		return fail(fmt.Errorf("consumer: %w", err))
	}
	_ = enc.Encode(crashLine{Ready: true})
	for i := 0; i < s.N; i++ {
		d, err := c.Receive(ctx)
		if err != nil {
			return fail(fmt.Errorf("receive %d of %d: %w", i+1, s.N, err))
		}
		_ = enc.Encode(crashLine{Delivery: &d})
	}
	<-ctx.Done() // hold the messages unacked until SIGKILL
	return 0
}

type limitedWriter struct {
	mu sync.Mutex
	w  *strings.Builder
	n  int
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if room := l.n - l.w.Len(); room > 0 {
		if len(p) > room {
			l.w.Write(p[:room])
		} else {
			l.w.Write(p)
		}
	}
	return len(p), nil
}

// tailFile returns the last n lines of path ("" when unreadable).
func tailFile(path string, n int) string {
	if path == "" {
		return ""
	}
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	const max = 256 << 10
	st, err := f.Stat()
	if err != nil {
		return ""
	}
	off := st.Size() - max
	if off < 0 {
		off = 0
	}
	buf := make([]byte, st.Size()-off)
	if _, err := f.ReadAt(buf, off); err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(buf), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// ReportDir is where report files go: PUBSUB_REPORT_DIR (a relative path is taken from the
// module root), else reports/out at the module root. The root is found by walking up to go.mod,
// so `go test ./suite` and `ginkgo ./suite` (which run in suite/) agree with `make`.
func ReportDir() (string, error) {
	root, err := moduleRoot()
	d := os.Getenv("PUBSUB_REPORT_DIR")
	switch {
	case d != "" && filepath.IsAbs(d):
	case err != nil:
		return "", err
	case d != "":
		d = filepath.Join(root, d)
	default:
		d = filepath.Join(root, "reports", "out")
	}
	if err := os.MkdirAll(d, 0o755); err != nil {
		return "", fmt.Errorf("report dir: %w", err)
	}
	return d, nil
}

func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("report dir: %w", err)
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("report dir: no go.mod above %s; set PUBSUB_REPORT_DIR to an absolute path", dir)
		}
	}
}

// Meta is the sidecar reports/out/meta-<backend>.json the reports tool reads.
type Meta struct {
	Backend       string             `json:"backend"`
	Reference     bool               `json:"reference,omitempty"` // the in-process reference: never a conformance result
	Description   string             `json:"description,omitempty"`
	Provider      string             `json:"provider"`
	ProviderWhy   string             `json:"providerWhy,omitempty"`
	BrokerVersion string             `json:"brokerVersion"`
	BrokerStartup map[string]float64 `json:"brokerStartup"` // seconds per broker kind
	Settings      map[string]any     `json:"settings"`
	StartedAt     time.Time          `json:"startedAt"`
	SuiteSeconds  float64            `json:"suiteSeconds"`
}

// NewMeta describes the run of backend name.
func NewMeta(name string, sh *Shared, suiteTime time.Duration) Meta {
	d, _ := backends.Lookup(name)
	m := Meta{
		Backend:       name,
		Reference:     d.Reference,
		Description:   d.Description,
		Provider:      sh.Provider,
		ProviderWhy:   sh.ProviderWhy,
		BrokerStartup: map[string]float64{},
		StartedAt:     sh.StartedAt,
		SuiteSeconds:  suiteTime.Seconds(),
	}
	var broker map[string]string
	if kind, ok := KindFor(name); ok {
		ep := sh.Brokers[kind]
		m.BrokerVersion = ep.Version
		m.BrokerStartup[string(kind)] = ep.StartupTime.Seconds()
		broker = ep.Settings()
	} else {
		m.Provider = "none (in-process reference)"
	}
	if cfg, err := BaseConfig(name, broker); err == nil {
		m.Settings = Settings(cfg)
	}
	return m
}
