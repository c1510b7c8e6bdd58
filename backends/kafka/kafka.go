// Package kafka is the contract on Apache Kafka through confluent-kafka-go (librdkafka).
//
// Mapping: topic "class:topicspace:topic" -> Kafka topic "topicspace.class.topic" with one
// partition; shared subscriptions are consumer groups named after the subscription, unique ones
// a fresh group per consumer. Offsets are committed only by Ack, and a consumer's start position
// is fixed (and committed) during its first assignment, before Consumer returns - the fix for the
// "joined late with auto.offset.reset=latest" and "unsubscribe drops the position" bugs.
//
// One backend holds one producer handle (shared by all its Producers, librdkafka batches their
// sends) with the admin client riding on it; every Consumer is its own group member, polled by
// its own goroutine so that rebalances are served even while the application is not receiving.
//
// Configuration (backends.Config.Settings under TrustGraph's environment names, parsed by ParseConfig):
//   - KAFKA_BOOTSTRAP_SERVERS, KAFKA_SECURITY_PROTOCOL, KAFKA_SASL_MECHANISM/USERNAME/PASSWORD,
//     KAFKA_SSL_CA/CERT/KEY_LOCATION reach the producer, every consumer and the admin client.
//   - KAFKA_CONFIG_<KEY>=value passes any librdkafka property (KAFKA_CONFIG_FETCH_WAIT_MAX_MS=10
//     is fetch.wait.max.ms=10) to every client; an unknown key fails New with ErrInvalidConfig
//     naming it, and the keys the contract depends on (group.id, enable.auto.commit, ...) are
//     refused.
//   - KAFKA_DEBUG=cgrp,topic,fetch turns on librdkafka debug contexts; its log lines go to
//     Config.Log (stderr when Log is unset); other librdkafka log lines go to Config.Log only.
//   - KAFKA_REPLICATION_FACTOR for created topics (default 1); PUBSUB_RETENTION_<CLASS>
//     overrides a class's retention.
//   - KAFKA_ADMIN_CONFIG_<KEY>=value (Config.AdminExtra) goes to the admin client only, which
//     is then a separate client (e.g. another principal for topic administration).
//   - KAFKA_CONSUMER_NO_WAIT=true lets Consumer return before the group assignment: a faster
//     start that loses what is sent before the assignment (it breaks the contract's D2).
//
// DeleteSubscription (backends.SubscriptionDeleter) deletes a shared subscription's group.
package kafka

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	ck "github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/pubsub-conformance/harness/backends"
)

// defaultWait bounds calls made with a context that has no deadline, so no call can hang on
// librdkafka's endless retries.
const defaultWait = 30 * time.Second

// Backend is the Kafka implementation of backends.Backend.
type Backend struct {
	cfg    backends.Config
	kc     Config // cfg.Settings, parsed
	base   ck.ConfigMap
	prod   *ck.Producer
	admin  *ck.AdminClient
	logs   chan ck.LogEvent
	done   chan struct{} // closed by Close: stops the log and event goroutines
	bgDone sync.WaitGroup

	// lastErr holds the producer handle's latest client-level error (auth, all brokers down) so
	// that a call that would otherwise wait out its context can say why.
	lastErr atomic.Pointer[ck.Error]
	authErr atomic.Pointer[ck.Error] // the first auth error; sticky, bad credentials stay bad
	errSeen chan struct{}            // signalled (non-blocking) when lastErr changes; read by New only
	// authFailed is closed at the first authentication error: every waiter (Send, Consumer)
	// gives up at once instead of waiting out its context.
	authFailed chan struct{}
	authOnce   sync.Once

	// alive keeps prod and admin open for the calls using them: Close destroys them only
	// under the write lock, after those calls returned (see acquire).
	alive sync.RWMutex

	mu        sync.Mutex
	closed    bool
	producers map[*producer]struct{}
	consumers map[*consumer]struct{}
	groups    map[string]map[string]struct{} // Kafka topic -> shared groups used on it
}

