package kafka

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pubsub-conformance/harness/backends"
	"github.com/pubsub-conformance/harness/fixtures"
	"github.com/pubsub-conformance/harness/fixtures/brokertest"
)

// Integration tests run against a real Kafka broker shared by this package's tests: started
// once (with its SASL listener) through fixtures in TestMain, stopped there at the end (see
// fixtures/brokertest; KAFKA_BOOTSTRAP_SERVERS points them at an external broker instead). The
// shared conformance suite (suite/) is the full proof; these cover the Kafka-specific mechanics
// (start offsets, group offsets after delete, large records, options the known-bad variants
// build on) close to the code.

var sharedKafka = brokertest.Shared(fixtures.Kafka, fixtures.WithAuth())

func TestMain(m *testing.M) { os.Exit(brokertest.Main(m)) }

// listener selects how config reaches the shared broker.
type listener int

const (
	plaintext listener = iota
	saslGood           // the SASL listener with the known user's password
	saslBad            // the SASL listener with a wrong password
)

// config is the one place these tests build a backends.Config: this backend's settings from the
// environment (KAFKA_DEBUG, ...), then the shared broker's. An external broker is the
// environment's, security settings included.
func config(t *testing.T, l listener) backends.Config {
	t.Helper()
	ep := sharedKafka.Endpoints(t)
	broker := ep.Settings()
	if ep.Provider == "external" {
		broker = nil
	}
	if l != plaintext {
		good, bad, ok := ep.AuthSettings()
		if !ok {
			t.Skipf("the %s Kafka broker has no SASL listener (external: set KAFKA_SECURITY_PROTOCOL=SASL_PLAINTEXT and KAFKA_SASL_*)", ep.Provider)
		}
		broker = good
		if l == saslBad {
			broker = bad
		}
	}
	return backends.Config{Backend: "kafka", Settings: backends.Layer(Descriptor.EnvSettings(os.Environ()), broker), Log: testLog{t}}
}

type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func open(t *testing.T, ctx context.Context) *Backend {
	t.Helper()
	b, err := New(ctx, config(t, plaintext))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := b.Close(ctx); err != nil {
			t.Errorf("close backend: %v", err)
		}
	})
	return b.(*Backend)
}

func unique(prefix string) string {
	var r [6]byte
	_, _ = rand.Read(r[:])
	return prefix + "-" + hex.EncodeToString(r[:])
}

func send(t *testing.T, ctx context.Context, p backends.Producer, payloads ...string) {
	t.Helper()
	for _, s := range payloads {
		if err := p.Send(ctx, backends.Message{Payload: []byte(s), Properties: map[string]string{"k": "v-" + s}}); err != nil {
			t.Fatalf("send %q: %v", s, err)
		}
	}
}

func receive(t *testing.T, ctx context.Context, c backends.Consumer, want ...string) []backends.Delivery {
	t.Helper()
	var got []backends.Delivery
	for _, w := range want {
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		d, err := c.Receive(rctx)
		cancel()
		if err != nil {
			t.Fatalf("receive (want %q): %v", w, err)
		}
		if string(d.Payload) != w || d.Properties["k"] != "v-"+w {
			t.Fatalf("received %q %v; want %q", d.Payload, d.Properties, w)
		}
		got = append(got, d)
	}
	return got
}

func nothing(t *testing.T, ctx context.Context, c backends.Consumer, within time.Duration) {
	t.Helper()
	rctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	d, err := c.Receive(rctx)
	if err == nil {
		t.Fatalf("received %q (id %s); want nothing", d.Payload, d.ID)
	}
	if !errors.Is(err, backends.ErrTimeout) {
		t.Fatalf("empty receive: %v; want ErrTimeout", err)
	}
}

func subscribe(t *testing.T, ctx context.Context, b *Backend, topic, sub string, opts ...backends.ConsumerOption) backends.Consumer {
	t.Helper()
	start := time.Now()
	c, err := b.Consumer(ctx, topic, sub, opts...)
	if err != nil {
		t.Fatalf("consumer %s: %v", sub, err)
	}
	t.Logf("consumer %s ready in %v", sub, time.Since(start).Round(time.Millisecond))
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	return c
}

func closeC(t *testing.T, ctx context.Context, c backends.Consumer) {
	t.Helper()
	if err := c.Close(ctx); err != nil {
		t.Fatalf("close consumer: %v", err)
	}
}

