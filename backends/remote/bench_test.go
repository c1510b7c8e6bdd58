package remote

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/pubsub-conformance/harness/backends"
	"github.com/pubsub-conformance/harness/backends/memory"
)

// BenchmarkSendReceive10k measures what the protocol costs: 10,000 messages sent one after
// the other, then received and acked one after the other, on the Go reference in process, on
// the same Go reference served through the protocol (go-memory), and on its Python port
// (python-memory). Every call is one round trip, so this is latency-bound throughput.
//
//	go test -run '^$' -bench SendReceive10k -benchtime 1x ./backends/remote
func BenchmarkSendReceive10k(b *testing.B) {
	const n = 10000
	open := map[string]func(ctx context.Context) (backends.Backend, error){
		"memory": func(ctx context.Context) (backends.Backend, error) {
			return memory.New(ctx, backends.Config{Backend: "memory"})
		},
	}
	for _, a := range declared {
		if a.Name == "go-memory" || a.Name == "python-memory" {
			ad := a
			open[a.Name] = func(ctx context.Context) (backends.Backend, error) {
				if err := Prepare(ctx, ad); err != nil {
					return nil, err
				}
				return Open(ctx, ad, backends.Config{Backend: ad.Name})
			}
		}
	}
	for _, name := range []string{"memory", "go-memory", "python-memory"} {
		b.Run(name, func(b *testing.B) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			be, err := open[name](ctx)
			if err != nil {
				b.Fatal(err)
			}
			defer be.Close(ctx)
			payload := make([]byte, 100)
			var sendT, recvT time.Duration
			for i := 0; i < b.N; i++ {
				topic := fmt.Sprintf("flow:tg:bench-%d-%d", time.Now().UnixNano(), i)
				c, err := be.Consumer(ctx, topic, "bench", backends.WithPosition(backends.Earliest))
				if err != nil {
					b.Fatal(err)
				}
				p, err := be.Producer(ctx, topic)
				if err != nil {
					b.Fatal(err)
				}
				start := time.Now()
				for j := 0; j < n; j++ {
					if err := p.Send(ctx, backends.Message{Payload: payload, Properties: map[string]string{"i": fmt.Sprint(j)}}); err != nil {
						b.Fatal(err)
					}
				}
				sendT += time.Since(start)
				start = time.Now()
				for j := 0; j < n; j++ {
					rctx, rcancel := context.WithTimeout(ctx, 10*time.Second)
					d, err := c.Receive(rctx)
					rcancel()
					if err != nil {
						b.Fatalf("receive %d: %v", j, err)
					}
					if err := c.Ack(ctx, d); err != nil {
						b.Fatal(err)
					}
				}
				recvT += time.Since(start)
				p.Close(ctx)
				c.Close(ctx)
			}
			b.ReportMetric(float64(n*b.N)/sendT.Seconds(), "sends/s")
			b.ReportMetric(float64(n*b.N)/recvT.Seconds(), "receive+acks/s")
		})
	}
}
