// Command mutants measures the suite's detection power: for each base backend it runs the
// conformance suite once against the unmodified base and every known-bad variant of it
// ("<base>~<variant>", see backends/mutants) in ONE Ginkgo run (one broker start), then writes
// reports/out/mutants.md: per variant, the catalogue specs that failed (KILLED) or SURVIVED, and
// the first failing spec's message. Each variant runs only the specs its record names - the
// killers (Catches) and its sanity set, which it must pass - and the base runs all of those.
//
// It exits non-zero when a variant survives or the unmodified base fails anything that
// ci/baseline.yaml does not accept for it; a variant's failure of a spec its base fails too is
// no kill.
//
//	go run ./suite/cmd/mutants                       # every registered conformance backend
//	go run ./suite/cmd/mutants -bases memory         # fast: the reference, no broker
//	go run ./suite/cmd/mutants -bases kafka -variants nack-noop,latest-race
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/pubsub-conformance/harness/backends"
	"github.com/pubsub-conformance/harness/internal/modroot"
	// The registered backends; memory among them appends its own variants to the catalogue.
	_ "github.com/pubsub-conformance/harness/backends/all"
	"github.com/pubsub-conformance/harness/backends/mutants"
	"github.com/pubsub-conformance/harness/reports"
	"github.com/pubsub-conformance/harness/specs/catalogue"
	suiterun "github.com/pubsub-conformance/harness/suite/run"
)

type options struct {
	bases       []string
	variants    []string // empty: every applicable variant
	procs       int
	labelFilter string // extra filter, ANDed with the default one
	timeout     time.Duration
	out         string // the markdown file
	reportOnly  bool   // rebuild the markdown from the reports of earlier runs, run nothing
	reportDir   string // per-base Ginkgo reports go to reportDir/<base>/
	moduleRoot  string
	// suiteBin is a suite test binary built beforehand (make test builds it once, before the
	// stages that use it); empty: the run builds its own.
	suiteBin string

	// W1's budget and shrink budget (PUBSUB_WORKLOAD_BUDGET, _SHRINK) unless the environment
	// sets them: longer than a conformance run's 25 s, because the workload variants need a
	// rare combination of calls, and a short shrink, because a kill needs no minimal program.
	workloadBudget, workloadShrink time.Duration
}

