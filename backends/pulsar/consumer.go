package pulsar

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"

	"github.com/pubsub-conformance/harness/backends"
)

// readyPoll is how often Consumer re-reads a non-persistent topic's stats while waiting for
// the broker to record the new consumer's permits.
const readyPoll = 20 * time.Millisecond

// Consumer subscribes and returns once the subscription is live. For a persistent topic that
// is when Subscribe returns: the broker answers the subscribe command only after it created
// the subscription's cursor, and from then on every published message is kept for it. For a
// non-persistent topic the broker keeps nothing and drops a message for a consumer without
// permits; the client sends its first permits asynchronously after Subscribe returned, so
// Consumer also waits until the broker's stats show this consumer with permits.
func (b *Backend) Consumer(ctx context.Context, topic, subscription string, opts ...backends.ConsumerOption) (backends.Consumer, error) {
	if err := b.checkOpen("consumer"); err != nil {
		return nil, err
	}
	r, err := b.resolve(topic)
	if err != nil {
		return nil, err
	}
	if subscription == "" {
		return nil, fmt.Errorf("%w: pulsar: consumer on %q: empty subscription name", backends.ErrInvalidConfig, topic)
	}
	s := backends.ApplyConsumerOptions(r.topic, opts...)

	subName, subType := subscription, pulsar.Shared
	if s.Mode == backends.Unique {
		// Fan-out: every consumer gets its own subscription, hence its own copy of each message.
		subName, subType = subscription+"-"+uniqueSuffix(), pulsar.Exclusive
	}
	pos := pulsar.SubscriptionPositionLatest
	if s.Position == backends.Earliest {
		pos = pulsar.SubscriptionPositionEarliest
	}
	consumerName := "c-" + uniqueSuffix()
	what := fmt.Sprintf("pulsar: subscribe %s to %s", subName, r.fullName())
	pc, err := openTopic(ctx, b, r, what, func() (pulsar.Consumer, error) {
		return runCtx(ctx, what, func() (pulsar.Consumer, error) {
			return b.client.Subscribe(pulsar.ConsumerOptions{
				Topic:                       r.fullName(),
				SubscriptionName:            subName,
				Type:                        subType,
				SubscriptionInitialPosition: pos,
				Name:                        consumerName,
				NackRedeliveryDelay:         b.nackDelay,
				// Every ack waits for the broker's receipt, so a lost one is known and sent again:
				// by Ack itself with PULSAR_ACK_SYNC, by the consumer's acker otherwise. (A receipt
				// is not a stored ack: see ackBook.)
				AckWithResponse: true,
			})
		}, func(c pulsar.Consumer) { c.Close() })
	})
	if err != nil {
		return nil, err
	}
	c := &consumer{b: b, r: r, c: pc, sub: subName, pending: map[string]pulsar.Message{},
		acks: newAcker(pc, b.logf), ackSync: b.ackSync}
	if r.persistent {
		// Unique mode's subscription is this consumer's alone (a fresh name): its book dies
		// with it. A shared subscription's book is the Backend's, for all its consumers here.
		if s.Mode == backends.Unique {
			c.book = newAckBook()
		} else {
			c.book = b.ackBook(r, subName)
		}
	}
	if !r.persistent && !b.noWait {
		if err := b.waitPermits(ctx, r, subName, consumerName); err != nil {
			c.acks.stopIdle()
			pc.Close()
			return nil, fmt.Errorf("%s: %w", what, err)
		}
	}
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		c.acks.stopIdle()
		pc.Close()
		return nil, fmt.Errorf("pulsar: consumer: %w", backends.ErrClosed)
	}
	b.consumers[c] = struct{}{}
	b.mu.Unlock()
	return c, nil
}

