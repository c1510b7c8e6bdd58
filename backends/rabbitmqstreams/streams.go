// Package rabbitmqstreams implements the conformance contract on RabbitMQ streams
// (x-queue-type=stream, RabbitMQ 3.9+) with RabbitMQ's stream protocol client,
// github.com/rabbitmq/rabbitmq-stream-go-client, plus one AMQP 0-9-1 classic queue per shared
// subscription (github.com/rabbitmq/amqp091-go) as the lock that makes one member active, and
// the management plugin's HTTP API to read a stream's retention back. It sits beside
// backends/rabbitmq (a fanout exchange and classic queues, TrustGraph's topology), which cannot
// replay a topic's past to a new subscription; this design can, and keeps the rest of the
// contract. docs/rabbitmq.md compares the two spec by spec.
//
// Topology and the contract's sentences:
//
//   - A topic "class:topicspace:topic" is a stream "topicspace.class.topic" (StreamName) with
//     the class's retention as x-max-age (flow 7 days, others 5 minutes, or the override)
//     [C-TOP-1]. CreateTopic and EnsureTopic declare it when StreamExists says it is missing
//     (an existing stream is left as it is) [C-TOP-2, C-TOP-6]; DeleteTopic deletes it, which
//     deletes its messages and every offset stored on it, so an old subscription name starts
//     fresh [C-TOP-3, C-TOP-4]; TopicExists is StreamExists [C-TOP-5]; Retention reads x-max-age
//     back through the management API [C-TOP-7]. Producer and Consumer create a missing topic
//     [C-PROD-1, C-SUB-1].
//   - Send publishes through a stream producer and returns when the broker's publish-confirm
//     for that message arrived (an error or a confirmation timeout is returned) [C-SEND-1,
//     C-SEND-2]. Properties are the message's AMQP 1.0 application-properties (string keys
//     of any length) [C-MSG-1].
//   - A subscription's position is stored on the broker with the stream protocol's offset
//     tracking, under the subscription's name as the reference: the floor (the lowest offset not
//     acknowledged; every offset below it is) and, under references of their own, bitmaps of the
//     offsets acknowledged above it (books.go). An ack changes the books in memory [C-ACK-3];
//     the position is stored every CommitIntervalMS (200 ms, below AckCrashBound [C-ACK-6]) and
//     on Close, which waits until QueryOffset reads it back [C-ACK-5]. The floor never passes
//     an unacknowledged offset, so a crash costs none [C-ACK-1, C-ACK-7], and acked offsets
//     above it are skipped by the next reader [C-ACK-2]. Stored offsets survive a broker restart
//     (they are written to the stream itself).
//   - A shared subscription (flow and request by default [C-MODE-1, C-MODE-2]) has one active
//     member at a time: RabbitMQ 3.10 has single active consumer for classic and quorum
//     queues but not for streams (3.11+). Every member consumes a classic queue
//     "<stream>.<subscription>.active-member" (LockQueueName: x-single-active-consumer,
//     durable, auto-delete, x-expires 10 min, x-max-length 1 with drop-head, prefetch 1) and
//     publishes one (transient) token message to it; the broker delivers tokens to the single active consumer only, which holds one
//     unacknowledged, so the member holding a token is active. When its channel closes (Close,
//     a crash, a lost connection) the broker requeues the token and hands it to the next
//     member [C-SUB-3]. The active member queries the stored position and reads the stream from
//     the floor, skipping acked offsets; the others wait. So each message goes to one member,
//     but members do not share load: load-sharing is Unsupported [C-SUB-6, C-CAP-7].
//     The lock queue cannot be exclusive (members on other connections, in other processes,
//     consume it), and RabbitMQ 4.3.0 refuses by default one that is neither durable nor
//     exclusive (release notes 4.3.0; deprecated feature transient_nonexcl_queues, whose entry
//     in the list of deprecated features says to use durable queues, with queue TTL for
//     cleanup), so it is durable. Nothing in it needs to survive a restart: the token is
//     transient, so a broker restart leaves the queue empty and every member, having lost its
//     channel, joins again and publishes a token (x-max-length 1 keeps one). Auto-delete
//     removes it when its last member leaves; x-expires removes one that no member consumes
//     again (all gone while the broker restarted). A lock queue a member of an earlier version
//     declared transient is joined as it is.
//   - A new subscription's position is stored before Consumer returns, so a subscription that
//     is closed before anything arrived keeps its place [C-SUB-5, C-CLOSE-1]: Earliest stores
//     offset 0 (the stream's first retained message: the broker starts an offset below the
//     first at the first) [C-POS-3]; Latest subscribes with "next", publishes a marker message
//     (application property x-pubsub-position-marker, skipped by every consumer of this
//     backend) and stores the offset after the marker once it arrives: whatever is sent after
//     Consumer returned is after the marker [C-SUB-2, C-POS-2]. An existing subscription
//     resumes from its stored position whatever is asked [C-POS-1].
//   - A unique subscription (response and notify by default [C-SUB-4, C-MODE-3]) is a stream
//     consumer of its own, with no stored position: "first" or "next", live when Consumer
//     returns.
//   - Nack [C-NACK-1] hands the message out again from memory at once (the consumer keeps
//     what it handed out until it is settled); it stays unacknowledged in the books, so a close
//     or a crash before its ack leaves it below or at the floor and the next reader gets it from
//     the stream.
//   - Delivery IDs are "<consumer tag>.<term>.<offset>" [C-DLV-1]; a term is one activation of
//     the member. After the member lost the lock (its channel or connection closed) its
//     deliveries of that term are refused with ErrUnknownDelivery and come again to the
//     subscription [C-ACK-8], unless the member takes the lock back with the stored position
//     unchanged, when the term goes on. An ID this consumer did not hand out is
//     ErrUnknownDelivery [C-ACK-4]; an offset handed out twice is settled by its first Ack
//     [C-ACK-9].
//   - Reconnection [C-LIFE-7]: the stream client's producer and consumer end with their
//     connection; a producer opens a new one on the next Send, a consumer subscribes again from
//     its books' floor, and a member whose lock channel closed joins the lock queue again.
//     Every call is bounded by its ctx (the client's calls, which take none, run under runCtx)
//     [C-LIFE-5].
//
// Not supported, with the reason the reports show: load-sharing (above), retention-expiry
// (stream retention removes whole segment files, and only when a segment is full, so a
// message older than a short retention stays readable until enough is written after it),
// TLS (the stream TLS listener is not configured here).
//
// Settings are TrustGraph's RABBITMQ_* names plus RABBITMQ_STREAM_PORT and the ones in
// Config. The variants (variants.go) switch off the stored position, the first-offset replay
// and the single active member.
package rabbitmqstreams

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/rabbitmq/rabbitmq-stream-go-client/pkg/logs"
	"github.com/rabbitmq/rabbitmq-stream-go-client/pkg/stream"

	"github.com/pubsub-conformance/harness/backends"
)

