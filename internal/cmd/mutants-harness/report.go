package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
)

// output is the part of gremlins' JSON output (-o) the summary reads.
type output struct {
	Files []struct {
		Name      string     `json:"file_name"` // relative to the target's directory
		Mutations []mutation `json:"mutations"`
	} `json:"files"`
}

type mutation struct {
	Type   string `json:"type"`
	Status string `json:"status"`
	Line   int    `json:"line"`
	Column int    `json:"column"`
}

// The statuses of gremlins' output.
const (
	killed     = "KILLED"
	lived      = "LIVED"
	notCovered = "NOT COVERED"
	timedOut   = "TIMED OUT"
	notViable  = "NOT VIABLE"
)

func readOutput(path string) (output, error) {
	var o output
	b, err := os.ReadFile(path)
	if err != nil {
		return o, fmt.Errorf("gremlins wrote no results: %w", err)
	}
	if err := json.Unmarshal(b, &o); err != nil {
		return o, fmt.Errorf("gremlins results %s: %w", path, err)
	}
	return o, nil
}

// counts is the number of mutants per status.
func (o output) counts() map[string]int {
	c := map[string]int{}
	for _, f := range o.Files {
		for _, m := range f.Mutations {
			c[m.Status]++
		}
	}
	return c
}

// efficacy is killed/(killed+lived) in percent, and coverage (killed+lived)/(killed+lived+not
// covered), as gremlins computes them (timed out and not viable mutants are in neither).
func efficacy(c map[string]int) (eff, cov float64) {
	if k, l := c[killed], c[lived]; k+l > 0 {
		eff = 100 * float64(k) / float64(k+l)
		cov = 100 * float64(k+l) / float64(k+l+c[notCovered])
	}
	return eff, cov
}

// A survivor is a mutant that lived, with its source line and whether docs/mutants.md lists it
// as equivalent.
type survivor struct {
	File   string // relative to the module root
	Line   int
	Column int
	Type   string
	Code   string // the source line, trimmed
	Listed bool
	Why    string
}

func (s survivor) position() string { return fmt.Sprintf("%s:%d:%d", s.File, s.Line, s.Column) }

// equivalent is one entry of the equivalents table: a mutant is the same one when file, type,
// column and the line's code agree (its line number may have moved).
type equivalent struct {
	File   string
	Column int
	Type   string
	Code   string
	Why    string
}

func (e equivalent) matches(s survivor) bool {
	return e.File == s.File && e.Column == s.Column && e.Type == s.Type && e.Code == s.Code
}

// equivalentRow is a row of the equivalents table in docs/mutants.md:
// | `reports/x.go:12:5` | CONDITIONALS_BOUNDARY | `if n > 0 {` | why |
var equivalentRow = regexp.MustCompile("^\\|\\s*`([^`]+\\.go):(\\d+):(\\d+)`\\s*\\|\\s*([A-Z_]+)\\s*\\|\\s*`(.*)`\\s*\\|(.*)\\|\\s*$")

// readEquivalents reads every row of that form in the document; a missing document lists none.
func readEquivalents(path string) ([]equivalent, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var eq []equivalent
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		m := equivalentRow.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		var col int
		fmt.Sscan(m[3], &col)
		eq = append(eq, equivalent{File: m[1], Column: col, Type: m[4],
			Code: strings.ReplaceAll(m[5], `\|`, "|"), Why: strings.TrimSpace(m[6])})
	}
	return eq, sc.Err()
}

// survivors lists the mutants of o that lived, with their code read from the module copy.
func survivors(mod, dir string, o output, eq []equivalent) []survivor {
	var out []survivor
	lines := map[string][]string{}
	for _, f := range o.Files {
		file := filepath.ToSlash(filepath.Join(dir, f.Name))
		for _, m := range f.Mutations {
			if m.Status != lived {
				continue
			}
			if _, ok := lines[file]; !ok {
				b, _ := os.ReadFile(filepath.Join(mod, file))
				lines[file] = strings.Split(string(b), "\n")
			}
			s := survivor{File: file, Line: m.Line, Column: m.Column, Type: m.Type}
			if l := lines[file]; m.Line >= 1 && m.Line <= len(l) {
				s.Code = strings.TrimSpace(l[m.Line-1])
			}
			if i := slices.IndexFunc(eq, func(e equivalent) bool { return e.matches(s) }); i >= 0 {
				s.Listed, s.Why = true, eq[i].Why
			}
			out = append(out, s)
		}
	}
	slices.SortFunc(out, func(a, b survivor) int {
		return strings.Compare(fmt.Sprintf("%s:%06d:%04d", a.File, a.Line, a.Column), fmt.Sprintf("%s:%06d:%04d", b.File, b.Line, b.Column))
	})
	return out
}