func main() {
	var o options
	var bases, variants string
	flag.StringVar(&bases, "bases", "", "comma-separated base backends (default: every registered conformance backend; memory: the fast reference run)")
	flag.StringVar(&variants, "variants", "", "comma-separated variants to run (default: every variant that applies to a base)")
	flag.IntVar(&o.procs, "procs", 2, "parallel Ginkgo processes per base run")
	flag.StringVar(&o.labelFilter, "label-filter", "", "extra Ginkgo label filter, ANDed with the default (each variant: its killers and sanity specs; the base: all of them)")
	flag.DurationVar(&o.timeout, "timeout", 20*time.Minute, "time budget of one base run: Ginkgo stops it there, and the variants whose specs never ran are NOT RUN")
	flag.StringVar(&o.out, "out", "reports/out/mutants.md", "the markdown report")
	flag.StringVar(&o.suiteBin, "suite-bin", os.Getenv(SuiteBinEnv), "a suite test binary built beforehand (default $"+SuiteBinEnv+"; empty: built here with go test -c)")
	flag.DurationVar(&o.workloadBudget, "workload-budget", 60*time.Second, "W1's budget of programs (PUBSUB_WORKLOAD_BUDGET, unless set)")
	flag.DurationVar(&o.workloadShrink, "workload-shrink", 15*time.Second, "W1's shrink budget (PUBSUB_WORKLOAD_SHRINK, unless set)")
	flag.BoolVar(&o.reportOnly, "report-only", false, "run nothing: rebuild the report from the per-base reports of earlier runs (e.g. after re-running one base)")
	flag.Parse()
	o.bases = splitList(bases)
	if len(o.bases) == 0 {
		o.bases = backends.ConformanceNames()
	}
	o.variants = splitList(variants)

	root, err := modroot.Find()
	if err != nil {
		fail(err)
	}
	o.moduleRoot = root
	if !filepath.IsAbs(o.out) {
		o.out = filepath.Join(root, o.out)
	}
	o.reportDir = filepath.Join(filepath.Dir(o.out), "mutants")

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := run(ctx, o, os.Stdout)
	if err != nil {
		fail(err)
	}
	if !res.ok() {
		os.Exit(1)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "mutants:", err)
	os.Exit(2)
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// Outcome is one backend's result in one base run.
type Outcome struct {
	Backend string   // "kafka" or "kafka~nack-noop"
	Base    string   // "kafka"
	Variant string   // "" for the unmodified base
	Defect  string   // the variant's one-line defect
	Failed  []string // catalogue IDs with a failed spec, sorted
	Passed  int      // specs that passed
	Skipped int      // specs skipped (capability, filter)
	// Catches are the specs written for the variant's defect (mutants.Variant.Catches); Sanity
	// the specs it must pass (Variant.SanitySpecs).
	Catches, Sanity []string
	// NotRun are the IDs of specs the run never finished (stopped by the time budget).
	NotRun []string
	// Unknown are the IDs of specs whose result is unknown (their history overflowed, so the
	// checkers could not vouch for them): no verdict, never a pass.
	Unknown []string
	// FirstID and FirstMessage are the first failing spec and its message: the first of
	// Catches that failed, else the first in catalogue order.
	FirstID, FirstMessage string
	Missing               bool // no report for the backend: the run broke before it
	// Accepted (the base) are failures ci/baseline.yaml accepts for it, with their cause: they
	// do not fail the run. AsBase (a variant) are failures the base has too: no kill.
	Accepted, AsBase []string
	// Messages are the first failure message per failed ID.
	Messages map[string]string
	// Beyond (a variant) are failures the base has too, but in which the history checkers found
	// anomaly classes the base's failure does not show (W1 on a base that fails W1 on its own
	// defect): kept as kills, and named so.
	Beyond []string
}

// Killed reports whether a variant was caught: a spec other than its sanity set failed, and no
// sanity spec did (then the variant may just not work: Broken).
func (o Outcome) Killed() bool {
	return len(o.Broken()) == 0 && slices.ContainsFunc(o.Failed, func(id string) bool { return !slices.Contains(o.Sanity, id) })
}

// Broken lists the variant's failed sanity specs.
func (o Outcome) Broken() []string {
	var out []string
	for _, id := range o.Failed {
		if slices.Contains(o.Sanity, id) {
			out = append(out, id)
		}
	}
	return out
}

// Results is the whole run.
type Results struct {
	Outcomes []Outcome
	Runs     []BaseRun
}

// BaseRun is one suite run.
type BaseRun struct {
	Base     string
	Backends int
	Took     time.Duration
	Exit     int
	Filter   string
}

func (r Results) ok() bool {
	for _, o := range r.Outcomes {
		if o.Missing || (o.Variant == "" && (len(o.Failed) > 0 || o.Passed == 0 || len(o.NotRun) > 0 || len(o.Unknown) > 0)) || (o.Variant != "" && !o.Killed()) {
			return false
		}
	}
	return len(r.Outcomes) > 0
}

// run builds the suite binary once and runs it per base.
func run(ctx context.Context, o options, w io.Writer) (Results, error) {
	var res Results
	if err := mutants.Check(); err != nil {
		return res, err
	}
	for _, b := range o.bases {
		if t, err := suiterun.Resolve(b); err != nil || t.Descriptor.Variant != "" {
			var real []string
			for _, d := range backends.Descriptors(false) {
				real = append(real, d.Name)
			}
			return res, fmt.Errorf("base %q is not a registered backend (want one of %s)", b, strings.Join(real, ", "))
		}
	}
	for _, v := range o.variants {
		found := false
		for _, b := range o.bases {
			if _, ok := mutants.LookupFor(b, v); ok {
				found = true
			}
		}
		if !found {
			return res, fmt.Errorf("variant %q applies to none of the bases %v", v, o.bases)
		}
	}
	if o.reportOnly {
		return fromReports(o, w)
	}
	tmp, err := os.MkdirTemp("", "mutants-")
	if err != nil {
		return res, fmt.Errorf("temp dir: %w", err)
	}
	defer os.RemoveAll(tmp)
	bin, err := suiteBinary(ctx, o, tmp, w)
	if err != nil {
		return res, err
	}

	total := time.Now()
	for _, base := range o.bases {
		names := []string{base}
		for _, v := range mutants.For(base) {
			if len(o.variants) == 0 || slices.Contains(o.variants, v.Name) {
				if why := unscorable(v); why != "" {
					fmt.Fprintf(w, "mutants: %s: leaving out %s: %s\n", base, v.Name, why)
					continue
				}
				names = append(names, mutants.Name(base, v.Name))
			}
		}
		dir := filepath.Join(o.reportDir, base)
		if err := os.RemoveAll(dir); err != nil {
			return res, fmt.Errorf("clear %s: %w", dir, err)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return res, fmt.Errorf("report dir: %w", err)
		}
		filter := labelFilter(base, names, o.labelFilter)
		fmt.Fprintf(w, "mutants: %s: %d backends in one run (procs %d, budget %s, label filter %q)\n", base, len(names), o.procs, o.timeout, filter)
		br, err := runBase(ctx, o, bin, tmp, dir, names, filter, w)
		br.Base = base
		if err != nil {
			if ctx.Err() != nil { // interrupted: stop here
				return res, err
			}
			// This base's run broke (past its budget and the grace): report what it left and
			// go on with the next base.
			fmt.Fprintf(w, "mutants: %s: %v\n", base, err)
			br.Exit = -1
		}
		res.Runs = append(res.Runs, br)
		res.Outcomes = append(res.Outcomes, outcomes(o.moduleRoot, dir, names, w)...)
		if data, err := json.MarshalIndent(br, "", "  "); err == nil {
			_ = os.WriteFile(filepath.Join(dir, "run.json"), data, 0o644) // for -report-only
		}
		fmt.Fprintf(w, "mutants: %s done in %s (exit %d)\n", base, br.Took.Round(time.Second), br.Exit)
	}
	return res, write(o, res, time.Since(total), w)
}

// unscorable says why a variant cannot be scored in this run, "" when it can: every spec that
// would kill it is W2, which runs only with PUBSUB_NEMESIS set, so without it the variant would
// show as a survivor of a spec that was skipped.
func unscorable(v mutants.Variant) string {
	if os.Getenv("PUBSUB_NEMESIS") != "" || slices.ContainsFunc(v.Catches, func(id string) bool { return id != "W2" }) {
		return ""
	}
	return "its only killer W2 runs only with PUBSUB_NEMESIS set (make mutants NEMESIS=1)"
}

func outcomes(root, dir string, names []string, w io.Writer) []Outcome {
	var out []Outcome
	for _, n := range names {
		o, err := readOutcome(filepath.Join(dir, "ginkgo-"+n+".json"), n)
		if err != nil {
			fmt.Fprintf(w, "mutants: %s: %v\n", n, err)
		}
		out = append(out, o)
	}
	accepted := acceptedFailures(root, w)
	return settleBase(out, accepted)
}

// acceptedFailures reads the failures ci/baseline.yaml accepts, per backend (none when the
// file is missing or unreadable, which is reported).
func acceptedFailures(root string, w io.Writer) map[string][]string {
	if root == "" {
		return nil
	}
	b, err := reports.ReadBaseline(filepath.Join(root, "ci", "baseline.yaml"))
	if err != nil {
		fmt.Fprintf(w, "mutants: no accepted base failures: %v\n", err)
		return nil
	}
	out := map[string][]string{}
	for backend, ids := range b.Backends {
		for id, a := range ids {
			if a.Result == reports.Fail {
				out[backend] = append(out[backend], id)
			}
		}
	}
	return out
}

// settleBase moves the base's failures that the baseline accepts to its Accepted, and every
// variant's failures of specs the base fails too to the variant's AsBase: a spec that fails
// on the unmodified backend proves nothing about a variant of it.
func settleBase(out []Outcome, accepted map[string][]string) []Outcome {
	var baseFailed []string
	for i, o := range out {
		if o.Variant != "" {
			continue
		}
		baseFailed = append(baseFailed, o.Failed...)
		var keep []string
		for _, id := range o.Failed {
			if slices.Contains(accepted[o.Backend], id) {
				out[i].Accepted = append(out[i].Accepted, id)
			} else {
				keep = append(keep, id)
			}
		}
		out[i].Failed = keep
	}
	baseMsg := map[string][]string{}
	for _, o := range out {
		if o.Variant == "" {
			for id, m := range o.Messages {
				baseMsg[id] = append(baseMsg[id], m)
			}
		}
	}
	for i, o := range out {
		if o.Variant == "" || len(baseFailed) == 0 {
			continue
		}
		var keep []string
		for _, id := range o.Failed {
			switch {
			case !slices.Contains(baseFailed, id):
				keep = append(keep, id)
			case beyondBase(o.Messages[id], baseMsg[id]):
				keep = append(keep, id)
				out[i].Beyond = append(out[i].Beyond, id)
			default:
				out[i].AsBase = append(out[i].AsBase, id)
			}
		}
		out[i].Failed = keep
	}
	return out
}

// beyondBase reports whether the history checkers found, in a variant's failure, an anomaly
// class that none of the base's failures of the same spec shows: the variant broke the
// contract in a way the base did not. False when either message has no checker findings.
func beyondBase(variant string, base []string) bool {
	vc := anomalyClasses(variant)
	if len(vc) == 0 || len(base) == 0 {
		return false
	}
	seen := map[string]bool{}
	for _, m := range base {
		bc := anomalyClasses(m)
		if len(bc) == 0 {
			return false // the base failed otherwise: nothing to compare
		}
		for _, c := range bc {
			seen[c] = true
		}
	}
	return slices.ContainsFunc(vc, func(c string) bool { return !seen[c] })
}

// anomalyClasses reads the classes out of the headers internal/history.Report writes ("history
// checkers found 4 lost, 3 outcome differs from the reference backend", then the findings on
// the next lines, which a one-line message joins with " - "), in order of first appearance. A
// W1 message holds one report per failed program (corpus entries and a fresh seed): the classes
// of all of them. TestAnomalyClasses holds it to Report's real output.
func anomalyClasses(msg string) []string {
	var out []string
	for {
		_, rest, ok := strings.Cut(msg, historyHeader)
		if !ok {
			return out
		}
		msg = rest
		rest, _, _ = strings.Cut(rest, "\n")
		rest, _, _ = strings.Cut(rest, " - ")
		for _, part := range strings.Split(rest, ", ") {
			if _, class, ok := strings.Cut(strings.TrimSpace(part), " "); ok && !slices.Contains(out, class) {
				out = append(out, class)
			}
		}
	}
}

const historyHeader = "history checkers found "

// fromReports rebuilds the results from reportDir/<base>/ of earlier runs: the backends are the
// ginkgo-*.json files there, the run facts come from run.json.
func fromReports(o options, w io.Writer) (Results, error) {
	var res Results
	var total time.Duration
	for _, base := range o.bases {
		dir := filepath.Join(o.reportDir, base)
		files, _ := filepath.Glob(filepath.Join(dir, "ginkgo-*.json"))
		if len(files) == 0 {
			return res, fmt.Errorf("no reports in %s: run the base first (-bases %s)", dir, base)
		}
		names := []string{base}
		for _, f := range files {
			n := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f), "ginkgo-"), ".json")
			if _, v := mutants.Split(n); v != "" {
				if _, ok := mutants.LookupFor(base, v); !ok {
					fmt.Fprintf(w, "mutants: %s left out: no record of %s applies to %s any more\n", n, v, base)
					continue
				}
			}
			if n != base {
				names = append(names, n)
			}
		}
		br := BaseRun{Base: base, Backends: len(names), Filter: labelFilter(base, names, "")}
		if data, err := os.ReadFile(filepath.Join(dir, "run.json")); err == nil {
			_ = json.Unmarshal(data, &br)
		}
		total += br.Took
		res.Runs = append(res.Runs, br)
		res.Outcomes = append(res.Outcomes, outcomes(o.moduleRoot, dir, names, w)...)
	}
	return res, write(o, res, total, w)
}

