package bench

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/pubsub-conformance/harness/reports"
)

// prefillSenders is how many Sends are in flight while a consume workload fills its topic:
// the filling is not what is measured, so it may as well be fast.
const prefillSenders = 32

// Consume measures how fast consumers receive and acknowledge: consumers subscriptions of
// their own on topic (each gets every message: a Kafka topic here has one partition, which a
// shared subscription would give to one member alone) are made live, n messages of size bytes
// are sent, and then every consumer receives and acks each of the n in turn, the ack inline as
// a flow's processor would do it. The figure is each consumer's n over the time from the start
// signal to its last ack returning; AcksPerSec is their mean, TotalAcksPerSec all acks over the
// slowest consumer's time.
func Consume(ctx context.Context, t Target, topic string, n, size, consumers int) (reports.Consume, error) {
	res := reports.Consume{ClientInfo: t.Info(), Consumers: consumers, Messages: n, Bytes: size}
	if n < 1 || consumers < 1 {
		return res, fmt.Errorf("consume: %d messages for %d consumers", n, consumers)
	}
	rs := make([]Receiver, consumers)
	for i := range rs {
		r, err := t.Receiver(ctx, topic, fmt.Sprintf("bench-consume-%d", i))
		if err != nil {
			return res, fmt.Errorf("consume: receiver %d: %w", i, err)
		}
		defer closeQuietly(r.Close)
		rs[i] = r
	}
	s, err := t.Sender(ctx, topic)
	if err != nil {
		return res, fmt.Errorf("consume: sender: %w", err)
	}
	defer closeQuietly(s.Close)
	if _, failed, err := newSendLoad(s, size, prefillSenders).run(ctx, n, maxErrors); err != nil || failed > 0 {
		return res, fmt.Errorf("consume: fill the topic: %d sends failed: %w", failed, err)
	}

	type result struct {
		acked   int
		elapsed time.Duration
		err     error
	}
	results := make([]result, consumers)
	var wg sync.WaitGroup
	start := time.Now()
	for i, r := range rs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out := &results[i]
			for out.acked < n {
				rctx, cancel := context.WithTimeout(ctx, sendTimeout)
				_, ack, err := r.Receive(rctx)
				if err == nil {
					err = ack(rctx)
				}
				cancel()
				if err != nil {
					out.err = fmt.Errorf("consumer %d after %d acks: %w", i, out.acked, err)
					break
				}
				out.acked++
			}
			out.elapsed = time.Since(start)
		}()
	}
	wg.Wait()

	var slowest time.Duration
	var perConsumer float64
	var errs []error
	for _, r := range results {
		res.Acked += r.acked
		if r.err != nil {
			errs = append(errs, r.err)
			continue
		}
		slowest = max(slowest, r.elapsed)
		perConsumer += float64(r.acked) / r.elapsed.Seconds()
	}
	if len(errs) > 0 {
		res.Errors = len(errs)
		return res, fmt.Errorf("consume: %w", errs[0])
	}
	res.Seconds = slowest.Seconds()
	res.AcksPerSec = perConsumer / float64(consumers)
	res.TotalAcksPerSec = float64(res.Acked) / slowest.Seconds()
	return res, nil
}
