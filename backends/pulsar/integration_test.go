package pulsar

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"

	"github.com/pubsub-conformance/harness/backends"
	"github.com/pubsub-conformance/harness/fixtures"
	"github.com/pubsub-conformance/harness/fixtures/brokertest"
)

// These tests run against a real Pulsar broker shared by this package's tests: one standalone
// broker with token authentication (so the auth tests need no second one), started through
// fixtures in TestMain and stopped there at the end (see fixtures/brokertest; PULSAR_HOST with
// PULSAR_ADMIN_URL, and PULSAR_API_KEY for an auth-enabled one, point them at an external broker
// instead). The shared suite is the full proof.

var sharedPulsar = brokertest.Shared(fixtures.Pulsar, fixtures.WithAuth())

func TestMain(m *testing.M) { os.Exit(brokertest.Main(m)) }

// brokerConfig is the one place these tests build a backends.Config: this backend's settings
// from the environment, then the shared broker's, with its valid token when it has auth.
func brokerConfig(t *testing.T, allPersistent bool) backends.Config {
	t.Helper()
	ep := sharedPulsar.Endpoints(t)
	broker := ep.Settings()
	if good, _, ok := ep.AuthSettings(); ok {
		broker = good
	}
	cfg := backends.Config{Backend: "pulsar", Settings: backends.Layer(Descriptor.EnvSettings(os.Environ()), broker)}
	cfg = cfg.WithSettings(map[string]string{
		"PULSAR_ALL_PERSISTENT":        strconv.FormatBool(allPersistent),
		"PULSAR_NACK_REDELIVERY_DELAY": "300ms",
	})
	if os.Getenv("PULSAR_TEST_LOG") != "" {
		cfg.Log = os.Stderr
	}
	return cfg
}

// badToken is a well-formed token the shared broker refuses; tests that need one skip, with
// the reason, on a broker without token auth (an external one without PULSAR_API_KEY).
func badToken(t *testing.T) string {
	t.Helper()
	ep := sharedPulsar.Endpoints(t)
	_, bad, ok := ep.AuthSettings()
	if !ok {
		t.Skipf("the %s Pulsar broker has no token auth (external: set PULSAR_API_KEY)", ep.Provider)
	}
	return bad["PULSAR_API_KEY"]
}

func open(t *testing.T, allPersistent bool) backends.Backend {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b, err := New(ctx, brokerConfig(t, allPersistent))
	if err != nil {
		t.Fatalf("new: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := b.Close(ctx); err != nil {
			t.Errorf("close backend: %v", err)
		}
	})
	return b
}

func uniqueTopic(class string) string {
	return fmt.Sprintf("%s:it%s:t-%s", class, uniqueSuffix()[:4], uniqueSuffix())
}

func receive(t *testing.T, c backends.Consumer, within time.Duration) backends.Delivery {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	d, err := c.Receive(ctx)
	if err != nil {
		t.Fatalf("receive: %v", err)
	}
	return d
}

func TestIntegrationRoundTripEveryClass(t *testing.T) {
	for _, allPers := range []bool{false, true} {
		b := open(t, allPers)
		for _, class := range backends.Classes {
			t.Run(fmt.Sprintf("%s/%v", class, allPers), func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				topic := uniqueTopic(string(class))
				c, err := b.Consumer(ctx, topic, "s")
				if err != nil {
					t.Fatalf("consumer: %v", err)
				}
				defer c.Close(ctx)
				// Separate backend for the producer: another connection, so readiness cannot
				// ride on command order within one connection.
				b2 := open(t, allPers)
				p, err := b2.Producer(ctx, topic)
				if err != nil {
					t.Fatalf("producer: %v", err)
				}
				defer p.Close(ctx)
				msg := backends.Message{Payload: []byte("héllo"), Properties: map[string]string{"k": "ü"}}
				for range 2 {
					if err := p.Send(ctx, msg); err != nil {
						t.Fatalf("send: %v", err)
					}
				}
				d := receive(t, c, 10*time.Second)
				if string(d.Payload) != "héllo" || d.Properties["k"] != "ü" {
					t.Fatalf("got %+v", d)
				}
				// Hold both before acking: their IDs must differ even where message ids repeat.
				d2 := receive(t, c, 10*time.Second)
				if d2.ID == d.ID {
					t.Fatalf("two deliveries share the ID %q", d.ID)
				}
				t.Logf("delivery IDs %s %s", d.ID, d2.ID)
				if err := c.Ack(ctx, d2); err != nil {
					t.Fatalf("ack second: %v", err)
				}
				if err := c.Ack(ctx, d); err != nil {
					t.Fatalf("ack: %v", err)
				}
				if err := c.Ack(ctx, d); !errors.Is(err, backends.ErrUnknownDelivery) {
					t.Fatalf("second ack: want ErrUnknownDelivery, got %v", err)
				}
				ret, err := b.Retention(ctx, topic)
				if err != nil {
					t.Fatalf("retention: %v", err)
				}
				if want := class.DefaultRetention(); ret != want {
					t.Fatalf("retention: got %v want %v", ret, class.DefaultRetention())
				}
			})
		}
	}
}

