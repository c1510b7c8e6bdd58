package specs

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/pubsub-conformance/harness/backends"
)

// Bounds every spec uses. They are generous for slow shared CI machines; a healthy broker
// meets them with a wide margin, a hanging backend fails them with a precise message.
const (
	arriveWithin    = 15 * time.Second // a message that must arrive
	redeliverWithin = 30 * time.Second // a nacked / released message must come again
	quietFor        = 3 * time.Second  // window in which something must NOT arrive
	callWithin      = 30 * time.Second // one admin/producer/consumer call
	specTimeout     = 2 * time.Minute  // default SpecTimeout
)

// runID keeps names unique across runs that share an external broker.
var runID = func() string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}()

var nameSeq atomic.Int64

// unique returns a name no other spec, process or run uses: specs can run with ginkgo -p.
func unique(what string) string {
	return fmt.Sprintf("%s-%s-p%d-%d", what, runID, GinkgoParallelProcess(), nameSeq.Add(1))
}

// newTopic returns a fresh topic string of class c.
func newTopic(c backends.Class, what string) string {
	return string(c) + ":" + backends.DefaultTopicspace + ":" + unique(what)
}

// open returns a new client for env's broker, closed by DeferCleanup.
func open(ctx context.Context, env *Env) backends.Backend {
	GinkgoHelper()
	b, err := env.Open(ctx)
	Expect(err).NotTo(HaveOccurred(), "open a %s client on the run's broker", env.Backend)
	DeferCleanup(func(ctx SpecContext) {
		Expect(b.Close(ctx)).To(Succeed(), "close the %s client", env.Backend)
	}, NodeTimeout(callWithin))
	return b
}

// need skips the spec when b declares it lacks capability c; the reason reaches the report.
func need(b backends.Backend, c backends.Capability) {
	GinkgoHelper()
	if reason, lacks := b.Unsupported()[c]; lacks {
		Skip(fmt.Sprintf("%s lacks capability %q: %s", b.Name(), c, reason))
	}
}

// needForClass skips when a non-durable class needs capability c that b lacks.
func needForClass(b backends.Backend, cl backends.Class, c backends.Capability) {
	GinkgoHelper()
	if !cl.Durable() {
		need(b, c)
	}
}

// skipIfUnavailable turns an Unavailable error from Env into a Skip with its reason.
func skipIfUnavailable(err error) {
	GinkgoHelper()
	if reason, ok := skipReason(err); ok {
		Skip(reason)
	}
}

// failSetup fails the spec when err (a broker that did not start, a preparation that failed)
// is not nil, with "what: <err>" (just err when what is "") on one line: HaveOccurred would
// print the wrapped error's struct dump around the message.
func failSetup(err error, what string) {
	GinkgoHelper()
	switch {
	case err == nil:
	case what == "":
		Fail(err.Error())
	default:
		Fail(what + ": " + err.Error())
	}
}

// produce returns a producer of topic, closed by DeferCleanup.
func produce(ctx context.Context, b backends.Backend, topic string) backends.Producer {
	GinkgoHelper()
	p, err := b.Producer(ctx, topic)
	Expect(err).NotTo(HaveOccurred(), "create a producer for %s", topic)
	DeferCleanup(func(ctx SpecContext) {
		Expect(p.Close(ctx)).To(Succeed(), "close the producer for %s", topic)
	}, NodeTimeout(callWithin))
	return p
}

// subscribe returns a consumer, closed by DeferCleanup (Close is idempotent, so specs may
// close it earlier themselves).
func subscribe(ctx context.Context, b backends.Backend, topic, sub string, opts ...backends.ConsumerOption) backends.Consumer {
	GinkgoHelper()
	cctx, cancel := context.WithTimeout(ctx, callWithin)
	defer cancel()
	start := time.Now()
	c, err := b.Consumer(cctx, topic, sub, opts...)
	Expect(err).NotTo(HaveOccurred(), "Consumer(%s, %s) failed after %s", topic, sub, since(start))
	DeferCleanup(func(ctx SpecContext) {
		Expect(c.Close(ctx)).To(Succeed(), "close the consumer of %s/%s", topic, sub)
	}, NodeTimeout(callWithin))
	return c
}

// closeNow closes c inside the spec (the deferred Close then checks idempotency).
func closeNow(ctx context.Context, c backends.Consumer) {
	GinkgoHelper()
	Expect(c.Close(ctx)).To(Succeed(), "close consumer")
}

// msg builds the i-th message of a batch tagged tag: payload "tag-i", property seq=i.
func msg(tag string, i int) backends.Message {
	return backends.Message{
		Payload:    []byte(fmt.Sprintf("%s-%d", tag, i)),
		Properties: map[string]string{"seq": fmt.Sprint(i), "tag": tag},
	}
}

// sendAll sends msgs in order, each confirmed before the next.
func sendAll(ctx context.Context, p backends.Producer, msgs ...backends.Message) {
	GinkgoHelper()
	for i, m := range msgs {
		sctx, cancel := context.WithTimeout(ctx, callWithin)
		start := time.Now()
		err := p.Send(sctx, m)
		cancel()
		Expect(err).NotTo(HaveOccurred(), "send message %d of %d (%s) failed after %s", i+1, len(msgs), brief(m.Payload), since(start))
	}
}

