package rabbitmq

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/pubsub-conformance/harness/backends"
)

// maxNameLength is AMQP 0-9-1's limit of a queue or exchange name (a shortstr).
const maxNameLength = 255

// reconnectEvery spaces a consumer's attempts to reopen its channel after it closed.
const reconnectEvery = 250 * time.Millisecond

// unusedSharedExpiry is the x-expires of a shared subscription's queue in a non-durable class
// (request), unless the topic's retention is longer: the broker deletes such a subscription
// after it had no consumer for that long.
const unusedSharedExpiry = 24 * time.Hour

// Consumer declares the subscription's queue (when missing) with the topic's retention as
// message TTL, binds it to the topic's exchange and starts basic.consume with manual acks. It
// returns once the broker answered queue.bind-ok and basic.consume-ok: from then on every
// message published to the exchange is in the queue and goes to the queue's consumers.
func (b *Backend) Consumer(ctx context.Context, topic, subscription string, opts ...backends.ConsumerOption) (backends.Consumer, error) {
	if err := b.checkOpen("consumer"); err != nil {
		return nil, err
	}
	r, err := resolve(topic)
	if err != nil {
		return nil, err
	}
	if subscription == "" {
		return nil, fmt.Errorf("%w: rabbitmq: consumer on %q: empty subscription name", backends.ErrInvalidConfig, topic)
	}
	s := backends.ApplyConsumerOptions(r.topic, opts...)
	if err := b.ensure(ctx, r); err != nil {
		return nil, err
	}
	ret, err := b.topicRetention(ctx, r)
	if err != nil {
		return nil, err
	}
	c := &consumer{b: b, r: r, unique: s.Mode == backends.Unique || b.rc.QueuePerConsumer, queue: QueueName(r.topic, subscription),
		tag: "c-" + uniqueSuffix(), autoAck: b.rc.AutoAck, stop: make(chan struct{}), out: make(chan delivery),
		pending: map[string]pending{}}
	c.args = amqp.Table{amqp.QueueMessageTTLArg: ret.Milliseconds()}
	switch {
	case c.unique:
		c.queue += "." + uniqueSuffix()
		c.args[amqp.QueueTTLArg] = max(ret.Milliseconds(), 1000) // a crashed consumer's queue goes when unused that long
	case !r.topic.Class.Durable():
		// What a broker restart cleaned up while the queue was transient (see the package doc).
		c.args[amqp.QueueTTLArg] = max(ret, unusedSharedExpiry).Milliseconds()
	}
	c.exclusive = b.rc.ExclusiveConsumer && !c.unique
	if len(c.queue) > maxNameLength {
		return nil, fmt.Errorf("%w: rabbitmq: queue name %q is %d bytes long, AMQP allows %d (shorten the topic or subscription)",
			backends.ErrInvalidConfig, c.queue, len(c.queue), maxNameLength)
	}
	deliveries, err := c.subscribe(ctx)
	if err != nil {
		return nil, fmt.Errorf("rabbitmq: subscribe %s to %s: %w", c.queue, r.exchange, err)
	}
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		c.closeChannel()
		return nil, fmt.Errorf("rabbitmq: consumer: %w", backends.ErrClosed)
	}
	b.consumers[c] = struct{}{}
	b.mu.Unlock()
	go c.pump(deliveries)
	return c, nil
}

type consumer struct {
	b                 *Backend
	r                 resolved
	queue, tag        string
	args              amqp.Table
	unique, exclusive bool
	autoAck           bool

	mu      sync.Mutex // guards ch, epoch and pending; held across an ack so a reconnect cannot interleave
	ch      *amqp.Channel
	epoch   uint64 // increments with every (re)opened channel; part of Delivery.ID
	pending map[string]pending

	barriers barrier // the receipts of acks

	out  chan delivery
	stop chan struct{} // closed by Close

	closed   atomic.Bool
	once     sync.Once
	closeErr error
}

type delivery struct {
	epoch uint64
	d     amqp.Delivery
}

type pending struct {
	epoch uint64
	tag   uint64
}