func TestIntegrationLatestRestartAckNack(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	b := open(t, ctx)
	topic := "flow:tg:" + unique("it")
	sub := unique("sub")

	p, err := b.Producer(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(ctx)
	send(t, ctx, p, "before") // must not reach a latest subscriber

	// Ready on return (D2) and never-acked restart (R2).
	c := subscribe(t, ctx, b, topic, sub)
	closeC(t, ctx, c)
	send(t, ctx, p, "m1", "m2")
	c = subscribe(t, ctx, b, topic, sub)
	ds := receive(t, ctx, c, "m1", "m2")

	// Nack m1 while m2 is held: m1 again, not the held m2 (TestIntegrationNackLeavesHeldOut).
	if err := c.Nack(ctx, ds[0]); err != nil {
		t.Fatal(err)
	}
	ds = receive(t, ctx, c, "m1")
	// Ack m1 only; close; reopen: m2 again (A2), then nothing.
	if err := c.Ack(ctx, ds[0]); err != nil {
		t.Fatal(err)
	}
	closeC(t, ctx, c)
	c = subscribe(t, ctx, b, topic, sub)
	ds = receive(t, ctx, c, "m2")
	if err := c.Ack(ctx, ds[0]); err != nil {
		t.Fatal(err)
	}
	nothing(t, ctx, c, time.Second)
	if err := c.Ack(ctx, backends.Delivery{ID: "junk"}); !errors.Is(err, backends.ErrUnknownDelivery) {
		t.Fatalf("ack junk id: %v", err)
	}
	// Earliest on a fresh group replays from the start (T2).
	e := subscribe(t, ctx, b, topic, unique("sub"), backends.WithPosition(backends.Earliest))
	receive(t, ctx, e, "before", "m1", "m2")
}

func TestIntegrationSharedSecondMemberAndFanOut(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	b := open(t, ctx)
	topic := "flow:tg:" + unique("it")
	sub := unique("sub")
	c1 := subscribe(t, ctx, b, topic, sub)
	c2 := subscribe(t, ctx, b, topic, sub) // joins while c1 holds the single partition
	p, err := b.Producer(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(ctx)
	const n = 20
	var want []string
	for i := range n {
		want = append(want, fmt.Sprint(i))
	}
	send(t, ctx, p, want...)
	got := map[string]int{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, c := range []backends.Consumer{c1, c2} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				rctx, cancel := context.WithTimeout(ctx, 3*time.Second)
				d, err := c.Receive(rctx)
				cancel()
				if err != nil {
					return
				}
				mu.Lock()
				got[string(d.Payload)]++
				mu.Unlock()
				_ = c.Ack(ctx, d)
			}
		}()
	}
	wg.Wait()
	for _, w := range want {
		if got[w] != 1 {
			t.Errorf("message %s received %d times; want exactly once", w, got[w])
		}
	}

	// Fan-out on a unique class: both get everything.
	nt := "notify:tg:" + unique("it")
	u1 := subscribe(t, ctx, b, nt, "s")
	u2 := subscribe(t, ctx, b, nt, "s")
	np, err := b.Producer(ctx, nt)
	if err != nil {
		t.Fatal(err)
	}
	defer np.Close(ctx)
	send(t, ctx, np, "a", "b")
	receive(t, ctx, u1, "a", "b")
	receive(t, ctx, u2, "a", "b")
}

