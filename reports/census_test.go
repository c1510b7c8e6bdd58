package reports

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pubsub-conformance/harness/specs/catalogue"
)

// censusDir writes the fixture report into a new run directory, with every failed spec turned
// into a pass when allPass.
func censusDir(t *testing.T, root, name string, allPass bool) string {
	t.Helper()
	b, err := os.ReadFile("testdata/ginkgo-fixture.json")
	if err != nil {
		t.Fatal(err)
	}
	if allPass {
		var reps []map[string]any
		if err := json.Unmarshal(b, &reps); err != nil {
			t.Fatal(err)
		}
		for _, s := range reps[0]["SpecReports"].([]any) {
			s := s.(map[string]any)
			if s["State"] == "failed" {
				s["State"] = "passed"
				delete(s, "Failure")
			}
		}
		if b, err = json.Marshal(reps); err != nil {
			t.Fatal(err)
		}
	}
	dir := filepath.Join(root, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ginkgo-kafka.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestCensusCountsAFlakeAndNamesItsRun(t *testing.T) {
	root := t.TempDir()
	c, err := TakeCensus([]string{censusDir(t, root, "run-1", true), censusDir(t, root, "run-2", false), censusDir(t, root, "run-3", true)})
	if err != nil {
		t.Fatal(err)
	}
	if !c.Flaky() {
		t.Fatal("a behaviour failed in run-2 but the census is not flaky")
	}
	var d2 *CensusRow
	for i := range c.Rows {
		if c.Rows[i].Key == "D2" {
			d2 = &c.Rows[i]
		}
	}
	if d2 == nil || d2.Passed != 2 || d2.Failed != 1 || !strings.HasPrefix(d2.First, "run-2: ") || d2.Backend != "kafka" {
		t.Fatalf("D2 row: %+v (rows %+v)", d2, c.Rows)
	}
	if c.Runs[1].Failed == 0 || c.Runs[0].Failed != 0 || c.Runs[0].Seed != 1796015681 {
		t.Errorf("runs: %+v", c.Runs)
	}
	md := c.Markdown()
	for _, want := range []string{"# Flake census: 3 runs of kafka", "| run-2 | 1796015681 |", "| kafka | D2 "} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
}

func TestCensusOfStableRunsIsClean(t *testing.T) {
	root := t.TempDir()
	c, err := TakeCensus([]string{censusDir(t, root, "a", true), censusDir(t, root, "b", true)})
	if err != nil {
		t.Fatal(err)
	}
	if c.Flaky() || len(c.Rows) != 0 || c.Pairs == 0 {
		t.Fatalf("stable runs: flaky=%v rows=%+v pairs=%d", c.Flaky(), c.Rows, c.Pairs)
	}
	if !strings.Contains(c.Markdown(), "passed (or skipped with its reason) in every run") {
		t.Errorf("markdown:\n%s", c.Markdown())
	}
}

func TestCensusOfAnEmptyDirectoryIsAnError(t *testing.T) {
	if _, err := TakeCensus([]string{t.TempDir()}); err == nil {
		t.Fatal("a run directory without reports was accepted")
	}
}

// The census counts exactly: failed pairs per run, pairs clean in every run, none "not run"
// where every run had a result; rows by backend, then catalogue order; the first interrupted
// backend of a run is named; the markdown names each row's behaviour.
func TestCensusCountsExactly(t *testing.T) {
	root := t.TempDir()
	run1 := censusDir(t, root, "run-1", true)
	run2 := censusDir(t, root, "run-2", false)
	b, err := os.ReadFile(filepath.Join(run2, "ginkgo-kafka.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{run1, run2} {
		writeFile(t, filepath.Join(d, "ginkgo-pulsar.json"), string(b)) // pulsar fails in both runs
	}
	c, err := TakeCensus([]string{run1, run2})
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, r := range c.Rows {
		rows = append(rows, fmt.Sprintf("%s %s %d/%d/%d", r.Backend, r.Key, r.Passed, r.Failed, r.NotRun))
	}
	want := []string{"kafka D2 1/1/0", "kafka D7 1/1/0", "pulsar D2 0/2/0", "pulsar D7 0/2/0"}
	if strings.Join(rows, ", ") != strings.Join(want, ", ") {
		t.Errorf("rows %q, want %q", rows, want)
	}
	if c.Runs[0].Failed != 2 || c.Runs[1].Failed != 4 || c.Pairs != 2*(len(Build(mustRuns(t, run1)).Rows)-2) {
		t.Errorf("runs %+v, pairs %d", c.Runs, c.Pairs)
	}
	md := c.Markdown()
	d2, _ := catalogue.Lookup("D2")
	for _, want := range []string{"Suite time per run: min ", "| kafka | D2 " + mdEscape(d2.Title) + " | 1 | 1 | 0 | run-2: "} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}

	clean, err := TakeCensus([]string{censusDir(t, root, "clean", true)})
	if err != nil {
		t.Fatal(err)
	}
	if md := clean.Markdown(); strings.Contains(md, "| backend | behaviour |") {
		t.Errorf("a clean census has no table of rows:\n%s", md)
	}

	run3 := filepath.Join(root, "run-3")
	if err := os.MkdirAll(run3, 0o755); err != nil {
		t.Fatal(err)
	}
	intr, err := os.ReadFile("testdata/ginkgo-interrupted.json")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(run3, "ginkgo-kafka.json"), string(intr))
	c3, err := TakeCensus([]string{run3})
	if err != nil {
		t.Fatal(err)
	}
	if c3.Runs[0].Interrupted != "memory: Interrupted by User" || !c3.Flaky() {
		t.Errorf("interrupted run: %+v", c3.Runs[0])
	}
}

func mustRuns(t *testing.T, dir string) []*Run {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "ginkgo-*.json"))
	runs, err := ReadRuns(files)
	if err != nil {
		t.Fatal(err)
	}
	return runs
}

// A run's seed is the first report's that has one: reports without a seed (or any report)
// are passed over.
func TestSeedOfTheFirstReportWithOne(t *testing.T) {
	dir := t.TempDir()
	empty, zero, seeded := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json"), filepath.Join(dir, "c.json")
	writeFile(t, empty, "[]")
	writeFile(t, zero, `[{"SuiteConfig":{"RandomSeed":0}}]`)
	writeFile(t, seeded, `[{"SuiteConfig":{"RandomSeed":42}}]`)
	if got := seedOf([]string{filepath.Join(dir, "none.json"), empty, zero, seeded}); got != 42 {
		t.Errorf("seed %d, want 42", got)
	}
}

// A census without runs (a zero Census, as a caller may build one) renders its header and no
// suite-time line: there is no minimum or median of nothing.
func TestCensusMarkdownWithoutRuns(t *testing.T) {
	md := (&Census{}).Markdown()
	if !strings.HasPrefix(md, "# Flake census: 0 runs of \n") || strings.Contains(md, "Suite time") {
		t.Errorf("markdown:\n%s", md)
	}
}
