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
	"time"
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
	// The async adapters take the working copy; trustgraph-kafka-sync keeps its release (2.8.1's
	// KafkaBackend is gone from newer sources), and so does every other adapter.
	async := []string{"trustgraph-kafka", "trustgraph-pulsar", "trustgraph-rabbitmq"}
	for _, a := range ads {
		switched := slices.Contains(async, a.Name)
		if switched != strings.Contains(a.Source, "working copy") || switched != slices.Contains(a.Pip, base) {
			t.Fatalf("%s: source %q pip %v", a.Name, a.Source, a.Pip)
		}
	}
	// A relative path, even one that exists from here, is refused: the suite runs elsewhere.
	t.Chdir(filepath.Dir(checkout))
	if _, _, err := TrustGraphSource(filepath.Base(checkout)); err == nil || !strings.Contains(err.Error(), "absolute path") {
		t.Fatalf("a relative TRUSTGRAPH_SOURCE that exists: %v", err)
	}
}

// writeUnder writes content to the file rel below dir, making its directories.
func writeUnder(t *testing.T, dir, rel, content string) {
	t.Helper()
	p := filepath.Join(dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// setupPyDir is a directory pip could install: a setup.py in it.
func setupPyDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "setup.py"), []byte("setup()\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// pipKey is what hashPip writes for pip, as hex.
func pipKey(t *testing.T, pip ...string) string {
	t.Helper()
	h := sha256.New()
	if err := hashPip(h, pip); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// TestHashPip: a local directory installed without -e is keyed by its files, so an edit makes
// a new virtualenv; an editable one by its packaging files only; a missing path is an error.
func TestHashPip(t *testing.T) {
	dir := setupPyDir(t)
	key := func(pip ...string) string { return pipKey(t, pip...) }
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

// TestVenvKey: a virtualenv is named by what is installed in it: the python, the protocol's
// schema, the requirements files' content (not when they were written), the pip arguments and,
// for an editable working copy, its packaging files (not its code, which is read live).
func TestVenvKey(t *testing.T) {
	root := t.TempDir()
	write := func(rel, content string) { writeUnder(t, root, rel, content) }
	write("proto/pubsub/v1/adapter.proto", "syntax = \"proto3\";\n")
	write("sdk.txt", "grpcio==1.0\n")
	write("tg.txt", "trustgraph-base==2.11.1\n")
	write("tg-old.txt", "trustgraph-base==2.8.1\n")
	write("wc/pyproject.toml", "[project]\nname='trustgraph-base'\n")
	write("wc/trustgraph/base/x.py", "x = 1\n")
	py := []byte("3.11.2 (main)")
	key := func(py []byte, reqs []string, pip ...string) string {
		t.Helper()
		k, err := venvKey(py, root, reqs, pip)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	wc := filepath.Join(root, "wc")
	pinned := key(py, []string{"sdk.txt", "tg.txt"})
	if len(pinned) != 16 || key(py, []string{"sdk.txt", "tg.txt"}) != pinned {
		t.Fatalf("key %q: want 16 hex digits, the same for the same inputs", pinned)
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(filepath.Join(root, "tg.txt"), old, old); err != nil {
		t.Fatal(err)
	}
	if key(py, []string{"sdk.txt", "tg.txt"}) != pinned {
		t.Error("touching a requirements file changed the key: it must be its content")
	}
	editable := key(py, []string{"sdk.txt", "tg.txt"}, "-e", wc)
	for name, other := range map[string]string{
		"another python":               key([]byte("3.12.0 (main)"), []string{"sdk.txt", "tg.txt"}),
		"another trustgraph-base":      key(py, []string{"sdk.txt", "tg-old.txt"}),
		"without the adapter's pins":   key(py, []string{"sdk.txt"}),
		"a working copy over the pins": editable,
	} {
		if other == pinned {
			t.Errorf("%s: same virtualenv as the pinned release", name)
		}
	}
	write("wc/trustgraph/base/x.py", "x = 2\n")
	if key(py, []string{"sdk.txt", "tg.txt"}, "-e", wc) != editable {
		t.Error("an edit of the working copy's code changed the key (an editable install reads it live)")
	}
	write("wc/pyproject.toml", "[project]\nname='trustgraph-base'\ndependencies=['x']\n")
	if key(py, []string{"sdk.txt", "tg.txt"}, "-e", wc) == editable {
		t.Error("a dependency change of the working copy kept the old virtualenv")
	}
	write("tg.txt", "trustgraph-base==2.11.2\n")
	if key(py, []string{"sdk.txt", "tg.txt"}) == pinned {
		t.Error("a changed pin kept the old virtualenv")
	}
	before := key(py, []string{"sdk.txt", "tg.txt"})
	write("proto/pubsub/v1/adapter.proto", "syntax = \"proto3\";\n// v2\n")
	if key(py, []string{"sdk.txt", "tg.txt"}) == before {
		t.Error("a changed protocol schema kept the old virtualenv (its stubs are generated into it)")
	}
	if _, err := venvKey(py, root, []string{"missing.txt"}, nil); err == nil || !strings.Contains(err.Error(), "missing.txt") {
		t.Errorf("a missing requirements file: %v", err)
	}
}

// TestTrustGraphSourceVenvs: with TRUSTGRAPH_SOURCE the async TrustGraph adapters get a
// virtualenv of the working copy, one per working copy, never the pinned release's; the
// adapters it does not switch keep theirs.
func TestTrustGraphSourceVenvs(t *testing.T) {
	mkSource := func() string {
		d := t.TempDir()
		if err := os.MkdirAll(filepath.Join(d, "trustgraph", "base"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "pyproject.toml"), []byte("[project]\nname='trustgraph-base'\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return d
	}
	keys := func(source string) map[string]string {
		t.Helper()
		ads, err := withTrustGraphSource(append([]Adapter(nil), declared...), func(k string) string {
			if k == SourceEnv {
				return source
			}
			return ""
		})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, a := range ads {
			if len(a.Requirements) == 0 {
				continue
			}
			k, err := venvKey([]byte("3.11"), RepoRoot(), a.Requirements, a.Pip)
			if err != nil {
				t.Fatal(err)
			}
			out[a.Name] = k
		}
		return out
	}
	shipped, one, other := keys(""), keys(mkSource()), keys(mkSource())
	for name, k := range shipped {
		switched := slices.Contains(sourceAdapters, name)
		if switched && (one[name] == k || one[name] == other[name]) {
			t.Errorf("%s: the working copy's virtualenv %s is the pinned one's %s or another copy's %s", name, one[name], k, other[name])
		}
		if !switched && one[name] != k {
			t.Errorf("%s: TRUSTGRAPH_SOURCE changed the virtualenv of an adapter it does not switch", name)
		}
	}
	if shipped["trustgraph-kafka"] != shipped["trustgraph-pulsar"] || shipped["trustgraph-kafka"] == shipped["trustgraph-kafka-sync"] {
		t.Errorf("pinned virtualenvs: one per trustgraph-base release, got %v", shipped)
	}
}

// TestExtendsOverrides: a user declaration that extends a shipped adapter replaces its broker
// and directory only when it sets them, and the description says what the extension added,
// nothing when it added no pip arguments.
func TestExtendsOverrides(t *testing.T) {
	base := Adapter{Name: "base", Broker: "kafka", Dir: "adapters/base", Description: "the base",
		Command: []string{"{python}", "-m", "base"}, Requirements: []string{"a.txt"}, Pip: []string{"-e", "/src/a"}}
	plain, err := extend([]Adapter{base}, Adapter{Name: "mine", Extends: "base"})
	if err != nil {
		t.Fatal(err)
	}
	if plain.Broker != "kafka" || plain.Dir != "adapters/base" || plain.Description != "the base" ||
		!reflect.DeepEqual(plain.Pip, base.Pip) || !reflect.DeepEqual(plain.Command, base.Command) {
		t.Errorf("an extension that sets nothing is the base under another name: %+v", plain)
	}
	moved, err := extend([]Adapter{base}, Adapter{Name: "mine", Extends: "base", Broker: "pulsar", Dir: "/abs/mine",
		Command: []string{"./mine"}, Pip: []string{"x==1"}})
	if err != nil {
		t.Fatal(err)
	}
	if moved.Broker != "pulsar" || moved.Dir != "/abs/mine" || !reflect.DeepEqual(moved.Command, []string{"./mine"}) ||
		!reflect.DeepEqual(moved.Pip, []string{"-e", "/src/a", "x==1"}) || moved.Description != "the base; extended with pip install x==1" {
		t.Errorf("an extension's own broker, directory, command and pip arguments: %+v", moved)
	}
	if !reflect.DeepEqual(base.Pip, []string{"-e", "/src/a"}) {
		t.Errorf("extending changed the shipped adapter's pip arguments: %v", base.Pip)
	}
}

// TestFromEnvironReadsOnlyItsPrefix: only PUBSUB_ADAPTER_<NAME> variables declare adapters;
// the rest of the environment (long names included) declares none.
func TestFromEnvironReadsOnlyItsPrefix(t *testing.T) {
	got, err := FromEnviron([]string{
		"XDG_RUNTIME_DIRECTORY_OF_THIS_SESSION=/run/user/1000",
		"KAFKA_BOOTSTRAP_SERVERS_FOR_THE_RUN=h:1",
		"NOT_PUBSUB_ADAPTER_X=cmd",
		"PUBSUB_ADAPTER_ONE=cmd one",
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Name != "one" {
		t.Fatalf("declared %+v, want the one adapter PUBSUB_ADAPTER_ONE", got)
	}
}

// TestHashPipForms: what keys a pip argument is its content where pip copies it: a local
// directory after another option (--no-deps DIR) is copied, so an edit is a new virtualenv;
// --editable is -e; a relative ./path is a path; a local file (a wheel) is keyed by its size
// and time; the caches Python and git write under a directory are not content.
func TestHashPipForms(t *testing.T) {
	dir := setupPyDir(t)
	key := func(pip ...string) string { return pipKey(t, pip...) }
	edit := func(rel, content string) { writeUnder(t, dir, rel, content) }
	noDeps, long, short := key("--no-deps", dir), key("--editable", dir), key("-e", dir)
	edit("__pycache__/mod.cpython-311.pyc", "bytecode")
	edit(".git/index", "git")
	if key("--no-deps", dir) != noDeps {
		t.Error("Python's bytecode cache or git's files changed a copied directory's key: every run would make a new virtualenv")
	}
	edit("mod.py", "x = 1\n")
	if key("--no-deps", dir) == noDeps {
		t.Error("an edit under a directory installed with --no-deps (copied) kept the old virtualenv")
	}
	if key("--editable", dir) != long {
		t.Error("an edit of a --editable install's code changed the key (it is read live)")
	}
	edit("setup.py", "setup(install_requires=['x'])\n")
	if key("--editable", dir) == long || key("-e", dir) == short {
		t.Error("a dependency change of an editable install kept the old virtualenv")
	}
	t.Chdir(dir)
	rel := key("./")
	edit("mod.py", "x = 2\n")
	if key("./") == rel {
		t.Error("a relative ./ path was taken for a requirement specifier: its edit kept the old virtualenv")
	}
	wheel := filepath.Join(t.TempDir(), "pkg-1.0-py3-none-any.whl")
	if err := os.WriteFile(wheel, []byte("v1"), 0o644); err != nil {
		t.Fatal(err)
	}
	w1 := key(wheel)
	if err := os.WriteFile(wheel, []byte("v2.0"), 0o644); err != nil {
		t.Fatal(err)
	}
	if key(wheel) == w1 {
		t.Error("a rebuilt local wheel kept the old virtualenv")
	}
	if key("trustgraph-base==2.11.1") == key("trustgraph-base==2.11.2") {
		t.Error("two requirement specifiers: one virtualenv")
	}
}

// TestLastLines: an error quotes the last n lines of a command's output.
func TestLastLines(t *testing.T) {
	if got := lastLines("a\nb\nc\nd\n", 2); got != "c\nd" {
		t.Errorf("last 2 of 4: %q", got)
	}
	if got := lastLines("a\nb\n", 5); got != "a\nb" {
		t.Errorf("last 5 of 2: %q", got)
	}
}

// TestTrustGraphSourceLayouts: a trustgraph-base tree packaged by setup.py alone is one; a
// directory with packaging files but no trustgraph/base/ is not (another project); a
// checkout whose generated version file is there is accepted.
func TestTrustGraphSourceLayouts(t *testing.T) {
	mk := func(files ...string) string {
		t.Helper()
		d := t.TempDir()
		for _, f := range files {
			body := ""
			if f == "pyproject.toml" {
				body = "[tool.setuptools.dynamic]\nversion = {attr = \"trustgraph.base_version.__version__\"}\n"
			}
			writeUnder(t, d, f, body)
		}
		return d
	}
	setupOnly := mk("setup.py", "trustgraph/base/__init__.py")
	if base, _, err := TrustGraphSource(setupOnly); err != nil || base != setupOnly {
		t.Errorf("a setup.py tree: %s, %v", base, err)
	}
	for _, d := range []string{mk("pyproject.toml", "other/__init__.py"), mk("setup.py", "trustgraph/flow/__init__.py")} {
		if _, _, err := TrustGraphSource(d); err == nil || !strings.Contains(err.Error(), "neither a trustgraph checkout") {
			t.Errorf("packaging without trustgraph/base/: %v", err)
		}
	}
	if _, _, err := TrustGraphSource(mk("trustgraph/base/__init__.py")); err == nil {
		t.Error("trustgraph/base/ without pyproject.toml or setup.py (pip cannot install it) was taken")
	}
	versioned := mk("pyproject.toml", "trustgraph/base/__init__.py", "trustgraph/base_version.py")
	if base, _, err := TrustGraphSource(versioned); err != nil || base != versioned {
		t.Errorf("a tree with its generated version file: %s, %v", base, err)
	}
}

// TestDeclaredResolvesExtensions: Declared lists the shipped adapters and the user's, a user
// adapter that extends a shipped one resolved against it; one that extends nothing shipped is
// an error, and the rest are still listed.
func TestDeclaredResolvesExtensions(t *testing.T) {
	t.Setenv(SourceEnv, "")
	t.Setenv("PUBSUB_ADAPTER_MY_TG_EXTENDS", "trustgraph-kafka")
	t.Setenv("PUBSUB_ADAPTER_MINE", "./mine")
	ads, err := Declared()
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]Adapter{}
	for _, a := range ads {
		byName[a.Name] = a
	}
	if tg := byName["my-tg"]; tg.Broker != "kafka" || !reflect.DeepEqual(tg.Command, byName["trustgraph-kafka"].Command) {
		t.Errorf("my-tg: %+v", tg)
	}
	if m := byName["mine"]; !reflect.DeepEqual(m.Command, []string{"./mine"}) || byName["python-memory"].Name == "" {
		t.Errorf("mine: %+v; python-memory shipped: %v", m, byName["python-memory"].Name != "")
	}
	t.Setenv("PUBSUB_ADAPTER_MY_TG_EXTENDS", "nope")
	ads, err = Declared()
	names := map[string]bool{}
	for _, a := range ads {
		names[a.Name] = true
	}
	if err == nil || !strings.Contains(err.Error(), "is not a shipped adapter") || !names["mine"] || !names["python-memory"] {
		t.Errorf("an unknown base: %v; listed %v", err, names)
	}
}

// TestFromEnvironNames: a declaration needs a name after the prefix; a variable that ends like
// an attribute (_DIR) is an attribute only of a declared adapter, else an adapter of that name;
// an extending declaration keeps its own command; an empty command is refused.
func TestFromEnvironNames(t *testing.T) {
	got, err := FromEnviron([]string{
		"PUBSUB_ADAPTER_=cmd",
		"PUBSUB_ADAPTER__EXTENDS=trustgraph-kafka",
		"PUBSUB_ADAPTER_BUILD_DIR=./build/adapter",
		"PUBSUB_ADAPTER_MINE=./mine --fast",
		"PUBSUB_ADAPTER_MINE_EXTENDS=trustgraph-kafka",
		"PUBSUB_ADAPTER_MINE_DIR=adapters/mine",
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []Adapter{
		{Name: "build-dir", Command: []string{"./build/adapter"}, Description: "user-declared adapter: ./build/adapter", OptIn: true},
		{Name: "mine", Command: []string{"./mine", "--fast"}, Dir: "adapters/mine", Extends: "trustgraph-kafka", OptIn: true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %+v\nwant %+v", got, want)
	}
	if _, err := FromEnviron([]string{"PUBSUB_ADAPTER_EMPTY="}); err == nil || !strings.Contains(err.Error(), `PUBSUB_ADAPTER_EMPTY="" is not a command line`) {
		t.Errorf("an empty command: %v", err)
	}
}
