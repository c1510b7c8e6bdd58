package remote

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/pubsub-conformance/harness/internal/cache"
	"github.com/pubsub-conformance/harness/internal/cost"
)

// Venv returns the python of a virtualenv with the given pip requirements files installed and
// the protocol's Python stubs generated (into <venv>/gen, which adapters get on PYTHONPATH).
// It is VenvWith without extra pip arguments.
func Venv(ctx context.Context, requirements []string) (python string, err error) {
	return VenvWith(ctx, requirements, nil)
}

// VenvWith returns the python of a virtualenv with the given pip requirements files installed,
// then `pip install <pip...>` (e.g. "-e /src/trustgraph-base", a working copy over the pinned
// release), and the protocol's Python stubs generated (into <venv>/gen, which adapters get on
// PYTHONPATH).
//
// The virtualenv lives in the cache directory (PUBSUB_CACHE, like the broker jars), under a
// name that hashes the requirements files, the pip arguments, the schema and the python3
// version: created once (pip needs the package index then), reused offline after. So that it
// never runs stale code, a local directory among the pip arguments is hashed too: an editable
// one (-e DIR) by its packaging files (pyproject.toml, setup.py, setup.cfg: its code is read
// live, a dependency change makes a new virtualenv), any other by the name, size and mtime of
// every file under it (pip copies it, so any edit needs a new install). Parallel Ginkgo
// processes share it through a lock file. requirements are paths relative to the repository
// root, or absolute.
func VenvWith(ctx context.Context, requirements, pip []string) (python string, err error) {
	py, err := exec.LookPath("python3")
	if err != nil {
		return "", errors.New("python3 not found on PATH: the Python adapters need Python 3.9 or newer with its venv module (e.g. apt-get install python3 python3-venv)")
	}
	root := RepoRoot()
	out, err := exec.CommandContext(ctx, py, "-c", "import sys; print(sys.version)").Output()
	if err != nil {
		return "", fmt.Errorf("run %s: %w", py, err)
	}
	key, err := venvKey(out, root, requirements, pip)
	if err != nil {
		return "", err
	}
	cacheDir, err := cache.Root()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(cacheDir, "venv", key)
	python = filepath.Join(dir, "bin", "python")
	ready := filepath.Join(dir, ".ready")
	if _, err := os.Stat(ready); err == nil {
		return python, nil
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return "", err
	}
	lock, err := os.OpenFile(dir+".lock", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return "", fmt.Errorf("lock %s: %w", lock.Name(), err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	if _, err := os.Stat(ready); err == nil {
		return python, nil // another process made it while we waited
	}
	os.RemoveAll(dir) // an interrupted earlier attempt
	run := func(what string, argv ...string) error {
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		cmd.Dir = root
		var buf bytes.Buffer
		cmd.Stdout, cmd.Stderr = &buf, &buf
		err := cmd.Run()
		cost.Record(cost.Setup, "adapter virtualenv: "+what, cmd.ProcessState)
		if err != nil {
			return fmt.Errorf("adapter virtualenv %s: %s: %w\n%s", dir, what, err, indent(lastLines(buf.String(), 15)))
		}
		return nil
	}
	if err := run("create", py, "-m", "venv", dir); err != nil {
		return "", err
	}
	for _, r := range requirements {
		if err := run("pip install -r "+r, python, "-m", "pip", "install", "--disable-pip-version-check",
			"--no-input", "-q", "-r", repoPath(root, r)); err != nil {
			return "", err
		}
	}
	if len(pip) > 0 {
		if err := run("pip install "+strings.Join(pip, " "), append([]string{python, "-m", "pip", "install",
			"--disable-pip-version-check", "--no-input", "-q"}, pip...)...); err != nil {
			return "", err
		}
	}
	gen := filepath.Join(dir, "gen")
	if err := os.MkdirAll(gen, 0o755); err != nil {
		return "", err
	}
	if err := run("generate the protocol stubs", python, "-m", "grpc_tools.protoc", "-I", filepath.Join(root, "proto"),
		"--python_out="+gen, "--grpc_python_out="+gen, "pubsub/v1/adapter.proto"); err != nil {
		return "", err
	}
	if err := os.WriteFile(ready, []byte(strings.Join(append(requirements, pip...), "\n")+"\n"), 0o644); err != nil {
		return "", err
	}
	return python, nil
}

// venvKey names the virtualenv (see VenvWith) of requirements and pip for the python whose
// sys.version is pyVersion: a hash of that version, of the protocol's schema and each
// requirements file (its name and content: not when it was written), and of the pip arguments
// with what decides whether a local directory among them is current (hashPip).
func venvKey(pyVersion []byte, root string, requirements, pip []string) (string, error) {
	h := sha256.New()
	h.Write(pyVersion)
	for _, f := range append([]string{"proto/pubsub/v1/adapter.proto"}, requirements...) {
		b, err := os.ReadFile(repoPath(root, f))
		if err != nil {
			return "", fmt.Errorf("adapter virtualenv: requirements file: %w", err)
		}
		fmt.Fprintf(h, "%s\x00%d\x00", f, len(b))
		h.Write(b)
	}
	if err := hashPip(h, pip); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// repoPath is f, relative to the repository root unless absolute.
func repoPath(root, f string) string {
	if filepath.IsAbs(f) {
		return f
	}
	return filepath.Join(root, f)
}

// hashPip writes the pip arguments to h, and for each that names a local directory what
// decides whether an installed copy of it is current (see VenvWith). A path argument that does
// not exist is an error here, in one line, rather than pip's.
func hashPip(h io.Writer, pip []string) error {
	editable := false
	for _, a := range pip {
		fmt.Fprintf(h, "pip\x00%s\x00", a)
		wasEditable := editable
		editable = a == "-e" || a == "--editable"
		if strings.HasPrefix(a, "-") {
			continue
		}
		if !filepath.IsAbs(a) && !strings.HasPrefix(a, ".") {
			continue // a requirement specifier (name==version), not a path
		}
		st, err := os.Stat(a)
		if err != nil {
			return fmt.Errorf("adapter virtualenv: pip argument %s: %w", a, err)
		}
		if !st.IsDir() {
			fmt.Fprintf(h, "%d\x00%d\x00", st.Size(), st.ModTime().UnixNano())
			continue
		}
		if wasEditable {
			for _, f := range []string{"pyproject.toml", "setup.py", "setup.cfg"} {
				if b, err := os.ReadFile(filepath.Join(a, f)); err == nil {
					fmt.Fprintf(h, "%s\x00%d\x00", f, len(b))
					h.Write(b)
				}
			}
			continue
		}
		err = filepath.WalkDir(a, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && (d.Name() == ".git" || d.Name() == "__pycache__") {
				return filepath.SkipDir
			}
			if !d.Type().IsRegular() {
				return nil
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			fmt.Fprintf(h, "%s\x00%d\x00%d\x00", p, info.Size(), info.ModTime().UnixNano())
			return nil
		})
		if err != nil {
			return fmt.Errorf("adapter virtualenv: pip argument %s: %w", a, err)
		}
	}
	return nil
}

// GenDir is where Venv put the protocol stubs for the virtualenv of python.
func GenDir(python string) string { return filepath.Join(filepath.Dir(filepath.Dir(python)), "gen") }

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
