package raw

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sync"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/pubsub-conformance/harness/backends"
	"github.com/pubsub-conformance/harness/bench"
	"github.com/pubsub-conformance/harness/fixtures"
	"github.com/pubsub-conformance/harness/reports"
)

func init() {
	register(fixtures.RabbitMQ, func(ep fixtures.Endpoints) ([]bench.Client, error) {
		r, err := NewRabbitMQ(ep)
		if err != nil {
			return nil, err
		}
		// No raw-same-settings baseline: the library's defaults are the only settings here.
		return []bench.Client{{Name: reports.ClientRaw, T: r}}, nil
	})
}

// RabbitMQ is amqp091-go used directly: a topic is a durable fanout exchange, a subscription a
// durable queue bound to it (its consumers compete, as a shared subscription's do). A sender is
// a channel in confirm mode publishing persistent messages, each Send waiting for the broker's
// confirm; a receiver consumes its queue with manual acks (the library's default prefetch), an
// ack sent at once (AMQP 0-9-1 has no receipt for acks). A receiver's queue is deleted on
// Close, so later workloads on the same topic fill no queue nobody reads.
type RabbitMQ struct {
	conn *amqp.Connection
	mu   sync.Mutex // serialises declarations on ch
	ch   *amqp.Channel
}

// NewRabbitMQ connects to the plain side of ep (its AMQP listener, user and vhost).
func NewRabbitMQ(ep fixtures.Endpoints) (*RabbitMQ, error) {
	u := url.URL{Scheme: "amqp", User: url.UserPassword(ep.Username, ep.Password), Host: ep.AMQP, Path: "/"}
	conn, err := amqp.DialConfig(u.String(), amqp.Config{Vhost: ep.VHost})
	if err != nil {
		return nil, fmt.Errorf("raw rabbitmq connection to %s: %w", ep.AMQP, err)
	}
	ch, err := conn.Channel()
	if err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf("raw rabbitmq channel: %w", err)
	}
	return &RabbitMQ{conn: conn, ch: ch}, nil
}

func (r *RabbitMQ) Info() string {
	return "amqp091-go, fanout exchange per topic, durable queue per subscription, persistent publish with publisher confirms, manual acks"
}

func (r *RabbitMQ) Close(context.Context) error { return r.conn.Close() }

// rabbitmqExchange names the exchange of a contract topic.
func rabbitmqExchange(topic string) (string, error) {
	t, err := backends.ParseTopic(topic)
	if err != nil {
		return "", err
	}
	return "bench." + string(t.Class) + "." + t.Space + "." + t.Name, nil
}

func (r *RabbitMQ) declare(exchange string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.ch.ExchangeDeclare(exchange, amqp.ExchangeFanout, true, false, false, false, nil); err != nil {
		return fmt.Errorf("raw rabbitmq declare exchange %s: %w", exchange, err)
	}
	return nil
}

func (r *RabbitMQ) Sender(_ context.Context, topic string) (bench.Sender, error) {
	ex, err := rabbitmqExchange(topic)
	if err != nil {
		return nil, err
	}
	if err := r.declare(ex); err != nil {
		return nil, err
	}
	ch, err := r.conn.Channel()
	if err != nil {
		return nil, fmt.Errorf("raw rabbitmq sender channel: %w", err)
	}
	if err := ch.Confirm(false); err != nil {
		_ = ch.Close()
		return nil, fmt.Errorf("raw rabbitmq confirm mode: %w", err)
	}
	return rabbitmqSender{ch: ch, exchange: ex}, nil
}

type rabbitmqSender struct {
	ch       *amqp.Channel
	exchange string
}

// Send publishes and waits for the broker's confirm; a nack is an error. Channels are safe
// for concurrent publishing; each confirm is matched to its publish by delivery tag.
func (s rabbitmqSender) Send(ctx context.Context, payload []byte) error {
	dc, err := s.ch.PublishWithDeferredConfirmWithContext(ctx, s.exchange, "", false, false,
		amqp.Publishing{DeliveryMode: amqp.Persistent, Body: payload})
	if err != nil {
		return err
	}
	ok, err := dc.WaitContext(ctx)
	if err != nil {
		return err
	}
	if !ok {
		return errors.New("raw rabbitmq: publish nacked by the broker")
	}
	return nil
}

func (s rabbitmqSender) Close(context.Context) error { return s.ch.Close() }

func (r *RabbitMQ) Receiver(_ context.Context, topic, sub string) (bench.Receiver, error) {
	ex, err := rabbitmqExchange(topic)
	if err != nil {
		return nil, err
	}
	if err := r.declare(ex); err != nil {
		return nil, err
	}
	ch, err := r.conn.Channel()
	if err != nil {
		return nil, fmt.Errorf("raw rabbitmq receiver channel: %w", err)
	}
	q := ex + "." + sub
	if _, err := ch.QueueDeclare(q, true, false, false, false, nil); err != nil {
		_ = ch.Close()
		return nil, fmt.Errorf("raw rabbitmq declare queue %s: %w", q, err)
	}
	// Live from here: the binding routes every later publish to the queue.
	if err := ch.QueueBind(q, "", ex, false, nil); err != nil {
		_ = ch.Close()
		return nil, fmt.Errorf("raw rabbitmq bind %s to %s: %w", q, ex, err)
	}
	ds, err := ch.Consume(q, "", false, false, false, false, nil)
	if err != nil {
		_ = ch.Close()
		return nil, fmt.Errorf("raw rabbitmq consume %s: %w", q, err)
	}
	return &rabbitmqReceiver{ch: ch, queue: q, ds: ds}, nil
}

type rabbitmqReceiver struct {
	ch    *amqp.Channel
	queue string
	ds    <-chan amqp.Delivery
}

func (r *rabbitmqReceiver) Receive(ctx context.Context) ([]byte, func(context.Context) error, error) {
	select {
	case d, ok := <-r.ds:
		if !ok {
			return nil, nil, errors.New("raw rabbitmq: delivery channel closed")
		}
		return d.Body, func(context.Context) error { return d.Ack(false) }, nil
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	}
}

func (r *rabbitmqReceiver) Close(context.Context) error {
	_, derr := r.ch.QueueDelete(r.queue, false, false, false)
	return errors.Join(derr, r.ch.Close())
}
