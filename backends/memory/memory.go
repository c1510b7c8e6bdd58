// Package memory is the REFERENCE backend: a small in-process implementation of the whole
// contract in backends/backend.go. It is the executable definition of the contract, used to
// self-test the specs in seconds. It is never a stand-in for a broker: a result on memory is
// never a conformance result for Kafka, Pulsar or anything else.
//
// Model: a Broker holds topics; a topic is an append-only log with a retention; a subscription
// is a cursor into the log plus the set of messages handed out but not yet acknowledged.
// Every class keeps its log (so memory claims every capability). A Backend is one client
// connection to a Broker; several Backends opened on the same Broker see the same topics,
// which is how specs reopen subscriptions "from another process".
package memory

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pubsub-conformance/harness/backends"
)

// Name is the registry name of the reference backend.
const Name = "memory"

// Description is what registries, reports and help texts show for this backend.
const Description = "in-process reference backend (executable definition of the contract; not a broker)"

// Descriptor registers the reference backend (see backends/all): no broker, never a
// conformance result.
var Descriptor = backends.Descriptor{Name: Name, Description: Description, Reference: true, New: New, InProcess: NewInstance}

// Broker is the in-process "server" that Backends connect to. The zero value is not usable;
// call NewBroker. Safe for concurrent use.
type Broker struct {
	mu      sync.Mutex
	topics  map[string]*topic
	changed chan struct{} // closed and replaced on every change that may unblock a Receive
	conns   map[*Backend]struct{}
	seq     atomic.Int64 // unique ids for unique-mode subscriptions and deliveries
	// restarts counts Restart calls (Backend.Restarts).
	restarts atomic.Int64
	// unreachable simulates a network cut between every client and this broker (Cut).
	unreachable atomic.Bool
	// latency simulates network latency each way between every client and this broker
	// (SetLatency), in nanoseconds.
	latency atomic.Int64
	now     func() time.Time
}

// NewBroker returns an empty broker.
func NewBroker() *Broker {
	return &Broker{
		topics:  map[string]*topic{},
		changed: make(chan struct{}),
		conns:   map[*Backend]struct{}{},
		now:     time.Now,
	}
}

type entry struct {
	offset int64
	msg    backends.Message
	at     time.Time
}

type topic struct {
	t         backends.Topic
	retention time.Duration
	log       []entry // ascending offsets; expired entries may still be present until trimmed
	next      int64   // offset of the next appended entry
	subs      map[string]*subscription
}

type subscription struct {
	name     string
	cursor   int64               // next offset never handed out
	pending  map[int64]*consumer // handed out, not acknowledged: offset -> holder
	redo     []int64             // nacked or released offsets, delivered before the cursor
	acked    map[int64]bool      // acknowledged offsets at or above the lowest unacked one
	consumed int                 // consumers currently attached (diagnostics only)
	// waiting are the consumers blocked in Receive, longest waiting first: the next message
	// goes to the first of them (C-SUB-6, load sharing: round robin among idle consumers),
	// rather than to whichever goroutine the scheduler wakes first.
	waiting []*consumer
}

// broadcast wakes every blocked Receive. Called with b.mu held.
func (b *Broker) broadcast() {
	close(b.changed)
	b.changed = make(chan struct{})
}

// Restart simulates a broker restart: every connection's in-flight (handed out, unacked)
// messages become deliverable again, and non-durable classes lose their messages, as a broker
// that keeps them only in memory would. Durable (flow) logs and all subscription positions
// survive. Open Backends stay usable (clients reconnect).
func (b *Broker) Restart() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.restarts.Add(1)
	for _, tp := range b.topics {
		for _, s := range tp.subs {
			for off := range s.pending {
				s.release(off)
			}
		}
		if !tp.t.Class.Durable() {
			tp.log = nil
		}
	}
	b.broadcast()
}

// SetUnreachable simulates a network cut (true) between every client and the broker, and its
// heal (false): while cut, every call that needs the broker (topic admin, Producer, Consumer,
// Send) fails at once with ErrUnavailable, as a client that gets "connection refused" may;
// Receive keeps waiting (a client retries its connection until its deadline), and nothing the
// broker holds changes. Open Backends work again after the heal.
func (b *Broker) SetUnreachable(cut bool) { b.unreachable.Store(cut) }

