// Package rabbitmq implements the conformance contract on RabbitMQ with RabbitMQ's own AMQP 0-9-1
// client, github.com/rabbitmq/amqp091-go, and (for what AMQP cannot ask) the management
// plugin's HTTP API.
//
// Topology, chosen from RabbitMQ's documentation (tutorials 3 "Publish/Subscribe" and 2 "Work
// queues", "Consumer Acknowledgements and Publisher Confirms", "Queues", "TTL") and kept
// compatible with TrustGraph's own RabbitMQ backend (trustgraph-base async_rabbitmq_backend.py):
//
//   - A topic "class:topicspace:topic" is a durable fanout exchange "topicspace.class.topic"
//     (ExchangeName). CreateTopic declares it, TopicExists is a passive declare, DeleteTopic
//     deletes the queues bound to it (listed through the management API) and then the exchange.
//     The topic's retention is recorded as the exchange argument x-pubsub-retention-ms.
//   - A subscription is a classic queue bound to the exchange, so it receives every message
//     published after the binding: "<exchange>.<subscription>" (QueueName) for shared
//     subscriptions (flow and request by default; every consumer of the name competes on the
//     one queue: work-queue semantics, prefetch DefaultPrefetch), and
//     "<exchange>.<subscription>.<random>" for unique ones (response and notify by default; a
//     queue per consumer, deleted by its Close, x-expires for the crashed ones).
//   - Retention per class is message TTL: every queue of a topic is declared with
//     x-message-ttl = the topic's retention (7 days for flow, 5 minutes for the others, or the
//     WithRetention override), so the broker drops expired messages.
//   - Durability: every queue is durable and none is exclusive. RabbitMQ 4.3.0 refuses by
//     default a queue that is neither (release notes 4.3.0, "Deprecated Features are Now
//     Disabled by Default": deprecated feature transient_nonexcl_queues, 541 INTERNAL_ERROR,
//     which closes the connection); its entry in RabbitMQ's list of deprecated features says to
//     use durable queues or non-durable exclusive queues, and queue TTL (x-expires) to clean up
//     unused durable ones. The durable class (flow) sends persistent messages (delivery mode 2):
//     its subscriptions and their messages survive a broker restart. The other classes send
//     transient messages, which a restart drops (RabbitMQ does not recover a transient message,
//     even from a durable queue); their subscriptions (queue and binding) survive it empty,
//     where the transient queues used before RabbitMQ 4.3 went with the restart. What a restart
//     cleaned up then, x-expires does now: the broker deletes a non-durable class's queue after
//     it had no consumer for the topic's retention (at least 1 s) when it is a unique
//     subscription's, for unusedSharedExpiry (24 h) or the retention if longer when it is a
//     shared one's (request); a consumer coming back later starts a new subscription. Unique
//     queues are not exclusive although the docs offer that too: an exclusive queue is deleted
//     with the connection that declared it, and a Backend's consumers share one connection, so
//     a network cut or a broker-side close would delete every unique subscription of the
//     Backend with what it held; a durable one keeps it, and the consumer resumes on it when it
//     reconnects (TestUniqueQueueOutlivesItsConnection).
//   - Send publishes with publisher confirms (confirm.select on the producer's channel) and
//     returns only after the broker's basic.ack for that message; a basic.nack is an error.
//   - Receive takes the next delivery of the consumer's basic.consume (manual acks); Ack is
//     basic.ack of that delivery alone (multiple=false); Nack is basic.nack with requeue=true,
//     so the broker delivers it again at once. Closing a consumer cancels it and closes its
//     channel: the broker requeues what was delivered and not acked; the queue (the
//     subscription) stays.
//   - Earliest and latest: a queue holds only what was published after it was bound, so a new
//     subscription starts at the end of the topic whatever the position asked (latest is
//     exact); Earliest cannot replay what was sent before the subscription existed. RabbitMQ's
//     tool for replay is a stream (x-queue-type=stream, x-stream-offset=first), but a stream
//     has no competing consumers and no per-message acknowledgement over AMQP 0-9-1 (a
//     consumer's acks are credit, not a stored position), and the stream protocol's offset
//     tracking needs the stream protocol's client: one RabbitMQ object cannot be both
//     (backends/rabbitmqstreams combines a stream, stored offsets and a lock queue). This backend keeps the work-queue semantics (shared
//     subscriptions, acks, nack, redelivery) and so fails the specs that replay a topic's past
//     to a new subscription (D6, T2, L2, L3): what TrustGraph's design note calls "Gaps: None
//     significant" is this one.
//   - Reconnection: amqp091-go leaves it to the application (its built-in Recovery is
//     experimental and re-subscribes consumers on a new channel whose delivery tags restart at
//     1, so an ack of a delivery from before the reconnect would acknowledge another message).
//     The backend redials its connection when it is gone; a producer reopens its channel on
//     the next Send; a consumer reopens its channel and basic.consume, and a delivery from the
//     dead channel (which the broker requeued) can no longer be acked: Ack says so
//     (ErrUnavailable) and the message comes again.
//
// Auth is the user and password of RABBITMQ_USERNAME/RABBITMQ_PASSWORD (PLAIN) on the vhost
// RABBITMQ_VHOST; every call is bounded by its ctx (the client's calls, which take none, run
// under runCtx).
package rabbitmq

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/pubsub-conformance/harness/backends"
)