func write(o options, res Results, total time.Duration, w io.Writer) error {
	md := Markdown(res, total)
	if err := os.MkdirAll(filepath.Dir(o.out), 0o755); err != nil {
		return fmt.Errorf("report dir: %w", err)
	}
	if err := os.WriteFile(o.out, []byte(md), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", o.out, err)
	}
	fmt.Fprint(w, Table(res))
	fmt.Fprintf(w, "mutants: %s (total %s)\n", o.out, total.Round(time.Second))
	return nil
}

// labelFilter runs each variant against the specs its record names and no others: its
// killers (Catches) and its sanity set. The base runs every one of them, because a spec that
// fails on the unmodified base kills nothing. A kill still means a real spec failing on the real
// broker; what the narrowing gives up is a kill by a spec the record does not name (the full
// catalogue per variant did not finish in 33 min on kafka: docs/mutants.md).
func labelFilter(base string, names []string, extra string) string {
	var clauses, union []string
	for _, n := range names {
		_, v := mutants.Split(n)
		vr, ok := mutants.LookupFor(base, v)
		if v == "" || !ok {
			continue
		}
		ids := append(slices.Clone(vr.Catches), vr.SanitySpecs()...)
		clauses = append(clauses, specsOn(n, ids))
		union = append(union, ids...)
	}
	clauses = append([]string{specsOn(base, union)}, clauses...)
	f := strings.Join(clauses, " || ")
	if extra != "" {
		f = "(" + f + ") && (" + extra + ")"
	}
	return f
}

