package history

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/pubsub-conformance/harness/backends"
)

// builder makes hand-made histories: times are milliseconds from an origin.
type builder struct {
	origin time.Time
	ops    []Op
	subs   map[string]Op // consumer handle -> its NewConsumer
}

func newBuilder() *builder {
	return &builder{origin: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), subs: map[string]Op{}}
}

func (b *builder) ms(n int) time.Time { return b.origin.Add(time.Duration(n) * time.Millisecond) }

func (b *builder) add(op Op, start, end int) *builder {
	op.Seq = len(b.ops) + 1
	op.Client = "x#1"
	op.Start, op.End = b.ms(start), b.ms(end)
	b.ops = append(b.ops, op)
	return b
}

const flow = "flow:tg:t"

func (b *builder) consumer(h, topic, sub string, pos backends.Position, mode backends.Mode, start, end int) *builder {
	op := Op{Kind: NewConsumer, Handle: h, Topic: topic, Subscription: sub, Position: pos, Mode: mode}
	b.subs[h] = op
	return b.add(op, start, end)
}

func (b *builder) send(p, topic, key string, start, end int, err error) *builder {
	return b.add(Op{Kind: Send, Handle: p, Topic: topic, Key: key, Err: err}, start, end)
}

func (b *builder) recv(c, key, id string, start, end int) *builder {
	s := b.subs[c]
	return b.add(Op{Kind: Receive, Handle: c, Topic: s.Topic, Subscription: s.Subscription, Key: key, Delivery: id}, start, end)
}

func (b *builder) recvTimeout(c string, start, end, deadline int) *builder {
	s := b.subs[c]
	b.add(Op{Kind: Receive, Handle: c, Topic: s.Topic, Subscription: s.Subscription, Err: backends.ErrTimeout}, start, end)
	b.ops[len(b.ops)-1].Deadline = b.ms(deadline)
	return b
}

func (b *builder) settle(kind Kind, c, key, id string, start, end int) *builder {
	s := b.subs[c]
	return b.add(Op{Kind: kind, Handle: c, Topic: s.Topic, Subscription: s.Subscription, Key: key, Delivery: id}, start, end)
}

func (b *builder) close(c string, start, end int) *builder {
	s := b.subs[c]
	return b.add(Op{Kind: CloseConsumer, Handle: c, Topic: s.Topic, Subscription: s.Subscription}, start, end)
}

// elsewhere adds a consumer c of flow's subscription s on another client, "y#1" (the one a
// crash or a client's Close left the subscription to).
func (b *builder) elsewhere(c string, start, end int) *builder {
	b.consumer(c, flow, "s", 0, backends.Shared, start, end)
	b.ops[len(b.ops)-1].Client = "y#1"
	return b
}

func (b *builder) check(p Policy) []Finding { return Check(b.ops, p) }

func only(t *testing.T, fs []Finding, want Anomaly, n int) {
	t.Helper()
	got := 0
	for _, f := range fs {
		if f.Anomaly == want {
			got++
		} else {
			t.Errorf("unexpected finding: %s", f)
		}
	}
	if got != n {
		t.Errorf("%d findings of %q, want %d:\n%s", got, want, n, Report(time.Time{}, fs, 10))
	}
}

func none(t *testing.T, fs []Finding) {
	t.Helper()
	if len(fs) > 0 {
		t.Errorf("want no findings:\n%s", Report(time.Time{}, fs, 10))
	}
}

// A subscription live before two sends, which receives only the second.
func lostHistory() *builder {
	return newBuilder().
		consumer("c1", flow, "s", backends.Latest, backends.Shared, 0, 10).
		send("p1", flow, "m1", 20, 30, nil).
		send("p2", flow, "m2", 40, 50, nil).
		recv("c1", "m2", "d2", 60, 70)
}

func TestLost(t *testing.T) {
	only(t, lostHistory().check(DefaultPolicy()), Lost, 1)
}

func TestLostNotWhenReceivedOrUnseenOrUnobliged(t *testing.T) {
	// Received, in any order.
	none(t, lostHistory().recv("c1", "m1", "d1", 80, 90).check(DefaultPolicy()))
	// Unseen only: nothing sent after m1 was read, so the history may just have stopped early.
	none(t, newBuilder().
		consumer("c1", flow, "s", backends.Latest, backends.Shared, 0, 10).
		send("p1", flow, "m0", 15, 18, nil).
		send("p1", flow, "m1", 20, 30, nil).
		recv("c1", "m0", "d0", 60, 70).check(DefaultPolicy()))
	// A Send that failed obliges nobody (C-SEND-3 lets it arrive or not).
	none(t, newBuilder().
		consumer("c1", flow, "s", backends.Latest, backends.Shared, 0, 10).
		send("p1", flow, "m1", 20, 30, backends.ErrTimeout).
		send("p1", flow, "m2", 40, 50, nil).
		recv("c1", "m2", "d2", 60, 70).check(DefaultPolicy()))
	// Sent while the latest subscription's Consumer call was still running: not obliged.
	none(t, newBuilder().
		consumer("c1", flow, "s", backends.Latest, backends.Shared, 0, 25).
		send("p1", flow, "m1", 20, 30, nil).
		send("p1", flow, "m2", 40, 50, nil).
		recv("c1", "m2", "d2", 60, 70).check(DefaultPolicy()))
}

func TestLostOnEarliestSubscriptionCreatedLater(t *testing.T) {
	fs := newBuilder().
		send("p1", flow, "m1", 0, 10, nil).
		send("p1", flow, "m2", 20, 30, nil).
		consumer("c1", flow, "s", backends.Earliest, backends.Shared, 40, 50).
		recv("c1", "m2", "d2", 60, 70).check(DefaultPolicy())
	only(t, fs, Lost, 1)
	// A latest subscription opened after both sends is obliged to neither.
	none(t, newBuilder().
		send("p1", flow, "m1", 0, 10, nil).
		consumer("c1", flow, "s", backends.Latest, backends.Shared, 40, 50).
		send("p1", flow, "m2", 60, 70, nil).
		recv("c1", "m2", "d2", 80, 90).check(DefaultPolicy()))
}

