package memory

import (
	"context"
	"sync"

	"github.com/pubsub-conformance/harness/backends"
	"github.com/pubsub-conformance/harness/backends/mutants"
)

// Known-bad variants only the reference backend can express without touching a client library.
// They join the shared mutant catalogue (registered as "memory~<variant>") so the self-test can
// prove the matching specs fail.
func init() {
	mutants.Catalogue = append(mutants.Catalogue,
		mutants.Variant{
			Name:   "close-unsubscribes",
			Defect: "Consumer.Close unsubscribes: the subscription and its position are dropped (the seed's unsubscribe() bug)",
			Bases:  []string{Name},
			Wrap: func(b backends.Backend) backends.Backend {
				mb, ok := b.(*Backend)
				if !ok {
					return b
				}
				return &closeUnsubscribes{Backend: mb}
			},
		},
		mutants.Variant{
			Name:   "latest-race",
			Defect: "Consumer returns before the subscription exists; it is created at latest on the first Receive (the seed's blocking bug)",
			Bases:  []string{Name},
			Wrap:   func(b backends.Backend) backends.Backend { return &lateSubscribe{Backend: b} },
		},
	)
}

type closeUnsubscribes struct{ *Backend }

func (b *closeUnsubscribes) Consumer(ctx context.Context, topic, sub string, opts ...backends.ConsumerOption) (backends.Consumer, error) {
	c, err := b.Backend.Consumer(ctx, topic, sub, opts...)
	if err != nil {
		return nil, err
	}
	return &unsubscribingConsumer{Consumer: c, be: b.Backend, topic: topic, sub: sub}, nil
}

type unsubscribingConsumer struct {
	backends.Consumer
	be         *Backend
	topic, sub string
}

func (c *unsubscribingConsumer) Close(ctx context.Context) error {
	if err := c.Consumer.Close(ctx); err != nil {
		return err
	}
	return c.be.Unsubscribe(ctx, c.topic, c.sub)
}

type lateSubscribe struct{ backends.Backend }

func (b *lateSubscribe) Consumer(ctx context.Context, topic, sub string, opts ...backends.ConsumerOption) (backends.Consumer, error) {
	if _, err := backends.ParseTopic(topic); err != nil {
		return nil, err
	}
	return &lazyConsumer{b: b.Backend, topic: topic, sub: sub, opts: opts}, nil
}

// lazyConsumer subscribes on its first Receive: whatever was sent before that is missed.
type lazyConsumer struct {
	b     backends.Backend
	topic string
	sub   string
	opts  []backends.ConsumerOption
	mu    sync.Mutex
	c     backends.Consumer
}

func (l *lazyConsumer) get(ctx context.Context) (backends.Consumer, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.c == nil {
		c, err := l.b.Consumer(ctx, l.topic, l.sub, l.opts...)
		if err != nil {
			return nil, err
		}
		l.c = c
	}
	return l.c, nil
}

func (l *lazyConsumer) Receive(ctx context.Context) (backends.Delivery, error) {
	c, err := l.get(ctx)
	if err != nil {
		return backends.Delivery{}, err
	}
	return c.Receive(ctx)
}

func (l *lazyConsumer) Ack(ctx context.Context, d backends.Delivery) error {
	c, err := l.get(ctx)
	if err != nil {
		return err
	}
	return c.Ack(ctx, d)
}

func (l *lazyConsumer) Nack(ctx context.Context, d backends.Delivery) error {
	c, err := l.get(ctx)
	if err != nil {
		return err
	}
	return c.Nack(ctx, d)
}

func (l *lazyConsumer) Close(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.c == nil {
		return nil
	}
	return l.c.Close(ctx)
}
