package mutants

import (
	"context"
	"errors"
	"fmt"
	"log"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pubsub-conformance/harness/backends"
)

// Variants for the network faults (catalogue area F): decorators over the contract, so they
// apply to every base, the reference included.
var faultVariants = []Variant{
	Variant{
		Name:    "send-swallows-unavailable",
		Catches: []string{"F3", "F4"},
		Defect: "Send logs and drops what it cannot deliver: an error wrapping ErrUnavailable or ErrTimeout is logged and Send returns nil, " +
			"and until an exists check on the topic succeeds again the producer drops further messages without sending them " +
			"(TrustGraph logs and continues on send errors in several places; a plain swallow alone loses nothing on Kafka or Pulsar, " +
			"whose clients keep a timed-out message queued and deliver it after the heal)",
		Wrap: func(b backends.Backend) backends.Backend { return &swallowSends{backend{Backend: b}} },
	},
	Variant{
		Name:    "consumer-gives-up",
		Catches: []string{"F1"},
		Defect: fmt.Sprintf("a consumer gives up after a disconnect: a background health check (TopicExists on its topic every %s, each bounded by %s) "+
			"that fails with ErrUnavailable or ErrTimeout closes the consumer, and Receive returns ErrClosed from then on "+
			"(a health check rather than a failed Receive: the Kafka and Pulsar clients and the reference keep Receive waiting through a cut)",
			giveUpEvery, giveUpProbeWithin),
		Wrap: func(b backends.Backend) backends.Backend { return &givesUp{backend{Backend: b}} },
	},
	Variant{
		Name:    "ack-swallows-unavailable",
		Catches: []string{"F6"},
		// Kafka's and Pulsar's Acks record the ack and return nil during a cut (their
		// commits and grouped acks go out after the heal); RabbitMQ's writes it at once and
		// says when it could not.
		Bases: []string{"rabbitmq"},
		Defect: "Ack logs and forgets an ack it could not deliver: an error wrapping ErrUnavailable or ErrTimeout is logged and Ack returns nil, " +
			"so the application takes the message as done while the broker delivers it again after the reconnect",
		Wrap: func(b backends.Backend) backends.Backend {
			return WrapConsumers(b, func(c backends.Consumer) backends.Consumer { return swallowAcks{c} })
		},
	},
}

// swallowAcks: ack-swallows-unavailable.
type swallowAcks struct{ backends.Consumer }

func (c swallowAcks) Ack(ctx context.Context, d backends.Delivery) error {
	err := c.Consumer.Ack(ctx, d)
	if unreachable(err) {
		log.Printf("ack-swallows-unavailable: ack of %s failed, taken as done: %v", d.ID, err)
		return nil
	}
	return err
}

// unreachable reports whether err is what a call returns when the broker cannot be reached.
func unreachable(err error) bool {
	return errors.Is(err, backends.ErrUnavailable) || errors.Is(err, backends.ErrTimeout)
}

// swallowSends: send-swallows-unavailable.
type swallowSends struct{ backend } // backend: Unwrap, so transcripts reach through

func (b *swallowSends) Producer(ctx context.Context, topic string) (backends.Producer, error) {
	p, err := b.backend.Producer(ctx, topic)
	if err != nil {
		return nil, err
	}
	return &swallowProducer{Producer: p, b: b.Backend, topic: topic}, nil
}

type swallowProducer struct {
	backends.Producer
	b            backends.Backend
	topic        string
	disconnected atomic.Bool // a Send failed for want of the broker; no exists check succeeded since
}

func (p *swallowProducer) Send(ctx context.Context, m backends.Message) error {
	if p.disconnected.Load() {
		// "Still connected?" before sending: the producer asks the broker whether the topic
		// exists and drops the message when it cannot tell.
		if _, err := p.b.TopicExists(ctx, p.topic); err != nil {
			log.Printf("send-swallows-unavailable: %s: broker unreachable (%v), message of %d bytes dropped", p.topic, err, len(m.Payload))
			return nil
		}
		p.disconnected.Store(false)
	}
	err := p.Producer.Send(ctx, m)
	if unreachable(err) {
		p.disconnected.Store(true)
		log.Printf("send-swallows-unavailable: %s: send failed, message dropped: %v", p.topic, err)
		return nil
	}
	return err
}

// The consumer-gives-up health check: how often, and the bound of each check.
const (
	giveUpEvery       = time.Second
	giveUpProbeWithin = 2 * time.Second
)

// givesUp: consumer-gives-up.
type givesUp struct{ backend }

func (b *givesUp) Consumer(ctx context.Context, topic, sub string, opts ...backends.ConsumerOption) (backends.Consumer, error) {
	c, err := b.backend.Consumer(ctx, topic, sub, opts...)
	if err != nil {
		return nil, err
	}
	wctx, stop := context.WithCancel(context.Background())
	g := &givingUp{Consumer: c, stop: stop, done: make(chan struct{})}
	go g.watch(wctx, b.Backend, topic)
	return g, nil
}

type givingUp struct {
	backends.Consumer
	gaveUp   atomic.Bool
	why      atomic.Value // error: the failed health check
	stop     context.CancelFunc
	stopOnce sync.Once
	done     chan struct{} // closed when watch returned
}

// watch checks the broker every giveUpEvery until Close, and closes the consumer for good the
// first time a check fails for want of the broker.
func (c *givingUp) watch(ctx context.Context, b backends.Backend, topic string) {
	defer close(c.done)
	tick := time.NewTicker(giveUpEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		pctx, cancel := context.WithTimeout(ctx, giveUpProbeWithin)
		_, err := b.TopicExists(pctx, topic)
		cancel()
		if ctx.Err() != nil || errors.Is(err, backends.ErrClosed) {
			return // closed meanwhile: nothing to give up
		}
		if unreachable(err) {
			c.why.Store(err)
			c.gaveUp.Store(true)
			log.Printf("consumer-gives-up: %s: health check failed, closing the consumer: %v", topic, err)
			cctx, cancel := context.WithTimeout(context.Background(), giveUpProbeWithin)
			_ = c.Consumer.Close(cctx)
			cancel()
			return
		}
	}
}

func (c *givingUp) gone(what string) error {
	err, _ := c.why.Load().(error)
	return fmt.Errorf("%s: consumer gave up after a failed health check (%v): %w", what, err, backends.ErrClosed)
}

func (c *givingUp) Receive(ctx context.Context) (backends.Delivery, error) {
	if c.gaveUp.Load() {
		return backends.Delivery{}, c.gone("receive")
	}
	d, err := c.Consumer.Receive(ctx)
	if err != nil && c.gaveUp.Load() {
		return d, c.gone("receive")
	}
	return d, err
}

// Close stops the health check (waiting for it within ctx: no check outlives the consumer)
// and closes the consumer.
func (c *givingUp) Close(ctx context.Context) error {
	c.stopOnce.Do(c.stop)
	select {
	case <-c.done:
	case <-ctx.Done():
	}
	return c.Consumer.Close(ctx)
}