const (
	dialTimeout = 10 * time.Second
	heartbeat   = 10 * time.Second
	// maxFrame is the stream protocol frame the client asks for: D5 sends 5 MiB (the
	// fixture's broker allows 16 MiB, stream.frame_max).
	maxFrame = 16 << 20
	// reconnectEvery spaces a consumer's or member's attempts to reconnect.
	reconnectEvery = 250 * time.Millisecond
	// markerProp marks the position markers of new latest subscriptions.
	markerProp = "x-pubsub-position-marker"
)

// Backend is the RabbitMQ streams backend.
type Backend struct {
	cfg  backends.Config
	rc   Config
	mgmt *management

	env  *stream.Environment // admin calls (its locator connection)
	opts *stream.EnvironmentOptions
	pool envPool // producers and consumers

	dial chan struct{} // cap 1: held while dialing AMQP
	cmu  sync.Mutex
	conn *amqp.Connection

	mu        sync.Mutex
	closed    bool
	done      chan struct{}
	producers map[*producer]struct{}
	consumers map[*consumer]struct{}
}

var _ backends.Backend = (*Backend)(nil)

// clientLog receives the stream client's warnings and errors (its logger is global).
var clientLog atomic.Pointer[io.Writer]

type logger struct{}

func (logger) write(level, m string, v ...any) {
	if w := clientLog.Load(); w != nil && *w != nil {
		fmt.Fprintf(*w, "rabbitmq-stream-go-client: "+level+": "+m+"\n", v...)
	}
}
func (l logger) Info(m string, v ...any)  {}
func (l logger) Debug(m string, v ...any) {}
func (l logger) Error(m string, v ...any) { l.write("error", m, v...) }
func (l logger) Warn(m string, v ...any)  { l.write("warn", m, v...) }