func TestLostTransientWithoutReplay(t *testing.T) {
	const notify = "notify:tg:n"
	b := newBuilder().
		consumer("c1", notify, "s", backends.Latest, backends.Unique, 0, 10).
		close("c1", 12, 14).
		send("p1", notify, "m1", 20, 30, nil).
		consumer("c2", notify, "s", backends.Latest, backends.Shared, 32, 34)
	b.subs["c2"] = Op{Kind: NewConsumer, Handle: "c2", Topic: notify, Subscription: "s"}
	b.send("p1", notify, "m2", 40, 50, nil).recv("c2", "m2", "d2", 60, 70)
	p := DefaultPolicy()
	p.TransientReplay = false
	none(t, b.check(p)) // c1 was gone when m1 was sent: nothing kept for it (C-CAP-2)
}

func dupHistory() *builder {
	return newBuilder().
		consumer("c1", flow, "s", backends.Latest, backends.Shared, 0, 10).
		send("p1", flow, "m1", 20, 30, nil).
		recv("c1", "m1", "d1", 40, 50).
		recv("c1", "m1", "d1b", 60, 70)
}

func TestDuplicate(t *testing.T) {
	only(t, dupHistory().check(DefaultPolicy()), Duplicate, 1)
}

func TestDuplicateAllowances(t *testing.T) {
	nack := newBuilder().
		consumer("c1", flow, "s", backends.Latest, backends.Shared, 0, 10).
		send("p1", flow, "m1", 20, 30, nil).
		recv("c1", "m1", "d1", 40, 50).
		settle(Nack, "c1", "m1", "d1", 52, 54).
		recv("c1", "m1", "d1b", 60, 70)
	none(t, nack.check(DefaultPolicy()))

	reopen := newBuilder().
		consumer("c1", flow, "s", backends.Latest, backends.Shared, 0, 10).
		send("p1", flow, "m1", 20, 30, nil).
		recv("c1", "m1", "d1", 40, 50).
		close("c1", 52, 54).
		consumer("c2", flow, "s", backends.Latest, backends.Shared, 55, 58).
		recv("c2", "m1", "d1b", 60, 70)
	none(t, reopen.check(DefaultPolicy()))

	rebalance := newBuilder().
		consumer("c1", flow, "s", backends.Latest, backends.Shared, 0, 10).
		send("p1", flow, "m1", 20, 30, nil).
		recv("c1", "m1", "d1", 40, 50).
		consumer("c2", flow, "s", backends.Latest, backends.Shared, 52, 58).
		recv("c1", "m1", "d1b", 60, 70)
	none(t, rebalance.check(DefaultPolicy()))

	sentTwice := newBuilder().
		consumer("c1", flow, "s", backends.Latest, backends.Shared, 0, 10).
		send("p1", flow, "m1", 20, 30, backends.ErrTimeout).
		send("p1", flow, "m1", 32, 38, nil).
		recv("c1", "m1", "d1", 40, 50).
		settle(Ack, "c1", "m1", "d1", 51, 52).
		recv("c1", "m1", "d1b", 60, 70)
	none(t, sentTwice.check(DefaultPolicy()))

	// One Send that timed out: the client may have written it twice while retrying.
	failedSend := newBuilder().
		consumer("c1", flow, "s", backends.Latest, backends.Shared, 0, 10).
		send("p1", flow, "m1", 20, 30, backends.ErrTimeout).
		recv("c1", "m1", "d1", 40, 50).
		settle(Ack, "c1", "m1", "d1", 51, 52).
		recv("c1", "m1", "d1b", 60, 70)
	none(t, failedSend.check(DefaultPolicy()))

	p := DefaultPolicy()
	p.Faults = true
	none(t, dupHistory().check(p))

	// Two unique subscriptions each get it once: fan-out, not a duplicate.
	none(t, newBuilder().
		consumer("c1", flow, "s", backends.Latest, backends.Unique, 0, 10).
		consumer("c2", flow, "s", backends.Latest, backends.Unique, 0, 10).
		send("p1", flow, "m1", 20, 30, nil).
		recv("c1", "m1", "d1", 40, 50).
		recv("c2", "m1", "d1", 40, 50).check(DefaultPolicy()))
}

func TestAckedRedelivered(t *testing.T) {
	b := newBuilder().
		consumer("c1", flow, "s", backends.Latest, backends.Shared, 0, 10).
		send("p1", flow, "m1", 20, 30, nil).
		recv("c1", "m1", "d1", 40, 50).
		settle(Ack, "c1", "m1", "d1", 51, 52).
		close("c1", 53, 54).
		consumer("c2", flow, "s", backends.Latest, backends.Shared, 55, 58).
		recv("c2", "m1", "d1b", 60, 70)
	only(t, b.check(DefaultPolicy()), AckedRedelivered, 1)
	// Even under faults: an acknowledged message stays acknowledged (F1 asserts it too).
	p := DefaultPolicy()
	p.Faults = true
	only(t, b.check(p), AckedRedelivered, 1)
}

func TestAckedRedeliveredAfterACrash(t *testing.T) {
	crash := func(ackToKill int) *builder {
		b := newBuilder().
			consumer("c1", flow, "s", backends.Latest, backends.Shared, 0, 10).
			send("p1", flow, "m1", 20, 30, nil).
			recv("c1", "m1", "d1", 40, 50).
			settle(Ack, "c1", "m1", "d1", 51, 52)
		b.add(Op{Kind: Kill}, 52+ackToKill, 52+ackToKill)
		b.ops[len(b.ops)-1].Client = "x#1" // the consumer's client dies
		b.add(Op{Kind: NewConsumer, Handle: "c2", Topic: flow, Subscription: "s", Mode: backends.Shared}, 52+ackToKill+1, 52+ackToKill+2)
		b.ops[len(b.ops)-1].Client = "y#1"
		b.subs["c2"] = b.ops[len(b.ops)-1]
		b.recv("c2", "m1", "d1b", 52+ackToKill+3, 52+ackToKill+4)
		b.ops[len(b.ops)-1].Client = "y#1"
		return b
	}
	none(t, crash(500).check(DefaultPolicy()))                       // acked 0.5 s before the crash: may come again
	only(t, crash(5000).check(DefaultPolicy()), AckedRedelivered, 1) // acked 5 s before: in force
}

