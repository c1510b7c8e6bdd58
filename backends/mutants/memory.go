package mutants

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/pubsub-conformance/harness/backends"
	"github.com/pubsub-conformance/harness/backends/memory"
)

// Known-bad variants only the reference backend can express without touching a client library.
// They join the shared mutant catalogue through Register (registered as
// "memory~<variant>") so the self-test and make mutants can prove the specs they name fail.
var memoryBases = []string{memory.Name}

var memoryVariants = []Variant{
	Variant{
		Name:    "close-unsubscribes",
		Catches: []string{"R1", "R2", "A3"},
		Defect:  "Consumer.Close unsubscribes: the subscription and its position are dropped (the seed's unsubscribe() bug)",
		Bases:   memoryBases,
		Wrap: func(b backends.Backend) backends.Backend {
			mb, ok := b.(*memory.Backend)
			if !ok {
				return b
			}
			return &closeUnsubscribes{Backend: mb}
		},
	},
	Variant{
		Name:    "latest-race",
		Catches: []string{"D2", "R2"},
		Sanity:  []string{"D7"}, // D1 sends right after Consumer() returns
		Defect:  "Consumer returns before the subscription exists; it is created at latest on the first Receive (the seed's blocking bug)",
		Bases:   memoryBases,
		Wrap:    func(b backends.Backend) backends.Backend { return &lateSubscribe{Backend: b} },
	},
	Variant{
		Name:    "timeout-not-wrapped",
		Catches: []string{"D7"},
		Defect:  "Receive ends at its deadline with a plain error callers cannot recognise as a timeout",
		Bases:   memoryBases,
		Wrap: func(b backends.Backend) backends.Backend {
			return WrapConsumers(b, func(c backends.Consumer) backends.Consumer { return &plainTimeout{Consumer: c} })
		},
	},
	Variant{
		Name:    "ack-noop",
		Catches: []string{"A4"},
		Defect:  "Ack does nothing: acknowledged messages come again after a reopen",
		Bases:   memoryBases,
		Wrap: func(b backends.Backend) backends.Backend {
			return WrapConsumers(b, func(c backends.Consumer) backends.Consumer { return &ackNoop{Consumer: c} })
		},
	},
	Variant{
		Name:    "duplicates",
		Catches: []string{"D3", "G1"},
		Sanity:  []string{"D7"}, // D1 counts deliveries
		Defect:  "every message is delivered twice in steady state",
		Bases:   memoryBases,
		Wrap: func(b backends.Backend) backends.Backend {
			return WrapConsumers(b, func(c backends.Consumer) backends.Consumer { return &twice{Consumer: c} })
		},
	},
	Variant{
		Name:    "drops-empty-properties",
		Catches: []string{"D1"},
		Sanity:  []string{"D4"}, // D1 is its killer
		Defect:  "properties with an empty value are dropped in transit",
		Bases:   memoryBases,
		Wrap: func(b backends.Backend) backends.Backend {
			return WrapConsumers(b, func(c backends.Consumer) backends.Consumer { return &dropEmpty{Consumer: c} })
		},
	},
	Variant{
		Name:    "shared-fans-out",
		Catches: []string{"G1", "G3"},
		Defect:  "consumers of one shared subscription each get every message instead of competing",
		Bases:   memoryBases,
		Wrap:    func(b backends.Backend) backends.Backend { return &sharedFansOut{Backend: b} },
	},
	Variant{
		Name:    "standby-members",
		Catches: []string{"G4"},
		Defect:  "only the first live consumer of a shared subscription receives; the others stand by until it closes (one Kafka partition per topic, as a defect)",
		Bases:   memoryBases,
		Wrap: func(b backends.Backend) backends.Backend {
			return &standbyMembers{Backend: b, members: map[string][]*standby{}}
		},
	},
	Variant{
		Name:    "restart-strands-consumers",
		Catches: []string{"R6"},
		Defect:  "consumers opened before a broker restart never receive again: the client does not resubscribe after reconnecting",
		Bases:   memoryBases,
		Wrap: func(b backends.Backend) backends.Backend {
			mb, ok := b.(*memory.Backend)
			if !ok {
				return b
			}
			return WrapConsumers(b, func(c backends.Consumer) backends.Consumer {
				return &stranded{Consumer: c, mb: mb, at: mb.Restarts()}
			})
		},
	},
	Variant{
		// Written so that no spec's own assertion sees it: F3 only counts what its
		// failed Sends delivered, and F1 retries its Sends itself (a message sent twice
		// may arrive twice). The history checkers see a message sent once, acked, and
		// delivered again.
		Name:    "send-retry-duplicates",
		Catches: []string{"F3"},
		Defect:  "Send retries through a broken connection and the broker kept the attempt that failed: a message whose one Send returned nil is in the log twice",
		Bases:   memoryBases,
		Wrap:    func(b backends.Backend) backends.Backend { return &retryDuplicates{Backend: b} },
	},
	Variant{
		Name:    "accepts-invalid-topics",
		Catches: []string{"L4"},
		Defect:  "invalid topic strings are silently mapped to a flow topic instead of rejected",
		Bases:   memoryBases,
		Wrap:    func(b backends.Backend) backends.Backend { return &acceptsInvalid{Backend: b} },
	},
}

