package workload

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pubsub-conformance/harness/backends"
	"github.com/pubsub-conformance/harness/backends/memory"
	"github.com/pubsub-conformance/harness/backends/mutants"
	"github.com/pubsub-conformance/harness/internal/history"
)

// A nacked message that came again is no longer awaited, even when the Ack of its redelivery
// is then refused because the members changed (C-ACK-8): the redelivery is what the Nack
// owed. (A refused Ack settles nothing, so only the delivery itself can discharge the nack.)
// On topic 1, which no other subscription reads.
func TestRunNackDischargedByARedeliveryWhoseAckIsRefused(t *testing.T) {
	res, err, ops := runSettling(t, "subscribe(t1,earliest,shared) send(2) receive(2,long) nack(0,0) receive(2,long) join(2) ack(0,0)", "", true, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !ackRefused(ops) {
		t.Fatal("the redelivery's Ack was not refused: the test proves nothing")
	}
	if len(res.Findings) > 0 {
		t.Errorf("%s", history.Report(time.Now(), res.Findings, 3))
	}
}

// copies hands out every message a second time under another delivery ID, whose settles do
// nothing: as a broker that gave the message to two members across a rebalance, one of which
// left.
type copies struct {
	backends.Consumer
	mu     sync.Mutex
	again  *backends.Delivery
	copied map[string]bool
}

func (c *copies) Receive(ctx context.Context) (backends.Delivery, error) {
	c.mu.Lock()
	if d := c.again; d != nil {
		c.again = nil
		c.mu.Unlock()
		return *d, nil
	}
	c.mu.Unlock()
	d, err := c.Consumer.Receive(ctx)
	if err == nil {
		cp := d
		cp.ID = d.ID + "/copy"
		c.mu.Lock()
		c.again, c.copied[cp.ID] = &cp, true
		c.mu.Unlock()
	}
	return d, err
}

func (c *copies) settled(d backends.Delivery) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.copied[d.ID]
}

func (c *copies) Ack(ctx context.Context, d backends.Delivery) error {
	if c.settled(d) {
		return nil
	}
	return c.Consumer.Ack(ctx, d)
}

func (c *copies) Nack(ctx context.Context, d backends.Delivery) error {
	if c.settled(d) {
		return nil
	}
	return c.Consumer.Nack(ctx, d)
}

// A message nacked through one delivery and acked through another after the Nack is done: the
// nack owes no redelivery (C-ACK-2 forbids it coming again; history.ackedAfter judges the
// same, W1 seed 1796183140). On topic 1, which no other subscription reads. The run reports the copies (duplicates, and on the other
// subscription the copy after the drain's Ack), not a lost nack.
func TestRunNackDischargedByAnAckOfAnotherDelivery(t *testing.T) {
	p, _ := ParseProgram("subscribe(t1,earliest,shared) send(2) receive(2,long) receive(2,long) nack(0,1) ack(0,0)")
	b, err := memory.NewBroker().Open(context.Background(), backends.Config{Backend: memory.Name})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close(context.Background())
	rec := history.NewRecorder()
	wrapped := mutants.WrapConsumers(b, func(c backends.Consumer) backends.Consumer {
		return &copies{Consumer: c, copied: map[string]bool{}}
	})
	runs++
	res, err := Run(context.Background(), history.Wrap(wrapped, rec, "workload"), rec, p, ReferenceConfig(fmt.Sprintf("c%d", runs)))
	if err != nil {
		t.Fatal(err)
	}
	classes := Classes(res.Findings)
	if slices.Contains(classes, history.NackNotRedelivered) || !slices.Contains(classes, history.Duplicate) {
		t.Errorf("classes %v, want the copies' duplicates and no nack owed:\n%s", classes, history.Report(time.Now(), res.Findings, 3))
	}
	if !slices.ContainsFunc(rec.Ops(), func(op history.Op) bool {
		return op.Kind == history.Nack && strings.HasSuffix(op.Delivery, "/copy")
	}) {
		t.Error("no Nack of the copy: the test proves nothing")
	}
}

