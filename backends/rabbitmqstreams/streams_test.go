package rabbitmqstreams

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rabbitmq/rabbitmq-stream-go-client/pkg/stream"

	"github.com/pubsub-conformance/harness/backends"
)

// decodePosition is what a member taking the subscription over reads back.
func decodePosition(p position) (int64, []int64) {
	floor, w0, n := decodeMain(p.main)
	var acked []int64
	for w := w0; w < w0+n; w++ {
		acked = append(acked, windowOffsets(w, p.windows[w])...)
	}
	return floor, acked
}

func TestBooksOutOfOrderAcks(t *testing.T) {
	b := newBooks(10, nil)
	for o := int64(10); o < 15; o++ {
		if !b.arrive(o) {
			t.Fatalf("offset %d not handed out", o)
		}
		b.handOut(o)
	}
	// R7's pattern: ack m5, m3, m4; m1 and m2 stay unacked.
	for _, o := range []int64{14, 12, 13} {
		if !b.ack(o) {
			t.Fatalf("ack %d refused", o)
		}
	}
	floor, above := b.commitState()
	if floor != 10 || !slices.Equal(above, []int64{12, 13, 14}) {
		t.Fatalf("commitState = %d %v, want 10 [12 13 14]", floor, above)
	}
	p, err := encodePosition(floor, above)
	if err != nil {
		t.Fatal(err)
	}
	f2, acked := decodePosition(p)
	if f2 != 10 || !slices.Equal(acked, []int64{12, 13, 14}) {
		t.Fatalf("decoded %d %v", f2, acked)
	}
	next := newBooks(f2, acked)
	for o, want := range map[int64]bool{10: true, 11: true, 12: false, 13: false, 14: false, 15: true} {
		if got := next.arrive(o); got != want {
			t.Errorf("after takeover arrive(%d) = %v, want %v", o, got, want)
		}
	}
	// Acking the gap moves the floor past everything.
	b.ack(10)
	b.ack(11)
	if floor, above := b.commitState(); floor != 15 || len(above) != 0 {
		t.Fatalf("commitState = %d %v, want 15 []", floor, above)
	}
}

func TestBooksHeldAndNack(t *testing.T) {
	b := newBooks(0, nil)
	b.arrive(0)
	b.handOut(0)
	if b.arrive(0) {
		t.Fatal("a held offset read again (a resubscribe) must not be handed out twice")
	}
	b.release(0)
	if b.isHeld(0) || b.settled(0) {
		t.Fatal("a nacked offset is neither held nor settled")
	}
	if floor, _ := b.commitState(); floor != 0 {
		t.Fatalf("a nacked offset must keep the floor at it, got %d", floor)
	}
	b.settleSilently(1) // a marker
	b.ack(0)
	if floor, _ := b.commitState(); floor != 2 {
		t.Fatalf("floor = %d, want 2 (past the marker)", floor)
	}
}

func TestEncodePositionWindows(t *testing.T) {
	floor := int64(1000)
	var above []int64
	for o := floor + 1; o < floor+3000; o += 7 {
		above = append(above, o)
	}
	p, err := encodePosition(floor, above)
	if err != nil {
		t.Fatal(err)
	}
	f, acked := decodePosition(p)
	if f != floor {
		t.Fatalf("floor %d", f)
	}
	limit := (floor/windowBits + maxWindows) * windowBits
	for _, o := range above {
		if o < limit && !slices.Contains(acked, o) {
			t.Fatalf("acked offset %d within the windows lost", o)
		}
	}
	for _, o := range acked {
		if !slices.Contains(above, o) {
			t.Fatalf("offset %d decoded as acked but was not", o)
		}
	}
	if _, err := encodePosition(floorMask+1, nil); err == nil {
		t.Fatal("a floor past the main reference's bits must be refused")
	}
}

func TestParseConfig(t *testing.T) {
	c, err := ParseConfig(map[string]string{"RABBITMQ_HOST": "h"})
	if err != nil || c.Port != 5672 || c.StreamPort != 5552 || c.Username != "guest" || c.Vhost != "/" ||
		!c.StoreOffsets || !c.SingleActive || c.EarliestSpec != "first" || c.CommitIntervalMS != 200 {
		t.Fatalf("defaults: %+v %v", c, err)
	}
	for _, bad := range []map[string]string{
		{},
		{"RABBITMQ_HOST": "h", "RABBITMQ_STREAM_PORT": "x"},
		{"RABBITMQ_HOST": "h", "RABBITMQ_STREAM_EARLIEST": "last"},
		{"RABBITMQ_HOST": "h", "RABBITMQ_STREAM_COMMIT_INTERVAL_MS": "1000"},
		{"RABBITMQ_HOST": "h", "RABBITMQ_SSL": "true"},
	} {
		if _, err := ParseConfig(bad); !errors.Is(err, backends.ErrInvalidConfig) {
			t.Errorf("ParseConfig(%v) = %v, want ErrInvalidConfig", bad, err)
		}
	}
}

func TestParseMaxAge(t *testing.T) {
	for in, want := range map[string]time.Duration{"604800s": 7 * 24 * time.Hour, "7D": 7 * 24 * time.Hour, "5m": 5 * time.Minute} {
		if got, err := parseMaxAge(in); err != nil || got != want {
			t.Errorf("parseMaxAge(%q) = %v, %v", in, got, err)
		}
	}
	if _, err := parseMaxAge("7x"); err == nil {
		t.Error("unknown unit accepted")
	}
}

// A panic inside one of the stream client's calls is that call's error, not the end of the
// process (rabbitmq-stream-go-client v1.8.3's nil metadata in BrokerForConsumer under W2).
func TestGuardTurnsAClientPanicIntoAnError(t *testing.T) {
	var metadata *struct{ responseCode int }
	err := guard("subscribe to s", func() error {
		_ = metadata.responseCode // the client's nil dereference
		return nil
	})
	if !errors.Is(err, backends.ErrUnavailable) || !strings.Contains(err.Error(), "panicked in subscribe to s") {
		t.Fatalf("guard: %v; want an ErrUnavailable naming the call and the panic", err)
	}
	if err := guard("x", func() error { return stream.LeaderNotReady }); !errors.Is(err, stream.LeaderNotReady) {
		t.Errorf("guard changed a plain error: %v", err)
	}
}
