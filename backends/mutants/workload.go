package mutants

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/pubsub-conformance/harness/backends"
)

// The variants for the history checkers and the generative workload (W1, issue 22): one per
// anomaly class, each a defect that shows only in a combination of calls few hand-written
// specs make (two producers of one client interleaving on a topic, a nack while other
// deliveries are held, a latest subscription opened beside another subscription's consumer, a
// Receive after short timed-out ones). The workload, or the checkers run over a spec's
// history, kills them; of the catalogue's own assertions only A5's (a nack while another
// delivery is held, since 2 Dec) kills one, nack-while-holding-noop. They decorate the contract
// and are declared for the broker backends (Bases), whose mutants runs prove both.
var workloadBases = []string{"kafka", "pulsar"}

var workloadVariants = []Variant{
	Variant{
		Name:    "interleaved-send-drops",
		Bases:   workloadBases,
		Catches: []string{"W1"},
		Defect:  "lost: producers of one client share a per-topic batch slot, so when two producers alternate on a topic (A, B, A) the second A's Send returns nil and is never written",
		Wrap: func(b backends.Backend) backends.Backend {
			return &sharedSlot{backend: backend{Backend: b}, last: map[string]*slotProducer{}, mode: slotDrop}
		},
	},
	Variant{
		Name:    "interleaved-send-reorders",
		Bases:   workloadBases,
		Catches: []string{"W1"},
		Defect:  "per-producer order: when two producers of one client alternate on a topic (A, B, A), the second A's message waits in the shared queue and is written after A's next message (or its Close)",
		Wrap: func(b backends.Backend) backends.Backend {
			return &sharedSlot{backend: backend{Backend: b}, last: map[string]*slotProducer{}, mode: slotHold}
		},
	},
	Variant{
		Name:    "timeout-duplicates-next",
		Bases:   workloadBases,
		Catches: []string{"W1"},
		Defect:  "unexpected duplicate: a Receive whose short deadline (under 500 ms) expired leaves its fetch in the buffer, and the next message is handed out twice",
		Wrap: func(b backends.Backend) backends.Backend {
			return WrapConsumers(b, func(c backends.Consumer) backends.Consumer { return &timeoutDup{Consumer: c} })
		},
	},
	Variant{
		Name:    "nack-drops-held-acks",
		Bases:   workloadBases,
		Catches: []string{"W1"},
		Defect:  "redelivery of an acked message: a Nack seeks back and clears the pending acks, so a later Ack of a delivery received before the Nack returns nil and is dropped",
		Wrap: func(b backends.Backend) backends.Backend {
			return WrapConsumers(b, func(c backends.Consumer) backends.Consumer {
				return &nackDropsAcks{Consumer: c, doomed: map[string]bool{}}
			})
		},
	},
	Variant{
		Name:    "nack-while-holding-noop",
		Bases:   workloadBases,
		Catches: []string{"A5", "W1"}, // A5 nacks while holding since 2 Dec: W1 rarely did on kafka
		Defect:  "nacked never redelivered: a Nack while the consumer holds another unsettled delivery does nothing (the nack applies by position, to the newest delivery only)",
		Wrap: func(b backends.Backend) backends.Backend {
			return WrapConsumers(b, func(c backends.Consumer) backends.Consumer { return &nackHolding{Consumer: c, held: map[string]bool{}} })
		},
	},
	Variant{
		Name:    "latest-beside-earliest",
		Bases:   workloadBases,
		Catches: []string{"W1"},
		Defect:  "wrong subscription: a new latest subscription of a topic on which the client already has an earliest subscription's consumer open starts at earliest too (the client reuses that assignment's start)",
		Wrap: func(b backends.Backend) backends.Backend {
			return &latestBeside{backend: backend{Backend: b}, earliest: map[string]int{}}
		},
	},
	Variant{
		Name:    "short-receive-overruns",
		Bases:   workloadBases,
		Catches: []string{"W1"},
		Defect:  "Receive outlives its context: a Receive with a deadline under 200 ms is rounded up to the client's 4 s poll interval",
		Wrap: func(b backends.Backend) backends.Backend {
			return WrapConsumers(b, func(c backends.Consumer) backends.Consumer { return &roundedReceive{Consumer: c} })
		},
	},
}

