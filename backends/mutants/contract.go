package mutants

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/pubsub-conformance/harness/backends"
)

// Variants for the contract sentences the catalogue asserted late (reports/contract.md): each is
// a decorator over the contract, so it applies to every base, the reference included.
var contractVariants = []Variant{
	Variant{
		Name:    "properties-case-folded",
		Catches: []string{"D8"},
		Defect:  "property keys arrive lower-cased and values trimmed (header canonicalisation in transit)",
		Wrap: func(b backends.Backend) backends.Backend {
			return WrapConsumers(b, func(c backends.Consumer) backends.Consumer { return &foldProps{Consumer: c} })
		},
	},
	Variant{
		Name:    "latest-is-earliest",
		Catches: []string{"D9"},
		Except: map[string]string{
			// A queue holds only what was published after it was bound: an earliest
			// subscription starts where a latest one does (the base's accepted D6, T2).
			"rabbitmq": "a new RabbitMQ subscription replays nothing whatever its position: the defect cannot exist there",
		},
		Defect: "the initial position is ignored: every new subscription starts at the oldest message",
		Wrap:   func(b backends.Backend) backends.Backend { return &alwaysEarliest{Backend: b} },
	},
	Variant{
		Name:    "ack-accepts-unknown",
		Catches: []string{"A8"},
		Defect:  "Ack and Nack of a delivery this consumer never handed out succeed silently",
		Wrap: func(b backends.Backend) backends.Backend {
			return WrapConsumers(b, func(c backends.Consumer) backends.Consumer {
				return &acceptUnknown{Consumer: c, handed: map[string]bool{}}
			})
		},
	},
	Variant{
		Name:    "consumer-needs-topic",
		Catches: []string{"L5"},
		Sanity:  []string{"T2"}, // D1 opens its consumer before the topic exists
		Defect:  "Consumer() of a topic that does not exist yet fails instead of creating it (TrustGraph's Kafka consumer: unknown topic)",
		Wrap:    func(b backends.Backend) backends.Backend { return &needsTopic{Backend: b} },
	},
	Variant{
		Name:    "producer-lazy-topic",
		Catches: []string{"L6"},
		Defect:  "Producer() does not create the topic; the first Send does (broker auto-creation)",
		Wrap:    func(b backends.Backend) backends.Backend { return &lazyProducers{Backend: b} },
	},
	Variant{
		Name:    "bare-topic-elsewhere",
		Catches: []string{"L7"},
		Defect:  "a topic string without colons is mapped to another topicspace than tg",
		Wrap:    func(b backends.Backend) backends.Backend { return &bareElsewhere{Backend: b} },
	},
	Variant{
		Name:    "closed-silent",
		Catches: []string{"L8"},
		Defect:  "after Close, Receive waits out its context and Ack, Nack and Send report success",
		Wrap:    func(b backends.Backend) backends.Backend { return &silentClose{Backend: b} },
	},
	Variant{
		Name:    "exists-swallows-errors",
		Catches: []string{"F4"},
		Defect:  "TopicExists answers false, nil when the broker cannot be reached (the admin error is swallowed), so a caller creates or gives up on a topic that exists",
		Wrap:    func(b backends.Backend) backends.Backend { return &existsSwallows{backend{Backend: b}} },
	},
	Variant{
		Name:    "close-twice-fails",
		Catches: []string{"L9"},
		Defect:  "a second Close of a producer, consumer or backend returns an error",
		Wrap:    func(b backends.Backend) backends.Backend { return &closeOnce{Backend: b} },
	},
	Variant{
		Name:    "backend-close-orphans",
		Catches: []string{"L10"},
		Defect:  "closing the Backend leaves its producers and consumers hanging: Receive waits out its context, Send reports success",
		Wrap:    func(b backends.Backend) backends.Backend { return &orphans{Backend: b} },
	},
}

type foldProps struct{ backends.Consumer }

func (c *foldProps) Receive(ctx context.Context) (backends.Delivery, error) {
	d, err := c.Consumer.Receive(ctx)
	if err == nil && d.Properties != nil {
		folded := make(map[string]string, len(d.Properties))
		for k, v := range d.Properties {
			folded[strings.ToLower(k)] = strings.TrimSpace(v)
		}
		d.Properties = folded
	}
	return d, err
}

type alwaysEarliest struct{ backends.Backend }

func (b *alwaysEarliest) Consumer(ctx context.Context, topic, sub string, opts ...backends.ConsumerOption) (backends.Consumer, error) {
	return b.Backend.Consumer(ctx, topic, sub, append(opts, backends.WithPosition(backends.Earliest))...)
}

