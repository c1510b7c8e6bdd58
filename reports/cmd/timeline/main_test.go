package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/types"
)

// A run of two processes: the broker setup, an Ordered container of two specs on process 1,
// one long spec on process 2, and a spec the filter left out.
func TestTimeline(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 3, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	spec := func(id string, proc int, from, to float64, ordered bool) types.SpecReport {
		r := types.SpecReport{LeafNodeType: types.NodeTypeIt, LeafNodeText: "[" + id + "] text",
			LeafNodeLabels: []string{"id:" + id}, ContainerHierarchyTexts: []string{"pub/sub conformance of k", "area"},
			State: types.SpecStatePassed, StartTime: at(from), EndTime: at(to), RunTime: at(to).Sub(at(from)),
			ParallelProcess: proc, IsInOrderedContainer: ordered}
		return r
	}
	rep := types.Report{StartTime: t0, EndTime: at(100), SpecReports: []types.SpecReport{
		{LeafNodeType: types.NodeTypeSynchronizedBeforeSuite, StartTime: at(0), EndTime: at(10), ParallelProcess: 1},
		spec("R4", 1, 10, 30, true),
		spec("R6", 1, 30, 60, true),
		spec("T3", 2, 10, 90, false),
		{LeafNodeType: types.NodeTypeIt, LeafNodeText: "[F5] x", LeafNodeLabels: []string{"id:F5"}, State: types.SpecStateSkipped},
		{LeafNodeType: types.NodeTypeSynchronizedAfterSuite, StartTime: at(90), EndTime: at(100), ParallelProcess: 1},
	}}
	dir := t.TempDir()
	data, err := json.Marshal([]types.Report{rep})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "ginkgo-k.json")
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if code := run([]string{file}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	got := out.String()
	for _, want := range []string{
		"run of k started 2026-12-02T03:00:00Z: suite 100.0 s",
		"SynchronizedBeforeSuite          proc 1     0.0-  10.0 s  10.0 s",
		"first spec started at 10.0 s, last spec ended at 90.0 s",
		"proc 1:   2 specs, busy  50.0 s, last spec ended at  60.0 s, idle  30.0 s",
		"proc 2:   1 specs, busy  80.0 s, last spec ended at  90.0 s, idle   0.0 s",
		"k: area                                                      proc 1    10.0-  60.0 s  50.0 s",
		"longest specs (of 3 that ran; 1 did not run)",
		"spec time per backend: k 130.0 s; total 130.0 s",
		"the longest chain or spec 80.0 s (T3); the spec time spread evenly over 2 processes 65.0 s; measured 80.0 s",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if code := run([]string{filepath.Join(dir, "missing.json")}, &out, &errOut); code != 2 {
		t.Errorf("missing file: exit %d, want 2", code)
	}
}
