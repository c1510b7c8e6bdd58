package rabbitmq

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/pubsub-conformance/harness/backends"
)

// Producer returns a producer for topic, creating the topic (with its retention) when missing.
// Its channel is in confirm mode (unless RABBITMQ_PUBLISH_NO_CONFIRM).
func (b *Backend) Producer(ctx context.Context, topic string) (backends.Producer, error) {
	if err := b.checkOpen("producer"); err != nil {
		return nil, err
	}
	r, err := resolve(topic)
	if err != nil {
		return nil, err
	}
	if err := b.ensure(ctx, r); err != nil {
		return nil, err
	}
	p := &producer{b: b, r: r, confirm: !b.rc.NoConfirm}
	if _, err := p.channel(ctx); err != nil {
		return nil, fmt.Errorf("rabbitmq: producer on %s: %w", r.exchange, err)
	}
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		p.closeChannel()
		return nil, fmt.Errorf("rabbitmq: producer: %w", backends.ErrClosed)
	}
	b.producers[p] = struct{}{}
	b.mu.Unlock()
	return p, nil
}

type producer struct {
	b       *Backend
	r       resolved
	confirm bool

	mu sync.Mutex // guards ch and serialises its reopening
	ch *amqp.Channel

	once     sync.Once
	closeErr error
	closed   atomic.Bool
}

// channel returns the producer's open channel, opening a new one (in confirm mode) when the
// last one closed: after a broker restart or a cut the next Send works again.
func (p *producer) channel(ctx context.Context) (*amqp.Channel, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ch != nil && !p.ch.IsClosed() {
		return p.ch, nil
	}
	ch, err := p.b.channel(ctx)
	if err != nil {
		return nil, err
	}
	if p.confirm {
		if _, err := backends.RunCtx(ctx, "rabbitmq: confirm.select", func() (struct{}, error) { return struct{}{}, ch.Confirm(false) },
			nil); err != nil {
			go ch.Close()
			if ctx.Err() != nil {
				return nil, err
			}
			return nil, fmt.Errorf("rabbitmq: confirm.select: %w", mapErr(err))
		}
	}
	p.ch = ch
	return ch, nil
}

func (p *producer) closeChannel() {
	p.mu.Lock()
	ch := p.ch
	p.ch = nil
	p.mu.Unlock()
	if ch != nil {
		_ = ch.Close()
	}
}

// Send publishes to the topic's exchange and waits for the broker's confirm of this message.
// Properties travel as message headers (string values).
func (p *producer) Send(ctx context.Context, msg backends.Message) error {
	what := "rabbitmq: send to " + p.r.exchange
	if p.closed.Load() {
		return fmt.Errorf("%s: %w", what, backends.ErrClosed)
	}
	ch, err := p.channel(ctx)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	pub := amqp.Publishing{Body: msg.Payload, DeliveryMode: amqp.Transient}
	if p.r.topic.Class.Durable() {
		pub.DeliveryMode = amqp.Persistent
	}
	if len(msg.Properties) > 0 {
		pub.Headers = make(amqp.Table, len(msg.Properties))
		for k, v := range msg.Properties {
			if len(k) > maxNameLength {
				// A header table's field name is a shortstr; the client would fail encoding it.
				return fmt.Errorf("%s: %w: property key of %d bytes; AMQP 0-9-1 header names are at most %d bytes (%.40q...)",
					what, backends.ErrInvalidConfig, len(k), maxNameLength, k)
			}
			pub.Headers[k] = v
		}
	}
	if !p.confirm {
		if err := ch.PublishWithContext(ctx, p.r.exchange, "", false, false, pub); err != nil {
			return fmt.Errorf("%s: %w", what, mapErr(err))
		}
		return nil
	}
	dc, err := ch.PublishWithDeferredConfirmWithContext(ctx, p.r.exchange, "", false, false, pub)
	if err != nil {
		if ctx.Err() != nil {
			return backends.CtxErr(ctx, what)
		}
		return fmt.Errorf("%s: %w", what, mapErr(err))
	}
	acked, err := dc.WaitContext(ctx)
	if err != nil {
		return backends.CtxErr(ctx, what+": wait for the publisher confirm")
	}
	if !acked {
		if ch.IsClosed() {
			return fmt.Errorf("%s: %w: the channel closed before the broker confirmed the message", what, backends.ErrUnavailable)
		}
		return fmt.Errorf("%s: the broker refused the message (basic.nack)", what)
	}
	return nil
}

// Close closes the producer's channel: every Send already returned, so nothing is pending.
// Idempotent.
func (p *producer) Close(ctx context.Context) error {
	p.once.Do(func() {
		p.closed.Store(true)
		p.b.mu.Lock()
		delete(p.b.producers, p)
		p.b.mu.Unlock()
		_, p.closeErr = backends.RunCtx(ctx, "rabbitmq: close producer on "+p.r.exchange, func() (struct{}, error) {
			p.closeChannel()
			return struct{}{}, nil
		}, nil)
	})
	return p.closeErr
}