type acceptUnknown struct {
	backends.Consumer
	mu     sync.Mutex
	handed map[string]bool
}

func (c *acceptUnknown) Receive(ctx context.Context) (backends.Delivery, error) {
	d, err := c.Consumer.Receive(ctx)
	if err == nil {
		c.mu.Lock()
		c.handed[d.ID] = true
		c.mu.Unlock()
	}
	return d, err
}

func (c *acceptUnknown) known(d backends.Delivery) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.handed[d.ID]
}

func (c *acceptUnknown) Ack(ctx context.Context, d backends.Delivery) error {
	if !c.known(d) {
		return nil
	}
	return c.Consumer.Ack(ctx, d)
}

func (c *acceptUnknown) Nack(ctx context.Context, d backends.Delivery) error {
	if !c.known(d) {
		return nil
	}
	return c.Consumer.Nack(ctx, d)
}

type needsTopic struct{ backends.Backend }

func (b *needsTopic) Consumer(ctx context.Context, topic, sub string, opts ...backends.ConsumerOption) (backends.Consumer, error) {
	ok, err := b.Backend.TopicExists(ctx, topic)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("subscribe to %s: %w: unknown topic", topic, backends.ErrUnavailable)
	}
	return b.Backend.Consumer(ctx, topic, sub, opts...)
}

type lazyProducers struct{ backends.Backend }

func (b *lazyProducers) Producer(ctx context.Context, topic string) (backends.Producer, error) {
	if _, err := backends.ParseTopic(topic); err != nil {
		return nil, err
	}
	return &lazyProducer{b: b.Backend, topic: topic}, nil
}

type lazyProducer struct {
	b     backends.Backend
	topic string
	mu    sync.Mutex
	p     backends.Producer
}

func (l *lazyProducer) Send(ctx context.Context, m backends.Message) error {
	l.mu.Lock()
	if l.p == nil {
		p, err := l.b.Producer(ctx, l.topic)
		if err != nil {
			l.mu.Unlock()
			return err
		}
		l.p = p
	}
	p := l.p
	l.mu.Unlock()
	return p.Send(ctx, m)
}

func (l *lazyProducer) Close(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.p == nil {
		return nil
	}
	return l.p.Close(ctx)
}

type bareElsewhere struct{ backends.Backend }

func bare(topic string) string {
	if topic != "" && !strings.Contains(topic, ":") {
		return "flow:default:" + topic
	}
	return topic
}

func (b *bareElsewhere) Producer(ctx context.Context, topic string) (backends.Producer, error) {
	return b.Backend.Producer(ctx, bare(topic))
}
func (b *bareElsewhere) Consumer(ctx context.Context, topic, sub string, opts ...backends.ConsumerOption) (backends.Consumer, error) {
	return b.Backend.Consumer(ctx, bare(topic), sub, opts...)
}
func (b *bareElsewhere) CreateTopic(ctx context.Context, topic string, opts ...backends.TopicOption) error {
	return b.Backend.CreateTopic(ctx, bare(topic), opts...)
}
func (b *bareElsewhere) EnsureTopic(ctx context.Context, topic string, opts ...backends.TopicOption) error {
	return b.Backend.EnsureTopic(ctx, bare(topic), opts...)
}
func (b *bareElsewhere) DeleteTopic(ctx context.Context, topic string) error {
	return b.Backend.DeleteTopic(ctx, bare(topic))
}
func (b *bareElsewhere) TopicExists(ctx context.Context, topic string) (bool, error) {
	return b.Backend.TopicExists(ctx, bare(topic))
}

// silentClose: a closed consumer or producer hides ErrClosed.
type silentClose struct{ backends.Backend }

func (b *silentClose) Producer(ctx context.Context, topic string) (backends.Producer, error) {
	p, err := b.Backend.Producer(ctx, topic)
	if err != nil {
		return nil, err
	}
	return &hushProducer{Producer: p}, nil
}

func (b *silentClose) Consumer(ctx context.Context, topic, sub string, opts ...backends.ConsumerOption) (backends.Consumer, error) {
	c, err := b.Backend.Consumer(ctx, topic, sub, opts...)
	if err != nil {
		return nil, err
	}
	return &hushConsumer{Consumer: c}, nil
}

type hushProducer struct{ backends.Producer }

func (p *hushProducer) Send(ctx context.Context, m backends.Message) error {
	if err := p.Producer.Send(ctx, m); err != nil && !errors.Is(err, backends.ErrClosed) {
		return err
	}
	return nil
}

