package suite

import (
	"context"
	"fmt"
	"time"

	"github.com/pubsub-conformance/harness/backends"
	"github.com/pubsub-conformance/harness/backends/memory"
	"github.com/pubsub-conformance/harness/fixtures"
	"github.com/pubsub-conformance/harness/internal/brief"
	"github.com/pubsub-conformance/harness/specs"
	"github.com/pubsub-conformance/harness/suite/run"
)

// NewEnv builds the specs' Env for the run's target t on the run's shared brokers. progress
// prints lines about private brokers the specs start.
func NewEnv(t run.Target, sh *Shared, progress func(string, ...any)) *specs.Env {
	name, kind := t.Name(), t.Kind
	env := &specs.Env{Backend: name}
	config := func() (backends.Config, error) {
		if !t.NeedsBroker() {
			return t.BaseConfig(nil)
		}
		ep, ok := sh.Brokers[kind]
		if !ok {
			return backends.Config{}, fmt.Errorf("no %s broker was started for %s", kind, name)
		}
		return t.BaseConfig(ep.Settings())
	}
	env.Open = func(ctx context.Context) (backends.Backend, error) {
		cfg, err := config()
		if err != nil {
			return nil, err
		}
		return openClient(ctx, t, cfg, "the run's broker")
	}
	env.Reference = func(ctx context.Context) (backends.Backend, error) {
		return memory.NewBroker().Open(ctx, backends.Config{Backend: memory.Name})
	}
	env.SkipAll = func() string { return brokerTooOld(t.Descriptor, sh) }
	env.RetentionFor = func(c backends.Class) time.Duration {
		cfg, err := config()
		if err != nil {
			return c.DefaultRetention()
		}
		return cfg.RetentionFor(c)
	}
	if !t.NeedsBroker() {
		inProcessEnv(env, t)
		return env
	}
	rec, _ := fixtures.LookupKind(kind)
	env.UnheldDrop = func() time.Duration { return rec.UnheldDrop }
	env.MarkBrokerLog = func() func() string {
		m := brief.MarkLog(sh.Brokers[kind].LogFile)
		return func() string { return m.Since(sharedLogLines) }
	}
	if fixtures.AuthOnShared(kind) {
		env.Auth = func(context.Context) (specs.AuthTarget, error) { return authTarget(t, sh) }
	} else {
		env.AuthOnPrivateBroker = true // privateOptions starts that broker auth-enabled
	}
	env.PrivateBroker = func(ctx context.Context) (specs.PrivateBroker, error) {
		return privateBroker(ctx, t, sh, progress)
	}
	env.FaultyBroker = func(ctx context.Context) (specs.FaultyBroker, error) {
		return faultyBroker(ctx, t, sh, progress)
	}
	env.Cluster = func(ctx context.Context) (specs.Cluster, error) {
		return replicatedCluster(ctx, t, sh, progress)
	}
	env.CrashConsumer = func(ctx context.Context, topic, sub string, plan specs.CrashPlan) ([]backends.Delivery, error) {
		cfg, err := config()
		if err != nil {
			return nil, err
		}
		return crashInChild(ctx, cfg, topic, sub, plan)
	}
	return env
}