// result is one target's run.
type result struct {
	Target    target
	Elapsed   time.Duration
	Out       output
	Survivors []survivor
	Err       string
}

func (r result) unlisted() int {
	n := 0
	for _, s := range r.Survivors {
		if !s.Listed {
			n++
		}
	}
	return n
}

// line is the one-line verdict of a target.
func (r result) line(threshold float64) string {
	if r.Err != "" {
		return fmt.Sprintf("%s: FAILED TO RUN: %s", r.Target.Dir, r.Err)
	}
	c := r.Out.counts()
	eff, cov := efficacy(c)
	verdict := "ok"
	if eff < threshold {
		verdict = fmt.Sprintf("BELOW %.0f%%", threshold)
	}
	if n := r.unlisted(); n > 0 {
		verdict += fmt.Sprintf(", %d survivors not listed as equivalent", n)
	}
	return fmt.Sprintf("%s: killed %d, lived %d, not covered %d, timed out %d, not viable %d: efficacy %.2f%%, coverage %.2f%% in %s (%s)",
		r.Target.Dir, c[killed], c[lived], c[notCovered], c[timedOut], c[notViable], eff, cov, r.Elapsed.Round(time.Second), verdict)
}

// verdict is the exit code: 1 when a target did not run, is below the threshold, or has a
// survivor that docs/mutants.md does not list as equivalent.
func verdict(results []result, threshold float64) int {
	for _, r := range results {
		if r.Err != "" || r.unlisted() > 0 {
			return 1
		}
		if eff, _ := efficacy(r.Out.counts()); eff < threshold {
			return 1
		}
	}
	return 0
}

func renderSummary(results []result, o options, total time.Duration, now time.Time) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Harness mutants (gremlins)\n\n%s, %s in all, threshold %.0f%% efficacy, timeout coefficient %d.\n\n",
		now.Format("2006-01-02 15:04"), total.Round(time.Second), o.threshold, o.coefficient)
	b.WriteString("| package | killed | lived | not covered | timed out | not viable | efficacy | coverage | time | test flags |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range results {
		if r.Err != "" {
			fmt.Fprintf(&b, "| %s | failed to run: %s | | | | | | | %s | |\n", r.Target.Dir, r.Err, r.Elapsed.Round(time.Second))
			continue
		}
		c := r.Out.counts()
		eff, cov := efficacy(c)
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %d | %.2f%% | %.2f%% | %s | `%s` |\n", r.Target.Dir,
			c[killed], c[lived], c[notCovered], c[timedOut], c[notViable], eff, cov, r.Elapsed.Round(time.Second), goflags(r.Target))
	}
	b.WriteString("\nMutators: gremlins' defaults (arithmetic base, conditionals boundary and negation, " +
		"increment-decrement, invert negatives) and invert logical (&& and ||). Per package:\n\n")
	for _, r := range results {
		fmt.Fprintf(&b, "- %s: `%s`", r.Target.Dir, goflags(r.Target))
		if len(r.Target.Exclude) > 0 {
			fmt.Fprintf(&b, ", files left out `%s`", strings.Join(r.Target.Exclude, "` `"))
		}
		if r.Target.Why != "" {
			b.WriteString("; " + r.Target.Why)
		}
		b.WriteString("\n")
	}
	b.WriteString("\n## Survivors\n\n")
	any := false
	for _, r := range results {
		for _, s := range r.Survivors {
			any = true
			state := "**not listed**: kill it with a test, or list it as equivalent in docs/mutants.md"
			if s.Listed {
				state = "equivalent: " + s.Why
			}
			fmt.Fprintf(&b, "- `%s` %s `%s`: %s\n", s.position(), s.Type, s.Code, state)
		}
	}
	if !any {
		b.WriteString("None.\n")
	}
	b.WriteString("\n## Timed out\n\n")
	any = false
	for _, r := range results {
		for _, f := range r.Out.Files {
			for _, m := range f.Mutations {
				if m.Status == timedOut {
					any = true
					fmt.Fprintf(&b, "- `%s:%d:%d` %s\n", filepath.ToSlash(filepath.Join(r.Target.Dir, f.Name)), m.Line, m.Column, m.Type)
				}
			}
		}
	}
	if !any {
		b.WriteString("None.\n")
	}
	return b.String()
}