// sharedSlot: the producers of one client share a slot per topic.
type slotMode int

const (
	slotDrop slotMode = iota // the second producer's message is lost
	slotHold                 // a producer's message waits for its next Send
)

type sharedSlot struct {
	backend
	mode slotMode
	mu   sync.Mutex
	last map[string]*slotProducer // topic -> the producer whose Send came last
}

func (b *sharedSlot) Producer(ctx context.Context, topic string) (backends.Producer, error) {
	p, err := b.backend.Producer(ctx, topic)
	if err != nil {
		return nil, err
	}
	return &slotProducer{Producer: p, b: b, topic: topic}, nil
}

type slotProducer struct {
	backends.Producer
	b     *sharedSlot
	topic string
	held  *backends.Message // slotHold: the message waiting for this producer's next Send
	sends int               // Sends so far (under b.mu)
}

// interleaved records p as the topic's last sender and reports whether p sent before and
// another producer of the client sent on the topic since (A, B, A: the second A): a producer
// that takes over a topic from another (L3's producer of the re-created topic) is not affected.
func (p *slotProducer) interleaved() bool {
	p.b.mu.Lock()
	defer p.b.mu.Unlock()
	prev := p.b.last[p.topic]
	p.b.last[p.topic] = p
	p.sends++
	return p.sends > 1 && prev != nil && prev != p
}

func (p *slotProducer) Send(ctx context.Context, m backends.Message) error {
	other := p.interleaved()
	switch {
	case p.b.mode == slotDrop && other:
		return nil // overwritten in the shared slot before it was written
	case p.b.mode == slotHold && other && p.held == nil:
		p.held = &m
		return nil // queued behind the other producer's message
	case p.b.mode == slotHold:
		if err := p.Producer.Send(ctx, m); err != nil {
			return err
		}
		if p.held != nil {
			held := *p.held
			p.held = nil
			if err := p.Producer.Send(ctx, held); err != nil {
				return err
			}
		}
		return nil
	}
	return p.Producer.Send(ctx, m)
}

func (p *slotProducer) Close(ctx context.Context) error {
	if p.held != nil {
		held := *p.held
		p.held = nil
		_ = p.Producer.Send(ctx, held)
	}
	return p.Producer.Close(ctx)
}

// timeoutDup: after a Receive with a short deadline timed out, the next delivery comes twice.
type timeoutDup struct {
	backends.Consumer
	mu      sync.Mutex
	armed   bool
	pending *backends.Delivery
}

func (c *timeoutDup) Receive(ctx context.Context) (backends.Delivery, error) {
	c.mu.Lock()
	if c.pending != nil {
		d := *c.pending
		c.pending = nil
		c.mu.Unlock()
		return d, nil
	}
	c.mu.Unlock()
	dl, hasDeadline := ctx.Deadline()
	short := hasDeadline && time.Until(dl) < 500*time.Millisecond
	d, err := c.Consumer.Receive(ctx)
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case err != nil && short && errors.Is(err, backends.ErrTimeout): // a backend's own timer may end it a hair before ctx
		c.armed = true
	case err == nil && c.armed:
		c.armed = false
		c.pending = &d
	}
	return d, err
}

// nackDropsAcks: a Nack dooms the acks of every delivery received before it and still unsettled.
type nackDropsAcks struct {
	backends.Consumer
	mu       sync.Mutex
	unsettle []string // delivery IDs received, not yet acked or nacked
	doomed   map[string]bool
}

func (c *nackDropsAcks) Receive(ctx context.Context) (backends.Delivery, error) {
	d, err := c.Consumer.Receive(ctx)
	if err == nil {
		c.mu.Lock()
		c.unsettle = append(c.unsettle, d.ID)
		c.mu.Unlock()
	}
	return d, err
}