// waitPermits polls the topic's stats until the broker lists consumerName on subscription
// with available permits, i.e. until the broker would dispatch a new message to it.
//
// A 404 (topic not loaded yet) and a 5xx are "not known yet": the poll goes on within ctx. The
// 5xx is the broker's own race: a non-persistent subscription is listed on its topic before
// addConsumer created its dispatcher, and NonPersistentSubscription.getStats reads the
// dispatcher's drop rate without a null check, so stats asked for in that window are an NPE
// (HTTP 500). Any other refusal (401/403 -> ErrAuth) ends the wait at once; ctx's end ends it
// with ErrTimeout (or Canceled) quoting the last 5xx answer, if the broker never stopped giving one.
func (b *Backend) waitPermits(ctx context.Context, r resolved, subscription, consumerName string) error {
	t := time.NewTicker(readyPoll)
	defer t.Stop()
	var last error // the last 5xx answer, nil once the broker answered again
	ended := func() error {
		what := "wait for the broker to grant the consumer permits"
		if last != nil {
			what += " (last stats answer: " + last.Error() + ")"
		}
		return backends.CtxErr(ctx, what)
	}
	for {
		st, err := b.admin.stats(ctx, r)
		switch s := statusOf(err); {
		case err == nil:
			last = nil
		case s == http.StatusNotFound:
		case s >= http.StatusInternalServerError:
			last = err
		case ctx.Err() != nil:
			return ended()
		default:
			return fmt.Errorf("wait for permits: %w", err)
		}
		for _, cs := range st.Subscriptions[subscription].Consumers {
			if cs.ConsumerName == consumerName && cs.AvailablePermits > 0 {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return ended()
		case <-t.C:
		}
	}
}

type consumer struct {
	b   *Backend
	r   resolved
	c   pulsar.Consumer
	sub string

	acks    *acker   // sends acks in the background (with PULSAR_ACK_SYNC only the re-acks of held-back redeliveries)
	ackSync bool     // PULSAR_ACK_SYNC: Ack waits for the receipt itself
	book    *ackBook // the subscription's acked messages (persistent topics; nil otherwise)

	mu      sync.Mutex
	seq     uint64                    // deliveries handed out so far
	pending map[string]pulsar.Message // delivered, neither acked nor nacked, by Delivery.ID

	closed   atomic.Bool
	once     sync.Once
	closeErr error
}

// encodeID is the Delivery.ID of the seq-th delivery of a consumer: "seq.msgid", msgid being
// the serialized MessageID in URL-safe base64 (plain text on any wire). The sequence number
// keeps IDs unique within the consumer even where message ids repeat: a non-persistent topic
// stores nothing and gives every message the same id, and a redelivery reuses its message's.
func encodeID(seq uint64, id pulsar.MessageID) string {
	return strconv.FormatUint(seq, 10) + "." + base64.RawURLEncoding.EncodeToString(id.Serialize())
}

// decodeID reverses encodeID; used to tell a malformed ID from a stale one.
func decodeID(s string) (uint64, pulsar.MessageID, error) {
	seqStr, b64, ok := strings.Cut(s, ".")
	if !ok {
		return 0, nil, fmt.Errorf("no sequence number")
	}
	seq, err := strconv.ParseUint(seqStr, 10, 64)
	if err != nil {
		return 0, nil, err
	}
	raw, err := base64.RawURLEncoding.DecodeString(b64)
	if err != nil {
		return 0, nil, err
	}
	id, err := pulsar.DeserializeMessageID(raw)
	return seq, id, err
}

func (c *consumer) Receive(ctx context.Context) (backends.Delivery, error) {
	what := "pulsar: receive from " + c.r.orig
	if c.closed.Load() {
		return backends.Delivery{}, fmt.Errorf("%s: %w", what, backends.ErrClosed)
	}
	if ctx.Err() != nil {
		return backends.Delivery{}, backends.CtxErr(ctx, what)
	}
	var m pulsar.Message
	for {
		var err error
		m, err = c.c.Receive(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return backends.Delivery{}, backends.CtxErr(ctx, what)
			}
			if c.closed.Load() {
				return backends.Delivery{}, fmt.Errorf("%s: %w", what, backends.ErrClosed)
			}
			return backends.Delivery{}, fmt.Errorf("%s: %w", what, c.b.mapErr(err))
		}
		if c.book == nil || !c.book.has(m.ID()) {
			break
		}
		// A message acked through this Backend on this subscription, here again: an ack the
		// broker lost, a copy a reconnect left in the client's channel, or one the broker sent
		// before the ack reached it (see ackBook). Not for the application: ack it again.
		c.acks.add(m)
	}
	c.mu.Lock()
	c.seq++
	id := encodeID(c.seq, m.ID())
	c.pending[id] = m
	c.mu.Unlock()
	var props map[string]string
	if p := m.Properties(); len(p) > 0 {
		props = make(map[string]string, len(p))
		for k, v := range p {
			props[k] = v
		}
	}
	payload := m.Payload()
	if payload == nil {
		payload = []byte{}
	}
	return backends.Delivery{ID: id, Topic: c.r.orig, Payload: payload, Properties: props}, nil
}