// subscribe opens a channel, declares and binds the queue and starts consuming: the first time
// from Consumer, again from pump after the channel closed.
func (c *consumer) subscribe(ctx context.Context) (<-chan amqp.Delivery, error) {
	ch, err := c.b.channel(ctx)
	if err != nil {
		return nil, err
	}
	type res struct {
		ch *amqp.Channel
		d  <-chan amqp.Delivery
	}
	r, err := backends.RunCtx(ctx, "rabbitmq: declare, bind and consume "+c.queue, func() (res, error) {
		// Durable, whatever the class: RabbitMQ 4.3 refuses transient non-exclusive queues by
		// default (deprecated feature transient_nonexcl_queues); see the package doc.
		_, err := ch.QueueDeclare(c.queue, true, false, false, false, c.args)
		if isCode(err, amqp.PreconditionFailed) {
			// The queue exists with other arguments (another retention, TrustGraph's own
			// declaration): it is the subscription all the same. The refusal closed the channel.
			if ch, err = c.b.channel(ctx); err != nil {
				return res{}, err
			}
			_, err = ch.QueueDeclarePassive(c.queue, true, false, false, false, nil)
		}
		if err == nil {
			err = ch.QueueBind(c.queue, "", c.r.exchange, false, nil)
		}
		if err == nil && !c.autoAck {
			err = ch.Qos(c.b.rc.Prefetch, 0, false)
		}
		var d <-chan amqp.Delivery
		if err == nil {
			d, err = ch.Consume(c.queue, c.tag, c.autoAck, c.exclusive, false, false, nil)
		}
		if err != nil {
			_ = ch.Close()
			return res{}, err
		}
		return res{ch, d}, nil
	}, func(r res) { _ = r.ch.Close() })
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		return nil, mapErr(err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed.Load() {
		_ = r.ch.Close()
		return nil, fmt.Errorf("rabbitmq: consumer: %w", backends.ErrClosed)
	}
	if old := c.ch; old != nil && old != r.ch {
		// Still open when the broker cancelled the consumer (its queue was deleted): the
		// deliveries it had not acked go back with it.
		go old.Close()
	}
	c.ch = r.ch
	c.epoch++
	return r.d, nil
}

// pump hands the channel's deliveries to Receive; when the channel closes (a broker restart,
// a cut network) it subscribes again until the consumer or the backend closes. The broker
// requeued what the dead channel had delivered and not acked.
func (c *consumer) pump(deliveries <-chan amqp.Delivery) {
	for {
		c.mu.Lock()
		epoch := c.epoch
		c.mu.Unlock()
		for d := range deliveries {
			select {
			case c.out <- delivery{epoch, d}:
			case <-c.stop:
				return
			}
		}
		for {
			select {
			case <-c.stop:
				return
			case <-c.b.done:
				return
			case <-time.After(reconnectEvery):
			}
			ctx, cancel := context.WithTimeout(context.Background(), dialTimeout)
			var err error
			deliveries, err = c.subscribe(ctx)
			cancel()
			if err == nil {
				c.b.logf("rabbitmq: consumer %s on %s: subscribed again", c.tag, c.queue)
				break
			}
			if errors.Is(err, backends.ErrClosed) {
				return
			}
			c.b.logf("rabbitmq: consumer %s on %s: subscribe again: %v", c.tag, c.queue, err)
		}
	}
}

// encodeID is "consumertag.epoch.deliverytag": delivery tags restart with every channel and
// are per channel, so the consumer's tag keeps another consumer's IDs apart.
func (c *consumer) encodeID(epoch, tag uint64) string {
	return c.tag + "." + strconv.FormatUint(epoch, 10) + "." + strconv.FormatUint(tag, 10)
}

// wellFormed reports whether id has the form of encodeID.
func wellFormed(id string) bool {
	parts := strings.Split(id, ".")
	return len(parts) == 3 && strings.HasPrefix(parts[0], "c-") && isUint(parts[1]) && isUint(parts[2])
}

func (c *consumer) Receive(ctx context.Context) (backends.Delivery, error) {
	what := "rabbitmq: receive from " + c.queue
	for {
		if c.closed.Load() {
			return backends.Delivery{}, fmt.Errorf("%s: %w", what, backends.ErrClosed)
		}
		if ctx.Err() != nil {
			return backends.Delivery{}, backends.CtxErr(ctx, what)
		}
		var d delivery
		select {
		case d = <-c.out:
		case <-c.stop:
			return backends.Delivery{}, fmt.Errorf("%s: %w", what, backends.ErrClosed)
		case <-ctx.Done():
			return backends.Delivery{}, backends.CtxErr(ctx, what)
		}
		c.mu.Lock()
		if d.epoch != c.epoch {
			// Delivered on a channel that has closed since: the broker requeued it and
			// delivers it again on the new one.
			c.mu.Unlock()
			continue
		}
		id := c.encodeID(d.epoch, d.d.DeliveryTag)
		if !c.autoAck {
			c.pending[id] = pending{d.epoch, d.d.DeliveryTag}
		}
		c.mu.Unlock()
		var props map[string]string
		if len(d.d.Headers) > 0 {
			props = make(map[string]string, len(d.d.Headers))
			for k, v := range d.d.Headers {
				if s, ok := v.(string); ok {
					props[k] = s
				} else {
					props[k] = fmt.Sprint(v)
				}
			}
		}
		payload := d.d.Body
		if payload == nil {
			payload = []byte{}
		}
		return backends.Delivery{ID: id, Topic: c.r.orig, Payload: payload, Properties: props}, nil
	}
}

// settle acks (or nacks with requeue) exactly d. An ID this consumer never handed out, or
// already settled, is ErrUnknownDelivery; a delivery of a channel that closed since is
// ErrUnavailable (the broker requeued it: it comes again).
//
// With receipt (Ack), settle returns only once the broker processed the frame: AMQP 0-9-1 has
// no reply to basic.ack, but a channel's methods are processed in order, so the reply to a
// synchronous method sent after it (basic.qos with the consumer's own prefetch, which changes
// nothing) proves it arrived. Concurrent acks share one such round trip (see barrier). An ack
// whose channel broke before that reply is an error: the broker requeued the message.
func (c *consumer) settle(ctx context.Context, verb string, d backends.Delivery, receipt bool, send func(ch *amqp.Channel, tag uint64) error) error {
	what := "rabbitmq: " + verb + " on " + c.queue
	if c.closed.Load() {
		return fmt.Errorf("%s: %w", what, backends.ErrClosed)
	}
	if ctx.Err() != nil {
		return backends.CtxErr(ctx, what)
	}
	if c.autoAck {
		// No-ack mode: the broker settled every delivery when it sent it.
		return nil
	}
	c.mu.Lock()
	p, ok := c.pending[d.ID]
	if !ok {
		c.mu.Unlock()
		if !wellFormed(d.ID) {
			return fmt.Errorf("%s: %w: %q is not a RabbitMQ delivery id", what, backends.ErrUnknownDelivery, d.ID)
		}
		return fmt.Errorf("%s: %w: %q was not received by this consumer or is already acked/nacked", what, backends.ErrUnknownDelivery, d.ID)
	}
	delete(c.pending, d.ID)
	if p.epoch != c.epoch || c.ch == nil {
		c.mu.Unlock()
		return fmt.Errorf("%s: %w: %q came on a channel that closed since (reconnect); the broker requeued it and delivers it again",
			what, backends.ErrUnavailable, d.ID)
	}
	ch := c.ch
	// basic.ack and basic.nack have no reply: this writes one frame, under c.mu so that no
	// reconnect replaces the channel in between.
	err := send(ch, p.tag)
	seq := c.barriers.written()
	c.mu.Unlock()
	if err != nil {
		return fmt.Errorf("%s: %w", what, mapErr(err))
	}
	if !receipt {
		return nil
	}
	if err := c.barriers.wait(ctx, ch, seq, c.b.rc.Prefetch); err != nil {
		if ctx.Err() != nil {
			return backends.CtxErr(ctx, what+": wait for the broker to process it")
		}
		return fmt.Errorf("%s: %w: the broker may not have processed it (it would deliver it again): %v", what, backends.ErrUnavailable, mapErr(err))
	}
	return nil
}

func isUint(s string) bool {
	_, err := strconv.ParseUint(s, 10, 64)
	return err == nil
}

// Ack is basic.ack of d alone (multiple=false).
func (c *consumer) Ack(ctx context.Context, d backends.Delivery) error {
	return c.settle(ctx, "ack", d, true, func(ch *amqp.Channel, tag uint64) error { return ch.Ack(tag, false) })
}

// Nack is basic.nack of d alone with requeue: the broker delivers it again at once.
func (c *consumer) Nack(ctx context.Context, d backends.Delivery) error {
	return c.settle(ctx, "nack", d, false, func(ch *amqp.Channel, tag uint64) error { return ch.Nack(tag, false, true) })
}

func (c *consumer) closeChannel() {
	c.mu.Lock()
	ch := c.ch
	c.ch = nil
	c.mu.Unlock()
	if ch != nil {
		_ = ch.Close()
	}
}

// Close closes the consumer's channel (which cancels its basic.consume; the broker requeues
// what it delivered and was not acked). A shared subscription's queue stays; a unique one's
// queue, which no later consumer can name, is deleted. Idempotent.
func (c *consumer) Close(ctx context.Context) error {
	c.once.Do(func() {
		c.closed.Store(true)
		close(c.stop)
		c.b.mu.Lock()
		delete(c.b.consumers, c)
		c.b.mu.Unlock()
		what := "rabbitmq: close consumer on " + c.queue
		_, err := backends.RunCtx(ctx, what, func() (struct{}, error) {
			c.closeChannel()
			return struct{}{}, nil
		}, nil)
		if err == nil && c.unique {
			err = c.b.withChannel(ctx, what, func(ch *amqp.Channel) error {
				_, err := ch.QueueDelete(c.queue, false, false, false)
				return err
			})
			if err != nil && ctx.Err() == nil {
				err = fmt.Errorf("%s: delete its unique queue: %w", what, mapErr(err))
			}
		}
		c.closeErr = err
	})
	return c.closeErr
}

var _ backends.SubscriptionDeleter = (*Backend)(nil)

// DeleteSubscription deletes a shared subscription's queue with its messages. A missing one is
// success (queue.delete of a missing queue is not an error in RabbitMQ 3.x).
func (b *Backend) DeleteSubscription(ctx context.Context, topic, subscription string) error {
	if err := b.checkOpen("delete subscription"); err != nil {
		return err
	}
	r, err := resolve(topic)
	if err != nil {
		return err
	}
	if subscription == "" {
		return fmt.Errorf("%w: rabbitmq: empty subscription name", backends.ErrInvalidConfig)
	}
	q := QueueName(r.topic, subscription)
	err = b.withChannel(ctx, "rabbitmq: delete subscription "+q, func(ch *amqp.Channel) error {
		_, err := ch.QueueDelete(q, false, false, false)
		return err
	})
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("rabbitmq: delete subscription %s: %w", q, mapErr(err))
	}
	return err
}

