package kafka

import (
	"context"
	"errors"
	"fmt"
	"sync"

	ck "github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/pubsub-conformance/harness/backends"
)

// producer sends to one topic through the backend's shared librdkafka producer.
type producer struct {
	b     *Backend
	topic string // contract topic string
	name  string // Kafka topic name

	mu       sync.Mutex
	closed   bool
	inflight sync.WaitGroup // Sends between Produce and their delivery report
}

// Producer implements backends.Backend: ensures the topic, then returns a producer for it.
func (b *Backend) Producer(ctx context.Context, topic string) (backends.Producer, error) {
	if err := b.checkOpen(); err != nil {
		return nil, err
	}
	t, err := backends.ParseTopic(topic)
	if err != nil {
		return nil, err
	}
	if err := b.EnsureTopic(ctx, topic); err != nil {
		return nil, fmt.Errorf("kafka producer: %w", err)
	}
	p := &producer{b: b, topic: topic, name: TopicName(t)}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, fmt.Errorf("kafka backend: %w", backends.ErrClosed)
	}
	b.producers[p] = struct{}{}
	return p, nil
}

// Send implements backends.Producer: returns after this message's delivery report, with its
// error. Concurrent Sends each wait for their own report (a per-message channel), so librdkafka
// still batches them.
func (p *producer) Send(ctx context.Context, msg backends.Message) error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return fmt.Errorf("kafka producer %s: %w", p.topic, backends.ErrClosed)
	}
	p.inflight.Add(1)
	p.mu.Unlock()
	defer p.inflight.Done()

	ctx, cancel := withDefault(ctx)
	defer cancel()
	km := &ck.Message{
		TopicPartition: ck.TopicPartition{Topic: &p.name, Partition: ck.PartitionAny},
		Value:          msg.Payload,
		Headers:        toHeaders(msg.Properties),
	}
	report := make(chan ck.Event, 1)
	if err := p.produce(ctx, km, report); err != nil {
		return err
	}
	select {
	case ev := <-report:
		m, ok := ev.(*ck.Message)
		if !ok {
			return fmt.Errorf("kafka send to %s: unexpected delivery event %v", p.name, ev)
		}
		if m.TopicPartition.Error != nil {
			return p.b.withClientErr(mapErr(ctx, "kafka send to "+p.name, m.TopicPartition.Error))
		}
		return nil
	case <-p.b.authFailed:
		// Bad credentials never produce a delivery report before message.timeout.ms:
		// report them now instead of hanging.
		return fmt.Errorf("kafka send to %s: %w", p.name, errors.Join(backends.ErrAuth, p.b.clientErr()))
	case <-ctx.Done():
		return p.b.withClientErr(backends.CtxErr(ctx, "kafka send to "+p.name+": waiting for the delivery report"))
	}
}

// produce hands km to librdkafka; a full local queue is back-pressure, not failure: it waits
// for room within ctx.
func (p *producer) produce(ctx context.Context, km *ck.Message, report chan ck.Event) error {
	release, err := p.b.acquire()
	if err != nil {
		return err
	}
	defer release()
	for {
		err := p.b.prod.Produce(km, report)
		if err == nil {
			return nil
		}
		if codeOf(err) != ck.ErrQueueFull {
			return mapErr(ctx, "kafka send to "+p.name, err)
		}
		if ctx.Err() != nil {
			return backends.CtxErr(ctx, "kafka send to "+p.name+": local queue full")
		}
		p.b.prod.Flush(10)
	}
}

// Close implements backends.Producer: waits (within ctx) for Sends still waiting for their
// report - their messages are then flushed - and releases the producer. Idempotent.
func (p *producer) Close(ctx context.Context) error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	p.mu.Unlock()
	defer p.b.forget(p, nil)

	done := make(chan struct{})
	go func() { p.inflight.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		return backends.CtxErr(ctx, "kafka producer "+p.topic+": close")
	}
	// Messages whose Send gave up on its ctx may still be queued: flush them within ctx.
	release, err := p.b.acquire()
	if err != nil {
		return nil // the backend closed (and flushed) already
	}
	defer release()
	return flush(ctx, p.b.prod)
}

func toHeaders(props map[string]string) []ck.Header {
	if len(props) == 0 {
		return nil
	}
	hs := make([]ck.Header, 0, len(props))
	for k, v := range props {
		hs = append(hs, ck.Header{Key: k, Value: []byte(v)})
	}
	return hs
}

// fromHeaders never returns nil: "no properties" reads as an empty map.
func fromHeaders(hs []ck.Header) map[string]string {
	props := make(map[string]string, len(hs))
	for _, h := range hs {
		props[h.Key] = string(h.Value)
	}
	return props
}
