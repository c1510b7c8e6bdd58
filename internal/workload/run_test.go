package workload

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pubsub-conformance/harness/backends"
	"github.com/pubsub-conformance/harness/backends/memory"
	"github.com/pubsub-conformance/harness/internal/history"
)

// A receive step waits ReceiveWithin, a receive(c,long) step LongReceive: the deadline of
// each Receive call in the history says which.
func TestRunReceiveWindows(t *testing.T) {
	_, _, ops := runSettling(t, "receive(0) receive(0,long) receive(1,long) receive(1)", "", false, func(c *Config) {
		c.ReceiveWithin, c.LongReceive = 30*time.Millisecond, 400*time.Millisecond
	})
	var windows []string
	for _, op := range ops {
		if op.Kind == history.Receive && len(windows) < 4 {
			w := "short"
			if op.Deadline.Sub(op.Start) > 200*time.Millisecond {
				w = "long"
			}
			windows = append(windows, w)
		}
	}
	if got := strings.Join(windows, " "); got != "short long long short" {
		t.Errorf("the steps' receive windows: %s, want short long long short", got)
	}
}

// subscribe(t,pos,mode) opens a new subscription of topic t at position pos, in mode mode (on a
// backend with mode-override): the Consumer calls in the history say so.
func TestRunSubscribeOptions(t *testing.T) {
	_, _, ops := runSettling(t, "subscribe(t1,latest,shared) subscribe(t0,latest,unique) subscribe(t1,earliest,unique) subscribe(t0,earliest,shared)", "", false, nil)
	var subs []string
	for _, op := range ops {
		if op.Kind == history.NewConsumer {
			subs = append(subs, fmt.Sprintf("%s %s %s", op.Topic[strings.LastIndex(op.Topic, "-")+1:], op.Position, op.Mode))
		}
	}
	want := []string{"t0 earliest shared", "t0 earliest shared", "t1 latest shared", "t0 latest unique", "t1 earliest unique", "t0 earliest shared"}
	if len(subs) < len(want) || strings.Join(subs[:len(want)], ", ") != strings.Join(want, ", ") {
		t.Errorf("the Consumer calls: %v,\nwant (the setup's two, then the steps'): %v", subs, want)
	}
}

// Without a schedule a Close that fails is the run's error, named as the close step's; it is
// tolerated only under faults.
func TestRunCloseFailureWithoutFaults(t *testing.T) {
	p, _ := ParseProgram("send(0) close(0)")
	mb, err := memory.NewBroker().Open(context.Background(), backends.Config{Backend: memory.Name})
	if err != nil {
		t.Fatal(err)
	}
	defer mb.Close(context.Background())
	down := &atomic.Bool{}
	down.Store(true) // Ack, Nack and Close fail
	rec := history.NewRecorder()
	runs++
	_, err = Run(context.Background(), history.Wrap(newSettling(mb, down, false), rec, "workload"), rec, p, ReferenceConfig(fmt.Sprintf("x%d", runs)))
	if got, want := FailureOf(err, nil), (Failure{Step: "close", Call: "Close", Class: "ErrUnavailable"}); got != want {
		t.Errorf("a Close that failed without faults: %v (%s), want %s", err, got, want)
	}
}

// After the faults a drain Ack that fails is tolerated, like any call under a schedule (the
// client may still be reconnecting), and named; it is not the run's error.
func TestRunDrainAckToleratedUnderFaults(t *testing.T) {
	p, _ := ParseProgram("send(0)")
	s, _ := ParseSchedule("latency(short)@0")
	br := memory.NewBroker()
	mb, err := br.Open(context.Background(), backends.Config{Backend: memory.Name})
	if err != nil {
		t.Fatal(err)
	}
	defer mb.Close(context.Background())
	rec := history.NewRecorder()
	runs++
	cfg := ReferenceConfig(fmt.Sprintf("x%d", runs))
	cfg.Nemesis, cfg.Schedule = memoryNemesis(br), s
	res, err := Run(context.Background(), history.Wrap(&refuseAll{newSettling(mb, &atomic.Bool{}, false)}, rec, "workload"), rec, p, cfg)
	if err != nil {
		t.Fatalf("a drain Ack refused under faults: %v", err)
	}
	if tolerated := strings.Join(res.Tolerated, "\n"); !strings.Contains(tolerated, "drain ack on t0/s0: ") {
		t.Errorf("tolerated:\n%s", tolerated)
	}
}
