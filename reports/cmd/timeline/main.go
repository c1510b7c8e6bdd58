// Command timeline says where a conformance run's wall time went, from the Ginkgo JSON reports
// the suite writes per backend (reports/out/ginkgo-<backend>.json; each holds the whole run's
// suite nodes and that backend's specs): the suite setup (broker starts) and teardown, every
// Ginkgo process's busy and idle time, the Ordered containers (one process runs their specs one
// after another, so each is a chain no scheduling can split), the longest specs, and the two
// floors of the spec phase: the longest chain or spec, and the total spec time over the
// processes. docs/performance.md reads its output.
//
//	go run ./reports/cmd/timeline [-top 20] [FILE...]
//
// Without files it reads reports/out/ginkgo-*.json and keeps those of the most recent run (the
// reports of one run share the suite's start time; older files of other runs are left out).
// Exit status: 0, or 2 on bad usage or unreadable input.
package main

import (
	"cmp"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/pubsub-conformance/harness/internal/cost"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("timeline", flag.ContinueOnError)
	fs.SetOutput(stderr)
	top := fs.Int("top", 20, "list this many of the longest specs")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: timeline [-top N] [ginkgo-<backend>.json...]   (default: the latest run's reports/out/ginkgo-*.json)")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	files := fs.Args()
	latestOnly := false
	if len(files) == 0 {
		files, _ = filepath.Glob("reports/out/ginkgo-*.json")
		latestOnly = true
		if len(files) == 0 {
			fmt.Fprintln(stderr, "timeline: no reports/out/ginkgo-*.json: run make conformance first, or name the files")
			return 2
		}
	}
	var runs []backendRun
	for _, f := range files {
		r, err := load(f)
		if err != nil {
			fmt.Fprintln(stderr, "timeline:", err)
			return 2
		}
		runs = append(runs, r)
	}
	if latestOnly {
		runs = latest(runs)
	}
	a := analyse(runs)
	fmt.Fprint(stdout, a.text(*top))
	fmt.Fprint(stdout, costText(filepath.Dir(files[0]), a.start))
	return 0
}

// costText is the run's cost (internal/cost: reports/out/cost.json beside the reports, written
// by make conformance) when it belongs to this run - started before the suite and at most a
// few minutes before (the preflight and a link come first) - with its processes by CPU.
func costText(dir string, suiteStart time.Time) string {
	s, err := cost.Read(filepath.Join(dir, "cost.json"))
	if err != nil || s.Started.After(suiteStart) || suiteStart.Sub(s.Started) > 10*time.Minute {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n%s\n", s.Line())
	recs, err := cost.Records(filepath.Join(dir, "cost.tsv"))
	if err != nil || len(recs) == 0 {
		return b.String()
	}
	slices.SortFunc(recs, func(x, y cost.Rec) int { return cmp.Compare(y.CPU, x.CPU) })
	fmt.Fprintf(&b, "processes by CPU (user + sys):\n")
	for _, r := range recs {
		fmt.Fprintf(&b, "  %-8s %-48s %6.1f s\n", r.Kind, r.What, r.CPU)
	}
	return b.String()
}

// backendRun is one ginkgo-<backend>.json: the run's suite report cut to one backend's specs.
type backendRun struct {
	file    string
	backend string
	report  types.Report
}

func load(file string) (backendRun, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return backendRun{}, err
	}
	var reps []types.Report
	if err := json.Unmarshal(data, &reps); err != nil {
		return backendRun{}, fmt.Errorf("%s: not a Ginkgo JSON report: %w", file, err)
	}
	if len(reps) != 1 {
		return backendRun{}, fmt.Errorf("%s: %d suite reports, want 1", file, len(reps))
	}
	name := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(file), "ginkgo-"), ".json")
	return backendRun{file: file, backend: name, report: reps[0]}, nil
}

