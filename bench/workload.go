package bench

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/pubsub-conformance/harness/reports"
)

// sendTimeout bounds one Send or Ack: a backend that hangs costs an error count, not the run.
const sendTimeout = 30 * time.Second

// maxErrors stops a workload whose sends keep failing instead of waiting out every one (each
// may take sendTimeout: a backend that hangs costs minutes, not hours).
const maxErrors = 10

// Throughput sends n messages of size bytes to topic from senders goroutines, each waiting for
// the broker's confirmation before its next Send, and times first Send to last confirmation.
// A warm-up of n/100 messages (at least one per sender) goes first and is not counted.
func Throughput(ctx context.Context, t Target, topic string, n, size, senders int) (reports.Throughput, error) {
	res, errs := ThroughputRounds(ctx, []Target{t}, []string{topic}, n, size, senders, 1)
	return res[0], errs[0]
}

// ThroughputRounds is Throughput for several targets (each on its own topic) taking turns:
// the n messages of each are sent in rounds, every target sending n/rounds per round, and each
// target's figure is its messages over the sum of its rounds' times. On a shared machine whose
// load drifts, every target then samples the same stretches of it, which a ratio between them
// needs. A target that fails drops out; the others go on.
func ThroughputRounds(ctx context.Context, ts []Target, topics []string, n, size, senders, rounds int) ([]reports.Throughput, []error) {
	res := make([]reports.Throughput, len(ts))
	errs := make([]error, len(ts))
	loads := make([]*sendLoad, len(ts))
	rounds = max(rounds, 1)
	for i, t := range ts {
		res[i] = reports.Throughput{ClientInfo: t.Info(), Senders: senders, Messages: n, Bytes: size}
		if senders < 1 || n < senders*rounds {
			errs[i] = fmt.Errorf("throughput: %d messages over %d senders in %d rounds", n, senders, rounds)
			continue
		}
		s, err := t.Sender(ctx, topics[i])
		if err != nil {
			errs[i] = fmt.Errorf("throughput: sender: %w", err)
			continue
		}
		defer closeQuietly(s.Close)
		loads[i] = newSendLoad(s, size, senders)
		if _, failed, err := loads[i].run(ctx, max(n/100, senders), 1); err != nil || failed > 0 {
			if err == nil {
				err = fmt.Errorf("%d sends failed, first: %w", failed, loads[i].firstErr)
			}
			errs[i] = fmt.Errorf("throughput warm-up: %w", err)
		}
	}
	elapsed := make([]time.Duration, len(ts))
	failed := make([]int, len(ts))
	for r := 0; r < rounds; r++ {
		count := n / rounds
		if r == rounds-1 {
			count = n - count*(rounds-1)
		}
		for i, l := range loads {
			if l == nil || errs[i] != nil {
				continue
			}
			el, f, err := l.run(ctx, count, maxErrors)
			elapsed[i] += el
			failed[i] += f
			if err != nil {
				errs[i] = fmt.Errorf("throughput: %w", err)
			}
		}
	}
	for i := range ts {
		if elapsed[i] <= 0 {
			continue
		}
		sec := elapsed[i].Seconds()
		ok := float64(n - failed[i])
		res[i].Seconds, res[i].Errors = sec, failed[i]
		res[i].MsgsPerSec = ok / sec
		res[i].MBPerSec = ok * float64(size) / sec / 1e6
	}
	return res, errs
}

// sendLoad is senders goroutines sharing one Sender.
type sendLoad struct {
	s        Sender
	payload  []byte
	senders  int
	firstErr error // of the last run
}

func newSendLoad(s Sender, size, senders int) *sendLoad {
	payload := make([]byte, size)
	for i := range payload {
		payload[i] = byte('a' + i%26)
	}
	return &sendLoad{s: s, payload: payload, senders: senders}
}

// run sends total messages and returns the time it took and how many Sends failed; it gives
// up after maxErr failures (the warm-up after the first).
func (l *sendLoad) run(ctx context.Context, total int, maxErr int64) (time.Duration, int, error) {
	var next, errs atomic.Int64
	var firstErr error
	var once sync.Once
	var wg sync.WaitGroup
	start := time.Now()
	for g := 0; g < l.senders; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(total) {
				if ctx.Err() != nil || errs.Load() >= maxErr {
					return
				}
				sctx, cancel := context.WithTimeout(ctx, sendTimeout)
				err := l.s.Send(sctx, l.payload)
				cancel()
				if err != nil {
					errs.Add(1)
					once.Do(func() { firstErr = err })
				}
			}
		}()
	}
	wg.Wait()
	el := time.Since(start)
	l.firstErr = firstErr
	if errs.Load() >= maxErr {
		return el, int(errs.Load()), fmt.Errorf("gave up after %d failed sends, first: %w", errs.Load(), firstErr)
	}
	if ctx.Err() != nil {
		return el, int(errs.Load()), ctx.Err()
	}
	return el, int(errs.Load()), nil
}

