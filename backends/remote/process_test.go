package remote

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/pubsub-conformance/harness/backends"
)

// TestTailKeepsTheLastLines: a crash message quotes the adapter's last stderrLines output
// lines, the newest last, and each line also reaches the spec's log under the adapter's name.
func TestTailKeepsTheLastLines(t *testing.T) {
	log := &syncBuffer{}
	c := &child{ad: Adapter{Name: "a"}, log: log}
	for i := 1; i <= stderrLines+5; i++ {
		c.line(fmt.Sprintf("line %d", i))
	}
	lines := strings.Split(c.Tail(), "\n")
	if len(lines) != stderrLines || lines[0] != "line 6" || lines[len(lines)-1] != fmt.Sprintf("line %d", stderrLines+5) {
		t.Errorf("tail of %d lines: %q", stderrLines+5, lines)
	}
	if !strings.Contains(log.String(), "[a] line 1\n") {
		t.Errorf("log %q lacks the first line under the adapter's name", log.String())
	}
}

// TestDeathError: a dead adapter's error gives its exit status and output, and says so when
// it exited cleanly or printed nothing.
func TestDeathError(t *testing.T) {
	dead := func(err error, lines ...string) *child {
		c := &child{ad: Adapter{Name: "a"}, pid: 42, done: make(chan struct{}), err: err}
		for _, l := range lines {
			c.line(l)
		}
		close(c.done)
		return c
	}
	if got := dead(nil).deathError().Error(); got != "adapter a (pid 42) died (exited with status 0); its last output:\n    (no output)" {
		t.Errorf("a clean, silent exit: %q", got)
	}
	got := dead(errors.New("exit status 3"), "Traceback", "ImportError: x").deathError().Error()
	if got != "adapter a (pid 42) died (exit status 3); its last output:\n    Traceback\n    ImportError: x" {
		t.Errorf("a crash: %q", got)
	}
}

// dyingErr is an Unavailable from a connection that broke because the adapter was killed: the
// harness reads its status while the process is being reaped (GRPCStatus SIGKILLs the child's
// process, whose Wait closes done a moment later).
type dyingErr struct {
	c    *child
	once sync.Once
}

func (e *dyingErr) Error() string { return "connection reset" }
func (e *dyingErr) GRPCStatus() *status.Status {
	e.once.Do(func() { syscall.Kill(e.c.pid, syscall.SIGKILL) })
	return status.New(codes.Unavailable, "connection reset")
}

// sleeper is a child around a real process that lives until it is killed.
func sleeper(t *testing.T) *child {
	t.Helper()
	cmd := exec.Command("sleep", "600")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &child{ad: Adapter{Name: "a"}, pid: cmd.Process.Pid, done: make(chan struct{})}
	go func() { c.err = cmd.Wait(); close(c.done) }()
	t.Cleanup(func() { cmd.Process.Kill(); <-c.done })
	return c
}

// TestCallErrorNamesWhatHappened: a failed call on a dead adapter names its death (also when
// the connection broke just before the process was reaped); one that outlived its deadline is
// a timeout (errors.Is ErrTimeout and DeadlineExceeded) saying the adapter did not answer,
// whether the deadline came from ctx or from gRPC; a cancelled one is context.Canceled; any
// other is a protocol error.
func TestCallErrorNamesWhatHappened(t *testing.T) {
	alive := func() *child { return &child{ad: Adapter{Name: "a"}, pid: 42, done: make(chan struct{})} }
	c := alive()
	c.err = errors.New("signal: killed")
	close(c.done)
	if err := c.callError("Send#1", errors.New("eof")); !strings.HasPrefix(err.Error(), "Send#1: adapter a (pid 42) died (signal: killed)") {
		t.Errorf("on a dead adapter: %v", err)
	}
	dying := sleeper(t)
	if err := dying.callError("Receive#2", &dyingErr{c: dying}); !strings.Contains(err.Error(), "died (signal: killed)") {
		t.Errorf("an Unavailable while the adapter dies: %v", err)
	}
	for _, cause := range []error{context.DeadlineExceeded, status.Error(codes.DeadlineExceeded, "deadline")} {
		err := alive().callError("Receive#1", cause)
		if !errors.Is(err, backends.ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) ||
			errors.Is(err, context.Canceled) || errors.Is(err, backends.ErrUnavailable) ||
			err.Error() != "Receive#1: adapter a (pid 42) did not answer within the deadline: timeout" {
			t.Errorf("%v: %v", cause, err)
		}
	}
	for _, cause := range []error{context.Canceled, status.Error(codes.Canceled, "canceled")} {
		if err := alive().callError("Ack#1", cause); !errors.Is(err, context.Canceled) || errors.Is(err, backends.ErrTimeout) {
			t.Errorf("%v: %v", cause, err)
		}
	}
	err := alive().callError("Open", status.Error(codes.Unimplemented, "no Open"))
	if !strings.Contains(err.Error(), "Open: adapter a (pid 42): protocol error") || errors.Is(err, backends.ErrTimeout) || errors.Is(err, context.Canceled) {
		t.Errorf("unimplemented: %v", err)
	}
}