// inProcessEnv fills the parts of Env for a target without a broker (the reference backend
// and its known-bad variants), from what its Descriptor offers.
func inProcessEnv(env *specs.Env, t run.Target) {
	d, name := t.Descriptor, t.Name()
	// A known-bad variant's crash consumer may be a client of its base (CrashConsumer): the
	// base is resolved here, once, as the variant was; its error is the crash's.
	var base run.Target
	var baseErr error
	if d.Variant != "" {
		base, baseErr = run.Resolve(d.Base)
	}
	env.Auth = func(context.Context) (specs.AuthTarget, error) {
		return specs.AuthTarget{}, specs.Unavailable("%s runs in-process: there is no broker to authenticate against", name)
	}
	env.PrivateBroker = func(context.Context) (specs.PrivateBroker, error) {
		if d.InProcess == nil {
			return nil, specs.Unavailable("%s offers no private in-process instance", name)
		}
		return &inProcessPrivate{inst: d.InProcess(), t: t}, nil
	}
	env.FaultyBroker = func(context.Context) (specs.FaultyBroker, error) {
		if d.InProcess == nil {
			return nil, specs.Unavailable("%s offers no private in-process instance", name)
		}
		inst := d.InProcess()
		cut, ok := inst.(backends.Cuttable)
		if !ok {
			inst.Close()
			// The fault area uses this instance for cuts and latency (F2 needs only latency, which the stand-in
			// offers on top of the cut switch): the reason names both.
			return nil, specs.Unavailable("%s's private instance cannot simulate a network cut or latency (backends.Cuttable, backends.Laggable)", name)
		}
		return &inProcessFaulty{inProcessPrivate{inst: inst, t: t}, cut}, nil
	}
	// No stand-in: the reference has no replicas, and a "failover" inside one process would
	// prove nothing the broker specs do not; F5 runs on the Kafka cluster only.
	env.Cluster = func(context.Context) (specs.Cluster, error) {
		return nil, specs.Unavailable("%s runs in-process: it has no replicas and no partition leader to kill", name)
	}
	env.CrashConsumer = func(ctx context.Context, topic, sub string, plan specs.CrashPlan) ([]backends.Delivery, error) {
		// The crashing "process" is a separate client, dropped without any Close (an in-process
		// backend's state is unreachable from a child process): the backend itself, known-bad
		// variant included, when the client it decorates can be killed; else a client of the
		// unmodified base.
		b, k, err := openKillable(ctx, t)
		if err != nil && d.Variant != "" {
			if baseErr != nil {
				return nil, fmt.Errorf("crash consumer: base %s of %s: %w", d.Base, name, baseErr)
			}
			b, k, err = openKillable(ctx, base)
		}
		if err != nil {
			return nil, err
		}
		defer k.Kill()
		c, err := b.Consumer(ctx, topic, sub, backends.WithPosition(backends.Earliest))
		if err != nil {
			return nil, fmt.Errorf("crash consumer: %w", err)
		}
		got, err := followCrashPlan(ctx, c, plan, func(backends.Delivery) {})
		if err != nil {
			return got, fmt.Errorf("crash consumer: %w", err)
		}
		if len(plan.Ack) > 0 {
			err = holdBeforeKill(ctx, plan)
		}
		return got, err
	}
}

// openKillable opens a client of target t whose connection can be dropped like a crashed
// process's (a Kill method on it or on a client it decorates, found through Unwrap).
func openKillable(ctx context.Context, t run.Target) (backends.Backend, interface{ Kill() }, error) {
	cfg, err := t.BaseConfig(nil)
	if err != nil {
		return nil, nil, err
	}
	b, err := openClient(ctx, t, cfg, "the consumer to crash")
	if err != nil {
		return nil, nil, err
	}
	for inner := b; inner != nil; {
		if k, ok := inner.(interface{ Kill() }); ok {
			return b, k, nil
		}
		u, ok := inner.(interface{ Unwrap() backends.Backend })
		if !ok {
			break
		}
		inner = u.Unwrap()
	}
	_ = b.Close(ctx)
	return nil, nil, specs.Unavailable("%s runs in-process and its client has no Kill: no consumer crash without a child process", t.Name())
}

// inProcessPrivate is a spec's private instance of an in-process backend; clients reach it
// through the registry (so a known-bad variant is opened as that variant) with its settings.
type inProcessPrivate struct {
	inst backends.Instance
	t    run.Target
}

func (p *inProcessPrivate) Open(ctx context.Context) (backends.Backend, error) {
	cfg, err := p.t.BaseConfig(p.inst.Settings())
	if err != nil {
		return nil, err
	}
	return openClient(ctx, p.t, cfg, "a private in-process instance")
}
func (p *inProcessPrivate) Restart(context.Context) error { p.inst.Restart(); return nil }
func (p *inProcessPrivate) Stop(context.Context) error    { p.inst.Close(); return nil }
func (p *inProcessPrivate) MarkLog() func() string        { return func() string { return "" } }

// inProcessFaulty is a private in-process instance whose "network" is the instance's
// unreachable switch (backends.Cuttable): the reference's stand-in for a proxy.
type inProcessFaulty struct {
	inProcessPrivate
	cut backends.Cuttable
}

func (f *inProcessFaulty) Cut(context.Context) error { f.cut.SetUnreachable(true); return nil }
func (f *inProcessFaulty) Heal(context.Context) error {
	f.cut.SetUnreachable(false)
	if l, ok := f.cut.(backends.Laggable); ok {
		l.SetLatency(0)
	}
	return nil
}

// SetLatency uses the instance's latency switch (backends.Laggable) when it has one.
func (f *inProcessFaulty) SetLatency(_ context.Context, d time.Duration) error {
	l, ok := f.cut.(backends.Laggable)
	if !ok {
		return specs.Unavailable("%s's private instance cannot simulate network latency (backends.Laggable)", f.t.Name())
	}
	l.SetLatency(d)
	return nil
}