type hushConsumer struct{ backends.Consumer }

func (c *hushConsumer) Receive(ctx context.Context) (backends.Delivery, error) {
	d, err := c.Consumer.Receive(ctx)
	if errors.Is(err, backends.ErrClosed) {
		<-ctx.Done()
		return d, backends.CtxErr(ctx, "receive")
	}
	return d, err
}

func (c *hushConsumer) Ack(ctx context.Context, d backends.Delivery) error {
	if err := c.Consumer.Ack(ctx, d); err != nil && !errors.Is(err, backends.ErrClosed) {
		return err
	}
	return nil
}

func (c *hushConsumer) Nack(ctx context.Context, d backends.Delivery) error {
	if err := c.Consumer.Nack(ctx, d); err != nil && !errors.Is(err, backends.ErrClosed) {
		return err
	}
	return nil
}

// closeOnce: the second Close of anything fails.
type closeOnce struct {
	backends.Backend
	once onceFlag
}

type onceFlag struct {
	mu     sync.Mutex
	closed bool
}

func (f *onceFlag) second(what string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return fmt.Errorf("%s: already closed", what)
	}
	f.closed = true
	return nil
}

func (b *closeOnce) Close(ctx context.Context) error {
	if err := b.once.second("backend"); err != nil {
		return err
	}
	return b.Backend.Close(ctx)
}

func (b *closeOnce) Producer(ctx context.Context, topic string) (backends.Producer, error) {
	p, err := b.Backend.Producer(ctx, topic)
	if err != nil {
		return nil, err
	}
	return &closeOnceProducer{Producer: p}, nil
}

func (b *closeOnce) Consumer(ctx context.Context, topic, sub string, opts ...backends.ConsumerOption) (backends.Consumer, error) {
	c, err := b.Backend.Consumer(ctx, topic, sub, opts...)
	if err != nil {
		return nil, err
	}
	return &closeOnceConsumer{Consumer: c}, nil
}

type closeOnceProducer struct {
	backends.Producer
	once onceFlag
}

func (p *closeOnceProducer) Close(ctx context.Context) error {
	if err := p.once.second("producer"); err != nil {
		return err
	}
	return p.Producer.Close(ctx)
}

type closeOnceConsumer struct {
	backends.Consumer
	once onceFlag
}

func (c *closeOnceConsumer) Close(ctx context.Context) error {
	if err := c.once.second("consumer"); err != nil {
		return err
	}
	return c.Consumer.Close(ctx)
}

// orphans: once the backend is closed, what it handed out hides ErrClosed.
type orphans struct {
	backends.Backend
	mu     sync.Mutex
	closed bool
}

func (b *orphans) isClosed() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.closed
}

func (b *orphans) Close(ctx context.Context) error {
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
	return b.Backend.Close(ctx)
}

func (b *orphans) Producer(ctx context.Context, topic string) (backends.Producer, error) {
	p, err := b.Backend.Producer(ctx, topic)
	if err != nil {
		return nil, err
	}
	return &orphanProducer{Producer: p, b: b}, nil
}

func (b *orphans) Consumer(ctx context.Context, topic, sub string, opts ...backends.ConsumerOption) (backends.Consumer, error) {
	c, err := b.Backend.Consumer(ctx, topic, sub, opts...)
	if err != nil {
		return nil, err
	}
	return &orphanConsumer{Consumer: c, b: b}, nil
}

type orphanProducer struct {
	backends.Producer
	b *orphans
}

func (p *orphanProducer) Send(ctx context.Context, m backends.Message) error {
	if p.b.isClosed() {
		return nil
	}
	return p.Producer.Send(ctx, m)
}

type orphanConsumer struct {
	backends.Consumer
	b *orphans
}

func (c *orphanConsumer) Receive(ctx context.Context) (backends.Delivery, error) {
	if c.b.isClosed() {
		<-ctx.Done()
		return backends.Delivery{}, backends.CtxErr(ctx, "receive")
	}
	return c.Consumer.Receive(ctx)
}

// existsSwallows answers "missing" instead of the error when the broker is unreachable or the
// call timed out (exists-swallows-errors).
type existsSwallows struct{ backend } // backend: Unwrap, so transcripts reach through

func (b *existsSwallows) TopicExists(ctx context.Context, topic string) (bool, error) {
	ok, err := b.Backend.TopicExists(ctx, topic)
	if errors.Is(err, backends.ErrUnavailable) || errors.Is(err, backends.ErrTimeout) {
		return false, nil
	}
	return ok, err
}
