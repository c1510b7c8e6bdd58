package remote

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pubsub-conformance/harness/backends"
	pb "github.com/pubsub-conformance/harness/proto/pubsub/v1"
)

func needPython(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Fatalf("python3 is required for the adapter tests: %v", err)
	}
}

func pythonMemory() Adapter {
	for _, a := range declared {
		if a.Name == "python-memory" {
			return a
		}
	}
	panic("python-memory is not declared")
}

// TestCodesOneToOne: every sentinel crosses the wire and back to itself, and every wire code
// has a backends.Code name.
func TestCodesOneToOne(t *testing.T) {
	sentinels := []error{backends.ErrTimeout, context.Canceled, backends.ErrInvalidTopic, backends.ErrClosed,
		backends.ErrUnknownDelivery, backends.ErrAuth, backends.ErrUnavailable, backends.ErrUnknownBackend,
		backends.ErrInvalidConfig}
	for _, s := range sentinels {
		w := ToWire(errors.Join(errors.New("ctx"), s))
		if w.Code == pb.ErrorCode_ERROR_CODE_INTERNAL {
			t.Errorf("%v went over the wire as internal", s)
		}
		back := FromWire(w)
		if !errors.Is(back, s) || backends.Code(back) != backends.Code(s) {
			t.Errorf("%v came back as %v (code %s)", s, back, backends.Code(back))
		}
	}
	for v, name := range pb.ErrorCode_name {
		c := pb.ErrorCode(v)
		if c == pb.ErrorCode_ERROR_CODE_UNSPECIFIED {
			if FromWire(&pb.Error{Code: c}) != nil {
				t.Error("UNSPECIFIED must mean no error")
			}
			continue
		}
		if got := backends.Code(FromWire(&pb.Error{Code: c, Message: "m"})); got != codeNames[c] {
			t.Errorf("%s: backends.Code of it is %q, want %q", name, got, codeNames[c])
		}
	}
	if ToWire(errors.New("other")).Code != pb.ErrorCode_ERROR_CODE_INTERNAL {
		t.Error("an unknown error must be internal")
	}
}

