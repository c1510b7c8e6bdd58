package history

import (
	"context"
	"fmt"
	"time"

	"github.com/pubsub-conformance/harness/backends"
)

// Wrap returns b recording every contract call on it, and on the producers and consumers it
// hands out, into r, as the client named after b (b.Name() and a number). The decorator is
// transparent: every call is passed through unchanged, with its arguments, context and result.
// The optional interfaces a caller may look for on b stay visible: Unwrap (so
// backends.FindTranscriber still finds an adapter's transcript), backends.Killer and
// backends.SubscriptionDeleter are implemented by the returned Backend exactly when b
// implements them (a Kill is recorded too).
func Wrap(b backends.Backend, r *Recorder, where string) backends.Backend {
	client := r.clientName(b.Name())
	rb := &recBackend{b: b, r: r, client: client}
	now := time.Now()
	res := "client opened"
	if where != "" {
		res += " (" + where + ")"
	}
	r.end(Op{Seq: r.begin(), Client: client, Kind: Open, Start: now, End: now, Result: res})
	_, kill := b.(backends.Killer)
	_, del := b.(backends.SubscriptionDeleter)
	switch {
	case kill && del:
		return &struct {
			*recBackend
			killer
			deleter
		}{rb, killer{rb}, deleter{rb}}
	case kill:
		return &struct {
			*recBackend
			killer
		}{rb, killer{rb}}
	case del:
		return &struct {
			*recBackend
			deleter
		}{rb, deleter{rb}}
	}
	return rb
}

type recBackend struct {
	b      backends.Backend
	r      *Recorder
	client string
}

// call records one call of kind on the client: fill sets the op's arguments before the call
// (op.Start is set), fn makes the call.
func (rb *recBackend) record(ctx context.Context, op Op, fn func() error) error {
	op.Seq = rb.r.begin()
	op.Client = rb.client
	if dl, ok := ctx.Deadline(); ok {
		op.Deadline = dl
	}
	op.Start = time.Now()
	op.Err = fn()
	op.End = time.Now()
	rb.r.end(op)
	return op.Err
}

// recordOp is record for calls that fill in their result after the call.
func (rb *recBackend) recordOp(ctx context.Context, op *Op, fn func(op *Op) error) error {
	op.Seq = rb.r.begin()
	op.Client = rb.client
	if dl, ok := ctx.Deadline(); ok {
		op.Deadline = dl
	}
	op.Start = time.Now()
	op.Err = fn(op)
	op.End = time.Now()
	rb.r.end(*op)
	return op.Err
}

func (rb *recBackend) Unwrap() backends.Backend                    { return rb.b }
func (rb *recBackend) Name() string                                { return rb.b.Name() }
func (rb *recBackend) Unsupported() map[backends.Capability]string { return rb.b.Unsupported() }

func (rb *recBackend) Producer(ctx context.Context, topic string) (backends.Producer, error) {
	var p backends.Producer
	op := Op{Kind: NewProducer, Topic: topic}
	err := rb.recordOp(ctx, &op, func(op *Op) error {
		var err error
		p, err = rb.b.Producer(ctx, topic)
		if err == nil {
			op.Handle = rb.r.handle("p")
		}
		return err
	})
	if err != nil {
		return p, err
	}
	return &recProducer{p: p, rb: rb, handle: op.Handle, topic: topic}, nil
}

func (rb *recBackend) Consumer(ctx context.Context, topic, sub string, opts ...backends.ConsumerOption) (backends.Consumer, error) {
	var c backends.Consumer
	op := Op{Kind: NewConsumer, Topic: topic, Subscription: sub}
	var s backends.ConsumerSettings
	for _, o := range opts {
		if o != nil {
			o(&s)
		}
	}
	op.Position, op.Mode = s.Position, s.Mode
	if t, err := backends.ParseTopic(topic); err == nil {
		op.Mode = backends.ApplyConsumerOptions(t, opts...).Mode
	}
	err := rb.recordOp(ctx, &op, func(op *Op) error {
		var err error
		c, err = rb.b.Consumer(ctx, topic, sub, opts...)
		if err == nil {
			op.Handle = rb.r.handle("c")
		}
		return err
	})
	if err != nil {
		return c, err
	}
	return &recConsumer{c: c, rb: rb, handle: op.Handle, topic: topic, sub: sub}, nil
}

func (rb *recBackend) CreateTopic(ctx context.Context, topic string, opts ...backends.TopicOption) error {
	return rb.record(ctx, Op{Kind: CreateTopic, Topic: topic, Result: topicOpts(opts)}, func() error {
		return rb.b.CreateTopic(ctx, topic, opts...)
	})
}

func (rb *recBackend) EnsureTopic(ctx context.Context, topic string, opts ...backends.TopicOption) error {
	return rb.record(ctx, Op{Kind: EnsureTopic, Topic: topic, Result: topicOpts(opts)}, func() error {
		return rb.b.EnsureTopic(ctx, topic, opts...)
	})
}

