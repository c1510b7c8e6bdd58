// Command compare renders the behaviour x backend matrix from report files (our runs' Ginkgo
// JSON reports, or JUnit files from anywhere; see reports.ReadRun) and, with -gate,
// fails a pipeline on anything worse than the accepted baseline.
//
//	go run ./reports/cmd/compare [-md out.md] [-html out.html] [-baseline ci/baseline.yaml] [-catalogue=false] [FILE...]
//	go run ./reports/cmd/compare -gate ci/baseline.yaml [-backend kafka,pulsar] [FILE...]
//	go run ./reports/cmd/compare -write-baseline ci/baseline.yaml [FILE...]
//	go run ./reports/cmd/compare -gate ci/baseline.yaml -run-verdict [-strict] FILE...   # make conformance
//
// Without FILE it reads reports/out/ginkgo-*.json. When a run was interrupted (Ctrl-C, suite
// timeout) the pages go to <name>-interrupted.md/.html instead, keeping the previous matrix.
// Exit status: 0 ok, 1 the gate found a new
// failure, a newly skipped or a missing spec, 2 bad usage or unreadable input. With
// -run-verdict, the run's (reports.RunExit): 0 every failure accepted, 1 anything else
// failed, 2 the harness could not run (a failed BeforeSuite, an interrupted run, a missing
// report).
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pubsub-conformance/harness/reports"
	"github.com/pubsub-conformance/harness/specs/catalogue"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	fs.SetOutput(stderr)
	mdOut := fs.String("md", "reports/out/compare.md", "write the Markdown matrix here (\"\" to skip)")
	htmlOut := fs.String("html", "reports/out/compare.html", "write the self-contained HTML page here (\"\" to skip)")
	baselinePath := fs.String("baseline", "", "mark cells that differ from this baseline file")
	gatePath := fs.String("gate", "", "gate against this baseline file: exit 1 on a new failure, newly skipped or missing spec")
	backendsFlag := fs.String("backend", "", "comma-separated backends to gate, each required to have a report (default: all in the baseline and the reports)")
	gateLevel := fs.String("gate-level", "should", "lowest level whose regressions block the gate: should (every regression) or must (only MUST behaviours'; SHOULD ones are reported)")
	allBackends := fs.Bool("all-backends", false, "gate: every baseline backend must have a report, even one no run selected (CI over per-backend jobs)")
	writeBaseline := fs.String("write-baseline", "", "write the current results as the accepted baseline to this file (keeps notes)")
	withCatalogue := fs.Bool("catalogue", true, "when the reports carry catalogue IDs: list every behaviour of the catalogue (specs/catalogue), those no run reported as not run")
	colour := fs.String("color", "auto", "terminal colours: auto (only on a terminal, honours NO_COLOR), always, never")
	quiet := fs.Bool("quiet", false, "do not print the terminal table")
	benchDir := fs.String("bench", "reports/out", "directory of bench-*.json (make bench) for the Performance section; \"\" to skip")
	stillFailing := fs.Bool("still-failing", false, "gate: also list the accepted failures that still fail, and leave out the specs the run did not select (a focused run's before/after: make against)")
	runVerdict := fs.Bool("run-verdict", false, "with -gate: the exit status of one run (make conformance): 0 when every failure is one the baseline accepts for its column, 1 when anything else failed, 2 when the run could not run (a failed BeforeSuite, an interrupted run, a missing report); the accepted failures are listed, the specs it did not select left out, and one last line says which")
	strict := fs.Bool("strict", false, "with -run-verdict: any failure exits 1, accepted or not (CONFORMANCE_STRICT=1)")
	var baselineOf []string
	fs.Func("baseline-of", "BACKEND=COLUMN: read the baseline's COLUMN as BACKEND's accepted results (a variant or working copy beside the shipped column; repeatable)", func(v string) error {
		if b, c, ok := strings.Cut(v, "="); !ok || b == "" || c == "" {
			return fmt.Errorf("want BACKEND=COLUMN, got %q", v)
		}
		baselineOf = append(baselineOf, v)
		return nil
	})
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: compare [flags] [REPORT-FILE...]   (Ginkgo *.json or JUnit; default files: reports/out/ginkgo-*.json)")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	fail := func(err error) int {
		fmt.Fprintln(stderr, "compare:", err)
		return 2
	}
	// Usage errors before any report is read: a bad level is one line, not one after the matrix.
	level, err := reports.ParseGateLevel(*gateLevel)
	if err != nil {
		return fail(fmt.Errorf("-gate-level %w", err))
	}
	if (*runVerdict && *gatePath == "") || (*strict && !*runVerdict) {
		return fail(errors.New("-run-verdict needs -gate (the baseline it judges the run by), -strict needs -run-verdict"))
	}
	files := fs.Args()
	if len(files) == 0 {
		files, _ = filepath.Glob("reports/out/ginkgo-*.json")
		if len(files) == 0 {
			return fail(errors.New("no report files given and none in reports/out/ginkgo-*.json: run the suite first (make conformance) or pass FILE..."))
		}
	}
	var useColour bool
	switch *colour {
	case "always":
		useColour = true
	case "never":
	case "auto":
		useColour = isTerminal(stdout) && os.Getenv("NO_COLOR") == "" && os.Getenv("TERM") != "dumb"
	default:
		return fail(fmt.Errorf("-color %q: want auto, always or never", *colour))
	}

	baseline, err := readBaseline(*gatePath, *baselinePath, baselineOf)
	if err != nil {
		return fail(err)
	}
	m, err := buildMatrix(files, baseline, *withCatalogue)
	if err != nil {
		if *runVerdict && errors.Is(err, os.ErrNotExist) {
			fmt.Fprintf(stderr, "conformance: exit 2, the harness could not run: %v (the suite wrote no report: its output above says why)\n", err)
			return reports.ExitCouldNotRun
		}
		return fail(err)
	}
	opts := reports.Options{Baseline: baseline, Color: useColour}
	if err := addBench(&opts, *benchDir, *mdOut); err != nil {
		return fail(err)
	}

	if err := writePages(m, opts, *mdOut, *htmlOut, *quiet, stdout); err != nil {
		return fail(err)
	}
	if *writeBaseline != "" {
		prev, err := reports.ReadBaseline(*writeBaseline)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return fail(err)
		}
		if err := reports.FromMatrix(m, prev).Write(*writeBaseline); err != nil {
			return fail(err)
		}
		fmt.Fprintln(stdout, "wrote baseline", *writeBaseline)
	}
	if *gatePath == "" {
		return 0
	}
	g, report := gate(m, baseline, *backendsFlag, level, *allBackends, *stillFailing || *runVerdict)
	if *runVerdict {
		code, line := reports.RunExit(m, g, reports.RunExitOptions{Strict: *strict, Baseline: *gatePath})
		if code != reports.ExitCouldNotRun { // else every spec is "missing" for the one cause the line names
			fmt.Fprint(stdout, report)
		}
		fmt.Fprintln(stdout, line)
		return code
	}
	fmt.Fprint(stdout, report)
	if g.Failed() {
		return 1
	}
	return 0
}

