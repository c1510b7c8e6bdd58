package remote

import (
	"context"
	"errors"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/pubsub-conformance/harness/backends"
	pb "github.com/pubsub-conformance/harness/proto/pubsub/v1"
)

// recorder is an adapter served in this process that records what the harness asked of it,
// so a test can state what goes over the wire for a contract call. It answers every call
// with success unless its fields say otherwise.
type recorder struct {
	pb.UnimplementedAdapterServer
	mu        sync.Mutex
	calls     []string
	topics    []*pb.TopicRequest
	consumers []*pb.ConsumerRequest
	settles   []string // "ack <id>" or "nack <id>"
	opens     []*pb.OpenRequest
	killErr   error     // KillBackend's gRPC error (nil: success)
	restart   *pb.Error // RestartBroker's contract error (nil: success)
	retention time.Duration
	delivery  *pb.Delivery
	hang      chan struct{} // non-nil: Receive answers only when it is closed
}

func (r *recorder) note(call string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, call)
}

func (r *recorder) Open(_ context.Context, q *pb.OpenRequest) (*pb.OpenResponse, error) {
	r.mu.Lock()
	r.opens = append(r.opens, q)
	r.mu.Unlock()
	r.note("Open")
	return &pb.OpenResponse{Backend: 7, Unsupported: map[string]string{string(backends.CapRetentionExpiry): "test"}}, nil
}

func (r *recorder) topic(call string, q *pb.TopicRequest) {
	r.mu.Lock()
	r.topics = append(r.topics, q)
	r.mu.Unlock()
	r.note(call)
}

func (r *recorder) CreateTopic(_ context.Context, q *pb.TopicRequest) (*pb.Empty, error) {
	r.topic("CreateTopic", q)
	return &pb.Empty{}, nil
}

func (r *recorder) EnsureTopic(_ context.Context, q *pb.TopicRequest) (*pb.Empty, error) {
	r.topic("EnsureTopic", q)
	return &pb.Empty{}, nil
}

func (r *recorder) TopicExists(_ context.Context, q *pb.TopicRequest) (*pb.TopicExistsResponse, error) {
	r.topic("TopicExists", q)
	return &pb.TopicExistsResponse{Exists: true}, nil
}

func (r *recorder) Retention(_ context.Context, q *pb.TopicRequest) (*pb.RetentionResponse, error) {
	r.topic("Retention", q)
	return &pb.RetentionResponse{Retention: durationpb.New(r.retention)}, nil
}

func (r *recorder) CloseBackend(context.Context, *pb.Handle) (*pb.Empty, error) {
	r.note("CloseBackend")
	return &pb.Empty{}, nil
}

func (r *recorder) KillBackend(context.Context, *pb.Handle) (*pb.Empty, error) {
	r.note("KillBackend")
	return &pb.Empty{}, r.killErr
}

func (r *recorder) RestartBroker(context.Context, *pb.RestartBrokerRequest) (*pb.Empty, error) {
	r.note("RestartBroker")
	return &pb.Empty{Error: r.restart}, nil
}

func (r *recorder) NewConsumer(_ context.Context, q *pb.ConsumerRequest) (*pb.HandleResponse, error) {
	r.mu.Lock()
	r.consumers = append(r.consumers, q)
	r.mu.Unlock()
	r.note("NewConsumer")
	return &pb.HandleResponse{Handle: 3}, nil
}

func (r *recorder) Receive(context.Context, *pb.Handle) (*pb.ReceiveResponse, error) {
	r.note("Receive")
	if r.hang != nil {
		<-r.hang
	}
	if r.delivery == nil {
		return &pb.ReceiveResponse{Error: &pb.Error{Code: pb.ErrorCode_ERROR_CODE_TIMEOUT, Message: "no message"}}, nil
	}
	return &pb.ReceiveResponse{Delivery: r.delivery}, nil
}

func (r *recorder) settle(what string, q *pb.SettleRequest) {
	r.mu.Lock()
	r.settles = append(r.settles, what+" "+q.GetDelivery().GetId())
	r.mu.Unlock()
}

