// Package mutants holds known-bad variants of backends, each reproducing a defect seen in the
// field, so that a run can prove the conformance suite catches every one of them (mutation score).
//
// Where a defect can live outside a backend it is a decorator over the contract (Wrap). Where it
// lives inside a client library's use, it is a Config adjustment that a real backend honours as an
// ordinary option (Configure). No variant adds a test-only branch to a backend's production path.
//
// Variants are registered as backends named "<base>~<variant>" (see RegisterAll), so the suite runs
// them like any other backend and starts the base backend's broker for them. That name is a
// report column's (internal/column), built and read through Name and Split.
package mutants

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/pubsub-conformance/harness/backends"
	"github.com/pubsub-conformance/harness/internal/column"
	speccat "github.com/pubsub-conformance/harness/specs/catalogue"
)

// Variant is one known-bad variant: its record. It enters the catalogue through Register only.
type Variant struct {
	// Name is short and stable ("nack-noop"); it appears in backend names and reports.
	Name string
	// Defect says in one line what is wrong, as seen in the field.
	Defect string
	// Wrap decorates a working backend into the defective one; nil when Configure does the job.
	Wrap func(backends.Backend) backends.Backend
	// Configure adjusts the base backend's Config to produce the defect; nil when Wrap does the job.
	Configure func(*backends.Config)
	// Open, when set, builds the defective backend itself from the base's Config (Configure and
	// Wrap are then unused): for defects that mix a working and a misconfigured client.
	Open func(ctx context.Context, cfg backends.Config) (backends.Backend, error)
	// Bases lists the registered backends the variant applies to; nil: every backend (a
	// decorator over the contract). A defect inside one backend's settings or admin calls is
	// in that backend's file of this package, with its own names (kafka.go).
	// Check fails on a name that is not a registered backend.
	Bases []string
	// Except names backends the variant does not apply to although Bases would let it, each
	// with the reason: its defect cannot exist there (an equivalent mutant: the base already
	// behaves so, by a limit its baseline accepts). Check fails on a name that is not a
	// registered backend or an empty reason.
	Except map[string]string
	// Catches are the catalogue specs expected to kill the variant, most telling first: make
	// mutants runs the variant against these (and Sanity) only, a report quotes the first of
	// them that failed. At least one; Check fails on an ID the catalogue does not have.
	Catches []string
	// Sanity are specs the variant is expected to PASS, run beside Catches: they show the
	// variant works apart from its defect, so that a kill is the defect's and not a variant
	// that cannot open at all. nil means DefaultSanity; a variant whose defect breaks those
	// names others (never one of Catches).
	Sanity []string
}

// DefaultSanity is the sanity set of a variant that names none: D1, a plain round trip.
var DefaultSanity = []string{"D1"}

// SanitySpecs returns v's sanity set (DefaultSanity when it names none).
func (v Variant) SanitySpecs() []string {
	if v.Sanity != nil {
		return v.Sanity
	}
	return DefaultSanity
}

// Applies reports whether v applies to the registered backend base.
func (v Variant) Applies(base string) bool {
	if _, out := v.Except[base]; out {
		return false
	}
	return len(v.Bases) == 0 || slices.Contains(v.Bases, base)
}

// catalogue is every registered variant, in registration order.
var (
	catalogueMu sync.Mutex
	catalogue   []Variant
)

