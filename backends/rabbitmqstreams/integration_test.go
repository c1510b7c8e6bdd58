package rabbitmqstreams

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/pubsub-conformance/harness/backends"
)

// The integration tests run against the broker in the RABBITMQ_* environment (make warm's
// env file, or PUBSUB_BROKERS=external settings) and skip without RABBITMQ_STREAM_PORT.
func open(t *testing.T) backends.Backend {
	t.Helper()
	if os.Getenv("RABBITMQ_STREAM_PORT") == "" || os.Getenv("RABBITMQ_HOST") == "" {
		t.Skip("RABBITMQ_HOST and RABBITMQ_STREAM_PORT are not set: no broker for the integration tests")
	}
	s := map[string]string{}
	for _, kv := range os.Environ() {
		if k, v, ok := strings.Cut(kv, "="); ok && strings.HasPrefix(k, "RABBITMQ_") {
			s[k] = v
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	b, err := New(ctx, backends.Config{Backend: Name, Settings: s, Log: testLog{t}})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { _ = b.Close(context.Background()) })
	return b
}

type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

func TestIntegrationLargeMessage(t *testing.T) {
	b := open(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	topic := "flow:tg:big-" + uniqueSuffix()
	c, err := b.Consumer(ctx, topic, "s", backends.WithPosition(backends.Earliest))
	if err != nil {
		t.Fatal(err)
	}
	p, err := b.Producer(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	// D5's size: with the client's default 8 KiB socket buffers this took over a minute.
	big := bytes.Repeat([]byte("x"), 5<<20)
	if err := p.Send(ctx, backends.Message{Payload: big}); err != nil {
		t.Fatal(err)
	}
	rctx, rcancel := context.WithTimeout(ctx, 30*time.Second)
	defer rcancel()
	d, err := c.Receive(rctx)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(d.Payload, big) {
		t.Fatalf("payload of %d bytes, want %d", len(d.Payload), len(big))
	}
}