func (r *recorder) Ack(_ context.Context, q *pb.SettleRequest) (*pb.Empty, error) {
	r.settle("ack", q)
	return &pb.Empty{}, nil
}

func (r *recorder) Nack(_ context.Context, q *pb.SettleRequest) (*pb.Empty, error) {
	r.settle("nack", q)
	return &pb.Empty{}, nil
}

func (r *recorder) CloseConsumer(context.Context, *pb.Handle) (*pb.Empty, error) {
	r.note("CloseConsumer")
	return &pb.Empty{}, nil
}

func (r *recorder) count(call string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, c := range r.calls {
		if c == call {
			n++
		}
	}
	return n
}

// serveRecorder serves r on a unix socket and returns a Backend of it (as Open would make,
// without a process: its child never exits).
func serveRecorder(t *testing.T, r *recorder) *Backend {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "a.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer()
	pb.RegisterAdapterServer(s, r)
	go s.Serve(l)
	t.Cleanup(s.Stop)
	conn, err := grpc.NewClient("unix:"+sock, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	c := &child{ad: Adapter{Name: "recorder"}, done: make(chan struct{}), conn: conn, client: pb.NewAdapterClient(conn)}
	return &Backend{name: "recorder", c: c, id: 7, tr: &transcript{start: time.Now()}}
}

// TestTopicRetentionOnTheWire: a topic call without a retention option leaves the retention
// unset, so the adapter applies the class's default (a zero would ask for no retention at
// all); WithRetention travels as given.
func TestTopicRetentionOnTheWire(t *testing.T) {
	r := &recorder{}
	b := serveRecorder(t, r)
	ctx := t.Context()
	if err := b.CreateTopic(ctx, "flow:tg:a"); err != nil {
		t.Fatal(err)
	}
	if err := b.EnsureTopic(ctx, "flow:tg:b", nil, backends.WithRetention(90*time.Second)); err != nil {
		t.Fatal(err)
	}
	if r.topics[0].Retention != nil {
		t.Errorf("CreateTopic without a retention option sent retention %v", r.topics[0].Retention.AsDuration())
	}
	if got := r.topics[1].GetRetention().AsDuration(); got != 90*time.Second || r.topics[1].Topic != "flow:tg:b" || r.topics[1].Backend != 7 {
		t.Errorf("EnsureTopic WithRetention(90s): sent %+v", r.topics[1])
	}
	r.retention = 42 * time.Second
	if d, err := b.Retention(ctx, "flow:tg:b"); err != nil || d != 42*time.Second {
		t.Errorf("Retention: %s, %v; the adapter answered 42s", d, err)
	}
	if ok, err := b.TopicExists(ctx, "flow:tg:b"); err != nil || !ok {
		t.Errorf("TopicExists: %v, %v; the adapter answered true", ok, err)
	}
	tr := b.Transcript()
	for _, want := range []string{`"flow:tg:b" retention=1m30s`, "-> 42s", "-> exists=true"} {
		if !strings.Contains(tr, want) {
			t.Errorf("transcript lacks %q:\n%s", want, tr)
		}
	}
}

// TestConsumerOptionsOnTheWire: the position and mode the caller asked for reach the adapter
// as asked; without options they are Latest and the class default (the adapter maps the
// default mode as its backend does).
func TestConsumerOptionsOnTheWire(t *testing.T) {
	r := &recorder{}
	b := serveRecorder(t, r)
	ctx := t.Context()
	for _, opts := range [][]backends.ConsumerOption{
		nil,
		{backends.WithPosition(backends.Earliest), backends.WithMode(backends.Shared)},
		{nil, backends.WithMode(backends.Unique)},
	} {
		if _, err := b.Consumer(ctx, "flow:tg:c", "s", opts...); err != nil {
			t.Fatal(err)
		}
	}
	want := []struct {
		pos  pb.Position
		mode pb.Mode
	}{
		{pb.Position_POSITION_LATEST, pb.Mode_MODE_DEFAULT},
		{pb.Position_POSITION_EARLIEST, pb.Mode_MODE_SHARED},
		{pb.Position_POSITION_LATEST, pb.Mode_MODE_UNIQUE},
	}
	for i, w := range want {
		if got := r.consumers[i]; got.Position != w.pos || got.Mode != w.mode || got.Subscription != "s" || got.Topic != "flow:tg:c" {
			t.Errorf("consumer %d: sent %+v, want position %s mode %s", i, got, w.pos, w.mode)
		}
	}
}

// TestSettleOnTheWire: Ack acks and Nack nacks the delivery it names; a received delivery
// comes back with what the adapter sent.
func TestSettleOnTheWire(t *testing.T) {
	r := &recorder{delivery: &pb.Delivery{Id: "1.5", Topic: "flow:tg:s", Payload: []byte("p"), Properties: map[string]string{"k": "v"}}}
	b := serveRecorder(t, r)
	ctx := t.Context()
	c, err := b.Consumer(ctx, "flow:tg:s", "s")
	if err != nil {
		t.Fatal(err)
	}
	d, err := c.Receive(ctx)
	if err != nil || d.ID != "1.5" || d.Topic != "flow:tg:s" || string(d.Payload) != "p" || d.Properties["k"] != "v" {
		t.Fatalf("receive: %+v, %v", d, err)
	}
	if err := c.Ack(ctx, d); err != nil {
		t.Fatal(err)
	}
	if err := c.Nack(ctx, backends.Delivery{ID: "1.6"}); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(r.settles, ", "); got != "ack 1.5, nack 1.6" {
		t.Errorf("settled %q, want ack 1.5, nack 1.6", got)
	}
	r.delivery = nil
	if d, err := c.Receive(ctx); !errors.Is(err, backends.ErrTimeout) || d.ID != "" {
		t.Errorf("an empty receive: %+v, %v; want a timeout and no delivery", d, err)
	}
}

// TestCloseOnce: Close of a Backend or a consumer reaches the adapter once, however often it
// is called; Kill after Close does nothing.
func TestCloseOnce(t *testing.T) {
	r := &recorder{}
	b := serveRecorder(t, r)
	ctx := t.Context()
	c, err := b.Consumer(ctx, "flow:tg:x", "s")
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := c.Close(ctx); err != nil {
			t.Fatal(err)
		}
		if err := b.Close(ctx); err != nil {
			t.Fatal(err)
		}
	}
	b.Kill()
	if n, k, cc := r.count("CloseBackend"), r.count("KillBackend"), r.count("CloseConsumer"); n != 1 || k != 0 || cc != 1 {
		t.Errorf("CloseBackend %d times, KillBackend %d, CloseConsumer %d; want 1, 0, 1", n, k, cc)
	}
}

