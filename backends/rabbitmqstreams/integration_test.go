package rabbitmqstreams

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pubsub-conformance/harness/backends"
	"github.com/pubsub-conformance/harness/fixtures"
	"github.com/pubsub-conformance/harness/fixtures/brokertest"
)

// The integration tests run against a real RabbitMQ broker shared by this package's tests,
// started once through fixtures in TestMain (fixtures/brokertest; RABBITMQ_HOST points them at
// an external broker instead, which must have the stream plugin). The shared conformance suite
// is the full proof; these cover the stream client's mechanics close to the code.
var sharedRabbit = brokertest.Shared(fixtures.RabbitMQ)

func TestMain(m *testing.M) { os.Exit(brokertest.Main(m)) }

func open(t *testing.T) backends.Backend {
	t.Helper()
	ep := sharedRabbit.Endpoints(t)
	broker := ep.Settings()
	if ep.Provider == "external" {
		broker = nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	b, err := New(ctx, backends.Config{Backend: Name, Settings: backends.Layer(Descriptor.EnvSettings(os.Environ()), broker), Log: newTestLog(t)})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { _ = b.Close(context.Background()) })
	return b
}

// testLog forwards a backend's log to its test while the test runs. The stream client logs
// from goroutines of its own through a global logger (the last backend's Log), which can
// outlive the test and its Close: t.Log after the test completed panics ("Log in goroutine
// after TestIntegrationLargeMessage has completed", seen in make test), so once the test's
// cleanups ran the lines go to stderr instead.
type testLog struct {
	t    *testing.T
	mu   *sync.Mutex
	done *bool
}

// newTestLog registers its cleanup first, so it runs after every later one (Close included).
func newTestLog(t *testing.T) testLog {
	l := testLog{t: t, mu: &sync.Mutex{}, done: new(bool)}
	t.Cleanup(func() {
		l.mu.Lock()
		*l.done = true
		l.mu.Unlock()
	})
	return l
}

func (l testLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if *l.done {
		fmt.Fprintf(os.Stderr, "%s (after the test): %s\n", l.t.Name(), strings.TrimSpace(string(p)))
		return len(p), nil
	}
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

// TestLockQueueRabbitMQ43Accepts: RabbitMQ 4.3 refuses by default a queue that is neither
// durable nor exclusive (release notes 4.3.0, deprecated feature transient_nonexcl_queues), and
// the lock queue cannot be exclusive: members of a subscription on other connections (other
// processes) consume it. So it is durable (auto-delete, x-expires); a member on a second Backend
// joins it.
func TestLockQueueRabbitMQ43Accepts(t *testing.T) {
	b := open(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	r, err := resolve("flow:tg:lock-" + uniqueSuffix())
	if err != nil {
		t.Fatal(err)
	}
	c, err := b.Consumer(ctx, r.orig, "s")
	if err != nil {
		t.Fatalf("Consumer: %v", err)
	}
	defer c.Close(ctx)
	mgmt := b.(*Backend).mgmt
	if mgmt == nil {
		t.Skip("no RABBITMQ_MANAGEMENT_URL: the lock queue cannot be read back")
	}
	name := LockQueueName(r.stream, "s")
	var q struct {
		Durable    bool           `json:"durable"`
		Exclusive  bool           `json:"exclusive"`
		AutoDelete bool           `json:"auto_delete"`
		Arguments  map[string]any `json:"arguments"`
	}
	if err := mgmt.get(ctx, "/api/queues/"+url.PathEscape(mgmt.vhost)+"/"+url.PathEscape(name), &q); err != nil {
		t.Fatalf("read %s: %v", name, err)
	}
	if !q.Durable || q.Exclusive || !q.AutoDelete {
		t.Errorf("lock queue %s durable=%v exclusive=%v auto_delete=%v, want durable, auto-delete, not exclusive", name, q.Durable, q.Exclusive, q.AutoDelete)
	}
	if got, _ := q.Arguments["x-expires"].(float64); time.Duration(got)*time.Millisecond != lockQueueExpiry {
		t.Errorf("lock queue %s x-expires %v ms, want %v", name, q.Arguments["x-expires"], lockQueueExpiry)
	}
	c2, err := open(t).Consumer(ctx, r.orig, "s")
	if err != nil {
		t.Fatalf("a member on another connection: Consumer: %v", err)
	}
	_ = c2.Close(ctx)
}
