package kafka

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/pubsub-conformance/harness/backends"
)

// DeleteSubscription removes the group's committed position: a reopened subscription then
// starts fresh (at latest) instead of resuming at its unacked message; deleting again, or a
// group that never existed, is not an error.
func TestDeleteSubscriptionDropsThePosition(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b := open(t, ctx)
	topic := "flow:tg:" + unique("delsub")
	sub := unique("sub")
	p, err := b.Producer(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(ctx)
	c, err := b.Consumer(ctx, topic, sub, backends.WithPosition(backends.Earliest))
	if err != nil {
		t.Fatal(err)
	}
	send(t, ctx, p, "m0", "m1")
	got := receive(t, ctx, c, "m0", "m1")
	if err := c.Ack(ctx, got[0]); err != nil { // m1 stays unacked
		t.Fatal(err)
	}
	if err := c.Close(ctx); err != nil {
		t.Fatal(err)
	}
	group, _ := groupName(sub, backends.Shared)
	if left, err := b.committed(ctx, group, TopicName(backends.MustParseTopic(topic))); err != nil || !left {
		t.Fatalf("before delete: committed %v, err %v; want a committed position", left, err)
	}
	if err := b.DeleteSubscription(ctx, topic, sub); err != nil {
		t.Fatalf("DeleteSubscription: %v", err)
	}
	if left, err := b.committed(ctx, group, TopicName(backends.MustParseTopic(topic))); err != nil || left {
		t.Fatalf("after delete: committed %v, err %v; want none", left, err)
	}
	if err := b.DeleteSubscription(ctx, topic, sub); err != nil {
		t.Fatalf("second DeleteSubscription: %v; want nil (idempotent)", err)
	}
	c2, err := b.Consumer(ctx, topic, sub) // latest: a fresh subscription skips m1
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close(ctx)
	send(t, ctx, p, "m2")
	receive(t, ctx, c2, "m2")
}

// With ConsumerNoWait, Consumer() returns before the group assigned the partition.
func TestConsumerNoWaitReturnsBeforeAssignment(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg := config(t, plaintext)
	cfg = cfg.WithSettings(map[string]string{"KAFKA_CONSUMER_NO_WAIT": "true"})
	bb, err := New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer bb.Close(context.Background())
	topic := "flow:tg:" + unique("nowait")
	if err := bb.CreateTopic(ctx, topic); err != nil {
		t.Fatal(err)
	}
	c, err := bb.Consumer(ctx, topic, unique("sub"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	select {
	case <-c.(*consumer).ready:
		t.Fatal("the assignment was already complete when Consumer() returned; want an early return")
	default:
	}
}

// AdminExtra gives the admin client its own settings (here: a wrong principal's protocol) while
// the data path keeps the common ones; with valid settings a separate admin client works.
func TestAdminExtraSeparateAdminClient(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg := config(t, plaintext)
	cfg = cfg.WithSettings(map[string]string{"KAFKA_ADMIN_CONFIG_CLIENT_ID": "pubsub-conformance-admin"})
	b, err := New(ctx, cfg)
	if err != nil {
		t.Fatalf("New with AdminExtra: %v", err)
	}
	defer b.Close(context.Background())
	topic := "flow:tg:" + unique("adminextra")
	if err := b.CreateTopic(ctx, topic); err != nil {
		t.Fatalf("CreateTopic through the separate admin client: %v", err)
	}
	if ok, err := b.TopicExists(ctx, topic); err != nil || !ok {
		t.Fatalf("TopicExists: %v %v", ok, err)
	}

	bad := config(t, plaintext)
	bad = bad.WithSettings(map[string]string{"KAFKA_ADMIN_CONFIG_GROUP_ID": "x"})
	if _, err := New(ctx, bad); !errors.Is(err, backends.ErrInvalidConfig) {
		t.Fatalf("AdminExtra with a managed key: %v; want ErrInvalidConfig", err)
	}
}
