// Package pulsar implements the conformance contract on Apache Pulsar with pulsar-client-go for
// producing and consuming and its pulsaradmin package (the broker's admin REST API) for topic
// lifecycle.
//
// Mapping (TrustGraph's): "class:topicspace:topic" -> {persistent|non-persistent}://topicspace/class/topic,
// persistent for flow and non-persistent for request, response and notify unless
// Config.AllPersistent (PULSAR_ALL_PERSISTENT). The tenant (topicspace) and namespace (class) are created when
// missing. Shared classes use a Shared subscription with the given name; unique classes an
// Exclusive subscription with a unique name.
//
// Non-persistent topics keep nothing: a message goes only to consumers connected (with free
// permits) when it arrives, and the broker knows the topic only while it is loaded. So, for
// them, CreateTopic loads the topic, TopicExists reports whether it is loaded, DeleteTopic
// unloads it (disconnecting its clients), Retention reads back the class's policy (which has
// nothing to act on), and redelivery and replay are declared unsupported (see Unsupported).
//
// Sends and acks through faults (the contract's sentences, and what carries each here):
//   - C-SEND-1/C-SEND-2: Send waits for the broker's receipt of that one message (batching
//     off) and returns the broker's error. A producer whose connection is replaced sends every
//     message without a receipt again, under its producer name and sequence ID; so that such a
//     resend is not written twice (one confirmed Send, one message: D3), every namespace this
//     backend creates gets a deduplication policy, and every persistent topic it creates in a
//     namespace without one a topic-level policy (deduplicate). A topic or namespace that
//     existed is left as it is.
//   - C-SEND-3: a Send that failed may still be written: the resend above, or a receipt lost.
//   - C-ACK-2, C-ACK-5: Ack queues the ack for the consumer's acker, which sends it with a
//     receipt and again until the broker confirms it; Close sends what is left. A receipt is
//     not a stored ack, and a reconnect leaves old copies in the client's channel, so every
//     ack in force is also kept in the subscription's ackBook, shared by this Backend's
//     consumers of it: a message in it is never returned by Receive again (it is acked again
//     instead). Another process's consumers know nothing of it.
//   - C-ACK-8, C-ACK-9: a Nack of a delivery whose message was acked through another
//     delivery (of this consumer or another of the subscription here) is ErrUnknownDelivery.
//   - C-LIFE-7: the client reconnects producers and consumers by itself; calls made meanwhile
//     fail within their ctx (Send after the client's send timeout at most).
package pulsar

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/pubsub-conformance/harness/backends"
)

const (
	// defaultNackDelay is the native negative-ack redelivery delay when the Config gives none:
	// short, so a nacked message comes back within seconds (A1), not the client's 1 minute.
	defaultNackDelay = time.Second
	// operationTimeout bounds the client's retries of producer creation, subscribe and lookups,
	// so an unreachable broker or a refused token ends in an error, not endless reconnects.
	operationTimeout = 15 * time.Second
	// connectionTimeout bounds one TCP connect to the broker.
	connectionTimeout = 5 * time.Second
)

// Backend is the Pulsar backend. Create it with New; the creator closes it.
type Backend struct {
	cfg       backends.Config
	name      string
	allPers   bool
	nackDelay time.Duration
	noWait    bool // PULSAR_CONSUMER_NO_WAIT
	ackSync   bool // PULSAR_ACK_SYNC
	admin     *admin
	client    pulsar.Client
	clusters  []string
	hs        *handshakes

	nsMu     sync.Mutex
	nsOK     map[string]bool          // "tenant/ns" already ensured
	nsPolicy map[string]nsPolicy      // "tenant/ns" -> its policies as this backend made or read them (see ensureNamespace)
	nsRun    map[string]chan struct{} // ensures in flight, so concurrent callers wait for one
	// known: topics (full names) this backend created or found existing and has not deleted
	// since: its Producer and Consumer open them without asking the admin API to create them
	// again (see openTopic).
	known map[string]bool

	booksMu sync.Mutex
	books   map[string]*ackBook // "topic\x00subscription" -> what this Backend acked there (shared subscriptions)

	mu        sync.Mutex
	closed    bool
	producers map[*producer]struct{}
	consumers map[*consumer]struct{}
}

