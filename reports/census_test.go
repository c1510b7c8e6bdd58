package reports

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