// specsOn is the label filter of the specs ids on backend, in catalogue order.
func specsOn(backend string, ids []string) string {
	ids = slices.Clone(ids)
	slices.SortFunc(ids, func(a, b string) int {
		switch {
		case a == b:
			return 0
		case catalogue.Less(a, b):
			return -1
		}
		return 1
	})
	ids = slices.Compact(ids)
	labels := make([]string, len(ids))
	for i, id := range ids {
		labels[i] = catalogue.IDLabel(id)
	}
	return "(backend:" + backend + " && (" + strings.Join(labels, " || ") + "))"
}

func runBase(ctx context.Context, o options, bin, work, dir string, names []string, filter string, w io.Writer) (BaseRun, error) {
	br := BaseRun{Backends: len(names), Filter: filter}
	ctx, cancel := context.WithTimeout(ctx, o.timeout+2*time.Minute)
	defer cancel()
	// The ginkgo binary itself, not `go tool ginkgo`: an interrupt must reach Ginkgo so it
	// stops the brokers (the go command does not pass it on).
	ginkgo, err := exec.CommandContext(ctx, "go", "tool", "-n", "ginkgo").Output()
	if err != nil {
		return br, fmt.Errorf("locate ginkgo (go tool -n ginkgo): %w", err)
	}
	args := []string{fmt.Sprintf("--procs=%d", o.procs), "--timeout=" + o.timeout.String(),
		"--label-filter=" + filter, "--no-color", "--succinct", bin}
	cmd := exec.CommandContext(ctx, strings.TrimSpace(string(ginkgo)), args...)
	cmd.Dir = o.moduleRoot
	cmd.Env = append(os.Environ(), "PUBSUB_BACKENDS="+strings.Join(names, ","), "PUBSUB_REPORT_DIR="+dir)
	for k, d := range map[string]time.Duration{"PUBSUB_WORKLOAD_BUDGET": o.workloadBudget, "PUBSUB_WORKLOAD_SHRINK": o.workloadShrink} {
		if _, set := os.LookupEnv(k); !set && d > 0 {
			cmd.Env = append(cmd.Env, k+"="+d.String())
		}
	}
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) } // let Ginkgo stop brokers
	cmd.WaitDelay = 90 * time.Second
	logPath := filepath.Join(dir, "run.log")
	logf, err := os.Create(logPath)
	if err != nil {
		return br, fmt.Errorf("run log: %w", err)
	}
	defer logf.Close()
	cmd.Stdout = io.MultiWriter(logf, progressOnly{w: w, seen: map[string]bool{}})
	cmd.Stderr = logf
	start := time.Now()
	err = cmd.Run()
	if ctx.Err() != nil {
		return br, fmt.Errorf("suite run for %v stopped: %w (log %s)", names, ctx.Err(), logPath)
	}
	br.Took = time.Since(start)
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		br.Exit = ee.ExitCode() // failing specs are the point; the reports say which
	default:
		return br, fmt.Errorf("run the suite for %v: %w (log %s)", names, err, logPath)
	}
	return br, nil
}