var _ backends.Backend = (*Backend)(nil)

// New connects to the broker in cfg.Settings (see ParseConfig). It fails fast, within ctx, with ErrInvalidConfig
// for unusable settings, ErrAuth when the admin API or the broker refuses the token and
// ErrUnavailable when either cannot be reached: both are probed with a real call.
func New(ctx context.Context, cfg backends.Config) (backends.Backend, error) {
	pc, err := ParseConfig(cfg.Settings)
	if err != nil {
		return nil, fmt.Errorf("pulsar: %w", err)
	}
	if pc.Host == "" {
		return nil, fmt.Errorf("%w: pulsar: PULSAR_HOST is empty (want pulsar://host:6650)", backends.ErrInvalidConfig)
	}
	if u, err := url.Parse(pc.Host); err != nil || (u.Scheme != "pulsar" && u.Scheme != "pulsar+ssl") || u.Host == "" {
		return nil, fmt.Errorf("%w: pulsar: PULSAR_HOST=%q is not a pulsar://host:port or pulsar+ssl://host:port URL", backends.ErrInvalidConfig, pc.Host)
	}
	if pc.AdminURL == "" {
		return nil, fmt.Errorf("%w: pulsar: PULSAR_ADMIN_URL is empty (want http://host:8080); topic lifecycle needs the admin API", backends.ErrInvalidConfig)
	}
	if pc.NackRedeliveryDelay < 0 {
		return nil, fmt.Errorf("%w: pulsar: negative nack redelivery delay %v", backends.ErrInvalidConfig, pc.NackRedeliveryDelay)
	}
	adm, err := newAdmin(pc.AdminURL, adminToken(pc), pc.TLSTrustCertsFile)
	if err != nil {
		return nil, fmt.Errorf("pulsar: %w", err)
	}
	clusters, err := adm.clusters(ctx)
	if err != nil {
		return nil, fmt.Errorf("pulsar: probe admin API at %s: %w", pc.AdminURL, err)
	}
	if len(clusters) == 0 {
		return nil, fmt.Errorf("%w: pulsar: admin API at %s lists no cluster", backends.ErrUnavailable, pc.AdminURL)
	}

	hs := &handshakes{ch: make(chan string, 1)}
	opts := pulsar.ClientOptions{
		URL:               pc.Host,
		ConnectionTimeout: connectionTimeout,
		OperationTimeout:  operationTimeout,
		Logger:            newLogger(cfg.Log, hs.observe),
		// A registry per client: the default one is process-global and would mix backends.
		MetricsRegisterer:     prometheus.NewRegistry(),
		TLSTrustCertsFilePath: pc.TLSTrustCertsFile,
		// pulsar+ssl://: the broker's certificate must name the host of PULSAR_HOST (the
		// library's default checks the chain only), as librdkafka and the admin API's https do.
		TLSValidateHostname: true,
	}
	if pc.APIKey != "" {
		opts.Authentication = pulsar.NewAuthenticationToken(pc.APIKey)
	}
	client, err := pulsar.NewClient(opts)
	if err != nil {
		return nil, fmt.Errorf("%w: pulsar: create client: %v", backends.ErrInvalidConfig, err)
	}
	// The client retries a refused connection until its operation timeout; a plain dial first
	// makes a dead broker fail in milliseconds.
	if err := dialProbe(ctx, pc.Host); err != nil {
		client.Close()
		return nil, fmt.Errorf("pulsar: probe broker at %s: %w", pc.Host, err)
	}
	if err := probeClient(ctx, client, pc.Host, hs); err != nil {
		client.Close()
		return nil, err
	}

	name := "pulsar"
	if pc.AllPersistent {
		name = "pulsar-persistent"
	}
	nack := pc.NackRedeliveryDelay
	if nack == 0 {
		nack = defaultNackDelay
	}
	return &Backend{
		cfg:       cfg,
		name:      name,
		allPers:   pc.AllPersistent,
		nackDelay: nack,
		noWait:    pc.ConsumerNoWait,
		ackSync:   pc.AckSync,
		admin:     adm,
		client:    client,
		clusters:  clusters,
		hs:        hs,
		nsOK:      map[string]bool{},
		nsRun:     map[string]chan struct{}{},
		known:     map[string]bool{},
		books:     map[string]*ackBook{},
		producers: map[*producer]struct{}{},
		consumers: map[*consumer]struct{}{},
	}, nil
}

