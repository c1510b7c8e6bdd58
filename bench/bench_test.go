package bench_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pubsub-conformance/harness/backends"
	_ "github.com/pubsub-conformance/harness/backends/all"
	"github.com/pubsub-conformance/harness/bench"
	"github.com/pubsub-conformance/harness/reports"
)

// TestSmoke runs every workload of make bench for a few seconds against the in-process memory
// reference, through the registry like any backend, with a second memory backend standing in
// for the raw client so the ratio path runs too. It keeps the bench code from rotting inside
// make test (which has no broker of its own in its unit stage); the raw Kafka and Pulsar
// clients are compiled and vetted there and exercised by make bench.
func TestSmoke(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	open := func() backends.Backend {
		b, err := backends.Open(ctx, backends.Config{Backend: "memory"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = b.Close(context.Background()) })
		return b
	}
	be, raw := open(), open()
	start := time.Now()
	res, err := bench.Run{Backend: be, Raw: []bench.Client{{Name: reports.ClientRaw, T: bench.ContractTarget{B: raw, Description: "second memory backend"}}},
		Plan: bench.Smoke(), Progress: t.Logf}.Measure(ctx)
	if err != nil {
		t.Fatal(err)
	}
	res.Smoke = true
	t.Logf("smoke took %s", time.Since(start).Round(time.Millisecond))
	if len(res.Errors) > 0 {
		t.Fatalf("workload errors: %v", res.Errors)
	}
	if len(res.Throughput) != 4 {
		t.Fatalf("want 4 throughput runs (backend and raw, 1 and 8 senders), got %+v", res.Throughput)
	}
	for _, th := range res.Throughput {
		if th.MsgsPerSec <= 0 || th.MBPerSec <= 0 || th.Errors != 0 || th.Messages != 2000 {
			t.Errorf("throughput %+v", th)
		}
	}
	if len(res.Latency) != 2 {
		t.Fatalf("want backend and raw latency, got %+v", res.Latency)
	}
	for _, l := range res.Latency {
		if l.Sent != 1000 || l.Received != l.Sent || l.Acked != l.Received || l.Ack.N != int64(l.Acked) || l.EndToEnd.N != int64(l.Sent) || l.EndToEnd.P50 <= 0 || l.EndToEnd.Max < l.EndToEnd.P99 {
			t.Errorf("latency %+v", l)
		}
	}
	if res.Subscribe == nil || res.Subscribe.N != 5 || res.Subscribe.P99 < res.Subscribe.P50 {
		t.Errorf("subscribe %+v", res.Subscribe)
	}
	for _, fig := range []string{"throughput senders=1", "throughput senders=8", "latency p50", "latency p99"} {
		if res.RatioOf(fig) <= 0 {
			t.Errorf("ratio %q missing: %+v", fig, res.Ratios)
		}
	}

	dir := t.TempDir()
	path := reports.BenchFile(dir, res.Backend)
	if err := res.Write(path); err != nil {
		t.Fatal(err)
	}
	got, err := reports.ReadBenches(dir)
	if err != nil || len(got) != 1 || got[0].Backend != "memory" || got[0].ThroughputOf(reports.ClientRaw, 8) == nil {
		t.Fatalf("read back %v: %+v", err, got)
	}
	md := reports.PerformanceMarkdown(got, "")
	for _, w := range []string{"## Performance", "| memory | backend", "second memory backend", "smoke run"} {
		if !strings.Contains(md, w) {
			t.Errorf("Markdown lacks %q:\n%s", w, md)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "bench-memory.json")); err != nil {
		t.Error(err)
	}
}

// stallTarget is an in-process target whose sender stalls once, at message stallAt, for stall:
// the messages queued behind it must show the stall in their latency (coordinated omission).
type stallTarget struct {
	ch      chan []byte
	stallAt uint64
	stall   time.Duration
}

func (s *stallTarget) Info() string { return "stall" }
func (s *stallTarget) Sender(context.Context, string) (bench.Sender, error) {
	return s, nil
}
func (s *stallTarget) Receiver(context.Context, string, string) (bench.Receiver, error) {
	return s, nil
}
func (s *stallTarget) Close(context.Context) error { return nil }
func (s *stallTarget) Send(ctx context.Context, p []byte) error {
	if uint64(p[7]) == s.stallAt && p[6] == 0 {
		// The simulated broker hiccup under test, not synchronisation.
		select {
		case <-time.After(s.stall):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	s.ch <- p
	return nil
}
func (s *stallTarget) Receive(ctx context.Context) ([]byte, func(context.Context) error, error) {
	select {
	case p := <-s.ch:
		return p, func(context.Context) error { return nil }, nil
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	}
}

// TestLatencyCountsStallFromIntendedTime: one worker, 100 msg/s for 1 s, a 300 ms stall at
// message 10. Measured from the actual send time only message 10 would look slow (p90 ~ 0);
// measured from the intended time, the ~30 messages queued behind it are late too.
func TestLatencyCountsStallFromIntendedTime(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	tg := &stallTarget{ch: make(chan []byte, 1000), stallAt: 10, stall: 300 * time.Millisecond}
	res, err := bench.Latency(ctx, tg, "t", "s", 100, time.Second, 64, 1, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if res.Received != 100 {
		t.Fatalf("received %d of 100", res.Received)
	}
	if res.EndToEnd.Max < 250 || res.EndToEnd.P90 < 50 || res.Send.P90 < 50 {
		t.Errorf("a 300 ms stall with 30 messages queued behind it must show from the intended time: end-to-end %+v, send %+v", res.EndToEnd, res.Send)
	}
}