func (c *nackDropsAcks) settled(id string) {
	if i := slices.Index(c.unsettle, id); i >= 0 {
		c.unsettle = slices.Delete(c.unsettle, i, i+1)
	}
}

func (c *nackDropsAcks) Nack(ctx context.Context, d backends.Delivery) error {
	c.mu.Lock()
	c.settled(d.ID)
	for _, id := range c.unsettle {
		c.doomed[id] = true
	}
	c.unsettle = nil
	c.mu.Unlock()
	return c.Consumer.Nack(ctx, d)
}

func (c *nackDropsAcks) Ack(ctx context.Context, d backends.Delivery) error {
	c.mu.Lock()
	c.settled(d.ID)
	doomed := c.doomed[d.ID]
	delete(c.doomed, d.ID)
	c.mu.Unlock()
	if doomed {
		return nil // the pending ack was cleared by the seek
	}
	return c.Consumer.Ack(ctx, d)
}

// nackHolding: a Nack while another delivery is unsettled does nothing.
type nackHolding struct {
	backends.Consumer
	mu   sync.Mutex
	held map[string]bool
}

func (c *nackHolding) Receive(ctx context.Context) (backends.Delivery, error) {
	d, err := c.Consumer.Receive(ctx)
	if err == nil {
		c.mu.Lock()
		c.held[d.ID] = true
		c.mu.Unlock()
	}
	return d, err
}

func (c *nackHolding) Ack(ctx context.Context, d backends.Delivery) error {
	c.mu.Lock()
	delete(c.held, d.ID)
	c.mu.Unlock()
	return c.Consumer.Ack(ctx, d)
}

func (c *nackHolding) Nack(ctx context.Context, d backends.Delivery) error {
	c.mu.Lock()
	mine := c.held[d.ID]
	delete(c.held, d.ID)
	others := len(c.held)
	c.mu.Unlock()
	if mine && others > 0 { // a foreign delivery still goes through (and fails, A8)
		return nil
	}
	return c.Consumer.Nack(ctx, d)
}

// latestBeside counts the open earliest consumers per topic; a latest Consumer beside one
// starts at earliest.
type latestBeside struct {
	backend
	mu       sync.Mutex
	earliest map[string]int
}

func (b *latestBeside) Consumer(ctx context.Context, topic, sub string, opts ...backends.ConsumerOption) (backends.Consumer, error) {
	t, err := backends.ParseTopic(topic)
	if err != nil {
		return b.backend.Consumer(ctx, topic, sub, opts...)
	}
	pos := backends.ApplyConsumerOptions(t, opts...).Position
	b.mu.Lock()
	beside := b.earliest[topic] > 0
	b.mu.Unlock()
	if pos == backends.Latest && beside {
		opts = append(slices.Clone(opts), backends.WithPosition(backends.Earliest))
	}
	c, err := b.backend.Consumer(ctx, topic, sub, opts...)
	if err != nil || pos != backends.Earliest {
		return c, err
	}
	b.mu.Lock()
	b.earliest[topic]++
	b.mu.Unlock()
	return &countedConsumer{Consumer: c, done: func() {
		b.mu.Lock()
		b.earliest[topic]--
		b.mu.Unlock()
	}}, nil
}

type countedConsumer struct {
	backends.Consumer
	once sync.Once
	done func()
}

func (c *countedConsumer) Close(ctx context.Context) error {
	c.once.Do(c.done)
	return c.Consumer.Close(ctx)
}

// roundedReceive: a Receive with a deadline under 200 ms waits the 4 s poll interval.
type roundedReceive struct{ backends.Consumer }

const pollInterval = 4 * time.Second

func (c *roundedReceive) Receive(ctx context.Context) (backends.Delivery, error) {
	dl, ok := ctx.Deadline()
	if !ok || time.Until(dl) >= 200*time.Millisecond {
		return c.Consumer.Receive(ctx)
	}
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), pollInterval)
	defer cancel()
	d, err := c.Consumer.Receive(pctx)
	if err != nil && ctx.Err() != nil {
		return d, fmt.Errorf("%w: %w", backends.ErrTimeout, ctx.Err())
	}
	return d, err
}