// Name is "pulsar", or "pulsar-persistent" when every class maps to persistent topics.
func (b *Backend) Name() string { return b.name }

// Unsupported declares what non-persistent topics make impossible; in AllPersistent mode the
// backend claims the whole contract.
func (b *Backend) Unsupported() map[backends.Capability]string {
	// Retention expiry (T3) is claimed: the local fixture closes idle ledgers within ~3 s
	// (idle rollover 5 s, checked with the 5 s topic stats) and trims consumed ones every 2 s,
	// so a 1 minute retention (the floor for 3 s) visibly expires in about 70 s.
	out := map[backends.Capability]string{}
	if !b.allPers {
		out[backends.CapTransientRedelivery] = "request, response and notify map to non-persistent:// topics (TrustGraph's mapping): " +
			"the broker keeps no copy, so a nacked or unacknowledged message cannot be delivered again"
		out[backends.CapTransientReplay] = "request, response and notify map to non-persistent:// topics (TrustGraph's mapping): " +
			"a message reaches only consumers connected when it arrives; nothing is retained for later subscribers"
	}
	return out
}

// resolved is a parsed contract topic with its Pulsar coordinates.
type resolved struct {
	topic      backends.Topic
	orig       string // the string the caller passed
	persistent bool
	tenant     string
	namespace  string
	local      string
}

func (r resolved) domain() string {
	if r.persistent {
		return "persistent"
	}
	return "non-persistent"
}

func (r resolved) fullName() string {
	return r.domain() + "://" + r.tenant + "/" + r.namespace + "/" + r.local
}

func (b *Backend) resolve(topic string) (resolved, error) {
	t, err := backends.ParseTopic(topic)
	if err != nil {
		return resolved{}, fmt.Errorf("pulsar: %w", err)
	}
	r := resolved{
		topic:      t,
		orig:       topic,
		persistent: t.Class.Durable() || b.allPers,
		tenant:     t.Space,
		namespace:  string(t.Class),
		local:      strings.ReplaceAll(t.Name, ":", "."),
	}
	if r.fullName() != TopicName(t, b.allPers) { // the foundation's naming is the reference
		return resolved{}, fmt.Errorf("pulsar: %w: %q maps to %q, want %q", backends.ErrInvalidTopic, topic, r.fullName(), TopicName(t, b.allPers))
	}
	return r, nil
}

func (b *Backend) checkOpen(what string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return fmt.Errorf("pulsar: %s: %w", what, backends.ErrClosed)
	}
	return nil
}

