package remote

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pubsub-conformance/harness/backends"
)

// TestSDKEnforcesDeadlinesAndMapsErrors runs testdata/misbehaving.py on the Python SDK: an
// async method that ignores its timeout is cancelled, a sync one abandoned (and reported on
// stderr), both answered with a timeout before the harness's deadline; exceptions become the
// right codes with where they were raised; a constructor's error keeps its sentinel.
func TestSDKEnforcesDeadlinesAndMapsErrors(t *testing.T) {
	needPython(t)
	ad := Adapter{Name: "misbehaving", Command: []string{"{python}", "backends/remote/testdata/misbehaving.py"},
		Requirements: []string{SDKRequirements}}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	log := &syncBuffer{}
	b, err := Open(ctx, ad, backends.Config{Log: log})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close(ctx)
	if b.Unsupported()[backends.CapRetentionExpiry] != "test adapter" {
		t.Errorf("unsupported: %v", b.Unsupported())
	}
	c, err := b.Consumer(ctx, "flow:tg:x", "s")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		call func(context.Context) error
	}{
		{"async receive", func(ctx context.Context) error { _, err := c.Receive(ctx); return err }},
		{"sync ack", func(ctx context.Context) error { return c.Ack(ctx, backends.Delivery{ID: "1"}) }},
	} {
		cctx, ccancel := context.WithTimeout(ctx, 400*time.Millisecond)
		start := time.Now()
		err := tc.call(cctx)
		ccancel()
		el := time.Since(start)
		// Either the SDK's timeout answer or, when the machine is too loaded for it to arrive
		// first, the harness's own: both are timeouts at the deadline.
		if !errors.Is(err, backends.ErrTimeout) ||
			!(strings.Contains(err.Error(), "did not return within its deadline") || strings.Contains(err.Error(), "did not answer")) {
			t.Errorf("%s: want a timeout, got %v", tc.name, err)
		}
		if el > 1500*time.Millisecond {
			t.Errorf("%s: took %s for a 400ms deadline", tc.name, el)
		}
	}
	err = c.Nack(ctx, backends.Delivery{ID: "1"})
	if backends.Code(err) != "internal" || !strings.Contains(err.Error(), "misbehaving.py") || !strings.Contains(err.Error(), "KeyError") {
		t.Errorf("internal error with a cause: %v", err)
	}
	_, err = b.TopicExists(ctx, "flow:tg:x")
	if backends.Code(err) != "internal" || !strings.Contains(err.Error(), "ValueError: plain bug") {
		t.Errorf("plain exception: %v", err)
	}
	// The SDK says on stderr what it cancelled and abandoned, and the abandoned sync ack's late
	// return (~0.5s after its deadline).
	for _, want := range []string{
		"Consumer.receive was still running at its deadline", "cancelled",
		"Consumer.ack was still running at its deadline", "abandoned",
		// ... and where each was: the thread's stack, the coroutine's before its cancel.
		`misbehaving.py", line 15, in ack`, `misbehaving.py", line 12, in receive`,
		"Consumer.ack overran its deadline and then returned None",
	} {
		deadline := time.Now().Add(5 * time.Second)
		for !strings.Contains(log.String(), want) && time.Now().Before(deadline) {
			select {
			case <-ctx.Done():
			case <-time.After(50 * time.Millisecond):
			}
		}
		if !strings.Contains(log.String(), want) {
			t.Errorf("adapter stderr lacks %q:\n%s", want, log.String())
		}
	}
	bad := ad
	bad.Settings = map[string]string{"BAD": "1"}
	_, err = Open(ctx, bad, backends.Config{Backend: "misbehaving-bad"})
	if !errors.Is(err, backends.ErrAuth) || !strings.Contains(err.Error(), "bad credentials for misbehaving-bad") {
		t.Errorf("constructor error: %v", err)
	}
}

// syncBuffer is a strings.Builder safe for the adapter's output goroutines and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