var _ backends.Backend = (*Backend)(nil)

// New connects to the brokers in cfg.Settings (see ParseConfig) and returns when a metadata request succeeded. It fails
// fast with ErrAuth when the broker refuses the credentials, ErrUnavailable when no broker answers
// (within ctx, or 30 s without a deadline), and ErrInvalidConfig for settings librdkafka refuses.
func New(ctx context.Context, cfg backends.Config) (backends.Backend, error) {
	kc, err := ParseConfig(cfg.Settings)
	if err != nil {
		return nil, fmt.Errorf("kafka: %w", err)
	}
	b := &Backend{
		cfg:        cfg,
		kc:         kc,
		logs:       make(chan ck.LogEvent, 1024),
		done:       make(chan struct{}),
		errSeen:    make(chan struct{}, 1),
		authFailed: make(chan struct{}),
		producers:  map[*producer]struct{}{},
		consumers:  map[*consumer]struct{}{},
	}
	base, err := commonConfig(kc, b.logs)
	if err != nil {
		return nil, fmt.Errorf("kafka: %w", err)
	}
	b.base = base
	b.bgDone.Add(1)
	go b.drainLogs(b.logWriter())

	m := producerConfig(b.base, kc.Extra)
	b.prod, err = ck.NewProducer(&m)
	if err != nil {
		close(b.done)
		b.bgDone.Wait()
		return nil, configErr(err, kc.Extra)
	}
	b.admin, err = b.newAdmin() // the producer's handle unless AdminExtra is set
	if err != nil {
		b.prod.Close()
		close(b.done)
		b.bgDone.Wait()
		return nil, mapErr(ctx, "kafka: admin client", err)
	}
	b.bgDone.Add(1)
	go b.watchEvents()

	if err := b.probe(ctx); err != nil {
		_ = b.Close(context.Background())
		return nil, err
	}
	return b, nil
}

// configErr names the passthrough key librdkafka refused, when it is one.
func configErr(err error, extra map[string]string) error {
	msg := err.Error()
	for k, v := range extra {
		if strings.Contains(msg, `"`+k+`"`) {
			return fmt.Errorf("%w: kafka config %s=%q: %v", backends.ErrInvalidConfig, k, v, err)
		}
	}
	if codeOf(err) == ck.ErrInvalidArg {
		return fmt.Errorf("%w: kafka client: %v", backends.ErrInvalidConfig, err)
	}
	return fmt.Errorf("kafka client: %w", err)
}

// logWriter is where librdkafka's logs go: Config.Log; without one, stderr when debug contexts
// were asked for (asking for KAFKA_DEBUG and seeing nothing helps nobody), else nowhere.
func (b *Backend) logWriter() io.Writer {
	switch {
	case b.cfg.Log != nil:
		return b.cfg.Log
	case b.kc.Debug != "":
		return os.Stderr
	default:
		return io.Discard
	}
}

// drainLogs writes librdkafka's log lines (debug contexts included) to the configured writer.
func (b *Backend) drainLogs(w io.Writer) {
	defer b.bgDone.Done()
	for {
		select {
		case ev := <-b.logs:
			fmt.Fprintf(w, "librdkafka %s %d %s: %s\n", ev.Timestamp.Format("15:04:05.000"), ev.Level, ev.Tag, ev.Message)
		case <-b.done:
			return
		}
	}
}

// watchEvents drains the producer handle's event channel (delivery reports go to per-message
// channels, so only client-level errors arrive here) and remembers the latest error.
func (b *Backend) watchEvents() {
	defer b.bgDone.Done()
	events := b.prod.Events()
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				return
			}
			if e, isErr := ev.(ck.Error); isErr {
				b.lastErr.Store(&e)
				if sentinelFor(e.Code()) == backends.ErrAuth {
					b.authOnce.Do(func() {
						b.authErr.Store(&e)
						close(b.authFailed)
					})
				}
				select {
				case b.errSeen <- struct{}{}:
				default:
				}
			}
		case <-b.done:
			return
		}
	}
}

