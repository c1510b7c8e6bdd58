package rabbitmqstreams

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	amqp091 "github.com/rabbitmq/amqp091-go"
	"github.com/rabbitmq/rabbitmq-stream-go-client/pkg/amqp"
	"github.com/rabbitmq/rabbitmq-stream-go-client/pkg/stream"

	"github.com/pubsub-conformance/harness/backends"
)

// maxBuffered bounds what a consumer reads ahead of Receive; past it the stream client's
// dispatch waits, which withholds its credit, so the broker stops sending.
const maxBuffered = 2000

// lockQueueExpiry is the lock queue's x-expires: auto-delete removes it when its last member
// leaves, but a durable queue that never gets a consumer again (all members gone while the
// broker restarted) would stay; the broker deletes it after this long without a consumer.
const lockQueueExpiry = 10 * time.Minute

// activateTimeout bounds one activation (query the position, subscribe, place a marker)
// when no caller's ctx does.
const activateTimeout = 30 * time.Second

// Consumer opens a subscription (see the package doc). A shared subscription's first member
// returns once it is active and its position stored; later members return once the
// subscription's position is stored (by the active member) and wait for the lock.
func (b *Backend) Consumer(ctx context.Context, topic, subscription string, opts ...backends.ConsumerOption) (backends.Consumer, error) {
	if err := b.checkOpen("consumer"); err != nil {
		return nil, err
	}
	r, err := resolve(topic)
	if err != nil {
		return nil, err
	}
	if subscription == "" {
		return nil, fmt.Errorf("%w: %s: consumer on %q: empty subscription name", backends.ErrInvalidConfig, Name, topic)
	}
	if len(LockQueueName(r.stream, subscription)) > 255 || len(windowRef(subscription, 1<<40)) > 255 {
		return nil, fmt.Errorf("%w: %s: subscription name %q is too long for its lock queue or offset references (255 bytes)",
			backends.ErrInvalidConfig, Name, subscription)
	}
	s := backends.ApplyConsumerOptions(r.topic, opts...)
	if err := b.ensure(ctx, r); err != nil {
		return nil, err
	}
	c := &consumer{b: b, r: r, sub: subscription, shared: s.Mode == backends.Shared, pos: s.Position,
		tag: "s-" + uniqueSuffix(), stop: make(chan struct{}), notify: make(chan struct{}, 1), space: make(chan struct{}, 1),
		held: map[int64]entry{}, stored: map[int64]int64{}, activated: make(chan error, 1)}
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil, fmt.Errorf("%s: consumer: %w", Name, backends.ErrClosed)
	}
	b.consumers[c] = struct{}{}
	b.mu.Unlock()
	if err := c.open(ctx); err != nil {
		_ = c.Close(context.Background())
		return nil, fmt.Errorf("%s: subscribe to %s as %q: %w", Name, r.stream, subscription, err)
	}
	return c, nil
}

type entry struct {
	off     int64
	payload []byte
	props   map[string]string
}

type consumer struct {
	b      *Backend
	r      resolved
	sub    string
	shared bool
	pos    backends.Position
	tag    string
	first  stream.OffsetSpecification // a unique consumer's start, again after a reconnect before it read anything

	stop      chan struct{}
	closed    atomic.Bool
	once      sync.Once
	closeErr  error
	activated chan error // the first activation's outcome (shared)

	mu      sync.Mutex
	notify  chan struct{} // cap 1: something to receive
	space   chan struct{} // cap 1: Receive took something
	term    uint64        // numbers activations; part of Delivery.ID
	gen     uint64        // numbers stream subscriptions
	genDone chan struct{} // closed when the current subscription ends
	active  bool
	bk      *books // nil until the position is known (a new latest subscription waits for its marker)
	marker  chan int64
	queue   []entry
	held    map[int64]entry
	sc      *stream.Consumer
	lockCh  *amqp091.Channel
	// stored is the position last stored: main value under key -1, windows by index.
	stored map[int64]int64
	dirty  bool
	// suspended: the member lost the lock (its channel closed) with its books kept. When it
	// gets the lock back and the stored position is still one it wrote itself (nobody read
	// for the subscription meanwhile), the term goes on: acks that returned nil before the
	// loss are stored then; deliveries acked or nacked while suspended were refused
	// (ErrUnknownDelivery) and are handed out again.
	suspended bool
	refused   map[int64]struct{}
	written   []int64 // main values this term stored (and its first), newest last
}

