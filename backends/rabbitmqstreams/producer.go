package rabbitmqstreams

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rabbitmq/rabbitmq-stream-go-client/pkg/amqp"
	"github.com/rabbitmq/rabbitmq-stream-go-client/pkg/message"
	"github.com/rabbitmq/rabbitmq-stream-go-client/pkg/stream"

	"github.com/pubsub-conformance/harness/backends"
)

// confirmTimeout bounds how long the client waits for a publish-confirm before it reports the
// message unconfirmed (Send's ctx usually ends first).
const confirmTimeout = 30 * time.Second

// Producer returns a producer for topic, creating the stream when missing.
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
	p := &producer{b: b, r: r}
	if _, err := p.client(ctx); err != nil {
		return nil, fmt.Errorf("%s: producer on %s: %w", Name, r.stream, err)
	}
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		p.closeClient()
		return nil, fmt.Errorf("%s: producer: %w", Name, backends.ErrClosed)
	}
	b.producers[p] = struct{}{}
	b.mu.Unlock()
	return p, nil
}

type producer struct {
	b *Backend
	r resolved

	mu      sync.Mutex // guards sp and waiting; serialises reopening
	sp      *stream.Producer
	waiting map[message.StreamMessage]chan error

	once     sync.Once
	closeErr error
	closed   atomic.Bool
}

// client returns the open stream producer, opening one when there is none or it closed (a
// broker restart, a cut): the next Send after a reconnect works again.
func (p *producer) client(ctx context.Context) (*stream.Producer, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.sp != nil {
		return p.sp, nil
	}
	opts := stream.NewProducerOptions().SetConfirmationTimeOut(confirmTimeout).SetClientProvidedName("pubsub-conformance-producer")
	what := Name + ": open producer on " + p.r.stream
	var sp *stream.Producer
	err := p.b.withEnv(ctx, func(env *stream.Environment) error {
		return p.b.call(ctx, what, func() (err error) {
			s, err := env.NewProducer(p.r.stream, opts)
			if err == nil && ctx.Err() != nil {
				_ = s.Close() // the caller gave up waiting
				return ctx.Err()
			}
			sp = s
			return err
		})
	})
	if err != nil {
		return nil, err
	}
	p.sp = sp
	p.waiting = map[message.StreamMessage]chan error{}
	go p.confirms(sp, sp.NotifyPublishConfirmation(), sp.NotifyClose(), p.waiting)
	return sp, nil
}

// confirms hands each publish-confirm to its Send; when the producer closes, every Send still
// waiting on it fails (its message may or may not have been stored: C-SEND-3).
func (p *producer) confirms(sp *stream.Producer, confirms stream.ChannelPublishConfirm, closed stream.ChannelClose, waiting map[message.StreamMessage]chan error) {
	settle := func(m message.StreamMessage, err error) {
		p.mu.Lock()
		ch, ok := waiting[m]
		delete(waiting, m)
		p.mu.Unlock()
		if ok {
			ch <- err
		}
	}
	for {
		select {
		case batch, ok := <-confirms:
			if !ok {
				confirms = nil
				continue
			}
			for _, st := range batch {
				var err error
				if !st.IsConfirmed() {
					err = fmt.Errorf("%w: the broker did not confirm the message: %v", backends.ErrUnavailable, mapErr(st.GetError()))
				}
				settle(st.GetMessage(), err)
			}
		case ev := <-closed:
			p.mu.Lock()
			if p.sp == sp {
				p.sp = nil
			}
			rest := make([]chan error, 0, len(waiting))
			for m, ch := range waiting {
				rest = append(rest, ch)
				delete(waiting, m)
			}
			p.mu.Unlock()
			for _, ch := range rest {
				ch <- fmt.Errorf("%w: the producer's connection closed before the confirm (%s)", backends.ErrUnavailable, ev.Reason)
			}
			if !p.closed.Load() {
				p.b.logf("%s: producer on %s closed: %s %v", Name, p.r.stream, ev.Reason, ev.Err)
			}
			return
		}
	}
}

// Send publishes msg and waits for its publish-confirm.
func (p *producer) Send(ctx context.Context, msg backends.Message) error {
	what := Name + ": send to " + p.r.stream
	if p.closed.Load() {
		return fmt.Errorf("%s: %w", what, backends.ErrClosed)
	}
	if ctx.Err() != nil {
		return backends.CtxErr(ctx, what)
	}
	sp, err := p.client(ctx)
	if err != nil {
		return err
	}
	m := amqp.NewMessage(append([]byte{}, msg.Payload...))
	if len(msg.Properties) > 0 {
		m.ApplicationProperties = make(map[string]any, len(msg.Properties))
		for k, v := range msg.Properties {
			m.ApplicationProperties[k] = v
		}
	}
	done := make(chan error, 1)
	p.mu.Lock()
	if p.sp != sp {
		p.mu.Unlock()
		return fmt.Errorf("%s: %w: the producer's connection closed", what, backends.ErrUnavailable)
	}
	p.waiting[message.StreamMessage(m)] = done
	p.mu.Unlock()
	if err := sp.Send(m); err != nil {
		p.mu.Lock()
		delete(p.waiting, message.StreamMessage(m))
		if p.sp == sp {
			p.sp = nil // a closed producer: reopen on the next Send
			go func() { _ = sp.Close() }()
		}
		p.mu.Unlock()
		return fmt.Errorf("%s: %w", what, mapErr(err))
	}
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		return nil
	case <-ctx.Done():
		return backends.CtxErr(ctx, what+": wait for the broker's confirm")
	}
}

func (p *producer) closeClient() {
	p.mu.Lock()
	sp := p.sp
	p.sp = nil
	p.mu.Unlock()
	if sp != nil {
		_ = sp.Close()
	}
}

// Close closes the stream producer (the client waits for pending confirms). Idempotent.
func (p *producer) Close(ctx context.Context) error {
	p.once.Do(func() {
		p.closed.Store(true)
		p.b.mu.Lock()
		delete(p.b.producers, p)
		p.b.mu.Unlock()
		_, p.closeErr = backends.RunCtx(ctx, Name+": close producer on "+p.r.stream, func() (struct{}, error) {
			p.closeClient()
			return struct{}{}, nil
		}, nil)
	})
	return p.closeErr
}