// clientErr is the producer handle's latest auth or connectivity error, if any.
func (b *Backend) clientErr() error {
	e := b.authErr.Load()
	if e == nil {
		e = b.lastErr.Load()
	}
	if e == nil {
		return nil
	}
	if s := sentinelFor(e.Code()); s == backends.ErrAuth || s == backends.ErrUnavailable {
		return &kafkaError{what: "kafka", err: *e, sentinel: s}
	}
	return nil
}

// probe waits for a metadata response, failing fast on an auth error or on "all brokers down".
// It returns only after its metadata goroutine has left librdkafka (at most one 500 ms call
// after an early return's cancel): New closes the clients when probe fails, and closing the
// admin client under a running rd_kafka_metadata crashed the process (SIGSEGV/SIGABRT).
func (b *Backend) probe(ctx context.Context) error {
	ctx, cancel := withDefault(ctx)
	defer cancel()
	res := make(chan error, 1)
	go func() {
		for {
			_, err := b.admin.GetMetadata(nil, false, 500)
			if err == nil || ctx.Err() != nil {
				res <- err
				return
			}
		}
	}()
	early := func(err error) error {
		cancel()
		<-res
		return err
	}
	for {
		select {
		case err := <-res:
			if err != nil {
				return unreachable(ctx, b.kc.BootstrapServers, err)
			}
			return nil
		case <-b.errSeen:
			if err := b.clientErr(); err != nil {
				// Auth errors and refused connections are final for New: fail fast rather
				// than wait out librdkafka's retries.
				return early(fmt.Errorf("kafka: connect to %s: %w", b.kc.BootstrapServers, err))
			}
		case <-ctx.Done():
			return early(unreachable(ctx, b.kc.BootstrapServers, ctx.Err()))
		}
	}
}

func unreachable(ctx context.Context, servers string, err error) error {
	return fmt.Errorf("kafka: no broker answered at %s: %w", servers, errors.Join(backends.ErrUnavailable, backends.CtxErr(ctx, "metadata request"), err))
}

// withDefault gives ctx a deadline when it has none.
func withDefault(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, defaultWait)
}

// Name implements backends.Backend.
func (b *Backend) Name() string { return "kafka" }

// Unsupported implements backends.Backend: Kafka keeps every class on disk, so nack/reopen
// redelivery, replay and retention expiry all hold.
// Load sharing (G4) is lacking by the contract's mapping, not by a defect: one partition per
// topic, and a consumer group gives a partition to one member.
func (b *Backend) Unsupported() map[backends.Capability]string {
	return map[backends.Capability]string{backends.CapLoadSharing: LoadSharingReason}
}

// LoadSharingReason says why a Kafka backend with one partition per topic cannot share a
// subscription's load; adapters of TrustGraph's Kafka backends give the same reason.
const LoadSharingReason = "one partition per topic (TrustGraph's mapping, docs/tech-specs/kafka-backend.md: \"Parallelism comes from multiple topics and multiple services, not from partitioning within a topic.\"): " +
	"a consumer group assigns the partition to one member, so the other consumers of the subscription stand by and receive nothing while it lives"

// acquire holds the client handles open for one call; the caller runs release when it no
// longer touches prod or admin. Not re-entrant: never call acquire while holding it.
func (b *Backend) acquire() (release func(), err error) {
	b.alive.RLock()
	if err := b.checkOpen(); err != nil {
		b.alive.RUnlock()
		return nil, err
	}
	return b.alive.RUnlock, nil
}

func (b *Backend) checkOpen() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return fmt.Errorf("kafka backend: %w", backends.ErrClosed)
	}
	return nil
}

