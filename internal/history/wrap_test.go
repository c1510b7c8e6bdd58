package history

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/pubsub-conformance/harness/backends"
)

// fakeBackend answers every call; its consumer returns one delivery, then times out.
type fakeBackend struct {
	u      map[backends.Capability]string
	closed bool
}

func (f fakeBackend) Name() string                                { return "fake" }
func (f fakeBackend) Unsupported() map[backends.Capability]string { return f.u }
func (f fakeBackend) CreateTopic(context.Context, string, ...backends.TopicOption) error {
	return nil
}
func (f fakeBackend) EnsureTopic(context.Context, string, ...backends.TopicOption) error {
	return nil
}
func (f fakeBackend) DeleteTopic(context.Context, string) error { return nil }
func (f fakeBackend) TopicExists(context.Context, string) (bool, error) {
	return true, nil
}
func (f fakeBackend) Retention(context.Context, string) (time.Duration, error) {
	return time.Minute, nil
}
func (f fakeBackend) Close(context.Context) error { return nil }
func (f fakeBackend) Producer(context.Context, string) (backends.Producer, error) {
	return fakeProducer{}, nil
}
func (f fakeBackend) Consumer(_ context.Context, topic, _ string, _ ...backends.ConsumerOption) (backends.Consumer, error) {
	if topic == "bad" {
		return nil, backends.ErrInvalidTopic
	}
	return &fakeConsumer{topic: topic}, nil
}

type fakeProducer struct{}

func (fakeProducer) Send(_ context.Context, m backends.Message) error {
	if string(m.Payload) == "fail" {
		return errBoom
	}
	return nil
}
func (fakeProducer) Close(context.Context) error { return nil }

type fakeConsumer struct {
	topic string
	n     int
}

func (c *fakeConsumer) Receive(ctx context.Context) (backends.Delivery, error) {
	c.n++
	if c.n == 1 {
		return backends.Delivery{ID: "d1", Topic: c.topic, Payload: []byte("hello")}, nil
	}
	<-ctx.Done()
	return backends.Delivery{}, backends.CtxErr(ctx, "receive")
}
func (c *fakeConsumer) Ack(context.Context, backends.Delivery) error  { return nil }
func (c *fakeConsumer) Nack(context.Context, backends.Delivery) error { return nil }
func (c *fakeConsumer) Close(context.Context) error                   { return nil }

type killable struct {
	fakeBackend
	killed *bool
}

func (k killable) Kill() { *k.killed = true }

func TestWrapRecordsAndPassesThrough(t *testing.T) {
	ctx := context.Background()
	r := NewRecorder()
	b := Wrap(fakeBackend{}, r, "shared broker")
	if b.Name() != "fake" {
		t.Fatalf("Name = %q", b.Name())
	}
	if _, ok := b.(backends.Killer); ok {
		t.Error("the wrapper of a backend without Kill must not offer Kill")
	}
	if _, ok := b.(backends.SubscriptionDeleter); ok {
		t.Error("the wrapper of a backend without DeleteSubscription must not offer it")
	}
	if u, ok := b.(backends.Unwrapper); !ok || u.Unwrap() == nil {
		t.Error("the wrapper must unwrap to the backend")
	}
	p, err := b.Producer(ctx, "flow:tg:t")
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Send(ctx, backends.Message{Payload: []byte("hello")}); err != nil {
		t.Fatal(err)
	}
	if err := p.Send(ctx, backends.Message{Payload: []byte("fail")}); !errors.Is(err, errBoom) {
		t.Fatalf("Send error = %v, want the backend's own", err)
	}
	if _, err := b.Consumer(ctx, "bad", "s"); !errors.Is(err, backends.ErrInvalidTopic) {
		t.Fatalf("Consumer error = %v", err)
	}
	c, err := b.Consumer(ctx, "response:tg:t", "s", backends.WithPosition(backends.Earliest))
	if err != nil {
		t.Fatal(err)
	}
	d, err := c.Receive(ctx)
	if err != nil || string(d.Payload) != "hello" || d.ID != "d1" {
		t.Fatalf("Receive = %+v, %v", d, err)
	}
	if err := c.Ack(ctx, d); err != nil {
		t.Fatal(err)
	}
	rctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	_, err = c.Receive(rctx)
	cancel()
	if !errors.Is(err, backends.ErrTimeout) {
		t.Fatalf("Receive error = %v", err)
	}
	ops := r.Ops()
	var kinds []string
	for _, op := range ops {
		kinds = append(kinds, string(op.Kind))
	}
	want := "Open Producer Send Send Consumer Consumer Receive Ack Receive"
	if got := strings.Join(kinds, " "); got != want {
		t.Fatalf("recorded %q, want %q", got, want)
	}
	cons := ops[5]
	if cons.Mode != backends.Unique || cons.Position != backends.Earliest || cons.Handle == "" {
		t.Errorf("Consumer op = %+v: want the class's resolved mode, the position and a handle", cons)
	}
	if ops[6].Key != "hello" || ops[6].Delivery != "d1" || ops[6].Handle != cons.Handle {
		t.Errorf("Receive op = %+v", ops[6])
	}
	if ops[8].Deadline.IsZero() || ops[8].Err == nil {
		t.Errorf("timed-out Receive op = %+v: want its deadline and error", ops[8])
	}
	text := r.Format(3)
	if !strings.Contains(text, "history: 9 calls, the last 3 shown") || !strings.Contains(text, "fake#1/") {
		t.Errorf("Format:\n%s", text)
	}
}

func TestWrapForwardsKill(t *testing.T) {
	killed := false
	r := NewRecorder()
	b := Wrap(killable{killed: &killed}, r, "")
	k, ok := b.(backends.Killer)
	if !ok {
		t.Fatal("Kill must be forwarded")
	}
	k.Kill()
	if !killed {
		t.Error("Kill did not reach the backend")
	}
	if ops := r.Ops(); ops[len(ops)-1].Kind != Kill {
		t.Errorf("Kill not recorded: %+v", ops)
	}
}

func TestRecorderLimit(t *testing.T) {
	r := NewRecorder()
	r.SetLimit(2)
	b := Wrap(fakeBackend{}, r, "")
	for range 3 {
		_, _ = b.TopicExists(context.Background(), "flow:tg:t")
	}
	if r.Len() != 2 || r.Dropped() != 2 {
		t.Errorf("len %d dropped %d, want 2 and 2", r.Len(), r.Dropped())
	}
	if !strings.Contains(r.Format(0), "2 more not recorded") {
		t.Error(r.Format(0))
	}
}

func TestKeyOf(t *testing.T) {
	if KeyOf([]byte("short")) != "short" {
		t.Error("short payload is its own key")
	}
	big := make([]byte, 1000)
	if k := KeyOf(big); !strings.HasPrefix(k, "1000B:") || k == KeyOf(append(big[:999:999], 1)) {
		t.Errorf("long payload key %q", k)
	}
}