// retryDuplicates retries a Send that failed for want of the broker, every 100 ms within its
// context, and when a retry succeeds writes the message once more: the failed attempt that
// "had reached the broker".
type retryDuplicates struct{ backends.Backend }

func (b *retryDuplicates) Unwrap() backends.Backend { return b.Backend }

func (b *retryDuplicates) Producer(ctx context.Context, topic string) (backends.Producer, error) {
	p, err := b.Backend.Producer(ctx, topic)
	if err != nil {
		return nil, err
	}
	return &retryDuplicatesProducer{Producer: p}, nil
}

type retryDuplicatesProducer struct{ backends.Producer }

func (p *retryDuplicatesProducer) Send(ctx context.Context, m backends.Message) error {
	failed := false
	retry := time.NewTicker(100 * time.Millisecond) // the defect's retry pacing
	defer retry.Stop()
	for {
		err := p.Producer.Send(ctx, m)
		switch {
		case err == nil:
			if failed {
				_ = p.Producer.Send(ctx, m)
			}
			return nil
		case !errors.Is(err, backends.ErrUnavailable):
			return err
		}
		failed = true
		select {
		case <-ctx.Done():
			return backends.CtxErr(ctx, "send")
		case <-retry.C:
		}
	}
}

type plainTimeout struct{ backends.Consumer }

func (c *plainTimeout) Receive(ctx context.Context) (backends.Delivery, error) {
	d, err := c.Consumer.Receive(ctx)
	if err != nil && errors.Is(err, backends.ErrTimeout) {
		return d, errors.New("no message")
	}
	return d, err
}

type ackNoop struct{ backends.Consumer }

func (c *ackNoop) Ack(context.Context, backends.Delivery) error { return nil }

// twice returns every delivery a second time on the next Receive.
type twice struct {
	backends.Consumer
	mu    sync.Mutex
	again *backends.Delivery
}

func (c *twice) Receive(ctx context.Context) (backends.Delivery, error) {
	c.mu.Lock()
	if d := c.again; d != nil {
		c.again = nil
		c.mu.Unlock()
		return *d, nil
	}
	c.mu.Unlock()
	d, err := c.Consumer.Receive(ctx)
	if err == nil {
		c.mu.Lock()
		c.again = &d
		c.mu.Unlock()
	}
	return d, err
}

type dropEmpty struct{ backends.Consumer }

func (c *dropEmpty) Receive(ctx context.Context) (backends.Delivery, error) {
	d, err := c.Consumer.Receive(ctx)
	for k, v := range d.Properties {
		if v == "" {
			delete(d.Properties, k)
		}
	}
	return d, err
}

type sharedFansOut struct{ backends.Backend }

func (b *sharedFansOut) Consumer(ctx context.Context, topic, sub string, opts ...backends.ConsumerOption) (backends.Consumer, error) {
	return b.Backend.Consumer(ctx, topic, sub, append(opts, backends.WithMode(backends.Unique))...)
}

// standbyMembers lets only the oldest open consumer of a shared subscription receive: each
// message still reaches exactly one consumer (G1 holds), but the group shares no load.
type standbyMembers struct {
	backends.Backend
	mu      sync.Mutex
	members map[string][]*standby // topic + subscription -> open consumers, oldest first
	changed chan struct{}         // closed and replaced when a member leaves
}

type standby struct {
	backends.Consumer
	b    *standbyMembers
	key  string
	once sync.Once
}

func (b *standbyMembers) Consumer(ctx context.Context, topic, sub string, opts ...backends.ConsumerOption) (backends.Consumer, error) {
	c, err := b.Backend.Consumer(ctx, topic, sub, opts...)
	if err != nil {
		return nil, err
	}
	t, err := backends.ParseTopic(topic)
	if err != nil || backends.ApplyConsumerOptions(t, opts...).Mode != backends.Shared {
		return c, nil
	}
	s := &standby{Consumer: c, b: b, key: t.String() + "\x00" + sub}
	b.mu.Lock()
	b.members[s.key] = append(b.members[s.key], s)
	if b.changed == nil {
		b.changed = make(chan struct{})
	}
	b.mu.Unlock()
	return s, nil
}

// active reports whether s is the oldest open member, and the channel that says when that may
// have changed.
func (s *standby) active() (bool, chan struct{}) {
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	m := s.b.members[s.key]
	return len(m) > 0 && m[0] == s, s.b.changed
}

func (s *standby) Receive(ctx context.Context) (backends.Delivery, error) {
	for {
		ok, changed := s.active()
		if ok {
			return s.Consumer.Receive(ctx)
		}
		select {
		case <-ctx.Done():
			return backends.Delivery{}, backends.CtxErr(ctx, "receive (standing by)")
		case <-changed:
		}
	}
}

