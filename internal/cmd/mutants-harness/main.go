// Command mutants-harness mutation-tests the harness's own code (not the backends: that is
// `make mutants`) with gremlins (github.com/go-gremlins/gremlins, a tool of this module): the
// gate and findings of reports/, the typed evidence and the column names they read
// (internal/evidence, internal/column), the history checkers, the workload, the catalogue, the
// adapter plumbing of backends/remote and the broker records of fixtures. Every target
// (targets.go) is one gremlins run: a coverage run of the package's unit tests, then every
// covered mutant (an operator of the source changed: + to -, < to <=, == to !=, && to ||, ...)
// built and tested with `go test -failfast`; a test failure kills it, a pass lets it live.
//
// It runs in a copy of the module (the files git tracks or would track, so uncommitted edits
// count and reports/out is not copied for every gremlins worker) with a private cache
// (PUBSUB_CACHE: the cached virtualenvs linked in, pip offline), and puts itself first on PATH
// as `go`: a mutant whose package does not build (a string's + made a -, or go vet refuses it)
// is NOT VIABLE rather than killed, as gremlins would count any failing go test.
//
// It writes reports/out/mutants-harness/summary.md (per target: killed, lived, not covered,
// timed out, not viable, efficacy = killed/(killed+lived), coverage =
// (killed+lived)/(killed+lived+not covered), time) and each target's gremlins JSON and log, and
// exits 1 when a target's efficacy is below -threshold or a survivor is neither killed nor
// listed as equivalent in docs/mutants.md.
//
//	go run ./internal/cmd/mutants-harness                          # every target
//	go run ./internal/cmd/mutants-harness -targets reports,specs/catalogue
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/pubsub-conformance/harness/internal/cache"
	"github.com/pubsub-conformance/harness/internal/modroot"
)

// realGoEnv names the go command the wrapper runs (set by the run, for its children).
const realGoEnv = "MUTANTS_HARNESS_GO"

type options struct {
	targets     []target
	out         string
	workers     int
	coefficient int
	threshold   float64
	equivalents string
	keep        bool
}

func main() {
	if filepath.Base(os.Args[0]) == "go" {
		os.Exit(wrapGo(os.Args[1:]))
	}
	var o options
	var names string
	flag.StringVar(&names, "targets", "", "comma-separated target directories (default: all of "+strings.Join(targetDirs(), ",")+")")
	flag.StringVar(&o.out, "out", "reports/out/mutants-harness", "directory of the summary and of each target's gremlins JSON and log")
	flag.IntVar(&o.workers, "workers", 0, "gremlins workers (parallel mutants; 0: one per CPU)")
	flag.IntVar(&o.coefficient, "timeout-coefficient", 10, "a mutant's test run times out after this many times the coverage run's duration")
	flag.Float64Var(&o.threshold, "threshold", 90, "the efficacy (percent) every target must reach")
	flag.StringVar(&o.equivalents, "equivalents", "docs/mutants.md", "the document listing the survivors that are equivalent mutants")
	flag.BoolVar(&o.keep, "keep", false, "keep the copy of the module (its path is printed)")
	flag.Parse()
	var err error
	if o.targets, err = selectTargets(names); err != nil {
		fmt.Fprintln(os.Stderr, "mutants-harness:", err)
		os.Exit(2)
	}
	code, err := run(o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "mutants-harness:", err)
		os.Exit(2)
	}
	os.Exit(code)
}

func targetDirs() []string {
	var dirs []string
	for _, t := range targets {
		dirs = append(dirs, t.Dir)
	}
	return dirs
}

// selectTargets is the targets named in the comma-separated list (all for an empty one); an
// unknown name is an error that lists the known ones.
func selectTargets(list string) ([]target, error) {
	if strings.TrimSpace(list) == "" {
		return targets, nil
	}
	var out []target
	for _, n := range strings.Split(list, ",") {
		n = strings.Trim(strings.TrimSpace(n), "./")
		i := slices.IndexFunc(targets, func(t target) bool { return t.Dir == n })
		if i < 0 {
			return nil, fmt.Errorf("unknown target %q: the targets are %s", n, strings.Join(targetDirs(), ", "))
		}
		out = append(out, targets[i])
	}
	return out, nil
}

