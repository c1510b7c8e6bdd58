package specs

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/pubsub-conformance/harness/backends"
)

// f6Cut is how long F6 keeps the network cut: longer than a client session (the Kafka
// backend's group session is 6 s), so the broker gives the member up and the client must
// rejoin after the heal - where an ack that was only in the client's books can be lost.
const f6Cut = 10 * time.Second

// ackDuringCut is F6: a consumer holds two deliveries when the network is cut; it acks the
// first during the cut. If that Ack returned nil, the message must not come again: not to the
// same consumer after the heal, and not after Close and a reopen of the subscription
// (C-ACK-2, C-ACK-5). An Ack that returned an error leaves the message free to come again.
func ackDuringCut(ctx SpecContext, area *faultArea) {
	fb := area.broker()
	tl := newTimeline()
	b := openFaulty(ctx, fb)
	topic := newTopic(backends.ClassFlow, "f6")
	sub := unique("f6")
	c := subscribe(ctx, b, topic, sub, backends.WithPosition(backends.Earliest))
	p := produce(ctx, b, topic)
	sendAll(ctx, p, msg("f6-held", 0), msg("f6-held", 1))
	r := receiveN(ctx, c, 2, arriveWithin, keep)
	Expect(payloads(r.Got)).To(ConsistOf("f6-held-0", "f6-held-1"), "receive before the cut; %s", r.describe())
	tl.add("before: received f6-held-0 and f6-held-1, neither acked")

	heal := cutNetwork(ctx, fb, tl)
	actx, cancel := context.WithTimeout(ctx, faultCallWithin)
	start := time.Now()
	ackErr := c.Ack(actx, r.Got[0])
	cancel()
	tl.add("Ack f6-held-0 during the cut returned after %s: %v", since(start), ackErr)
	select { // the fault's duration, not synchronisation
	case <-time.After(time.Until(start.Add(f6Cut))):
	case <-ctx.Done():
	}
	Expect(heal(ctx)).To(Succeed(), "heal the network;\n%s", tl)
	if ackErr != nil {
		AddReportEntry("F6 ack", "the Ack during the cut returned an error, so f6-held-0 may come again: "+ackErr.Error())
	}

	// After the heal: a marker sent on the producer opened before the cut. The consumer that
	// waited through the cut receives (and acks) until it and a straggle after it.
	sendAll(ctx, p, msg("f6-after", 0))
	fr := newFaultReceiver(c, tl, true, 250*time.Millisecond)
	_ = fr.until(ctx, callWithin+arriveWithin, func() bool { return fr.got["f6-after-0"] > 0 })
	Expect(fr.got).To(HaveKey("f6-after-0"), "the consumer that waited through the cut must receive what was sent after the heal; got %s;\n%s", show(fr.order), tl)
	_ = fr.until(ctx, f3Straggle, nil)
	if ackErr == nil {
		Expect(fr.order).NotTo(ContainElement("f6-held-0"),
			"f6-held-0 was acked during the cut (the Ack returned nil) and came again to the same consumer after the heal;\n%s", tl)
	}

	// Close commits every ack it returned (C-ACK-5); the reopened subscription starts after
	// them, and a last marker shows it is live.
	cctx, cancel := context.WithTimeout(ctx, callWithin)
	Expect(c.Close(cctx)).To(Succeed(), "close the consumer after the heal;\n%s", tl)
	cancel()
	tl.add("consumer closed")
	c2 := subscribe(ctx, b, topic, sub)
	DeferCleanup(func(ctx SpecContext) { _ = c2.Close(ctx) }, NodeTimeout(callWithin))
	sendAll(ctx, p, msg("f6-end", 0))
	again := receivePayload(ctx, c2, "f6-end-0", arriveWithin, ack)
	tl.add("reopened: received %s", show(payloads(again.Got)))
	Expect(payloads(again.Got)).To(ContainElement("f6-end-0"), "the reopened subscription must receive what was sent after it; %s;\n%s", again.describe(), tl)
	if ackErr == nil {
		Expect(payloads(again.Got)).NotTo(ContainElement("f6-held-0"),
			"f6-held-0 was acked during the cut (the Ack returned nil) and the subscription delivered it again after Close and a reopen;\n%s", tl)
	}
	checkHistory(b, true)
}