// open starts the consumer: a unique one reads at once; a shared one joins the lock.
func (c *consumer) open(ctx context.Context) error {
	if !c.shared {
		spec := stream.OffsetSpecification{}.Next()
		if c.pos == backends.Earliest && c.b.rc.EarliestSpec == "first" {
			spec = stream.OffsetSpecification{}.First()
		}
		c.mu.Lock()
		c.active, c.term, c.bk, c.first = true, 1, newBooks(0, nil), spec
		c.mu.Unlock()
		return c.subscribe(ctx, spec)
	}
	if !c.b.rc.SingleActive {
		// The variant without a lock: every member reads as if it were the active one.
		if err := c.activate(ctx); err != nil {
			return err
		}
		go c.committer()
		return nil
	}
	_, deliveries, err := c.join(ctx)
	if err != nil {
		return err
	}
	go c.member(deliveries)
	go c.committer()
	// The subscription is live once its position is stored: by this member when it is the
	// first (it returns when active), or by whichever member got the lock first (several may
	// join a new subscription at once, each seeing no other consumer of the lock queue).
	for {
		select {
		case err := <-c.activated:
			return err
		default:
		}
		_, err := c.queryOffset(ctx, c.sub)
		if err == nil {
			return nil
		}
		if !errors.Is(err, stream.OffsetNotFoundError) {
			return err
		}
		select {
		case err := <-c.activated:
			return err
		case <-ctx.Done():
			return backends.CtxErr(ctx, "wait for the subscription's position to be stored (by its active member)")
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// join declares the lock queue, consumes it (prefetch 1) and publishes one token to it. It
// returns how many members consumed it before this one (as queue.declare-ok counted them).
func (c *consumer) join(ctx context.Context) (int, <-chan amqp091.Delivery, error) {
	q := LockQueueName(c.r.stream, c.sub)
	for attempt := 0; ; attempt++ {
		ch, err := c.b.channel(ctx)
		if err != nil {
			return 0, nil, err
		}
		type res struct {
			n    int
			d    <-chan amqp091.Delivery
			lock *amqp091.Channel // ch, or the channel that replaced it after a refusal
		}
		r, err := backends.RunCtx(ctx, "join lock queue "+q, func() (r res, err error) {
			lock := ch
			defer func() {
				if err != nil && lock != ch {
					_ = lock.Close()
				}
			}()
			// Durable, auto-delete, not exclusive: members on other connections consume it, and
			// RabbitMQ 4.3 refuses transient non-exclusive queues by default (package doc).
			dq, err := lock.QueueDeclare(q, true, true, false, false, amqp091.Table{
				"x-single-active-consumer": true, "x-max-length": int64(1), "x-overflow": "drop-head",
				"x-expires": lockQueueExpiry.Milliseconds()})
			if isCode(err, amqp091.PreconditionFailed) {
				// Declared with other properties (by a member of an earlier version of this
				// backend, whose lock queue was transient): it is the lock all the same. The
				// refusal closed the channel.
				if lock, err = c.b.channel(ctx); err != nil {
					lock = ch
					return res{}, err
				}
				dq, err = lock.QueueDeclarePassive(q, true, true, false, false, nil)
			}
			if err != nil {
				return res{}, err
			}
			if err := lock.Qos(1, 0, false); err != nil {
				return res{}, err
			}
			d, err := lock.Consume(q, c.tag, false, false, false, false, nil)
			if err != nil {
				return res{}, err
			}
			if err := lock.Confirm(false); err != nil {
				return res{}, err
			}
			dc, err := lock.PublishWithDeferredConfirm("", q, false, false, amqp091.Publishing{Body: []byte("active-member token")})
			if err != nil {
				return res{}, err
			}
			if !dc.Wait() {
				return res{}, errors.New("the broker refused the lock token")
			}
			return res{dq.Consumers, d, lock}, nil
		}, func(r res) { _ = r.lock.Close() })
		if err != nil {
			_ = ch.Close()
			if isCode(err, amqp091.NotFound) && attempt < 5 && ctx.Err() == nil {
				continue // the queue's last member left (auto-delete) between declare and consume
			}
			if ctx.Err() != nil {
				return 0, nil, err
			}
			return 0, nil, mapErr(err)
		}
		c.mu.Lock()
		if c.closed.Load() {
			c.mu.Unlock()
			_ = r.lock.Close()
			return 0, nil, fmt.Errorf("consumer: %w", backends.ErrClosed)
		}
		c.lockCh = r.lock
		c.mu.Unlock()
		return r.n, r.d, nil
	}
}

// member turns lock tokens into activations and a lost lock into a deactivation, and joins
// the lock again when its channel closed, until the consumer closes.
func (c *consumer) member(deliveries <-chan amqp091.Delivery) {
	first := true
	report := func(err error) {
		if first {
			first = false
			c.activated <- err
		}
	}
	for {
		select {
		case _, ok := <-deliveries:
			if !ok {
				c.deactivate("the lock's channel closed")
				report(fmt.Errorf("%w: the lock queue's channel closed", backends.ErrUnavailable))
				deliveries = c.rejoin()
				if deliveries == nil {
					return
				}
				continue
			}
			c.mu.Lock()
			already := c.active
			c.mu.Unlock()
			if already {
				continue
			}
			ctx, cancel := context.WithTimeout(context.Background(), activateTimeout)
			err := c.activate(ctx)
			cancel()
			report(err)
			if err != nil && !c.closed.Load() {
				c.b.logf("%s: consumer %s on %s: activate: %v (passing the lock on)", Name, c.tag, c.r.stream, err)
				c.deactivate("activation failed")
				c.closeLock() // the token goes to the next member; rejoin on the close above
			}
		case <-c.stop:
			return
		}
	}
}

// rejoin joins the lock again after its channel closed; nil when the consumer closed.
func (c *consumer) rejoin() <-chan amqp091.Delivery {
	for {
		select {
		case <-c.stop:
			return nil
		case <-c.b.done:
			return nil
		case <-time.After(reconnectEvery):
		}
		ctx, cancel := context.WithTimeout(context.Background(), dialTimeout)
		_, d, err := c.join(ctx)
		cancel()
		if err == nil {
			return d
		}
		if errors.Is(err, backends.ErrClosed) {
			return nil
		}
		c.b.logf("%s: consumer %s: join the lock of %s again: %v", Name, c.tag, c.sub, err)
	}
}

func (c *consumer) closeLock() {
	c.mu.Lock()
	ch := c.lockCh
	c.lockCh = nil
	c.mu.Unlock()
	if ch != nil {
		_ = ch.Close()
	}
}

// deactivate ends the term: the stream subscription closes, what was read and not settled is
// forgotten (the next active member reads it from the stored position).
func (c *consumer) deactivate(why string) {
	c.mu.Lock()
	if !c.active {
		c.mu.Unlock()
		return
	}
	c.active = false
	c.suspended = c.bk != nil
	c.queue = nil // read again on resume
	sc := c.endGen()
	c.mu.Unlock()
	if sc != nil {
		go func() { _ = sc.Close() }()
	}
	c.b.logf("%s: consumer %s on %s/%s: no longer active: %s", Name, c.tag, c.r.stream, c.sub, why)
}

// endGen ends the current stream subscription's generation; c.mu held.
func (c *consumer) endGen() *stream.Consumer {
	c.gen++
	if c.genDone != nil {
		close(c.genDone)
		c.genDone = nil
	}
	sc := c.sc
	c.sc = nil
	return sc
}

// activate makes this member the reader: its position from the broker (a new subscription's
// stored first), its books, and a stream subscription from the floor.
func (c *consumer) activate(ctx context.Context) error {
	main, err := c.queryOffset(ctx, c.sub)
	switch {
	case errors.Is(err, stream.OffsetNotFoundError):
		return c.create(ctx)
	case err != nil:
		return err
	}
	if c.resume(main) {
		c.mu.Lock()
		floor, _ := c.bk.commitState()
		c.mu.Unlock()
		c.b.logf("%s: consumer %s on %s/%s: active again, the term goes on at %d", Name, c.tag, c.r.stream, c.sub, floor)
		return c.subscribe(ctx, offsetSpec(floor))
	}
	floor, w0, n := decodeMain(main)
	var acked []int64
	stored := map[int64]int64{-1: main}
	for w := w0; w < w0+n; w++ {
		bits, err := c.queryOffset(ctx, windowRef(c.sub, w))
		if errors.Is(err, stream.OffsetNotFoundError) {
			continue
		}
		if err != nil {
			return err
		}
		stored[w] = bits
		acked = append(acked, windowOffsets(w, bits)...)
	}
	c.mu.Lock()
	c.newTerm()
	c.active, c.bk, c.stored, c.written = true, newBooks(floor, acked), stored, []int64{main}
	c.mu.Unlock()
	return c.subscribe(ctx, offsetSpec(floor))
}

func offsetSpec(floor int64) stream.OffsetSpecification {
	if floor == 0 {
		return stream.OffsetSpecification{}.First()
	}
	return stream.OffsetSpecification{}.Offset(floor)
}

// newTerm forgets the last term's deliveries; c.mu held.
func (c *consumer) newTerm() {
	c.term++
	c.queue, c.dirty, c.suspended, c.refused, c.written = nil, false, false, nil, nil
	clear(c.held)
}

// resume continues a suspended term when the broker's stored position is one this term
// wrote; the refused deliveries go back to the front of the queue.
func (c *consumer) resume(main int64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.suspended || c.bk == nil || !slices.Contains(c.written, main) {
		return false
	}
	var again []entry
	for off := range c.refused {
		if e, ok := c.held[off]; ok {
			delete(c.held, off)
			c.bk.release(off)
			again = append(again, e)
		}
	}
	slices.SortFunc(again, func(a, b entry) int { return cmp.Compare(a.off, b.off) })
	c.active, c.suspended, c.refused, c.dirty = true, false, nil, true
	c.queue = again
	return true
}

// create starts a new shared subscription and stores its position: offset 0 for earliest;
// for latest the offset after a marker this member publishes once it reads from "next".
func (c *consumer) create(ctx context.Context) error {
	c.mu.Lock()
	c.newTerm()
	c.active, c.stored = true, map[int64]int64{}
	earliest := c.pos == backends.Earliest && c.b.rc.EarliestSpec == "first"
	if earliest {
		c.bk = newBooks(0, nil)
	} else {
		c.bk = nil
		c.marker = make(chan int64, 1)
	}
	marker := c.marker
	c.mu.Unlock()
	if earliest {
		if err := c.subscribe(ctx, stream.OffsetSpecification{}.First()); err != nil {
			return err
		}
		return c.storePosition(ctx, 0, nil, false)
	}
	if err := c.subscribe(ctx, stream.OffsetSpecification{}.Next()); err != nil {
		return err
	}
	if err := c.publishMarker(ctx); err != nil {
		return err
	}
	select {
	case m := <-marker:
		return c.storePosition(ctx, m+1, nil, false)
	case <-ctx.Done():
		return backends.CtxErr(ctx, "wait for the position marker")
	case <-c.stop:
		return fmt.Errorf("consumer: %w", backends.ErrClosed)
	}
}

// publishMarker publishes this consumer's position marker to the stream over AMQP 0-9-1 with
// a publisher confirm.
func (c *consumer) publishMarker(ctx context.Context) error {
	c.mu.Lock()
	ch := c.lockCh // in confirm mode already
	c.mu.Unlock()
	if ch == nil {
		var err error
		if ch, err = c.b.channel(ctx); err != nil {
			return err
		}
		defer func() { go ch.Close() }()
	}
	_, err := backends.RunCtx(ctx, "publish the position marker", func() (struct{}, error) {
		if err := ch.Confirm(false); err != nil {
			return struct{}{}, err
		}
		dc, err := ch.PublishWithDeferredConfirm("", c.r.stream, false, false, amqp091.Publishing{
			Headers: amqp091.Table{markerProp: c.tag}, Body: []byte(markerProp + " " + c.tag), DeliveryMode: amqp091.Persistent})
		if err != nil {
			return struct{}{}, err
		}
		if !dc.Wait() {
			return struct{}{}, errors.New("the broker refused the position marker")
		}
		return struct{}{}, nil
	}, nil)
	if err != nil && ctx.Err() == nil {
		return mapErr(err)
	}
	return err
}

// markerOf returns the tag of a position marker, "" for an ordinary message.
func markerOf(m *amqp.Message) (string, bool) {
	for _, props := range []map[string]any{m.ApplicationProperties} {
		if v, ok := props[markerProp]; ok {
			return fmt.Sprint(asString(v)), true
		}
	}
	if v, ok := m.Annotations[markerProp]; ok {
		return asString(v), true
	}
	return "", false
}

func asString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case []byte:
		return string(x)
	default:
		return fmt.Sprint(v)
	}
}

// subscribe opens a stream subscription at spec for a new generation.
func (c *consumer) subscribe(ctx context.Context, spec stream.OffsetSpecification) error {
	c.mu.Lock()
	if old := c.endGen(); old != nil {
		go func() { _ = old.Close() }()
	}
	gen := c.gen
	done := make(chan struct{})
	c.genDone = done
	c.mu.Unlock()
	opts := stream.NewConsumerOptions().SetOffset(spec).SetManualCommit().SetCRCCheck(false).
		SetClientProvidedName("pubsub-conformance-consumer")
	what := "subscribe to " + c.r.stream + " at " + spec.String()
	var sc *stream.Consumer
	err := c.b.withEnv(ctx, func(env *stream.Environment) error {
		return c.b.call(ctx, what, func() error {
			s, err := env.NewConsumer(c.r.stream, c.handler(gen, done), opts)
			if err == nil && ctx.Err() != nil {
				_ = s.Close() // the caller gave up waiting
				return ctx.Err()
			}
			sc = s
			return err
		})
	})
	if err != nil {
		return err
	}
	closed := sc.NotifyClose()
	c.mu.Lock()
	if gen != c.gen || c.closed.Load() {
		c.mu.Unlock()
		go func() { _ = sc.Close() }()
		if c.closed.Load() {
			return fmt.Errorf("consumer: %w", backends.ErrClosed)
		}
		return nil
	}
	c.sc = sc
	c.mu.Unlock()
	go c.watch(gen, closed)
	return nil
}

// watch subscribes again, from the books' floor, when the stream subscription of gen ended
// while still current (a broker restart, a cut connection).
func (c *consumer) watch(gen uint64, closed stream.ChannelClose) {
	select {
	case ev := <-closed:
		c.b.logf("%s: consumer %s on %s: stream subscription ended: %s %v", Name, c.tag, c.r.stream, ev.Reason, ev.Err)
	case <-c.stop:
		return
	}
	for {
		c.mu.Lock()
		if gen != c.gen || !c.active || c.bk == nil || c.closed.Load() {
			c.mu.Unlock()
			return
		}
		floor, _ := c.bk.commitState()
		spec := stream.OffsetSpecification{}.Offset(floor)
		if floor == 0 {
			spec = stream.OffsetSpecification{}.First()
		}
		if !c.shared && !c.bk.started {
			spec = c.first // a unique subscription that read nothing yet has no offset to go back to
		}
		c.queue = nil // read again from the floor; held ones are skipped by the books
		c.mu.Unlock()
		select {
		case <-c.stop:
			return
		case <-c.b.done:
			return
		case <-time.After(reconnectEvery):
		}
		ctx, cancel := context.WithTimeout(context.Background(), dialTimeout)
		c.mu.Lock()
		still := gen == c.gen
		c.mu.Unlock()
		if !still {
			cancel()
			return
		}
		err := c.subscribe(ctx, spec)
		cancel()
		if err == nil {
			c.b.logf("%s: consumer %s on %s: subscribed again at %d", Name, c.tag, c.r.stream, floor)
			return
		}
		if errors.Is(err, backends.ErrClosed) {
			return
		}
		gen++ // subscribe started a generation of its own
		c.b.logf("%s: consumer %s on %s: subscribe again: %v", Name, c.tag, c.r.stream, err)
	}
}

// handler is the stream client's message callback of generation gen.
func (c *consumer) handler(gen uint64, done chan struct{}) stream.MessagesHandler {
	return func(cc stream.ConsumerContext, m *amqp.Message) {
		off := cc.Consumer.GetOffset()
		c.mu.Lock()
		if gen != c.gen {
			c.mu.Unlock()
			return
		}
		if tag, ok := markerOf(m); ok {
			if c.bk == nil {
				if tag == c.tag && c.marker != nil {
					c.bk = newBooks(off+1, nil)
					c.marker <- off
					c.marker = nil
				}
			} else {
				c.bk.settleSilently(off)
				c.dirty = true
			}
			c.mu.Unlock()
			return
		}
		if c.bk == nil || !c.bk.arrive(off) {
			c.mu.Unlock() // before this subscription's marker, or settled already
			return
		}
		c.queue = append(c.queue, entry{off: off, payload: payloadOf(m), props: propsOf(m)})
		select {
		case c.notify <- struct{}{}:
		default:
		}
		for len(c.queue) >= maxBuffered {
			c.mu.Unlock()
			select {
			case <-c.space:
			case <-done:
				return
			case <-c.stop:
				return
			}
			c.mu.Lock()
		}
		c.mu.Unlock()
	}
}

func payloadOf(m *amqp.Message) []byte {
	if len(m.Data) == 1 {
		return append([]byte{}, m.Data[0]...)
	}
	return bytes.Join(m.Data, nil)
}

func propsOf(m *amqp.Message) map[string]string {
	if len(m.ApplicationProperties) == 0 {
		return nil
	}
	out := make(map[string]string, len(m.ApplicationProperties))
	for k, v := range m.ApplicationProperties {
		out[k] = asString(v)
	}
	return out
}

func (c *consumer) encodeID(term uint64, off int64) string {
	return c.tag + "." + strconv.FormatUint(term, 10) + "." + strconv.FormatInt(off, 10)
}

// Receive hands out the next message: a nacked one first, then what the stream delivered.
func (c *consumer) Receive(ctx context.Context) (backends.Delivery, error) {
	what := Name + ": receive from " + c.r.stream
	for {
		if c.closed.Load() {
			return backends.Delivery{}, fmt.Errorf("%s: %w", what, backends.ErrClosed)
		}
		if ctx.Err() != nil {
			return backends.Delivery{}, backends.CtxErr(ctx, what)
		}
		c.mu.Lock()
		for len(c.queue) > 0 {
			e := c.queue[0]
			c.queue = c.queue[1:]
			select {
			case c.space <- struct{}{}:
			default:
			}
			if c.bk == nil || c.bk.settled(e.off) || c.bk.isHeld(e.off) {
				continue
			}
			c.bk.handOut(e.off)
			c.held[e.off] = e
			id := c.encodeID(c.term, e.off)
			c.mu.Unlock()
			payload := e.payload
			if payload == nil {
				payload = []byte{}
			}
			return backends.Delivery{ID: id, Topic: c.r.orig, Payload: payload, Properties: e.props}, nil
		}
		c.mu.Unlock()
		select {
		case <-c.notify:
		case <-c.stop:
			return backends.Delivery{}, fmt.Errorf("%s: %w", what, backends.ErrClosed)
		case <-ctx.Done():
			return backends.Delivery{}, backends.CtxErr(ctx, what)
		}
	}
}

// held returns the offset of d when this consumer handed it out in its current term and it
// is not settled; c.mu held.
func (c *consumer) heldOffset(d backends.Delivery) (int64, error) {
	parts := strings.Split(d.ID, ".")
	if len(parts) != 3 || parts[0] != c.tag {
		return 0, fmt.Errorf("%w: %q was not handed out by this consumer", backends.ErrUnknownDelivery, d.ID)
	}
	term, err1 := strconv.ParseUint(parts[1], 10, 64)
	off, err2 := strconv.ParseInt(parts[2], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("%w: %q is not a delivery id of this backend", backends.ErrUnknownDelivery, d.ID)
	}
	if term == c.term && c.suspended && c.bk != nil && c.bk.isHeld(off) {
		if c.refused == nil {
			c.refused = map[int64]struct{}{}
		}
		c.refused[off] = struct{}{}
		return 0, fmt.Errorf("%w: %q: this member lost the subscription's lock (its connection closed) while holding it; it comes again "+
			"to the subscription", backends.ErrUnknownDelivery, d.ID)
	}
	if term != c.term || c.bk == nil || !c.active {
		return 0, fmt.Errorf("%w: %q was handed out before this member lost the subscription's lock; it comes again to the subscription",
			backends.ErrUnknownDelivery, d.ID)
	}
	if !c.bk.isHeld(off) {
		return 0, fmt.Errorf("%w: %q is already acked or nacked", backends.ErrUnknownDelivery, d.ID)
	}
	return off, nil
}

// Ack records d's acknowledgement in the books; the committer stores the position.
func (c *consumer) Ack(ctx context.Context, d backends.Delivery) error {
	what := Name + ": ack on " + c.r.stream
	if c.closed.Load() {
		return fmt.Errorf("%s: %w", what, backends.ErrClosed)
	}
	if ctx.Err() != nil {
		return backends.CtxErr(ctx, what)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	off, err := c.heldOffset(d)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	c.bk.ack(off)
	delete(c.held, off)
	c.dirty = true
	return nil
}

// Nack hands d out again at once; it stays unacknowledged.
func (c *consumer) Nack(ctx context.Context, d backends.Delivery) error {
	what := Name + ": nack on " + c.r.stream
	if c.closed.Load() {
		return fmt.Errorf("%s: %w", what, backends.ErrClosed)
	}
	if ctx.Err() != nil {
		return backends.CtxErr(ctx, what)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	off, err := c.heldOffset(d)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	e := c.held[off]
	delete(c.held, off)
	c.bk.release(off)
	c.queue = append([]entry{e}, c.queue...)
	select {
	case c.notify <- struct{}{}:
	default:
	}
	return nil
}

// committer stores the position every CommitIntervalMS while acks moved it.
func (c *consumer) committer() {
	t := time.NewTicker(time.Duration(c.b.rc.CommitIntervalMS) * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-c.b.done:
			return
		case <-t.C:
			ctx, cancel := context.WithTimeout(context.Background(), dialTimeout)
			if err := c.commit(ctx, false); err != nil && !c.closed.Load() {
				c.b.logf("%s: consumer %s on %s: store position: %v", Name, c.tag, c.r.stream, err)
			}
			cancel()
		}
	}
}

// commit stores the books' position when it changed (with verify: and reads it back).
func (c *consumer) commit(ctx context.Context, verify bool) error {
	c.mu.Lock()
	if !c.active || c.bk == nil || (!c.dirty && !verify) {
		c.mu.Unlock()
		return nil
	}
	floor, above := c.bk.commitState()
	term := c.term
	c.dirty = false
	c.mu.Unlock()
	if !c.b.rc.StoreOffsets {
		return nil // the variant that never advances the stored position
	}
	err := c.storePosition(ctx, floor, above, verify)
	if err != nil {
		c.mu.Lock()
		if c.term == term {
			c.dirty = true
		}
		c.mu.Unlock()
	}
	return err
}

// storePosition writes the windows that changed, then the main reference; with verify it
// waits until the broker reads the main value back (StoreOffset has no reply).
func (c *consumer) storePosition(ctx context.Context, floor int64, above []int64, verify bool) error {
	p, err := encodePosition(floor, above)
	if err != nil {
		return err
	}
	c.mu.Lock()
	var writes [][2]int64
	for w, bits := range p.windows {
		if c.stored[w] != bits {
			writes = append(writes, [2]int64{w, bits})
		}
	}
	mainChanged := c.stored[-1] != p.main || len(c.stored) == 0
	c.mu.Unlock()
	for _, wb := range writes {
		if err := c.b.call(ctx, "store offset window", func() error { return c.b.env.StoreOffset(windowRef(c.sub, wb[0]), c.r.stream, wb[1]) }); err != nil {
			return err
		}
	}
	if mainChanged || verify {
		if err := c.b.call(ctx, "store offset", func() error { return c.b.env.StoreOffset(c.sub, c.r.stream, p.main) }); err != nil {
			return err
		}
	}
	c.mu.Lock()
	for _, wb := range writes {
		c.stored[wb[0]] = wb[1]
	}
	c.stored[-1] = p.main
	if len(c.written) >= 64 {
		c.written = c.written[1:]
	}
	c.written = append(c.written, p.main)
	c.mu.Unlock()
	if !verify {
		return nil
	}
	for {
		v, err := c.queryOffset(ctx, c.sub)
		if err == nil && v == p.main {
			return nil
		}
		if err != nil && !errors.Is(err, stream.OffsetNotFoundError) {
			return err
		}
		select {
		case <-ctx.Done():
			return backends.CtxErr(ctx, "wait for the stored offset to read back")
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func (c *consumer) queryOffset(ctx context.Context, ref string) (int64, error) {
	var v int64
	err := c.b.call(ctx, "query offset "+ref, func() (err error) {
		v, err = c.b.env.QueryOffset(ref, c.r.stream)
		return err
	})
	if err != nil && errors.Is(err, stream.OffsetNotFoundError) {
		return 0, stream.OffsetNotFoundError
	}
	return v, err
}

// Close stores the position (and waits until it reads back), closes the stream subscription
// and then the lock's channel, which passes the token to the next member. Idempotent.
func (c *consumer) Close(ctx context.Context) error {
	c.once.Do(func() {
		var err error
		if c.shared && c.b.rc.StoreOffsets {
			err = c.commit(ctx, true)
		}
		c.closed.Store(true)
		close(c.stop)
		c.b.mu.Lock()
		delete(c.b.consumers, c)
		c.b.mu.Unlock()
		c.mu.Lock()
		sc := c.endGen()
		c.active = false
		c.mu.Unlock()
		_, cerr := backends.RunCtx(ctx, Name+": close consumer on "+c.r.stream, func() (struct{}, error) {
			if sc != nil {
				_ = sc.Close()
			}
			c.closeLock()
			return struct{}{}, nil
		}, nil)
		c.closeErr = errors.Join(err, cerr)
	})
	return c.closeErr
}
