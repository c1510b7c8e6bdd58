package specs

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/pubsub-conformance/harness/backends"
)

func delivery(env *Env) {
	Describe("delivery", func() {
		var b backends.Backend
		BeforeEach(func(ctx SpecContext) { b = open(ctx, env) }, NodeTimeout(callWithin))

		Behaviour("D1", func(ctx SpecContext) {
			need(b, backends.CapBinaryPayloads)
			topic := newTopic(backends.ClassFlow, "d1")
			c := subscribe(ctx, b, topic, unique("d1"))
			p := produce(ctx, b, topic)
			all := make([]byte, 256)
			for i := range all {
				all[i] = byte(i)
			}
			sent := []backends.Message{
				{Payload: all, Properties: map[string]string{"unicode-ключ": "héllo ✓ 世界 🚀", "empty": "", "k": "v"}},
				{Payload: []byte("nil properties"), Properties: nil},
				{Payload: []byte("empty properties"), Properties: map[string]string{}},
				{Payload: []byte("ünïcödé payload ✓"), Properties: map[string]string{"a": "1", "b": "2"}},
			}
			sendAll(ctx, p, sent...)
			r := receiveN(ctx, c, len(sent), arriveWithin, ack)
			Expect(len(r.Got)).To(Equal(len(sent)), "expected the %d sent messages; %s", len(sent), r.describe())
			// Matched by payload, not position: send order is D4's (a SHOULD), not D1's.
			for i, m := range sent {
				at := slices.IndexFunc(r.Got, func(d backends.Delivery) bool { return bytes.Equal(d.Payload, m.Payload) })
				var got []string
				for _, d := range r.Got {
					got = append(got, brief(d.Payload))
				}
				Expect(at).NotTo(Equal(-1), "message %d: payload %s changed in transit; received %s", i, brief(m.Payload), strings.Join(got, ", "))
				d := r.Got[at]
				Expect(d.Properties).To(equalProps(m.Properties),
					"message %d: properties changed in transit (%d sent, %d received)", i, len(m.Properties), len(d.Properties))
				Expect(d.Topic).To(Equal(topic), "message %d: Delivery.Topic", i)
			}
		}, SpecTimeout(specTimeout))

		BehaviourTable("D2",
			func(ctx SpecContext, cl backends.Class) { readyOnReturn(ctx, b, cl, nil) },
			func(cl backends.Class) string { return fmt.Sprintf("class %s", cl) },
			Entry(nil, backends.ClassFlow, SpecTimeout(specTimeout)),
			Entry(nil, backends.ClassRequest, SpecTimeout(specTimeout)),
			Entry(nil, backends.ClassResponse, SpecTimeout(specTimeout)),
			Entry(nil, backends.ClassNotify, SpecTimeout(specTimeout)),
		)

		Behaviour("D3", func(ctx SpecContext) {
			const n, senders = 1000, 8
			topic := newTopic(backends.ClassFlow, "d3")
			c := subscribe(ctx, b, topic, unique("d3"))
			p := produce(ctx, b, topic)
			want := msgPayloads(batch("d3", n))
			var wg sync.WaitGroup
			errs := make(chan error, n)
			for s := range senders {
				wg.Go(func() {
					for i := s; i < n; i += senders {
						sctx, cancel := context.WithTimeout(ctx, callWithin)
						if err := p.Send(sctx, msg("d3", i)); err != nil {
							errs <- fmt.Errorf("send d3-%d: %w", i, err)
						}
						cancel()
					}
				})
			}
			wg.Wait()
			close(errs)
			Expect(errors.Join(collect(errs)...)).NotTo(HaveOccurred(), "concurrent sends")
			r := receiveN(ctx, c, n, 60*time.Second, ack)
			// A short extra window catches duplicates that trail the last new message.
			r2 := receiveFor(ctx, c, quietFor, ack)
			got := counts(append(r.Got, r2.Got...))
			Expect(missing(want, got)).To(BeEmpty(), "expected all %d messages; %s", n, r.describe())
			Expect(duplicated(got)).To(BeEmpty(), "expected no duplicates in steady state; %d deliveries for %d messages", len(r.Got)+len(r2.Got), n)
			ids := map[string]string{}
			for _, d := range append(r.Got, r2.Got...) {
				Expect(ids).NotTo(HaveKey(d.ID), "Delivery.ID %q was given to %s and %s: IDs must be unique within a consumer", d.ID, ids[d.ID], brief(d.Payload))
				ids[d.ID] = string(d.Payload)
			}
			checkHistory(b, false)
		}, SpecTimeout(3*time.Minute))

		Behaviour("D4", func(ctx SpecContext) {
			const n = 200
			topic := newTopic(backends.ClassFlow, "d4")
			c := subscribe(ctx, b, topic, unique("d4"))
			p := produce(ctx, b, topic)
			sent := batch("d4", n)
			sendAll(ctx, p, sent...)
			r := receiveN(ctx, c, n, 60*time.Second, ack)
			Expect(payloads(r.Got)).To(equalSequence(msgPayloads(sent)), "expected %d messages in send order; %s", n, r.describe())
		}, SpecTimeout(specTimeout))

		Behaviour("D5", func(ctx SpecContext) {
			need(b, backends.CapBinaryPayloads)
			topic := newTopic(backends.ClassFlow, "d5")
			c := subscribe(ctx, b, topic, unique("d5"))
			p := produce(ctx, b, topic)
			big := make([]byte, 5<<20)
			_, _ = rand.Read(big)
			sendAll(ctx, p, backends.Message{Payload: big, Properties: map[string]string{"size": "5MiB"}})
			r := receiveN(ctx, c, 1, arriveWithin*2, ack)
			Expect(len(r.Got)).To(Equal(1), "expected the 5 MiB message %s; %d arrived within %s (%v)", brief(big), len(r.Got), r.Waited, r.LastErr)
			Expect(len(r.Got[0].Payload)).To(Equal(len(big)), "payload size: sent %s, received %s", brief(big), brief(r.Got[0].Payload))
			Expect(firstDifference(r.Got[0].Payload, big)).To(Equal(-1),
				"5 MiB payload bytes differ after the round trip, first at the byte offset shown")
		}, SpecTimeout(specTimeout))

		Behaviour("D6", func(ctx SpecContext) {
			topic := newTopic(backends.ClassFlow, "d6")
			p, err := b.Producer(ctx, topic)
			Expect(err).NotTo(HaveOccurred(), "create producer")
			sendAll(ctx, p, msg("d6", 0))
			Expect(p.Close(ctx)).To(Succeed(), "close producer")
			other := open(ctx, env)
			c := subscribe(ctx, other, topic, unique("d6"), backends.WithPosition(backends.Earliest))
			r := receiveN(ctx, c, 1, arriveWithin, ack)
			Expect(payloads(r.Got)).To(Equal([]string{"d6-0"}),
				"expected the message whose Send returned before the producer closed; %s", r.describe())
		}, SpecTimeout(specTimeout))

		Behaviour("D7", func(ctx SpecContext) {
			topic := newTopic(backends.ClassFlow, "d7")
			c := subscribe(ctx, b, topic, unique("d7"))
			const deadline, slack = 2 * time.Second, 3 * time.Second

			dctx, cancel := context.WithTimeout(ctx, deadline)
			start := time.Now()
			d, err := c.Receive(dctx)
			took := time.Since(start)
			cancel()
			Expect(err).To(HaveOccurred(), "Receive on an empty topic returned a message %s instead of timing out", brief(d.Payload))
			Expect(err).To(MatchError(backends.ErrTimeout), "Receive ended with %v after %s; expected an error wrapping backends.ErrTimeout", err, took)
			Expect(took).To(BeNumerically("<", deadline+slack), "Receive with a %s deadline returned only after %s", deadline, took)
			Expect(took).To(BeNumerically(">=", deadline-100*time.Millisecond), "Receive returned after %s, before its %s deadline", took, deadline)

			cctx, cancelNow := context.WithCancel(ctx)
			timer := time.AfterFunc(300*time.Millisecond, cancelNow)
			defer timer.Stop()
			start = time.Now()
			_, err = c.Receive(cctx)
			took = time.Since(start)
			cancelNow()
			Expect(err).To(MatchError(context.Canceled), "Receive after cancel ended with %v; expected context.Canceled", err)
			Expect(took).To(BeNumerically("<", 300*time.Millisecond+slack), "Receive cancelled at 300ms returned only after %s", took)
		}, SpecTimeout(time.Minute))

		Behaviour("D8", func(ctx SpecContext) {
			propsRoundTrip(ctx, b, "d8", "properties", map[string]string{
				"Content-Type":            "Application/JSON; charset=UTF-8",
				"content-type":            "lower case key, a different key",
				"X-Trace.Span-ID":         "a.b-c_d",
				"key with spaces":         "  leading and trailing spaces  ",
				"dots.in.key.":            ".",
				"dash-":                   "-",
				"MiXeD":                   "MiXeD CaSe VaLuE",
				"unicode ключ ✓":          "значение ✓ 値",
				strings.Repeat("K", 200):  "long key", // a longer one is D10's
				"long-value":              strings.Repeat("0123456789abcdef", 512) + "end",
				"tg.routing:key/with=sym": "a=b&c=d;e,f",
			})
		}, SpecTimeout(specTimeout))

		Behaviour("D10", func(ctx SpecContext) {
			propsRoundTrip(ctx, b, "d10", "a 300-byte property key", map[string]string{strings.Repeat("K", 300): "a 300-byte key", "id": "d10"})
		}, SpecTimeout(specTimeout))

		BehaviourTable("D9",
			func(ctx SpecContext, cl backends.Class) {
				topic := newTopic(cl, "d9")
				p := produce(ctx, b, topic) // creates the topic
				before := batch("d9-before", 3)
				sendAll(ctx, p, before...)
				c := subscribe(ctx, b, topic, unique("d9"), backends.WithPosition(backends.Latest))
				sendAll(ctx, p, msg("d9-after", 0))
				r := receivePayload(ctx, c, "d9-after-0", arriveWithin, ack)
				Expect(payloads(r.Got)).To(ContainElement("d9-after-0"), "the message sent after Consumer() returned must arrive; %s", r.describe())
				more := receiveFor(ctx, c, quietFor, ack)
				all := append(r.Got, more.Got...)
				var early []string
				for _, m := range msgPayloads(before) {
					if contains(all, m) {
						early = append(early, m)
					}
				}
				Expect(early).To(BeEmpty(),
					"%s: a new subscription at latest received %s, sent before it was live (latest acted as earliest); got %s",
					cl, show(early), show(payloads(all)))
			},
			func(cl backends.Class) string { return fmt.Sprintf("class %s", cl) },
			Entry(nil, backends.ClassFlow, SpecTimeout(specTimeout)),
			Entry(nil, backends.ClassRequest, SpecTimeout(specTimeout)),
		)
	})
}