// Register adds variant records to the catalogue: the one way in, called by this package's
// init over the list of its record slices (the decorators over the contract, then each
// backend's own, one file per backend), and by tests. It
// panics on a record that is wrong whatever else is registered (no name or defect, not exactly
// one of Wrap, Configure and Open, no Catches): a programming error. The names a record uses -
// its Bases, its Catches and Sanity IDs - are checked by Check once every package registered.
func Register(vs ...Variant) {
	catalogueMu.Lock()
	defer catalogueMu.Unlock()
	for _, v := range vs {
		set := 0
		for _, f := range []bool{v.Wrap != nil, v.Configure != nil, v.Open != nil} {
			if f {
				set++
			}
		}
		switch {
		case v.Name == "" || v.Defect == "" || column.CheckPart("variant", v.Name) != nil:
			panic(fmt.Sprintf("mutants: variant %q needs a name (without %q, %q, %q or a space) and a defect",
				v.Name, column.VariantSep, column.ReleaseSep, "+"))
		case set != 1:
			panic(fmt.Sprintf("mutants: variant %s: exactly one of Wrap, Configure and Open must be set", v.Name))
		case len(v.Catches) == 0:
			panic(fmt.Sprintf("mutants: variant %s names no spec expected to kill it (Catches)", v.Name))
		}
		catalogue = append(catalogue, v)
	}
}

// All returns the catalogue, in registration order.
func All() []Variant {
	catalogueMu.Lock()
	defer catalogueMu.Unlock()
	return slices.Clone(catalogue)
}

// Check verifies every name the records use: each of Bases is a registered backend (not a
// variant), each of Catches and Sanity a catalogue ID, no spec both, and no two records of one
// name apply to the same backend. Call it after the backends are registered (RegisterAll
// does); a typo anywhere fails here, naming the record.
func Check() error {
	var errs []error
	var real []string
	for _, d := range backends.Descriptors(false) {
		real = append(real, d.Name)
	}
	owner := map[string]int{} // "<base>~<variant>" -> index of the record that claimed it
	for i, v := range All() {
		for _, b := range v.Bases {
			if !slices.Contains(real, b) {
				errs = append(errs, fmt.Errorf("mutants: variant %s: Bases names %q, not a registered backend (registered: %s)", v.Name, b, strings.Join(real, ", ")))
			}
		}
		for b, why := range v.Except {
			if !slices.Contains(real, b) || why == "" {
				errs = append(errs, fmt.Errorf("mutants: variant %s: Except names %q (reason %q): want a registered backend and a reason", v.Name, b, why))
			}
		}
		for _, id := range append(slices.Clone(v.Catches), v.Sanity...) {
			if _, ok := speccat.Lookup(id); !ok {
				errs = append(errs, fmt.Errorf("mutants: variant %s: %q is not a catalogue spec ID", v.Name, id))
			}
		}
		for _, id := range v.SanitySpecs() {
			if slices.Contains(v.Catches, id) {
				errs = append(errs, fmt.Errorf("mutants: variant %s: %s is in both Catches and its sanity set", v.Name, id))
			}
		}
		for _, b := range real {
			if !v.Applies(b) {
				continue
			}
			if j, dup := owner[Name(b, v.Name)]; dup && j != i {
				errs = append(errs, fmt.Errorf("mutants: two records of variant %s apply to %s", v.Name, b))
			}
			owner[Name(b, v.Name)] = i
		}
	}
	return errors.Join(errs...)
}

// The catalogue in its order, which make mutants follows to run and report a base's variants:
// the decorators over the contract (this package's acks.go, contract.go, faults.go,
// latency.go, the ones below, nemesis.go, workload.go), then each backend's own variants,
// one file per backend named after it (memory.go, kafka.go, rabbitmq.go, pulsar.go: the order
// the backends' own init functions happened to register them in before they moved here). This
// package imports the backends, never the reverse: a backend's production code does not link
// its known-bad variants or the spec catalogue they name. A new backend's variants are one
// file <backend>.go here declaring <backend>Variants, and one entry in this list.
func init() {
	for _, vs := range [][]Variant{
		ackVariants, contractVariants, faultVariants, latencyVariants, decoratorVariants, nemesisVariants, workloadVariants,
		memoryVariants, kafkaVariants, rabbitmqVariants, pulsarVariants, rabbitmqStreamsVariants,
	} {
		Register(vs...)
	}
}

