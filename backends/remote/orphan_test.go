package remote

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pubsub-conformance/harness/backends"
)

// harnessChildEnv turns this test binary into a stand-in harness that starts an adapter,
// prints its pid and waits to be killed (TestAdapterDiesWithHarness).
const harnessChildEnv = "PUBSUB_TEST_HARNESS_CHILD"

func TestMain(m *testing.M) {
	if name := os.Getenv(harnessChildEnv); name != "" {
		os.Exit(harnessChild(name))
	}
	os.Exit(m.Run())
}

func harnessChild(name string) int {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	for _, ad := range declared {
		if ad.Name != name {
			continue
		}
		if err := Prepare(ctx, ad); err != nil {
			fmt.Println("error:", err)
			return 1
		}
		b, err := Open(ctx, ad, backends.Config{Backend: name})
		if err != nil {
			fmt.Println("error:", err)
			return 1
		}
		fmt.Println("adapter-pid", b.c.pid)
		<-ctx.Done() // killed long before
		return 0
	}
	fmt.Println("error: no adapter", name)
	return 1
}

// TestAdapterDiesWithHarness: an adapter process dies with the harness that started it, when
// the harness is SIGKILLed (no chance to clean up) and when it is interrupted (Ctrl-C, which
// reaches only the harness: the adapter has its own process group).
func TestAdapterDiesWithHarness(t *testing.T) {
	needPython(t)
	for _, tc := range []struct {
		adapter string
		sig     syscall.Signal
	}{{"python-memory", syscall.SIGKILL}, {"python-memory", syscall.SIGINT}, {"go-memory", syscall.SIGKILL}} {
		t.Run(tc.adapter+"/"+tc.sig.String(), func(t *testing.T) {
			self, err := os.Executable()
			if err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(self, "-test.run=^$")
			cmd.Env = append(os.Environ(), harnessChildEnv+"="+tc.adapter)
			cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill()
			pidc := make(chan string, 1)
			go func() {
				sc := bufio.NewScanner(out)
				for sc.Scan() {
					if strings.HasPrefix(sc.Text(), "adapter-pid ") || strings.HasPrefix(sc.Text(), "error:") {
						pidc <- sc.Text()
						return
					}
				}
				pidc <- "error: the stand-in harness ended without a pid"
			}()
			var line string
			select {
			case line = <-pidc:
			case <-time.After(2 * time.Minute):
				t.Fatal("the stand-in harness did not start its adapter within 2 minutes")
			}
			pid, err := strconv.Atoi(strings.TrimPrefix(line, "adapter-pid "))
			if err != nil {
				t.Fatal(line)
			}
			if err := syscall.Kill(pid, 0); err != nil {
				t.Fatalf("adapter pid %d is not running: %v", pid, err)
			}
			if err := cmd.Process.Signal(tc.sig); err != nil {
				t.Fatal(err)
			}
			_ = cmd.Wait()
			deadline := time.Now().Add(10 * time.Second)
			for alive(pid) {
				if time.Now().After(deadline) {
					_ = syscall.Kill(pid, syscall.SIGKILL)
					t.Fatalf("adapter pid %d outlived its harness by 10 s", pid)
				}
				time.Sleep(20 * time.Millisecond) // polling a pid: there is no event to wait on
			}
		})
	}
}

// alive reports whether pid runs: it exists and is not a zombie waiting to be reaped.
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// the state follows the command name in parentheses: "123 (python) S ..."
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z'
	}
	return true
}