func init() { logs.SetLogger(logger{}) }

// New connects the stream environment and the AMQP connection; it fails fast with
// ErrInvalidConfig, ErrAuth or ErrUnavailable.
func New(ctx context.Context, cfg backends.Config) (backends.Backend, error) {
	rc, err := ParseConfig(cfg.Settings)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", Name, err)
	}
	if cfg.Log != nil {
		w := cfg.Log
		clientLog.Store(&w)
	}
	b := &Backend{cfg: cfg, rc: rc, dial: make(chan struct{}, 1), done: make(chan struct{}),
		producers: map[*producer]struct{}{}, consumers: map[*consumer]struct{}{}}
	if rc.ManagementURL != "" {
		b.mgmt = &management{base: rc.ManagementURL, vhost: rc.Vhost, user: rc.ManagementUsername, pass: rc.ManagementPassword}
	}
	opts := stream.NewEnvironmentOptions().
		SetHost(rc.Host).SetPort(rc.StreamPort).SetUser(rc.Username).SetPassword(rc.Password).SetVHost(rc.Vhost).
		// One node: every connection goes where the settings say (the fault proxy's port under
		// a fault spec), whatever the broker advertises.
		SetAddressResolver(stream.AddressResolver{Host: rc.Host, Port: rc.StreamPort}).
		// Many producers and consumers per connection: a consumer's messages are dispatched by a
		// goroutine of its own and flow is by credit, so one slow consumer holds up no other.
		SetMaxConsumersPerClient(maxPerClient).SetMaxProducersPerClient(maxPerClient).
		SetRequestedMaxFrameSize(maxFrame).SetRequestedHeartbeat(heartbeat).SetRPCTimeout(dialTimeout).
		// The client's default socket buffers are 8 KiB (SO_RCVBUF/SO_SNDBUF), a TCP window so small
		// that a 5 MiB chunk took over a minute on loopback (measured, and the connection was closed
		// for missed heartbeats meanwhile); 0 leaves them to the kernel's autotuning.
		SetReadBuffer(0).SetWriteBuffer(0)
	what := Name + ": connect to stream port " + b.streamAddr()
	env, err := backends.RunCtx(ctx, what, func() (*stream.Environment, error) { return stream.NewEnvironment(opts) },
		func(e *stream.Environment) { _ = e.Close() })
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%s: %w", what, mapErr(err))
	}
	b.env, b.opts = env, opts
	b.pool.envs = []*pooledEnv{{env: env}}
	if _, err := b.connection(ctx); err != nil {
		_ = env.Close()
		return nil, err
	}
	if b.mgmt != nil {
		if err := b.mgmt.probe(ctx); err != nil {
			b.closeClients()
			return nil, fmt.Errorf("%s: probe management API at %s: %w", Name, rc.ManagementURL, err)
		}
	}
	return b, nil
}

