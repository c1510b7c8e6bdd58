package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/pubsub-conformance/harness/internal/cost"
)

// The tree's CPU includes a grandchild's (the suite's brokers are grandchildren of the
// wrapped command), and the command's exit status comes through.
func TestRunCountsTheTree(t *testing.T) {
	dir := t.TempDir()
	records, out := filepath.Join(dir, "cost.tsv"), filepath.Join(dir, "cost.json")
	if err := os.WriteFile(records, []byte("stale\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	busy := `sh -c 'i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done'; exit 3`
	if code := run(records, out, []string{"sh", "-c", busy}); code != 3 {
		t.Fatalf("exit code %d; want the command's 3", code)
	}
	s, err := cost.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	if s.CPU < 0.05 || s.Wall <= 0 || s.Suite != s.CPU {
		t.Fatalf("cost %+v; want the grandchild's busy loop counted (>= 0.05 CPU-s), no stale records", s)
	}
}