// barrier groups the round trips that prove acks arrived: every ack written before a round
// trip started is proven by its reply, so concurrent acks wait for one round trip, not one each.
type barrier struct {
	mu       sync.Mutex
	seq      uint64        // acks written so far (on any channel)
	proven   uint64        // acks proven by a finished round trip
	inFlight chan struct{} // closed when the round trip in flight ends; nil when none
}

// written counts one ack frame written; the caller holds the consumer's mu, so the count
// orders with the frames.
func (b *barrier) written() uint64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.seq++
	return b.seq
}

// wait returns once a round trip on ch that started after ack seq was written has finished.
func (b *barrier) wait(ctx context.Context, ch *amqp.Channel, seq uint64, prefetch int) error {
	for {
		b.mu.Lock()
		if b.proven >= seq {
			b.mu.Unlock()
			return nil
		}
		if wait := b.inFlight; wait != nil {
			b.mu.Unlock()
			select {
			case <-wait:
				continue
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		upTo := b.seq
		done := make(chan struct{})
		b.inFlight = done
		b.mu.Unlock()

		_, err := backends.RunCtx(ctx, "basic.qos", func() (struct{}, error) { return struct{}{}, ch.Qos(prefetch, 0, false) }, nil)

		b.mu.Lock()
		if err == nil && upTo > b.proven {
			b.proven = upTo
		}
		b.inFlight = nil
		b.mu.Unlock()
		close(done)
		if err != nil {
			return err
		}
	}
}
