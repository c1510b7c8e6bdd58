package remote

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestFromEnviron(t *testing.T) {
	got, err := FromEnviron([]string{
		"PUBSUB_ADAPTER_MY_KAFKA={python} -m my_adapter --flag 'a b'",
		"PUBSUB_ADAPTER_MY_KAFKA_BROKER=kafka",
		"PUBSUB_ADAPTER_MY_KAFKA_REQUIREMENTS=backends/remote/python/requirements.txt my/reqs.txt",
		"PUBSUB_ADAPTER_MY_KAFKA_DIR=adapters",
		"PUBSUB_ADAPTER_LISTEN=unix:/x", // the child's own variable, not a declaration
		"PUBSUB_ADAPTER_RUST=./target/release/adapter",
		"OTHER=1",
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []Adapter{
		{Name: "my-kafka", Broker: "kafka", Dir: "adapters", Command: []string{"{python}", "-m", "my_adapter", "--flag", "a b"},
			Requirements: []string{"backends/remote/python/requirements.txt", "my/reqs.txt"},
			Description:  "user-declared adapter: {python} -m my_adapter --flag 'a b'", OptIn: true},
		{Name: "rust", Command: []string{"./target/release/adapter"}, Description: "user-declared adapter: ./target/release/adapter", OptIn: true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %+v\nwant %+v", got, want)
	}
	_, err = FromEnviron([]string{"PUBSUB_ADAPTER_X=cmd", "PUBSUB_ADAPTER_X_BROKER=rabbit", "PUBSUB_ADAPTER_Y='unterminated"})
	if err == nil || !strings.Contains(err.Error(), `PUBSUB_ADAPTER_X_BROKER="rabbit"`) || !strings.Contains(err.Error(), "PUBSUB_ADAPTER_Y=") {
		t.Fatalf("bad declarations: %v", err)
	}
}

// TestMissingPythonIsOneLine: without python3 on PATH, a Python adapter fails with one line
// that says what to install.
func TestMissingPythonIsOneLine(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := Venv(t.Context(), []string{SDKRequirements})
	if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "python3 not found on PATH") {
		t.Fatalf("got %q", err)
	}
}

// TestExtends: a user adapter that extends a shipped one keeps its command, broker and
// requirements and adds its own pip arguments; an unknown base is one line naming the shipped.
func TestExtends(t *testing.T) {
	got, err := FromEnviron([]string{
		"PUBSUB_ADAPTER_MY_TG_EXTENDS=trustgraph-kafka",
		"PUBSUB_ADAPTER_MY_TG_PIP=-e '/src/my tg/trustgraph-base'",
		"PUBSUB_ADAPTER_MY_TG_REQUIREMENTS=/abs/extra.txt",
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Name != "my-tg" || got[0].Extends != "trustgraph-kafka" ||
		!reflect.DeepEqual(got[0].Pip, []string{"-e", "/src/my tg/trustgraph-base"}) {
		t.Fatalf("got %+v", got)
	}
	ext, err := extend(declared, got[0])
	if err != nil {
		t.Fatal(err)
	}
	var base Adapter
	for _, a := range declared {
		if a.Name == "trustgraph-kafka" {
			base = a
		}
	}
	if !reflect.DeepEqual(ext.Command, base.Command) || ext.Broker != "kafka" || !ext.OptIn ||
		!reflect.DeepEqual(ext.Requirements, append(append([]string(nil), base.Requirements...), "/abs/extra.txt")) ||
		!strings.Contains(ext.Description, "pip install -e /src/my tg/trustgraph-base") {
		t.Fatalf("extended: %+v", ext)
	}
	_, err = extend(declared, Adapter{Name: "x", Extends: "nope"})
	if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "PUBSUB_ADAPTER_X_EXTENDS=\"nope\" is not a shipped adapter") {
		t.Fatalf("unknown base: %v", err)
	}
}

// TestTrustGraphSource: a checkout (trustgraph-base in a subdirectory) and a trustgraph-base
// tree are found and described with their git state; anything else is one line.
func TestTrustGraphSource(t *testing.T) {
	checkout := t.TempDir()
	base := filepath.Join(checkout, "trustgraph-base")
	if err := os.MkdirAll(filepath.Join(base, "trustgraph", "base"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(base, "pyproject.toml"), []byte("[project]\nname='trustgraph-base'\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{checkout, base} {
		got, source, err := TrustGraphSource(dir)
		if err != nil || got != base || !strings.Contains(source, base) || !strings.Contains(source, "not a git checkout") {
			t.Fatalf("TrustGraphSource(%s) = %q, %q, %v", dir, got, source, err)
		}
	}
	if _, err := exec.LookPath("git"); err == nil {
		git := func(args ...string) {
			cmd := exec.Command("git", append([]string{"-C", checkout, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("git %v: %v\n%s", args, err, out)
			}
		}
		git("init", "-q")
		git("add", ".")
		git("commit", "-qm", "x")
		if _, source, _ := TrustGraphSource(checkout); !strings.Contains(source, ", clean)") {
			t.Fatalf("clean: %q", source)
		}
		if err := os.WriteFile(filepath.Join(base, "trustgraph", "base", "edit.py"), []byte("x = 1\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, source, _ := TrustGraphSource(checkout); !strings.Contains(source, "dirty: 1 files changed") {
			t.Fatalf("dirty: %q", source)
		}
	}
	versioned := t.TempDir()
	if err := os.MkdirAll(filepath.Join(versioned, "trustgraph", "base"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(versioned, "pyproject.toml"),
		[]byte("[tool.setuptools.dynamic]\nversion = {attr = \"trustgraph.base_version.__version__\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := TrustGraphSource(versioned); err == nil || !strings.Contains(err.Error(), "make update-package-versions") {
		t.Fatalf("no version file: %v", err)
	}
	for _, dir := range []string{"relative/dir", filepath.Join(checkout, "missing"), t.TempDir()} {
		_, _, err := TrustGraphSource(dir)
		if err == nil || strings.Contains(err.Error(), "\n") || !strings.HasPrefix(err.Error(), "TRUSTGRAPH_SOURCE="+dir+": ") {
			t.Fatalf("TrustGraphSource(%s): %v", dir, err)
		}
	}
	ads, err := withTrustGraphSource(append([]Adapter(nil), declared...), func(k string) string {
		if k == SourceEnv {
			return checkout
		}
		return ""
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range ads {
		switched := slices.Contains(sourceAdapters, a.Name)
		if switched != (a.Source != "") || switched != slices.Contains(a.Pip, base) {
			t.Fatalf("%s: source %q pip %v", a.Name, a.Source, a.Pip)
		}
	}
}

// TestHashPip: a local directory installed without -e is keyed by its files, so an edit makes
// a new virtualenv; an editable one by its packaging files only; a missing path is an error.
func TestHashPip(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "setup.py"), []byte("setup()\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	key := func(pip ...string) string {
		h := sha256.New()
		if err := hashPip(h, pip); err != nil {
			t.Fatal(err)
		}
		return hex.EncodeToString(h.Sum(nil))
	}
	copied, editable := key(dir), key("-e", dir)
	if err := os.WriteFile(filepath.Join(dir, "mod.py"), []byte("x = 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if key(dir) == copied {
		t.Fatal("an edit under a non-editable path did not change the key")
	}
	if key("-e", dir) != editable {
		t.Fatal("an edit of an editable install's code changed the key (it is read live)")
	}
	if err := hashPip(sha256.New(), []string{filepath.Join(dir, "missing")}); err == nil || strings.Contains(err.Error(), "\n") {
		t.Fatalf("missing path: %v", err)
	}
}

// TestAbsoluteRequirements: an absolute requirements path is used as it is (not joined under
// the repository root), and a missing one is one line naming it.
func TestAbsoluteRequirements(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not on PATH: Venv stops before reading requirements")
	}
	missing := filepath.Join(t.TempDir(), "reqs.txt")
	_, err := Venv(t.Context(), []string{missing})
	if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "open "+missing+": no such file") {
		t.Fatalf("got %v", err)
	}
	if got := repoPath("/root", "a/b.txt"); got != filepath.Join("/root", "a/b.txt") {
		t.Fatalf("relative: %s", got)
	}
}

// A declared broker kind is any registered one (fixtures.KindRecord), and the adapter reads
// its kind's environment (EnvPrefix) into its settings.
func TestBrokerKindFromRecords(t *testing.T) {
	got, err := FromEnviron([]string{"PUBSUB_ADAPTER_MQ=cmd", "PUBSUB_ADAPTER_MQ_BROKER=rabbitmq"})
	if err != nil || len(got) != 1 || got[0].Broker != "rabbitmq" {
		t.Fatalf("rabbitmq declaration: %+v, %v", got, err)
	}
	if env := got[0].Descriptor().Env; !reflect.DeepEqual(env, []string{"RABBITMQ_*"}) {
		t.Errorf("descriptor env %v, want [RABBITMQ_*]", env)
	}
	_, err = FromEnviron([]string{"PUBSUB_ADAPTER_X=cmd", "PUBSUB_ADAPTER_X_BROKER=nats"})
	if err == nil || !strings.Contains(err.Error(), "kafka, pulsar, rabbitmq") {
		t.Errorf("unknown kind: %v; want the known kinds listed", err)
	}
}