func TestIntegrationLargePayloadAndRetention(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	b := open(t, ctx)
	topic := "request:tg:" + unique("it")
	c := subscribe(t, ctx, b, topic, unique("sub"))
	p, err := b.Producer(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(ctx)
	big := make([]byte, 5<<20)
	_, _ = rand.Read(big)
	if err := p.Send(ctx, backends.Message{Payload: big}); err != nil {
		t.Fatalf("send 5 MiB: %v", err)
	}
	d, err := c.Receive(ctx)
	if err != nil || !bytes.Equal(d.Payload, big) {
		t.Fatalf("receive 5 MiB: %v (got %d bytes)", err, len(d.Payload))
	}
	if r, err := b.Retention(ctx, topic); err != nil || r != 5*time.Minute {
		t.Fatalf("retention of %s = %v, %v; want 5m", topic, r, err)
	}
	short := "flow:tg:" + unique("it")
	if err := b.CreateTopic(ctx, short, backends.WithRetention(3*time.Second)); err != nil {
		t.Fatal(err)
	}
	if r, err := b.Retention(ctx, short); err != nil || r != 3*time.Second {
		t.Fatalf("retention of %s = %v, %v; want 3s", short, r, err)
	}
}

func TestIntegrationDeleteDropsSubscriptions(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	b := open(t, ctx)
	topic := "flow:tg:" + unique("it")
	sub := unique("sub")
	p, err := b.Producer(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	c := subscribe(t, ctx, b, topic, sub)
	send(t, ctx, p, "x1", "x2", "x3")
	ds := receive(t, ctx, c, "x1", "x2", "x3")
	if err := c.Ack(ctx, ds[2]); err != nil {
		t.Fatal(err)
	}
	closeC(t, ctx, c)
	_ = p.Close(ctx)
	for range 2 { // idempotent
		if err := b.DeleteTopic(ctx, topic); err != nil {
			t.Fatalf("delete: %v", err)
		}
	}
	if ok, err := b.TopicExists(ctx, topic); err != nil || ok {
		t.Fatalf("exists after delete = %v, %v", ok, err)
	}
	if err := b.CreateTopic(ctx, topic); err != nil {
		t.Fatal(err)
	}
	p, err = b.Producer(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(ctx)
	send(t, ctx, p, "y1", "y2", "y3", "y4") // offsets 0..3, past the old commit (3)
	// The old subscription name starts fresh: with earliest it must see everything of the new
	// topic, not resume at the old topic's committed offset 3.
	c = subscribe(t, ctx, b, topic, sub, backends.WithPosition(backends.Earliest))
	receive(t, ctx, c, "y1", "y2", "y3", "y4")
}

func TestIntegrationInvalidTopic(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b := open(t, ctx)
	for _, bad := range []string{"bogus:tg:x", "flow:tg", "flow:t g:x", ""} {
		if err := b.CreateTopic(ctx, bad); !errors.Is(err, backends.ErrInvalidTopic) {
			t.Errorf("create %q: %v; want ErrInvalidTopic", bad, err)
		}
	}
}

// TestIntegrationSASL uses the shared broker's SASL_PLAINTEXT listener (mechanism PLAIN).
func TestIntegrationSASL(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	good, bad := config(t, saslGood), config(t, saslBad)

	start := time.Now()
	_, err := New(ctx, bad)
	if !errors.Is(err, backends.ErrAuth) {
		t.Fatalf("New with a bad password: %v; want ErrAuth", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("bad password took %v to fail; want fail fast", d)
	}
	t.Logf("bad password refused in %v: %v", time.Since(start).Round(time.Millisecond), err)

	bi, err := New(ctx, good)
	if err != nil {
		t.Fatalf("New with good credentials: %v", err)
	}
	b := bi.(*Backend)
	defer b.Close(ctx)
	topic := "flow:tg:" + unique("sasl")
	c := subscribe(t, ctx, b, topic, unique("sub"))
	p, err := b.Producer(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(ctx)
	send(t, ctx, p, "s")
	receive(t, ctx, c, "s")
}

// A Nack while a message the consumer has not received yet is buffered at an offset below the
// nacked one must not skip that message: here m1 and m2 are held, m1 is nacked (the seek
// refetches m1 into the buffer), then m2 is nacked. Found by W1 (seed 1796172496): the first
// rewind point was cleared when m1 was fetched again, the second Nack dropped the buffered m1
// and sought to m2, and m1 never came back until the consumer was reopened.
func TestIntegrationNackAfterRefetchKeepsEarlierNack(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	b := open(t, ctx)
	topic := "flow:tg:" + unique("it")
	p, err := b.Producer(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(ctx)
	c := subscribe(t, ctx, b, topic, unique("sub"), backends.WithPosition(backends.Earliest))
	send(t, ctx, p, "m1", "m2")
	ds := receive(t, ctx, c, "m1", "m2")
	if err := c.Nack(ctx, ds[0]); err != nil {
		t.Fatal(err)
	}
	// Wait (bounded) until the poll loop fetched m1 again into the buffer, not handed out.
	kc := c.(*consumer)
	buffered := func() bool {
		kc.mu.Lock()
		defer kc.mu.Unlock()
		for _, m := range kc.buf {
			if string(m.Value) == "m1" {
				return true
			}
		}
		return false
	}
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !buffered() {
		select {
		case <-tick.C:
		case <-ctx.Done():
			t.Fatal("m1 was not fetched again within the test's bound after its Nack")
		}
	}
	if err := c.Nack(ctx, ds[1]); err != nil {
		t.Fatal(err)
	}
	receive(t, ctx, c, "m1", "m2")
}

// TestIntegrationTLS: the shared broker's SASL_SSL listener works with the CA that signed its
// certificate (KAFKA_SSL_CA_LOCATION) and good credentials; trusting another CA, New fails
// fast with ErrAuth (librdkafka's _SSL: the certificate did not verify), not a timeout.
func TestIntegrationTLS(t *testing.T) {
	ep := sharedKafka.Endpoints(t)
	good, wrong, ok := ep.TLSSettings()
	if !ok {
		t.Skipf("the %s Kafka broker has no SASL_SSL listener", ep.Provider)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cfg := func(s map[string]string) backends.Config {
		return backends.Config{Backend: "kafka", Settings: backends.Layer(Descriptor.EnvSettings(os.Environ()), s), Log: testLog{t}}
	}
	start := time.Now()
	_, err := New(ctx, cfg(wrong))
	if !errors.Is(err, backends.ErrAuth) || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("New trusting the wrong CA: %v; want ErrAuth naming the certificate", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("the wrong CA took %v to fail; want fail fast", d)
	}
	t.Logf("wrong CA refused in %v: %v", time.Since(start).Round(time.Millisecond), err)

	bi, err := New(ctx, cfg(good))
	if err != nil {
		t.Fatalf("New over SASL_SSL with the broker's CA: %v", err)
	}
	b := bi.(*Backend)
	defer b.Close(ctx)
	topic := "flow:tg:" + unique("tls")
	c := subscribe(t, ctx, b, topic, unique("sub"))
	p, err := b.Producer(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(ctx)
	send(t, ctx, p, "s")
	receive(t, ctx, c, "s")
}

// TestIntegrationNackLeavesHeldOut: the Nack of m1 seeks back and fetches m2 again, which the
// application still holds: only m1 comes again (W1 seed 1796183138 got a held m2 twice). m2,
// nacked afterwards, comes again too.
func TestIntegrationNackLeavesHeldOut(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	b := open(t, ctx)
	topic := "flow:tg:" + unique("it")
	p, err := b.Producer(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(ctx)
	c := subscribe(t, ctx, b, topic, unique("sub"), backends.WithPosition(backends.Earliest))
	send(t, ctx, p, "m1", "m2", "m3")
	ds := receive(t, ctx, c, "m1", "m2")
	if err := c.Nack(ctx, ds[0]); err != nil {
		t.Fatal(err)
	}
	receive(t, ctx, c, "m1", "m3")
	nothing(t, ctx, c, 2*time.Second)
	if err := c.Nack(ctx, ds[1]); err != nil {
		t.Fatal(err)
	}
	receive(t, ctx, c, "m2")
}

// TestIntegrationNackOfAckedDuplicate: a consumer holds two deliveries of one message (its
// partition was revoked and came straight back in an eager rebalance, and the refetch handed
// the message out again), acks the first and nacks the second. The message is acknowledged:
// the Nack may fail with ErrUnknownDelivery (C-ACK-9), but a Nack that returns nil must
// deliver it again (C-NACK-1). Corpus entries w1-1796183137 and w1-1796307262 hit this by
// luck: the Nack returned nil and the refetch skipped the settled offset, so nothing came.
// The rebalance is forced here: a member of the same group (same subscription name) on
// another topic joins, which revokes and reassigns every member's partitions (classic
// protocol) while this topic's partition can only go back to c.
func TestIntegrationNackOfAckedDuplicate(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	b := open(t, ctx)
	if b.kc.GroupProtocol == GroupProtocolConsumer {
		t.Skip("the consumer group protocol (KIP-848) rebalances incrementally: a join elsewhere does not revoke this partition")
	}
	topic, other, sub := "flow:tg:"+unique("it"), "flow:tg:"+unique("it"), unique("sub")
	p, err := b.Producer(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(ctx)
	c := subscribe(t, ctx, b, topic, sub, backends.WithPosition(backends.Earliest))
	send(t, ctx, p, "m1")
	first := receive(t, ctx, c, "m1")[0]
	subscribe(t, ctx, b, other, sub, backends.WithPosition(backends.Earliest))
	second := receive(t, ctx, c, "m1")[0]
	if second.ID == first.ID {
		t.Fatalf("m1 came again with the same delivery id %s; want a delivery of the new assignment", first.ID)
	}
	if err := c.Ack(ctx, first); err != nil {
		t.Fatalf("ack of the first delivery: %v", err)
	}
	err = c.Nack(ctx, second)
	switch {
	case errors.Is(err, backends.ErrUnknownDelivery):
		nothing(t, ctx, c, 2*time.Second) // acknowledged: it does not come again
	case err != nil:
		t.Fatalf("nack of the second delivery: %v; want nil or ErrUnknownDelivery", err)
	default:
		rctx, rcancel := context.WithTimeout(ctx, 10*time.Second)
		d, rerr := c.Receive(rctx)
		rcancel()
		if rerr != nil {
			t.Fatalf("the Nack of the second delivery of m1 (its first acked) returned nil, so m1 must come again: %v", rerr)
		}
		if string(d.Payload) != "m1" {
			t.Fatalf("after the nack received %q; want m1", d.Payload)
		}
	}
}
