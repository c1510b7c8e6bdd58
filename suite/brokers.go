// Package suite wires the shared specs to concrete backends and real brokers: which broker each
// backend needs started, how every Ginkgo process reaches it, and the per-backend report
// files (what a run tests is resolved by suite/run). The runnable Ginkgo suite is
// suite_test.go in this directory.
package suite

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/pubsub-conformance/harness/backends"
	"github.com/pubsub-conformance/harness/fixtures"
	"github.com/pubsub-conformance/harness/fixtures/providers"
	"github.com/pubsub-conformance/harness/internal/brief"
	"github.com/pubsub-conformance/harness/specs"
	"github.com/pubsub-conformance/harness/suite/run"
)

// Shared is what process 1 hands every Ginkgo process after starting the brokers: plain data.
type Shared struct {
	Provider    string                               `json:"provider"`
	ProviderWhy string                               `json:"providerWhy"`
	Brokers     map[fixtures.Kind]fixtures.Endpoints `json:"brokers"`
	StartedAt   time.Time                            `json:"startedAt"`
}

// StartBrokers starts one broker per needed kind (with its authenticated listener where
// fixtures.AuthOnShared says so: Kafka's SASL listener), concurrently, through the
// provider PUBSUB_BROKERS selects. Called once per run, on Ginkgo process 1; the caller stops
// the returned brokers (StopBrokers) in SynchronizedAfterSuite, also on failure.
// Kinds whose authentication is a whole-broker setting (Pulsar's tokens) get no auth-enabled
// broker here: their S1 and S2 run on each backend's private-broker area's broker, which
// privateOptions starts auth-enabled (specs.Env.AuthOnPrivateBroker).
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
	// Concurrently: a broker start mostly waits (JVM class loading, the broker's own
	// readiness), and the run's time to verdict starts only when the slowest is ready.
	type result struct {
		b   fixtures.Broker
		err error
		in  time.Duration
	}
	results := make([]result, len(kinds))
	var wg sync.WaitGroup
	for i, kind := range kinds {
		opts := []fixtures.Option{fixtures.WithProgress(progress)}
		if fixtures.AuthOnShared(kind) {
			opts = append(opts, fixtures.WithAuth()) // S1 uses the shared broker's authenticated listener
		}
		wg.Go(func() {
			begin := time.Now()
			b, err := p.Start(ctx, kind, opts...)
			results[i] = result{b, err, time.Since(begin)}
		})
	}
	wg.Wait()
	var started []fixtures.Broker
	var errs []error
	for i, r := range results {
		kind := kinds[i]
		if r.err != nil {
			errs = append(errs, fmt.Errorf("%s provider: %w", p.Name(), r.err)) // err names the broker
			continue
		}
		started = append(started, r.b)
		ep := r.b.Endpoints()
		if rec, _ := fixtures.LookupKind(kind); rec.Prepare != nil {
			// Logged, not fatal (as the adapters' own deployment step): an external broker
			// may refuse an anonymous admin call; the backends' calls then show the state.
			if err := rec.Prepare(ctx, ep); err != nil {
				progress("%s: %v (the backends create what they need themselves; results may depend on which came first)", kind, err)
			} else {
				progress("%s: prepared the deployment every backend of the kind shares", kind)
			}
		}
		sh.Brokers[kind] = ep
		progress("%s %s ready in %s via %s (log %s)", kind, ep.Version, r.in.Round(10*time.Millisecond), p.Name(), ep.LogFile)
	}
	if len(errs) > 0 {
		return sh, started, errors.Join(errs...)
	}
	return sh, started, nil
}