// header is what a latency message carries before its padding: sequence number and intended
// send time (nanoseconds since the run's base instant; one process, one monotonic clock).
const header = 16

// Latency offers rate messages per second for dur to topic and receives them on a live
// subscription. Each message has an intended send time (start + i/rate); up to workers Sends
// are in flight, and a message waiting for a free worker keeps its intended time, so a stall
// shows in the figures instead of lowering the offered rate (coordinated omission, measured as
// wrk2 and OMB do). End-to-end latency is intended time -> received (before the ack); send
// latency is intended time -> Send returned. Receiving ends when every message arrived or drain
// after the last send.
func Latency(ctx context.Context, t Target, topic, sub string, rate int, dur time.Duration, size, workers int, drain time.Duration) (reports.Latency, error) {
	total := int(float64(rate) * dur.Seconds())
	res := reports.Latency{Client: "", ClientInfo: t.Info(), Rate: rate, Seconds: dur.Seconds(), Bytes: size}
	if total < 1 || size < header || workers < 1 {
		return res, fmt.Errorf("latency: %d messages of %d bytes (at least %d) with %d workers", total, size, header, workers)
	}
	r, err := t.Receiver(ctx, topic, sub)
	if err != nil {
		return res, fmt.Errorf("latency: receiver: %w", err)
	}
	defer closeQuietly(r.Close)
	s, err := t.Sender(ctx, topic)
	if err != nil {
		return res, fmt.Errorf("latency: sender: %w", err)
	}
	defer closeQuietly(s.Close)

	base := time.Now()
	e2e, sendH := newHist(), newHist()
	var sendMu sync.Mutex

	// Receiver: records until all arrived, or drain after sending ended. Acks go to one
	// goroutine of their own, in receive order, so the figure is delivery latency; how far
	// acknowledgements lag behind is the ack figure (receive -> Ack returned).
	sendingDone := make(chan struct{})
	type recvResult struct {
		received, dups, acked int
		err                   error
	}
	recvDone := make(chan recvResult, 1)
	ackH := newHist()
	go func() {
		seen := make([]bool, total)
		var out recvResult
		rctx, cancel := context.WithCancel(ctx)
		defer cancel()
		go func() {
			select {
			case <-sendingDone:
				select {
				case <-time.After(drain):
					cancel()
				case <-rctx.Done():
				}
			case <-rctx.Done():
			}
		}()
		type pendingAck struct {
			ack      func(context.Context) error
			received time.Duration
		}
		acks := make(chan pendingAck, total)
		ackDone := make(chan error, 1)
		go func() {
			var first error
			for a := range acks {
				if first != nil || rctx.Err() != nil {
					continue // the receiver stopped: count what was acknowledged until then
				}
				actx, acancel := context.WithTimeout(rctx, sendTimeout)
				err := a.ack(actx)
				acancel()
				if err != nil {
					if rctx.Err() == nil {
						first = fmt.Errorf("ack: %w", err)
					}
					continue
				}
				out.acked++
				_ = ackH.RecordValue(micros(time.Since(base) - a.received))
			}
			ackDone <- first
		}()
		defer func() {
			close(acks)
			if err := <-ackDone; err != nil && out.err == nil {
				out.err = err
			}
			recvDone <- out
		}()
		for out.received < total {
			p, ack, err := r.Receive(rctx)
			now := time.Since(base)
			if err != nil {
				if rctx.Err() != nil {
					return // drained: what is missing is reported as such
				}
				out.err = fmt.Errorf("receive: %w", err)
				return
			}
			if len(p) < header {
				out.err = fmt.Errorf("receive: foreign message of %d bytes on the bench topic", len(p))
				return
			}
			seq := binary.BigEndian.Uint64(p)
			intended := time.Duration(binary.BigEndian.Uint64(p[8:]))
			if seq >= uint64(total) {
				out.err = fmt.Errorf("receive: sequence %d out of range", seq)
				return
			}
			if seen[seq] {
				out.dups++
			} else {
				seen[seq] = true
				out.received++
				_ = e2e.RecordValue(micros(now - intended))
			}
			acks <- pendingAck{ack: ack, received: now}
		}
	}()

	// Scheduler and workers.
	type job struct {
		seq      int
		intended time.Duration
	}
	jobs := make(chan job, total)
	var sendErrs atomic.Int64
	var firstErr error
	var once sync.Once
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, size)
			for j := range jobs {
				binary.BigEndian.PutUint64(buf, uint64(j.seq))
				binary.BigEndian.PutUint64(buf[8:], uint64(j.intended))
				payload := append([]byte(nil), buf...) // a backend may keep the slice until confirmed
				sctx, cancel := context.WithTimeout(ctx, sendTimeout)
				err := s.Send(sctx, payload)
				cancel()
				if err != nil {
					sendErrs.Add(1)
					once.Do(func() { firstErr = err })
					continue
				}
				d := micros(time.Since(base) - j.intended)
				sendMu.Lock()
				_ = sendH.RecordValue(d)
				sendMu.Unlock()
			}
		}()
	}
	interval := time.Second / time.Duration(rate)
	start := time.Since(base) + 10*time.Millisecond
	timer := time.NewTimer(0)
	<-timer.C
	for i := 0; i < total && ctx.Err() == nil && sendErrs.Load() < maxErrors; i++ {
		intended := start + time.Duration(i)*interval
		if wait := intended - time.Since(base); wait > 0 {
			// Pacing the offered rate, not synchronisation: message i is due at its intended time.
			timer.Reset(wait)
			select {
			case <-timer.C:
			case <-ctx.Done():
			}
		}
		jobs <- job{seq: i, intended: intended}
		res.Sent++
	}
	close(jobs)
	wg.Wait()
	close(sendingDone)
	rr := <-recvDone

	res.SendErrors = int(sendErrs.Load())
	res.Sent -= res.SendErrors
	res.Received, res.Duplicates, res.Acked = rr.received, rr.dups, rr.acked
	res.EndToEnd, res.Send, res.Ack = percentiles(e2e), percentiles(sendH), percentiles(ackH)
	var errs []error
	if res.SendErrors > 0 {
		errs = append(errs, fmt.Errorf("%d sends failed, first: %w", res.SendErrors, firstErr))
	}
	if rr.err != nil {
		errs = append(errs, rr.err)
	}
	if ctx.Err() != nil {
		errs = append(errs, ctx.Err())
	}
	if err := errors.Join(errs...); err != nil {
		return res, fmt.Errorf("latency: %w", err)
	}
	return res, nil
}