// progressOnly passes the suite's "[pubsub]" progress lines (broker start, report dir) through,
// once each (Ginkgo repeats a process's output in its failure summaries).
type progressOnly struct {
	w    io.Writer
	seen map[string]bool
}

func (p progressOnly) Write(b []byte) (int, error) {
	for _, l := range strings.SplitAfter(string(b), "\n") {
		l = strings.TrimLeft(l, " ")
		if strings.Contains(l, "[pubsub]") && !p.seen[l] {
			p.seen[l] = true
			_, _ = io.WriteString(p.w, "  "+l)
		}
	}
	return len(b), nil
}

// readOutcome reads one backend's Ginkgo JSON report through the reports package's reader,
// the one the matrix uses.
func readOutcome(path, backend string) (Outcome, error) {
	base, variant := mutants.Split(backend)
	out := Outcome{Backend: backend, Base: base, Variant: variant}
	if v, ok := mutants.LookupFor(base, variant); ok && variant != "" {
		out.Defect, out.Catches, out.Sanity = v.Defect, v.Catches, v.SanitySpecs()
	}
	if _, err := os.Stat(path); err != nil {
		out.Missing = true
		return out, fmt.Errorf("no report (the run broke before it): %w", err)
	}
	run, err := reports.ReadRun(path)
	if err != nil {
		out.Missing = true
		return out, err
	}
	classify(&out, run.Cases)
	return out, nil
}