const (
	// dialTimeout bounds one TCP connect and AMQP handshake when the caller's ctx is longer.
	dialTimeout = 10 * time.Second
	// heartbeat is amqp091-go's default: a connection with nothing read for three intervals
	// is dead. (2 s intervals dropped healthy connections under F2's 200 ms latency.)
	heartbeat = 10 * time.Second
	// retentionArg records a topic's retention on its exchange.
	retentionArg = "x-pubsub-retention-ms"
)

// Backend is the RabbitMQ backend. Create it with New; the creator closes it.
type Backend struct {
	cfg  backends.Config
	rc   Config
	url  string
	tls  *tls.Config // amqps (RABBITMQ_SSL); nil for amqp
	mgmt *management // nil without RABBITMQ_MANAGEMENT_URL

	dial chan struct{} // cap 1: held while dialing
	cmu  sync.Mutex
	conn *amqp.Connection

	mu        sync.Mutex
	closed    bool
	done      chan struct{} // closed by Close
	producers map[*producer]struct{}
	consumers map[*consumer]struct{}
}

var _ backends.Backend = (*Backend)(nil)

// New connects to the broker in cfg.Settings (see ParseConfig). It fails fast, within ctx,
// with ErrInvalidConfig for unusable settings, ErrAuth when the broker (or the management API)
// refuses the credentials and ErrUnavailable when it cannot be reached.
func New(ctx context.Context, cfg backends.Config) (backends.Backend, error) {
	rc, err := ParseConfig(cfg.Settings)
	if err != nil {
		return nil, fmt.Errorf("rabbitmq: %w", err)
	}
	u := amqp.URI{Scheme: "amqp", Host: rc.Host, Port: rc.Port, Username: rc.Username, Password: rc.Password, Vhost: rc.Vhost}
	var tlsConf *tls.Config
	if rc.TLS {
		u.Scheme = "amqps"
		if tlsConf, err = tlsConfig(rc); err != nil {
			return nil, fmt.Errorf("rabbitmq: %w", err)
		}
	}
	b := &Backend{
		cfg:       cfg,
		rc:        rc,
		tls:       tlsConf,
		url:       u.String(),
		dial:      make(chan struct{}, 1),
		done:      make(chan struct{}),
		producers: map[*producer]struct{}{},
		consumers: map[*consumer]struct{}{},
	}
	if rc.ManagementURL != "" {
		b.mgmt = newManagement(rc, tlsConf)
	}
	if _, err := b.connection(ctx); err != nil {
		return nil, err
	}
	if b.mgmt != nil {
		if err := b.mgmt.probe(ctx); err != nil {
			b.closeConn()
			return nil, fmt.Errorf("rabbitmq: probe management API at %s: %w", rc.ManagementURL, err)
		}
	}
	return b, nil
}

// Name is "rabbitmq".
func (b *Backend) Name() string { return "rabbitmq" }

// Unsupported declares what the configuration cannot give.
func (b *Backend) Unsupported() map[backends.Capability]string {
	out := map[backends.Capability]string{}
	if b.mgmt == nil {
		out[backends.CapRetentionReadBack] = "AMQP 0-9-1 cannot read an exchange's or queue's arguments back, and RABBITMQ_MANAGEMENT_URL " +
			"(the management plugin's HTTP API) is not set"
	}
	return out
}

