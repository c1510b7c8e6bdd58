package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/pubsub-conformance/harness/backends"
	"github.com/pubsub-conformance/harness/reports"
)

// Plan is the size of every workload.
type Plan struct {
	Messages int   // confirmed-send throughput: messages per run
	Bytes    int   // payload size of every message
	Senders  []int // concurrent senders, one throughput run each
	// Rounds splits each throughput run: backend and raw clients take turns sending
	// Messages/Rounds each, so all of them sample the same stretches of a drifting load.
	Rounds int

	Rate    int           // latency: offered messages per second
	For     time.Duration // latency: how long
	Workers int           // latency: Sends in flight at most
	Drain   time.Duration // latency: how long to wait for the rest after the last send

	Subscribes int // subscribe-to-live: Consumer() calls

	ConsumeMessages  int   // receive and ack: messages each consumer acks
	ConsumeConsumers []int // receive and ack: concurrent consumers, one run each
}

// Full is the plan of make bench (issue #15): 50,000 x 1 KiB with 1 and 8 senders, 1,000 msg/s
// for 20 s, 20 subscriptions.
func Full() Plan {
	return Plan{Messages: 50_000, Bytes: 1024, Senders: []int{1, 8}, Rounds: 10,
		Rate: 1000, For: 20 * time.Second, Workers: 64, Drain: 30 * time.Second, Subscribes: 20,
		ConsumeMessages: 20_000, ConsumeConsumers: []int{1, 8}}
}

// Smoke is a few seconds of every workload: it proves the bench code works, its numbers mean
// nothing.
func Smoke() Plan {
	return Plan{Messages: 2000, Bytes: 1024, Senders: []int{1, 8}, Rounds: 2,
		Rate: 500, For: 2 * time.Second, Workers: 16, Drain: 5 * time.Second, Subscribes: 5,
		ConsumeMessages: 500, ConsumeConsumers: []int{1, 8}}
}

// Run measures one backend, and the raw client on the same broker when Raw is set.
type Run struct {
	// Backend is the backend under test, opened through the registry by the caller, who closes
	// it. It also creates (and deletes) every topic, the raw client's too, so both measure
	// topics with the same broker-side settings.
	Backend backends.Backend
	// Description says what the backend is.
	Description string
	// Raw are the broker's own client on the same broker, by client name (reports.ClientRaw,
	// reports.ClientRawSame); none for an in-process backend. Only reports.ClientRaw runs the
	// latency workload: the other one exists for the adapter's own throughput cost.
	Raw  []Client
	Plan Plan
	// Progress gets one line per workload; nil discards.
	Progress func(format string, args ...any)
}

// Client is a Target under a client name of the report.
type Client struct {
	Name string
	T    Target
}