// TestKillFailureIsLogged: a Kill the adapter refuses is written to the adapter's log and the
// transcript, not dropped; a Kill it takes is silent.
func TestKillFailureIsLogged(t *testing.T) {
	r := &recorder{killErr: status.Error(codes.Unimplemented, "no kill here")}
	b := serveRecorder(t, r)
	log := &syncBuffer{}
	b.c.setLog(log)
	b.Kill()
	b.Kill()
	if r.count("KillBackend") != 1 || !strings.Contains(log.String(), "harness: Kill of backend 7 failed") ||
		!strings.Contains(b.Transcript(), "Kill") {
		t.Errorf("refused kill: %d calls, log %q, transcript %q", r.count("KillBackend"), log.String(), b.Transcript())
	}
	ok := serveRecorder(t, &recorder{})
	quiet := &syncBuffer{}
	ok.c.setLog(quiet)
	ok.Kill()
	if quiet.String() != "" {
		t.Errorf("a kill the adapter took logged %q", quiet.String())
	}
}

// TestInstanceRestart: a private instance's Restart goes to its own adapter process; a failed
// restart is written to the adapter's log (the spec's output), a successful one is silent; an
// instance never opened has nothing to restart.
func TestInstanceRestart(t *testing.T) {
	ad := Adapter{Name: "recorder"}
	newInstance(ad).Restart() // never opened: no process, nothing happens
	r := &recorder{}
	b := serveRecorder(t, r)
	inst := newInstance(ad)
	b.c.settings = inst.Settings()
	log := &syncBuffer{}
	b.c.setLog(log)
	poolMu.Lock()
	children["test/"+inst.Settings()[InstanceSetting]] = b.c
	poolMu.Unlock()
	t.Cleanup(func() { instanceProcess(ad, inst.Settings()[InstanceSetting], true) })
	inst.Restart()
	if r.count("RestartBroker") != 1 || log.String() != "" {
		t.Errorf("a restart the adapter took: %d calls, log %q", r.count("RestartBroker"), log.String())
	}
	r.restart = &pb.Error{Code: pb.ErrorCode_ERROR_CODE_UNAVAILABLE, Message: "broker did not come back"}
	inst.Restart()
	if !strings.Contains(log.String(), "harness: broker restart failed: broker did not come back") {
		t.Errorf("a failed restart: log %q", log.String())
	}
	if other := newInstance(ad); instanceProcess(ad, other.Settings()[InstanceSetting], false) != nil {
		t.Error("another instance found this instance's process")
	}
}