// TestCallsAreBounded: a call whose ctx has no deadline gets DefaultCallTimeout, so a hung
// adapter never hangs a run; one with a deadline keeps it.
func TestCallsAreBounded(t *testing.T) {
	ctx, cancel := bound(context.Background())
	defer cancel()
	d, ok := ctx.Deadline()
	if !ok || time.Until(d) > DefaultCallTimeout || time.Until(d) < DefaultCallTimeout-time.Minute || time.Until(d) < time.Minute {
		t.Errorf("a ctx without a deadline: deadline %v (%v), want DefaultCallTimeout (minutes) from now", d, ok)
	}
	short, scancel := context.WithTimeout(context.Background(), time.Hour)
	defer scancel()
	want, _ := short.Deadline()
	ctx, cancel = bound(short)
	defer cancel()
	if got, _ := ctx.Deadline(); !got.Equal(want) {
		t.Errorf("a ctx with a deadline: %v, want its own %v", got, want)
	}
}

// TestExpiredCallNeverReachesTheAdapter: a call whose ctx has already ended is answered with
// the ctx's error without a request, and recorded as a timeout.
func TestExpiredCallNeverReachesTheAdapter(t *testing.T) {
	r := &recorder{}
	b := serveRecorder(t, r)
	ctx, cancel := context.WithTimeout(t.Context(), time.Nanosecond)
	<-ctx.Done()
	cancel()
	if _, err := b.TopicExists(ctx, "flow:tg:x"); !errors.Is(err, backends.ErrTimeout) {
		t.Errorf("expired ctx: %v", err)
	}
	if r.count("TopicExists") != 0 {
		t.Error("the call reached the adapter after its deadline")
	}
	if tr := b.Transcript(); !strings.Contains(tr, "TopicExists") || !strings.Contains(tr, "-> timeout (") {
		t.Errorf("transcript %q: want the call recorded as a timeout", tr)
	}
}

// TestProcessKey: an adapter's process is shared by the Backends opened with the same
// settings, whatever their order, and by no Backend with another value of any setting (a run
// against the authenticated side must not reuse the plain side's process).
func TestProcessKey(t *testing.T) {
	a := settingsKey("x", map[string]string{"KAFKA_BOOTSTRAP_SERVERS": "h:1", "KAFKA_SASL_PASSWORD": ""})
	if b := settingsKey("x", map[string]string{"KAFKA_SASL_PASSWORD": "", "KAFKA_BOOTSTRAP_SERVERS": "h:1"}); b != a {
		t.Errorf("the same settings: %s and %s", a, b)
	}
	for name, other := range map[string]string{
		"another password":  settingsKey("x", map[string]string{"KAFKA_BOOTSTRAP_SERVERS": "h:1", "KAFKA_SASL_PASSWORD": "p"}),
		"another adapter":   settingsKey("y", map[string]string{"KAFKA_BOOTSTRAP_SERVERS": "h:1", "KAFKA_SASL_PASSWORD": ""}),
		"a setting more":    settingsKey("x", map[string]string{"KAFKA_BOOTSTRAP_SERVERS": "h:1", "KAFKA_SASL_PASSWORD": "", InstanceSetting: "private-1"}),
		"value into a name": settingsKey("x", map[string]string{"KAFKA_BOOTSTRAP_SERVERSh:1": "", "KAFKA_SASL_PASSWORD": ""}),
	} {
		if other == a {
			t.Errorf("%s: the same process key %s", name, a)
		}
	}
}

// TestMergeSettings: an adapter gets the run's settings with its declaration's fixed ones over
// them, and merging changes neither.
func TestMergeSettings(t *testing.T) {
	run := map[string]string{"KAFKA_BOOTSTRAP_SERVERS": "h:1", "MODE": "run"}
	ad := Adapter{Settings: map[string]string{"MODE": "fixed"}}
	got := mergeSettings(ad, run)
	if len(got) != 2 || got["KAFKA_BOOTSTRAP_SERVERS"] != "h:1" || got["MODE"] != "fixed" {
		t.Errorf("merged %v", got)
	}
	if run["MODE"] != "run" || ad.Settings["MODE"] != "fixed" || len(ad.Settings) != 1 {
		t.Errorf("merging changed its inputs: %v %v", run, ad.Settings)
	}
	if got := mergeSettings(ad, nil); len(got) != 1 || got["MODE"] != "fixed" {
		t.Errorf("no run settings: %v", got)
	}
}