// SetLatency simulates d of network latency each way between every client and the broker
// (0 removes it): every call that needs the broker (topic admin, Producer, Consumer, Send,
// Ack, Nack) first waits out a round trip of 2d, and when its context ends before that the
// call fails with ErrTimeout and has no effect (the request never reached the broker).
// Receive and Close are not slowed (a client prefetches; closing is local).
func (b *Broker) SetLatency(d time.Duration) { b.latency.Store(int64(d)) }

// roundTrip waits out one simulated round trip (SetLatency) or ends with ctx.
func (b *Broker) roundTrip(ctx context.Context, what string) error {
	d := time.Duration(b.latency.Load())
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(2 * d) // the simulated latency itself, not synchronisation
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return backends.CtxErr(ctx, what)
	}
}

// Open connects a new Backend to the broker. It is the Constructor body: cfg supplies the
// per-class retention overrides.
func (b *Broker) Open(_ context.Context, cfg backends.Config) (*Backend, error) {
	name := cfg.Backend
	if name == "" {
		name = Name
	}
	be := &Backend{broker: b, cfg: cfg, name: name, consumers: map[*consumer]struct{}{}}
	b.mu.Lock()
	b.conns[be] = struct{}{}
	b.mu.Unlock()
	return be, nil
}

// Constructor returns a backends.Constructor whose Backends all connect to b.
func (b *Broker) Constructor() backends.Constructor {
	return func(ctx context.Context, cfg backends.Config) (backends.Backend, error) {
		return b.Open(ctx, cfg)
	}
}

var (
	processOnce   sync.Once
	processBroker *Broker
)

// ProcessBroker is the broker that the registered "memory" backend connects to: one per
// process, so every Backend opened by name in one test process sees the same topics.
func ProcessBroker() *Broker {
	processOnce.Do(func() { processBroker = NewBroker() })
	return processBroker
}

// New is the registered constructor: a Backend on ProcessBroker, or on the private broker
// that the setting MEMORY_BROKER names (see NewInstance).
func New(ctx context.Context, cfg backends.Config) (backends.Backend, error) {
	b := ProcessBroker()
	if id := cfg.Setting(BrokerSetting); id != "" {
		instMu.Lock()
		b = instances[id]
		instMu.Unlock()
		if b == nil {
			return nil, fmt.Errorf("%w: %s=%q names no private memory broker of this process", backends.ErrInvalidConfig, BrokerSetting, id)
		}
	}
	return b.Open(ctx, cfg)
}

// BrokerSetting names a private broker (NewInstance) in a Config's Settings.
const BrokerSetting = "MEMORY_BROKER"

var (
	instMu    sync.Mutex
	instances = map[string]*Broker{}
	instSeq   int
)

// NewInstance starts a private broker (Descriptor.InProcess): Backends whose Config carries its
// Settings connect to it instead of ProcessBroker.
func NewInstance() backends.Instance {
	instMu.Lock()
	defer instMu.Unlock()
	instSeq++
	i := &instance{id: "private-" + strconv.Itoa(instSeq), b: NewBroker()}
	instances[i.id] = i.b
	return i
}

type instance struct {
	id string
	b  *Broker
}

func (i *instance) Settings() map[string]string { return map[string]string{BrokerSetting: i.id} }
func (i *instance) Restart()                    { i.b.Restart() }
func (i *instance) SetUnreachable(cut bool)     { i.b.SetUnreachable(cut) }
func (i *instance) SetLatency(d time.Duration)  { i.b.SetLatency(d) }
func (i *instance) Close() {
	instMu.Lock()
	delete(instances, i.id)
	instMu.Unlock()
}

// Backend is one client connection to a Broker.
type Backend struct {
	broker    *Broker
	cfg       backends.Config
	name      string
	mu        sync.Mutex
	closed    bool
	consumers map[*consumer]struct{}
}