// TestPythonMemoryRoundTrip: the Python reference port through the protocol, one message.
func TestPythonMemoryRoundTrip(t *testing.T) {
	needPython(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // first run makes the venv
	defer cancel()
	ad := pythonMemory()
	if err := Prepare(ctx, ad); err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	b, err := Open(ctx, ad, backends.Config{Backend: ad.Name, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close(ctx)
	topic := "flow:tg:roundtrip-" + time.Now().Format("150405.000000")
	topic = strings.ReplaceAll(topic, ".", "-")
	c, err := b.Consumer(ctx, topic, "s", backends.WithPosition(backends.Earliest))
	if err != nil {
		t.Fatal(err)
	}
	p, err := b.Producer(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Send(ctx, backends.Message{Payload: []byte("hi\x00"), Properties: map[string]string{"k": "v"}}); err != nil {
		t.Fatal(err)
	}
	d, err := c.Receive(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if string(d.Payload) != "hi\x00" || d.Properties["k"] != "v" || d.Topic != topic {
		t.Fatalf("got %+v", d)
	}
	if err := c.Ack(ctx, d); err != nil {
		t.Fatal(err)
	}
	if err := c.Ack(ctx, backends.Delivery{ID: "1.999"}); !errors.Is(err, backends.ErrUnknownDelivery) {
		t.Fatalf("ack of an unknown id: %v", err)
	}
	rctx, rcancel := context.WithTimeout(ctx, 300*time.Millisecond)
	start := time.Now()
	_, err = c.Receive(rctx)
	rcancel()
	if !errors.Is(err, backends.ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("empty receive: %v", err)
	}
	if el := time.Since(start); el > time.Second {
		t.Fatalf("empty receive took %s for a 300ms deadline", el)
	}
	if _, err := b.Producer(ctx, "a:b"); !errors.Is(err, backends.ErrInvalidTopic) {
		t.Fatalf("invalid topic: %v", err)
	}
	if err := c.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Receive(ctx); !errors.Is(err, backends.ErrClosed) {
		t.Fatalf("receive after close: %v", err)
	}
	tr := b.Transcript()
	for _, want := range []string{"Open", "Consumer", "Send#", "Receive#", "Ack#", "unknown_delivery", "timeout"} {
		if !strings.Contains(tr, want) {
			t.Errorf("transcript lacks %q:\n%s", want, tr)
		}
	}
}

// script writes a Python adapter stand-in and declares it.
func script(t *testing.T, body string) Adapter {
	t.Helper()
	f := t.TempDir() + "/adapter.py"
	if err := os.WriteFile(f, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return Adapter{Name: "test-" + strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-")), Command: []string{"python3", f}}
}

// TestCrashBeforeAnnounceNamesAdapterAndStderr: an adapter that dies at start is one error that
// names it and quotes its last stderr lines.
func TestCrashBeforeAnnounceNamesAdapterAndStderr(t *testing.T) {
	needPython(t)
	ad := script(t, "import sys\nprint('boom: missing trustgraph module', file=sys.stderr)\nsys.exit(3)\n")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err := Open(ctx, ad, backends.Config{})
	if err == nil || !strings.Contains(err.Error(), ad.Name) || !strings.Contains(err.Error(), "boom: missing trustgraph module") ||
		!strings.Contains(err.Error(), "exit status 3") {
		t.Fatalf("got %v", err)
	}
}

// TestSilentAdapterIsBounded: an adapter that never announces fails Open at ctx's deadline,
// or at StartTimeout when ctx allows more, so a silent adapter costs a spec that bound, not its
// whole budget (startTimeout shortened to 1 s shows it without waiting 30 s).
func TestSilentAdapterIsBounded(t *testing.T) {
	needPython(t)
	ad := script(t, "import time\ntime.sleep(600)\n")
	saved := startTimeout
	t.Cleanup(func() { startTimeout = saved })
	for _, c := range []struct{ ctx, start, within time.Duration }{
		{2 * time.Second, saved, 5 * time.Second},
		{15 * time.Second, time.Second, 10 * time.Second},
	} {
		startTimeout = c.start
		ctx, cancel := context.WithTimeout(context.Background(), c.ctx)
		start := time.Now()
		_, err := Open(ctx, ad, backends.Config{})
		cancel()
		if err == nil || !strings.Contains(err.Error(), "did not announce") {
			t.Fatalf("ctx %s, start bound %s: got %v", c.ctx, c.start, err)
		}
		if el := time.Since(start); el > c.within {
			t.Fatalf("ctx %s, start bound %s: took %s", c.ctx, c.start, el)
		}
	}
}

// TestHungThenDeadAdapter: a stopped adapter (SIGSTOP: it cannot answer anything) makes a call
// return a timeout at its deadline that says the adapter did not answer; a killed one makes
// every call fail at once with an error naming the adapter and its exit.
func TestHungThenDeadAdapter(t *testing.T) {
	needPython(t)
	ad := pythonMemory()
	ad.Name = "python-memory-hang"
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	b, err := Open(ctx, ad, backends.Config{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := b.Consumer(ctx, "flow:tg:hang", "s")
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(b.c.pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	rctx, rcancel := context.WithTimeout(ctx, 500*time.Millisecond)
	start := time.Now()
	_, err = c.Receive(rctx)
	rcancel()
	if !errors.Is(err, backends.ErrTimeout) || !strings.Contains(err.Error(), "did not answer") {
		t.Fatalf("receive from a stopped adapter: %v", err)
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Fatalf("receive from a stopped adapter took %s for a 500ms deadline", el)
	}
	if err := syscall.Kill(b.c.pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-b.c.done
	_, err = b.TopicExists(ctx, "flow:tg:hang")
	if err == nil || !strings.Contains(err.Error(), "adapter python-memory-hang") || !strings.Contains(err.Error(), "died (signal: killed)") {
		t.Fatalf("call on a dead adapter: %v", err)
	}
	// The next Open starts a new process.
	b2, err := Open(ctx, ad, backends.Config{})
	if err != nil {
		t.Fatalf("reopen after the crash: %v", err)
	}
	defer b2.Close(ctx)
	if b2.c.pid == b.c.pid {
		t.Fatal("reopen reused the dead process")
	}
}

// TestReferenceInstanceRestart: a private instance of a reference port runs in its own adapter
// process (its own broker) and its Restart goes through the protocol (RestartBroker): in-flight
// messages come back to the open consumer, non-durable classes lose theirs.
func TestReferenceInstanceRestart(t *testing.T) {
	needPython(t)
	for _, name := range []string{"python-memory", "go-memory"} {
		t.Run(name, func(t *testing.T) {
			var ad Adapter
			for _, a := range declared {
				if a.Name == name {
					ad = a
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			if err := Prepare(ctx, ad); err != nil {
				t.Fatal(err)
			}
			inst := ad.Descriptor().InProcess()
			defer inst.Close()
			shared, err := Open(ctx, ad, backends.Config{Backend: name})
			if err != nil {
				t.Fatal(err)
			}
			defer shared.Close(ctx)
			b, err := Open(ctx, ad, backends.Config{Backend: name, Settings: inst.Settings()})
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close(ctx)
			if b.c == shared.c {
				t.Fatal("the private instance shares the process-wide adapter process")
			}
			flow, req := "flow:tg:restart", "request:tg:restart"
			c, err := b.Consumer(ctx, flow, "s", backends.WithPosition(backends.Earliest))
			if err != nil {
				t.Fatal(err)
			}
			for _, topic := range []string{flow, req} {
				p, err := b.Producer(ctx, topic)
				if err != nil {
					t.Fatal(err)
				}
				if err := p.Send(ctx, backends.Message{Payload: []byte(topic)}); err != nil {
					t.Fatal(err)
				}
			}
			d, err := c.Receive(ctx)
			if err != nil || string(d.Payload) != flow {
				t.Fatalf("before the restart: %+v %v", d, err)
			}
			if ok, _ := shared.TopicExists(ctx, flow); ok {
				t.Fatal("the shared broker sees the private instance's topic")
			}
			inst.Restart()
			rctx, rcancel := context.WithTimeout(ctx, 10*time.Second)
			again, err := c.Receive(rctx)
			rcancel()
			if err != nil || string(again.Payload) != flow {
				t.Fatalf("the in-flight message after the restart: %+v %v", again, err)
			}
			rc, err := b.Consumer(ctx, req, "r", backends.WithPosition(backends.Earliest))
			if err != nil {
				t.Fatal(err)
			}
			rctx, rcancel = context.WithTimeout(ctx, 300*time.Millisecond)
			lost, err := rc.Receive(rctx)
			rcancel()
			if !errors.Is(err, backends.ErrTimeout) {
				t.Fatalf("a request-class message survived the restart: %+v %v", lost, err)
			}
			pid := b.c.pid
			inst.Close()
			<-b.c.done
			if _, err := b.TopicExists(ctx, flow); err == nil || !strings.Contains(err.Error(), "died") {
				t.Fatalf("after Close of the instance (pid %d): %v", pid, err)
			}
		})
	}
}

// TestWireErrorText: a contract error that came over the wire reads as the adapter's message;
// one of a code without a Go sentinel (internal) says its code after it.
func TestWireErrorText(t *testing.T) {
	if got := FromWire(&pb.Error{Code: pb.ErrorCode_ERROR_CODE_TIMEOUT, Message: "receive: no message in 1s"}).Error(); got != "receive: no message in 1s" {
		t.Errorf("timeout: %q, want the adapter's message", got)
	}
	if got := FromWire(&pb.Error{Code: pb.ErrorCode_ERROR_CODE_INTERNAL, Message: "KeyError: 'x'"}).Error(); got != "KeyError: 'x' (internal)" {
		t.Errorf("internal: %q, want the message and its code", got)
	}
}
