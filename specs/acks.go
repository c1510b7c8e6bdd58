package specs

import (
	"context"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/pubsub-conformance/harness/backends"
)

func acks(env *Env) {
	Describe("ack and nack", Label("acks"), func() {
		var b backends.Backend
		BeforeEach(func(ctx SpecContext) { b = open(ctx, env) }, NodeTimeout(callWithin))

		BehaviourTable("A1",
			func(ctx SpecContext, cl backends.Class) {
				needForClass(b, cl, backends.CapTransientRedelivery)
				nackRedelivers(ctx, b, cl, nil)
			},
			func(cl backends.Class) string { return fmt.Sprintf("class %s", cl) },
			Entry(nil, backends.ClassFlow, SpecTimeout(specTimeout)),
			Entry(nil, backends.ClassRequest, SpecTimeout(specTimeout)),
		)

		Behaviour("A2", func(ctx SpecContext) { ackOnlyThat(ctx, b, nil) }, SpecTimeout(specTimeout))

		Behaviour("A3", func(ctx SpecContext) {
			topic := newTopic(backends.ClassFlow, "a3")
			sub := unique("a3")
			c := subscribe(ctx, b, topic, sub)
			sendAll(ctx, produce(ctx, b, topic), msg("a3", 0))
			r := receiveN(ctx, c, 1, arriveWithin, keep)
			Expect(r.Got).To(HaveLen(1), "expected the message; %s", r.describe())
			closeNow(ctx, c)
			c2 := subscribe(ctx, b, topic, sub)
			again := receivePayload(ctx, c2, "a3-0", redeliverWithin, ack)
			Expect(payloads(again.Got)).To(ContainElement("a3-0"),
				"received-but-unacked a3-0 must be delivered again after close + reopen; %s", again.describe())
		}, SpecTimeout(specTimeout))

		Behaviour("A4", func(ctx SpecContext) {
			topic := newTopic(backends.ClassFlow, "a4")
			sub := unique("a4")
			c := subscribe(ctx, b, topic, sub)
			p := produce(ctx, b, topic)
			sendAll(ctx, p, batch("a4", 3)...)
			r := receiveN(ctx, c, 3, arriveWithin, ack)
			Expect(r.Got).To(HaveLen(3), "expected 3 messages; %s", r.describe())
			closeNow(ctx, c)
			c2 := subscribe(ctx, b, topic, sub)
			sendAll(ctx, p, msg("a4-marker", 0))
			after := receivePayload(ctx, c2, "a4-marker-0", redeliverWithin, ack)
			Expect(payloads(after.Got)).To(ContainElement("a4-marker-0"), "the marker sent after reopen must arrive; %s", after.describe())
			Expect(payloads(after.Got)).To(Equal([]string{"a4-marker-0"}),
				"acked a4-0..a4-2 must not come again after reopen; %s", after.describe())
		}, SpecTimeout(specTimeout))

		Behaviour("A5", func(ctx SpecContext) {
			topic := newTopic(backends.ClassFlow, "a5")
			c := subscribe(ctx, b, topic, unique("a5"))
			sendAll(ctx, produce(ctx, b, topic), msg("a5", 0))
			r := receiveN(ctx, c, 1, arriveWithin, keep)
			Expect(r.Got).To(HaveLen(1), "expected the message; %s", r.describe())
			Expect(c.Nack(ctx, r.Got[0])).To(Succeed(), "nack")
			again := receivePayload(ctx, c, "a5-0", redeliverWithin, ack) // acks the redelivery
			Expect(payloads(again.Got)).To(ContainElement("a5-0"), "nacked a5-0 must come again; %s", again.describe())
			quiet := receiveFor(ctx, c, quietFor*2, ack)
			Expect(payloads(quiet.Got)).NotTo(ContainElement("a5-0"),
				"a5-0 was acked after its redelivery but came again within %s; %s", quietFor*2, quiet.describe())
		}, SpecTimeout(specTimeout))
	})
}

// nackRedelivers is A1's body for class cl on client b (the caller skips a class b lacks
// CapTransientRedelivery for); F2 runs it under network latency. note, when not nil, is
// appended to its failure messages (F2's fault timeline).
func nackRedelivers(ctx context.Context, b backends.Backend, cl backends.Class, note fmt.Stringer) {
	topic := newTopic(cl, "a1")
	c := subscribe(ctx, b, topic, unique("a1"), backends.WithMode(backends.Shared))
	sent := backends.Message{Payload: []byte("a1-nack-me"), Properties: map[string]string{"p": "ü", "n": "1"}}
	sendAll(ctx, produce(ctx, b, topic), sent)
	r := receiveN(ctx, c, 1, arriveWithin, keep)
	Expect(r.Got).To(HaveLen(1), "expected the message before nacking it; %s%s", r.describe(), noted(note))
	nacked := time.Now()
	nctx, cancel := context.WithTimeout(ctx, callWithin)
	Expect(c.Nack(nctx, r.Got[0])).To(Succeed(), "nack%s", noted(note))
	cancel()
	again := receivePayload(ctx, c, "a1-nack-me", redeliverWithin, ack)
	Expect(payloads(again.Got)).To(ContainElement("a1-nack-me"),
		"%s: nacked message was not delivered again within %s of the nack; %s%s", cl, redeliverWithin, again.describe(), noted(note))
	d := again.Got[len(again.Got)-1]
	Expect(d.Properties).To(equalProps(sent.Properties), "redelivered properties differ (%d sent, %d redelivered, %s after the nack)%s",
		len(sent.Properties), len(d.Properties), since(nacked), noted(note))
}

// ackOnlyThat is A2's body on client b; F2 runs it under network latency. note, when not
// nil, is appended to its failure messages (F2's fault timeline).
func ackOnlyThat(ctx context.Context, b backends.Backend, note fmt.Stringer) {
	topic := newTopic(backends.ClassFlow, "a2")
	sub := unique("a2")
	c := subscribe(ctx, b, topic, sub)
	sendAll(ctx, produce(ctx, b, topic), batch("a2", 2)...)
	r := receiveN(ctx, c, 2, arriveWithin, keep)
	Expect(payloads(r.Got)).To(Equal([]string{"a2-0", "a2-1"}), "expected m1 and m2 in order; %s%s", r.describe(), noted(note))
	Expect(c.Ack(ctx, r.Got[0])).To(Succeed(), "ack m1%s", noted(note))
	closeNow(ctx, c)
	c2 := subscribe(ctx, b, topic, sub)
	again := receivePayload(ctx, c2, "a2-1", redeliverWithin, ack)
	Expect(payloads(again.Got)).To(ContainElement("a2-1"),
		"unacked m2 (a2-1) must come again after reopen (only m1 was acked); %s%s", again.describe(), noted(note))
	Expect(payloads(again.Got)).NotTo(ContainElement("a2-0"),
		"acked m1 (a2-0) came again after reopen; %s%s", again.describe(), noted(note))
}
