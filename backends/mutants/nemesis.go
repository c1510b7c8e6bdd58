package mutants

import (
	"context"
	"log"
	"sync"
	"time"

	"github.com/pubsub-conformance/harness/backends"
)

// The variants only W2 (the generative workload under a nemesis schedule, issue 22) kills: a
// defect of reconnects, which no fault-free program and no hand-written fault spec reaches,
// since those spread no sends of several producers of one client across a fault.

// reconnectSlowSend is how long a Send of a producer that sent before must take for the
// client to count it as a reconnect (a fault-free Send on the brokers takes milliseconds, a
// Send through a cut, a pause or a restart seconds).
const reconnectSlowSend = 2 * time.Second

var nemesisVariants = []Variant{
	Variant{
		Name:    "reconnect-drops-queued",
		Bases:   workloadBases,
		Catches: []string{"W2"},
		Defect: "lost after a reconnect: the producers of one client share a connection; when a Send of one of them, after its first, " +
			"took 2 s or more or failed for want of the broker (the client reconnected), the reconnect discarded the shared queue, " +
			"so the next Send of each other producer of that client returns nil and is never written",
		Wrap: func(b backends.Backend) backends.Backend {
			return &reconnectDrops{backend: backend{Backend: b}}
		},
	},
}

// reconnectDrops: reconnect-drops-queued.
type reconnectDrops struct {
	backend
	mu    sync.Mutex
	prods []*reconnectProducer
}

func (b *reconnectDrops) Producer(ctx context.Context, topic string) (backends.Producer, error) {
	p, err := b.backend.Producer(ctx, topic)
	if err != nil {
		return nil, err
	}
	rp := &reconnectProducer{Producer: p, b: b}
	b.mu.Lock()
	b.prods = append(b.prods, rp)
	b.mu.Unlock()
	return rp, nil
}

// reconnected dooms the next Send of every other producer of the client.
func (b *reconnectDrops) reconnected(by *reconnectProducer) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, p := range b.prods {
		if p != by {
			p.doomed = true
		}
	}
}

type reconnectProducer struct {
	backends.Producer
	b      *reconnectDrops
	sent   bool // a Send of this producer returned before (its first includes the connection)
	doomed bool // guarded by b.mu
}

func (p *reconnectProducer) Send(ctx context.Context, m backends.Message) error {
	p.b.mu.Lock()
	doomed := p.doomed
	p.doomed = false
	p.b.mu.Unlock()
	if doomed {
		log.Printf("reconnect-drops-queued: a message of %d bytes dropped with the queue a reconnect discarded", len(m.Payload))
		return nil
	}
	start := time.Now()
	err := p.Producer.Send(ctx, m)
	if p.sent && (time.Since(start) >= reconnectSlowSend || unreachable(err)) {
		p.b.reconnected(p)
	}
	p.sent = true
	return err
}

func (p *reconnectProducer) Close(ctx context.Context) error {
	p.b.mu.Lock()
	for i, q := range p.b.prods {
		if q == p {
			p.b.prods = append(p.b.prods[:i], p.b.prods[i+1:]...)
			break
		}
	}
	p.b.mu.Unlock()
	return p.Producer.Close(ctx)
}