// batch returns n messages tagged tag.
func batch(tag string, n int) []backends.Message {
	out := make([]backends.Message, n)
	for i := range out {
		out[i] = msg(tag, i)
	}
	return out
}

// settle says what a receive loop does with each delivery.
type settle int

const (
	keep settle = iota // neither ack nor nack: the message stays unacknowledged
	ack                // ack each delivery as it arrives
)

// received is the outcome of a bounded receive loop.
type received struct {
	Got     []backends.Delivery
	Waited  time.Duration
	LastErr error // the error that ended the loop early (nil when stop said done)
}

// receiveUntil receives from c until done(got) is true or within has passed, acking each
// delivery when s is ack. It never blocks past within; a receive error other than the
// deadline ends the loop and is reported in LastErr.
func receiveUntil(ctx context.Context, c backends.Consumer, within time.Duration, s settle, done func(got []backends.Delivery) bool) received {
	GinkgoHelper()
	start := time.Now()
	rctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	var r received
	for done == nil || !done(r.Got) {
		d, err := c.Receive(rctx)
		if err != nil {
			r.LastErr = err
			break
		}
		r.Got = append(r.Got, d)
		if s == ack {
			actx, acancel := context.WithTimeout(ctx, callWithin)
			err := c.Ack(actx, d)
			acancel()
			Expect(err).NotTo(HaveOccurred(), "ack %s", brief(d.Payload))
		}
	}
	r.Waited = time.Since(start)
	return r
}

// receiveN receives until n deliveries arrived (or within passed).
func receiveN(ctx context.Context, c backends.Consumer, n int, within time.Duration, s settle) received {
	GinkgoHelper()
	return receiveUntil(ctx, c, within, s, func(got []backends.Delivery) bool { return len(got) >= n })
}

// receiveFor receives everything that arrives in window (the loop ends by its deadline).
func receiveFor(ctx context.Context, c backends.Consumer, window time.Duration, s settle) received {
	GinkgoHelper()
	return receiveUntil(ctx, c, window, s, nil)
}

// receivePayload receives until a delivery with payload want arrives.
func receivePayload(ctx context.Context, c backends.Consumer, want string, within time.Duration, s settle) received {
	GinkgoHelper()
	return receiveUntil(ctx, c, within, s, func(got []backends.Delivery) bool {
		return len(got) > 0 && string(got[len(got)-1].Payload) == want
	})
}

// payloads lists the payloads of ds as strings.
func payloads(ds []backends.Delivery) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = string(d.Payload)
	}
	return out
}

// msgPayloads lists the payloads of ms.
func msgPayloads(ms []backends.Message) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = string(m.Payload)
	}
	return out
}

// briefMax is how many bytes of a payload a failure message shows.
const briefMax = 40

// brief names a payload in a failure message: a short one quoted whole, a longer or binary one
// as its first bytes with its length and sha256 digest, so a 5 MiB payload costs one line and
// two payloads are the same exactly when their briefs are.
func brief(p []byte) string {
	if len(p) <= briefMax && utf8.Valid(p) {
		return strconv.Quote(string(p))
	}
	sum := sha256.Sum256(p)
	head := p[:min(len(p), 16)]
	return fmt.Sprintf("%q... (%d bytes, sha256 %x)", head, len(p), sum[:8])
}

// show summarises a list of payloads for a failure message.
func show(ps []string) string {
	for i, p := range ps {
		if len(p) > briefMax || !utf8.ValidString(p) {
			ps = slices.Clone(ps)
			ps[i] = brief([]byte(p))
		}
	}
	if len(ps) <= 12 {
		return "[" + strings.Join(ps, " ") + "]"
	}
	return fmt.Sprintf("[%s ... %s] (%d)", strings.Join(ps[:6], " "), strings.Join(ps[len(ps)-3:], " "), len(ps))
}

// describe says what arrived, how long the loop waited and why it stopped.
func (r received) describe() string {
	why := ""
	if r.LastErr != nil {
		why = "; the loop ended with: " + r.LastErr.Error()
	}
	return fmt.Sprintf("%d arrived %s within %s%s", len(r.Got), show(payloads(r.Got)), r.Waited.Round(time.Millisecond), why)
}

// counts maps each payload to how many times it arrived.
func counts(ds []backends.Delivery) map[string]int {
	m := map[string]int{}
	for _, d := range ds {
		m[string(d.Payload)]++
	}
	return m
}

// missing lists the wanted payloads that are not in got.
func missing(want []string, got map[string]int) []string {
	var out []string
	for _, w := range want {
		if got[w] == 0 {
			out = append(out, w)
		}
	}
	return out
}

// duplicated lists the payloads that arrived more than once, sorted.
func duplicated(got map[string]int) []string {
	var out []string
	for _, p := range slices.Sorted(maps.Keys(got)) {
		if n := got[p]; n > 1 {
			out = append(out, fmt.Sprintf("%s x%d", p, n))
		}
	}
	return out
}

// contains reports whether payload p arrived.
func contains(ds []backends.Delivery, p string) bool {
	return slices.ContainsFunc(ds, func(d backends.Delivery) bool { return string(d.Payload) == p })
}

// since formats the time since start for failure messages.
func since(start time.Time) time.Duration { return time.Since(start).Round(time.Millisecond) }
