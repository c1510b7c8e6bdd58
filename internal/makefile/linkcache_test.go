// Package makefile tests the Makefile's own logic (it has no Go code of its own): here, the
// cache of linked binaries (BIN_CACHE), run with a stand-in for the go command in a tree of
// its own, so no real build runs.
package makefile

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pubsub-conformance/harness/internal/modroot"
)

// fakeGo answers `go version` and `go env`, and for `go build|test ... -o FILE ...` writes FILE
// and logs the call: the log counts the links.
const fakeGo = `#!/bin/sh
case "$1" in
version) echo "go version fake";;
env) echo fake-env;;
build|test) echo "$*" >> "$(dirname "$0")/links.log"; while [ "$1" != "-o" ]; do shift; done; echo "$LINKED" > "$2"; chmod +x "$2";;
esac
`

// A binary is linked once per content of the sources and taken from BIN_CACHE afterwards, in
// this tree or a fresh clone elsewhere: the key is the content, not a file's mtime or path.
func TestLinkedBinariesAreCachedByContent(t *testing.T) {
	mk, root := makeAndRoot(t)
	tools := t.TempDir()
	goBin := filepath.Join(tools, "go")
	if err := os.WriteFile(goBin, []byte(fakeGo), 0o755); err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(t.TempDir(), "cache")
	tree := func() string {
		d := moduleTree(t)
		if err := os.MkdirAll(filepath.Join(d, "internal/workload/testdata/corpus"), 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	links := func() int {
		b, _ := os.ReadFile(filepath.Join(tools, "links.log"))
		return strings.Count(string(b), "\n")
	}
	cost := func(dir, linked string) string {
		t.Helper()
		bin := filepath.Join(dir, "reports/out/bin/cost")
		_ = os.Remove(bin)
		cmd := exec.Command(mk, "-f", filepath.Join(root, "Makefile"), "-C", dir, "--no-print-directory",
			"GO="+goBin, "BIN_CACHE="+cache, "SETUP_NEEDS=", "reports/out/bin/cost")
		cmd.Env = append(cleanEnv(), "LINKED="+linked)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("make cost in %s: %v\n%s", dir, err, out)
		}
		b, err := os.ReadFile(bin)
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(b))
	}

	a := tree()
	if got := cost(a, "first"); got != "first" || links() != 1 {
		t.Fatalf("first build: got %q after %d links, want a link", got, links())
	}
	if got := cost(a, "second"); got != "first" || links() != 1 {
		t.Errorf("same sources: got %q after %d links, want the cached binary and no link", got, links())
	}
	b := tree() // a fresh clone at another path, newer mtimes
	if got := cost(b, "third"); got != "first" || links() != 1 {
		t.Errorf("a fresh clone of the same sources: got %q after %d links, want the cached binary", got, links())
	}
	write(t, filepath.Join(b, "x/a.go"), "package x\n\n// changed\n")
	if got := cost(b, "fourth"); got != "fourth" || links() != 2 {
		t.Errorf("changed content: got %q after %d links, want a new link", got, links())
	}
	write(t, filepath.Join(b, "x/b.go"), "package x\n") // an untracked file counts too
	if got := cost(b, "fifth"); got != "fifth" || links() != 3 {
		t.Errorf("an added file: got %q after %d links, want a new link", got, links())
	}
}

// makeAndRoot returns the make on PATH and the repository root whose Makefile is tested; it
// skips the test without make or git (the Makefile lists sources with git).
func makeAndRoot(t *testing.T) (mk, root string) {
	t.Helper()
	mk, err := exec.LookPath("make")
	if err != nil {
		t.Skip("no make on PATH: the Makefile is not what is tested here then")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git on PATH: the Makefile lists sources with git")
	}
	root, err = modroot.Find()
	if err != nil {
		t.Fatal(err)
	}
	return mk, root
}

// moduleTree is a git work tree with a one-package module in it, for make -C.
func moduleTree(t *testing.T) string {
	t.Helper()
	d := t.TempDir()
	for name, body := range map[string]string{"go.mod": "module x\n", "go.sum": "", "x/a.go": "package x\n"} {
		write(t, filepath.Join(d, name), body)
	}
	if out, err := exec.Command("git", "-C", d, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	return d
}

func write(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// cleanEnv is the environment without an outer make's or the user's settings that would
// choose for these runs.
func cleanEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "MAKEFLAGS", "MFLAGS", "MAKELEVEL", "BIN_CACHE", "PUBSUB_CACHE", "GOFLAGS":
			continue
		}
		out = append(out, kv)
	}
	return out
}