// lastValue is the value exec gives the process for key: the last entry of env wins.
func lastValue(env []string, key string) (string, bool) {
	v, ok := "", false
	for _, kv := range env {
		if k, val, _ := strings.Cut(kv, "="); k == key {
			v, ok = val, true
		}
	}
	return v, ok
}

// TestAdapterEnvironment: the adapter's environment is the harness's with the run's settings
// over it (a credential in the environment never reaches a run that sets it empty), the
// declaration's Env over those, and the placeholders of its command resolved.
func TestAdapterEnvironment(t *testing.T) {
	t.Setenv("KAFKA_SASL_PASSWORD", "from-the-environment")
	t.Setenv("MODE", "environment")
	ad := Adapter{Name: "env", Command: []string{"{repo}/adapter", "--flag"}, Env: map[string]string{"MODE": "declared"}}
	argv, env, err := argvEnv(t.Context(), ad, map[string]string{"KAFKA_SASL_PASSWORD": "", "MODE": "run"})
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := lastValue(env, "KAFKA_SASL_PASSWORD"); !ok || v != "" {
		t.Errorf("KAFKA_SASL_PASSWORD reaches the adapter as %q, want the run's empty setting", v)
	}
	if v, _ := lastValue(env, "MODE"); v != "declared" {
		t.Errorf("MODE = %q, want the declaration's", v)
	}
	if v, _ := lastValue(env, "PYTHONUNBUFFERED"); v != "1" {
		t.Errorf("PYTHONUNBUFFERED = %q: the adapter's output would arrive late", v)
	}
	if argv[0] != RepoRoot()+"/adapter" || argv[1] != "--flag" {
		t.Errorf("argv %q", argv)
	}
}

// TestAdapterPythonPath: a Python adapter finds the SDK and the generated stubs first, and
// what the user's PYTHONPATH names after them.
func TestAdapterPythonPath(t *testing.T) {
	needPython(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // first run makes the venv
	defer cancel()
	ad := pythonMemory()
	for _, user := range []string{"", "/user/lib"} {
		t.Setenv("PYTHONPATH", user)
		argv, env, err := argvEnv(ctx, ad, nil)
		if err != nil {
			t.Fatal(err)
		}
		want := RepoRoot() + "/" + SDKDir + ":" + GenDir(argv[0])
		if user != "" {
			want += ":" + user
		}
		if got, _ := lastValue(env, "PYTHONPATH"); got != want {
			t.Errorf("PYTHONPATH %q with the user's %q, want %q", got, user, want)
		}
		if !strings.HasSuffix(argv[0], "/bin/python") {
			t.Errorf("{python} became %q, want the virtualenv's", argv[0])
		}
	}
}

// TestTranscriptBounded: a transcript keeps the last maxTranscript lines and says how many it
// dropped before them.
func TestTranscriptBounded(t *testing.T) {
	tr := &transcript{start: time.Now()}
	tr.note("first")
	if got := tr.String(); got != "first" {
		t.Errorf("one line: %q", got)
	}
	for i := 0; i < maxTranscript+2; i++ {
		tr.note("line %d", i)
	}
	lines := strings.Split(tr.String(), "\n")
	if len(lines) != maxTranscript+1 || lines[0] != "(3 earlier lines dropped)" || lines[1] != "line 2" ||
		lines[len(lines)-1] != fmt.Sprintf("line %d", maxTranscript+1) {
		t.Errorf("%d lines, first %q %q, last %q", len(lines), lines[0], lines[1], lines[len(lines)-1])
	}
}

// TestTranscriptResults: a call's line says ok, the contract error with its code, or, for a
// timeout the harness's ctx gave (not an adapter that did not answer), just timeout.
func TestTranscriptResults(t *testing.T) {
	tr := &transcript{start: time.Now()}
	tr.add(time.Now(), "Send#1", "p", nil)
	tr.add(time.Now(), "Receive#1", "", backends.CtxErr(expired(), "Receive#1"))
	tr.add(time.Now(), "Receive#2", "", &noAnswerError{what: "Receive#2: adapter a did not answer within the deadline"})
	tr.add(time.Now(), "Ack#1", "id=1", FromWire(ToWire(backends.ErrUnknownDelivery)))
	lines := strings.Split(tr.String(), "\n")
	for i, want := range []string{"-> ok (", "-> timeout (", "-> ERROR timeout: Receive#2: adapter a did not answer", "-> ERROR unknown_delivery: "} {
		if !strings.Contains(lines[i], want) {
			t.Errorf("line %d %q lacks %q", i, lines[i], want)
		}
	}
}

func expired() context.Context {
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	cancel()
	return ctx
}

// TestSettingNamesOnly: the Open line of a transcript lists the settings' names, sorted, never
// their values (a password is a setting).
func TestSettingNamesOnly(t *testing.T) {
	if got := settingNames(map[string]string{"KAFKA_SASL_PASSWORD": "hunter2", "KAFKA_BOOTSTRAP_SERVERS": "h:1"}); got != "[KAFKA_BOOTSTRAP_SERVERS KAFKA_SASL_PASSWORD]" {
		t.Errorf("settingNames: %q", got)
	}
}

// TestKillTakesTheProcessGroup: killing an adapter kills what it started too (its process
// group: a wrapper script's interpreter, a broker the adapter runs), and waits for the reap.
func TestKillTakesTheProcessGroup(t *testing.T) {
	cmd := exec.Command("sh", "-c", "sleep 600 & echo $!; wait")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var line string
	if _, err := fmt.Fscanln(out, &line); err != nil {
		t.Fatal(err)
	}
	grandchild, err := strconv.Atoi(line)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(grandchild, syscall.SIGKILL) })
	c := &child{ad: Adapter{Name: "sh"}, pid: cmd.Process.Pid, done: make(chan struct{})}
	go func() { c.err = cmd.Wait(); close(c.done) }()
	c.kill()
	if !c.exited() {
		t.Fatal("kill returned before the adapter was reaped")
	}
	deadline := time.Now().Add(10 * time.Second)
	for alive(grandchild) {
		if time.Now().After(deadline) {
			t.Fatalf("the adapter's own child %d outlived the kill by 10 s", grandchild)
		}
		time.Sleep(20 * time.Millisecond) // polling a pid: there is no event to wait on
	}
}