var _ backends.Backend = (*Backend)(nil)

// Name implements backends.Backend.
func (be *Backend) Name() string { return be.name }

// Unsupported implements backends.Backend: the reference claims the whole contract.
func (be *Backend) Unsupported() map[backends.Capability]string { return nil }

func (be *Backend) check(ctx context.Context, what string) error {
	if err := backends.CtxErr(ctx, what); err != nil {
		return err
	}
	be.mu.Lock()
	closed := be.closed
	be.mu.Unlock()
	if closed {
		return fmt.Errorf("%s: %w", what, backends.ErrClosed)
	}
	if be.broker.unreachable.Load() {
		return fmt.Errorf("%s: %w: the in-process broker is cut off (simulated network cut)", what, backends.ErrUnavailable)
	}
	return be.broker.roundTrip(ctx, what)
}

func parse(what, s string) (backends.Topic, error) {
	t, err := backends.ParseTopic(s)
	if err != nil {
		return t, fmt.Errorf("%s: %w", what, err)
	}
	return t, nil
}

// ensure creates the topic when missing. Called with broker.mu held.
func (be *Backend) ensure(t backends.Topic, opts ...backends.TopicOption) *topic {
	key := t.String()
	tp, ok := be.broker.topics[key]
	if !ok {
		set := backends.ApplyTopicOptions(t, be.cfg, opts...)
		tp = &topic{t: t, retention: set.Retention, subs: map[string]*subscription{}}
		be.broker.topics[key] = tp
	}
	return tp
}

// CreateTopic implements backends.Backend.
func (be *Backend) CreateTopic(ctx context.Context, s string, opts ...backends.TopicOption) error {
	if err := be.check(ctx, "create topic"); err != nil {
		return err
	}
	t, err := parse("create topic", s)
	if err != nil {
		return err
	}
	be.broker.mu.Lock()
	defer be.broker.mu.Unlock()
	be.ensure(t, opts...)
	return nil
}

// EnsureTopic implements backends.Backend.
func (be *Backend) EnsureTopic(ctx context.Context, s string, opts ...backends.TopicOption) error {
	return be.CreateTopic(ctx, s, opts...)
}

// DeleteTopic implements backends.Backend.
func (be *Backend) DeleteTopic(ctx context.Context, s string) error {
	if err := be.check(ctx, "delete topic"); err != nil {
		return err
	}
	t, err := parse("delete topic", s)
	if err != nil {
		return err
	}
	be.broker.mu.Lock()
	defer be.broker.mu.Unlock()
	delete(be.broker.topics, t.String())
	be.broker.broadcast()
	return nil
}

// TopicExists implements backends.Backend.
func (be *Backend) TopicExists(ctx context.Context, s string) (bool, error) {
	if err := be.check(ctx, "topic exists"); err != nil {
		return false, err
	}
	t, err := parse("topic exists", s)
	if err != nil {
		return false, err
	}
	be.broker.mu.Lock()
	defer be.broker.mu.Unlock()
	_, ok := be.broker.topics[t.String()]
	return ok, nil
}

// Retention implements backends.Backend.
func (be *Backend) Retention(ctx context.Context, s string) (time.Duration, error) {
	if err := be.check(ctx, "retention"); err != nil {
		return 0, err
	}
	t, err := parse("retention", s)
	if err != nil {
		return 0, err
	}
	be.broker.mu.Lock()
	defer be.broker.mu.Unlock()
	tp, ok := be.broker.topics[t.String()]
	if !ok {
		return 0, fmt.Errorf("retention of %s: topic does not exist", s)
	}
	return tp.retention, nil
}

// Producer implements backends.Backend.
func (be *Backend) Producer(ctx context.Context, s string) (backends.Producer, error) {
	if err := be.check(ctx, "producer"); err != nil {
		return nil, err
	}
	t, err := parse("producer", s)
	if err != nil {
		return nil, err
	}
	be.broker.mu.Lock()
	be.ensure(t)
	be.broker.mu.Unlock()
	return &producer{be: be, t: t}, nil
}

