package rabbitmq

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/pubsub-conformance/harness/backends"
	"github.com/pubsub-conformance/harness/fixtures"
	"github.com/pubsub-conformance/harness/fixtures/brokertest"
)

// Integration tests run against a real RabbitMQ broker shared by this package's tests: started
// once (local rabbitmq-server with its management plugin, and an authenticated user) through
// fixtures in TestMain (see fixtures/brokertest; RABBITMQ_HOST points them at an external broker
// instead). The shared conformance suite (suite/) is the full proof; these cover the
// RabbitMQ-specific mechanics close to the code: confirms, the queue per subscription,
// per-message ack and nack, earliest's limit, delete with the subscriptions, and the settings
// the known-bad variants build on.

var sharedRabbit = brokertest.Shared(fixtures.RabbitMQ, fixtures.WithAuth())

func TestMain(m *testing.M) { os.Exit(brokertest.Main(m)) }

// config is the one place these tests build a backends.Config: this backend's settings from
// the environment, then the shared broker's, then extra.
func config(t *testing.T, extra map[string]string) backends.Config {
	t.Helper()
	ep := sharedRabbit.Endpoints(t)
	broker := ep.Settings()
	if ep.Provider == "external" {
		broker = nil
	}
	return backends.Config{Backend: "rabbitmq", Settings: backends.Layer(Descriptor.EnvSettings(os.Environ()), broker, extra), Log: testLog{t}}
}

type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func open(t *testing.T, ctx context.Context, extra map[string]string) *Backend {
	t.Helper()
	b, err := New(ctx, config(t, extra))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := b.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return b.(*Backend)
}

func topicName(class backends.Class, tag string) string {
	return fmt.Sprintf("%s:it:%s-%s", class, tag, uniqueSuffix())
}

func receive(t *testing.T, ctx context.Context, c backends.Consumer, within time.Duration) backends.Delivery {
	t.Helper()
	rctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	d, err := c.Receive(rctx)
	if err != nil {
		t.Fatalf("Receive: %v", err)
	}
	return d
}

func TestRoundTripAckNack(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b := open(t, ctx, nil)
	topic := topicName(backends.ClassFlow, "rt")
	c, err := b.Consumer(ctx, topic, "s")
	if err != nil {
		t.Fatalf("Consumer: %v", err)
	}
	p, err := b.Producer(ctx, topic)
	if err != nil {
		t.Fatalf("Producer: %v", err)
	}
	payload := []byte{0, 0xff, 0xfe, 'x'}
	if err := p.Send(ctx, backends.Message{Payload: payload, Properties: map[string]string{"id": "1", "Key": " v "}}); err != nil {
		t.Fatalf("Send: %v", err)
	}
	d := receive(t, ctx, c, 5*time.Second)
	if !bytes.Equal(d.Payload, payload) || d.Properties["id"] != "1" || d.Properties["Key"] != " v " || d.Topic != topic {
		t.Fatalf("got %+v", d)
	}
	if err := c.Nack(ctx, d); err != nil {
		t.Fatalf("Nack: %v", err)
	}
	again := receive(t, ctx, c, 5*time.Second)
	if !bytes.Equal(again.Payload, payload) || again.ID == d.ID {
		t.Fatalf("after nack got %+v (first %+v)", again, d)
	}
	if err := c.Ack(ctx, d); !errors.Is(err, backends.ErrUnknownDelivery) {
		t.Fatalf("Ack of the nacked delivery: %v, want ErrUnknownDelivery", err)
	}
	if err := c.Ack(ctx, again); err != nil {
		t.Fatalf("Ack: %v", err)
	}
	if err := c.Ack(ctx, backends.Delivery{ID: "bogus"}); !errors.Is(err, backends.ErrUnknownDelivery) {
		t.Fatalf("Ack bogus: %v", err)
	}
	if err := c.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if _, err := c.Receive(ctx); !errors.Is(err, backends.ErrClosed) {
		t.Fatalf("Receive after Close: %v", err)
	}
}

