package remote

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/pubsub-conformance/harness/backends"
	pb "github.com/pubsub-conformance/harness/proto/pubsub/v1"

	"github.com/pubsub-conformance/harness/internal/cost"
)

// announcePrefix starts the one stdout line an adapter prints when it listens (adapter.proto).
const announcePrefix = "PUBSUB_ADAPTER_LISTENING "

// ListenEnv is the environment variable that tells an adapter where to listen.
const ListenEnv = "PUBSUB_ADAPTER_LISTEN"

// stderrLines is how many of the adapter's last output lines a crash error quotes.
const stderrLines = 20

// child is one running adapter process and the gRPC connection to it.
//
// Why a locked thread: Pdeathsig is delivered when the *thread* that forked the child exits,
// not the process (as in fixtures/local). The goroutine that starts the child locks itself to
// its OS thread and never unlocks, so the thread lives exactly as long as the child's Wait or
// the whole harness process. If the harness is SIGKILLed (or Ctrl-C'd), the kernel SIGKILLs the
// adapter; it is also in its own process group, so a terminal's Ctrl-C reaches only the harness,
// which then takes it down this way.
type child struct {
	ad       Adapter
	settings map[string]string // what it was started with
	pid      int
	conn     *grpc.ClientConn
	client   pb.AdapterClient
	adapter  string // the handshake's adapter name and version
	done     chan struct{}
	err      error // Wait's error, valid after done
	tmp      string

	mu   sync.Mutex
	tail []string // the last stderrLines lines of stdout/stderr
	log  io.Writer
}

// exited reports whether the process has ended.
func (c *child) exited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// describe names the adapter for error messages: "adapter python-memory (pid 123)".
func (c *child) describe() string {
	return fmt.Sprintf("adapter %s (pid %d)", c.ad.Name, c.pid)
}

// Tail returns the adapter's last output lines, for crash messages.
func (c *child) Tail() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return strings.Join(c.tail, "\n")
}

// setLog points the adapter's output at w (the spec's GinkgoWriter).
func (c *child) setLog(w io.Writer) {
	c.mu.Lock()
	c.log = w
	c.mu.Unlock()
}

// line records one output line of the adapter and forwards it to the log.
func (c *child) line(s string) {
	c.mu.Lock()
	c.tail = append(c.tail, s)
	if len(c.tail) > stderrLines {
		c.tail = c.tail[len(c.tail)-stderrLines:]
	}
	w := c.log
	c.mu.Unlock()
	if w != nil {
		fmt.Fprintf(w, "[%s] %s\n", c.ad.Name, s)
	}
}

// deathError explains a dead adapter: its exit status and last output lines.
func (c *child) deathError() error {
	<-c.done
	status := "exited with status 0"
	if c.err != nil {
		status = c.err.Error()
	}
	tail := c.Tail()
	if tail == "" {
		tail = "(no output)"
	}
	return fmt.Errorf("%s died (%s); its last output:\n%s", c.describe(), status, indent(tail))
}

func indent(s string) string { return "    " + strings.ReplaceAll(s, "\n", "\n    ") }