// Consumer implements backends.Backend. The subscription exists (and its start position is
// fixed) before Consumer returns, which is what makes a message sent right after it arrive.
func (be *Backend) Consumer(ctx context.Context, s, sub string, opts ...backends.ConsumerOption) (backends.Consumer, error) {
	if err := be.check(ctx, "consumer"); err != nil {
		return nil, err
	}
	t, err := parse("consumer", s)
	if err != nil {
		return nil, err
	}
	if sub == "" {
		return nil, fmt.Errorf("consumer of %s: %w: empty subscription name", s, backends.ErrInvalidConfig)
	}
	set := backends.ApplyConsumerOptions(t, opts...)
	name := sub
	if set.Mode == backends.Unique {
		// Unique: a subscription of its own per consumer (fan-out), never reused.
		name = sub + "/unique-" + strconv.FormatInt(be.broker.seq.Add(1), 10)
	}
	b := be.broker
	b.mu.Lock()
	defer b.mu.Unlock()
	tp := be.ensure(t)
	sb, ok := tp.subs[name]
	if !ok {
		sb = &subscription{name: name, cursor: tp.next, pending: map[int64]*consumer{}, acked: map[int64]bool{}}
		if set.Position == backends.Earliest {
			sb.cursor = tp.first()
		}
		tp.subs[name] = sb
	}
	sb.consumed++
	c := &consumer{be: be, t: t, topicKey: t.String(), tp: tp, sub: sb, closed: make(chan struct{}),
		id: strconv.FormatInt(consumerSeq.Add(1), 10)}
	be.mu.Lock()
	be.consumers[c] = struct{}{}
	be.mu.Unlock()
	return c, nil
}

// first is the lowest retained offset. Called with broker.mu held.
func (tp *topic) first() int64 {
	if len(tp.log) > 0 {
		return tp.log[0].offset
	}
	return tp.next
}

// find returns the entry at off, if still retained and not expired.
func (tp *topic) find(off int64, now time.Time) (entry, bool) {
	i := sort.Search(len(tp.log), func(i int) bool { return tp.log[i].offset >= off })
	if i == len(tp.log) || tp.log[i].offset != off {
		return entry{}, false
	}
	e := tp.log[i]
	if tp.retention > 0 && now.Sub(e.at) > tp.retention {
		return entry{}, false
	}
	return e, true
}

// trim drops expired entries from the head of the log.
func (tp *topic) trim(now time.Time) {
	n := 0
	for n < len(tp.log) && tp.retention > 0 && now.Sub(tp.log[n].at) > tp.retention {
		n++
	}
	if n > 0 {
		tp.log = append([]entry(nil), tp.log[n:]...)
	}
}

// release makes a handed-out offset deliverable again.
func (s *subscription) release(off int64) {
	delete(s.pending, off)
	s.redo = append(s.redo, off)
	sort.Slice(s.redo, func(i, j int) bool { return s.redo[i] < s.redo[j] })
}

// Kill drops this connection the way a crashed process does: no Close calls, the broker just
// notices the connection is gone and makes its unacknowledged messages deliverable again.
// Used to run the consumer-crash spec (R5) in-process.
func (be *Backend) Kill() {
	be.mu.Lock()
	be.closed = true
	cs := be.consumers
	be.consumers = map[*consumer]struct{}{}
	be.mu.Unlock()
	b := be.broker
	b.mu.Lock()
	defer b.mu.Unlock()
	for c := range cs {
		c.detach()
	}
	delete(b.conns, be)
	b.broadcast()
}

// Close implements backends.Backend: closes every consumer still open. Idempotent.
func (be *Backend) Close(ctx context.Context) error {
	be.mu.Lock()
	if be.closed {
		be.mu.Unlock()
		return nil
	}
	be.mu.Unlock()
	be.Kill() // same effect in memory: release what this connection held
	return nil
}

type producer struct {
	be     *Backend
	t      backends.Topic
	closed atomic.Bool
}