// Each subscription gets its own copy of a message (fan-out): its arrival at, or its Ack on,
// another subscription does not discharge a Nack on this one. A Nack that does nothing
// (memory~nack-noop) is the workload's own finding while t0/s1 receives and acks m0.
func TestRunNackNotDischargedByAnotherSubscription(t *testing.T) {
	res := runOn(t, "nack-noop", Program{{Op: Send}, {Op: Receive, Pick: 1}, {Op: Nack}, {Op: Receive, Arg: 1, Pick: 1}})
	var found []history.Finding
	for _, f := range res.Findings {
		if f.Anomaly == history.NackNotRedelivered && f.Subscription == "t0/s0" {
			found = append(found, f)
		}
	}
	if len(found) != 1 {
		t.Errorf("want the workload's finding of the nack on t0/s0 never redelivered:\n%s", history.Report(time.Now(), res.Findings, 3))
	}
	if got := res.Outcome["t0/s1"]; len(got) != 1 {
		t.Errorf("t0/s1 received %v, want m0: the test proves nothing", got)
	}
}

// runWith is runOn with the configuration changed by cfgf, returning the recorded calls too.
func runWith(t *testing.T, variant string, prog Program, cfgf func(*Config)) (Result, []history.Op) {
	t.Helper()
	runs++
	b, rec := open(t, variant)
	defer b.Close(context.Background())
	cfg := ReferenceConfig(fmt.Sprintf("w%d", runs))
	cfgf(&cfg)
	res, err := Run(context.Background(), b, rec, prog, cfg)
	if err != nil {
		t.Fatalf("program %s: %v", prog, err)
	}
	return res, rec.Ops()
}

// The drain of a consumer awaiting a nacked message reads for NackWithin and no longer (the
// bound of C-NACK-1 the workload judges by): after the Nack its Receives span at least
// NackWithin, and since each empty Receive waits Quiet, there are at most NackWithin/Quiet + 1
// of them (fewer on a loaded machine, never more: a bound that grew makes more).
func TestRunDrainWaitsNackWithinForANackedMessage(t *testing.T) {
	const within, quiet = 500 * time.Millisecond, 50 * time.Millisecond
	res, ops := runWith(t, "nack-noop", Program{{Op: Send}, {Op: Receive, Pick: 1}, {Op: Nack}},
		func(c *Config) { c.NackWithin, c.Quiet = within, quiet })
	if cs := Classes(res.Findings); !slices.Contains(cs, history.NackNotRedelivered) {
		t.Fatalf("nack-noop: classes %v, want the nack never redelivered", cs)
	}
	i := slices.IndexFunc(ops, func(op history.Op) bool { return op.Kind == history.Nack })
	nack := ops[i]
	var after []history.Op
	for _, op := range ops[i+1:] {
		if op.Kind == history.Receive && op.Handle == nack.Handle {
			after = append(after, op)
		}
	}
	if len(after) == 0 {
		t.Fatal("no Receive after the Nack")
	}
	if read := after[len(after)-1].End.Sub(nack.End); read < within {
		t.Errorf("the drain read for %s after the Nack, want at least NackWithin %s", read, within)
	}
	if max := int(within/quiet) + 1; len(after) > max {
		t.Errorf("%d Receives after the Nack, want at most %d: the drain read past NackWithin", len(after), max)
	}
}

// slowNacks redelivers a nacked message after a delay, as brokers do (C-NACK-1 allows a
// bounded delay): the Nack returns at once, the message comes back later.
type slowNacks struct {
	backends.Consumer
	delay time.Duration
}

func (c slowNacks) Nack(ctx context.Context, d backends.Delivery) error {
	time.AfterFunc(c.delay, func() { _ = c.Consumer.Nack(context.Background(), d) })
	return nil
}

// The drain waits past quiet windows for a nacked message that is late but within NackWithin:
// redelivered 300 ms after the Nack, with a quiet window of 50 ms, it still came again.
func TestRunDrainAwaitsALateRedelivery(t *testing.T) {
	b, err := memory.NewBroker().Open(context.Background(), backends.Config{Backend: memory.Name})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close(context.Background())
	rec := history.NewRecorder()
	slow := mutants.WrapConsumers(b, func(c backends.Consumer) backends.Consumer { return slowNacks{c, 300 * time.Millisecond} })
	runs++
	cfg := ReferenceConfig(fmt.Sprintf("s%d", runs))
	cfg.Quiet, cfg.NackWithin = 50*time.Millisecond, 3*time.Second
	res, err := Run(context.Background(), history.Wrap(slow, rec, "workload"), rec, Program{{Op: Send}, {Op: Receive, Pick: 1}, {Op: Nack}}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Findings) > 0 {
		t.Errorf("a redelivery 300 ms late: %s", history.Report(time.Now(), res.Findings, 3))
	}
}