// CreateTopic implements backends.Backend. It returns once the topic is visible in metadata.
func (b *Backend) CreateTopic(ctx context.Context, topic string, opts ...backends.TopicOption) error {
	release, err := b.acquire()
	if err != nil {
		return err
	}
	defer release()
	t, err := backends.ParseTopic(topic)
	if err != nil {
		return err
	}
	ctx, cancel := withDefault(ctx)
	defer cancel()
	s := backends.ApplyTopicOptions(t, b.cfg, opts...)
	rf := b.kc.ReplicationFactor
	if rf <= 0 {
		rf = 1
	}
	name := TopicName(t)
	res, err := b.admin.CreateTopics(ctx, []ck.TopicSpecification{{
		Topic: name, NumPartitions: 1, ReplicationFactor: rf, Config: topicConfig(s.Retention),
	}})
	if err == nil && len(res) == 1 && res[0].Error.Code() != ck.ErrNoError && res[0].Error.Code() != ck.ErrTopicAlreadyExists {
		err = res[0].Error
	}
	if err != nil {
		return b.withClientErr(mapErr(ctx, "create topic "+name, err))
	}
	return b.waitVisible(ctx, name, true)
}

// withClientErr adds the handle's auth error to err when err is a timeout, so a bad password
// reads as "authentication failed", not as a slow broker.
func (b *Backend) withClientErr(err error) error {
	if err == nil {
		return nil
	}
	if ce := b.clientErr(); ce != nil && !errors.Is(err, backends.ErrAuth) {
		return errors.Join(err, ce)
	}
	return err
}

// waitVisible polls metadata until name exists with a leader (want) or is gone (!want): the
// controller acknowledges before every broker's metadata image has caught up.
func (b *Backend) waitVisible(ctx context.Context, name string, want bool) error {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		ok, err := b.exists(ctx, name)
		if err == nil && ok == want {
			return nil
		}
		select {
		case <-ctx.Done():
			what := "topic " + name + " to appear"
			if !want {
				what = "topic " + name + " to disappear"
			}
			return b.withClientErr(errors.Join(backends.CtxErr(ctx, "wait for "+what), err))
		case <-tick.C:
		}
	}
}

// exists asks the broker (not the client's cache) whether name exists with a leader.
func (b *Backend) exists(ctx context.Context, name string) (bool, error) {
	res, err := b.admin.DescribeTopics(ctx, ck.NewTopicCollectionOfTopicNames([]string{name}))
	if err != nil {
		return false, mapErr(ctx, "describe topic "+name, err)
	}
	if len(res.TopicDescriptions) != 1 {
		return false, fmt.Errorf("describe topic %s: %d results", name, len(res.TopicDescriptions))
	}
	d := res.TopicDescriptions[0]
	switch d.Error.Code() {
	case ck.ErrNoError:
	case ck.ErrUnknownTopicOrPart, ck.ErrUnknownTopic:
		return false, nil
	default:
		return false, mapErr(ctx, "describe topic "+name, d.Error)
	}
	if len(d.Partitions) == 0 || d.Partitions[0].Leader == nil {
		return false, nil
	}
	return true, nil
}

// DeleteTopic implements backends.Backend. It returns once the topic is gone from metadata and
// no consumer group keeps a committed offset for it, so a later topic of the same name starts
// every subscription fresh (L3).
func (b *Backend) DeleteTopic(ctx context.Context, topic string) error {
	release, err := b.acquire()
	if err != nil {
		return err
	}
	defer release()
	t, err := backends.ParseTopic(topic)
	if err != nil {
		return err
	}
	ctx, cancel := withDefault(ctx)
	defer cancel()
	name := TopicName(t)
	res, err := b.admin.DeleteTopics(ctx, []string{name})
	if err == nil && len(res) == 1 {
		switch res[0].Error.Code() {
		case ck.ErrNoError, ck.ErrUnknownTopicOrPart, ck.ErrUnknownTopic:
		default:
			err = res[0].Error
		}
	}
	if err != nil {
		return b.withClientErr(mapErr(ctx, "delete topic "+name, err))
	}
	if err := b.waitVisible(ctx, name, false); err != nil {
		return err
	}
	return b.dropOffsets(ctx, name)
}