func TestIntegrationNackAndReopen(t *testing.T) {
	b := open(t, true)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	topic := uniqueTopic("flow")
	c, err := b.Consumer(ctx, topic, "s", backends.WithPosition(backends.Earliest))
	if err != nil {
		t.Fatal(err)
	}
	p, err := b.Producer(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := p.Send(ctx, backends.Message{Payload: []byte{byte(i)}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Close(ctx); err != nil {
		t.Fatal(err)
	}
	d0 := receive(t, c, 10*time.Second)
	start := time.Now()
	if err := c.Nack(ctx, d0); err != nil {
		t.Fatal(err)
	}
	d1 := receive(t, c, 10*time.Second)
	d2 := receive(t, c, 10*time.Second)
	again := receive(t, c, 10*time.Second)
	if again.Payload[0] != d0.Payload[0] {
		t.Fatalf("nack: want payload %v again, got %v", d0.Payload, again.Payload)
	}
	t.Logf("nack redelivered after %v", time.Since(start))
	// ack d0 and d1 only; d2 must come back after reopen.
	for _, d := range []backends.Delivery{again, d1} {
		if err := c.Ack(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Close(ctx); err != nil {
		t.Fatal(err)
	}
	c2, err := b.Consumer(ctx, topic, "s")
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close(ctx)
	got := receive(t, c2, 10*time.Second)
	if got.Payload[0] != d2.Payload[0] {
		t.Fatalf("reopen: want %v, got %v", d2.Payload, got.Payload)
	}
	short, cancelShort := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancelShort()
	if d, err := c2.Receive(short); !errors.Is(err, backends.ErrTimeout) {
		t.Fatalf("want timeout after the only unacked message, got %+v %v", d, err)
	}
}

func TestIntegrationLifecycle(t *testing.T) {
	for _, allPers := range []bool{false, true} {
		b := open(t, allPers)
		for _, class := range backends.Classes {
			t.Run(fmt.Sprintf("%s/%v", class, allPers), func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				topic := uniqueTopic(string(class))
				check := func(want bool) {
					t.Helper()
					ok, err := b.TopicExists(ctx, topic)
					if err != nil || ok != want {
						t.Fatalf("exists: got %v, %v; want %v", ok, err, want)
					}
				}
				check(false)
				var wg sync.WaitGroup
				errs := make(chan error, 4)
				for range 4 { // concurrent creation: tenant/namespace/topic 409s are success
					wg.Add(1)
					go func() { defer wg.Done(); errs <- b.CreateTopic(ctx, topic) }()
				}
				wg.Wait()
				close(errs)
				for err := range errs {
					if err != nil {
						t.Fatalf("create: %v", err)
					}
				}
				check(true)
				if err := b.DeleteTopic(ctx, topic); err != nil {
					t.Fatal(err)
				}
				check(false)
				if err := b.DeleteTopic(ctx, topic); err != nil {
					t.Fatalf("second delete: %v", err)
				}
			})
		}
	}
}

func TestIntegrationBadAdminAndBroker(t *testing.T) {
	cfg := brokerConfig(t, false)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	bad := cfg.WithSettings(map[string]string{"PULSAR_HOST": "pulsar://127.0.0.1:1"})
	start := time.Now()
	if _, err := New(ctx, bad); !errors.Is(err, backends.ErrUnavailable) {
		t.Fatalf("dead broker: want ErrUnavailable, got %v", err)
	}
	t.Logf("dead broker refused in %v", time.Since(start))
	bad = cfg.WithSettings(map[string]string{"PULSAR_ADMIN_URL": "http://127.0.0.1:1"})
	if _, err := New(ctx, bad); !errors.Is(err, backends.ErrUnavailable) {
		t.Fatalf("dead admin: want ErrUnavailable, got %v", err)
	}
}

// TestIntegrationAuth: the shared broker's valid token works, a well-formed token signed with
// another key is refused as ErrAuth, fast.
func TestIntegrationAuth(t *testing.T) {
	cfg := brokerConfig(t, false)
	badKey := badToken(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	b := open(t, false)
	topic := uniqueTopic("flow")
	c, err := b.Consumer(ctx, topic, "s")
	if err != nil {
		t.Fatalf("consumer with a good token: %v", err)
	}
	defer c.Close(ctx)
	p, err := b.Producer(ctx, topic)
	if err != nil {
		t.Fatalf("producer with a good token: %v", err)
	}
	defer p.Close(ctx)
	if err := p.Send(ctx, backends.Message{Payload: []byte("a")}); err != nil {
		t.Fatal(err)
	}
	receive(t, c, 10*time.Second)

	bad := cfg.WithSettings(map[string]string{"PULSAR_API_KEY": badKey})
	start := time.Now()
	_, err = New(ctx, bad)
	if !errors.Is(err, backends.ErrAuth) {
		t.Fatalf("bad token: want ErrAuth, got %v", err)
	}
	t.Logf("bad token refused in %v: %v", time.Since(start), err)

	// The binary protocol on its own (the admin probe above already refuses): a client with the
	// bad token must fail its probe with ErrAuth too, not retry until a timeout.
	hs := &handshakes{ch: make(chan string, 1)}
	client, err := pulsar.NewClient(pulsar.ClientOptions{
		URL: cfg.Setting("PULSAR_HOST"), Authentication: pulsar.NewAuthenticationToken(badKey),
		OperationTimeout: operationTimeout, ConnectionTimeout: connectionTimeout, Logger: newLogger(nil, hs.observe),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	start = time.Now()
	err = probeClient(ctx, client, cfg.Setting("PULSAR_HOST"), hs)
	if !errors.Is(err, backends.ErrAuth) {
		t.Fatalf("client probe with a bad token: want ErrAuth, got %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("client probe with a bad token took %v", d)
	}
	t.Logf("client refused in %v: %v", time.Since(start), err)
}

// TestIntegrationTLS: the shared broker's pulsar+ssl:// and https:// listeners work with the
// CA that signed their certificate; trusting another CA, the admin probe and, on its own, the
// binary protocol fail fast with ErrAuth naming the certificate, not a retry until a timeout.
func TestIntegrationTLS(t *testing.T) {
	ep := sharedPulsar.Endpoints(t)
	good, wrong, ok := ep.TLSSettings()
	if !ok {
		t.Skipf("the %s Pulsar broker has no TLS listeners", ep.Provider)
	}
	base := brokerConfig(t, false)
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	b, err := New(ctx, base.WithSettings(good))
	if err != nil {
		t.Fatalf("open over TLS with the broker's CA: %v", err)
	}
	defer b.Close(ctx)
	topic := uniqueTopic("flow")
	c, err := b.Consumer(ctx, topic, "s")
	if err != nil {
		t.Fatalf("consumer over TLS: %v", err)
	}
	defer c.Close(ctx)
	p, err := b.Producer(ctx, topic)
	if err != nil {
		t.Fatalf("producer over TLS: %v", err)
	}
	defer p.Close(ctx)
	if err := p.Send(ctx, backends.Message{Payload: []byte("a")}); err != nil {
		t.Fatal(err)
	}
	receive(t, c, 10*time.Second)

	start := time.Now()
	if _, err := New(ctx, base.WithSettings(wrong)); !errors.Is(err, backends.ErrAuth) {
		t.Fatalf("wrong CA (admin first): want ErrAuth, got %v", err)
	}
	t.Logf("wrong CA refused by the admin probe in %v", time.Since(start))

	// The binary protocol alone: admin over plain http, the service URL over TLS with the
	// wrong CA.
	binOnly := base.WithSettings(wrong).WithSettings(map[string]string{"PULSAR_ADMIN_URL": ep.Auth.AdminURL})
	start = time.Now()
	_, err = New(ctx, binOnly)
	if !errors.Is(err, backends.ErrAuth) {
		t.Fatalf("wrong CA (binary protocol): want ErrAuth, got %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("wrong CA (binary protocol) took %v: %v", d, err)
	}
	t.Logf("wrong CA refused by the broker probe in %v: %v", time.Since(start), err)
}