func run(o options) (int, error) {
	root, err := modroot.Find()
	if err != nil {
		return 0, err
	}
	if !filepath.IsAbs(o.out) {
		o.out = filepath.Join(root, o.out)
	}
	if !filepath.IsAbs(o.equivalents) {
		o.equivalents = filepath.Join(root, o.equivalents)
	}
	eq, err := readEquivalents(o.equivalents)
	if err != nil {
		return 0, err
	}
	realGo, err := exec.LookPath("go")
	if err != nil {
		return 0, err
	}
	if realGo, err = filepath.Abs(realGo); err != nil {
		return 0, err
	}
	self, err := os.Executable()
	if err != nil {
		return 0, err
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return 0, err
	}
	tmp, err := os.MkdirTemp("", "mutants-harness-")
	if err != nil {
		return 0, err
	}
	if o.keep {
		fmt.Println("mutants-harness: the module copy is kept in", tmp)
	} else {
		defer os.RemoveAll(tmp)
	}
	mod := filepath.Join(tmp, "module")
	if err := copyModule(root, mod); err != nil {
		return 0, err
	}
	bin := filepath.Join(tmp, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		return 0, err
	}
	if err := os.Symlink(self, filepath.Join(bin, "go")); err != nil {
		return 0, err
	}
	for _, t := range o.targets {
		if t.Prepare {
			if err := prepare(realGo, root, t); err != nil {
				return 0, err
			}
		}
	}
	cache := filepath.Join(tmp, "cache")
	if err := privateCache(cache); err != nil {
		return 0, err
	}
	env := append(os.Environ(),
		"PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		realGoEnv+"="+realGo,
		"PUBSUB_CACHE="+cache,
		"PIP_NO_INDEX=1",
		"GOTOOLCHAIN=local",
	)
	// gremlins runs as its own binary, not through `go tool`: go tool puts GOROOT/bin first on
	// the PATH of what it runs, and the mutants' go test would bypass the wrapper.
	gremlinsBin, err := toolPath(realGo, mod)
	if err != nil {
		return 0, err
	}
	var results []result
	start := time.Now()
	for _, t := range o.targets {
		name := strings.ReplaceAll(t.Dir, "/", "-")
		jsonPath := filepath.Join(o.out, name+".json")
		logPath := filepath.Join(o.out, name+".log")
		os.Remove(jsonPath)
		fmt.Printf("== mutants-harness: %s (test flags: %s; log %s)\n", t.Dir, strings.Join(t.TestFlags, " "), rel(root, logPath))
		began := time.Now()
		tally := filepath.Join(tmp, name+".tally")
		runErr := gremlins(gremlinsBin, mod, append(slices.Clone(env), tallyEnv+"="+tally), t, o, jsonPath, logPath)
		r := result{Target: t, Elapsed: time.Since(began)}
		if runErr != nil {
			r.Err = runErr.Error()
		} else if r.Out, err = readOutput(jsonPath); err != nil {
			r.Err = err.Error()
		} else if err := checkTally(tally, r.Out.counts()); err != nil {
			r.Err = err.Error()
		} else {
			r.Survivors = survivors(mod, t.Dir, r.Out, eq)
		}
		fmt.Println("  ", r.line(o.threshold))
		results = append(results, r)
	}
	summary := renderSummary(results, o, time.Since(start), time.Now())
	sumPath := filepath.Join(o.out, "summary.md")
	if err := os.WriteFile(sumPath, []byte(summary), 0o644); err != nil {
		return 0, err
	}
	fmt.Print(summary)
	fmt.Println("wrote", rel(root, sumPath))
	return verdict(results, o.threshold), nil
}

func rel(root, p string) string {
	if r, err := filepath.Rel(root, p); err == nil {
		return r
	}
	return p
}

