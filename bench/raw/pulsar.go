package raw

import (
	"context"
	"fmt"

	"github.com/apache/pulsar-client-go/pulsar"
	plog "github.com/apache/pulsar-client-go/pulsar/log"

	"github.com/pubsub-conformance/harness/backends"
	bpulsar "github.com/pubsub-conformance/harness/backends/pulsar"
	"github.com/pubsub-conformance/harness/bench"
)

// Pulsar is pulsar-client-go used directly with its defaults: a producer per sender topic
// (batching as shipped; a synchronous Send flushes its batch at once), Send waiting for the
// broker's receipt; a Shared subscription at the latest position, acks with the broker's
// response (the contract's Ack returns after it).
type Pulsar struct {
	client pulsar.Client
	// noBatching is the backend's own producer setting (backends/pulsar Producer), for the
	// raw-same-settings baseline.
	noBatching bool
}

// NewPulsar creates a client for serviceURL (pulsar://host:port); noBatching turns producer
// batching off as the backend does.
func NewPulsar(serviceURL string, noBatching bool) (*Pulsar, error) {
	c, err := pulsar.NewClient(pulsar.ClientOptions{URL: serviceURL, Logger: plog.DefaultNopLogger()})
	if err != nil {
		return nil, fmt.Errorf("raw pulsar client: %w", err)
	}
	return &Pulsar{client: c, noBatching: noBatching}, nil
}

func (p *Pulsar) Info() string {
	if p.noBatching {
		return "pulsar-client-go, DisableBatching=true (the backend's setting), sync Send"
	}
	return "pulsar-client-go, producer defaults (batching on, sync Send), shared subscription, ack sent at once without a receipt"
}

func (p *Pulsar) Close(context.Context) error { p.client.Close(); return nil }

// pulsarName maps a contract topic like the backend does; the bench uses flow topics, which
// are persistent in either of the backend's mappings.
func pulsarName(topic string) (string, error) {
	t, err := backends.ParseTopic(topic)
	if err != nil {
		return "", err
	}
	return bpulsar.TopicName(t, false), nil
}

func (p *Pulsar) Sender(_ context.Context, topic string) (bench.Sender, error) {
	name, err := pulsarName(topic)
	if err != nil {
		return nil, err
	}
	pr, err := p.client.CreateProducer(pulsar.ProducerOptions{Topic: name, DisableBatching: p.noBatching})
	if err != nil {
		return nil, fmt.Errorf("raw pulsar producer on %s: %w", name, err)
	}
	return pulsarSender{pr}, nil
}

type pulsarSender struct{ p pulsar.Producer }

func (s pulsarSender) Send(ctx context.Context, payload []byte) error {
	_, err := s.p.Send(ctx, &pulsar.ProducerMessage{Payload: payload})
	return err
}

func (s pulsarSender) Close(context.Context) error { s.p.Close(); return nil }

func (p *Pulsar) Receiver(_ context.Context, topic, sub string) (bench.Receiver, error) {
	name, err := pulsarName(topic)
	if err != nil {
		return nil, err
	}
	c, err := p.client.Subscribe(pulsar.ConsumerOptions{
		Topic: name, SubscriptionName: sub, Type: pulsar.Shared,
		SubscriptionInitialPosition: pulsar.SubscriptionPositionLatest,
		// As the backend acks: each ack sent at once, no receipt awaited.
		AckGroupingOptions: &pulsar.AckGroupingOptions{MaxSize: 1},
	})
	if err != nil {
		return nil, fmt.Errorf("raw pulsar subscribe on %s: %w", name, err)
	}
	return pulsarReceiver{c}, nil
}

type pulsarReceiver struct{ c pulsar.Consumer }

func (r pulsarReceiver) Receive(ctx context.Context) ([]byte, func(context.Context) error, error) {
	m, err := r.c.Receive(ctx)
	if err != nil {
		return nil, nil, err
	}
	return m.Payload(), func(context.Context) error { return r.c.Ack(m) }, nil
}

func (r pulsarReceiver) Close(context.Context) error { r.c.Close(); return nil }