func TestAckedRedeliveredNotWhileAckInFlight(t *testing.T) {
	// The Ack had not returned when the second Receive started; the close explains it.
	none(t, newBuilder().
		consumer("c1", flow, "s", backends.Latest, backends.Shared, 0, 10).
		send("p1", flow, "m1", 20, 30, nil).
		recv("c1", "m1", "d1", 40, 50).
		close("c1", 51, 53).
		settle(Ack, "c1", "m1", "d1", 51, 80).
		consumer("c2", flow, "s", backends.Latest, backends.Shared, 55, 58).
		recv("c2", "m1", "d1b", 60, 70).check(DefaultPolicy()))
	// A failed Ack leaves it unacknowledged.
	b := newBuilder().
		consumer("c1", flow, "s", backends.Latest, backends.Shared, 0, 10).
		send("p1", flow, "m1", 20, 30, nil).
		recv("c1", "m1", "d1", 40, 50).
		settle(Ack, "c1", "m1", "d1", 51, 52)
	b.ops[len(b.ops)-1].Err = backends.ErrUnavailable
	b.close("c1", 53, 54).
		consumer("c2", flow, "s", backends.Latest, backends.Shared, 55, 58).
		recv("c2", "m1", "d1b", 60, 70)
	none(t, b.check(DefaultPolicy()))
}

func nackHistory(readUntil int) *builder {
	return newBuilder().
		consumer("c1", flow, "s", backends.Latest, backends.Shared, 0, 10).
		send("p1", flow, "m1", 20, 30, nil).
		recv("c1", "m1", "d1", 40, 50).
		settle(Nack, "c1", "m1", "d1", 52, 54).
		recvTimeout("c1", 60, readUntil, readUntil)
}

func TestNackNotRedelivered(t *testing.T) {
	only(t, nackHistory(40_000).check(DefaultPolicy()), NackNotRedelivered, 1)
}

func TestNackNotRedeliveredNotWithinBoundOrRedelivered(t *testing.T) {
	none(t, nackHistory(5_000).check(DefaultPolicy())) // not read long enough to tell
	none(t, nackHistory(40_000).recv("c1", "m1", "d1b", 40_010, 40_020).check(DefaultPolicy()))
	p := DefaultPolicy()
	p.TransientRedelivery = false
	b := newBuilder().
		consumer("c1", "request:tg:r", "s", backends.Latest, backends.Shared, 0, 10).
		send("p1", "request:tg:r", "m1", 20, 30, nil).
		recv("c1", "m1", "d1", 40, 50).
		settle(Nack, "c1", "m1", "d1", 52, 54).
		recvTimeout("c1", 60, 40_000, 40_000)
	none(t, b.check(p)) // C-CAP-1
}

// A message delivered twice (a member joined in between), nacked through one delivery and
// acked through the other, owes no redelivery: it is done.
func TestNackOfAMessageAckedThroughAnotherDelivery(t *testing.T) {
	twice := func() *builder {
		return newBuilder().
			consumer("c1", flow, "s", backends.Latest, backends.Shared, 0, 10).
			send("p1", flow, "m1", 20, 30, nil).
			recv("c1", "m1", "d1", 40, 50).
			consumer("c2", flow, "s", backends.Latest, backends.Shared, 52, 55).
			recv("c1", "m1", "d1", 60, 70).
			settle(Nack, "c1", "m1", "d1", 72, 74)
	}
	none(t, twice().settle(Ack, "c1", "m1", "d1", 76, 78).recvTimeout("c1", 80, 40_000, 40_000).check(DefaultPolicy()))
	only(t, twice().recvTimeout("c1", 80, 40_000, 40_000).check(DefaultPolicy()), NackNotRedelivered, 1)
	// Acked through the first delivery before the second was nacked: a Nack that returned nil
	// then owes the message again (C-ACK-9 lets the backend refuse it instead; W1 seed
	// 1796307262 on kafka).
	ackedBefore := newBuilder().
		consumer("c1", flow, "s", backends.Latest, backends.Shared, 0, 10).
		send("p1", flow, "m1", 20, 30, nil).
		recv("c1", "m1", "d1", 40, 50).
		consumer("c2", flow, "s", backends.Latest, backends.Shared, 52, 55).
		recv("c1", "m1", "d2", 60, 70).
		settle(Ack, "c1", "m1", "d1", 72, 74).
		settle(Nack, "c1", "m1", "d2", 76, 78).
		recvTimeout("c1", 80, 40_000, 40_000)
	only(t, ackedBefore.check(DefaultPolicy()), NackNotRedelivered, 1)
}

func TestWrongSubscriptionLatest(t *testing.T) {
	fs := newBuilder().
		send("p1", flow, "m1", 0, 10, nil).
		consumer("c1", flow, "s", backends.Latest, backends.Shared, 20, 30).
		recv("c1", "m1", "d1", 40, 50).check(DefaultPolicy())
	only(t, fs, WrongSubscription, 1)
	// Earliest may, and a Send still running when Consumer was called may go either way.
	none(t, newBuilder().
		send("p1", flow, "m1", 0, 10, nil).
		consumer("c1", flow, "s", backends.Earliest, backends.Shared, 20, 30).
		recv("c1", "m1", "d1", 40, 50).check(DefaultPolicy()))
	none(t, newBuilder().
		send("p1", flow, "m1", 0, 25, nil).
		consumer("c1", flow, "s", backends.Latest, backends.Shared, 20, 30).
		recv("c1", "m1", "d1", 40, 50).check(DefaultPolicy()))
}