// startChild starts the adapter's command, waits for its announce line and handshakes, all
// within ctx. On any failure the process is killed and the error names the adapter and quotes
// its output.
func startChild(ctx context.Context, ad Adapter, argv []string, env []string, log io.Writer) (*child, error) {
	tmp, err := os.MkdirTemp("", "pubsub-adapter-")
	if err != nil {
		return nil, fmt.Errorf("adapter %s: %w", ad.Name, err)
	}
	sock := filepath.Join(tmp, "a.sock")
	c := &child{ad: ad, done: make(chan struct{}), log: log, tmp: tmp}
	announced := make(chan string, 1)
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread exits with this goroutine (see child)
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Dir = ad.Dir
		if !filepath.IsAbs(cmd.Dir) {
			cmd.Dir = filepath.Join(RepoRoot(), ad.Dir)
		}
		cmd.Env = append(env, ListenEnv+"=unix:"+sock)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			started <- err
			close(c.done)
			return
		}
		stderr, err := cmd.StderrPipe()
		if err != nil {
			started <- err
			close(c.done)
			return
		}
		if err := cmd.Start(); err != nil {
			started <- err
			close(c.done)
			return
		}
		c.pid = cmd.Process.Pid
		started <- nil
		var wg sync.WaitGroup
		wg.Add(2)
		go func() {
			defer wg.Done()
			sc := bufio.NewScanner(stdout)
			sc.Buffer(make([]byte, 64<<10), 1<<20)
			for sc.Scan() {
				l := sc.Text()
				if addr, ok := strings.CutPrefix(l, announcePrefix); ok {
					select {
					case announced <- strings.TrimSpace(addr):
					default:
					}
					continue
				}
				c.line(l)
			}
		}()
		go func() {
			defer wg.Done()
			sc := bufio.NewScanner(stderr)
			sc.Buffer(make([]byte, 64<<10), 1<<20)
			for sc.Scan() {
				c.line(sc.Text())
			}
		}()
		wg.Wait() // the pipes must be drained before Wait closes them
		c.err = cmd.Wait()
		cost.Record(cost.Adapter, ad.Name, cmd.ProcessState)
		os.RemoveAll(tmp)
		close(c.done)
	}()
	if err := <-started; err != nil {
		os.RemoveAll(tmp)
		return nil, fmt.Errorf("adapter %s: start %q: %w", ad.Name, strings.Join(argv, " "), err)
	}
	fail := func(err error) (*child, error) {
		c.kill()
		return nil, err
	}
	var addr string
	select {
	case addr = <-announced:
	case <-c.done:
		return fail(fmt.Errorf("%s before announcing its address: %w", "adapter exited", c.deathError()))
	case <-ctx.Done():
		return fail(fmt.Errorf("%s did not announce an address (%q on stdout) within the deadline; its last output:\n%s",
			c.describe(), strings.TrimSpace(announcePrefix), indent(c.Tail())))
	}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(64<<20), grpc.MaxCallSendMsgSize(64<<20)))
	if err != nil {
		return fail(fmt.Errorf("%s announced %q: %w", c.describe(), addr, err))
	}
	c.conn = conn
	c.client = pb.NewAdapterClient(conn)
	resp, err := c.client.Handshake(ctx, &pb.HandshakeRequest{
		ProtocolVersion: pb.ProtocolVersion_PROTOCOL_VERSION_1,
		Harness:         "pubsub-conformance harness",
	}, grpc.WaitForReady(true))
	if err != nil {
		return fail(c.callError("handshake", err))
	}
	if err := FromWire(resp.Error); err != nil {
		return fail(fmt.Errorf("%s refused the handshake: %w", c.describe(), err))
	}
	if resp.ProtocolVersion != pb.ProtocolVersion_PROTOCOL_VERSION_1 {
		return fail(fmt.Errorf("%s speaks protocol version %d; this harness speaks %d",
			c.describe(), resp.ProtocolVersion, pb.ProtocolVersion_PROTOCOL_VERSION_1))
	}
	c.adapter = strings.TrimSpace(resp.Adapter + " " + resp.Version)
	return c, nil
}

// kill SIGKILLs the adapter's process group and waits (bounded) until it is reaped.
func (c *child) kill() {
	if c.conn != nil {
		c.conn.Close()
	}
	if c.exited() {
		return
	}
	_ = syscall.Kill(-c.pid, syscall.SIGKILL)
	select {
	case <-c.done:
	case <-time.After(10 * time.Second):
	}
}

// callError turns a failed gRPC call (not a contract error: those arrive in the reply) into the
// harness's error: a dead adapter names itself and quotes its output; a call that outlived its
// deadline is a timeout that says the adapter did not answer.
func (c *child) callError(call string, err error) error {
	if c.exited() {
		return fmt.Errorf("%s: %w", call, c.deathError())
	}
	if statusIs(err, unavailableCode) {
		// The connection broke: the process is likely dying right now. Give it a moment to be
		// reaped so the error can quote its exit and last output.
		select {
		case <-c.done:
			return fmt.Errorf("%s: %w", call, c.deathError())
		case <-time.After(500 * time.Millisecond):
		}
	}
	if errors.Is(err, context.DeadlineExceeded) || statusIs(err, deadlineCode) {
		return &noAnswerError{what: fmt.Sprintf("%s: %s did not answer within the deadline", call, c.describe())}
	}
	if errors.Is(err, context.Canceled) || statusIs(err, canceledCode) {
		return fmt.Errorf("%s: %s: %w", call, c.describe(), context.Canceled)
	}
	return fmt.Errorf("%s: %s: protocol error: %v", call, c.describe(), err)
}

// noAnswerError is a call the adapter did not answer before the deadline: a timeout for
// errors.Is (as a Go backend's CtxErr), with a message that says who did not answer.
type noAnswerError struct{ what string }

func (e *noAnswerError) Error() string { return e.what + ": timeout" }
func (e *noAnswerError) Is(target error) bool {
	return target == backends.ErrTimeout || target == context.DeadlineExceeded
}

const (
	deadlineCode    = codes.DeadlineExceeded
	canceledCode    = codes.Canceled
	unavailableCode = codes.Unavailable
)

func statusIs(err error, c codes.Code) bool {
	s, ok := status.FromError(err)
	return ok && s.Code() == c
}