// ensureNamespace creates tenant and namespace when missing, once per backend; concurrent
// callers for the same namespace wait for the one in flight. A namespace this call created
// gets the class's retention and deduplication as its namespace policies, so topics created
// behind the backend's back (auto-creation by another client) are retained and deduplicated
// too. Of a namespace that existed it reads the policies once (nsPolicy): a persistent topic
// this backend creates there gets a topic-level deduplication policy if the namespace does not
// deduplicate (deduplicate), and any topic a topic-level retention if the namespace's is not
// the one wanted (createResolved).
func (b *Backend) ensureNamespace(ctx context.Context, r resolved) error {
	key := r.tenant + "/" + r.namespace
	for {
		b.nsMu.Lock()
		if b.nsOK[key] {
			b.nsMu.Unlock()
			return nil
		}
		if ch, busy := b.nsRun[key]; busy {
			b.nsMu.Unlock()
			select {
			case <-ch:
				continue
			case <-ctx.Done():
				return backends.CtxErr(ctx, "pulsar: ensure namespace "+key)
			}
		}
		ch := make(chan struct{})
		b.nsRun[key] = ch
		b.nsMu.Unlock()

		err := b.createNamespace(ctx, r)

		b.nsMu.Lock()
		delete(b.nsRun, key)
		if err == nil {
			b.nsOK[key] = true
		}
		b.nsMu.Unlock()
		close(ch)
		if err != nil {
			return fmt.Errorf("pulsar: ensure namespace %s: %w", key, err)
		}
		return nil
	}
}

func (b *Backend) createNamespace(ctx context.Context, r resolved) error {
	if err := b.admin.createTenant(ctx, r.tenant, b.clusters); err != nil {
		return err
	}
	created, err := b.admin.createNamespace(ctx, r.tenant, r.namespace)
	if err != nil {
		return err
	}
	var pol nsPolicy
	if created {
		minutes := retentionMinutes(b.cfg.RetentionFor(r.topic.Class))
		if err := b.admin.setNamespaceRetention(ctx, r.tenant, r.namespace, minutes); err != nil {
			return err
		}
		if err := b.admin.setNamespaceDeduplication(ctx, r.tenant, r.namespace, true); err != nil {
			return err
		}
		pol = nsPolicy{dedup: true, retention: minutes, hasRetention: true}
	} else if p, err := b.admin.namespacePolicies(ctx, r.tenant, r.namespace); err == nil {
		pol = p
	} else if ctx.Err() != nil {
		return err
	}
	// Unreadable policies (say, a token that may create topics but not read the namespace's
	// policies) count as neither deduplicating nor retaining: the topics this backend creates
	// get their own.
	b.nsMu.Lock()
	if b.nsPolicy == nil {
		b.nsPolicy = map[string]nsPolicy{}
	}
	b.nsPolicy[r.tenant+"/"+r.namespace] = pol
	b.nsMu.Unlock()
	return nil
}

// namespaceRetains reports whether r's namespace policy, as this backend made or read it,
// retains for the minutes wanted: a topic created there has that retention without a
// topic-level policy of its own.
func (b *Backend) namespaceRetains(r resolved, minutes int) bool {
	b.nsMu.Lock()
	defer b.nsMu.Unlock()
	p := b.nsPolicy[r.tenant+"/"+r.namespace]
	return p.hasRetention && p.retention == minutes
}

// deduplicate gives a persistent topic this backend just created a topic-level deduplication
// policy, unless its namespace's policy deduplicates already. Why deduplication: a
// pulsar-client-go producer sends every message it has no receipt for again when its
// connection is replaced (producer_partition.go, grabCnx), with the same producer name and
// sequence ID; a broker without deduplication writes each resend as one more message, so one
// Send that returned nil is delivered several times (issue 32: a network cut, or answers cut
// off by limit_data or reset_peer). With deduplication the broker drops the resend.
// Non-persistent topics have no deduplication (nothing is stored, nothing resent after a
// break is told apart), so they get none.
func (b *Backend) deduplicate(ctx context.Context, r resolved) error {
	if !r.persistent {
		return nil
	}
	b.nsMu.Lock()
	on := b.nsPolicy[r.tenant+"/"+r.namespace].dedup
	b.nsMu.Unlock()
	if on {
		return nil
	}
	err := b.admin.setTopicDeduplication(ctx, r, true)
	if statusOf(err) == http.StatusMethodNotAllowed {
		// topicLevelPoliciesEnabled=false: the namespace's policy or the broker's
		// brokerDeduplicationEnabled is all there is. Not an error of CreateTopic.
		b.logf("pulsar: topic-level policies are disabled: %s is deduplicated only if its namespace or the broker is (a resend after a reconnect may be written twice)", r.fullName())
		return nil
	}
	if err != nil {
		return fmt.Errorf("pulsar: set deduplication of %s: %w", r.fullName(), err)
	}
	return nil
}

