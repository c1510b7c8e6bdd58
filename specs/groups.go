package specs

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/pubsub-conformance/harness/backends"
)

func groups(env *Env) {
	Describe("groups", Label("groups"), func() {
		var b backends.Backend
		BeforeEach(func(ctx SpecContext) { b = open(ctx, env) }, NodeTimeout(callWithin))

		Behaviour("G1", func(ctx SpecContext) {
			competing(ctx, b, false, competingN, nil)
			checkHistory(b, false)
		}, SpecTimeout(specTimeout))

		BehaviourTable("G2",
			func(ctx SpecContext, cl backends.Class, opts []backends.ConsumerOption) {
				const consumers, n = 3, 10
				topic := newTopic(cl, "g2")
				sub := unique("g2") // the same name for all: unique mode must still fan out
				cs := make([]backends.Consumer, consumers)
				for i := range cs {
					cs[i] = subscribe(ctx, b, topic, sub, opts...)
				}
				sent := batch("g2", n)
				sendAll(ctx, produce(ctx, b, topic), sent...)
				var wg sync.WaitGroup
				rs := make([]received, consumers)
				for i, c := range cs {
					wg.Go(func() {
						defer GinkgoRecover()
						rs[i] = receiveN(ctx, c, n, arriveWithin, ack)
					})
				}
				wg.Wait()
				for i, r := range rs {
					Expect(payloads(r.Got)).To(ConsistOf(msgPayloads(sent)),
						"%s consumer %d of %d (subscription name %s) must get every message; %s", cl, i+1, consumers, sub, r.describe())
				}
			},
			func(cl backends.Class, opts []backends.ConsumerOption) string {
				if len(opts) > 0 {
					return fmt.Sprintf("class %s with WithMode(Unique)", cl)
				}
				return fmt.Sprintf("class %s (default mode)", cl)
			},
			Entry(nil, backends.ClassResponse, []backends.ConsumerOption(nil), SpecTimeout(specTimeout)),
			Entry(nil, backends.ClassNotify, []backends.ConsumerOption(nil), SpecTimeout(specTimeout)),
			Entry(nil, backends.ClassFlow, []backends.ConsumerOption{backends.WithMode(backends.Unique)}, SpecTimeout(specTimeout)),
		)

		Behaviour("G3", func(ctx SpecContext) {
			const perSub, n = 2, 40
			topic := newTopic(backends.ClassFlow, "g3")
			subs := []string{unique("g3a"), unique("g3b")}
			cs := make([][]backends.Consumer, len(subs))
			for s, name := range subs {
				for range perSub {
					cs[s] = append(cs[s], subscribe(ctx, b, topic, name))
				}
			}
			sent := batch("g3", n)
			sendAll(ctx, produce(ctx, b, topic), sent...)
			var wg sync.WaitGroup
			per := make([][][]backends.Delivery, len(subs))
			waited := make([]time.Duration, len(subs))
			for s := range subs {
				wg.Go(func() {
					defer GinkgoRecover()
					per[s], waited[s] = receiveAll(ctx, cs[s], msgPayloads(sent), arriveWithin*2)
				})
			}
			wg.Wait()
			for s, name := range subs {
				union := counts(flatten(per[s]))
				Expect(missing(msgPayloads(sent), union)).To(BeEmpty(),
					"subscription %s must receive all %d messages within %s; per consumer: %s", name, n, waited[s], perConsumer(per[s]))
				Expect(duplicated(union)).To(BeEmpty(),
					"within subscription %s each message must reach one consumer; per consumer: %s", name, perConsumer(per[s]))
			}
			checkHistory(b, false)
		}, SpecTimeout(specTimeout))
	})
}

// receiveAll receives concurrently from cs, acking, until every wanted payload arrived (then a
// further quietFor, to catch duplicates) or within passed. It returns what each consumer got.
func receiveAll(ctx context.Context, cs []backends.Consumer, want []string, within time.Duration) ([][]backends.Delivery, time.Duration) {
	start := time.Now()
	rctx, cancel := context.WithTimeout(ctx, within+quietFor)
	defer cancel()
	var (
		mu       sync.Mutex
		seen     = map[string]bool{}
		per      = make([][]backends.Delivery, len(cs))
		complete bool
	)
	wanted := map[string]bool{}
	for _, w := range want {
		wanted[w] = true
	}
	// Why: stop at within even when incomplete, but give a complete set quietFor more.
	incomplete := time.AfterFunc(within, cancel)
	defer incomplete.Stop()
	var wg sync.WaitGroup
	for i, c := range cs {
		wg.Go(func() {
			defer GinkgoRecover()
			for {
				d, err := c.Receive(rctx)
				if err != nil {
					return
				}
				actx, acancel := context.WithTimeout(ctx, callWithin)
				Expect(c.Ack(actx, d)).To(Succeed(), "ack %q", d.Payload)
				acancel()
				mu.Lock()
				per[i] = append(per[i], d)
				if wanted[string(d.Payload)] {
					seen[string(d.Payload)] = true
				}
				if !complete && len(seen) == len(wanted) {
					complete = true
					incomplete.Stop()
					time.AfterFunc(quietFor, cancel)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return per, time.Since(start).Round(time.Millisecond)
}

func flatten(per [][]backends.Delivery) []backends.Delivery { return slices.Concat(per...) }

// perConsumer summarises what each consumer received.
func perConsumer(per [][]backends.Delivery) string {
	s := ""
	for i, ds := range per {
		s += fmt.Sprintf("\n  consumer %d: %d %s", i+1, len(ds), show(payloads(ds)))
	}
	return s
}

// competingN is how many messages G1 shares out among its consumers.
const competingN = 60

// competing is G1's body on client b, sharing n messages among three consumers. G1 opens its
// consumers and sends one at a time; F2 runs it under network latency with at once true: the
// consumers subscribe concurrently (one group rebalance instead of three) and the messages are
// sent concurrently (one at a time each costs a round trip), so it fits F2's time; what it
// asserts is the same. note, when not nil, is appended to its failure messages (F2's fault
// timeline).
func competing(ctx context.Context, b backends.Backend, atOnce bool, n int, note fmt.Stringer) {
	const consumers = 3
	topic := newTopic(backends.ClassFlow, "g1")
	sub := unique("g1")
	cs := make([]backends.Consumer, consumers)
	if atOnce {
		var wg sync.WaitGroup
		for i := range cs {
			wg.Go(func() {
				defer GinkgoRecover()
				cs[i] = subscribe(ctx, b, topic, sub, backends.WithMode(backends.Shared))
			})
		}
		wg.Wait()
		Expect(cs).NotTo(ContainElement(BeNil()), "subscribe %d consumers at once%s", consumers, noted(note))
	} else {
		for i := range cs {
			cs[i] = subscribe(ctx, b, topic, sub, backends.WithMode(backends.Shared))
		}
	}
	sent := batch("g1", n)
	p := produce(ctx, b, topic)
	if atOnce {
		sendConcurrently(ctx, p, sent, n)
	} else {
		sendAll(ctx, p, sent...)
	}
	per, waited := receiveAll(ctx, cs, msgPayloads(sent), arriveWithin*2)
	union := counts(flatten(per))
	Expect(missing(msgPayloads(sent), union)).To(BeEmpty(),
		"expected the group to receive all %d messages within %s; per consumer: %s%s", n, waited, perConsumer(per), noted(note))
	Expect(duplicated(union)).To(BeEmpty(),
		"expected each message to reach exactly one consumer; per consumer: %s%s", perConsumer(per), noted(note))
}
