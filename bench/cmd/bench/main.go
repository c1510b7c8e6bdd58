// Command bench measures each selected backend through the contract, with the broker's raw
// client beside it on the same broker in the same run, and writes
// reports/out/bench-<backend>.json (rendered by `make report` into the Performance section).
//
//	go run ./bench/cmd/bench [-backends kafka,pulsar] [-out reports/out] [-smoke] [-no-raw]
//
// Backends are any registered names (PUBSUB_BACKENDS when -backends is not given; default every
// registered conformance backend, backends.ConformanceNames); brokers are started once per kind by the provider
// PUBSUB_BROKERS selects, as the suite does, and stopped at the end (also on Ctrl-C).
// Exit status: 0 all workloads ran, 1 some failed (see the errors in the JSON), 2 bad usage or
// no broker.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/pubsub-conformance/harness/backends"
	"github.com/pubsub-conformance/harness/backends/all"
	"github.com/pubsub-conformance/harness/bench"
	"github.com/pubsub-conformance/harness/bench/raw"
	"github.com/pubsub-conformance/harness/fixtures"
	"github.com/pubsub-conformance/harness/fixtures/providers"
	"github.com/pubsub-conformance/harness/reports"
	suiterun "github.com/pubsub-conformance/harness/suite/run"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	names := fs.String("backends", "", "comma-separated registered backends (default $PUBSUB_BACKENDS, else every registered conformance backend)")
	out := fs.String("out", "reports/out", "directory for bench-<backend>.json")
	smoke := fs.Bool("smoke", false, "a few seconds per workload instead of the full plan (numbers mean nothing)")
	noRaw := fs.Bool("no-raw", false, "skip the raw client baselines")
	messages := fs.Int("messages", 0, "throughput: messages per run (default: the plan's); -messages=-1 skips throughput")
	senders := fs.String("senders", "", "throughput: comma-separated sender counts (default: the plan's, 1,8)")
	rounds := fs.Int("rounds", 0, "throughput: rounds the clients take turns in (default: the plan's)")
	rate := fs.Int("rate", 0, "latency: offered msgs/s (default: the plan's); -rate=-1 skips latency")
	forDur := fs.Duration("for", 0, "latency: duration (default: the plan's)")
	subs := fs.Int("subscribes", 0, "subscribe-to-live: Consumer() calls (default: the plan's); -1 skips")
	consume := fs.Int("consume", 0, "receive and ack: messages each consumer acks (default: the plan's); -1 skips")
	consumers := fs.String("consumers", "", "receive and ack: comma-separated consumer counts (default: the plan's, 1,8)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	progress := func(format string, a ...any) {
		fmt.Fprintf(stdout, "%s bench: %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, a...))
	}
	fail := func(err error) int { fmt.Fprintln(stderr, "bench:", err); return 2 }

	if all.AdapterError != nil {
		return fail(all.AdapterError)
	}
	sel := *names
	if sel == "" && os.Getenv("PUBSUB_BACKENDS") == "" {
		sel = strings.Join(backends.ConformanceNames(), ",")
	}
	selected, err := suiterun.Select(sel, os.Getenv)
	if err != nil {
		return fail(err)
	}
	plan := bench.Full()
	if *smoke {
		plan = bench.Smoke()
	}
	switch {
	case *messages < 0:
		plan.Senders = nil
	case *messages > 0:
		plan.Messages = *messages
	}
	switch {
	case *consume < 0:
		plan.ConsumeConsumers = nil
	case *consume > 0:
		plan.ConsumeMessages = *consume
	}
	if *consumers != "" {
		if plan.ConsumeConsumers, err = counts("consumers", *consumers); err != nil {
			return fail(err)
		}
	}
	if *senders != "" && *messages >= 0 {
		if plan.Senders, err = counts("senders", *senders); err != nil {
			return fail(err)
		}
	}
	if *rounds > 0 {
		plan.Rounds = *rounds
	}
	switch {
	case *rate < 0:
		plan.Rate = 0
	case *rate > 0:
		plan.Rate = *rate
	}
	if *forDur > 0 {
		plan.For = *forDur
	}
	switch {
	case *subs < 0:
		plan.Subscribes = 0
	case *subs > 0:
		plan.Subscribes = *subs
	}

	// One broker per kind, shared by the backends that need it and by the raw client.
	brokers := map[fixtures.Kind]fixtures.Broker{}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		for k, b := range brokers {
			if err := b.Stop(sctx); err != nil {
				progress("stop %s: %v", k, err)
			}
		}
	}()
	var provider fixtures.Provider
	status := 0
	for _, t := range selected {
		if ctx.Err() != nil {
			return fail(ctx.Err())
		}
		name, kind, needsBroker := t.Name(), t.Kind, t.NeedsBroker()
		var ep fixtures.Endpoints
		if needsBroker {
			if provider == nil {
				p, why, err := providers.Choose(os.Getenv)
				if err != nil {
					return fail(fmt.Errorf("choose broker provider: %w", err))
				}
				provider = p
				progress("broker provider %s: %s", p.Name(), why)
			}
			b, ok := brokers[kind]
			if !ok {
				start := time.Now()
				b, err = provider.Start(ctx, kind, fixtures.WithProgress(progress))
				if err != nil {
					return fail(fmt.Errorf("start %s (%s provider): %w", kind, provider.Name(), err))
				}
				brokers[kind] = b
				progress("%s %s ready in %s", kind, b.Endpoints().Version, time.Since(start).Round(10*time.Millisecond))
			}
			ep = b.Endpoints()
		}
		res, err := benchOne(ctx, t, ep, needsBroker && !*noRaw, plan, progress)
		if err != nil {
			fmt.Fprintf(stderr, "bench: %s: %v\n", name, err)
			status = 1
			continue
		}
		res.Smoke = *smoke
		if needsBroker {
			res.Broker, res.BrokerVersion, res.Provider = string(kind), ep.Version, ep.Provider
		}
		path := reports.BenchFile(*out, name)
		if err := res.Write(path); err != nil {
			return fail(err)
		}
		if len(res.Errors) > 0 {
			status = 1
		}
		for _, r := range res.Ratios {
			progress("%s %s: backend %.2f, raw %.2f, ratio %.2f", name, r.Figure, r.Backend, r.Raw, r.Ratio)
		}
		progress("wrote %s", path)
	}
	// The Performance section on its own, so a bench run needs no conformance results to be
	// read (make report adds it to compare.md/.html beside the matrix).
	if bs, err := reports.ReadBenches(*out); err != nil {
		return fail(err)
	} else if paths, err := reports.WritePerformancePage(*out, bs); err != nil {
		return fail(err)
	} else {
		progress("wrote %s", strings.Join(paths, ", "))
	}
	return status
}

