package mutants_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/pubsub-conformance/harness/backends"
	"github.com/pubsub-conformance/harness/backends/memory"
	"github.com/pubsub-conformance/harness/backends/mutants"
)

// reconnect-drops-queued: after a failed Send of one producer (a cut), the next Send of
// another producer of the client returns nil and is never written; without a fault nothing
// is dropped.
func TestReconnectDropsQueued(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var v mutants.Variant
	for _, c := range mutants.All() {
		if c.Name == "reconnect-drops-queued" {
			v = c
		}
	}
	if v.Wrap == nil {
		t.Fatal("no variant reconnect-drops-queued")
	}
	br := memory.NewBroker()
	raw, err := br.Open(ctx, backends.Config{Backend: memory.Name})
	if err != nil {
		t.Fatal(err)
	}
	b := v.Wrap(raw)
	defer b.Close(ctx)
	topic := "flow:tg:reconnect-drops"
	c, err := b.Consumer(ctx, topic, "s", backends.WithPosition(backends.Earliest))
	if err != nil {
		t.Fatal(err)
	}
	pa, err := b.Producer(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	pb, err := b.Producer(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	send := func(p backends.Producer, s string) error {
		return p.Send(ctx, backends.Message{Payload: []byte(s)})
	}
	for _, s := range []string{"a1", "b1", "a2", "b2"} { // no fault: all written
		p := pa
		if s[0] == 'b' {
			p = pb
		}
		if err := send(p, s); err != nil {
			t.Fatal(err)
		}
	}
	br.SetUnreachable(true)
	sctx, scancel := context.WithTimeout(ctx, time.Second)
	err = pa.Send(sctx, backends.Message{Payload: []byte("a3")})
	scancel()
	br.SetUnreachable(false)
	if !errors.Is(err, backends.ErrUnavailable) && !errors.Is(err, backends.ErrTimeout) {
		t.Fatalf("send during the cut: %v, want unavailable or timeout", err)
	}
	if err := send(pb, "b3"); err != nil { // dropped, returns nil
		t.Fatal(err)
	}
	if err := send(pb, "b4"); err != nil {
		t.Fatal(err)
	}
	var got []string
	for {
		rctx, rcancel := context.WithTimeout(ctx, 200*time.Millisecond)
		d, err := c.Receive(rctx)
		rcancel()
		if err != nil {
			break
		}
		got = append(got, string(d.Payload))
		_ = c.Ack(ctx, d)
	}
	want := []string{"a1", "b1", "a2", "b2", "b4"}
	if len(got) != len(want) {
		t.Fatalf("received %v, want %v (b3 dropped after the reconnect)", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("received %v, want %v", got, want)
		}
	}
}