// Measure runs every workload, the backend and the raw clients back to back for each figure
// (in alternating rounds for throughput) so they see the same load of a shared machine, and
// returns the results. A workload that fails is recorded in
// Errors and the others still run; the error returned is only for a cancelled ctx.
func (r Run) Measure(ctx context.Context) (*reports.Bench, error) {
	progress := r.Progress
	if progress == nil {
		progress = func(string, ...any) {}
	}
	started := time.Now()
	out := &reports.Bench{Backend: r.Backend.Name(), Description: r.Description,
		StartedAt: started.UTC().Format(time.RFC3339), Machine: ThisMachine()}
	targets := append([]Client{{reports.ClientBackend, ContractTarget{B: r.Backend, Description: r.Description}}}, r.Raw...)
	fail := func(what string, err error) {
		line := what + ": " + strings.Join(strings.Fields(err.Error()), " ")
		out.Errors = append(out.Errors, line)
		progress("%s: %s", out.Backend, line)
	}
	p := r.Plan
	for _, senders := range p.Senders {
		ts := make([]Target, len(targets))
		topics := make([]string, len(targets))
		var cleanups []func()
		ok := true
		for i, tg := range targets {
			topic, done, err := r.topic(ctx)
			if err != nil {
				fail("topic", err)
				ok = false
				break
			}
			ts[i], topics[i] = tg.T, topic
			cleanups = append(cleanups, done)
		}
		if ok {
			res, errs := ThroughputRounds(ctx, ts, topics, p.Messages, p.Bytes, senders, p.Rounds)
			for i, tg := range targets {
				res[i].Client = tg.Name
				out.Throughput = append(out.Throughput, res[i])
				if errs[i] != nil {
					fail(fmt.Sprintf("%s throughput senders=%d", tg.Name, senders), errs[i])
				}
				progress("%s %s throughput senders=%d: %.0f msgs/s, %.2f MB/s (%d errors, %.1fs in %d rounds)",
					out.Backend, tg.Name, senders, res[i].MsgsPerSec, res[i].MBPerSec, res[i].Errors, res[i].Seconds, max(p.Rounds, 1))
			}
		}
		for _, c := range cleanups {
			c()
		}
	}
	// Latency and receive-and-ack run on the backend and the plain raw client only (the
	// raw-same-settings client exists for the adapter's own send cost), each on a fresh topic.
	onFreshTopics := func(measure func(tg Client, topic string)) {
		for _, tg := range targets {
			if tg.Name != reports.ClientBackend && tg.Name != reports.ClientRaw {
				continue
			}
			topic, done, err := r.topic(ctx)
			if err != nil {
				fail("topic", err)
				continue
			}
			measure(tg, topic)
			done()
		}
	}
	if p.Rate > 0 {
		onFreshTopics(func(tg Client, topic string) {
			res, err := Latency(ctx, tg.T, topic, "bench-latency", p.Rate, p.For, p.Bytes, p.Workers, p.Drain)
			res.Client = tg.Name
			out.Latency = append(out.Latency, res)
			if err != nil {
				fail(tg.Name+" latency", err)
			}
			progress("%s %s latency at %d/s: p50 %.2f ms, p99 %.2f ms, p99.9 %.2f ms, max %.2f ms (%d/%d received)",
				out.Backend, tg.Name, p.Rate, res.EndToEnd.P50, res.EndToEnd.P99, res.EndToEnd.P999, res.EndToEnd.Max, res.Received, res.Sent)
		})
	}
	for _, consumers := range p.ConsumeConsumers {
		onFreshTopics(func(tg Client, topic string) {
			res, err := Consume(ctx, tg.T, topic, p.ConsumeMessages, p.Bytes, consumers)
			res.Client = tg.Name
			out.Consume = append(out.Consume, res)
			if err != nil {
				fail(fmt.Sprintf("%s consume consumers=%d", tg.Name, consumers), err)
			}
			progress("%s %s receive+ack consumers=%d: %.0f acks/s per consumer, %.0f in all (%d acked in %.1fs)",
				out.Backend, tg.Name, consumers, res.AcksPerSec, res.TotalAcksPerSec, res.Acked, res.Seconds)
		})
	}
	if p.Subscribes > 0 {
		topic, done, err := r.topic(ctx)
		if err != nil {
			fail("topic", err)
		} else {
			s, err := Subscribe(ctx, ContractTarget{B: r.Backend}, topic, p.Subscribes, "bench-sub")
			done()
			if err != nil {
				fail("subscribe-to-live", err)
			}
			if s.N > 0 {
				out.Subscribe = &s
			}
			progress("%s subscribe-to-live over %d: p50 %.1f ms, p99 %.1f ms", out.Backend, s.N, s.P50, s.P99)
		}
	}
	out.ComputeRatios()
	out.Seconds = time.Since(started).Seconds()
	return out, ctx.Err()
}

// topic creates a fresh flow topic through the backend and returns a func deleting it.
func (r Run) topic(ctx context.Context) (string, func(), error) {
	var b [6]byte
	_, _ = rand.Read(b[:])
	topic := "flow:bench:t-" + hex.EncodeToString(b[:])
	if err := r.Backend.EnsureTopic(ctx, topic); err != nil {
		return "", nil, fmt.Errorf("create %s: %w", topic, err)
	}
	return topic, func() {
		dctx, cancel := context.WithTimeout(context.Background(), sendTimeout)
		defer cancel()
		_ = r.Backend.DeleteTopic(dctx, topic)
	}, nil
}

// ThisMachine describes the machine for the report: cores, platform and, on Linux, the
// 1-minute load average (how busy the shared machine was).
func ThisMachine() reports.Machine {
	m := reports.Machine{CPUs: runtime.NumCPU(), GOOS: runtime.GOOS, GOARCH: runtime.GOARCH}
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(b)); len(f) > 0 {
			m.Load1, _ = strconv.ParseFloat(f[0], 64)
		}
	}
	return m
}
