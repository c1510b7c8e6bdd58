package suite

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/pubsub-conformance/harness/backends"
	"github.com/pubsub-conformance/harness/specs"
)

// CrashChildEnv names the variable that turns the suite's test binary into a crash child.
const CrashChildEnv = "PUBSUB_CRASH_CHILD"

type crashSpec struct {
	Config       backends.Config `json:"config"`
	Topic        string          `json:"topic"`
	Subscription string          `json:"subscription"`
	Plan         specs.CrashPlan `json:"plan"`
}

type crashLine struct {
	Ready    bool               `json:"ready,omitempty"`
	Delivery *backends.Delivery `json:"delivery,omitempty"`
	Acked    bool               `json:"acked,omitempty"` // every ack of the plan returned
	Error    string             `json:"error,omitempty"`
}

// crashInChild re-runs the current test binary as a crash child (see RunCrashChild), reads
// the deliveries it reports, SIGKILLs it once it followed the plan, and returns what it received.
func crashInChild(ctx context.Context, cfg backends.Config, topic, sub string, plan specs.CrashPlan) ([]backends.Delivery, error) {
	cfg.Log = nil // not serialisable; the child logs to its stderr
	spec, err := json.Marshal(crashSpec{Config: cfg, Topic: topic, Subscription: sub, Plan: plan})
	if err != nil {
		return nil, fmt.Errorf("crash child spec: %w", err)
	}
	cmd := exec.Command(selfExe(), "-test.run=^$") // no tests: TestMain diverts before m.Run
	cmd.Env = append(os.Environ(), CrashChildEnv+"="+string(spec))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	var stderr strings.Builder
	cmd.Stderr = &limitedWriter{w: &stderr, n: 8 << 10}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("crash child pipe: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start crash child: %w", err)
	}
	var once sync.Once
	kill := func() {
		once.Do(func() {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			_ = cmd.Wait()
		})
	}
	defer kill()

	type result struct {
		got []backends.Delivery
		err error
	}
	done := make(chan result, 1)
	go func() {
		var got []backends.Delivery
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			var l crashLine
			if json.Unmarshal(sc.Bytes(), &l) != nil {
				continue
			}
			switch {
			case l.Error != "":
				done <- result{got, fmt.Errorf("crash child: %s", l.Error)}
				return
			case l.Delivery != nil:
				got = append(got, *l.Delivery)
				if len(got) == plan.Receive && len(plan.Ack) == 0 {
					done <- result{got, nil}
					return
				}
			case l.Acked:
				done <- result{got, holdBeforeKill(ctx, plan)}
				return
			}
		}
		done <- result{got, fmt.Errorf("crash child exited after %d of %d messages: %s", len(got), plan.Receive, strings.TrimSpace(stderr.String()))}
	}()
	select {
	case r := <-done:
		kill() // SIGKILL: no Close, no commit, no goodbye to the broker
		return r.got, r.err
	case <-ctx.Done():
		kill()
		return nil, backends.CtxErr(ctx, "crash child")
	}
}

// holdBeforeKill lets the crashing consumer live plan.HoldAfterAcks after its last ack. Not a
// synchronisation: the hold is the quantity under test (C-ACK-6 bounds how long a backend may
// keep an ack unstored), so it is waited out on the clock.
func holdBeforeKill(ctx context.Context, plan specs.CrashPlan) error {
	t := time.NewTimer(plan.HoldAfterAcks)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return backends.CtxErr(ctx, "crash consumer: hold after the acks")
	}
}

// followCrashPlan receives plan.Receive messages on c, reporting each, then acks the ones the
// plan names in its order. The crash child and the in-process crash consumer share it.
func followCrashPlan(ctx context.Context, c backends.Consumer, plan specs.CrashPlan, received func(backends.Delivery)) ([]backends.Delivery, error) {
	var got []backends.Delivery
	for len(got) < plan.Receive {
		rctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		d, err := c.Receive(rctx)
		cancel()
		if err != nil {
			return got, fmt.Errorf("receive %d of %d: %w", len(got)+1, plan.Receive, err)
		}
		got = append(got, d)
		received(d)
	}
	for _, i := range plan.Ack {
		if i < 0 || i >= len(got) {
			return got, fmt.Errorf("crash plan acks message %d of %d", i, len(got))
		}
		actx, cancel := context.WithTimeout(ctx, 15*time.Second)
		err := c.Ack(actx, got[i])
		cancel()
		if err != nil {
			return got, fmt.Errorf("ack message %d (%s): %w", i, got[i].ID, err)
		}
	}
	return got, nil
}

// selfExe is the running test binary. Why /proc/self/exe: ginkgo deletes (and concurrent runs
// rewrite) suite/suite.test, while the running image stays reachable through /proc.
func selfExe() string {
	if _, err := os.Stat("/proc/self/exe"); err == nil {
		return "/proc/self/exe"
	}
	return os.Args[0]
}

// RunCrashChild is the crash child's whole life: open the backend, subscribe at earliest,
// follow the crash plan (report each message as a JSON line, then ack what it names and say
// so), then wait to be killed. It returns the exit code. Called from the suite's TestMain when
// CrashChildEnv is set.
func RunCrashChild(specJSON string) int {
	var s crashSpec
	enc := json.NewEncoder(os.Stdout)
	fail := func(err error) int {
		_ = enc.Encode(crashLine{Error: err.Error()})
		return 1
	}
	if err := json.Unmarshal([]byte(specJSON), &s); err != nil {
		return fail(fmt.Errorf("parse %s: %w", CrashChildEnv, err))
	}
	// The parent kills us; this bound only guards against a parent that vanished.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	b, err := backends.Open(ctx, s.Config)
	if err != nil {
		return fail(fmt.Errorf("open %s: %w", s.Config.Backend, err))
	}
	c, err := b.Consumer(ctx, s.Topic, s.Subscription, backends.WithPosition(backends.Earliest))
	if err != nil {
		return fail(fmt.Errorf("consumer: %w", err))
	}
	_ = enc.Encode(crashLine{Ready: true})
	if _, err := followCrashPlan(ctx, c, s.Plan, func(d backends.Delivery) { _ = enc.Encode(crashLine{Delivery: &d}) }); err != nil {
		return fail(err)
	}
	if len(s.Plan.Ack) > 0 {
		_ = enc.Encode(crashLine{Acked: true})
	}
	<-ctx.Done() // hold the rest unacked until SIGKILL
	return 0
}

type limitedWriter struct {
	mu sync.Mutex
	w  *strings.Builder
	n  int
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if room := l.n - l.w.Len(); room > 0 {
		if len(p) > room {
			l.w.Write(p[:room])
		} else {
			l.w.Write(p)
		}
	}
	return len(p), nil
}
