package history_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/pubsub-conformance/harness/backends"
	"github.com/pubsub-conformance/harness/backends/memory"
	"github.com/pubsub-conformance/harness/internal/history"
)

// BenchmarkRoundTrip measures what recording costs per message (a Send, a Receive and an Ack)
// on the in-process reference, where the calls themselves cost least: the worst case.
func BenchmarkRoundTrip(b *testing.B) {
	for _, recorded := range []bool{false, true} {
		b.Run(fmt.Sprintf("recorded=%v", recorded), func(b *testing.B) {
			ctx := context.Background()
			be, err := memory.New(ctx, backends.Config{Backend: memory.Name})
			if err != nil {
				b.Fatal(err)
			}
			r := history.NewRecorder()
			if recorded {
				be = history.Wrap(be, r, "")
			}
			defer be.Close(ctx)
			topic := "flow:tg:bench"
			c, err := be.Consumer(ctx, topic, "s")
			if err != nil {
				b.Fatal(err)
			}
			p, err := be.Producer(ctx, topic)
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := range b.N {
				if err := p.Send(ctx, backends.Message{Payload: []byte(fmt.Sprintf("m-%d", i))}); err != nil {
					b.Fatal(err)
				}
				d, err := c.Receive(ctx)
				if err != nil {
					b.Fatal(err)
				}
				if err := c.Ack(ctx, d); err != nil {
					b.Fatal(err)
				}
				if recorded && r.Len() > history.DefaultLimit-10 {
					b.StopTimer()
					r = history.NewRecorder()
					be = history.Wrap(be.(backends.Unwrapper).Unwrap(), r, "")
					b.StartTimer()
				}
			}
		})
	}
}

// BenchmarkCheck measures the checkers over D3's history shape: 1,000 messages sent by eight
// goroutines, received and acked by one consumer.
func BenchmarkCheck(b *testing.B) {
	ctx := context.Background()
	be, _ := memory.New(ctx, backends.Config{Backend: memory.Name})
	r := history.NewRecorder()
	be = history.Wrap(be, r, "")
	c, _ := be.Consumer(ctx, "flow:tg:check", "s")
	p, _ := be.Producer(ctx, "flow:tg:check")
	for i := range 1000 {
		_ = p.Send(ctx, backends.Message{Payload: []byte(fmt.Sprintf("m-%d", i))})
	}
	for range 1000 {
		d, _ := c.Receive(ctx)
		_ = c.Ack(ctx, d)
	}
	ops := r.Ops()
	b.ResetTimer()
	for range b.N {
		if fs := history.Check(ops, history.DefaultPolicy()); len(fs) > 0 {
			b.Fatal(history.Report(r.Started(), fs, 3))
		}
	}
}