// take removes d from the pending deliveries; an ID this consumer never handed out (or already
// settled) is ErrUnknownDelivery.
func (c *consumer) take(what string, d backends.Delivery) (pulsar.Message, error) {
	if c.closed.Load() {
		return nil, fmt.Errorf("%s: %w", what, backends.ErrClosed)
	}
	c.mu.Lock()
	m, ok := c.pending[d.ID]
	if ok {
		delete(c.pending, d.ID)
	}
	c.mu.Unlock()
	if !ok {
		if _, _, err := decodeID(d.ID); err != nil {
			return nil, fmt.Errorf("%s: %w: %q is not a Pulsar delivery id", what, backends.ErrUnknownDelivery, d.ID)
		}
		return nil, fmt.Errorf("%s: %w: %q was not received by this consumer or is already acked/nacked", what, backends.ErrUnknownDelivery, d.ID)
	}
	return m, nil
}

// Ack acknowledges exactly d (an individual ack, never cumulative). By default it queues the
// ack for the consumer's acker and returns (see acker); with PULSAR_ACK_SYNC it waits for the
// broker's receipt. From the moment an Ack is in force (returned nil) its message is in the
// subscription's ackBook: no consumer of the subscription in this Backend hands it out again.
func (c *consumer) Ack(ctx context.Context, d backends.Delivery) error {
	what := "pulsar: ack on " + c.r.orig
	m, err := c.take(what, d)
	if err != nil {
		return err
	}
	if !c.ackSync {
		c.remember(m)
		c.acks.add(m)
		return nil
	}
	_, err = runCtx(ctx, what, func() (struct{}, error) { return struct{}{}, c.c.Ack(m) }, nil)
	if err != nil {
		if ctx.Err() != nil {
			return err
		}
		return fmt.Errorf("%s: %w", what, c.b.mapErr(err))
	}
	c.remember(m)
	return nil
}

// remember records an ack in force in the subscription's book (persistent topics).
func (c *consumer) remember(m pulsar.Message) {
	if c.book != nil {
		c.book.add(m.ID())
	}
}

// Nack is the client's native negative ack: d is redelivered after the configured delay.
func (c *consumer) Nack(ctx context.Context, d backends.Delivery) error {
	what := "pulsar: nack on " + c.r.orig
	if ctx.Err() != nil {
		return backends.CtxErr(ctx, what)
	}
	m, err := c.take(what, d)
	if err != nil {
		return err
	}
	if c.book != nil && c.book.has(m.ID()) {
		// Another delivery of this message was acked (through this consumer or another of the
		// subscription here): the broker redelivers no acked message, so this Nack could not
		// bring it again (C-ACK-9, C-ACK-8).
		return fmt.Errorf("%s: %w: %q: its message was acknowledged through another delivery", what, backends.ErrUnknownDelivery, d.ID)
	}
	c.c.Nack(m) // non-blocking: the client schedules the redelivery request
	return nil
}

// Close leaves the subscription (never unsubscribes): it keeps its position, and unacked
// messages go to the next consumer. Idempotent.
func (c *consumer) Close(ctx context.Context) error {
	c.once.Do(func() {
		c.closed.Store(true)
		c.b.mu.Lock()
		delete(c.b.consumers, c)
		c.b.mu.Unlock()
		var ackErr error
		if ackErr = c.acks.halt(ctx); ackErr != nil {
			ackErr = fmt.Errorf("pulsar: close consumer on %s: %w", c.r.orig, ackErr)
		}
		_, err := runCtx(ctx, "pulsar: close consumer on "+c.r.orig, func() (struct{}, error) {
			c.c.Close()
			return struct{}{}, nil
		}, nil)
		if err != nil && !errors.Is(err, backends.ErrTimeout) && ctx.Err() == nil {
			err = c.b.mapErr(err)
		}
		c.closeErr = errors.Join(ackErr, err)
	})
	return c.closeErr
}