// Name is "rabbitmq-streams".
func (b *Backend) Name() string { return Name }

// LoadSharingReason says why a shared subscription's members do not share its load.
const LoadSharingReason = "one active member per shared subscription: RabbitMQ 3.10 has no single active consumer for " +
	"streams (3.11+), so a classic queue's single active consumer picks the member that reads the stream; the others wait " +
	"and take over from the stored offset"

// RetentionExpiryReason says why a short retention does not drop messages in seconds.
const RetentionExpiryReason = "stream retention (x-max-age) removes whole segment files, and only when a segment is full and " +
	"a new one starts, so a message older than a short retention stays readable until enough is written after it"

// Unsupported declares what this design cannot give.
func (b *Backend) Unsupported() map[backends.Capability]string {
	out := map[backends.Capability]string{
		backends.CapRetentionExpiry: RetentionExpiryReason,
		backends.CapTLS:             "the backend does not speak the stream protocol over TLS yet (no stream TLS listener in the harness's broker)",
	}
	if b.rc.SingleActive {
		out[backends.CapLoadSharing] = LoadSharingReason
	}
	if b.mgmt == nil {
		out[backends.CapRetentionReadBack] = "the stream protocol cannot read a stream's arguments back, and RABBITMQ_MANAGEMENT_URL is not set"
	}
	return out
}

func (b *Backend) checkOpen(what string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return fmt.Errorf("%s: %s: %w", Name, what, backends.ErrClosed)
	}
	return nil
}

func (b *Backend) streamAddr() string {
	return net.JoinHostPort(b.rc.Host, strconv.Itoa(b.rc.StreamPort))
}
func (b *Backend) amqpAddr() string { return net.JoinHostPort(b.rc.Host, strconv.Itoa(b.rc.Port)) }

// connection returns the open AMQP connection (the locks), dialing one when it is gone.
func (b *Backend) connection(ctx context.Context) (*amqp.Connection, error) {
	b.cmu.Lock()
	c := b.conn
	b.cmu.Unlock()
	if c != nil && !c.IsClosed() {
		return c, nil
	}
	select {
	case b.dial <- struct{}{}:
	case <-ctx.Done():
		return nil, backends.CtxErr(ctx, Name+": connect to "+b.amqpAddr())
	}
	defer func() { <-b.dial }()
	b.cmu.Lock()
	c = b.conn
	b.cmu.Unlock()
	if c != nil && !c.IsClosed() {
		return c, nil
	}
	if err := b.checkOpen("connect"); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(dialTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	u := amqp.URI{Scheme: "amqp", Host: b.rc.Host, Port: b.rc.Port, Username: b.rc.Username, Password: b.rc.Password, Vhost: b.rc.Vhost}
	conf := amqp.Config{
		Vhost: b.rc.Vhost, Heartbeat: heartbeat, Locale: "en_US",
		SASL:       []amqp.Authentication{&amqp.PlainAuth{Username: b.rc.Username, Password: b.rc.Password}},
		Properties: amqp.Table{"connection_name": "pubsub-conformance-streams-locks"},
		Dial: func(network, addr string) (net.Conn, error) {
			conn, err := (&net.Dialer{Deadline: deadline}).DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return conn, conn.SetDeadline(deadline)
		},
	}
	what := Name + ": connect to " + b.amqpAddr()
	c, err := backends.RunCtx(ctx, what, func() (*amqp.Connection, error) { return amqp.DialConfig(u.String(), conf) },
		func(c *amqp.Connection) { _ = c.Close() })
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%s: %w", what, mapErr(err))
	}
	b.cmu.Lock()
	b.conn = c
	b.cmu.Unlock()
	if b.checkOpen("connect") != nil {
		_ = c.Close()
		return nil, fmt.Errorf("%s: connect: %w", Name, backends.ErrClosed)
	}
	return c, nil
}

