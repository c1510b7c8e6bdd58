package raw

import (
	"context"
	"errors"
	"fmt"
	"time"

	ck "github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/pubsub-conformance/harness/backends"
	"github.com/pubsub-conformance/harness/backends/kafka"
	"github.com/pubsub-conformance/harness/bench"
)

// kafkaProducerConfig is librdkafka's defaults plus the contract's guarantees: acks from all
// in-sync replicas and no duplicates from internal retries (the backend sets both too).
// Batching (linger.ms) stays at the library default: this is the client as its users get it.
var kafkaProducerConfig = map[string]any{
	"acks":               "all",
	"enable.idempotence": true,
}

// kafkaBackendSettings are the backend's own producer performance settings (backends/kafka
// producerConfig), for the raw-same-settings baseline: keep them in step.
var kafkaBackendSettings = map[string]any{"linger.ms": 2}

// Kafka is confluent-kafka-go used directly: one producer shared by every sender (as the
// backend shares one), each Send waiting for its own delivery report; a consumer per receiver,
// assigned to the topic's partition at its end, committing each acknowledged offset
// synchronously (the contract's Ack returns after the commit).
type Kafka struct {
	bootstrap string
	extra     map[string]any
	p         *ck.Producer
	done      chan struct{}
}

// NewKafka connects a producer to bootstrap with kafkaProducerConfig and then extra.
func NewKafka(bootstrap string, extra map[string]any) (*Kafka, error) {
	m := ck.ConfigMap{"bootstrap.servers": bootstrap}
	for k, v := range kafkaProducerConfig {
		m[k] = v
	}
	for k, v := range extra {
		m[k] = v
	}
	p, err := ck.NewProducer(&m)
	if err != nil {
		return nil, fmt.Errorf("raw kafka producer: %w", err)
	}
	k := &Kafka{bootstrap: bootstrap, extra: extra, p: p, done: make(chan struct{})}
	go func() { // errors and stats not tied to one message; the sends report their own
		for {
			select {
			case <-p.Events():
			case <-k.done:
				return
			}
		}
	}()
	return k, nil
}

func (k *Kafka) Info() string {
	s := "confluent-kafka-go " + ckVersion() + ", acks=all, enable.idempotence=true"
	for key, v := range k.extra {
		s += fmt.Sprintf(", %s=%v", key, v)
	}
	return s + ", librdkafka defaults otherwise; ack stores the offset, auto commit every 100 ms"
}

func ckVersion() string { _, v := ck.LibraryVersion(); return "(librdkafka " + v + ")" }

func (k *Kafka) Close(context.Context) error {
	k.p.Flush(10_000)
	close(k.done)
	k.p.Close()
	return nil
}

// kafkaName is the backend's own mapping: the raw client uses the topic the backend created.
func kafkaName(topic string) (string, error) {
	t, err := backends.ParseTopic(topic)
	if err != nil {
		return "", err
	}
	return kafka.TopicName(t), nil
}

// ensure creates the Kafka topic when missing (1 partition, as the backend maps it): the run
// creates every topic through the backend under test, but an out-of-process adapter may name
// or create topics its own way, and the raw baseline must not depend on that.
func (k *Kafka) ensure(ctx context.Context, name string) error {
	a, err := ck.NewAdminClientFromProducer(k.p)
	if err != nil {
		return fmt.Errorf("raw kafka admin: %w", err)
	}
	defer a.Close()
	res, err := a.CreateTopics(ctx, []ck.TopicSpecification{{Topic: name, NumPartitions: 1, ReplicationFactor: 1}})
	if err != nil {
		return fmt.Errorf("raw kafka create %s: %w", name, err)
	}
	for _, r := range res {
		if r.Error.Code() != ck.ErrNoError && r.Error.Code() != ck.ErrTopicAlreadyExists {
			return fmt.Errorf("raw kafka create %s: %w", name, r.Error)
		}
	}
	return nil
}

func (k *Kafka) Sender(ctx context.Context, topic string) (bench.Sender, error) {
	name, err := kafkaName(topic)
	if err != nil {
		return nil, err
	}
	if err := k.ensure(ctx, name); err != nil {
		return nil, err
	}
	return &kafkaSender{p: k.p, name: name}, nil
}

type kafkaSender struct {
	p    *ck.Producer
	name string
}

func (s *kafkaSender) Send(ctx context.Context, payload []byte) error {
	report := make(chan ck.Event, 1)
	m := &ck.Message{TopicPartition: ck.TopicPartition{Topic: &s.name, Partition: ck.PartitionAny}, Value: payload}
	for {
		err := s.p.Produce(m, report)
		if err == nil {
			break
		}
		var kerr ck.Error
		if !errors.As(err, &kerr) || kerr.Code() != ck.ErrQueueFull || ctx.Err() != nil {
			return err
		}
		s.p.Flush(10)
	}
	select {
	case ev := <-report:
		m, ok := ev.(*ck.Message)
		if !ok {
			return fmt.Errorf("unexpected delivery event %v", ev)
		}
		return m.TopicPartition.Error
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *kafkaSender) Close(context.Context) error { return nil }

func (k *Kafka) Receiver(ctx context.Context, topic, sub string) (bench.Receiver, error) {
	name, err := kafkaName(topic)
	if err != nil {
		return nil, err
	}
	if err := k.ensure(ctx, name); err != nil {
		return nil, err
	}
	// librdkafka's at-least-once pattern, the guarantee the backend's Ack gives: an ack stores
	// the offset, the client commits stored offsets in the background every 100 ms (the
	// backend's default commit interval) and on Close.
	c, err := ck.NewConsumer(&ck.ConfigMap{
		"bootstrap.servers":        k.bootstrap,
		"group.id":                 sub,
		"enable.auto.commit":       true,
		"enable.auto.offset.store": false,
		"auto.commit.interval.ms":  100,
	})
	if err != nil {
		return nil, fmt.Errorf("raw kafka consumer: %w", err)
	}
	timeout := 10_000
	if dl, ok := ctx.Deadline(); ok {
		timeout = max(int(time.Until(dl)/time.Millisecond), 1)
	}
	// Live on return: assigned at the partition's current end, no group join to wait for.
	_, high, err := c.QueryWatermarkOffsets(name, 0, timeout)
	if err == nil {
		err = c.Assign([]ck.TopicPartition{{Topic: &name, Partition: 0, Offset: ck.Offset(high)}})
	}
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("raw kafka consumer on %s: %w", name, err)
	}
	return &kafkaReceiver{c: c, name: name}, nil
}

type kafkaReceiver struct {
	c    *ck.Consumer
	name string
}

func (r *kafkaReceiver) Receive(ctx context.Context) ([]byte, func(context.Context) error, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		m, err := r.c.ReadMessage(100 * time.Millisecond)
		if err != nil {
			var kerr ck.Error
			if errors.As(err, &kerr) && kerr.IsTimeout() {
				continue
			}
			return nil, nil, err
		}
		tp := m.TopicPartition
		ack := func(context.Context) error {
			_, err := r.c.StoreOffsets([]ck.TopicPartition{{Topic: &r.name, Partition: tp.Partition, Offset: tp.Offset + 1}})
			return err
		}
		return m.Value, ack, nil
	}
}

func (r *kafkaReceiver) Close(context.Context) error { return r.c.Close() }