// TopicExists implements backends.Backend.
func (b *Backend) TopicExists(ctx context.Context, topic string) (bool, error) {
	release, err := b.acquire()
	if err != nil {
		return false, err
	}
	defer release()
	t, err := backends.ParseTopic(topic)
	if err != nil {
		return false, err
	}
	ctx, cancel := withDefault(ctx)
	defer cancel()
	ok, err := b.exists(ctx, TopicName(t))
	return ok, b.withClientErr(err)
}

// EnsureTopic implements backends.Backend: CreateTopic is already idempotent.
func (b *Backend) EnsureTopic(ctx context.Context, topic string, opts ...backends.TopicOption) error {
	return b.CreateTopic(ctx, topic, opts...)
}

// Retention implements backends.Backend: retention.ms read back with DescribeConfigs.
func (b *Backend) Retention(ctx context.Context, topic string) (time.Duration, error) {
	release, err := b.acquire()
	if err != nil {
		return 0, err
	}
	defer release()
	t, err := backends.ParseTopic(topic)
	if err != nil {
		return 0, err
	}
	ctx, cancel := withDefault(ctx)
	defer cancel()
	name := TopicName(t)
	res, err := b.admin.DescribeConfigs(ctx, []ck.ConfigResource{{Type: ck.ResourceTopic, Name: name}})
	if err == nil && len(res) == 1 && res[0].Error.Code() != ck.ErrNoError {
		err = res[0].Error
	}
	if err != nil {
		return 0, b.withClientErr(mapErr(ctx, "describe configs of "+name, err))
	}
	if len(res) != 1 {
		return 0, fmt.Errorf("describe configs of %s: %d results", name, len(res))
	}
	e, ok := res[0].Config["retention.ms"]
	if !ok {
		return 0, fmt.Errorf("describe configs of %s: no retention.ms", name)
	}
	ms, err := strconv.ParseInt(e.Value, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("describe configs of %s: retention.ms=%q: %w", name, e.Value, err)
	}
	if ms < 0 {
		return -1, nil // unlimited
	}
	return time.Duration(ms) * time.Millisecond, nil
}

// Close implements backends.Backend: closes every open consumer and producer, then the shared
// producer (flushing within ctx) and the admin client. Idempotent.
func (b *Backend) Close(ctx context.Context) error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	cons := make([]*consumer, 0, len(b.consumers))
	for c := range b.consumers {
		cons = append(cons, c)
	}
	prods := make([]*producer, 0, len(b.producers))
	for p := range b.producers {
		prods = append(prods, p)
	}
	b.mu.Unlock()

	var errs []error
	for _, c := range cons {
		errs = append(errs, c.Close(ctx))
	}
	for _, p := range prods {
		errs = append(errs, p.Close(ctx))
	}
	b.alive.Lock()
	if b.admin != nil {
		b.admin.Close()
	}
	if b.prod != nil {
		errs = append(errs, flush(ctx, b.prod))
		b.prod.Close()
	}
	b.alive.Unlock()
	close(b.done)
	b.bgDone.Wait()
	return errors.Join(errs...)
}

// flush waits for the shared producer's queue to drain, in short slices so ctx is honoured.
func flush(ctx context.Context, p *ck.Producer) error {
	for p.Len() > 0 {
		if ctx.Err() != nil {
			return backends.CtxErr(ctx, fmt.Sprintf("kafka: flush (%d messages pending)", p.Len()))
		}
		p.Flush(50)
	}
	return nil
}

func (b *Backend) forget(p *producer, c *consumer) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if p != nil {
		delete(b.producers, p)
	}
	if c != nil {
		delete(b.consumers, c)
	}
}
