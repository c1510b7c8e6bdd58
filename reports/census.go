package reports

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// Census is what the same suite gave over several complete runs (make flakes): per backend and
// behaviour, how often it passed, failed or never ran. A behaviour that failed in any run is a
// defect to find - in the backend or in the spec - not noise: the suite takes no retries.
type Census struct {
	Runs []CensusRun
	// Rows are the (backend, behaviour) pairs that failed or did not run in at least one run,
	// in backend then catalogue order.
	Rows []CensusRow
	// Backends are the backend labels seen, and Specs the number of (backend, behaviour) pairs
	// that ran in every run.
	Backends []string
	Pairs    int
}

// CensusRun is one run directory.
type CensusRun struct {
	Dir         string
	Seed        int64   // Ginkgo's random seed (--randomize-all order), 0 when unknown
	Seconds     float64 // the longest backend's suite time
	Failed      int     // failed (backend, behaviour) pairs
	Interrupted string  // why the run stopped early; "" for a complete run
}

// CensusRow is one (backend, behaviour) pair with a failure or a gap.
type CensusRow struct {
	Backend, Key, Title string
	Passed, Failed      int
	NotRun              int
	// First is the first failure's first line, prefixed with its run directory.
	First string
}

// Flaky reports whether any run failed a behaviour, left one out or was interrupted.
func (c *Census) Flaky() bool {
	if len(c.Rows) > 0 {
		return true
	}
	for _, r := range c.Runs {
		if r.Interrupted != "" {
			return true
		}
	}
	return false
}

// TakeCensus reads every directory's ginkgo-*.json (one directory per run).
func TakeCensus(dirs []string) (*Census, error) {
	if len(dirs) == 0 {
		return nil, fmt.Errorf("no run directories given")
	}
	c := &Census{}
	type key struct{ backend, row string }
	rows := map[key]*CensusRow{}
	var order []key
	seen := map[key]int{} // runs in which the pair had a result
	for _, dir := range dirs {
		files, _ := filepath.Glob(filepath.Join(dir, "ginkgo-*.json"))
		runs, err := ReadRuns(files)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", dir, err)
		}
		m := Build(runs)
		cr := CensusRun{Dir: dir, Seed: seedOf(files)}
		for _, b := range m.Backends {
			cr.Seconds = max(cr.Seconds, b.SuiteSeconds)
			if b.Interrupted != "" && cr.Interrupted == "" {
				cr.Interrupted = b.Label + ": " + b.Interrupted
			}
			if !slices.Contains(c.Backends, b.Label) {
				c.Backends = append(c.Backends, b.Label)
			}
		}
		for _, row := range m.Rows {
			for i, cell := range row.Cells {
				k := key{m.Backends[i].Label, row.Key}
				r, ok := rows[k]
				if !ok {
					r = &CensusRow{Backend: k.backend, Key: row.Key, Title: row.Title}
					rows[k] = r
					order = append(order, k)
				}
				switch cell.Status {
				case Pass:
					r.Passed++
					seen[k]++
				case Fail:
					r.Failed++
					seen[k]++
					cr.Failed++
					if r.First == "" {
						r.First = filepath.Base(dir) + ": " + firstLine(cell.Message)
					}
				case Skip:
					seen[k]++
				}
			}
		}
		c.Runs = append(c.Runs, cr)
	}
	for _, k := range order {
		r := rows[k]
		// Every run without a result for the pair is a gap: "not run", or absent entirely.
		r.NotRun = len(dirs) - seen[k]
		if r.Failed > 0 || r.NotRun > 0 {
			c.Rows = append(c.Rows, *r)
		} else {
			c.Pairs++
		}
	}
	sort.SliceStable(c.Rows, func(i, j int) bool {
		if c.Rows[i].Backend != c.Rows[j].Backend {
			return slices.Index(c.Backends, c.Rows[i].Backend) < slices.Index(c.Backends, c.Rows[j].Backend)
		}
		return IDLess(c.Rows[i].Key, c.Rows[j].Key)
	})
	return c, nil
}

// seedOf reads Ginkgo's random seed from the first report that has one.
func seedOf(files []string) int64 {
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var reps []struct{ SuiteConfig struct{ RandomSeed int64 } }
		if json.Unmarshal(b, &reps) == nil && len(reps) > 0 && reps[0].SuiteConfig.RandomSeed != 0 {
			return reps[0].SuiteConfig.RandomSeed
		}
	}
	return 0
}

// Markdown renders the census: one line per run, then every pair that failed or did not run.
func (c *Census) Markdown() string {
	var b strings.Builder
	secs := make([]float64, 0, len(c.Runs))
	for _, r := range c.Runs {
		secs = append(secs, r.Seconds)
	}
	slices.Sort(secs)
	fmt.Fprintf(&b, "# Flake census: %d runs of %s\n\n", len(c.Runs), strings.Join(c.Backends, ", "))
	if len(secs) > 0 {
		fmt.Fprintf(&b, "Suite time per run: min %s, median %s, max %s.\n\n",
			fmtSeconds(secs[0]), fmtSeconds(secs[len(secs)/2]), fmtSeconds(secs[len(secs)-1]))
	}
	if c.Flaky() {
		fmt.Fprintf(&b, "**%d (backend, behaviour) pairs failed or did not run in some run**; %d passed or skipped in every run.\n\n", len(c.Rows), c.Pairs)
	} else {
		fmt.Fprintf(&b, "Every one of the %d (backend, behaviour) pairs passed (or skipped with its reason) in every run.\n\n", c.Pairs)
	}
	b.WriteString("| run | seed | suite time | failed | interrupted |\n|---|---|---|---|---|\n")
	for _, r := range c.Runs {
		fmt.Fprintf(&b, "| %s | %d | %s | %d | %s |\n", filepath.Base(r.Dir), r.Seed, fmtSeconds(r.Seconds), r.Failed, r.Interrupted)
	}
	if len(c.Rows) > 0 {
		b.WriteString("\n| backend | behaviour | passed | failed | not run | first failure |\n|---|---|---|---|---|---|\n")
		for _, r := range c.Rows {
			name := r.Key
			if r.Title != "" {
				name += " " + r.Title
			}
			fmt.Fprintf(&b, "| %s | %s | %d | %d | %d | %s |\n", r.Backend, mdEscape(name), r.Passed, r.Failed, r.NotRun, mdEscape(truncate(r.First, 300)))
		}
	}
	return b.String()
}