// retentionMinutes converts to the broker's unit, whole minutes, rounding up so a short
// retention never becomes "none" (0 means messages go as soon as they are consumed).
func retentionMinutes(d time.Duration) int {
	if d <= 0 {
		return 0
	}
	m := d / time.Minute
	if d%time.Minute != 0 {
		m++
	}
	return int(m)
}

// CreateTopic creates a non-partitioned topic. A topic this call created has the class's
// retention, or the WithRetention override: from its namespace's policy when that is the
// retention wanted (the class's, in a namespace this backend created), else from a
// topic-level policy of its own, which is dropped with the topic. Retention reads back the
// policy in force either way (T1). Only where needed, because each topic-level policy is an
// admin call and a message on the namespace's system topic that the broker reads back. An
// existing topic is left as it is.
func (b *Backend) CreateTopic(ctx context.Context, topic string, opts ...backends.TopicOption) error {
	if err := b.checkOpen("create topic"); err != nil {
		return err
	}
	r, err := b.resolve(topic)
	if err != nil {
		return err
	}
	return b.createResolved(ctx, r, opts...)
}

func (b *Backend) createResolved(ctx context.Context, r resolved, opts ...backends.TopicOption) error {
	if err := b.create(ctx, r, opts...); err != nil {
		return err
	}
	b.setKnown(r, true)
	return nil
}

// setKnown records whether r is a topic this backend knows to exist (openTopic).
func (b *Backend) setKnown(r resolved, on bool) {
	b.nsMu.Lock()
	defer b.nsMu.Unlock()
	if b.known == nil {
		b.known = map[string]bool{}
	}
	if on {
		b.known[r.fullName()] = true
	} else {
		delete(b.known, r.fullName())
	}
}

// openTopic runs open (a producer's creation, a subscribe; what names it in errors) on r,
// creating r first unless this backend created it or found it existing before and has not
// deleted it since: each ask to create a topic that exists is an admin call the broker
// answers with 409, the most frequent call of a conformance run. When another client deleted
// the topic meanwhile, the broker either auto-creates it on open (its default, with the
// namespace's policies, which this backend set when it made the namespace) or answers "topic
// not found": then the topic is created as for an unknown one and open runs again, once.
func openTopic[T any](ctx context.Context, b *Backend, r resolved, what string, open func() (T, error)) (T, error) {
	var zero T
	b.nsMu.Lock()
	known := b.known[r.fullName()]
	b.nsMu.Unlock()
	if !known {
		if err := b.createResolved(ctx, r); err != nil {
			return zero, err
		}
	}
	v, err := open()
	if err != nil && known && topicNotFound(err) {
		b.setKnown(r, false)
		if err := b.createResolved(ctx, r); err != nil {
			return zero, err
		}
		v, err = open()
	}
	if err != nil {
		return zero, fmt.Errorf("%s: %w", what, b.mapErr(err))
	}
	return v, nil
}

// topicNotFound reports whether the broker refused an open because the topic does not exist
// (auto-creation off).
func topicNotFound(err error) bool {
	var pe *pulsar.Error
	if errors.As(err, &pe) && pe.Result() == pulsar.TopicNotFound {
		return true
	}
	return containsAny(err.Error(), "TopicNotFound", "topic not found")
}

