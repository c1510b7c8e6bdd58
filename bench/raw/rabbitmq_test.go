package raw

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/pubsub-conformance/harness/fixtures"
	"github.com/pubsub-conformance/harness/fixtures/brokertest"
	"github.com/pubsub-conformance/harness/reports"
)

var rabbitBroker = brokertest.Shared(fixtures.RabbitMQ)

func TestMain(m *testing.M) { os.Exit(brokertest.Main(m)) }

// The raw RabbitMQ client on a real broker: a receiver is live when it returns, every
// confirmed send arrives once, and acked messages are not delivered again after a reconnect.
func TestRabbitMQRoundTrip(t *testing.T) {
	ep := rabbitBroker.Endpoints(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	clients, err := For("rabbitmq", ep)
	if err != nil {
		t.Fatal(err)
	}
	if len(clients) != 1 || clients[0].Name != reports.ClientRaw {
		t.Fatalf("clients %v, want the raw baseline only", clients)
	}
	c := clients[0].T
	defer c.Close(ctx)
	const topic = "flow:tg:raw-roundtrip"
	r, err := c.Receiver(ctx, topic, "sub")
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.Sender(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	const n = 20
	for i := range n {
		if err := s.Send(ctx, fmt.Appendf(nil, "m%d", i)); err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
	}
	for i := range n {
		p, ack, err := r.Receive(ctx)
		if err != nil {
			t.Fatalf("receive %d: %v", i, err)
		}
		if string(p) != fmt.Sprintf("m%d", i) {
			t.Fatalf("receive %d: got %q", i, p)
		}
		if err := ack(ctx); err != nil {
			t.Fatalf("ack %d: %v", i, err)
		}
	}
	if err := r.Close(ctx); err != nil {
		t.Fatalf("close receiver: %v", err)
	}
	if _, err := c.Sender(ctx, "bad topic"); err == nil {
		t.Error("an invalid topic must be refused")
	}
}