// classify fills the outcome from the cases of the report. A failure of a suite-level node
// (broker start) counts as a failure of every backend, under the ID "setup"; a failed spec
// without an ID label as "?".
func classify(out *Outcome, cases []reports.Case) {
	type failure struct{ id, msg string }
	var fails []failure
	for _, c := range cases {
		if c.Setup {
			if c.Status == reports.Fail {
				fails = append(fails, failure{"setup", c.Message})
			}
			continue
		}
		switch c.Status {
		case reports.Pass:
			out.Passed++
		case reports.Skip:
			out.Skipped++
		case reports.Unknown: // no verdict: an unknown is not a pass
			out.Unknown = append(out.Unknown, c.ID)
		case reports.NotRun:
			if !slices.Contains(out.NotRun, c.ID) {
				out.NotRun = append(out.NotRun, c.ID)
			}
		case reports.Fail:
			id := c.ID
			if id == "" {
				id = "?"
			}
			fails = append(fails, failure{id, c.Message})
		}
	}
	sort.SliceStable(fails, func(i, j int) bool { return catalogue.Less(fails[i].id, fails[j].id) })
	for _, f := range fails {
		if !slices.Contains(out.Failed, f.id) {
			out.Failed = append(out.Failed, f.id)
			if out.Messages == nil {
				out.Messages = map[string]string{}
			}
			out.Messages[f.id] = f.msg
		}
	}
	if len(fails) > 0 {
		out.FirstID, out.FirstMessage = fails[0].id, fails[0].msg
	}
	for _, id := range out.Catches {
		if i := slices.IndexFunc(fails, func(f failure) bool { return f.id == id }); i >= 0 {
			out.FirstID, out.FirstMessage = fails[i].id, fails[i].msg
			break
		}
	}
}

// SuiteBinEnv names a suite test binary built beforehand, for the runs that would otherwise
// build their own: make test builds it once before its stages, so no test compiles the cgo
// suite under its own timeout while the other stages compile beside it (a fresh 2-core
// machine killed that build at its 5-minute bound).
const SuiteBinEnv = "PUBSUB_SUITE_BIN"

// suiteBinary returns o.suiteBin when set (it must exist), else builds a private binary in
// dir: concurrent `ginkgo ./suite` runs rewrite suite/suite.test.
func suiteBinary(ctx context.Context, o options, dir string, w io.Writer) (string, error) {
	if o.suiteBin != "" {
		if _, err := os.Stat(o.suiteBin); err != nil {
			return "", fmt.Errorf("suite binary %s (-suite-bin or $%s): %w", o.suiteBin, SuiteBinEnv, err)
		}
		return o.suiteBin, nil
	}
	bin := filepath.Join(dir, "suite.test")
	start := time.Now()
	build := exec.CommandContext(ctx, "go", "test", "-c", "-o", bin, "./suite")
	build.Dir = o.moduleRoot
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build the suite binary: %w\n%s", err, out)
	}
	fmt.Fprintf(w, "mutants: suite binary built in %s\n", time.Since(start).Round(100*time.Millisecond))
	return bin, nil
}