// decoratorVariants are the decorators over the contract defined in this file.
var decoratorVariants = []Variant{
	Variant{
		Name:    "nack-noop",
		Catches: []string{"A1", "A5"},
		Defect:  "Nack does nothing: the message is never delivered again",
		Wrap: func(b backends.Backend) backends.Backend {
			return WrapConsumers(b, func(c backends.Consumer) backends.Consumer { return &nackNoop{Consumer: c} })
		},
	},
	Variant{
		Name:    "ack-commits-position",
		Catches: []string{"A2"},
		Defect:  "Ack commits the consumer's current position (the last received message), not that message's",
		Wrap: func(b backends.Backend) backends.Backend {
			return WrapConsumers(b, func(c backends.Consumer) backends.Consumer { return &ackPosition{Consumer: c} })
		},
	},
	Variant{
		Name:    "ack-commits-through",
		Catches: []string{"A6", "A7"},
		Defect:  "Ack is cumulative: acking a message also acknowledges every earlier unacked one (Kafka's commit of offset+1)",
		Wrap: func(b backends.Backend) backends.Backend {
			return WrapConsumers(b, func(c backends.Consumer) backends.Consumer { return &ackThrough{Consumer: c} })
		},
	},
	Variant{
		Name:    "exists-always-true",
		Catches: []string{"L1", "L2"},
		Defect:  "TopicExists reports true for a missing topic",
		Wrap: func(b backends.Backend) backends.Backend {
			return &existsTrue{backend{Backend: b}}
		},
	},
	Variant{
		Name:    "ready-poll-discards",
		Catches: []string{"D6", "T2", "R1"}, // R1: where a new subscription replays nothing (RabbitMQ), a reopened one still holds the gap
		Defect:  "the readiness poll inside Consumer() swallows a message it fetched",
		Wrap: func(b backends.Backend) backends.Backend {
			return &backend{Backend: b, afterConsumer: discardOne}
		},
	},
	Variant{
		Name:    "unique-shares-group",
		Catches: []string{"G2"},
		Defect:  "unique (fan-out) subscribers share one group and compete instead of each getting everything",
		Wrap: func(b backends.Backend) backends.Backend {
			return &uniqueShares{backend{Backend: b}}
		},
	},
	Variant{
		Name:    "unconfirmed-send",
		Catches: []string{"D6", "D4"},
		Defect:  "Send returns before the broker confirmed the message, and Close does not flush",
		Wrap: func(b backends.Backend) backends.Backend {
			return &unconfirmed{backend{Backend: b}}
		},
	},
	Variant{
		Name:    "flow-short-retention",
		Catches: []string{"T1"},
		Defect:  "durable (flow) topics are created with the short retention of the other classes",
		Wrap: func(b backends.Backend) backends.Backend {
			return &shortRetention{backend{Backend: b}}
		},
	},
}

// LookupFor finds the variant of that name that applies to base: one defect may have a
// different implementation per base (close-unsubscribes on memory and on the brokers).
func LookupFor(base, name string) (Variant, bool) {
	for _, v := range All() {
		if v.Name == name && v.Applies(base) {
			return v, true
		}
	}
	return Variant{}, false
}

// For lists the variants that apply to base, in catalogue order.
func For(base string) []Variant {
	var out []Variant
	for _, v := range All() {
		if v.Applies(base) {
			out = append(out, v)
		}
	}
	return out
}

// Name is the registry name of variant v of base: "kafka~nack-noop".
func Name(base, variant string) string {
	return column.Column{Backend: base, Variant: variant}.String()
}

// Split separates "kafka~nack-noop" into its base and variant ("kafka", "nack-noop"); a name
// without a variant is its own base with no variant. A column's name reads as its backend's
// ("kafka~nack-noop@3.9.1+isolated": "kafka", "nack-noop").
func Split(name string) (base, variant string) {
	c, err := column.Parse(name)
	if err != nil {
		return name, ""
	}
	return c.Backend, c.Variant
}

