package mutants

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/pubsub-conformance/harness/backends"
)

// The variants of acknowledgements that return before they are stored (C-ACK-5 to C-ACK-7):
// each is correct after a graceful Close, so only a spec that crashes the consumer, or closes
// it right after an ack, can tell it from a working backend.

var ackVariants = []Variant{
	Variant{
		Name:    "acks-on-close-only",
		Catches: []string{"R8"},
		Defect:  "Ack only remembers the delivery; the acks reach the broker when the consumer closes, so a crashed consumer's acks are all lost",
		Wrap: func(b backends.Backend) backends.Backend {
			return WrapConsumers(b, func(c backends.Consumer) backends.Consumer { return &deferredAcks{Consumer: c, flushOnClose: true} })
		},
	},
	Variant{
		Name:    "acks-unflushed-on-close",
		Catches: []string{"A4"},
		Defect:  "acks are stored in the background every 200 ms and Close does not store the ones still pending: an ack right before a Close is lost",
		Wrap: func(b backends.Backend) backends.Backend {
			return WrapConsumers(b, func(c backends.Consumer) backends.Consumer {
				d := &deferredAcks{Consumer: c, stop: make(chan struct{}), stopped: make(chan struct{})}
				go d.background(200 * time.Millisecond)
				return d
			})
		},
	},
	Variant{
		Name:    "ack-through-fixed-on-close",
		Catches: []string{"R7"},
		Defect:  "Ack commits through every earlier unacked message and only Close puts the position right, so a crash after out-of-order acks loses the earlier unacked messages",
		Wrap: func(b backends.Backend) backends.Backend {
			return &backend{Backend: b, wrapNamed: func(c backends.Consumer, topic, _ string) backends.Consumer {
				return &throughUntilClose{ackThrough: ackThrough{Consumer: c}, b: b, topic: topic}
			}}
		},
	},
	Variant{
		Name:    "ack-swallows-moved",
		Catches: []string{"G5"},
		// Only Kafka moves a held message to a joining member (a rebalance of the
		// partition); the other brokers keep it with its consumer.
		Bases:  []string{"kafka"},
		Defect: "an Ack of a delivery whose message moved to another member (C-ACK-8) returns nil instead of the error: the ack is dropped and the message processed twice",
		Wrap: func(b backends.Backend) backends.Backend {
			return WrapConsumers(b, func(c backends.Consumer) backends.Consumer { return swallowMoved{c} })
		},
	},
	Variant{
		Name:    "nack-swallows-moved",
		Catches: []string{"G6"},
		// As ack-swallows-moved: only Kafka moves a held message to a joining member.
		Bases:  []string{"kafka"},
		Defect: "a Nack of a delivery whose message moved to another member, which acked it (C-ACK-8), returns nil instead of the error, and nothing comes again (what our Kafka backend did before G6: W1 seed 1796307262)",
		Wrap: func(b backends.Backend) backends.Backend {
			return WrapConsumers(b, func(c backends.Consumer) backends.Consumer { return swallowMovedNack{c} })
		},
	},
}

// swallowMoved: ack-swallows-moved (a foreign delivery's error is swallowed too; A8 would
// kill that, but the variant is run against G5 and its sanity spec only).
type swallowMoved struct{ backends.Consumer }

func (c swallowMoved) Ack(ctx context.Context, d backends.Delivery) error {
	return swallowUnknown(c.Consumer.Ack(ctx, d))
}

// swallowMovedNack: nack-swallows-moved, the same for Nack (run against G6).
type swallowMovedNack struct{ backends.Consumer }

func (c swallowMovedNack) Nack(ctx context.Context, d backends.Delivery) error {
	return swallowUnknown(c.Consumer.Nack(ctx, d))
}

func swallowUnknown(err error) error {
	if errors.Is(err, backends.ErrUnknownDelivery) {
		return nil
	}
	return err
}

// deferredAcks holds acks back: until Close (flushOnClose), or for a background loop that Close
// stops without storing what is left.
type deferredAcks struct {
	backends.Consumer
	flushOnClose  bool
	stop, stopped chan struct{} // the background loop's; nil without one
	once          sync.Once

	mu      sync.Mutex
	pending []backends.Delivery
}

func (c *deferredAcks) Ack(_ context.Context, d backends.Delivery) error {
	c.mu.Lock()
	c.pending = append(c.pending, d)
	c.mu.Unlock()
	return nil
}

// store acks what is pending on the real consumer.
func (c *deferredAcks) store(ctx context.Context) error {
	c.mu.Lock()
	ds := c.pending
	c.pending = nil
	c.mu.Unlock()
	var errs []error
	for _, d := range ds {
		errs = append(errs, c.Consumer.Ack(ctx, d))
	}
	return errors.Join(errs...)
}

func (c *deferredAcks) background(every time.Duration) {
	defer close(c.stopped)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-t.C:
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			_ = c.store(ctx)
			cancel()
		}
	}
}

func (c *deferredAcks) Close(ctx context.Context) error {
	var err error
	c.once.Do(func() {
		if c.stop != nil {
			close(c.stop)
			<-c.stopped
		}
		if c.flushOnClose {
			err = c.store(ctx)
		}
	})
	return errors.Join(err, c.Consumer.Close(ctx))
}

// throughUntilClose acks through (ackThrough) and, on Close, sends the messages it acked on the
// caller's behalf once more, so that after a graceful Close the subscription holds exactly what
// the caller left unacked - as a Kafka consumer that commits offset+1 on each ack and commits the
// right offset on Close does. A crash skips the Close, and those messages are gone.
type throughUntilClose struct {
	ackThrough
	b     backends.Backend
	topic string

	owedMu sync.Mutex
	owed   map[string]backends.Delivery // acked through on the caller's behalf, by ID
	once   sync.Once
}

func (c *throughUntilClose) Ack(ctx context.Context, d backends.Delivery) error {
	earlier := c.before(d)
	c.owedMu.Lock()
	if c.owed == nil {
		c.owed = map[string]backends.Delivery{}
	}
	if _, done := c.owed[d.ID]; done {
		// Acked through already: the caller catches up, nothing is owed any more.
		delete(c.owed, d.ID)
		c.owedMu.Unlock()
		return nil
	}
	for _, e := range earlier {
		c.owed[e.ID] = e
	}
	c.owedMu.Unlock()
	return c.ackThrough.Ack(ctx, d)
}

func (c *throughUntilClose) Close(ctx context.Context) error {
	var err error
	c.once.Do(func() {
		c.owedMu.Lock()
		owed := c.owed
		c.owed = nil
		c.owedMu.Unlock()
		if len(owed) == 0 {
			return
		}
		p, perr := c.b.Producer(ctx, c.topic)
		if perr != nil {
			err = perr
			return
		}
		for _, d := range owed {
			err = errors.Join(err, p.Send(ctx, backends.Message{Payload: d.Payload, Properties: d.Properties}))
		}
		err = errors.Join(err, p.Close(ctx))
	})
	return errors.Join(err, c.ackThrough.Consumer.Close(ctx))
}
