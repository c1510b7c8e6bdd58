package pulsar

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/pubsub-conformance/harness/backends"
)

// DeleteSubscription removes the subscription with its cursor: reopened at latest, it does not
// get the unacked message again; deleting again, or a subscription that never existed, is nil.
func TestIntegrationDeleteSubscription(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b := open(t, false)
	del := b.(backends.SubscriptionDeleter)
	topic := uniqueTopic("flow")
	p, err := b.Producer(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(ctx)
	c, err := b.Consumer(ctx, topic, "s", backends.WithPosition(backends.Earliest))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"m0", "m1"} {
		if err := p.Send(ctx, backends.Message{Payload: []byte(m)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Ack(ctx, receive(t, c, 10*time.Second)); err != nil { // m1 stays unacked
		t.Fatal(err)
	}
	receive(t, c, 10*time.Second)
	if err := c.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := del.DeleteSubscription(ctx, topic, "s"); err != nil {
		t.Fatalf("DeleteSubscription: %v", err)
	}
	if err := del.DeleteSubscription(ctx, topic, "s"); err != nil {
		t.Fatalf("second DeleteSubscription: %v; want nil (idempotent)", err)
	}
	c2, err := b.Consumer(ctx, topic, "s")
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close(ctx)
	if err := p.Send(ctx, backends.Message{Payload: []byte("m2")}); err != nil {
		t.Fatal(err)
	}
	if d := receive(t, c2, 10*time.Second); string(d.Payload) != "m2" {
		t.Fatalf("reopened after delete: got %q; want m2 (the deleted subscription's m1 must not come back)", d.Payload)
	}
}

// PULSAR_ADMIN_API_KEY is the admin calls' token: with only the admin token set, the admin API
// works and the data path is refused (the auth-admin-only misconfiguration).
func TestIntegrationAdminOnlyToken(t *testing.T) {
	cfg := brokerConfig(t, false)
	badToken(t) // needs a broker with token auth
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cfg = cfg.WithSettings(map[string]string{"PULSAR_ADMIN_API_KEY": cfg.Setting("PULSAR_API_KEY"), "PULSAR_API_KEY": ""})
	_, err := New(ctx, cfg)
	if !errors.Is(err, backends.ErrAuth) {
		t.Fatalf("admin-only token: want the data path refused with ErrAuth, got %v", err)
	}
	if pc, err := ParseConfig(cfg.Settings); err != nil || adminToken(pc) == "" {
		t.Fatal("adminToken ignored PULSAR_ADMIN_API_KEY")
	}
}
