package pulsar

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/apache/pulsar-client-go/pulsar"

	"github.com/pubsub-conformance/harness/backends"
)

// Producer returns a producer for topic, creating the topic (with its retention) when missing.
// Batching is off so that every Send waits for the broker's receipt of that one message.
func (b *Backend) Producer(ctx context.Context, topic string) (backends.Producer, error) {
	if err := b.checkOpen("producer"); err != nil {
		return nil, err
	}
	r, err := b.resolve(topic)
	if err != nil {
		return nil, err
	}
	what := "pulsar: create producer on " + r.fullName()
	pp, err := openTopic(ctx, b, r, what, func() (pulsar.Producer, error) {
		return runCtx(ctx, what, func() (pulsar.Producer, error) {
			return b.client.CreateProducer(pulsar.ProducerOptions{
				Topic:           r.fullName(),
				DisableBatching: true,
				// Send is bounded by the caller's ctx; the client's own send timeout is a backstop.
				SendTimeout: operationTimeout,
			})
		}, func(p pulsar.Producer) { p.Close() })
	})
	if err != nil {
		return nil, err
	}
	p := &producer{b: b, r: r, p: pp, enqueue: make(chan struct{}, 1)}
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		pp.Close()
		return nil, fmt.Errorf("pulsar: producer: %w", backends.ErrClosed)
	}
	b.producers[p] = struct{}{}
	b.mu.Unlock()
	return p, nil
}

type producer struct {
	b *Backend
	r resolved
	p pulsar.Producer

	// enqueue makes concurrent Sends hand their messages to the client one at a time: the
	// client gives a message its sequence ID in the caller's goroutine and only then queues it
	// for the connection (pulsar-client-go v0.19.0, internalSendAsync), so two Sends at once
	// can reach the broker with their sequence IDs out of order, and a deduplicating broker
	// (every topic this backend creates is one: see deduplicate) drops the lower one as a
	// resend while the client reports it sent (issue 32: D3, A7). Held only while SendAsync
	// queues the message, not while it waits for the receipt, so Sends still overlap on the
	// wire. A channel of one, not a mutex, so a Send waiting for its turn still ends with its
	// ctx.
	enqueue chan struct{}

	once     sync.Once
	closeErr error
	closed   atomic.Bool
}

// Send waits for the broker's receipt. Properties travel as message properties.
func (p *producer) Send(ctx context.Context, msg backends.Message) error {
	if p.closed.Load() {
		return fmt.Errorf("pulsar: send to %s: %w", p.r.orig, backends.ErrClosed)
	}
	payload := msg.Payload
	if payload == nil {
		payload = []byte{} // the client treats a nil payload as "no payload set"
	}
	select {
	case p.enqueue <- struct{}{}:
	case <-ctx.Done():
		return backends.CtxErr(ctx, "pulsar: send to "+p.r.orig)
	}
	done := make(chan error, 1)
	// SendAsync returns once the message is queued in sequence-ID order (or failed: then the
	// callback has run already); it blocks, within ctx, only while the client's pending queue
	// is full.
	p.p.SendAsync(ctx, &pulsar.ProducerMessage{Payload: payload, Properties: msg.Properties},
		func(_ pulsar.MessageID, _ *pulsar.ProducerMessage, err error) {
			select {
			case done <- err:
			default: // the client calls back once; never block its goroutine if not
			}
		})
	<-p.enqueue
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err != nil {
		if ctx.Err() != nil {
			return backends.CtxErr(ctx, "pulsar: send to "+p.r.orig)
		}
		return fmt.Errorf("pulsar: send to %s: %w", p.r.orig, p.b.mapErr(err))
	}
	return nil
}

// Close flushes within ctx and closes the producer. Idempotent.
func (p *producer) Close(ctx context.Context) error {
	p.once.Do(func() {
		p.closed.Store(true)
		p.b.mu.Lock()
		delete(p.b.producers, p)
		p.b.mu.Unlock()
		what := "pulsar: close producer on " + p.r.orig
		if err := p.p.FlushWithCtx(ctx); err != nil && ctx.Err() != nil {
			// Close anyway so the producer does not outlive its owner.
			go p.p.Close()
			p.closeErr = backends.CtxErr(ctx, what)
			return
		}
		_, p.closeErr = runCtx(ctx, what, func() (struct{}, error) {
			p.p.Close()
			return struct{}{}, nil
		}, nil)
	})
	return p.closeErr
}