// create is createResolved without the bookkeeping of known topics.
func (b *Backend) create(ctx context.Context, r resolved, opts ...backends.TopicOption) error {
	settings := backends.ApplyTopicOptions(r.topic, b.cfg, opts...)
	if err := b.ensureNamespace(ctx, r); err != nil {
		return err
	}
	created, err := b.admin.createTopic(ctx, r)
	if err != nil {
		return fmt.Errorf("pulsar: create topic %s: %w", r.fullName(), err)
	}
	if !created {
		return nil
	}
	want := retentionMinutes(settings.Retention)
	if b.namespaceRetains(r, want) {
		return b.deduplicate(ctx, r)
	}
	err = b.admin.setTopicRetention(ctx, r, want)
	if statusOf(err) == http.StatusMethodNotAllowed {
		// The broker runs with topicLevelPoliciesEnabled=false: the namespace policy (set
		// when this backend created the namespace) is all there is; fine if it is the same.
		p, rerr := b.admin.topicRetention(ctx, r)
		if rerr == nil && p.RetentionTimeInMinutes == want {
			return b.deduplicate(ctx, r)
		}
		return fmt.Errorf("pulsar: set retention of %s to %d min: topic-level policies are disabled on the broker "+
			"and the namespace retention is %d min (enable topicLevelPoliciesEnabled or set the namespace retention): %w",
			r.fullName(), want, p.RetentionTimeInMinutes, err)
	}
	if err != nil {
		return fmt.Errorf("pulsar: set retention of %s: %w", r.fullName(), err)
	}
	return b.deduplicate(ctx, r)
}

// EnsureTopic is CreateTopic: creation is already a no-op for an existing topic.
func (b *Backend) EnsureTopic(ctx context.Context, topic string, opts ...backends.TopicOption) error {
	return b.CreateTopic(ctx, topic, opts...)
}

// DeleteTopic force-deletes the topic with its subscriptions; a missing one is success.
func (b *Backend) DeleteTopic(ctx context.Context, topic string) error {
	if err := b.checkOpen("delete topic"); err != nil {
		return err
	}
	r, err := b.resolve(topic)
	if err != nil {
		return err
	}
	b.setKnown(r, false)
	if err := b.admin.deleteTopic(ctx, r); err != nil {
		return fmt.Errorf("pulsar: delete topic %s: %w", r.fullName(), err)
	}
	b.forgetAcks(r, "")
	return nil
}

// TopicExists asks the admin API. For non-persistent topics "exists" means loaded on the
// broker: created and not deleted, or in use by a producer or consumer (a broker with
// brokerDeleteInactiveTopicsEnabled unloads unused ones after a while).
func (b *Backend) TopicExists(ctx context.Context, topic string) (bool, error) {
	if err := b.checkOpen("topic exists"); err != nil {
		return false, err
	}
	r, err := b.resolve(topic)
	if err != nil {
		return false, err
	}
	ok, err := b.admin.topicExists(ctx, r)
	if err != nil {
		return false, fmt.Errorf("pulsar: topic exists %s: %w", r.fullName(), err)
	}
	return ok, nil
}

// Retention reads the retention in force from the broker (topic policy, else namespace policy,
// else broker default). For a non-persistent topic this is the policy the backend set (the
// class's), which the broker reports but has nothing to apply to: such a topic stores no
// message, which Unsupported declares (CapTransientReplay, CapTransientRedelivery).
func (b *Backend) Retention(ctx context.Context, topic string) (time.Duration, error) {
	if err := b.checkOpen("retention"); err != nil {
		return 0, err
	}
	r, err := b.resolve(topic)
	if err != nil {
		return 0, err
	}
	p, err := b.admin.topicRetention(ctx, r)
	if err != nil {
		return 0, fmt.Errorf("pulsar: retention of %s: %w", r.fullName(), err)
	}
	if p.RetentionTimeInMinutes < 0 {
		return time.Duration(1<<63 - 1), nil // infinite
	}
	return time.Duration(p.RetentionTimeInMinutes) * time.Minute, nil
}

