// Package selftest proves the specs can fail: it runs the conformance suite binary against
// known-bad variants of the memory reference backend ("memory~<variant>", see
// backends/mutants/memory.go) and asserts that every killer its record
// names fails, while the same specs pass on the unbroken reference.
package selftest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pubsub-conformance/harness/backends/memory"
	"github.com/pubsub-conformance/harness/backends/mutants"
	"github.com/pubsub-conformance/harness/reports"
	"github.com/pubsub-conformance/harness/specs/catalogue"
)

// timingDependent are the reference variants whose failure on memory depends on timing, left
// out rather than made flaky.
var timingDependent = map[string]string{
	"unconfirmed-send": "a goroutine per Send usually still lands in order in-process",
}

// expectations: variant -> the catalogue IDs that must fail on it, each of its record's killers
// (mutants.Variant.Catches): the records are the one list.
func expectations(t *testing.T) map[string][]string {
	out := map[string][]string{}
	for _, v := range mutants.For(memory.Name) {
		if why, skip := timingDependent[v.Name]; skip {
			t.Logf("memory~%s left out: %s", v.Name, why)
			continue
		}
		out[v.Name] = v.Catches
	}
	if len(out) == 0 {
		t.Fatal("no variant applies to memory")
	}
	return out
}

func TestBrokenReferenceVariantsFailTheirSpecs(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the suite binary once per variant and spec (about a minute)")
	}
	bin := buildSuite(t)
	expectations := expectations(t)

	var all []string
	for _, ids := range expectations {
		all = append(all, ids...)
	}
	sort.Strings(all)
	all = slices.Compact(all)

	// Every (backend, ID) run is started at once: the runs mostly wait for spec bounds, so
	// running them concurrently keeps the test near one bound (~1 min) instead of their sum.
	type key struct{ backend, id string }
	type outcome struct {
		states []string
		exit   int
	}
	results := map[key]outcome{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	launch := func(backend, id string) {
		wg.Go(func() {
			states, exit := run(t, bin, backend, []string{id})
			mu.Lock()
			results[key{backend, id}] = outcome{states[id], exit}
			mu.Unlock()
		})
	}
	for _, id := range all {
		launch("memory", id)
	}
	for variant, ids := range expectations {
		for _, id := range ids {
			launch("memory~"+variant, id)
		}
	}
	wg.Wait()

	t.Run("memory (control: the same specs pass)", func(t *testing.T) {
		for _, id := range all {
			o := results[key{"memory", id}]
			if len(o.states) == 0 || !allPassed(o.states) || o.exit != 0 {
				t.Errorf("[%s] on the unbroken reference: states %v, exit %d; want passed, 0", id, o.states, o.exit)
			}
		}
	})
	for variant, ids := range expectations {
		t.Run(variant, func(t *testing.T) {
			for _, id := range ids {
				o := results[key{"memory~" + variant, id}]
				if !anyFailed(o.states) {
					t.Errorf("[%s] did not fail on memory~%s (states %v): the spec cannot see this defect", id, variant, o.states)
				} else {
					t.Logf("[%s] fails on memory~%s as it must (%v)", id, variant, o.states)
				}
				if o.exit == 0 {
					t.Errorf("[%s] on memory~%s: suite exit code 0; want non-zero", id, variant)
				}
			}
		})
	}
}

// buildSuite returns the suite's test binary: the one make built before its stages
// ($PUBSUB_SUITE_BIN, which must exist when set), else one compiled here. make test always
// passes one: compiling the cgo suite inside this test, while the other stages compile beside
// it, ran past the build's bound on a fresh, loaded 2-core machine ("signal: killed").
func buildSuite(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("PUBSUB_SUITE_BIN"); bin != "" {
		if _, err := os.Stat(bin); err != nil {
			t.Fatalf("PUBSUB_SUITE_BIN: %v", err)
		}
		return bin
	}
	bin := filepath.Join(t.TempDir(), "suite.test")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "test", "-c", "-o", bin, ".")
	cmd.Dir = ".." // the suite package
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build the suite binary: %v\n%s", err, out)
	}
	return bin
}

// run runs the suite binary for backend, filtered to ids by their id labels, and returns each
// ID's spec statuses (from the Ginkgo JSON report, through the reports reader) and the exit code. Safe to call from any goroutine: it
// reports problems with t.Errorf, never t.Fatal.
func run(t *testing.T, bin, backend string, ids []string) (map[string][]string, int) {
	t.Helper()
	dir := t.TempDir()
	var filter []string
	for _, id := range ids {
		filter = append(filter, catalogue.IDLabel(id))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-test.run=^TestConformance$", "-ginkgo.label-filter="+strings.Join(filter, " || "), "-ginkgo.no-color")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PUBSUB_BACKENDS="+backend, "PUBSUB_REPORT_DIR="+dir)
	out, err := cmd.CombinedOutput()
	exit := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Errorf("run suite for %s: %v\n%s", backend, err, out)
			return nil, -1
		}
		exit = ee.ExitCode()
	}
	path := filepath.Join(dir, "ginkgo-"+backend+".json")
	if _, err := os.Stat(path); err != nil {
		t.Errorf("read the JSON report for %s: %v\nsuite output:\n%s", backend, err, tail(string(out), 40))
		return nil, -1
	}
	rep, err := reports.ReadRun(path)
	if err != nil {
		t.Errorf("read the JSON report for %s: %v", backend, err)
		return nil, -1
	}
	states := map[string][]string{}
	for _, c := range rep.Cases {
		if c.Setup || c.ID == "" {
			continue
		}
		states[c.ID] = append(states[c.ID], string(c.Status))
		if c.Status == reports.Fail {
			t.Logf("%s [%s] %s", backend, c.ID, c.Message)
		}
	}
	return states, exit
}

func anyFailed(states []string) bool {
	return slices.Contains(states, string(reports.Fail))
}

func allPassed(states []string) bool {
	for _, s := range states {
		if s != string(reports.Pass) && s != string(reports.Skip) {
			return false
		}
	}
	return true
}

func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