func TestWrongSubscriptionAfterAnUncertainSubscribe(t *testing.T) {
	// A Consumer call that failed may have made the subscription on the broker all the same
	// (C-SUB-7; W2 corpus entry w2-1796190012 on pulsar: the answer to the subscribe was what
	// a fault cut), so a later Consumer of that name may resume from where the failed call
	// made it and receive what was sent in between.
	failed := func(b *builder, pos backends.Position, start, end int) *builder {
		b.consumer("c0", flow, "s", pos, backends.Shared, start, end)
		b.ops[len(b.ops)-1].Err = backends.ErrUnavailable
		return b
	}
	none(t, failed(newBuilder(), backends.Latest, 0, 10).
		send("p1", flow, "m1", 20, 30, nil).
		consumer("c1", flow, "s", backends.Latest, backends.Shared, 40, 50).
		recv("c1", "m1", "d1", 60, 70).check(DefaultPolicy()))
	// A message whose Send returned before the failed call started is still one the
	// subscription must not see, however it was made.
	only(t, failed(newBuilder().send("p1", flow, "m1", 0, 10, nil), backends.Latest, 20, 30).
		consumer("c1", flow, "s", backends.Latest, backends.Shared, 40, 50).
		recv("c1", "m1", "d1", 60, 70).check(DefaultPolicy()), WrongSubscription, 1)
	// ... unless the failed call asked for the earliest position: the subscription it may
	// have made starts there, and the later call resumes from it (C-POS-1).
	none(t, failed(newBuilder().send("p1", flow, "m1", 0, 10, nil), backends.Earliest, 20, 30).
		consumer("c1", flow, "s", backends.Latest, backends.Shared, 40, 50).
		recv("c1", "m1", "d1", 60, 70).check(DefaultPolicy()))
	// A failed call before a delete of the topic made nothing that outlived it (C-TOP-3).
	only(t, failed(newBuilder(), backends.Latest, 0, 10).
		add(Op{Kind: DeleteTopic, Topic: flow}, 12, 14).
		send("p1", flow, "m1", 20, 30, nil).
		consumer("c1", flow, "s", backends.Latest, backends.Shared, 40, 50).
		recv("c1", "m1", "d1", 60, 70).check(DefaultPolicy()), WrongSubscription, 1)
	// A failed call on another subscription name explains nothing.
	b := failed(newBuilder(), backends.Latest, 0, 10)
	b.ops[0].Subscription = "other"
	only(t, b.send("p1", flow, "m1", 20, 30, nil).
		consumer("c1", flow, "s", backends.Latest, backends.Shared, 40, 50).
		recv("c1", "m1", "d1", 60, 70).check(DefaultPolicy()), WrongSubscription, 1)
}
func TestWrongSubscriptionOtherTopic(t *testing.T) {
	fs := newBuilder().
		consumer("c1", flow, "s", backends.Earliest, backends.Shared, 0, 10).
		send("p1", "flow:tg:other", "m1", 20, 30, nil).
		recv("c1", "m1", "d1", 40, 50).check(DefaultPolicy())
	only(t, fs, WrongSubscription, 1)
}

func orderHistory(first, second string) *builder {
	return newBuilder().
		consumer("c1", flow, "s", backends.Latest, backends.Shared, 0, 10).
		send("p1", flow, "m1", 20, 30, nil).
		send("p1", flow, "m2", 31, 40, nil).
		recv("c1", first, "d1", 50, 60).
		recv("c1", second, "d2", 61, 70)
}

func TestReordered(t *testing.T) {
	only(t, orderHistory("m2", "m1").check(DefaultPolicy()), Reordered, 1)
}

func TestReorderedNotInOrderOrConcurrentOrFaulty(t *testing.T) {
	none(t, orderHistory("m1", "m2").check(DefaultPolicy()))
	// Concurrent sends (the second started before the first returned) have no order.
	none(t, newBuilder().
		consumer("c1", flow, "s", backends.Latest, backends.Shared, 0, 10).
		send("p1", flow, "m1", 20, 30, nil).
		send("p1", flow, "m2", 25, 40, nil).
		recv("c1", "m2", "d1", 50, 60).
		recv("c1", "m1", "d2", 61, 70).check(DefaultPolicy()))
	p := DefaultPolicy()
	p.Faults = true
	none(t, orderHistory("m2", "m1").check(p))
	p = DefaultPolicy()
	p.Order = false
	none(t, orderHistory("m2", "m1").check(p))
	// Two producers: no order between them.
	none(t, newBuilder().
		consumer("c1", flow, "s", backends.Latest, backends.Shared, 0, 10).
		send("p1", flow, "m1", 20, 30, nil).
		send("p2", flow, "m2", 31, 40, nil).
		recv("c1", "m2", "d1", 50, 60).
		recv("c1", "m1", "d2", 61, 70).check(DefaultPolicy()))
}

func TestLateReturn(t *testing.T) {
	b := newBuilder().
		consumer("c1", flow, "s", backends.Latest, backends.Shared, 0, 10).
		recvTimeout("c1", 20, 10_000, 2_000)
	only(t, b.check(DefaultPolicy()), LateReturn, 1)
	none(t, newBuilder().
		consumer("c1", flow, "s", backends.Latest, backends.Shared, 0, 10).
		recvTimeout("c1", 20, 2_500, 2_000).check(DefaultPolicy()))
}

func TestDeleteStartsAfresh(t *testing.T) {
	// After DeleteTopic the old subscription name is a new subscription (C-TOP-3): a latest
	// subscription of the same name opened after the delete must not get what was sent before.
	b := newBuilder().
		consumer("c1", flow, "s", backends.Latest, backends.Shared, 0, 10).
		send("p1", flow, "m1", 20, 30, nil).
		close("c1", 31, 32).
		add(Op{Kind: DeleteTopic, Topic: flow}, 33, 34).
		consumer("c2", flow, "s", backends.Latest, backends.Shared, 40, 50).
		recv("c2", "m1", "d1", 60, 70)
	only(t, b.check(DefaultPolicy()), WrongSubscription, 1)
}

func TestReportNamesAnomalyAndMessages(t *testing.T) {
	fs := lostHistory().check(DefaultPolicy())
	r := Report(time.Time{}, fs, 5)
	for _, want := range []string{"1 lost", `"m1"`, "Send"} {
		if !strings.Contains(r, want) {
			t.Errorf("report lacks %q:\n%s", want, r)
		}
	}
	if Report(time.Time{}, nil, 5) != "no anomalies" {
		t.Error("empty report")
	}
}

func TestPolicyFor(t *testing.T) {
	p := PolicyFor(fakeBackend{u: map[backends.Capability]string{backends.CapTransientReplay: "keeps nothing"}})
	if p.TransientReplay || !p.TransientRedelivery {
		t.Errorf("PolicyFor: %+v", p)
	}
}

var errBoom = errors.New("boom")

// A finding names its subscription when it has one, and only then.
func TestFindingString(t *testing.T) {
	fs := dupHistory().check(DefaultPolicy())
	if len(fs) != 1 || !strings.Contains(fs[0].String(), `message "m1" on flow:tg:t/s: `) {
		t.Errorf("duplicate finding: %v", fs)
	}
	f := Finding{Anomaly: Lost, Contract: "C-SEND-1", Key: "m1", Detail: "gone"}
	if got, want := f.String(), `lost [C-SEND-1]: message "m1": gone`; got != want {
		t.Errorf("finding without a subscription: %q, want %q", got, want)
	}
}