// propsRoundTrip is D8's and D10's body: one message with props (payload tag) on a new flow
// topic comes back with exactly those properties; what names them in the failure.
func propsRoundTrip(ctx context.Context, b backends.Backend, tag, what string, props map[string]string) {
	GinkgoHelper()
	topic := newTopic(backends.ClassFlow, tag)
	c := subscribe(ctx, b, topic, unique(tag))
	sendAll(ctx, produce(ctx, b, topic), backends.Message{Payload: []byte(tag), Properties: props})
	r := receiveN(ctx, c, 1, arriveWithin, ack)
	Expect(r.Got).To(HaveLen(1), "expected the message; %s", r.describe())
	Expect(propDiff(props, r.Got[0].Properties)).To(BeEmpty(), "%s must come back byte-exact", what)
}

// collect drains a closed error channel.
func collect(ch <-chan error) []error {
	var out []error
	for err := range ch {
		out = append(out, err)
	}
	return out
}

// readyOnReturn is D2's body for class cl on client b; F2 runs it under network latency.
// note, when not nil, is appended to its failure messages (F2's fault timeline).
func readyOnReturn(ctx context.Context, b backends.Backend, cl backends.Class, note fmt.Stringer) {
	// A race that loses one subscription in twenty must not pass: every entry opens
	// fresh subscriptions from streams goroutines at once, each sending its own message
	// the moment its Consumer() returned; each stream does at least minRounds rounds
	// and goes on while the entry is younger than budget (fast backends try more).
	const streams, minRounds, maxRounds, budget = 12, 3, 40, 2 * time.Second
	topic := newTopic(cl, "d2")
	p := produce(ctx, b, topic)
	begin := time.Now()
	var opened atomic.Int64
	var mu sync.Mutex
	var missed, failed []string
	var wg sync.WaitGroup
	for s := range streams {
		wg.Go(func() {
			for round := 0; round < maxRounds && (round < minRounds || time.Since(begin) < budget); round++ {
				opened.Add(1)
				tag := fmt.Sprintf("d2-s%d-r%d", s, round)
				cctx, cancel := context.WithTimeout(ctx, callWithin)
				start := time.Now()
				c, err := b.Consumer(cctx, topic, unique("d2"), backends.WithPosition(backends.Latest))
				cancel()
				if err != nil {
					mu.Lock()
					failed = append(failed, fmt.Sprintf("%s: Consumer() failed after %s: %v", tag, since(start), err))
					mu.Unlock()
					return
				}
				returned := time.Now()
				sctx, cancel := context.WithTimeout(ctx, callWithin)
				err = p.Send(sctx, backends.Message{Payload: []byte(tag)})
				cancel()
				sentAfter := time.Since(returned).Round(time.Microsecond)
				var got bool
				if err == nil {
					rctx, cancel := context.WithTimeout(ctx, arriveWithin)
					for !got {
						d, rerr := c.Receive(rctx)
						if rerr != nil {
							break
						}
						got = string(d.Payload) == tag
						_ = c.Ack(rctx, d)
					}
					cancel()
				}
				cctx, cancel = context.WithTimeout(ctx, callWithin)
				cerr := c.Close(cctx)
				cancel()
				mu.Lock()
				switch {
				case err != nil:
					failed = append(failed, fmt.Sprintf("%s: send: %v", tag, err))
				case !got:
					missed = append(missed, fmt.Sprintf("%s (sent %s after Consumer() returned)", tag, sentAfter))
				}
				if cerr != nil {
					failed = append(failed, fmt.Sprintf("%s: close: %v", tag, cerr))
				}
				mu.Unlock()
				if err != nil || !got {
					return // one miss says it all; do not wait out the bound again
				}
			}
		})
	}
	wg.Wait()
	Expect(failed).To(BeEmpty(), "%s: calls failed%s", cl, noted(note))
	Expect(missed).To(BeEmpty(),
		"%s: %d subscriptions (of up to %d) did not receive, within %s, the message sent right after their Consumer() returned (Consumer returned before the subscription was live): %s%s",
		cl, len(missed), opened.Load(), arriveWithin, strings.Join(missed, "; "), noted(note))
}

// propDiff lists how got differs from want, key by key (quoted, so spaces and case show).
func propDiff(want, got map[string]string) []string {
	var out []string
	for k, v := range want {
		g, ok := got[k]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("key %q missing", clipped(k)))
		case g != v:
			out = append(out, fmt.Sprintf("key %q: sent %q, got %q", clipped(k), clipped(v), clipped(g)))
		}
	}
	for k, v := range got {
		if _, ok := want[k]; !ok {
			out = append(out, fmt.Sprintf("extra key %q = %q", clipped(k), clipped(v)))
		}
	}
	sort.Strings(out)
	return out
}

func clipped(s string) string {
	if len(s) > 60 {
		return fmt.Sprintf("%s...(%d bytes)", s[:40], len(s))
	}
	return s
}