// Close closes every producer and consumer still open, then the client. Idempotent.
func (b *Backend) Close(ctx context.Context) error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	ps := make([]*producer, 0, len(b.producers))
	for p := range b.producers {
		ps = append(ps, p)
	}
	cs := make([]*consumer, 0, len(b.consumers))
	for c := range b.consumers {
		cs = append(cs, c)
	}
	b.mu.Unlock()

	var errs []error
	for _, p := range ps {
		errs = append(errs, p.Close(ctx))
	}
	for _, c := range cs {
		errs = append(errs, c.Close(ctx))
	}
	if _, err := runCtx(ctx, "pulsar: close client", func() (struct{}, error) {
		b.client.Close()
		return struct{}{}, nil
	}, nil); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// logf writes one line to the Config's log, if any.
func (b *Backend) logf(format string, args ...any) {
	if b.cfg.Log != nil {
		fmt.Fprintf(b.cfg.Log, format+"\n", args...)
	}
}

// runCtx is backends.RunCtxStarted: fn starts even when ctx has ended, so a Close given a
// spent ctx still closes the client's producer or consumer in the background.
func runCtx[T any](ctx context.Context, what string, fn func() (T, error), cleanup func(T)) (T, error) {
	return backends.RunCtxStarted(ctx, what, fn, cleanup)
}

// mapClientErr maps the client library's errors to the contract's sentinels. The library
// reports broker refusals as typed *pulsar.Error or as "<ServerError>: message" strings.
func mapClientErr(err error) error {
	if err == nil {
		return nil
	}
	for _, s := range []error{backends.ErrTimeout, backends.ErrAuth, backends.ErrUnavailable, backends.ErrClosed,
		backends.ErrInvalidTopic, context.Canceled} {
		if errors.Is(err, s) {
			return err
		}
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w: %v", backends.ErrTimeout, err)
	}
	var pe *pulsar.Error
	if errors.As(err, &pe) {
		switch pe.Result() {
		case pulsar.AuthenticationError, pulsar.AuthorizationError, pulsar.ErrorGettingAuthenticationData:
			return fmt.Errorf("%w: %v", backends.ErrAuth, err)
		case pulsar.ConnectError, pulsar.NotConnectedError, pulsar.ServiceUnitNotReady:
			return fmt.Errorf("%w: %v", backends.ErrUnavailable, err)
		case pulsar.TimeoutError:
			return fmt.Errorf("%w: %v", backends.ErrTimeout, err)
		case pulsar.ConsumerClosed, pulsar.ProducerClosed, pulsar.AlreadyClosedError:
			return fmt.Errorf("%w: %v", backends.ErrClosed, err)
		case pulsar.InvalidTopicName:
			return fmt.Errorf("%w: %v", backends.ErrInvalidTopic, err)
		}
	}
	msg := err.Error()
	switch {
	case containsAny(msg, "AuthenticationError", "AuthorizationError", "authentication", "Unauthorized", "not authorized"):
		return fmt.Errorf("%w: %v", backends.ErrAuth, err)
	case containsAny(msg, "connection refused", "connect: ", "no route to host", "connection reset", "i/o timeout"):
		return fmt.Errorf("%w: %v", backends.ErrUnavailable, err)
	case containsAny(msg, "TimeoutError", "timeout"):
		return fmt.Errorf("%w: %v", backends.ErrTimeout, err)
	}
	return err
}

func containsAny(s string, subs ...string) bool {
	ls := strings.ToLower(s)
	for _, sub := range subs {
		if strings.Contains(ls, strings.ToLower(sub)) {
			return true
		}
	}
	return false
}