// Subscribe times n Consumer() calls on new subscriptions of topic (each closed before the
// next) and returns nearest-rank percentiles.
func Subscribe(ctx context.Context, t ContractTarget, topic string, n int, subPrefix string) (reports.Subscribe, error) {
	var ds []time.Duration
	for i := 0; i < n; i++ {
		start := time.Now()
		closeFn, err := t.subscribe(ctx, topic, fmt.Sprintf("%s-%d", subPrefix, i))
		d := time.Since(start)
		if err != nil {
			return reports.Subscribe{N: len(ds)}, fmt.Errorf("subscribe-to-live: %w", err)
		}
		ds = append(ds, d)
		closeQuietly(closeFn)
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	rank := func(q float64) float64 {
		i := int(q*float64(len(ds))+0.999999) - 1
		i = min(max(i, 0), len(ds)-1)
		return ms(ds[i])
	}
	return reports.Subscribe{N: len(ds), P50: rank(0.50), P99: rank(0.99), Max: ms(ds[len(ds)-1])}, nil
}

// newHist tracks 1 µs .. 1 h with 3 significant digits.
func newHist() *hdrhistogram.Histogram {
	return hdrhistogram.New(1, int64(time.Hour/time.Microsecond), 3)
}

func micros(d time.Duration) int64 {
	if d < time.Microsecond {
		return 1
	}
	return int64(d / time.Microsecond)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func percentiles(h *hdrhistogram.Histogram) reports.Percentiles {
	if h.TotalCount() == 0 {
		return reports.Percentiles{}
	}
	at := func(p float64) float64 { return float64(h.ValueAtPercentile(p)) / 1000 }
	return reports.Percentiles{P50: at(50), P90: at(90), P99: at(99), P999: at(99.9), Max: float64(h.Max()) / 1000, N: h.TotalCount()}
}

// closeQuietly closes with a bound of its own: the figures are taken, a slow close is not one.
func closeQuietly(closeFn func(context.Context) error) {
	ctx, cancel := context.WithTimeout(context.Background(), sendTimeout)
	defer cancel()
	_ = closeFn(ctx)
}
