package pulsar

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"

	"github.com/pubsub-conformance/harness/backends"
)

// Issue 32's shapes of "redelivery of an acked message" under W2, each forced here without a
// fault.

// TestIntegrationResendIsWrittenOnce: a pulsar-client-go producer whose connection is replaced
// sends every message it holds no receipt for again, with its producer name and the same
// sequence ID (producer_partition.go, grabCnx). To the broker that is the same message twice
// from that producer; here a producer sends it twice so, on purpose, on a topic the backend
// created. Without deduplication both are written (shape a: the same payload with another
// message ID); with the policy the backend sets, one is.
func TestIntegrationResendIsWrittenOnce(t *testing.T) {
	for _, allPers := range []bool{false, true} {
		t.Run(fmt.Sprintf("allPersistent=%v", allPers), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			b := open(t, allPers)
			topic := uniqueTopic("flow")
			c, err := b.Consumer(ctx, topic, "s", backends.WithPosition(backends.Earliest))
			if err != nil {
				t.Fatalf("consumer: %v", err)
			}
			defer func() { _ = c.Close(ctx) }()
			r, err := b.(*Backend).resolve(topic)
			if err != nil {
				t.Fatal(err)
			}
			raw, err := b.(*Backend).client.CreateProducer(pulsar.ProducerOptions{
				Topic: r.fullName(), Name: "resend-" + uniqueSuffix(), DisableBatching: true})
			if err != nil {
				t.Fatalf("raw producer: %v", err)
			}
			defer raw.Close()
			seq := int64(7)
			for i := range 2 {
				if _, err := raw.Send(ctx, &pulsar.ProducerMessage{Payload: []byte("once"), SequenceID: &seq}); err != nil {
					t.Fatalf("send %d: %v", i, err)
				}
			}
			next := int64(8)
			if _, err := raw.Send(ctx, &pulsar.ProducerMessage{Payload: []byte("next"), SequenceID: &next}); err != nil {
				t.Fatalf("send next: %v", err)
			}
			var got []string
			for {
				d := receive(t, c, 10*time.Second)
				got = append(got, string(d.Payload))
				if err := c.Ack(ctx, d); err != nil {
					t.Fatalf("ack: %v", err)
				}
				if string(d.Payload) == "next" {
					break
				}
			}
			st, _ := b.(*Backend).admin.stats(ctx, r)
			if fmt.Sprint(got) != "[once next]" {
				t.Fatalf("received %q, want [once next]: the second send of sequence ID 7 (a resend) was written again (the topic's deduplication status: %q)", got, st.DeDuplicationStatus)
			}
		})
	}
}