// latest keeps the reports of the most recently started run.
func latest(runs []backendRun) []backendRun {
	var last time.Time
	for _, r := range runs {
		if r.report.StartTime.After(last) {
			last = r.report.StartTime
		}
	}
	var out []backendRun
	for _, r := range runs {
		if r.report.StartTime.Equal(last) {
			out = append(out, r)
		}
	}
	return out
}

// span is one spec (or a suite node) on the run's clock.
type span struct {
	backend, name string
	proc          int
	start, end    time.Duration // since the suite's start
	state         types.SpecState
	chain         string // the Ordered container it belongs to ("" when none)
	priority      int
}

func (s span) took() time.Duration { return s.end - s.start }

type analysis struct {
	start, end time.Time
	backends   []string
	setup      []span // suite nodes (SynchronizedBeforeSuite, ...), once per run
	specs      []span // specs that ran
	notRun     int    // specs that did not run (skipped by a filter, never started)
}

func analyse(runs []backendRun) analysis {
	var a analysis
	seenSetup := map[string]bool{}
	for _, r := range runs {
		rep := r.report
		if a.start.IsZero() || rep.StartTime.Before(a.start) {
			a.start = rep.StartTime
		}
		if rep.EndTime.After(a.end) {
			a.end = rep.EndTime
		}
		a.backends = append(a.backends, r.backend)
	}
	for _, r := range runs {
		for _, s := range r.report.SpecReports {
			sp := span{backend: r.backend, proc: s.ParallelProcess, state: s.State, priority: s.SpecPriority}
			if !s.StartTime.IsZero() {
				sp.start = s.StartTime.Sub(a.start)
			}
			if !s.EndTime.IsZero() {
				sp.end = s.EndTime.Sub(a.start)
			}
			if s.LeafNodeType != types.NodeTypeIt {
				sp.name = s.LeafNodeType.String()
				if s.LeafNodeText != "" {
					sp.name += " " + s.LeafNodeText
				}
				key := fmt.Sprintf("%s/%d/%s", sp.name, sp.proc, s.StartTime)
				if !seenSetup[key] && !s.StartTime.IsZero() && !s.EndTime.IsZero() {
					seenSetup[key] = true
					sp.backend = "(suite)"
					a.setup = append(a.setup, sp)
				}
				continue
			}
			sp.name = specID(s)
			if s.IsInOrderedContainer {
				sp.chain = r.backend + ": " + strings.Join(s.ContainerHierarchyTexts[1:], " / ")
			}
			if s.StartTime.IsZero() || s.EndTime.IsZero() || s.State == types.SpecStateSkipped && s.RunTime == 0 {
				a.notRun++
				continue
			}
			a.specs = append(a.specs, sp)
		}
	}
	return a
}

// specID is the catalogue ID from the spec's id:<ID> label, with a table entry's text.
func specID(s types.SpecReport) string {
	id := "?"
	for _, l := range s.Labels() {
		if v, ok := strings.CutPrefix(l, "id:"); ok {
			id = v
			break
		}
	}
	if s.LeafNodeType == types.NodeTypeIt && strings.HasPrefix(s.LeafNodeText, "[") {
		return id
	}
	return id + " " + s.LeafNodeText // a DescribeTable entry: its text tells the entries apart
}

func sec(d time.Duration) string { return fmt.Sprintf("%.1f s", d.Seconds()) }