// Send appends to the log. Like a broker with topic auto-creation, it recreates a topic that
// was deleted after the producer was made.
func (p *producer) Send(ctx context.Context, m backends.Message) error {
	if err := backends.CtxErr(ctx, "send"); err != nil {
		return err
	}
	if p.closed.Load() {
		return fmt.Errorf("send: producer %w", backends.ErrClosed)
	}
	if err := p.be.check(ctx, "send"); err != nil {
		return err
	}
	// Copy: the caller may reuse its buffers after Send returned.
	msg := backends.Message{Payload: append([]byte{}, m.Payload...), Properties: maps.Clone(m.Properties)}
	b := p.be.broker
	b.mu.Lock()
	defer b.mu.Unlock()
	tp := p.be.ensure(p.t)
	now := b.now()
	tp.trim(now)
	tp.log = append(tp.log, entry{offset: tp.next, msg: msg, at: now})
	tp.next++
	b.broadcast()
	return nil
}

func (p *producer) Close(context.Context) error { p.closed.Store(true); return nil }

// consumerSeq numbers consumers: a Delivery ID names its consumer, so that another consumer's
// delivery is told apart from this one's (ErrUnknownDelivery).
var consumerSeq atomic.Int64

type consumer struct {
	id       string // prefix of this consumer's Delivery IDs: "<id>.<offset>"
	be       *Backend
	t        backends.Topic
	topicKey string
	tp       *topic
	sub      *subscription
	once     sync.Once
	closed   chan struct{}
	detached bool          // guarded by broker.mu
	queuedIn *subscription // the subscription whose waiting list holds c, or nil; guarded by broker.mu
}

// mayTake reports whether c is next in line for its subscription's messages: nobody waits
// ahead of it. Called with broker.mu held.
func (c *consumer) mayTake() bool {
	w := c.sub.waiting
	return len(w) == 0 || w[0] == c
}

// queue puts c at the end of its subscription's waiting list, once. Called with broker.mu held.
func (c *consumer) queue() {
	if c.queuedIn == nil {
		c.queuedIn = c.sub
		c.sub.waiting = append(c.sub.waiting, c)
	}
}

// unqueue takes c off the waiting list and wakes the others, so the next in line may take.
// Called with broker.mu held.
func (c *consumer) unqueue() {
	if s := c.queuedIn; s != nil {
		c.queuedIn = nil
		s.waiting = slices.DeleteFunc(s.waiting, func(x *consumer) bool { return x == c })
		if len(s.waiting) > 0 {
			c.be.broker.broadcast()
		}
	}
}

// detach releases this consumer's unacked messages. Called with broker.mu held.
func (c *consumer) detach() {
	if c.detached {
		return
	}
	c.detached = true
	c.sub.consumed--
	for off, holder := range c.sub.pending {
		if holder == c {
			c.sub.release(off)
		}
	}
	c.once.Do(func() { close(c.closed) })
}

// live returns the topic and subscription this consumer reads, or false when the topic was
// deleted (or deleted and recreated) since the consumer was made. Called with broker.mu held.
func (c *consumer) live() bool {
	tp, ok := c.be.broker.topics[c.topicKey]
	return ok && tp == c.tp && tp.subs[c.sub.name] == c.sub
}

// take hands out the next deliverable message. Called with broker.mu held.
func (c *consumer) take(now time.Time) (backends.Delivery, bool) {
	if !c.live() {
		return backends.Delivery{}, false
	}
	s, tp := c.sub, c.tp
	for len(s.redo) > 0 {
		off := s.redo[0]
		s.redo = s.redo[1:]
		if s.acked[off] {
			continue
		}
		if e, ok := tp.find(off, now); ok {
			return c.handOut(e), true
		}
	}
	for s.cursor < tp.next {
		off := s.cursor
		s.cursor++
		if e, ok := tp.find(off, now); ok {
			return c.handOut(e), true
		}
	}
	return backends.Delivery{}, false
}

func (c *consumer) handOut(e entry) backends.Delivery {
	c.sub.pending[e.offset] = c
	return backends.Delivery{
		ID:         c.id + "." + strconv.FormatInt(e.offset, 10),
		Topic:      c.t.String(),
		Payload:    append([]byte{}, e.msg.Payload...),
		Properties: maps.Clone(e.msg.Properties),
	}
}