func (s *standby) Close(ctx context.Context) error {
	s.once.Do(func() {
		s.b.mu.Lock()
		s.b.members[s.key] = slices.DeleteFunc(s.b.members[s.key], func(x *standby) bool { return x == s })
		close(s.b.changed)
		s.b.changed = make(chan struct{})
		s.b.mu.Unlock()
	})
	return s.Consumer.Close(ctx)
}

// acceptsInvalid maps anything it cannot parse to flow:tg:<sanitised string>.
type acceptsInvalid struct{ backends.Backend }

func (b *acceptsInvalid) fix(topic string) string {
	if _, err := backends.ParseTopic(topic); err == nil {
		return topic
	}
	clean := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' {
			return r
		}
		return '-'
	}, topic)
	return "flow:tg:x" + clean
}

func (b *acceptsInvalid) CreateTopic(ctx context.Context, t string, o ...backends.TopicOption) error {
	return b.Backend.CreateTopic(ctx, b.fix(t), o...)
}
func (b *acceptsInvalid) EnsureTopic(ctx context.Context, t string, o ...backends.TopicOption) error {
	return b.Backend.EnsureTopic(ctx, b.fix(t), o...)
}
func (b *acceptsInvalid) DeleteTopic(ctx context.Context, t string) error {
	return b.Backend.DeleteTopic(ctx, b.fix(t))
}
func (b *acceptsInvalid) TopicExists(ctx context.Context, t string) (bool, error) {
	return b.Backend.TopicExists(ctx, b.fix(t))
}
func (b *acceptsInvalid) Producer(ctx context.Context, t string) (backends.Producer, error) {
	return b.Backend.Producer(ctx, b.fix(t))
}
func (b *acceptsInvalid) Consumer(ctx context.Context, t, sub string, o ...backends.ConsumerOption) (backends.Consumer, error) {
	return b.Backend.Consumer(ctx, b.fix(t), sub, o...)
}

type closeUnsubscribes struct{ *memory.Backend }

func (b *closeUnsubscribes) Consumer(ctx context.Context, topic, sub string, opts ...backends.ConsumerOption) (backends.Consumer, error) {
	c, err := b.Backend.Consumer(ctx, topic, sub, opts...)
	if err != nil {
		return nil, err
	}
	return &unsubscribingConsumer{Consumer: c, be: b.Backend, topic: topic, sub: sub}, nil
}

type unsubscribingConsumer struct {
	backends.Consumer
	be         *memory.Backend
	topic, sub string
}

func (c *unsubscribingConsumer) Close(ctx context.Context) error {
	if err := c.Consumer.Close(ctx); err != nil {
		return err
	}
	return c.be.Unsubscribe(ctx, c.topic, c.sub)
}

type lateSubscribe struct{ backends.Backend }

func (b *lateSubscribe) Consumer(ctx context.Context, topic, sub string, opts ...backends.ConsumerOption) (backends.Consumer, error) {
	if _, err := backends.ParseTopic(topic); err != nil {
		return nil, err
	}
	return &lazyConsumer{b: b.Backend, topic: topic, sub: sub, opts: opts}, nil
}

// lazyConsumer subscribes on its first Receive: whatever was sent before that is missed.
type lazyConsumer struct {
	b     backends.Backend
	topic string
	sub   string
	opts  []backends.ConsumerOption
	mu    sync.Mutex
	c     backends.Consumer
}

func (l *lazyConsumer) get(ctx context.Context) (backends.Consumer, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.c == nil {
		c, err := l.b.Consumer(ctx, l.topic, l.sub, l.opts...)
		if err != nil {
			return nil, err
		}
		l.c = c
	}
	return l.c, nil
}

func (l *lazyConsumer) Receive(ctx context.Context) (backends.Delivery, error) {
	c, err := l.get(ctx)
	if err != nil {
		return backends.Delivery{}, err
	}
	return c.Receive(ctx)
}

func (l *lazyConsumer) Ack(ctx context.Context, d backends.Delivery) error {
	c, err := l.get(ctx)
	if err != nil {
		return err
	}
	return c.Ack(ctx, d)
}

func (l *lazyConsumer) Nack(ctx context.Context, d backends.Delivery) error {
	c, err := l.get(ctx)
	if err != nil {
		return err
	}
	return c.Nack(ctx, d)
}

func (l *lazyConsumer) Close(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.c == nil {
		return nil
	}
	return l.c.Close(ctx)
}

// stranded receives nothing once its broker restarted after the consumer was made.
type stranded struct {
	backends.Consumer
	mb *memory.Backend
	at int64
}

func (c *stranded) Receive(ctx context.Context) (backends.Delivery, error) {
	if c.mb.Restarts() != c.at {
		<-ctx.Done()
		return backends.Delivery{}, backends.CtxErr(ctx, "receive")
	}
	return c.Consumer.Receive(ctx)
}
