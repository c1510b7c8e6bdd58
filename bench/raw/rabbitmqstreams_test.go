package raw

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/pubsub-conformance/harness/bench"
	"github.com/pubsub-conformance/harness/reports"
)

// The raw stream clients (both baselines) on a real broker: the rabbitmq-streams backend gets
// them, not amqp091-go; a receiver is live when it returns, every confirmed send arrives once
// and in order, and a subscription opened again resumes after its stored offset (messages sent
// while it was closed arrive, acked ones do not).
func TestRabbitMQStreamsRoundTrip(t *testing.T) {
	ep := rabbitBroker.Endpoints(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	clients, err := For("rabbitmq-streams", ep)
	if err != nil {
		t.Fatal(err)
	}
	if len(clients) != 2 || clients[0].Name != reports.ClientRaw || clients[1].Name != reports.ClientRawSame {
		t.Fatalf("clients %v, want raw and raw-same-settings", clients)
	}
	for i, c := range clients {
		defer c.T.Close(ctx)
		if _, ok := c.T.(*RabbitMQStreams); !ok {
			t.Fatalf("%s is %T, want the stream client", c.Name, c.T)
		}
		t.Run(c.Name, func(t *testing.T) {
			streamRoundTrip(ctx, t, c.T, fmt.Sprintf("flow:tg:raw-streams-%d-%d", i, time.Now().UnixNano()))
		})
	}
}

func streamRoundTrip(ctx context.Context, t *testing.T, c bench.Target, topic string) {
	r, err := c.Receiver(ctx, topic, "sub")
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.Sender(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	send := func(from, to int) {
		for i := from; i < to; i++ {
			if err := s.Send(ctx, fmt.Appendf(nil, "m%d", i)); err != nil {
				t.Fatalf("send %d: %v", i, err)
			}
		}
	}
	receive := func(r bench.Receiver, from, to int) {
		for i := from; i < to; i++ {
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
	}
	send(0, 20)
	receive(r, 0, 20)
	if err := r.Close(ctx); err != nil {
		t.Fatalf("close receiver: %v", err)
	}
	send(20, 25)
	r, err = c.Receiver(ctx, topic, "sub")
	if err != nil {
		t.Fatal(err)
	}
	receive(r, 20, 25)
	if err := r.Close(ctx); err != nil {
		t.Fatalf("close receiver: %v", err)
	}
	if _, err := c.Sender(ctx, "bad topic"); err == nil {
		t.Error("an invalid topic must be refused")
	}
}