// A subscription is a queue: what it got and did not ack comes again after reopen; a new
// subscription sees only what was sent after it existed, even when it asks for earliest.
func TestQueueSemantics(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b := open(t, ctx, nil)
	topic := topicName(backends.ClassFlow, "q")
	c, err := b.Consumer(ctx, topic, "s")
	if err != nil {
		t.Fatalf("Consumer: %v", err)
	}
	p, _ := b.Producer(ctx, topic)
	for i := range 2 {
		if err := p.Send(ctx, backends.Message{Payload: fmt.Appendf(nil, "m%d", i)}); err != nil {
			t.Fatalf("Send: %v", err)
		}
	}
	d0 := receive(t, ctx, c, 5*time.Second)
	receive(t, ctx, c, 5*time.Second) // m1, not acked
	if err := c.Ack(ctx, d0); err != nil {
		t.Fatalf("Ack: %v", err)
	}
	_ = c.Close(ctx)
	c2, err := b.Consumer(ctx, topic, "s")
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	if d := receive(t, ctx, c2, 5*time.Second); string(d.Payload) != "m1" {
		t.Fatalf("after reopen got %q, want the unacked m1", d.Payload)
	}
	late, err := b.Consumer(ctx, topic, "late", backends.WithPosition(backends.Earliest))
	if err != nil {
		t.Fatalf("Consumer late: %v", err)
	}
	rctx, rcancel := context.WithTimeout(ctx, time.Second)
	defer rcancel()
	if d, err := late.Receive(rctx); !errors.Is(err, backends.ErrTimeout) {
		t.Fatalf("a new queue replayed %q (err %v): earliest on a queue is documented as impossible", d.Payload, err)
	}
}

func TestLifecycleAndRetention(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b := open(t, ctx, nil)
	topic := topicName(backends.ClassRequest, "l")
	if ok, err := b.TopicExists(ctx, topic); err != nil || ok {
		t.Fatalf("exists before create: %v %v", ok, err)
	}
	if err := b.CreateTopic(ctx, topic, backends.WithRetention(90*time.Second)); err != nil {
		t.Fatalf("CreateTopic: %v", err)
	}
	if err := b.CreateTopic(ctx, topic); err != nil {
		t.Fatalf("CreateTopic again: %v", err)
	}
	if ok, err := b.TopicExists(ctx, topic); err != nil || !ok {
		t.Fatalf("exists after create: %v %v", ok, err)
	}
	if _, lacks := b.Unsupported()[backends.CapRetentionReadBack]; !lacks {
		if d, err := b.Retention(ctx, topic); err != nil || d != 90*time.Second {
			t.Fatalf("Retention: %v %v, want 1m30s", d, err)
		}
	}
	c, err := b.Consumer(ctx, topic, "s")
	if err != nil {
		t.Fatalf("Consumer: %v", err)
	}
	_ = c.Close(ctx)
	if err := b.DeleteTopic(ctx, topic); err != nil {
		t.Fatalf("DeleteTopic: %v", err)
	}
	if err := b.DeleteTopic(ctx, topic); err != nil {
		t.Fatalf("DeleteTopic again: %v", err)
	}
	if ok, err := b.TopicExists(ctx, topic); err != nil || ok {
		t.Fatalf("exists after delete: %v %v", ok, err)
	}
	if b.mgmt != nil {
		if qs, err := b.mgmt.boundQueues(ctx, ExchangeName(backends.MustParseTopic(topic))); err != nil || len(qs) != 0 {
			t.Fatalf("queues after delete: %v %v", qs, err)
		}
	}
}