func (a analysis) text(top int) string {
	var b strings.Builder
	wall := a.end.Sub(a.start)
	fmt.Fprintf(&b, "run of %s started %s: suite %s\n", strings.Join(a.backends, ", "), a.start.Format(time.RFC3339), sec(wall))

	// Suite nodes: the broker starts (process 1's SynchronizedBeforeSuite) gate every spec.
	var specStart, specEnd time.Duration
	for i, s := range a.specs {
		if i == 0 || s.start < specStart {
			specStart = s.start
		}
		specEnd = max(specEnd, s.end)
	}
	slices.SortFunc(a.setup, func(x, y span) int { return cmp.Compare(x.start, y.start) })
	for _, s := range a.setup {
		if s.took() >= 100*time.Millisecond {
			fmt.Fprintf(&b, "  %-32s proc %d  %6.1f-%6.1f s  %s\n", s.name, s.proc, s.start.Seconds(), s.end.Seconds(), sec(s.took()))
		}
	}
	fmt.Fprintf(&b, "  first spec started at %s, last spec ended at %s, suite ended at %s\n", sec(specStart), sec(specEnd), sec(wall))

	// Processes.
	procs := map[int][]span{}
	var total time.Duration
	for _, s := range a.specs {
		procs[s.proc] = append(procs[s.proc], s)
		total += s.took()
	}
	ids := make([]int, 0, len(procs))
	for p := range procs {
		ids = append(ids, p)
	}
	slices.Sort(ids)
	fmt.Fprintf(&b, "\nprocesses (%d): busy = sum of its specs, idle = its share of the spec phase without a spec\n", len(ids))
	for _, p := range ids {
		var busy, last time.Duration
		for _, s := range procs[p] {
			busy += s.took()
			last = max(last, s.end)
		}
		fmt.Fprintf(&b, "  proc %d: %3d specs, busy %7s, last spec ended at %7s, idle %7s\n", p, len(procs[p]), sec(busy), sec(last), sec(specEnd-specStart-busy))
	}

	// Chains: an Ordered container runs on one process, spec after spec.
	chains := map[string]span{}
	for _, s := range a.specs {
		if s.chain == "" {
			continue
		}
		c, ok := chains[s.chain]
		if !ok {
			c = span{name: s.chain, start: s.start, end: s.end, proc: s.proc, priority: s.priority}
		}
		c.start, c.end = min(c.start, s.start), max(c.end, s.end)
		chains[s.chain] = c
	}
	var longest span
	if len(chains) > 0 {
		fmt.Fprintf(&b, "\nOrdered containers (one process each, start to end):\n")
		cs := make([]span, 0, len(chains))
		for _, c := range chains {
			cs = append(cs, c)
		}
		slices.SortFunc(cs, func(x, y span) int { return cmp.Compare(y.took(), x.took()) })
		for _, c := range cs {
			fmt.Fprintf(&b, "  %-60s proc %d  %6.1f-%6.1f s  %s\n", c.name, c.proc, c.start.Seconds(), c.end.Seconds(), sec(c.took()))
		}
		longest = cs[0]
	}

	// Longest specs.
	sorted := slices.Clone(a.specs)
	slices.SortFunc(sorted, func(x, y span) int { return cmp.Compare(y.took(), x.took()) })
	if len(sorted) > 0 && sorted[0].took() > longest.took() {
		longest = sorted[0]
	}
	fmt.Fprintf(&b, "\nlongest specs (of %d that ran; %d did not run):\n", len(a.specs), a.notRun)
	for i, s := range sorted {
		if i >= top {
			break
		}
		fmt.Fprintf(&b, "  %-20s %-34s proc %d  prio %d  %6.1f-%6.1f s  %7s  %s\n", s.backend, trim(s.name, 34), s.proc, s.priority, s.start.Seconds(), s.end.Seconds(), sec(s.took()), s.state)
	}

	// Per backend.
	per := map[string]time.Duration{}
	for _, s := range a.specs {
		per[s.backend] += s.took()
	}
	fmt.Fprintf(&b, "\nspec time per backend:")
	for _, n := range a.backends {
		fmt.Fprintf(&b, " %s %s;", n, sec(per[n]))
	}
	fmt.Fprintf(&b, " total %s\n", sec(total))

	// Floors of the spec phase.
	if len(ids) > 0 {
		even := total / time.Duration(len(ids))
		fmt.Fprintf(&b, "\nfloors of the spec phase: the longest chain or spec %s (%s); the spec time spread evenly over %d processes %s; measured %s\n",
			sec(longest.took()), longest.name, len(ids), sec(even), sec(specEnd-specStart))
	}
	return b.String()
}

func trim(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-1] + "…"
}