// A subscription's name in a finding says which incarnation of the topic it belongs to: the
// one after a delete is another subscription (C-TOP-3), the one before it is the plain name.
func TestSubscriptionNamesTheDeleteEpoch(t *testing.T) {
	fs := newBuilder().
		consumer("c1", flow, "s", backends.Latest, backends.Shared, 0, 10).
		send("p1", flow, "m0", 11, 12, nil).
		recv("c1", "m0", "d0", 13, 14).
		recv("c1", "m0", "d0b", 15, 16).
		close("c1", 31, 32).
		add(Op{Kind: DeleteTopic, Topic: flow}, 33, 34).
		send("p1", flow, "m1", 35, 36, nil).
		consumer("c2", flow, "s", backends.Earliest, backends.Shared, 40, 50).
		recv("c2", "m1", "d1", 60, 70).
		recv("c2", "m1", "d1b", 71, 72).check(DefaultPolicy())
	var subs []string
	for _, f := range fs {
		subs = append(subs, f.Subscription)
	}
	if want := []string{"flow:tg:t/s", "flow:tg:t/s (after delete 1)"}; strings.Join(subs, "|") != strings.Join(want, "|") {
		t.Errorf("duplicates on %q, want %q", subs, want)
	}
}

// transientClosedHistory: a notify (non-durable) subscription whose only consumer went away
// (how: close) before m1 was sent, then a new consumer of it that receives m2, sent later.
func transientClosedHistory(close func(b *builder) *builder) *builder {
	const notify = "notify:tg:n"
	b := newBuilder().consumer("c1", notify, "s", backends.Latest, backends.Shared, 0, 10)
	b = close(b)
	return b.send("p1", notify, "m1", 20, 30, nil).
		consumer("c2", notify, "s", backends.Latest, backends.Shared, 32, 34).
		send("p1", notify, "m2", 40, 50, nil).
		recv("c2", "m2", "d2", 60, 70)
}

// Without transient replay a non-durable subscription is owed only what is sent while a
// consumer of it is connected (C-CAP-2): not while its consumer was closed, by a Close of the
// consumer or of its client. With transient replay it is owed m1 all the same.
func TestLostTransientOwesNothingWhileNoConsumer(t *testing.T) {
	noReplay := DefaultPolicy()
	noReplay.TransientReplay = false
	closeConsumer := func(b *builder) *builder { return b.close("c1", 12, 14) }
	closeClient := func(b *builder) *builder {
		return b.add(Op{Kind: CloseBackend}, 12, 14)
	}
	none(t, transientClosedHistory(closeConsumer).check(noReplay))
	b := transientClosedHistory(closeClient)
	for i := range b.ops {
		if b.ops[i].Handle == "c2" || b.ops[i].Kind == Send {
			b.ops[i].Client = "y#1" // the new consumer and the sends are on another client
		}
	}
	none(t, b.check(noReplay))
	only(t, transientClosedHistory(closeConsumer).check(DefaultPolicy()), Lost, 1)
}

// A message sent to one topic is owed to no subscription of another.
func TestLostNotOwedByAnotherTopic(t *testing.T) {
	none(t, newBuilder().
		consumer("c1", "flow:tg:other", "s", backends.Latest, backends.Shared, 0, 10).
		send("p1", flow, "m1", 20, 30, nil).
		send("p1", "flow:tg:other", "m2", 40, 50, nil).
		recv("c1", "m2", "d2", 60, 70).check(DefaultPolicy()))
}

// A message the history has no Send of (sent before it began) is no evidence of reading past.
func TestLostNotShownByAMessageSentOutsideTheHistory(t *testing.T) {
	none(t, newBuilder().
		consumer("c1", flow, "s", backends.Latest, backends.Shared, 0, 10).
		send("p1", flow, "m1", 20, 30, nil).
		recv("c1", "old", "d0", 60, 70).check(DefaultPolicy()))
}

// A graceful Close of the client is no crash: what it acked before stays acked (C-ACK-6's
// allowance is for a process that died).
func TestAckedRedeliveredAfterAClientClose(t *testing.T) {
	b := newBuilder().
		consumer("c1", flow, "s", backends.Latest, backends.Shared, 0, 10).
		send("p1", flow, "m1", 20, 30, nil).
		recv("c1", "m1", "d1", 40, 50).
		settle(Ack, "c1", "m1", "d1", 51, 52).
		add(Op{Kind: CloseBackend}, 100, 110)
	b.elsewhere("c2", 120, 130).recv("c2", "m1", "d1b", 140, 150)
	b.ops[len(b.ops)-1].Client = "y#1"
	only(t, b.check(DefaultPolicy()), AckedRedelivered, 1)
}

// The crash allowance is "acked less than AckCrashBound before the crash": at exactly the
// bound the Ack is in force.
func TestAckCrashBoundIsExclusive(t *testing.T) {
	b := newBuilder().
		consumer("c1", flow, "s", backends.Latest, backends.Shared, 0, 10).
		send("p1", flow, "m1", 20, 30, nil).
		recv("c1", "m1", "d1", 40, 50).
		settle(Ack, "c1", "m1", "d1", 51, 52).
		add(Op{Kind: Kill}, 1052, 1052)
	b.elsewhere("c2", 1053, 1054).recv("c2", "m1", "d1b", 1055, 1056)
	b.ops[len(b.ops)-1].Client = "y#1"
	only(t, b.check(DefaultPolicy()), AckedRedelivered, 1)
}

// A Nack explains the redelivery of what it nacked, not of another message of the same
// consumer: m2's Nack does not let m1 come twice.
func TestDuplicateNotExplainedByTheNackOfAnotherMessage(t *testing.T) {
	fs := newBuilder().
		consumer("c1", flow, "s", backends.Latest, backends.Shared, 0, 10).
		send("p1", flow, "m1", 20, 30, nil).
		send("p1", flow, "m2", 31, 32, nil).
		recv("c1", "m1", "d1", 40, 50).
		recv("c1", "m2", "d2", 51, 52).
		settle(Nack, "c1", "m2", "d2", 53, 54).
		recv("c1", "m1", "d1b", 60, 70).
		recv("c1", "m2", "d2b", 71, 72).check(DefaultPolicy())
	only(t, fs, Duplicate, 1)
	if len(fs) == 1 && fs[0].Key != "m1" {
		t.Errorf("the duplicate is %q, want m1", fs[0].Key)
	}
}

// A consumer that was closing when its Receive returned a message (the Close began first)
// left the subscription: the message may come again to another member.
func TestDuplicateExplainedByACloseUnderWay(t *testing.T) {
	none(t, newBuilder().
		consumer("c1", flow, "s", backends.Latest, backends.Shared, 0, 10).
		consumer("c2", flow, "s", backends.Latest, backends.Shared, 0, 10).
		send("p1", flow, "m1", 20, 30, nil).
		close("c1", 35, 60).
		recv("c1", "m1", "d1", 40, 50).
		recv("c2", "m1", "d1b", 70, 80).check(DefaultPolicy()))
}