// gremlins runs one target in the module copy: its log in logPath, its results in jsonPath.
func gremlins(bin, mod string, env []string, t target, o options, jsonPath, logPath string) error {
	coefficient, workers := o.coefficient, o.workers
	if t.Coefficient > 0 {
		coefficient = t.Coefficient
	}
	if t.Workers > 0 {
		workers = t.Workers
	}
	args := []string{"unleash", "--invert-logical",
		fmt.Sprintf("--timeout-coefficient=%d", coefficient), "-o", jsonPath}
	if workers > 0 {
		args = append(args, fmt.Sprintf("--workers=%d", workers))
	}
	for _, e := range t.Exclude {
		args = append(args, "-E", e)
	}
	args = append(args, "./"+t.Dir)
	logf, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.Command(bin, args...)
	cmd.Dir = mod
	cmd.Env = append(slices.Clone(env), "GOFLAGS="+goflags(t))
	cmd.Stdout, cmd.Stderr = logf, logf
	fmt.Fprintf(logf, "GOFLAGS=%q gremlins %s\n", goflags(t), strings.Join(args, " "))
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("gremlins: %w (its output: %s)", err, logPath)
	}
	return nil
}

// prepare runs t's tests once in the module at root, unmutated and with the real cache, so
// what they make there (virtualenvs, with pip online the first time) exists for the run.
func prepare(realGo, root string, t target) error {
	fmt.Printf("== mutants-harness: %s: its tests once as they are, to make what they need in the cache\n", t.Dir)
	cmd := exec.Command(realGo, append(append([]string{"test"}, t.TestFlags...), "./"+t.Dir)...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOFLAGS=-trimpath -count=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s: its tests fail unmutated, nothing to mutation-test: %w\n%s", t.Dir, err, out)
	}
	return nil
}

// toolPath is the path of the gremlins binary of the module's tool directive (built into the
// go build cache by `go tool -n`).
func toolPath(realGo, mod string) (string, error) {
	cmd := exec.Command(realGo, "tool", "-n", "gremlins")
	cmd.Dir = mod
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("build gremlins (go tool -n gremlins): %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}

// checkTally: every mutant gremlins scored killed, lived or not viable went through the
// wrapper, which counted it; fewer means gremlins ran go test past it, and its kills include
// builds that failed.
func checkTally(path string, c map[string]int) error {
	b, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	seen := strings.Count(string(b), "\n")
	if want := c[killed] + c[lived] + c[notViable]; seen < want {
		return fmt.Errorf("only %d of the %d mutants gremlins tested ran through this command as go (its PATH): their results would count build failures as kills", seen, want)
	}
	return nil
}

// goflags: the flags of every go command of a target's run. -count=1: the coverage run must
// not come from the test cache, because its duration sets the mutants' timeout.
func goflags(t target) string {
	return strings.Join(append([]string{"-trimpath", "-count=1"}, t.TestFlags...), " ")
}

// copyModule copies the files git tracks or would track (not ignored) from root to dst.
func copyModule(root, dst string) error {
	cmd := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("list the module's files (git ls-files): %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	for _, f := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		if f == "" {
			continue
		}
		src := filepath.Join(root, f)
		info, err := os.Lstat(src)
		if errors.Is(err, os.ErrNotExist) {
			continue // deleted in the working tree
		}
		if err != nil {
			return err
		}
		if !info.Mode().IsRegular() {
			continue
		}
		if err := copyFile(src, filepath.Join(dst, f), info.Mode()); err != nil {
			return err
		}
	}
	return nil
}

func copyFile(src, dst string, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode.Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// privateCache makes the run's cache directory: the ready virtualenvs of the real cache linked
// in (a mutant that removes one removes the link; a new one is made here, and pip, offline,
// fails rather than reaching the package index), nothing else.
func privateCache(dir string) error {
	if err := os.MkdirAll(filepath.Join(dir, "venv"), 0o755); err != nil {
		return err
	}
	real, err := cache.Root()
	if err != nil {
		return err
	}
	entries, err := os.ReadDir(filepath.Join(real, "venv"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range entries {
		src := filepath.Join(real, "venv", e.Name())
		if _, err := os.Stat(filepath.Join(src, ".ready")); err != nil {
			continue
		}
		if err := os.Symlink(src, filepath.Join(dir, "venv", e.Name())); err != nil {
			return err
		}
	}
	return nil
}