func (b *Backend) checkOpen(what string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return fmt.Errorf("rabbitmq: %s: %w", what, backends.ErrClosed)
	}
	return nil
}

// connection returns the open connection, dialing a new one when there is none or it closed
// (a broker restart, a cut network). One dial at a time; others wait for it within their ctx.
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
		return nil, backends.CtxErr(ctx, "rabbitmq: connect to "+b.addr())
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
	conf := amqp.Config{
		TLSClientConfig: b.tls, // the client's TLS handshake runs on the bounded conn below
		Vhost:           b.rc.Vhost,
		Heartbeat:       heartbeat,
		Locale:          "en_US",
		SASL:            []amqp.Authentication{&amqp.PlainAuth{Username: b.rc.Username, Password: b.rc.Password}},
		Properties: amqp.Table{
			"connection_name": "pubsub-conformance",
		},
		Dial: func(network, addr string) (net.Conn, error) {
			conn, err := (&net.Dialer{Deadline: deadline}).DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			// Handshake bounded too; the client clears the deadline once the connection is open.
			return conn, conn.SetDeadline(deadline)
		},
	}
	what := "rabbitmq: connect to " + b.addr()
	c, err := backends.RunCtx(ctx, what, func() (*amqp.Connection, error) { return amqp.DialConfig(b.url, conf) },
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
	b.mu.Lock()
	closed := b.closed
	b.mu.Unlock()
	if closed { // Close ran meanwhile: it may have missed this connection
		_ = c.Close()
		return nil, fmt.Errorf("rabbitmq: connect: %w", backends.ErrClosed)
	}
	return c, nil
}

func (b *Backend) addr() string { return net.JoinHostPort(b.rc.Host, strconv.Itoa(b.rc.Port)) }

// channel opens a new channel on the (re)connected connection.
func (b *Backend) channel(ctx context.Context) (*amqp.Channel, error) {
	c, err := b.connection(ctx)
	if err != nil {
		return nil, err
	}
	ch, err := backends.RunCtx(ctx, "rabbitmq: open channel", c.Channel, func(ch *amqp.Channel) { _ = ch.Close() })
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		return nil, fmt.Errorf("rabbitmq: open channel: %w", mapErr(err))
	}
	return ch, nil
}

// withChannel runs fn on a new channel and closes it after; a broker refusal closes a channel,
// so administrative calls never share one.
func (b *Backend) withChannel(ctx context.Context, what string, fn func(*amqp.Channel) error) error {
	ch, err := b.channel(ctx)
	if err != nil {
		return err
	}
	_, err = backends.RunCtx(ctx, what, func() (struct{}, error) {
		defer func() { _ = ch.Close() }()
		return struct{}{}, fn(ch)
	}, nil)
	return err
}

// resolved is a parsed contract topic with its exchange.
type resolved struct {
	topic    backends.Topic
	orig     string
	exchange string
}

func resolve(topic string) (resolved, error) {
	t, err := backends.ParseTopic(topic)
	if err != nil {
		return resolved{}, fmt.Errorf("rabbitmq: %w", err)
	}
	return resolved{topic: t, orig: topic, exchange: ExchangeName(t)}, nil
}