// A second Close of a consumer does not move the time it left: the first Close did.
func TestDuplicateExplainedByTheFirstClose(t *testing.T) {
	b := newBuilder().
		consumer("c1", flow, "s", backends.Latest, backends.Shared, 0, 10).
		consumer("c2", flow, "s", backends.Latest, backends.Shared, 0, 10).
		send("p1", flow, "m1", 20, 30, nil).
		recv("c1", "m1", "d1", 40, 50).
		close("c1", 52, 54).
		recv("c2", "m1", "d1b", 60, 70).
		close("c1", 100, 101)
	b.ops[len(b.ops)-1].Err = backends.ErrClosed
	none(t, b.check(DefaultPolicy()))
}

// A member that left before the first delivery explains its redelivery only while the
// rebalance its leaving started may still reach the others (Policy.MoveWithin): seen on kafka
// (corpus w1-1796183137, 4 Dec), a close whose rebalance revoked the partition from c6 after c6
// had received m3, and gave it straight back, so m3 came again. Longer before, or with no
// window, it explains nothing.
func TestDuplicateExplainedByAMemberThatLeftJustBefore(t *testing.T) {
	leftAt := func(ms int) *builder {
		return newBuilder().
			consumer("c1", flow, "s", backends.Latest, backends.Shared, 0, 10).
			consumer("c3", flow, "s", backends.Latest, backends.Shared, 0, 10).
			close("c3", ms, ms+1).
			send("p1", flow, "m1", 60_000, 60_010, nil).
			recv("c1", "m1", "d1", 60_020, 60_030).
			recv("c1", "m1", "d1b", 60_040, 60_050)
	}
	p := DefaultPolicy()
	none(t, leftAt(59_000).check(p))
	only(t, leftAt(15).check(p), Duplicate, 1) // a minute before: its rebalance is over
	p.MoveWithin = 0
	only(t, leftAt(59_000).check(p), Duplicate, 1)
}

// A lone member's join moves nothing: it explains no redelivery after it, however soon.
func TestDuplicateNotExplainedByALoneFirstJoin(t *testing.T) {
	only(t, newBuilder().
		consumer("c1", flow, "s", backends.Latest, backends.Shared, 0, 10).
		send("p1", flow, "m1", 20, 30, nil).
		recv("c1", "m1", "d1", 40, 50).
		recv("c1", "m1", "d1b", 60, 70).check(DefaultPolicy()), Duplicate, 1)
}

// A join just before the first delivery, beside an open member, may still move it.
func TestDuplicateExplainedByAJoinJustBefore(t *testing.T) {
	none(t, newBuilder().
		consumer("c1", flow, "s", backends.Latest, backends.Shared, 0, 10).
		send("p1", flow, "m1", 20, 30, nil).
		consumer("c2", flow, "s", backends.Latest, backends.Shared, 32, 35).
		recv("c1", "m1", "d1", 40, 50).
		recv("c1", "m1", "d1b", 60, 70).check(DefaultPolicy()))
}

// An Ack on another subscription (fan-out: each subscription gets its own copy) does not
// settle the copy this subscription nacked.
func TestNackNotDischargedByAnAckOnAnotherSubscription(t *testing.T) {
	only(t, newBuilder().
		consumer("c1", flow, "s", backends.Latest, backends.Shared, 0, 10).
		consumer("c2", flow, "u", backends.Latest, backends.Shared, 0, 10).
		send("p1", flow, "m1", 20, 30, nil).
		recv("c1", "m1", "d1", 40, 50).
		recv("c2", "m1", "e1", 40, 50).
		settle(Nack, "c1", "m1", "d1", 52, 54).
		settle(Ack, "c2", "m1", "e1", 56, 58).
		recvTimeout("c1", 60, 40_000, 40_000).check(DefaultPolicy()), NackNotRedelivered, 1)
}

// Without transient redelivery only non-durable subscriptions are excused a nack's
// redelivery (C-CAP-1); a durable one owes it, and with the capability a non-durable one does.
func TestNackTransientRedeliveryExcusesOnlyNonDurable(t *testing.T) {
	p := DefaultPolicy()
	p.TransientRedelivery = false
	only(t, nackHistory(40_000).check(p), NackNotRedelivered, 1)
	b := newBuilder().
		consumer("c1", "request:tg:r", "s", backends.Latest, backends.Shared, 0, 10).
		send("p1", "request:tg:r", "m1", 20, 30, nil).
		recv("c1", "m1", "d1", 40, 50).
		settle(Nack, "c1", "m1", "d1", 52, 54).
		recvTimeout("c1", 60, 40_000, 40_000)
	only(t, b.check(DefaultPolicy()), NackNotRedelivered, 1)
}

// "Read for longer than NackWithin": a subscription read for exactly the bound after the Nack
// may still get the message at that instant, so only reading past it judges.
func TestNackWithinIsExclusive(t *testing.T) {
	none(t, nackHistory(54+30_000).check(DefaultPolicy()))
	only(t, nackHistory(54+30_001).check(DefaultPolicy()), NackNotRedelivered, 1)
}

// A nack on a subscription makes its order unjudged: the redelivery reorders by design.
func TestReorderedNotAfterANack(t *testing.T) {
	fs := newBuilder().
		consumer("c1", flow, "s", backends.Latest, backends.Shared, 0, 10).
		send("p1", flow, "m0", 11, 12, nil).
		send("p1", flow, "m1", 20, 30, nil).
		send("p1", flow, "m2", 31, 40, nil).
		recv("c1", "m0", "d0", 41, 42).
		settle(Nack, "c1", "m0", "d0", 43, 44).
		recv("c1", "m2", "d2", 50, 60).
		recv("c1", "m1", "d1", 61, 70).
		recv("c1", "m0", "d0b", 71, 72).check(DefaultPolicy())
	none(t, fs)
}

// Two consumers of one subscription share its messages: no order between what each gets.
func TestReorderedNotAcrossTwoMembers(t *testing.T) {
	none(t, newBuilder().
		consumer("c1", flow, "s", backends.Latest, backends.Shared, 0, 10).
		consumer("c2", flow, "s", backends.Latest, backends.Shared, 0, 10).
		send("p1", flow, "m1", 20, 30, nil).
		send("p1", flow, "m2", 31, 40, nil).
		recv("c1", "m2", "d1", 50, 60).
		recv("c2", "m1", "d2", 61, 70).check(DefaultPolicy()))
}