// RegisterAll checks the catalogue (Check) and registers every applicable variant of every
// registered backend (variants excluded) as "<base>~<variant>"; on a failed check it registers
// nothing and returns the error. Call it once, after the backends are registered (a suite's
// init, after importing backends/all). A variant's descriptor is its base's, renamed: same
// broker, same settings; its constructor builds the base through the registry, so the variant
// sees exactly the real backend.
func RegisterAll() error {
	if err := Check(); err != nil {
		return err
	}
	for _, base := range backends.Descriptors(false) {
		for _, v := range All() {
			if !v.Applies(base.Name) {
				continue
			}
			d := base
			d.Name = Name(base.Name, v.Name)
			d.Base, d.Variant = base.Name, v.Name
			d.Description = "known-bad variant of " + base.Name + ": " + v.Defect
			d.New = func(ctx context.Context, cfg backends.Config) (backends.Backend, error) {
				cfg.Backend = d.Base
				if v.Open != nil {
					return v.Open(ctx, cfg)
				}
				if v.Configure != nil {
					v.Configure(&cfg)
				}
				b, err := backends.Open(ctx, cfg)
				if err != nil {
					return nil, err
				}
				if v.Wrap != nil {
					b = v.Wrap(b)
				}
				return b, nil
			}
			backends.Register(d)
		}
	}
	return nil
}

// WrapConsumers decorates b so that every Consumer it returns is passed through wrap: the
// building block of consumer-side variants, here and in backends that add their own.
func WrapConsumers(b backends.Backend, wrap func(backends.Consumer) backends.Consumer) backends.Backend {
	return &backend{Backend: b, wrapConsumer: wrap}
}

// backend is the pass-through decorator the variants build on.
type backend struct {
	backends.Backend
	wrapConsumer  func(backends.Consumer) backends.Consumer
	wrapNamed     func(c backends.Consumer, topic, subscription string) backends.Consumer
	afterConsumer func(ctx context.Context, c backends.Consumer)
}

// Unwrap returns the decorated backend (for optional interfaces such as backends.Transcriber:
// a variant of an adapter still has the adapter's transcript of what reached it).
func (b *backend) Unwrap() backends.Backend { return b.Backend }

func (b *backend) Consumer(ctx context.Context, topic, sub string, opts ...backends.ConsumerOption) (backends.Consumer, error) {
	c, err := b.Backend.Consumer(ctx, topic, sub, opts...)
	if err != nil {
		return nil, err
	}
	if b.afterConsumer != nil {
		b.afterConsumer(ctx, c)
	}
	if b.wrapConsumer != nil {
		c = b.wrapConsumer(c)
	}
	if b.wrapNamed != nil {
		c = b.wrapNamed(c, topic, sub)
	}
	return c, nil
}

type nackNoop struct{ backends.Consumer }

func (c *nackNoop) Nack(context.Context, backends.Delivery) error { return nil }

// ackPosition acks the newest delivery received so far, whatever it was asked to ack.
type ackPosition struct {
	backends.Consumer
	mu     sync.Mutex
	latest *backends.Delivery
}

func (c *ackPosition) Receive(ctx context.Context) (backends.Delivery, error) {
	d, err := c.Consumer.Receive(ctx)
	if err == nil {
		c.mu.Lock()
		c.latest = &d
		c.mu.Unlock()
	}
	return d, err
}

func (c *ackPosition) Ack(ctx context.Context, d backends.Delivery) error {
	c.mu.Lock()
	if c.latest != nil {
		d = *c.latest
	}
	c.mu.Unlock()
	return c.Consumer.Ack(ctx, d)
}

// ackThrough acks, with every Ack, all deliveries received before the acked one and not yet
// settled: a cumulative ack, as committing offset+1 is on a Kafka partition.
type ackThrough struct {
	backends.Consumer
	mu      sync.Mutex
	pending []backends.Delivery // received, not yet acked through this wrapper, in order
}

func (c *ackThrough) Receive(ctx context.Context) (backends.Delivery, error) {
	d, err := c.Consumer.Receive(ctx)
	if err == nil {
		c.mu.Lock()
		c.pending = append(c.pending, d)
		c.mu.Unlock()
	}
	return d, err
}