// Receive implements backends.Consumer.
func (c *consumer) Receive(ctx context.Context) (backends.Delivery, error) {
	b := c.be.broker
	defer func() {
		b.mu.Lock()
		c.unqueue()
		b.mu.Unlock()
	}()
	for {
		if err := backends.CtxErr(ctx, "receive from "+c.topicKey); err != nil {
			return backends.Delivery{}, err
		}
		b.mu.Lock()
		if c.detached {
			b.mu.Unlock()
			return backends.Delivery{}, fmt.Errorf("receive: consumer %w", backends.ErrClosed)
		}
		var (
			d  backends.Delivery
			ok bool
		)
		if c.mayTake() {
			d, ok = c.take(b.now())
		}
		if ok {
			c.unqueue()
		} else {
			c.queue()
		}
		wait := b.changed
		b.mu.Unlock()
		if ok {
			return d, nil
		}
		select {
		case <-wait:
		case <-c.closed:
		case <-ctx.Done():
		}
	}
}

func (c *consumer) settle(ctx context.Context, what string, d backends.Delivery, ack bool) error {
	if err := backends.CtxErr(ctx, what); err != nil {
		return err
	}
	owner, offs, _ := strings.Cut(d.ID, ".")
	off, err := strconv.ParseInt(offs, 10, 64)
	if err != nil {
		return fmt.Errorf("%s %q: %w", what, d.ID, backends.ErrUnknownDelivery)
	}
	if owner != c.id {
		return fmt.Errorf("%s %q: %w: handed out by another consumer", what, d.ID, backends.ErrUnknownDelivery)
	}
	b := c.be.broker
	if err := b.roundTrip(ctx, what); err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if c.detached {
		return fmt.Errorf("%s: consumer %w", what, backends.ErrClosed)
	}
	if _, ok := c.sub.pending[off]; !ok {
		if c.sub.acked[off] {
			return nil // settling twice is harmless
		}
		return fmt.Errorf("%s %q: %w", what, d.ID, backends.ErrUnknownDelivery)
	}
	if ack {
		delete(c.sub.pending, off)
		c.sub.acked[off] = true
	} else {
		c.sub.release(off)
		b.broadcast()
	}
	return nil
}

// Ack implements backends.Consumer: individual acknowledgement, nothing else is affected.
func (c *consumer) Ack(ctx context.Context, d backends.Delivery) error {
	return c.settle(ctx, "ack", d, true)
}

// Nack implements backends.Consumer: d is deliverable again at once.
func (c *consumer) Nack(ctx context.Context, d backends.Delivery) error {
	return c.settle(ctx, "nack", d, false)
}

// Close implements backends.Consumer: the subscription stays, unacked messages are released.
func (c *consumer) Close(context.Context) error {
	b := c.be.broker
	b.mu.Lock()
	c.detach()
	b.broadcast()
	b.mu.Unlock()
	c.be.mu.Lock()
	delete(c.be.consumers, c)
	c.be.mu.Unlock()
	return nil
}

// Restarts counts the restarts of the broker be is a client of (Instance.Restart): a
// decorator can tell a consumer opened before a restart (backends/mutants reads it for its
// restart-strands-consumers variant).
func (be *Backend) Restarts() int64 { return be.broker.restarts.Load() }

// Unsubscribe removes a subscription with its position. It is not part of the contract (whose
// Close never unsubscribes); it exists so the "close-unsubscribes" mutant can reproduce the
// seed's bug on the reference backend.
func (be *Backend) Unsubscribe(ctx context.Context, topic, sub string) error {
	if err := be.check(ctx, "unsubscribe"); err != nil {
		return err
	}
	t, err := parse("unsubscribe", topic)
	if err != nil {
		return err
	}
	be.broker.mu.Lock()
	defer be.broker.mu.Unlock()
	if tp, ok := be.broker.topics[t.String()]; ok {
		delete(tp.subs, sub)
	}
	return nil
}