// TestOpenOnTheWire: Open asks the adapter's process for a Backend under the run's name with
// the merged settings and the per-class retention, takes what it says it cannot do, and the
// transcript names the code under test when the declaration has a source.
func TestOpenOnTheWire(t *testing.T) {
	r := &recorder{}
	running := serveRecorder(t, r)
	ad := Adapter{Name: "recorder-open", Source: "trustgraph-base working copy /src (git abc, clean)",
		Settings: map[string]string{"FIXED": "1"}}
	cfg := backends.Config{Backend: "recorder-open~variant", Settings: map[string]string{"KAFKA_BOOTSTRAP_SERVERS": "h:1"},
		Retention: map[backends.Class]time.Duration{backends.ClassFlow: time.Hour}}
	key := settingsKey(ad.Name, mergeSettings(ad, cfg.Settings))
	poolMu.Lock()
	children[key] = running.c
	poolMu.Unlock()
	t.Cleanup(func() {
		poolMu.Lock()
		delete(children, key)
		poolMu.Unlock()
	})
	b, err := Open(t.Context(), ad, cfg)
	if err != nil {
		t.Fatal(err)
	}
	q := r.opens[0]
	if q.Name != "recorder-open~variant" || q.Settings["FIXED"] != "1" || q.Settings["KAFKA_BOOTSTRAP_SERVERS"] != "h:1" ||
		q.Retention["flow"].AsDuration() != time.Hour || len(q.Retention) != 1 {
		t.Errorf("Open sent %+v", q)
	}
	if b.Name() != "recorder-open~variant" || b.Unsupported()[backends.CapRetentionExpiry] != "test" {
		t.Errorf("backend %q, unsupported %v", b.Name(), b.Unsupported())
	}
	if tr := b.Transcript(); !strings.Contains(tr, "code under test: trustgraph-base working copy /src") ||
		!strings.Contains(tr, "settings=[FIXED KAFKA_BOOTSTRAP_SERVERS]") {
		t.Errorf("transcript:\n%s", tr)
	}
	ad.Source = ""
	unnamed, err := Open(t.Context(), ad, backends.Config{Settings: cfg.Settings})
	if err != nil {
		t.Fatal(err)
	}
	if unnamed.Name() != "recorder-open" || strings.Contains(unnamed.Transcript(), "code under test") {
		t.Errorf("no name, no source: %q\n%s", unnamed.Name(), unnamed.Transcript())
	}
}

// TestCallEndsAtItsDeadline: a call the adapter does not answer returns at the caller's
// deadline with a timeout that says so, not at DefaultCallTimeout.
func TestCallEndsAtItsDeadline(t *testing.T) {
	r := &recorder{hang: make(chan struct{})}
	b := serveRecorder(t, r)
	t.Cleanup(func() { close(r.hang) })
	c, err := b.Consumer(t.Context(), "flow:tg:h", "s")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() { _, err := c.Receive(ctx); done <- err }()
	select {
	case err := <-done:
		if !errors.Is(err, backends.ErrTimeout) || !strings.Contains(err.Error(), "did not answer") {
			t.Errorf("an unanswered call: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("a call with a 200ms deadline was still waiting after 20 s")
	}
}