// exists is a passive exchange.declare: 404 NOT_FOUND means missing.
func (b *Backend) exists(ctx context.Context, r resolved) (bool, error) {
	var found bool
	err := b.withChannel(ctx, "rabbitmq: exists "+r.exchange, func(ch *amqp.Channel) error {
		err := ch.ExchangeDeclarePassive(r.exchange, amqp.ExchangeFanout, true, false, false, false, nil)
		if isCode(err, amqp.NotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		found = true
		return nil
	})
	if err != nil {
		if ctx.Err() != nil {
			return false, err
		}
		return false, fmt.Errorf("rabbitmq: topic exists %s: %w", r.exchange, mapErr(err))
	}
	return found, nil
}

// ensure declares the exchange with the retention when it does not exist; an existing one is
// left as it is (a declare with other arguments would be refused as inequivalent).
func (b *Backend) ensure(ctx context.Context, r resolved, opts ...backends.TopicOption) error {
	ok, err := b.exists(ctx, r)
	if err != nil || ok {
		return err
	}
	s := backends.ApplyTopicOptions(r.topic, b.cfg, opts...)
	args := amqp.Table{retentionArg: s.Retention.Milliseconds()}
	err = b.withChannel(ctx, "rabbitmq: declare exchange "+r.exchange, func(ch *amqp.Channel) error {
		return ch.ExchangeDeclare(r.exchange, amqp.ExchangeFanout, true, false, false, false, args)
	})
	if isCode(err, amqp.PreconditionFailed) {
		// Created meanwhile by someone else with another retention: it exists, which is all
		// CreateTopic asks.
		return nil
	}
	if err != nil {
		if ctx.Err() != nil {
			return err
		}
		return fmt.Errorf("rabbitmq: create topic %s: %w", r.exchange, mapErr(err))
	}
	return nil
}

// CreateTopic declares the topic's exchange with its class's retention (or the override).
// Idempotent: an existing topic is left unchanged.
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

// EnsureTopic is CreateTopic: creation is already a no-op for an existing topic.
func (b *Backend) EnsureTopic(ctx context.Context, topic string, opts ...backends.TopicOption) error {
	return b.CreateTopic(ctx, topic, opts...)
}

// TopicExists is a passive declare of the exchange.
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

// DeleteTopic deletes the queues bound to the topic's exchange (its subscriptions, with their
// messages), then the exchange. A missing topic is success. Without the management API the
// queues cannot be listed and only the exchange goes.
func (b *Backend) DeleteTopic(ctx context.Context, topic string) error {
	if err := b.checkOpen("delete topic"); err != nil {
		return err
	}
	r, err := resolve(topic)
	if err != nil {
		return err
	}
	var queues []string
	if b.mgmt != nil {
		queues, err = b.mgmt.boundQueues(ctx, r.exchange)
		if err != nil {
			return fmt.Errorf("rabbitmq: delete topic %s: list its queues: %w", r.exchange, err)
		}
	}
	err = b.withChannel(ctx, "rabbitmq: delete topic "+r.exchange, func(ch *amqp.Channel) error {
		for _, q := range queues {
			if _, err := ch.QueueDelete(q, false, false, false); err != nil {
				return fmt.Errorf("delete queue %s: %w", q, err)
			}
		}
		return ch.ExchangeDelete(r.exchange, false, false)
	})
	if err != nil {
		if ctx.Err() != nil {
			return err
		}
		return fmt.Errorf("rabbitmq: delete topic %s: %w", r.exchange, mapErr(err))
	}
	return nil
}

// Retention reads the topic's retention back from its exchange's arguments (management API).
func (b *Backend) Retention(ctx context.Context, topic string) (time.Duration, error) {
	if err := b.checkOpen("retention"); err != nil {
		return 0, err
	}
	r, err := resolve(topic)
	if err != nil {
		return 0, err
	}
	if b.mgmt == nil {
		return 0, fmt.Errorf("%w: rabbitmq: retention of %s: %s", backends.ErrInvalidConfig, r.exchange, b.Unsupported()[backends.CapRetentionReadBack])
	}
	d, err := b.mgmt.retention(ctx, r.exchange)
	if err != nil {
		return 0, fmt.Errorf("rabbitmq: retention of %s: %w", r.exchange, err)
	}
	return d, nil
}

// topicRetention is the retention new queues of r get: the exchange's recorded retention when
// the management API can read it, else the class's (or the Config's override).
func (b *Backend) topicRetention(ctx context.Context, r resolved) (time.Duration, error) {
	if b.mgmt == nil {
		return b.cfg.RetentionFor(r.topic.Class), nil
	}
	d, err := b.mgmt.retention(ctx, r.exchange)
	if errors.Is(err, errNoRetention) {
		return b.cfg.RetentionFor(r.topic.Class), nil
	}
	if err != nil {
		return 0, fmt.Errorf("rabbitmq: retention of %s: %w", r.exchange, err)
	}
	return d, nil
}

// Close closes every producer and consumer still open, then the connection. Idempotent.
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
	_, err := backends.RunCtx(ctx, "rabbitmq: close connection", func() (struct{}, error) {
		b.closeConn()
		return struct{}{}, nil
	}, nil)
	errs = append(errs, err)
	return errors.Join(errs...)
}

func (b *Backend) closeConn() {
	b.cmu.Lock()
	c := b.conn
	b.conn = nil
	b.cmu.Unlock()
	if c != nil {
		_ = c.Close()
	}
}