// channel opens a channel on the (re)connected AMQP connection.
func (b *Backend) channel(ctx context.Context) (*amqp.Channel, error) {
	c, err := b.connection(ctx)
	if err != nil {
		return nil, err
	}
	ch, err := backends.RunCtx(ctx, Name+": open channel", c.Channel, func(ch *amqp.Channel) { _ = ch.Close() })
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%s: open channel: %w", Name, mapErr(err))
	}
	return ch, nil
}

type resolved struct {
	topic  backends.Topic
	orig   string
	stream string
}

func resolve(topic string) (resolved, error) {
	t, err := backends.ParseTopic(topic)
	if err != nil {
		return resolved{}, fmt.Errorf("%s: %w", Name, err)
	}
	r := resolved{topic: t, orig: topic, stream: StreamName(t)}
	if len(r.stream) > 255 {
		return resolved{}, fmt.Errorf("%w: %s: stream name %q is %d bytes long, RabbitMQ allows 255", backends.ErrInvalidConfig, Name, r.stream, len(r.stream))
	}
	return r, nil
}

// call runs one of the stream client's blocking calls under ctx and maps its error.
// A stream that is not available yet (its leader starting after a broker restart) is asked
// again every retryEvery within ctx.
func (b *Backend) call(ctx context.Context, what string, fn func() error) error {
	for {
		_, err := backends.RunCtx(ctx, what, func() (struct{}, error) { return struct{}{}, guard(what, fn) }, nil)
		if transient(err) && ctx.Err() == nil {
			select {
			case <-time.After(retryEvery):
				continue
			case <-ctx.Done():
			}
		}
		if err != nil && ctx.Err() == nil {
			return fmt.Errorf("%s: %w", what, mapErr(err))
		}
		return err
	}
}

const retryEvery = 200 * time.Millisecond

// guard runs fn, one of the stream client's calls, and returns a panic of the client as an
// error wrapping backends.ErrUnavailable instead of ending the process. rabbitmq-stream-go-client
// v1.8.3 dereferences nil stream metadata in Client.BrokerForConsumer (client.go:779) when a
// metadata answer lacks the stream: seen on 6 Dec under W2's broker restarts, where the panic,
// on a goroutine of ours, ended a whole Ginkgo process and with it every backend's report. On
// that path the client releases its locks by defer, so the environment stays usable.
func guard(what string, fn func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: rabbitmq-stream-go-client panicked in %s (a client defect): %v", backends.ErrUnavailable, what, r)
		}
	}()
	return fn()
}

// transient: the broker's answers while a stream's leader is (re)starting.
func transient(err error) bool {
	return errors.Is(err, stream.StreamNotAvailable) || errors.Is(err, stream.LeaderNotReady) ||
		errors.Is(err, stream.InternalError) || errors.Is(err, stream.StreamMetadataFailure)
}

func (b *Backend) exists(ctx context.Context, r resolved) (bool, error) {
	var ok bool
	err := b.call(ctx, Name+": stream exists "+r.stream, func() (err error) {
		ok, err = b.env.StreamExists(r.stream)
		return err
	})
	return ok, err
}

func (b *Backend) ensure(ctx context.Context, r resolved, opts ...backends.TopicOption) error {
	ok, err := b.exists(ctx, r)
	if err != nil || ok {
		return err
	}
	s := backends.ApplyTopicOptions(r.topic, b.cfg, opts...)
	err = b.call(ctx, Name+": declare stream "+r.stream, func() error {
		err := b.env.DeclareStream(r.stream, stream.NewStreamOptions().SetMaxAge(s.Retention))
		if errors.Is(err, stream.StreamAlreadyExists) {
			return nil // created meanwhile, or exists with other arguments: it exists
		}
		return err
	})
	return err
}