// probeClient makes the client connect now: NewClient connects lazily, and a lookup makes the
// connection (and its auth handshake) happen, so a bad token or a dead broker fails in New,
// not in the first spec step. Errors other than auth, unavailability or ctx's end (say, no
// public/default namespace on this cluster) prove the connection works and are ignored.
// refused receives the broker's reason whenever it refuses the client's handshake.
func probeClient(ctx context.Context, client pulsar.Client, host string, hs *handshakes) error {
	const probe = "non-persistent://public/default/conformance-probe"
	pctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-hs.ch:
			cancel()
		case <-pctx.Done():
		}
	}()
	_, err := runCtx(pctx, "pulsar: probe broker at "+host, func() (struct{}, error) {
		_, err := client.TopicPartitions(probe)
		return struct{}{}, err
	}, nil)
	if err != nil && ctx.Err() == nil && pctx.Err() != nil {
		// Cancelled by a refused handshake: wait no longer for the client's retries.
		msg, _ := hs.recent(time.Minute)
		return fmt.Errorf("pulsar: probe broker at %s: %w", host, handshakeErr(msg))
	}
	if err == nil {
		return nil
	}
	e := mapClientErr(err)
	if errors.Is(e, backends.ErrAuth) || errors.Is(e, backends.ErrUnavailable) ||
		errors.Is(e, backends.ErrTimeout) || errors.Is(e, context.Canceled) {
		return fmt.Errorf("pulsar: probe broker at %s: %w", host, e)
	}
	return nil
}

// handshakes remembers the broker's latest refusal of a client handshake (seen in the client's
// log, see handshakeFailure) and signals it on ch.
type handshakes struct {
	ch   chan string
	mu   sync.Mutex
	last string
	at   time.Time
}

func (h *handshakes) observe(msg string) {
	if !strings.Contains(msg, handshakeFailure) && !certFailure(msg) {
		return
	}
	h.mu.Lock()
	h.last, h.at = msg, time.Now()
	h.mu.Unlock()
	select {
	case h.ch <- msg:
	default:
	}
}

// recent returns the latest refusal if it happened within d.
func (h *handshakes) recent(d time.Duration) (string, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.last == "" || time.Since(h.at) > d {
		return "", false
	}
	return h.last, true
}

// handshakeErr classifies a refused handshake: credentials, or anything else the broker said.
func handshakeErr(msg string) error {
	if msg == "" {
		msg = "the broker refused the connection handshake"
	}
	if containsAny(msg, "authenticat", "authoriz", "token", "unauthorized", "credential", "x509:", "certificate") {
		return fmt.Errorf("%w: %s", backends.ErrAuth, msg)
	}
	return fmt.Errorf("%w: %s", backends.ErrUnavailable, msg)
}

// mapErr is mapClientErr plus the client's swallowed handshake refusals: a timeout while the
// broker was refusing our handshakes is that refusal (a revoked token), not a slow broker.
func (b *Backend) mapErr(err error) error {
	e := mapClientErr(err)
	if errors.Is(e, backends.ErrTimeout) && b.hs != nil {
		if msg, ok := b.hs.recent(2 * operationTimeout); ok {
			return fmt.Errorf("%w (%v)", handshakeErr(msg), err)
		}
	}
	return e
}

// dialProbe opens and closes one TCP connection to the service URL's host.
func dialProbe(ctx context.Context, serviceURL string) error {
	u, err := url.Parse(serviceURL)
	if err != nil {
		return fmt.Errorf("%w: %v", backends.ErrInvalidConfig, err)
	}
	host := u.Host
	if u.Port() == "" {
		port := "6650"
		if u.Scheme == "pulsar+ssl" {
			port = "6651"
		}
		host = net.JoinHostPort(u.Hostname(), port)
	}
	dctx, cancel := context.WithTimeout(ctx, connectionTimeout)
	defer cancel()
	conn, err := (&net.Dialer{}).DialContext(dctx, "tcp", host)
	if err != nil {
		return mapTransportErr(ctx, "dial "+host, err)
	}
	return conn.Close()
}

// uniqueSuffix is a random hex string for unique subscription and consumer names.
func uniqueSuffix() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
