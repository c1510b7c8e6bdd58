package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A mutant's go test is killed only when a test binary ran and failed; a package that did not
// build, or that vet refused, is not viable, and a pass is a survivor.
func TestMutantExit(t *testing.T) {
	exit1 := exec.Command("sh", "-c", "exit 1").Run()
	var ee *exec.ExitError
	if !errors.As(exit1, &ee) {
		t.Fatalf("sh exit 1: %v", exit1)
	}
	for _, c := range []struct {
		name string
		err  error
		out  string
		want int
	}{
		{"passed", nil, "ok  \tgithub.com/x/reports\t1.234s\n", 0},
		{"a test failed", exit1, "--- FAIL: TestGate (0.00s)\nFAIL\nFAIL\tgithub.com/x/reports\t0.513s\nFAIL\n", 1},
		{"a test panicked", exit1, "panic: boom\nFAIL\tgithub.com/x/reports\t0.013s\n", 1},
		{"timed out", exit1, "panic: test timed out after 3s\nFAIL\tgithub.com/x/reports\t3.002s\n", 1},
		{"did not build", exit1, "# github.com/x/reports\nreports/a.go:3:9: invalid operation\nFAIL\tgithub.com/x/reports [build failed]\nFAIL\n", 2},
		{"vet refused it", exit1, "# github.com/x/reports\n# [github.com/x/reports]\nreports/a.go:3:55: suspect or\nFAIL\tgithub.com/x/reports [build failed]\n", 2},
		{"no such package", exit1, "no Go files in /x\n", 2},
		{"go could not start", errors.New("exec: not found"), "", 2},
	} {
		if got := mutantExit(c.err, []byte(c.out)); got != c.want {
			t.Errorf("%s: exit %d, want %d", c.name, got, c.want)
		}
	}
	if !mutantTestRun([]string{"test", "-timeout", "3s", "-failfast", "github.com/x/reports"}) ||
		mutantTestRun([]string{"test", "-cover", "-coverprofile", "c", "./reports/..."}) || mutantTestRun([]string{"build", "-failfast"}) || mutantTestRun(nil) {
		t.Error("mutantTestRun: only gremlins' go test -failfast of a mutant is one")
	}
}

// Efficacy and coverage as gremlins computes them; the tally check refuses a run whose mutants
// did not go through the wrapper.
func TestEfficacyAndTally(t *testing.T) {
	c := map[string]int{killed: 90, lived: 10, notCovered: 25, timedOut: 3, notViable: 7}
	if eff, cov := efficacy(c); eff != 90 || cov != 80 {
		t.Errorf("efficacy %v coverage %v, want 90 and 80", eff, cov)
	}
	if eff, cov := efficacy(map[string]int{notCovered: 4}); eff != 0 || cov != 0 {
		t.Errorf("nothing tested: %v %v", eff, cov)
	}
	tally := filepath.Join(t.TempDir(), "tally")
	if err := checkTally(tally, c); err == nil {
		t.Error("no tally, 107 mutants scored: want an error")
	}
	if err := os.WriteFile(tally, []byte(strings.Repeat("1\n", 107)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := checkTally(tally, c); err != nil {
		t.Error(err)
	}
}

// An equivalent mutant is listed in docs/mutants.md by file, column, type and the line's code:
// its line number may move, another column or code is another mutant.
func TestEquivalentsMatchByCode(t *testing.T) {
	doc := filepath.Join(t.TempDir(), "mutants.md")
	if err := os.WriteFile(doc, []byte("# x\n\n| mutant | type | code | why |\n|---|---|---|---|\n"+
		"| `reports/a.go:10:7` | CONDITIONALS_BOUNDARY | `if a \\|\\| n > 0 {` | n is never negative |\n"+
		"| not a row | X | `y` | z |\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	eq, err := readEquivalents(doc)
	if err != nil || len(eq) != 1 || eq[0].Code != "if a || n > 0 {" || eq[0].Why != "n is never negative" {
		t.Fatalf("equivalents %+v, %v", eq, err)
	}
	mod := t.TempDir()
	if err := os.MkdirAll(filepath.Join(mod, "reports"), 0o755); err != nil {
		t.Fatal(err)
	}
	src := "package reports\n\n\nfunc f(a bool, n int) {\n\tif a || n > 0 {\n\t}\n\tif a || n > 0 {\n\t}\n\tif b || n > 0 {\n\t}\n}\n"
	if err := os.WriteFile(filepath.Join(mod, "reports", "a.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	var o output
	o.Files = append(o.Files, struct {
		Name      string     `json:"file_name"`
		Mutations []mutation `json:"mutations"`
	}{"a.go", []mutation{
		{Type: "CONDITIONALS_BOUNDARY", Status: lived, Line: 5, Column: 7},  // moved from line 10
		{Type: "CONDITIONALS_NEGATION", Status: lived, Line: 5, Column: 7},  // another type
		{Type: "CONDITIONALS_BOUNDARY", Status: lived, Line: 9, Column: 7},  // other code
		{Type: "CONDITIONALS_BOUNDARY", Status: killed, Line: 7, Column: 7}, // killed: not a survivor
	}})
	ss := survivors(mod, "reports", o, eq)
	var got []string
	for _, s := range ss {
		got = append(got, s.position()+" "+s.Type+" "+map[bool]string{true: "listed", false: "new"}[s.Listed])
	}
	want := "reports/a.go:5:7 CONDITIONALS_BOUNDARY listed, reports/a.go:5:7 CONDITIONALS_NEGATION new, reports/a.go:9:7 CONDITIONALS_BOUNDARY new"
	if strings.Join(got, ", ") != want {
		t.Errorf("survivors %q\nwant %s", got, want)
	}
	r := result{Target: target{Dir: "reports"}, Out: o, Survivors: ss}
	if verdict([]result{r}, 20) != 1 {
		t.Error("unlisted survivors must fail the run")
	}
	r.Survivors = ss[:1]
	if verdict([]result{r}, 20) != 0 || verdict([]result{r}, 30) != 1 {
		t.Errorf("efficacy 25%%: passes a threshold of 20, not 30")
	}
}

func TestSelectTargets(t *testing.T) {
	all, err := selectTargets("")
	if err != nil || len(all) != len(targets) {
		t.Fatalf("all: %v %v", all, err)
	}
	two, err := selectTargets("./reports, specs/catalogue/")
	if err != nil || len(two) != 2 || two[0].Dir != "reports" || two[1].Dir != "specs/catalogue" {
		t.Fatalf("two: %v %v", two, err)
	}
	if _, err := selectTargets("suite"); err == nil || !strings.Contains(err.Error(), "internal/workload") {
		t.Errorf("unknown target: %v", err)
	}
}
