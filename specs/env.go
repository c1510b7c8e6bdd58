// Package specs is the shared behaviour catalogue (D1..S1 of the design): one Ginkgo spec per
// behaviour, declared with Behaviour("<ID>", ...), which takes its text, labels (ID, area,
// level) and scheduling priority from the catalogue entry (specs/catalogue) - the one place
// that says what the behaviour requires; a spec's comments say only how. Specs talk to the
// contract in package backends only; everything backend- or broker-specific reaches them through
// Env, which the suite fills in per backend.
//
// Usage, from a suite's test file (at tree-construction time):
//
//	var _ = specs.Conformance(env) // env *specs.Env, filled in before specs run
package specs

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/pubsub-conformance/harness/backends"
)

// Env is what a suite injects for one backend. The suite creates one Env per backend at tree
// construction time; its functions are called by specs at run time (in setup nodes and Its),
// possibly from several Ginkgo processes at once, each process with its own Env value.
// Optional functions may be nil; the specs that need them then skip with a reason.
type Env struct {
	// Backend is the registry name of the backend under test ("kafka", "memory", ...).
	Backend string

	// SkipAll, when set and non-empty, is why none of the backend's specs can run on this run's
	// broker (kafka-kip848 on a Kafka before 4.0): each spec skips with it. Read once the
	// brokers have started.
	SkipAll func() string

	// Open returns a new client (Backend) on the run's shared broker. Called once or more per
	// spec; the spec closes what it opened (DeferCleanup).
	Open func(ctx context.Context) (backends.Backend, error)

	// Auth returns clients for an auth-enabled broker (S1, S2), or an error from Unavailable
	// when the backend/provider cannot do auth here. Called once per backend from the security
	// area's BeforeAll; the returned Stop (if non-nil) is deferred and releases anything Auth
	// started. Not used when AuthOnPrivateBroker is set.
	Auth func(ctx context.Context) (AuthTarget, error)

	// AuthOnPrivateBroker puts S1 and S2 in the private-broker area (specs/private.go) instead
	// of a security area of their own: the suite then starts that area's broker auth-enabled
	// (every client Open gives has good credentials) and it is an AuthBroker. Set for brokers
	// whose authentication is a whole-broker setting (Pulsar's tokens), where the shared
	// broker cannot serve S1: one broker start fewer than an auth-enabled broker of their own.
	AuthOnPrivateBroker bool

	// PrivateBroker starts a broker that the broker-restart specs (R4, R6) own and restart,
	// where FaultyBroker is Unavailable (a FaultyBroker restarts too and serves them then):
	// called once per backend from the private-broker area's BeforeAll (specs/private.go),
	// shared by its specs one after another, stopped with DeferCleanup(pb.Stop) after the last
	// (see sharedBroker). Unavailable(reason) when impossible (e.g. external brokers).
	PrivateBroker func(ctx context.Context) (PrivateBroker, error)

	// FaultyBroker starts a broker behind a TCP proxy that can be cut and healed, owned by an
	// Ordered container (the private-broker area of R4, R6 and F1-F4, F6):
	// called once per backend and container from its BeforeAll, shared by its specs one after
	// another, healed after each, stopped with DeferCleanup(fb.Stop) after the last.
	// Unavailable(reason) when the provider cannot put a proxy in front of its broker
	// (container, external).
	FaultyBroker func(ctx context.Context) (FaultyBroker, error)

	// Cluster starts a replicated broker cluster owned by the calling Ordered container's specs
	// (F5: a three-node Kafka cluster, replication factor 3, min.insync.replicas 2), whose nodes
	// they may kill. Called from BeforeAll; it returns when every node serves clients, and the
	// container stops it with DeferCleanup(cl.Stop) after its last spec, which also removes its
	// data. Unavailable(reason) when the broker kind has no replicas to fail
	// over to (standalone Pulsar, the in-process reference) or the provider cannot start a
	// cluster (container, external).
	Cluster func(ctx context.Context) (Cluster, error)

	// CrashConsumer runs a consumer of topic on subscription (initial position earliest)
	// somewhere it can be killed without any Close (a child process that gets SIGKILL; the
	// reference backend drops its connection): it receives plan.Receive messages, acks those
	// plan.Ack names, waits plan.HoldAfterAcks, is killed, and only then does CrashConsumer
	// return what it received. Used by R5, R7 and R8.
	CrashConsumer func(ctx context.Context, topic, subscription string, plan CrashPlan) ([]backends.Delivery, error)

	// RetentionFor is the retention the backend was configured to give class c (T1); nil means
	// the class default.
	RetentionFor func(c backends.Class) time.Duration

	// Reference opens a client of a new, private instance of the reference backend (the
	// executable definition of the contract): the workload specs (W1, W2) run each program on
	// it too and compare. specs imports no backend; the suite supplies it.
	Reference func(ctx context.Context) (backends.Backend, error)

	// UnheldDrop is how long after a topic's last write the run's broker may have deleted
	// stored messages that no subscription holds and no retention policy keeps
	// (fixtures.KindRecord.UnheldDrop; 0 when it drops nothing for that). Nil: none (the
	// reference backend keeps every message for its class's retention).
	UnheldDrop func() time.Duration

	// MarkBrokerLog marks the end of the run's broker log now (a spec's start); the function
	// it returns gives what the broker wrote since, attached to a failed spec. Nil when there
	// is no broker (memory).
	MarkBrokerLog func() (since func() string)
}

// CrashPlan is what a crashing consumer does before it is killed (Env.CrashConsumer).
type CrashPlan struct {
	Receive int   // messages to receive
	Ack     []int // indexes into the received messages to ack, in this order (each Ack must succeed)
	// HoldAfterAcks is how long the consumer lives on after its last Ack returned, before the
	// kill: the time its backend had to store the acks (C-ACK-6). Ignored without acks.
	HoldAfterAcks time.Duration
}