func TestBadSettingsAndCredentials(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if good, _, ok := sharedRabbit.Endpoints(t).AuthSettings(); ok {
		b, err := New(ctx, config(t, good))
		if err != nil {
			t.Fatalf("New with the authenticated user: %v", err)
		}
		_ = b.Close(ctx)
	}
	cfg := config(t, map[string]string{"RABBITMQ_PASSWORD": "wrong-" + uniqueSuffix()})
	start := time.Now()
	_, err := New(ctx, cfg)
	if !errors.Is(err, backends.ErrAuth) {
		t.Fatalf("New with a wrong password: %v, want ErrAuth", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Fatalf("a refused login took %v", time.Since(start))
	}
	cfg = config(t, map[string]string{"RABBITMQ_PORT": "1"})
	if _, err := New(ctx, cfg); !errors.Is(err, backends.ErrUnavailable) {
		t.Fatalf("New on a closed port: %v, want ErrUnavailable", err)
	}
}

// The settings the known-bad variants switch on do what they say.
func TestVariantSettings(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	t.Run("auto-ack loses an unacked message on close", func(t *testing.T) {
		b := open(t, ctx, map[string]string{"RABBITMQ_CONSUMER_AUTO_ACK": "true"})
		topic := topicName(backends.ClassFlow, "aa")
		c, _ := b.Consumer(ctx, topic, "s")
		p, _ := b.Producer(ctx, topic)
		_ = p.Send(ctx, backends.Message{Payload: []byte("x")})
		receive(t, ctx, c, 5*time.Second)
		_ = c.Close(ctx)
		c2, _ := b.Consumer(ctx, topic, "s")
		rctx, rcancel := context.WithTimeout(ctx, time.Second)
		defer rcancel()
		if _, err := c2.Receive(rctx); !errors.Is(err, backends.ErrTimeout) {
			t.Fatalf("auto-ack: the message came again (%v)", err)
		}
	})
	t.Run("exclusive consumer refuses a second member", func(t *testing.T) {
		b := open(t, ctx, map[string]string{"RABBITMQ_CONSUMER_EXCLUSIVE": "true"})
		topic := topicName(backends.ClassFlow, "ex")
		if _, err := b.Consumer(ctx, topic, "s"); err != nil {
			t.Fatalf("first: %v", err)
		}
		if _, err := b.Consumer(ctx, topic, "s"); err == nil || errors.Is(err, backends.ErrAuth) {
			t.Fatalf("a second exclusive consumer of one queue: %v; want a refusal that is not an auth error", err)
		}
	})
	t.Run("queue per consumer fans a shared subscription out", func(t *testing.T) {
		b := open(t, ctx, map[string]string{"RABBITMQ_QUEUE_PER_CONSUMER": "true"})
		topic := topicName(backends.ClassFlow, "qpc")
		c1, _ := b.Consumer(ctx, topic, "s")
		c2, _ := b.Consumer(ctx, topic, "s")
		p, _ := b.Producer(ctx, topic)
		_ = p.Send(ctx, backends.Message{Payload: []byte("x")})
		receive(t, ctx, c1, 5*time.Second)
		receive(t, ctx, c2, 5*time.Second) // the same message: each member has its own queue
	})
}

// TestTLS: the shared broker's amqps listener works with the CA that signed its certificate
// (RABBITMQ_SSL, RABBITMQ_SSL_CA_FILE); trusting another CA, New fails at once with ErrAuth.
func TestTLS(t *testing.T) {
	good, wrong, ok := sharedRabbit.Endpoints(t).TLSSettings()
	if !ok {
		t.Skipf("the %s RabbitMQ broker has no amqps listener", sharedRabbit.Endpoints(t).Provider)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	_, err := New(ctx, config(t, wrong))
	if !errors.Is(err, backends.ErrAuth) || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("New trusting the wrong CA: %v, want ErrAuth naming the certificate", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("the wrong CA took %v to fail", d)
	}
	b := open(t, ctx, good)
	topic := topicName(backends.ClassFlow, "tls")
	c, err := b.Consumer(ctx, topic, "s")
	if err != nil {
		t.Fatalf("consumer over amqps: %v", err)
	}
	defer c.Close(ctx)
	p, err := b.Producer(ctx, topic)
	if err != nil {
		t.Fatalf("producer over amqps: %v", err)
	}
	defer p.Close(ctx)
	if err := p.Send(ctx, backends.Message{Payload: []byte("a")}); err != nil {
		t.Fatalf("send over amqps: %v", err)
	}
	receive(t, ctx, c, 10*time.Second)
}

// queueProps is what the management API says of a queue.
type queueProps struct {
	Durable    bool           `json:"durable"`
	Exclusive  bool           `json:"exclusive"`
	AutoDelete bool           `json:"auto_delete"`
	Arguments  map[string]any `json:"arguments"`
}

func readQueue(t *testing.T, ctx context.Context, b *Backend, name string) queueProps {
	t.Helper()
	var q queueProps
	if err := b.mgmt.get(ctx, "/api/queues/"+url.PathEscape(b.mgmt.vhost)+"/"+url.PathEscape(name), &q); err != nil {
		t.Fatalf("read queue %s: %v", name, err)
	}
	return q
}

// TestQueuesRabbitMQ43Accepts: RabbitMQ 4.3 refuses by default a queue that is neither durable
// nor exclusive (release notes 4.3.0, deprecated feature transient_nonexcl_queues). On the
// default 3.10.8 broker the conformance suite cannot see such a declaration, so this reads back
// every kind of queue the backend declares: all durable, a non-durable class's with x-expires.
func TestQueuesRabbitMQ43Accepts(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b := open(t, ctx, nil)
	cases := []struct {
		class   backends.Class
		mode    string
		opts    []backends.ConsumerOption
		expires time.Duration // 0: no x-expires
	}{
		{backends.ClassFlow, "shared", nil, 0},
		{backends.ClassRequest, "shared", nil, unusedSharedExpiry},
		{backends.ClassResponse, "unique", nil, 5 * time.Minute},
		{backends.ClassNotify, "unique", nil, 5 * time.Minute},
		{backends.ClassFlow, "unique", []backends.ConsumerOption{backends.WithMode(backends.Unique)}, 7 * 24 * time.Hour},
		{backends.ClassResponse, "shared", []backends.ConsumerOption{backends.WithMode(backends.Shared)}, unusedSharedExpiry},
	}
	for _, tc := range cases {
		c, err := b.Consumer(ctx, topicName(tc.class, "q43"), "s", tc.opts...)
		if err != nil {
			t.Fatalf("Consumer %s: %v", tc.class, err)
		}
		name := c.(*consumer).queue
		q := readQueue(t, ctx, b, name)
		if !q.Durable || q.Exclusive || q.AutoDelete {
			t.Errorf("%s %s: queue %s durable=%v exclusive=%v auto_delete=%v, want durable only", tc.class, tc.mode, name, q.Durable, q.Exclusive, q.AutoDelete)
		}
		got, _ := q.Arguments["x-expires"].(float64)
		if time.Duration(got)*time.Millisecond != tc.expires {
			t.Errorf("%s %s: queue %s x-expires %v ms, want %v", tc.class, tc.mode, name, q.Arguments["x-expires"], tc.expires)
		}
		_ = c.Close(ctx)
	}
}

// TestUniqueQueueOutlivesItsConnection is why a unique subscription's queue is durable with
// x-expires and not exclusive: an exclusive queue is deleted with the connection that declared
// it (one connection per Backend, shared by its consumers), so a lost connection would drop what
// the consumer had been delivered and not acked. Here it is requeued and delivered again.
func TestUniqueQueueOutlivesItsConnection(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b := open(t, ctx, nil)
	topic := topicName(backends.ClassResponse, "cut")
	c, err := b.Consumer(ctx, topic, "s")
	if err != nil {
		t.Fatalf("Consumer: %v", err)
	}
	p, err := open(t, ctx, nil).Producer(ctx, topic)
	if err != nil {
		t.Fatalf("Producer: %v", err)
	}
	if err := p.Send(ctx, backends.Message{Payload: []byte("m0")}); err != nil {
		t.Fatalf("Send: %v", err)
	}
	receive(t, ctx, c, 5*time.Second) // not acked
	b.cmu.Lock()
	conn := b.conn
	b.cmu.Unlock()
	if err := conn.Close(); err != nil { // the broker sees the connection end, as after a cut
		t.Fatalf("close the connection: %v", err)
	}
	if d := receive(t, ctx, c, 20*time.Second); string(d.Payload) != "m0" {
		t.Fatalf("after the connection ended got %q, want the unacked m0 again", d.Payload)
	}
}
