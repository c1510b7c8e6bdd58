// Package selftest proves the specs can fail: it runs the conformance suite binary against
// known-bad variants of the memory reference backend ("memory~<variant>", see
// backends/mutants and backends/memory/variants.go) and asserts that the matching catalogue
// specs fail, while the same specs pass on the unbroken reference.
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

	"github.com/pubsub-conformance/harness/reports"
	"github.com/pubsub-conformance/harness/specs/catalogue"
)

// expectations: variant -> catalogue IDs that must fail on it. Variants whose failure on
// memory is timing-dependent (unconfirmed-send: a goroutine per Send usually still lands in
// order in-process) are left out rather than made flaky.
var expectations = map[string][]string{
	"nack-noop":                  {"A1", "A5"},
	"ack-commits-position":       {"A2"},
	"ack-commits-through":        {"A6", "A7"},
	"properties-case-folded":     {"D8"},
	"latest-is-earliest":         {"D9"},
	"ack-accepts-unknown":        {"A8"},
	"consumer-needs-topic":       {"L5"},
	"producer-lazy-topic":        {"L6"},
	"bare-topic-elsewhere":       {"L7"},
	"closed-silent":              {"L8"},
	"close-twice-fails":          {"L9"},
	"backend-close-orphans":      {"L10"},
	"restart-strands-consumers":  {"R6"},
	"exists-always-true":         {"L1", "L2", "L3"},
	"ready-poll-discards":        {"T2", "D6"},
	"unique-shares-group":        {"G2"},
	"flow-short-retention":       {"T1"},
	"close-unsubscribes":         {"R1", "R2", "A3"},
	"latest-race":                {"D2", "R2"},
	"timeout-not-wrapped":        {"D7"},
	"ack-noop":                   {"A4"},
	"duplicates":                 {"D3", "G1"},
	"drops-empty-properties":     {"D1"},
	"shared-fans-out":            {"G1", "G3"},
	"standby-members":            {"G4"},
	"accepts-invalid-topics":     {"L4"},
	"exists-swallows-errors":     {"F4"},
	"ack-unconfirmed":            {"F2"},
	"send-swallows-unavailable":  {"F3", "F4"},
	"consumer-gives-up":          {"F1"},
	"acks-on-close-only":         {"R8"},
	"acks-unflushed-on-close":    {"A4"},
	"ack-through-fixed-on-close": {"R7"},
	"send-retry-duplicates":      {"F3"},
}

func TestBrokenReferenceVariantsFailTheirSpecs(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the suite binary once per variant and spec (about a minute)")
	}
	bin := buildSuite(t)

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

// buildSuite compiles the suite's test binary once.
func buildSuite(t *testing.T) string {
	t.Helper()
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