// AuthTarget is an auth-enabled broker and two ways to reach it.
type AuthTarget struct {
	// Good opens a Backend with valid credentials; Bad one with wrong credentials. Bad may
	// itself fail (that must then be an ErrAuth error, quickly).
	Good func(ctx context.Context) (backends.Backend, error)
	Bad  func(ctx context.Context) (backends.Backend, error)
	// Stop releases what Auth started (nil when nothing); called once, after the last spec
	// of the security area (S1, S2).
	Stop func(ctx context.Context) error
	// TLSGood opens a Backend over the broker's TLS listeners (S2) with good credentials,
	// trusting the CA that signed the broker's certificate; TLSWrongCA the same trusting an
	// unrelated CA. Both nil when the broker has no TLS listener: NoTLS says why.
	TLSGood, TLSWrongCA func(ctx context.Context) (backends.Backend, error)
	NoTLS               string
}

// PrivateBroker is a broker owned by the specs that restart it, one at a time.
type PrivateBroker interface {
	// Open returns a new client on this broker; the spec closes it.
	Open(ctx context.Context) (backends.Backend, error)
	// Restart stops the broker gracefully and starts it again with the same data and ports;
	// it returns when the broker is ready again.
	Restart(ctx context.Context) error
	// Stop stops the broker and removes its data. Idempotent.
	Stop(ctx context.Context) error
	// MarkLog marks the end of this broker's log now; the function it returns gives what the
	// broker wrote since ("" when it has no log).
	MarkLog() (since func() string)
}

// AuthBroker is a private broker started auth-enabled (Env.AuthOnPrivateBroker).
type AuthBroker interface {
	// Auth is how S1 and S2 reach it: good and bad credentials, its TLS listeners; an
	// Unavailable error when the provider started it without authentication. Stop is nil:
	// the area stops the broker.
	Auth() (AuthTarget, error)
}

// FaultyBroker is a private broker whose clients all reach it through a proxy. Its specs run
// one at a time (an Ordered container), so a fault reaches only the spec that made it. It
// restarts like any PrivateBroker (the proxy stays up, at the same addresses), and its Open
// returns clients that go through the proxy.
type FaultyBroker interface {
	PrivateBroker
	// Cut closes every client connection and refuses new ones until Heal; the broker keeps
	// running.
	Cut(ctx context.Context) error
	// Heal lets clients connect again (same addresses) and removes any latency: the F area
	// calls it after every spec (AfterEach), so each spec starts on a clean network.
	Heal(ctx context.Context) error
	// SetLatency adds d of latency each way between every client and the broker, on live and
	// new connections, until SetLatency(ctx, 0) or Heal; the broker keeps running. Called by
	// the spec that makes the fault (F2), from its own goroutine; an Unavailable error makes
	// that spec skip with the reason (a stand-in that cannot delay its calls).
	SetLatency(ctx context.Context, d time.Duration) error
}

// NemesisBroker is a FaultyBroker that makes the other faults of W2's nemesis: connections
// reset when the broker answers (the request was served) and answers cut off after some bytes,
// both until Heal, and the broker's process paused (SIGSTOP) until Resume (SIGCONT). A
// FaultyBroker without it gets schedules of its cuts, latency and restarts only.
type NemesisBroker interface {
	ResetPeer(ctx context.Context) error
	LimitData(ctx context.Context) error
	Pause(ctx context.Context) error
	Resume(ctx context.Context) error
}

// Cluster is a replicated broker cluster owned by one spec. Methods are safe for concurrent use.
type Cluster interface {
	// Open returns a new client on the cluster (every node as bootstrap, topics created with
	// the cluster's replication factor); the spec closes it.
	Open(ctx context.Context) (backends.Backend, error)
	// Leader returns the node that leads the partition holding topic's messages (a contract
	// topic string a client of this cluster created), as the cluster's metadata says now.
	Leader(ctx context.Context, topic string) (node int, err error)
	// Replicas returns the node ids of that partition's replicas and in-sync replicas now.
	Replicas(ctx context.Context, topic string) (replicas, isr []int, err error)
	// CutReplication stops the other nodes from replicating from node (their fetches are
	// refused) while clients and the cluster's controllers still reach it: its followers fall
	// behind. It lasts until the node is killed or the cluster stopped.
	CutReplication(ctx context.Context, node int) error
	// Kill stops node at once (SIGKILL), without any shutdown; the other nodes keep running.
	Kill(ctx context.Context, node int) error
	// Describe says in one line what runs: nodes, time to ready, resident memory per node.
	Describe() string
	// Stop stops every node and removes the cluster's data. Idempotent.
	Stop(ctx context.Context) error
	// MarkLog marks the end of every node's log now; the function it returns gives what the
	// nodes wrote since, under a header per node ("" when none).
	MarkLog() (since func() string)
}

// UnavailableError says an Env capability cannot be provided here; specs skip with Reason.
type UnavailableError struct{ Reason string }

func (e *UnavailableError) Error() string { return "unavailable: " + e.Reason }

// Unavailable returns an error that makes the calling spec skip with reason.
func Unavailable(format string, args ...any) error {
	return &UnavailableError{Reason: fmt.Sprintf(format, args...)}
}

// skipReason reports whether err says "unavailable here", and why.
func skipReason(err error) (string, bool) {
	var u *UnavailableError
	if errors.As(err, &u) {
		return u.Reason, true
	}
	return "", false
}

func (e *Env) retentionFor(c backends.Class) time.Duration {
	if e.RetentionFor != nil {
		return e.RetentionFor(c)
	}
	return c.DefaultRetention()
}