// A message sent twice by the producer may be delivered as its second copy, after what the
// producer sent in between: no order is broken.
func TestReorderedNotForAMessageSentTwice(t *testing.T) {
	none(t, newBuilder().
		consumer("c1", flow, "s", backends.Latest, backends.Shared, 0, 10).
		send("p1", flow, "m1", 20, 30, nil).
		send("p1", flow, "m2", 31, 40, nil).
		send("p1", flow, "m1", 41, 50, nil).
		recv("c1", "m2", "d2", 60, 61).
		recv("c1", "m1", "d1", 70, 71).check(DefaultPolicy()))
}

// One defect, one finding: a message that should not be on the subscription at all (sent to
// another topic) is a wrong delivery, not also out of order.
func TestReorderedIgnoresMessagesOfAnotherTopic(t *testing.T) {
	only(t, newBuilder().
		consumer("c1", flow, "s", backends.Earliest, backends.Shared, 0, 10).
		send("p1", "flow:tg:other", "m1", 20, 30, nil).
		send("p1", flow, "m2", 31, 40, nil).
		recv("c1", "m2", "d2", 50, 60).
		recv("c1", "m1", "d1", 61, 70).check(DefaultPolicy()), WrongSubscription, 1)
}

// "Later than its deadline by more than Grace": exactly Grace late is allowed.
func TestLateReturnGraceIsInclusive(t *testing.T) {
	none(t, newBuilder().
		consumer("c1", flow, "s", backends.Latest, backends.Shared, 0, 10).
		recvTimeout("c1", 20, 5_000, 2_000).check(DefaultPolicy()))
	only(t, newBuilder().
		consumer("c1", flow, "s", backends.Latest, backends.Shared, 0, 10).
		recvTimeout("c1", 20, 5_001, 2_000).check(DefaultPolicy()), LateReturn, 1)
}

// An Ack in force settles a message for good, whatever explained its earlier redeliveries: a
// message nacked, delivered again and acked that comes a third time is a redelivery of an
// acked message (C-ACK-2), under faults too. The nack explains the second delivery only.
func TestAckedRedeliveredAfterANackedDelivery(t *testing.T) {
	b := newBuilder().
		consumer("c1", flow, "s", backends.Latest, backends.Shared, 0, 10).
		send("p1", flow, "m1", 20, 30, nil).
		recv("c1", "m1", "d1", 40, 50).
		settle(Nack, "c1", "m1", "d1", 52, 54).
		recv("c1", "m1", "d2", 60, 70).
		settle(Ack, "c1", "m1", "d2", 72, 74).
		recv("c1", "m1", "d3", 80, 90)
	fs := b.check(DefaultPolicy())
	only(t, fs, AckedRedelivered, 1)
	if len(fs) == 1 && (len(fs[0].Ops) != 3 || fs[0].Ops[0].Delivery != "d2" || fs[0].Ops[2].Delivery != "d3") {
		t.Errorf("the finding's evidence is %v, want the acked delivery d2, its Ack and d3", fs[0].Ops)
	}
	p := DefaultPolicy()
	p.Faults = true
	only(t, b.check(p), AckedRedelivered, 1)
}

// The crash allowance excuses the redelivery of what the crashed consumer acked, not of what
// another consumer acked later: m1 acked by c1 just before its client died comes again to c2,
// which acks it; a third delivery breaks c2's Ack.
func TestAckedRedeliveredAfterAnExcusedCrash(t *testing.T) {
	b := newBuilder().
		consumer("c1", flow, "s", backends.Latest, backends.Shared, 0, 10).
		send("p1", flow, "m1", 20, 30, nil).
		recv("c1", "m1", "d1", 40, 50).
		settle(Ack, "c1", "m1", "d1", 51, 52).
		add(Op{Kind: Kill}, 100, 100)
	b.add(Op{Kind: NewConsumer, Handle: "c2", Topic: flow, Subscription: "s", Mode: backends.Shared}, 120, 130)
	b.ops[len(b.ops)-1].Client = "y#1"
	b.subs["c2"] = b.ops[len(b.ops)-1]
	b.recv("c2", "m1", "d1b", 140, 150).settle(Ack, "c2", "m1", "d1b", 151, 152)
	b.recv("c2", "m1", "d1c", 160, 170)
	for i := len(b.ops) - 3; i < len(b.ops); i++ {
		b.ops[i].Client = "y#1"
	}
	fs := b.check(DefaultPolicy())
	only(t, fs, AckedRedelivered, 1)
	if len(fs) == 1 && fs[0].Ops[2].Delivery != "d1c" {
		t.Errorf("the finding is about %s, want the third delivery d1c: %s", fs[0].Ops[2].Delivery, fs[0])
	}
}

// Every unexplained redelivery is a finding: a message handed out three times with nothing to
// explain it is two duplicates, not one.
func TestDuplicateCountsEveryRedelivery(t *testing.T) {
	fs := dupHistory().recv("c1", "m1", "d1c", 80, 90).check(DefaultPolicy())
	only(t, fs, Duplicate, 2)
	if len(fs) == 2 && (fs[0].Ops[1].Delivery != "d1b" || fs[1].Ops[1].Delivery != "d1c") {
		t.Errorf("duplicates of %s and %s, want d1b and d1c", fs[0].Ops[1].Delivery, fs[1].Ops[1].Delivery)
	}
}

// Only a subscription obliged to get a message can discharge it: a notify subscription whose
// consumer was away when m1 was sent (without transient replay it is owed nothing) may get m1
// all the same, but the subscription that was owed it, read past it, still lost it.
func TestLostNotDischargedByAnUnobligedSubscription(t *testing.T) {
	const notify = "notify:tg:n"
	b := newBuilder().
		consumer("c1", notify, "a", backends.Latest, backends.Shared, 0, 10).
		consumer("c2", notify, "b", backends.Latest, backends.Shared, 0, 10).
		close("c2", 12, 14).
		send("p1", notify, "m1", 20, 30, nil).
		consumer("c3", notify, "b", backends.Latest, backends.Shared, 32, 34).
		send("p1", notify, "m2", 40, 50, nil).
		recv("c3", "m1", "d1", 60, 70).
		recv("c1", "m2", "d2", 60, 70)
	p := DefaultPolicy()
	p.TransientReplay = false
	fs := b.check(p)
	only(t, fs, Lost, 1)
	if len(fs) == 1 && (fs[0].Key != "m1" || !strings.Contains(fs[0].Detail, "(notify:tg:n/a)")) {
		t.Errorf("the loss is %s, want m1 owed to notify:tg:n/a alone", fs[0])
	}
}