// readBaseline reads the baseline that -gate or -baseline names (nil when neither does), with
// the -baseline-of columns read as other backends' accepted results.
func readBaseline(gatePath, baselinePath string, baselineOf []string) (*reports.Baseline, error) {
	if len(baselineOf) > 0 && gatePath == "" && baselinePath == "" {
		return nil, errors.New("-baseline-of needs -gate or -baseline: the baseline file whose column it reads")
	}
	if gatePath != "" && baselinePath != "" && gatePath != baselinePath {
		return nil, errors.New("-gate and -baseline name different files: pass one of them")
	}
	p := gatePath
	if p == "" {
		p = baselinePath
	}
	if p == "" {
		return nil, nil
	}
	b, err := reports.ReadBaseline(p)
	if err != nil {
		return nil, err
	}
	for _, v := range baselineOf {
		backend, column, _ := strings.Cut(v, "=")
		acc, ok := b.Backends[column]
		if !ok {
			return nil, fmt.Errorf("-baseline-of %s: %s has no column %q", v, p, column)
		}
		b.Backends[backend] = acc
	}
	return b, nil
}

// buildMatrix reads the report files into the matrix, with a row for every baseline ID and,
// for runs of our suite, every catalogue behaviour.
func buildMatrix(files []string, baseline *reports.Baseline, withCatalogue bool) (*reports.Matrix, error) {
	runs, err := reports.ReadRuns(files)
	if err != nil {
		return nil, err
	}
	var extra []string
	if baseline != nil {
		extra = baseline.IDs()
	}
	// Foreign reports alone carry no catalogue ID: no catalogue rows for them. A run of our
	// suite (its Ginkgo JSON, or a meta sidecar) gets them even when no spec ran (a failed or
	// interrupted SynchronizedBeforeSuite), so every behaviour shows as not run with the cause.
	useCatalogue := withCatalogue && slices.ContainsFunc(runs, func(r *reports.Run) bool {
		return r.Meta != nil || strings.HasSuffix(r.File, ".json") ||
			slices.ContainsFunc(r.Cases, func(c reports.Case) bool { _, ok := catalogue.Lookup(c.ID); return ok })
	})
	if useCatalogue {
		extra = append(extra, catalogue.IDs()...)
	}
	return reports.Build(runs, extra...), nil
}