// CreateTopic declares the topic's stream with its class's retention; idempotent.
func (b *Backend) CreateTopic(ctx context.Context, topic string, opts ...backends.TopicOption) error {
	if err := b.checkOpen("create topic"); err != nil {
		return err
	}
	r, err := resolve(topic)
	if err != nil {
		return err
	}
	return b.ensure(ctx, r, opts...)
}

// EnsureTopic is CreateTopic: creating is already a no-op for an existing stream.
func (b *Backend) EnsureTopic(ctx context.Context, topic string, opts ...backends.TopicOption) error {
	return b.CreateTopic(ctx, topic, opts...)
}

// TopicExists asks the broker whether the stream exists.
func (b *Backend) TopicExists(ctx context.Context, topic string) (bool, error) {
	if err := b.checkOpen("topic exists"); err != nil {
		return false, err
	}
	r, err := resolve(topic)
	if err != nil {
		return false, err
	}
	return b.exists(ctx, r)
}

// DeleteTopic deletes the stream with its messages and stored offsets; missing is success.
func (b *Backend) DeleteTopic(ctx context.Context, topic string) error {
	if err := b.checkOpen("delete topic"); err != nil {
		return err
	}
	r, err := resolve(topic)
	if err != nil {
		return err
	}
	return b.call(ctx, Name+": delete stream "+r.stream, func() error {
		err := b.env.DeleteStream(r.stream)
		if errors.Is(err, stream.StreamDoesNotExist) {
			return nil
		}
		return err
	})
}

// Retention reads x-max-age back through the management API.
func (b *Backend) Retention(ctx context.Context, topic string) (time.Duration, error) {
	if err := b.checkOpen("retention"); err != nil {
		return 0, err
	}
	r, err := resolve(topic)
	if err != nil {
		return 0, err
	}
	if b.mgmt == nil {
		return 0, fmt.Errorf("%w: %s: retention of %s: %s", backends.ErrInvalidConfig, Name, r.stream, b.Unsupported()[backends.CapRetentionReadBack])
	}
	d, err := b.mgmt.maxAge(ctx, r.stream)
	if err != nil {
		return 0, fmt.Errorf("%s: retention of %s: %w", Name, r.stream, err)
	}
	return d, nil
}

// Close closes what is open, then the clients. Idempotent.
func (b *Backend) Close(ctx context.Context) error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	close(b.done)
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
	_, err := backends.RunCtx(ctx, Name+": close connections", func() (struct{}, error) {
		b.closeClients()
		return struct{}{}, nil
	}, nil)
	errs = append(errs, err)
	return errors.Join(errs...)
}

func (b *Backend) closeClients() {
	b.cmu.Lock()
	c := b.conn
	b.conn = nil
	b.cmu.Unlock()
	if c != nil {
		_ = c.Close()
	}
	for _, e := range b.pool.all() {
		_ = e.Close()
	}
}

// maxPerClient is how many producers (consumers) share one stream connection.
const maxPerClient = 64

// maxEnvs bounds the stream environments of a Backend. The client serialises everything an
// environment does to open a producer or consumer (leader lookup, connect, subscribe) under
// one mutex, so concurrent Consumer calls - D2 opens 12 at a time - and a slow broker (F2's
// 200 ms each way) would queue; a call that finds every environment busy opens another.
const maxEnvs = 8

type envPool struct {
	mu   sync.Mutex
	envs []*pooledEnv
}

type pooledEnv struct {
	env  *stream.Environment
	busy int
}

func (p *envPool) all() []*stream.Environment {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]*stream.Environment, 0, len(p.envs))
	for _, e := range p.envs {
		out = append(out, e.env)
	}
	return out
}