// A latest subscription may receive a message sent both before its first Consumer call and
// after it returned: the second Send obliges it. Only a message whose every Send returned
// before is a wrong delivery.
func TestWrongSubscriptionNotWhenSentAgainAfter(t *testing.T) {
	none(t, newBuilder().
		send("p1", flow, "m1", 0, 10, nil).
		consumer("c1", flow, "s", backends.Latest, backends.Shared, 40, 50).
		send("p1", flow, "m1", 60, 70, nil).
		recv("c1", "m1", "d1", 80, 90).check(DefaultPolicy()))
}

// A DeleteTopic that failed deleted nothing (C-TOP-3 applies to a delete that returned nil):
// the subscription after it is the same one, and what it was sent before stays its own.
func TestFailedDeleteStartsNothing(t *testing.T) {
	b := newBuilder().
		consumer("c1", flow, "s", backends.Latest, backends.Shared, 0, 10).
		send("p1", flow, "m1", 20, 30, nil).
		close("c1", 31, 32).
		add(Op{Kind: DeleteTopic, Topic: flow, Err: backends.ErrUnavailable}, 33, 34).
		consumer("c2", flow, "s", backends.Latest, backends.Shared, 40, 50).
		recv("c2", "m1", "d1", 60, 70)
	none(t, b.check(DefaultPolicy()))
	// The same delete returning nil makes c2's a new latest subscription, which must not get m1.
	b.ops[3].Err = nil
	only(t, b.check(DefaultPolicy()), WrongSubscription, 1)
}

// A consumer that closed gracefully before its client was killed did not crash: what it acked
// stays acked even when the kill comes within AckCrashBound of the Ack (C-ACK-5: once Close
// returned, its acks are stored).
func TestAckedRedeliveredAfterACloseThenAKill(t *testing.T) {
	b := newBuilder().
		consumer("c1", flow, "s", backends.Latest, backends.Shared, 0, 10).
		send("p1", flow, "m1", 20, 30, nil).
		recv("c1", "m1", "d1", 40, 50).
		settle(Ack, "c1", "m1", "d1", 51, 52).
		close("c1", 53, 54).
		add(Op{Kind: Kill}, 500, 500)
	b.elsewhere("c2", 510, 520).recv("c2", "m1", "d1b", 600, 610)
	b.ops[len(b.ops)-1].Client = "y#1"
	only(t, b.check(DefaultPolicy()), AckedRedelivered, 1)
}

// A Nack that returned an error owes nothing: it is not a nack the checker holds the
// subscription to (C-NACK-1 is about a Nack that returned nil).
func TestFailedNackOwesNoRedelivery(t *testing.T) {
	b := nackHistory(40_000)
	b.ops[3].Err = backends.ErrUnavailable
	none(t, b.check(DefaultPolicy()))
}

// Report shows at most perAnomaly findings of a class and counts the rest.
func TestReportLimitsEachClass(t *testing.T) {
	fs := []Finding{{Anomaly: Lost, Key: "m1"}, {Anomaly: Lost, Key: "m2"}, {Anomaly: Duplicate, Key: "m3"}, {Anomaly: Lost, Key: "m4"}}
	r := Report(time.Time{}, fs, 2)
	if !strings.HasPrefix(r, "history checkers found 3 lost, 1 unexpected duplicate\n") {
		t.Errorf("report's first line:\n%s", r)
	}
	for _, want := range []string{`"m1"`, `"m2"`, "\n  ... and 1 more lost", `"m3"`} {
		if !strings.Contains(r, want) {
			t.Errorf("report lacks %q:\n%s", want, r)
		}
	}
	if strings.Contains(r, `"m4"`) {
		t.Errorf("report shows a third lost message:\n%s", r)
	}
}

// A delivery does not explain itself: a consumer that began closing before m1's first delivery
// and received m1 again while another member held it is a duplicate (its Close did not
// start between the two deliveries, so no member left in between). Without the window in which
// a change just before may still move a delivery (MoveWithin: c2's close began 5 ms before).
func TestDuplicateNotExplainedByADeliveryItself(t *testing.T) {
	p := DefaultPolicy()
	p.MoveWithin = 0
	only(t, newBuilder().
		consumer("c1", flow, "s", backends.Latest, backends.Shared, 0, 3).
		consumer("c2", flow, "s", backends.Latest, backends.Shared, 0, 3).
		close("c2", 5, 100).
		send("p1", flow, "m1", 6, 8, nil).
		recv("c1", "m1", "d1", 10, 20).
		recv("c2", "m1", "d1b", 30, 40).check(p), Duplicate, 1)
}

// A broker out of reach for longer than a session is a crash to the group (C-ACK-6): an Ack
// that returned nil less than AckCrashBound before the outage began, or in its first
// AckCrashBound (before the client could know), may be lost with the member's session; one
// outside that window is in force. Only a redelivery after the outage began is excused.
func TestAckedRedeliveredAroundAnOutage(t *testing.T) {
	outage := func(ackAt int, outageAt int) []Finding {
		b := newBuilder().
			consumer("c1", flow, "s", backends.Latest, backends.Shared, 0, 10).
			send("p1", flow, "m1", 20, 30, nil).
			recv("c1", "m1", "d1", 40, 50).
			settle(Ack, "c1", "m1", "d1", ackAt-1, ackAt).
			recv("c1", "m1", "d1b", 20000, 20001)
		p := DefaultPolicy()
		p.Faults = true
		p.Outages = []Window{{Start: b.ms(outageAt), End: b.ms(outageAt + 9000)}}
		return b.check(p)
	}
	none(t, outage(1000, 1500))                       // acked 0.5 s before the outage began
	none(t, outage(2400, 1500))                       // acked 0.9 s into it
	only(t, outage(1000, 2000), AckedRedelivered, 1)  // acked exactly AckCrashBound before it: in force
	only(t, outage(2500, 1500), AckedRedelivered, 1)  // acked 1 s into it: in force
	only(t, outage(1000, 5000), AckedRedelivered, 1)  // acked 4 s before it: in force
	only(t, outage(1000, 20500), AckedRedelivered, 1) // the outage began after the redelivery
	only(t, outage(12000, 1500), AckedRedelivered, 1) // acked after the outage ended
}
