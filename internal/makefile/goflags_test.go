package makefile

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Every go command the Makefile runs gets its -trimpath, the ones run while make reads the
// Makefile ($(shell ...)) too: GNU make 4.3 (Debian bookworm's) exports no variable to
// $(shell), and a `go run` without -trimpath is keyed by the clone's directory in Go's build
// cache. The default BACKENDS list (`go run ./backends/cmd/backends`) then compiled the
// module's packages and linked the cgo registry again in every fresh clone: 4.7 CPU-s of
// each `make conformance` there, outside the suite's cost line (process accounting, 6 Dec).
func TestEveryGoCommandGetsTrimpath(t *testing.T) {
	mk, root := makeAndRoot(t)
	tools := t.TempDir()
	goBin := filepath.Join(tools, "go")
	logFile := filepath.Join(tools, "calls.log")
	// Logs each call with the GOFLAGS it got; answers the registry listing with one name.
	fake := `#!/bin/sh
echo "GOFLAGS=[$GOFLAGS] $*" >> "` + logFile + `"
case "$1" in
version) echo "go version fake";;
run) echo kafka;;
list) echo x;;
esac
`
	if err := os.WriteFile(goBin, []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	dir := moduleTree(t)
	// What make expands while reading: the default backends, the unit packages, the key of
	// the linked binaries.
	cmd := exec.Command(mk, "-f", filepath.Join(root, "Makefile"), "-C", dir, "--no-print-directory",
		"GO="+goBin, "SETUP_NEEDS=", "--eval", "show-expansions: ; @echo $(BACKENDS) $(UNIT_PKGS) $(SOURCE_KEY)", "show-expansions")
	cmd.Env = cleanEnv()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make: %v\n%s", err, out)
	}
	if !strings.HasPrefix(string(out), "kafka ") {
		t.Fatalf("BACKENDS did not come from the registry listing: %q", out)
	}
	b, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	calls := strings.Split(strings.TrimSpace(string(b)), "\n")
	seen := map[string]bool{}
	for _, c := range calls {
		verb := strings.Fields(strings.SplitN(c, "] ", 2)[1])[0]
		seen[verb] = true
		if !strings.Contains(c, "-trimpath") {
			t.Errorf("a go command without -trimpath in GOFLAGS: %s", c)
		}
	}
	for _, verb := range []string{"run", "list", "version", "env"} {
		if !seen[verb] {
			t.Errorf("no `go %s` call seen; the calls were:\n%s", verb, b)
		}
	}
}