// before lists the deliveries received before d and not yet settled through this wrapper.
func (c *ackThrough) before(d backends.Delivery) []backends.Delivery {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, p := range c.pending {
		if p.ID == d.ID {
			return append([]backends.Delivery(nil), c.pending[:i]...)
		}
	}
	return nil
}

func (c *ackThrough) Ack(ctx context.Context, d backends.Delivery) error {
	earlier := c.before(d)
	c.mu.Lock()
	for i, p := range c.pending {
		if p.ID == d.ID {
			c.pending = append(c.pending[:0:0], c.pending[i+1:]...)
			break
		}
	}
	c.mu.Unlock()
	for _, e := range earlier {
		_ = c.Consumer.Ack(ctx, e) // as a commit through the offset would: no error of its own
	}
	return c.Consumer.Ack(ctx, d)
}

type existsTrue struct{ backend }

func (b *existsTrue) TopicExists(ctx context.Context, topic string) (bool, error) {
	if _, err := backends.ParseTopic(topic); err != nil {
		return false, err
	}
	return true, nil
}

// discardOne is a readiness poll that receives once, briefly, and drops what it got.
func discardOne(ctx context.Context, c backends.Consumer) {
	pollCtx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	_, _ = c.Receive(pollCtx)
}

type uniqueShares struct{ backend }

func (b *uniqueShares) Consumer(ctx context.Context, topic, sub string, opts ...backends.ConsumerOption) (backends.Consumer, error) {
	return b.backend.Consumer(ctx, topic, sub, append(opts, backends.WithMode(backends.Shared))...)
}

// unconfirmed sends in the background and returns at once; Close does not wait for the sends.
type unconfirmed struct{ backend }

func (b *unconfirmed) Producer(ctx context.Context, topic string) (backends.Producer, error) {
	p, err := b.backend.Producer(ctx, topic)
	if err != nil {
		return nil, err
	}
	return &unconfirmedProducer{Producer: p}, nil
}

type unconfirmedProducer struct{ backends.Producer }

func (p *unconfirmedProducer) Send(_ context.Context, m backends.Message) error {
	// Detached from the caller's context, as the defective code was: nobody waits for the result.
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = p.Producer.Send(ctx, m)
	}()
	return nil
}

func (p *unconfirmedProducer) Close(context.Context) error {
	// Close with an already-expired context: nothing pending gets flushed.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_ = p.Producer.Close(ctx)
	return nil
}

type shortRetention struct{ backend }

const shortRetentionDuration = 5 * time.Minute

func (b *shortRetention) fix(ctx context.Context, topic string) error {
	t, err := backends.ParseTopic(topic)
	if err != nil {
		return err
	}
	if !t.Class.Durable() {
		return nil
	}
	if err := b.backend.EnsureTopic(ctx, topic, backends.WithRetention(shortRetentionDuration)); err != nil {
		return fmt.Errorf("flow-short-retention: %w", err)
	}
	return nil
}

func (b *shortRetention) CreateTopic(ctx context.Context, topic string, opts ...backends.TopicOption) error {
	return b.backend.CreateTopic(ctx, topic, append(opts, backends.WithRetention(shortRetentionDuration))...)
}

func (b *shortRetention) EnsureTopic(ctx context.Context, topic string, opts ...backends.TopicOption) error {
	return b.backend.EnsureTopic(ctx, topic, append(opts, backends.WithRetention(shortRetentionDuration))...)
}

func (b *shortRetention) Producer(ctx context.Context, topic string) (backends.Producer, error) {
	if err := b.fix(ctx, topic); err != nil {
		return nil, err
	}
	return b.backend.Producer(ctx, topic)
}

func (b *shortRetention) Consumer(ctx context.Context, topic, sub string, opts ...backends.ConsumerOption) (backends.Consumer, error) {
	if err := b.fix(ctx, topic); err != nil {
		return nil, err
	}
	return b.backend.Consumer(ctx, topic, sub, opts...)
}
