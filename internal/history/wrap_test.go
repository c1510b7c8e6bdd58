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

// A payload of up to keyLimit bytes is its own key; one byte more is a digest.
func TestKeyOfLimit(t *testing.T) {
	at := strings.Repeat("k", keyLimit)
	if KeyOf([]byte(at)) != at {
		t.Errorf("a %d-byte payload must be its own key", keyLimit)
	}
	if k := KeyOf([]byte(at + "k")); !strings.HasPrefix(k, "65B:") {
		t.Errorf("a %d-byte payload's key %q, want its digest", keyLimit+1, k)
	}
}

// Summarise: size, up to 24 bytes of the payload ("..." when there is more) and the property
// names, sorted, when there are any.
func TestSummarise(t *testing.T) {
	p24 := strings.Repeat("x", 24)
	for _, c := range []struct {
		payload string
		props   map[string]string
		want    string
	}{
		{p24, nil, `24B "` + p24 + `"`},
		{p24 + "y", nil, `25B "` + p24 + `"...`},
		{"hi", map[string]string{"b": "2", "a": "1"}, `2B "hi" props=a,b`},
		{"hi", map[string]string{}, `2B "hi"`},
	} {
		if got := Summarise([]byte(c.payload), c.props); got != c.want {
			t.Errorf("Summarise(%q, %v) = %q, want %q", c.payload, c.props, got, c.want)
		}
	}
}

// The recorded handles name what was handed out in order ("p1", "c2"), the client's Open says
// where it was opened, and a delivery from another topic than the consumer's says so.
func TestWrapNamesHandlesAndOddities(t *testing.T) {
	ctx := context.Background()
	r := NewRecorder()
	b := Wrap(fakeBackend{}, r, "shared broker")
	Wrap(fakeBackend{}, r, "")
	p, _ := b.Producer(ctx, "flow:tg:t")
	_ = p.Send(ctx, backends.Message{Payload: []byte("hello")})
	c, _ := b.Consumer(ctx, "flow:tg:t", "s")
	_, _ = c.Receive(ctx)
	c2, _ := b.Consumer(ctx, "flow:tg:u", "s")
	c2.(*recConsumer).c.(*fakeConsumer).topic = "flow:tg:elsewhere"
	_, _ = c2.Receive(ctx)
	ops := r.Ops()
	if ops[0].Result != "client opened (shared broker)" || ops[1].Result != "client opened" || ops[1].Client != "fake#2" {
		t.Errorf("Open ops: %+v, %+v", ops[0], ops[1])
	}
	if ops[2].Handle != "p1" || ops[3].Handle != "p1" || ops[4].Handle != "c2" || ops[6].Handle != "c3" {
		t.Errorf("handles: producer %q, its send %q, consumers %q and %q; want p1, p1, c2, c3", ops[2].Handle, ops[3].Handle, ops[4].Handle, ops[6].Handle)
	}
	if ops[5].Result != "" || ops[7].Result != `ok, Delivery.Topic="flow:tg:elsewhere"` {
		t.Errorf("Receive results %q and %q: want nothing for the consumer's own topic, the other topic named", ops[5].Result, ops[7].Result)
	}
}

// Format shows every call when last <= 0 and says only what is true of the history: no "last
// N shown" unless some were left out, no "not recorded" unless the history is full.
func TestFormatAll(t *testing.T) {
	r := NewRecorder()
	b := Wrap(fakeBackend{}, r, "")
	for range 3 {
		_, _ = b.TopicExists(context.Background(), "flow:tg:t")
	}
	for _, last := range []int{0, -1, 4, 5} {
		text := r.Format(last)
		first, _, _ := strings.Cut(text, "\n")
		if first != "history: 4 calls" || strings.Count(text, "\n") != 4 {
			t.Errorf("Format(%d):\n%s", last, text)
		}
	}
	if text := r.Format(2); !strings.HasPrefix(text, "history: 4 calls, the last 2 shown\n") || strings.Count(text, "\n") != 2 {
		t.Errorf("Format(2):\n%s", text)
	}
}

// FormatOp: the delivery ID of a Receive that returned one, the deadline of a Receive or Send
// that had one (and of no other call), the duration rounded to 10 µs.
func TestFormatOp(t *testing.T) {
	origin := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := origin.Add(time.Second)
	op := func(kind Kind, deadline bool) Op {
		o := Op{Kind: kind, Client: "k#1", Handle: "c1", Delivery: "d1", Summary: "5B", Start: at, End: at.Add(1234567 * time.Nanosecond)}
		if deadline {
			o.Deadline = at.Add(2 * time.Second)
		}
		return o
	}
	for _, c := range []struct {
		op         Op
		want, lack string
	}{
		{op(Receive, true), "id=d1 5B deadline=+2.000s -> ok (1.23ms)", ""},
		{op(Receive, false), "id=d1 5B -> ok", "deadline"},
		{op(Send, true), "5B deadline=+2.000s", ""},
		{op(Ack, true), "id=d1 5B -> ok", "deadline"},
	} {
		got := FormatOp(origin, c.op)
		if !strings.Contains(got, c.want) || (c.lack != "" && strings.Contains(got, c.lack)) {
			t.Errorf("FormatOp(%s) = %q: want %q in it and no %q", c.op.Kind, got, c.want, c.lack)
		}
	}
	failed := op(Receive, false)
	failed.Err = backends.ErrTimeout
	if got := FormatOp(origin, failed); strings.Contains(got, "id=") {
		t.Errorf("a Receive that failed has no delivery: %q", got)
	}
}