// StopBrokers discards every broker (fixtures.Discard: killed, its data removed; nothing reads
// it again), concurrently, joining the errors in the brokers' order.
func StopBrokers(ctx context.Context, bs []fixtures.Broker) error {
	errs := make([]error, len(bs))
	var wg sync.WaitGroup
	for i, b := range bs {
		wg.Go(func() {
			if err := fixtures.Discard(ctx, b); err != nil {
				errs[i] = fmt.Errorf("stop %s: %w", b.Endpoints().Kind, err)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// chooseProvider picks the provider for a private broker on the calling process.
func chooseProvider(progress func(string, ...any)) (fixtures.Provider, error) {
	p, why, err := providers.Choose(os.Getenv)
	if err != nil {
		return nil, fmt.Errorf("choose broker provider: %w", err)
	}
	progress("private broker provider %s: %s", p.Name(), why)
	return p, nil
}

// authTarget reaches the shared broker's authenticated listener (fixtures.AuthOnShared:
// Kafka's SASL listener, RabbitMQ's user of its own). Other kinds run S1 and S2 on the
// private-broker area's broker (realPrivate.Auth).
func authTarget(t run.Target, sh *Shared) (specs.AuthTarget, error) {
	ep := sh.Brokers[t.Kind]
	at, ok := authOn(t, ep)
	if !ok {
		return specs.AuthTarget{}, specs.Unavailable("the %s provider started %s without an authenticated listener", ep.Provider, t.Kind)
	}
	return at, nil
}

// authOn is how t's clients reach ep's authenticated side: good and bad credentials, and its
// TLS listeners where it has them; false when ep has no authenticated side.
func authOn(t run.Target, ep fixtures.Endpoints) (specs.AuthTarget, bool) {
	good, bad, ok := ep.AuthSettings()
	if !ok {
		return specs.AuthTarget{}, false
	}
	open := func(settings map[string]string, where string) func(context.Context) (backends.Backend, error) {
		return func(ctx context.Context) (backends.Backend, error) {
			cfg, err := t.BaseConfig(settings)
			if err != nil {
				return nil, err
			}
			return openClient(ctx, t, cfg, where)
		}
	}
	at := specs.AuthTarget{Good: open(good, "an auth-enabled broker"), Bad: open(bad, "an auth-enabled broker")}
	if tlsGood, wrongCA, ok := ep.TLSSettings(); ok {
		at.TLSGood = open(tlsGood, "an auth-enabled broker over TLS")
		at.TLSWrongCA = open(wrongCA, "an auth-enabled broker over TLS")
	} else {
		at.NoTLS = fmt.Sprintf("the %s provider started %s without TLS listeners", ep.Provider, t.Kind)
	}
	return at, true
}

// privateOptions are the options of a private broker of kind: auth-enabled where the kind's
// authentication is a whole-broker setting (not fixtures.AuthOnShared: Pulsar's tokens), so
// that the private-broker area's broker also serves S1 and S2 - one broker start fewer per
// run than an auth-enabled broker of their own (issue 33) - and every client of it gets good
// credentials (realPrivate.settings).
func privateOptions(kind fixtures.Kind, progress func(string, ...any), opts ...fixtures.Option) []fixtures.Option {
	opts = append(opts, fixtures.WithProgress(progress))
	if !fixtures.AuthOnShared(kind) {
		opts = append(opts, fixtures.WithAuth())
	}
	return opts
}

// privateBroker starts a broker owned by the calling spec (R4).
func privateBroker(ctx context.Context, t run.Target, sh *Shared, progress func(string, ...any)) (specs.PrivateBroker, error) {
	kind := t.Kind
	if sh.Provider == "external" {
		return nil, specs.Unavailable("external brokers: %v", fixtures.ErrNoLifecycle)
	}
	p, err := chooseProvider(progress)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	b, err := p.Start(ctx, kind, privateOptions(kind, progress)...)
	if err != nil {
		return nil, fmt.Errorf("start private %s: %w", kind, err)
	}
	progress("private %s ready in %s", kind, time.Since(start).Round(10*time.Millisecond))
	return &realPrivate{b: b, t: t, where: "a private broker"}, nil
}

type realPrivate struct {
	b     fixtures.Broker
	t     run.Target
	where string // what its clients' histories say they reach
}

func (r *realPrivate) Open(ctx context.Context) (backends.Backend, error) {
	cfg, err := r.t.BaseConfig(r.settings())
	if err != nil {
		return nil, err
	}
	return openClient(ctx, r.t, cfg, r.where)
}

func (r *realPrivate) Restart(ctx context.Context) error {
	err := r.b.Restart(ctx)
	if errors.Is(err, fixtures.ErrNoLifecycle) {
		return specs.Unavailable("%v", err)
	}
	return err
}

// settings are what its clients get: good credentials where the broker was started
// auth-enabled (privateOptions: the whole broker then needs them), else its plain side's.
func (r *realPrivate) settings() map[string]string {
	ep := r.b.Endpoints()
	if good, _, ok := ep.AuthSettings(); ok {
		return good
	}
	return ep.Settings()
}

// Auth is the broker's authenticated side for S1 and S2 (specs.AuthBroker), Unavailable when
// it has none (a provider that cannot start an auth-enabled broker).
func (r *realPrivate) Auth() (specs.AuthTarget, error) {
	at, ok := authOn(r.t, r.b.Endpoints())
	if !ok {
		ep := r.b.Endpoints()
		return specs.AuthTarget{}, specs.Unavailable("the %s provider started the private %s without authentication", ep.Provider, ep.Kind)
	}
	return at, nil
}

func (r *realPrivate) Stop(ctx context.Context) error { return fixtures.Discard(ctx, r.b) }
func (r *realPrivate) MarkLog() func() string         { return markLog(r.b) }

// faultyBroker starts a broker owned by the calling spec behind a fault proxy (the F specs):
// only the local provider can (fixtures.ErrNoFaults otherwise, which becomes the skip reason).
func faultyBroker(ctx context.Context, t run.Target, sh *Shared, progress func(string, ...any)) (specs.FaultyBroker, error) {
	kind := t.Kind
	if sh.Provider == "external" {
		return nil, specs.Unavailable("external brokers: the run cannot make them advertise a fault proxy's address")
	}
	p, err := chooseProvider(progress)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	b, err := p.Start(ctx, kind, privateOptions(kind, progress, fixtures.WithFaultProxy())...)
	if errors.Is(err, fixtures.ErrNoFaults) {
		return nil, specs.Unavailable("%v", err)
	}
	if err != nil {
		return nil, fmt.Errorf("start private %s behind a fault proxy: %w", kind, err)
	}
	f, ok := b.(fixtures.Faults)
	if !ok {
		_ = b.Stop(ctx)
		return nil, specs.Unavailable("the %s provider's brokers cannot be cut (no fixtures.Faults)", p.Name())
	}
	progress("private %s behind a fault proxy ready in %s", kind, time.Since(start).Round(10*time.Millisecond))
	rf := &realFaulty{realPrivate: realPrivate{b: b, t: t, where: "a private broker behind a fault proxy"}, f: f}
	if n, ok := b.(fixtures.Nemesis); ok {
		return &realNemesis{realFaulty: rf, n: n}, nil
	}
	return rf, nil
}

// realNemesis is a faulty broker that also resets, limits and pauses (specs.NemesisBroker).
type realNemesis struct {
	*realFaulty
	n fixtures.Nemesis
}

// limitDataBytes is how many bytes of answers a connection passes under LimitData: a few
// small answers, then one cut off in the middle.
const limitDataBytes = 1024

func (r *realNemesis) ResetPeer(context.Context) error { return r.n.ResetPeer() }
func (r *realNemesis) LimitData(context.Context) error { return r.n.LimitData(limitDataBytes) }
func (r *realNemesis) Pause(context.Context) error     { return r.n.Pause() }
func (r *realNemesis) Resume(context.Context) error    { return r.n.Resume() }

type realFaulty struct {
	realPrivate
	f fixtures.Faults
}

func (r *realFaulty) Cut(context.Context) error  { return r.f.Cut() }
func (r *realFaulty) Heal(context.Context) error { return r.f.Heal() }
func (r *realFaulty) SetLatency(_ context.Context, d time.Duration) error {
	return r.f.SetLatency(d)
}

// clusterNodes is the size of the cluster F5 kills a leader in: three replicas, so that two
// remain in sync (min.insync.replicas 2) after one node dies.
const clusterNodes = 3

// replicatedCluster starts a cluster owned by the calling spec (F5), or says why there is none:
// only Kafka has replicas to fail over to here (the kind record's NoCluster says why the others
// have none), and only the local provider starts clusters.
func replicatedCluster(ctx context.Context, t run.Target, sh *Shared, progress func(string, ...any)) (specs.Cluster, error) {
	kind := t.Kind
	if r, _ := fixtures.LookupKind(kind); r.NoCluster != "" {
		return nil, specs.Unavailable("%s", r.NoCluster)
	}
	if sh.Provider == "external" {
		return nil, specs.Unavailable("external brokers: the run cannot start a %d-node cluster or kill its nodes", clusterNodes)
	}
	p, err := chooseProvider(progress)
	if err != nil {
		return nil, err
	}
	cp, ok := p.(fixtures.ClusterProvider)
	if !ok {
		return nil, specs.Unavailable("the %s provider starts single brokers only; the %d-node %s cluster runs on the local provider (PUBSUB_BROKERS=local)", p.Name(), clusterNodes, kind)
	}
	start := time.Now()
	c, err := cp.StartCluster(ctx, kind, clusterNodes, fixtures.WithProgress(progress))
	if errors.Is(err, fixtures.ErrNoCluster) {
		return nil, specs.Unavailable("%v", err)
	}
	if err != nil {
		return nil, fmt.Errorf("start a %d-node %s cluster: %w", clusterNodes, kind, err)
	}
	progress("private %d-node %s cluster ready in %s", clusterNodes, kind, time.Since(start).Round(10*time.Millisecond))
	return &realCluster{c: c, t: t}, nil
}

type realCluster struct {
	c fixtures.Cluster
	t run.Target
}

func (r *realCluster) Open(ctx context.Context) (backends.Backend, error) {
	cfg, err := r.t.BaseConfig(r.c.Endpoints().Settings())
	if err != nil {
		return nil, err
	}
	return openClient(ctx, r.t, cfg, "a cluster")
}

// Leader finds the broker topic a client made of the contract topic - the cluster's one topic
// whose name contains the contract topic's (unique) name part, whatever mapping the backend
// uses - and returns the leader of its partition 0 (the contract's topics have one partition).
func (r *realCluster) Leader(ctx context.Context, topic string) (int, error) {
	name, err := r.brokerTopic(ctx, topic)
	if err != nil {
		return 0, fmt.Errorf("leader of %s: %w", topic, err)
	}
	return r.c.Leader(ctx, name, 0)
}

// Replicas returns the replicas and in-sync replicas of the broker topic of topic (see Leader).
func (r *realCluster) Replicas(ctx context.Context, topic string) ([]int, []int, error) {
	name, err := r.brokerTopic(ctx, topic)
	if err != nil {
		return nil, nil, fmt.Errorf("replicas of %s: %w", topic, err)
	}
	return r.c.Replicas(ctx, name, 0)
}

// brokerTopic is the cluster's one topic whose name carries the contract topic's name part.
func (r *realCluster) brokerTopic(ctx context.Context, topic string) (string, error) {
	t, err := backends.ParseTopic(topic)
	if err != nil {
		return "", err
	}
	names, err := r.c.Topics(ctx)
	if err != nil {
		return "", err
	}
	var match []string
	for _, n := range names {
		if strings.Contains(n, t.Name) || strings.Contains(n, strings.ReplaceAll(t.Name, ":", ".")) {
			match = append(match, n)
		}
	}
	if len(match) != 1 {
		return "", fmt.Errorf("%d of the cluster's topics %v carry its name %q, want exactly one", len(match), names, t.Name)
	}
	return match[0], nil
}

func (r *realCluster) Kill(ctx context.Context, node int) error { return r.c.Kill(ctx, node) }
func (r *realCluster) CutReplication(_ context.Context, node int) error {
	return r.c.CutReplication(node)
}
func (r *realCluster) Describe() string               { return r.c.Describe() }
func (r *realCluster) Stop(ctx context.Context) error { return r.c.Stop(ctx) }
func (r *realCluster) MarkLog() func() string {
	files := r.c.LogFiles()
	marks := make([]brief.LogMark, len(files))
	for i, f := range files {
		marks[i] = brief.MarkLog(f)
	}
	return func() string {
		var sb strings.Builder
		for i, m := range marks {
			if lines := m.Since(privateLogLines / len(marks)); lines != "" {
				fmt.Fprintf(&sb, "=== node %d (%s)\n%s\n", i+1, files[i], lines)
			}
		}
		return sb.String()
	}
}

// How many lines of what a broker logged during a spec a failure shows: the run's broker is
// written to by every Ginkgo process, a private broker only by the spec's own clients.
const (
	sharedLogLines  = 120
	privateLogLines = 200
)

// markLog marks b's log file now; a broker without one (a container's log is a stream) falls
// back to the tail of what it has at the failure.
func markLog(b fixtures.Broker) func() string {
	if path := b.Endpoints().LogFile; path != "" {
		m := brief.MarkLog(path)
		return func() string { return m.Since(privateLogLines) }
	}
	return func() string { return b.LogTail(80) }
}
