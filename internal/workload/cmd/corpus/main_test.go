package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pubsub-conformance/harness/internal/workload"
)

func cmd(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out, errs bytes.Buffer
	err := run(args, &out, &errs)
	return out.String() + errs.String(), err
}

// The add command a W1 failure prints writes an entry the corpus reads, with the program the
// failure gave; a second failure of the same seed on another backend is added to that entry.
func TestAddWritesAnEntryTheCorpusReads(t *testing.T) {
	dir := t.TempDir()
	prog := workload.Generate(1796307262, workload.MinSteps, workload.MaxSteps)
	out, err := cmd(t, "add", "-dir", dir, "-workload", "W1", "-seed", "1796307262", "-backend", "kafka",
		"-failure", "error: nack step, Nack: ErrUnknownDelivery", "-program", prog.String(), "-shrunk", "send(0) receive(0) nack(0,0)", "-date", "2026-12-03")
	if err != nil {
		t.Fatalf("add: %v\n%s", err, out)
	}
	if _, err := cmd(t, "add", "-dir", dir, "-seed", "1796307262", "-backend", "pulsar", "-failure", "lost", "-date", "2026-12-04"); err != nil {
		t.Fatalf("add a second backend: %v", err)
	}
	entries, err := workload.ReadCorpusDir(dir)
	if err != nil || len(entries) != 1 {
		t.Fatalf("the corpus: %v, %v", entries, err)
	}
	e := entries[0]
	if e.Name != "w1-1796307262" || e.Program.String() != prog.String() || e.Status != "open" || e.Shrunk.String() != "send(0) receive(0) nack(0,0)" {
		t.Fatalf("entry:\n%s", e.Format())
	}
	if len(e.Failed) != 2 || e.Failed[0].String() != "2026-12-03 kafka: error: nack step, Nack: ErrUnknownDelivery" || e.Failed[1].Backend != "pulsar" {
		t.Fatalf("failed lines: %v", e.Failed)
	}
	if !strings.Contains(e.Note, "found by W1 on kafka") {
		t.Errorf("note %q: want the default that asks for the fix", e.Note)
	}
	out, err = cmd(t, "list", "-dir", dir)
	if err != nil || !strings.Contains(out, "w1-1796307262.txt\topen\t25 steps\t2026-12-04 pulsar: lost") {
		t.Errorf("list: %v\n%s", err, out)
	}
}

func TestAddRefuses(t *testing.T) {
	dir := t.TempDir()
	if _, err := cmd(t, "add", "-dir", dir, "-seed", "5", "-backend", "kafka", "-failure", "lost"); err != nil {
		t.Fatal(err)
	}
	for name, args := range map[string][]string{
		"no seed":             {"-backend", "kafka", "-failure", "lost"},
		"no failure":          {"-seed", "5", "-backend", "kafka"},
		"another program":     {"-seed", "5", "-backend", "kafka", "-failure", "lost", "-program", "send(0)"},
		"W2 without schedule": {"-workload", "W2", "-seed", "5", "-backend", "kafka", "-failure", "lost"},
		"bad schedule":        {"-workload", "W2", "-seed", "5", "-backend", "kafka", "-failure", "lost", "-schedule", "flood@1"},
		"bad date":            {"-seed", "6", "-backend", "kafka", "-failure", "lost", "-date", "today"},
		"bad status":          {"-seed", "6", "-backend", "kafka", "-failure", "lost", "-status", "fixed"},
		"W3":                  {"-workload", "W3", "-seed", "6", "-backend", "kafka", "-failure", "lost"},
	} {
		if out, err := cmd(t, append([]string{"add", "-dir", dir}, args...)...); err == nil {
			t.Errorf("%s: accepted\n%s", name, out)
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	if len(files) != 1 {
		t.Errorf("refused adds left files: %v", files)
	}
	if _, err := cmd(t, "remove"); err == nil {
		t.Error("an unknown command ran")
	}
}

// Without -dir the corpus is the module's, found from the working directory.
func TestCorpusDirIsTheModules(t *testing.T) {
	d, err := corpusDir("")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(d, "w1-1796307262.txt")); err != nil {
		t.Fatalf("corpus dir %s: %v", d, err)
	}
}