// addBench adds the bench results of benchDir ("" for none) to opts, and their latency chart
// beside the Markdown page.
func addBench(opts *reports.Options, benchDir, mdOut string) error {
	if benchDir == "" {
		return nil
	}
	bs, err := reports.ReadBenches(benchDir)
	if err != nil {
		return err
	}
	opts.Bench = bs
	if svg := reports.LatencySVG(bs); svg != "" && mdOut != "" {
		chart := filepath.Join(filepath.Dir(mdOut), "bench-latency.svg")
		if err := writeFile(chart, func(w io.Writer) error { _, err := io.WriteString(w, svg); return err }); err != nil {
			return err
		}
		opts.BenchChart = filepath.Base(chart)
	}
	return nil
}

// writePages writes the Markdown and HTML pages and prints the terminal table. An interrupted
// run never replaces the matrix of the last complete one: its pages go next to it as
// compare-interrupted.md/.html, and the terminal says so.
func writePages(m *reports.Matrix, opts reports.Options, mdOut, htmlOut string, quiet bool, stdout io.Writer) error {
	var kept []string
	if len(m.Interrupted()) > 0 {
		for _, p := range []*string{&mdOut, &htmlOut} {
			if *p == "" {
				continue
			}
			if _, err := os.Stat(*p); err == nil {
				kept = append(kept, *p)
			}
			ext := filepath.Ext(*p)
			*p = strings.TrimSuffix(*p, ext) + "-interrupted" + ext
		}
	}
	if err := writeFile(mdOut, func(w io.Writer) error { return reports.Markdown(w, m, opts) }); err != nil {
		return err
	}
	if err := writeFile(htmlOut, func(w io.Writer) error { return reports.HTML(w, m, opts) }); err != nil {
		return err
	}
	if !quiet {
		if err := reports.Terminal(stdout, m, opts); err != nil {
			return err
		}
		for _, p := range []string{mdOut, htmlOut} {
			if p != "" {
				fmt.Fprintln(stdout, "wrote", p)
			}
		}
		if len(kept) > 0 {
			fmt.Fprintf(stdout, "kept %s: the matrix before this interrupted run\n", strings.Join(kept, " and "))
		}
	}
	return nil
}

// gate is the gate's result of m against baseline, and its report to print.
func gate(m *reports.Matrix, baseline *reports.Baseline, backendsFlag string, level catalogue.Level, allBackends, stillFailing bool) (*reports.GateResult, string) {
	var only []string
	for _, b := range strings.Split(backendsFlag, ",") {
		if b = strings.TrimSpace(b); b != "" {
			only = append(only, b)
		}
	}
	g := reports.GateWith(m, baseline, reports.GateOptions{Only: only, AllBackends: allBackends, Level: level})
	if !stillFailing {
		return g, "\n" + g.Report()
	}
	notSelected := 0
	kept := g.Changes[:0]
	for _, c := range g.Changes {
		if c.Kind == reports.NotSelected {
			notSelected++
			continue
		}
		kept = append(kept, c)
	}
	g.Changes = kept
	var sb strings.Builder
	sb.WriteString("\n" + g.Report())
	for _, line := range still(m, baseline, only) {
		sb.WriteString("  " + line + "\n")
	}
	if notSelected > 0 {
		fmt.Fprintf(&sb, "  (%d accepted results not selected by this run: left out)\n", notSelected)
	}
	return g, sb.String()
}

// writeFile renders into memory first so a failed render never leaves half a file behind.
func writeFile(path string, render func(io.Writer) error) error {
	if path == "" {
		return nil
	}
	var buf bytes.Buffer
	if err := render(&buf); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// still lists, per backend in only (every backend of m when empty), the behaviours the
// baseline accepts as failing that failed again, with the run's first line: what a working
// copy has not fixed yet.
func still(m *reports.Matrix, b *reports.Baseline, only []string) []string {
	var out []string
	for i, be := range m.Backends {
		if len(only) > 0 && !slices.Contains(only, be.Label) {
			continue
		}
		for _, r := range m.Rows {
			cell := r.Cells[i]
			if acc, ok := b.Backends[be.Label][r.Key]; ok && acc.Result == reports.Fail && cell.Status == reports.Fail {
				level := ""
				if r.Level == catalogue.SHOULD {
					level = " [SHOULD]"
				}
				out = append(out, fmt.Sprintf("%-13s %s %s: fail -> fail: %s%s", "STILL FAILING", be.Label, r.Key, cell.Summary(), level))
			}
		}
	}
	return out
}