// withEnv runs fn with an environment no other open call is using, opening one when every
// environment is busy and there are fewer than maxEnvs (else the least busy).
func (b *Backend) withEnv(ctx context.Context, fn func(*stream.Environment) error) error {
	b.pool.mu.Lock()
	var pick *pooledEnv
	for _, e := range b.pool.envs {
		if pick == nil || e.busy < pick.busy {
			pick = e
		}
	}
	grow := pick.busy > 0 && len(b.pool.envs) < maxEnvs
	pick.busy++
	b.pool.mu.Unlock()
	release := func(e *pooledEnv) {
		b.pool.mu.Lock()
		e.busy--
		b.pool.mu.Unlock()
	}
	if grow {
		env, err := backends.RunCtx(ctx, Name+": connect another stream environment", func() (*stream.Environment, error) {
			return stream.NewEnvironment(b.opts)
		}, func(e *stream.Environment) { _ = e.Close() })
		if err == nil {
			ne := &pooledEnv{env: env, busy: 1}
			b.pool.mu.Lock()
			closed := b.checkOpen("connect") != nil
			if !closed {
				b.pool.envs = append(b.pool.envs, ne)
			}
			b.pool.mu.Unlock()
			if closed {
				_ = env.Close()
			} else {
				release(pick)
				pick = ne
			}
		}
	}
	defer release(pick)
	return fn(pick.env)
}

func (b *Backend) logf(format string, args ...any) {
	if b.cfg.Log != nil {
		fmt.Fprintf(b.cfg.Log, format+"\n", args...)
	}
}

func isCode(err error, code int) bool {
	var ae *amqp.Error
	return errors.As(err, &ae) && ae.Code == code
}

// mapErr maps the clients' errors to the contract's sentinels.
func mapErr(err error) error {
	if err == nil {
		return nil
	}
	for _, s := range []error{backends.ErrTimeout, backends.ErrAuth, backends.ErrUnavailable, backends.ErrClosed,
		backends.ErrInvalidTopic, backends.ErrInvalidConfig, backends.ErrUnknownDelivery, context.Canceled} {
		if errors.Is(err, s) {
			return err
		}
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, stream.ConfirmationTimoutError):
		return fmt.Errorf("%w: %v", backends.ErrTimeout, err)
	case errors.Is(err, stream.AuthenticationFailure), errors.Is(err, stream.AuthenticationFailureLoopbackError),
		errors.Is(err, stream.VirtualHostAccessFailure), errors.Is(err, stream.CodeAccessRefused),
		errors.Is(err, amqp.ErrCredentials), errors.Is(err, amqp.ErrVhost), errors.Is(err, amqp.ErrSASL):
		return fmt.Errorf("%w: %v", backends.ErrAuth, err)
	case errors.Is(err, stream.ConnectionClosed), errors.Is(err, stream.StreamNotAvailable), errors.Is(err, stream.LeaderNotReady),
		errors.Is(err, stream.AlreadyClosed), errors.Is(err, amqp.ErrClosed):
		return fmt.Errorf("%w: %v", backends.ErrUnavailable, err)
	case errors.Is(err, stream.FrameTooLarge):
		return fmt.Errorf("%w: %v", backends.ErrInvalidConfig, err)
	}
	var ae *amqp.Error
	if errors.As(err, &ae) {
		switch ae.Code {
		case amqp.AccessRefused, amqp.NotAllowed:
			return fmt.Errorf("%w: %v", backends.ErrAuth, err)
		default:
			return fmt.Errorf("%w: %v", backends.ErrUnavailable, err)
		}
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return fmt.Errorf("%w: %v", backends.ErrUnavailable, err)
	}
	msg := strings.ToLower(err.Error())
	for _, s := range []string{"connection refused", "connection reset", "broken pipe", "no route to host", "i/o timeout", "eof",
		"use of closed network connection", "timeout", "closed"} {
		if strings.Contains(msg, s) {
			return fmt.Errorf("%w: %v", backends.ErrUnavailable, err)
		}
	}
	if strings.Contains(msg, "authentication") || strings.Contains(msg, "access_refused") || strings.Contains(msg, "login was refused") {
		return fmt.Errorf("%w: %v", backends.ErrAuth, err)
	}
	return err
}

func uniqueSuffix() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