// TestPlainPythonWithoutRequirements: an adapter whose command uses {python} but declares no
// requirements runs the python3 on PATH, in no virtualenv of ours.
func TestPlainPythonWithoutRequirements(t *testing.T) {
	t.Setenv("PYTHONPATH", "")
	argv, env, err := argvEnv(t.Context(), Adapter{Name: "plain", Command: []string{"{python}", "adapter.py"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if argv[0] != "python3" || argv[1] != "adapter.py" {
		t.Errorf("argv %q, want python3 adapter.py", argv)
	}
	if v, _ := lastValue(env, "PYTHONPATH"); v != "" {
		t.Errorf("PYTHONPATH %q: a plain python3 gets no SDK path", v)
	}
}

// TestPrepareFailsEarly: what Prepare cannot make fails it, before any spec opens the
// adapter: a Go adapter that does not build, a patch that is missing, a virtualenv whose
// requirements file is missing.
func TestPrepareFailsEarly(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	if err := Prepare(ctx, Adapter{Name: "nobuild", GoMain: "./backends/remote/testdata/no-such-main"}); err == nil || !strings.Contains(err.Error(), "adapter nobuild: go build") {
		t.Errorf("a Go adapter that does not build: %v", err)
	}
	needPython(t)
	missing := filepath.Join(t.TempDir(), "missing")
	if err := Prepare(ctx, Adapter{Name: "nopatch", Requirements: []string{SDKRequirements}, Patch: missing + ".patch"}); err == nil || !strings.Contains(err.Error(), "adapter nopatch: patch") {
		t.Errorf("a missing patch: %v", err)
	}
	if err := Prepare(ctx, Adapter{Name: "noreqs", Requirements: []string{missing + ".txt"}}); err == nil || !strings.Contains(err.Error(), missing+".txt") {
		t.Errorf("a missing requirements file: %v", err)
	}
}

// TestTranscriptDurations: a call's line gives its duration at 10 µs resolution (what a
// reader compares; the nanoseconds are noise).
func TestTranscriptDurations(t *testing.T) {
	tr := &transcript{start: time.Now()}
	tr.add(time.Now().Add(-1234567*time.Nanosecond), "Send#1", "p", nil)
	line := tr.String()
	i := strings.LastIndexByte(line, '(')
	d, err := time.ParseDuration(strings.TrimSuffix(line[i+1:], ")"))
	if err != nil || d < 1234567*time.Nanosecond || d%(10*time.Microsecond) != 0 {
		t.Errorf("duration in %q: %v, %v; want at least 1.23ms, a multiple of 10µs", line, d, err)
	}
}