// Kill drops the connection at once, without closing producers and consumers: what a crashed
// process leaves behind (the broker requeues the unacknowledged deliveries).
func (b *Backend) Kill() {
	b.mu.Lock()
	b.closed = true
	select {
	case <-b.done:
	default:
		close(b.done)
	}
	b.mu.Unlock()
	b.cmu.Lock()
	c := b.conn
	b.conn = nil
	b.cmu.Unlock()
	if c != nil {
		_ = c.CloseDeadline(time.Now())
	}
}

// logf writes one line to the Config's log, if any.
func (b *Backend) logf(format string, args ...any) {
	if b.cfg.Log != nil {
		fmt.Fprintf(b.cfg.Log, format+"\n", args...)
	}
}

// isCode reports whether err is the broker's refusal with that reply code.
func isCode(err error, code int) bool {
	var ae *amqp.Error
	return errors.As(err, &ae) && ae.Code == code
}

// mapErr maps the client's errors to the contract's sentinels.
func mapErr(err error) error {
	if err == nil {
		return nil
	}
	for _, s := range []error{backends.ErrTimeout, backends.ErrAuth, backends.ErrUnavailable, backends.ErrClosed,
		backends.ErrInvalidTopic, backends.ErrInvalidConfig, context.Canceled} {
		if errors.Is(err, s) {
			return err
		}
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w: %v", backends.ErrTimeout, err)
	}
	if errors.Is(err, amqp.ErrCredentials) || errors.Is(err, amqp.ErrVhost) || errors.Is(err, amqp.ErrSASL) {
		return fmt.Errorf("%w: %v", backends.ErrAuth, err)
	}
	var cve *tls.CertificateVerificationError
	var ua x509.UnknownAuthorityError
	var hn x509.HostnameError
	if errors.As(err, &cve) || errors.As(err, &ua) || errors.As(err, &hn) {
		// The broker could not be authenticated: its certificate does not verify.
		return fmt.Errorf("%w: %v", backends.ErrAuth, err)
	}
	var ae *amqp.Error
	if errors.As(err, &ae) {
		switch {
		case ae.Code == amqp.AccessRefused && strings.Contains(ae.Reason, "exclusive use"):
			// A queue another connection consumes exclusively: a refusal, not credentials.
			return err
		case ae.Code == amqp.AccessRefused, ae.Code == amqp.NotAllowed:
			return fmt.Errorf("%w: %v", backends.ErrAuth, err)
		case ae.Code == amqp.ConnectionForced, ae.Code == amqp.ChannelError, ae.Code == amqp.FrameError,
			ae.Code == amqp.InternalError, ae.Code == amqp.ResourceError:
			return fmt.Errorf("%w: %v", backends.ErrUnavailable, err)
		}
		if errors.Is(err, amqp.ErrClosed) {
			return fmt.Errorf("%w: %v", backends.ErrUnavailable, err)
		}
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return fmt.Errorf("%w: %v", backends.ErrUnavailable, err)
	}
	msg := strings.ToLower(err.Error())
	for _, s := range []string{"connection refused", "connection reset", "broken pipe", "no route to host", "i/o timeout", "eof", "use of closed network connection"} {
		if strings.Contains(msg, s) {
			return fmt.Errorf("%w: %v", backends.ErrUnavailable, err)
		}
	}
	if strings.Contains(msg, "access_refused") || strings.Contains(msg, "login was refused") {
		return fmt.Errorf("%w: %v", backends.ErrAuth, err)
	}
	return err
}

// uniqueSuffix is a random hex string for unique subscription queues and consumer tags.
func uniqueSuffix() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// tlsConfig is the amqps client's: the CA of RABBITMQ_SSL_CA_FILE, or the system's roots.
func tlsConfig(rc Config) (*tls.Config, error) {
	c := &tls.Config{ServerName: rc.Host, MinVersion: tls.VersionTLS12}
	if rc.CAFile == "" {
		return c, nil
	}
	pem, err := os.ReadFile(rc.CAFile)
	if err != nil {
		return nil, fmt.Errorf("%w: read RABBITMQ_SSL_CA_FILE: %v", backends.ErrInvalidConfig, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%w: RABBITMQ_SSL_CA_FILE=%q holds no PEM certificate", backends.ErrInvalidConfig, rc.CAFile)
	}
	c.RootCAs = pool
	return c, nil
}