func topicOpts(opts []backends.TopicOption) string {
	var s backends.TopicSettings
	for _, o := range opts {
		if o != nil {
			o(&s)
		}
	}
	if s.Retention == 0 {
		return ""
	}
	return fmt.Sprintf("ok (retention %s asked)", s.Retention)
}

func (rb *recBackend) DeleteTopic(ctx context.Context, topic string) error {
	return rb.record(ctx, Op{Kind: DeleteTopic, Topic: topic}, func() error { return rb.b.DeleteTopic(ctx, topic) })
}

func (rb *recBackend) TopicExists(ctx context.Context, topic string) (bool, error) {
	var ok bool
	err := rb.recordOp(ctx, &Op{Kind: TopicExists, Topic: topic}, func(op *Op) error {
		var err error
		ok, err = rb.b.TopicExists(ctx, topic)
		op.Result = fmt.Sprintf("exists=%v", ok)
		return err
	})
	return ok, err
}

func (rb *recBackend) Retention(ctx context.Context, topic string) (time.Duration, error) {
	var d time.Duration
	err := rb.recordOp(ctx, &Op{Kind: Retention, Topic: topic}, func(op *Op) error {
		var err error
		d, err = rb.b.Retention(ctx, topic)
		op.Result = d.String()
		return err
	})
	return d, err
}

func (rb *recBackend) Close(ctx context.Context) error {
	return rb.record(ctx, Op{Kind: CloseBackend}, func() error { return rb.b.Close(ctx) })
}

type killer struct{ rb *recBackend }

// Kill forwards backends.Killer, recorded.
func (k killer) Kill() {
	_ = k.rb.record(context.Background(), Op{Kind: Kill}, func() error {
		k.rb.b.(backends.Killer).Kill()
		return nil
	})
}

type deleter struct{ rb *recBackend }

// DeleteSubscription forwards backends.SubscriptionDeleter (not a contract call: recorded as a
// DeleteTopic-like admin note would mislead the checkers, so it is passed through unrecorded).
func (d deleter) DeleteSubscription(ctx context.Context, topic, sub string) error {
	return d.rb.b.(backends.SubscriptionDeleter).DeleteSubscription(ctx, topic, sub)
}

type recProducer struct {
	p      backends.Producer
	rb     *recBackend
	handle string
	topic  string
}

func (p *recProducer) Send(ctx context.Context, m backends.Message) error {
	return p.rb.record(ctx, Op{Kind: Send, Handle: p.handle, Topic: p.topic,
		Key: KeyOf(m.Payload), Summary: Summarise(m.Payload, m.Properties)}, func() error {
		return p.p.Send(ctx, m)
	})
}

func (p *recProducer) Close(ctx context.Context) error {
	return p.rb.record(ctx, Op{Kind: CloseProducer, Handle: p.handle, Topic: p.topic}, func() error {
		return p.p.Close(ctx)
	})
}

type recConsumer struct {
	c          backends.Consumer
	rb         *recBackend
	handle     string
	topic, sub string
}

func (c *recConsumer) op(kind Kind) Op {
	return Op{Kind: kind, Handle: c.handle, Topic: c.topic, Subscription: c.sub}
}

func (c *recConsumer) Receive(ctx context.Context) (backends.Delivery, error) {
	var d backends.Delivery
	op := c.op(Receive)
	err := c.rb.recordOp(ctx, &op, func(op *Op) error {
		var err error
		d, err = c.c.Receive(ctx)
		if err == nil {
			op.Delivery, op.Key, op.Summary = d.ID, KeyOf(d.Payload), Summarise(d.Payload, d.Properties)
			if d.Topic != c.topic {
				op.Result = "ok, Delivery.Topic=" + fmt.Sprintf("%q", d.Topic)
			}
		}
		return err
	})
	return d, err
}

func (c *recConsumer) settle(ctx context.Context, kind Kind, d backends.Delivery, fn func() error) error {
	op := c.op(kind)
	op.Delivery, op.Key, op.Summary = d.ID, KeyOf(d.Payload), Summarise(d.Payload, d.Properties)
	return c.rb.record(ctx, op, fn)
}

func (c *recConsumer) Ack(ctx context.Context, d backends.Delivery) error {
	return c.settle(ctx, Ack, d, func() error { return c.c.Ack(ctx, d) })
}

func (c *recConsumer) Nack(ctx context.Context, d backends.Delivery) error {
	return c.settle(ctx, Nack, d, func() error { return c.c.Nack(ctx, d) })
}

func (c *recConsumer) Close(ctx context.Context) error {
	return c.rb.record(ctx, c.op(CloseConsumer), func() error { return c.c.Close(ctx) })
}
