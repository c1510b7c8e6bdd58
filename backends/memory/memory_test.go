package memory

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/pubsub-conformance/harness/backends"
)

// The catalogue runs against this backend in suite/; these tests cover what the catalogue
// cannot reach: the reference-only hooks (Restart, Kill, Unsubscribe) and error sentinels.

func recv(t *testing.T, c backends.Consumer) (backends.Delivery, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	return c.Receive(ctx)
}

func TestRestartKeepsDurableDropsTransientAndReleasesInFlight(t *testing.T) {
	ctx := context.Background()
	br := NewBroker()
	b, _ := br.Open(ctx, backends.Config{})
	for _, topic := range []string{"flow:tg:r", "request:tg:r"} {
		c, err := b.Consumer(ctx, topic, "s")
		if err != nil {
			t.Fatal(err)
		}
		p, _ := b.Producer(ctx, topic)
		if err := p.Send(ctx, backends.Message{Payload: []byte("m")}); err != nil {
			t.Fatal(err)
		}
		if _, err := recv(t, c); err != nil { // in flight, unacked
			t.Fatalf("%s: %v", topic, err)
		}
	}
	br.Restart()
	fc, _ := b.Consumer(ctx, "flow:tg:r", "s")
	if d, err := recv(t, fc); err != nil || string(d.Payload) != "m" {
		t.Errorf("flow message after restart: %q, %v; want m", d.Payload, err)
	}
	rc, _ := b.Consumer(ctx, "request:tg:r", "s")
	if _, err := recv(t, rc); !errors.Is(err, backends.ErrTimeout) {
		t.Errorf("request message survived the restart: %v", err)
	}
}

func TestKillReleasesAndClosesEverything(t *testing.T) {
	ctx := context.Background()
	br := NewBroker()
	a, _ := br.Open(ctx, backends.Config{})
	b, _ := br.Open(ctx, backends.Config{})
	ca, _ := a.Consumer(ctx, "k", "s")
	p, _ := b.Producer(ctx, "k")
	_ = p.Send(ctx, backends.Message{Payload: []byte("m")})
	if _, err := recv(t, ca); err != nil {
		t.Fatal(err)
	}
	a.Kill()
	if _, err := recv(t, ca); !errors.Is(err, backends.ErrClosed) {
		t.Errorf("receive on a killed connection: %v; want ErrClosed", err)
	}
	if _, err := a.Producer(ctx, "k"); !errors.Is(err, backends.ErrClosed) {
		t.Errorf("producer on a killed connection: %v; want ErrClosed", err)
	}
	cb, _ := b.Consumer(ctx, "k", "s")
	if d, err := recv(t, cb); err != nil || string(d.Payload) != "m" {
		t.Errorf("killed connection's unacked message: %q, %v; want m for the next member", d.Payload, err)
	}
}

func TestUnsubscribeAndSettleErrors(t *testing.T) {
	ctx := context.Background()
	b, _ := NewBroker().Open(ctx, backends.Config{})
	c, _ := b.Consumer(ctx, "u", "s")
	p, _ := b.Producer(ctx, "u")
	_ = p.Send(ctx, backends.Message{Payload: []byte("1")})
	d, err := recv(t, c)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Ack(ctx, backends.Delivery{ID: "nope"}); !errors.Is(err, backends.ErrUnknownDelivery) {
		t.Errorf("ack of a foreign id: %v; want ErrUnknownDelivery", err)
	}
	if err := c.Ack(ctx, d); err != nil {
		t.Fatal(err)
	}
	if err := c.Ack(ctx, d); err != nil {
		t.Errorf("acking twice: %v; want nil", err)
	}
	_ = c.Close(ctx)
	if err := b.Unsubscribe(ctx, "u", "s"); err != nil {
		t.Fatal(err)
	}
	_ = p.Send(ctx, backends.Message{Payload: []byte("2")})
	c2, _ := b.Consumer(ctx, "u", "s") // fresh at latest: "2" was sent before it existed
	if got, err := recv(t, c2); !errors.Is(err, backends.ErrTimeout) {
		t.Errorf("after Unsubscribe the name must start fresh; got %q, %v", got.Payload, err)
	}
	if _, err := b.Consumer(ctx, "u", ""); !errors.Is(err, backends.ErrInvalidConfig) {
		t.Errorf("empty subscription name: %v; want ErrInvalidConfig", err)
	}
}

// A private instance is its own broker: New reaches it through the instance's settings, and
// nothing sent there shows on the process broker.
func TestInstanceIsAPrivateBrokerReachedBySettings(t *testing.T) {
	ctx := context.Background()
	inst := NewInstance()
	cfg := backends.Config{Backend: Name, Settings: inst.Settings()}
	b, err := New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.CreateTopic(ctx, "flow:tg:inst"); err != nil {
		t.Fatal(err)
	}
	other, _ := New(ctx, backends.Config{Backend: Name})
	if ok, err := other.TopicExists(ctx, "flow:tg:inst"); err != nil || ok {
		t.Errorf("the process broker sees the private instance's topic: %v %v", ok, err)
	}
	again, _ := New(ctx, cfg)
	if ok, err := again.TopicExists(ctx, "flow:tg:inst"); err != nil || !ok {
		t.Errorf("a second client of the instance does not see its topic: %v %v", ok, err)
	}
	inst.Restart()
	inst.Close()
	inst.Close() // idempotent
	if _, err := New(ctx, cfg); !errors.Is(err, backends.ErrInvalidConfig) {
		t.Errorf("New on a closed instance: %v; want ErrInvalidConfig", err)
	}
}