// benchOne opens the resolved target t on ep (and its raw clients: the backend's own
// baseline, else ep's kind's) and measures both.
func benchOne(ctx context.Context, t suiterun.Target, ep fixtures.Endpoints, withRaw bool, plan bench.Plan, progress func(string, ...any)) (*reports.Bench, error) {
	name := t.Name()
	var broker map[string]string
	if ep.Kind != "" {
		broker = ep.Settings()
	}
	cfg, err := t.BaseConfig(broker)
	if err != nil {
		return nil, err
	}
	octx, cancel := context.WithTimeout(ctx, time.Minute)
	b, err := backends.Open(octx, cfg)
	cancel()
	if err != nil {
		return nil, fmt.Errorf("open: %w", err)
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = b.Close(cctx)
	}()
	r := bench.Run{Backend: b, Description: t.Descriptor.Description, Plan: plan, Progress: progress}
	if withRaw {
		clients, err := raw.For(name, ep)
		if err != nil {
			return nil, err
		}
		defer func() {
			cctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			for _, c := range clients {
				_ = c.T.Close(cctx)
			}
		}()
		r.Raw = clients
	}
	res, err := r.Measure(ctx)
	if err != nil && !errors.Is(err, context.Canceled) {
		return res, err
	}
	if err != nil {
		return nil, err
	}
	if len(res.Errors) > 0 {
		progress("%s: %d workload(s) failed: %s", name, len(res.Errors), strings.Join(res.Errors, "; "))
	}
	return res, nil
}

// counts parses a flag's comma-separated positive integers ("1,8").
func counts(flag, value string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(value, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("-%s %q: want positive integers separated by commas", flag, value)
		}
		out = append(out, n)
	}
	return out, nil
}
