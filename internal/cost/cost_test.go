package cost

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestKindOf(t *testing.T) {
	for argv0, want := range map[string]string{
		"/usr/lib/jvm/java-17/bin/java": JVM, "java": JVM,
		"/usr/lib/rabbitmq/bin/rabbitmq-server": Erlang, "erl": Erlang, "beam.smp": Erlang,
		"mvn": Setup, "/usr/bin/python3": Setup, "javac": Setup,
	} {
		if got := KindOf(argv0); got != want {
			t.Errorf("KindOf(%q) = %q; want %q", argv0, got, want)
		}
	}
}

// A recorded process's CPU is claimed by its kind; what no record claims is the suite's.
func TestRecordAndSummarize(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cost.tsv")
	t.Setenv(FileEnv, path)
	cmd := exec.Command("sh", "-c", "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	Record(JVM, "broker\twith a tab", cmd.ProcessState)
	Record(Erlang, "node", cmd.ProcessState)
	recs, err := Records(path)
	if err != nil || len(recs) != 2 || recs[0].Kind != JVM || recs[0].What != "broker with a tab" {
		t.Fatalf("Records = %+v, %v", recs, err)
	}
	one := recs[0].CPU
	if one <= 0 {
		t.Fatalf("a busy shell recorded %v CPU-s", one)
	}
	s, err := Summarize(path, time.Now(), 10*time.Second, 8*time.Second, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if s.CPU != 10 || s.Kinds[JVM] != one || s.Kinds[Erlang] != one || s.Processes[JVM] != 1 {
		t.Fatalf("Summarize = %+v", s)
	}
	if want := 10 - 2*one; s.Suite < want-1e-9 || s.Suite > want+1e-9 {
		t.Fatalf("suite %v; want the unclaimed %v", s.Suite, want)
	}
	line := s.Line()
	for _, w := range []string{"cost: 10.0 CPU-s (user 8.0 + sys 2.0) in 10.0 s wall", "broker JVMs", "Erlang"} {
		if !strings.Contains(line, w) {
			t.Errorf("line %q lacks %q", line, w)
		}
	}
	if strings.Contains(line, "adapters") {
		t.Errorf("line %q names a kind nothing recorded", line)
	}
	out := filepath.Join(t.TempDir(), "cost.json")
	if err := s.Write(out); err != nil {
		t.Fatal(err)
	}
	back, err := Read(out)
	if err != nil || back.Line() != line {
		t.Fatalf("Read back %q, %v; want %q", back.Line(), err, line)
	}
}

func TestRecordWithoutFileIsNothing(t *testing.T) {
	t.Setenv(FileEnv, "")
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	Record(JVM, "x", cmd.ProcessState) // must not panic or write anywhere
	if _, err := os.Stat(FileEnv); err == nil {
		t.Fatal("Record wrote a file named after the variable")
	}
}

func TestBadRecord(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cost.tsv")
	if err := os.WriteFile(path, []byte("jvm\tx\tnot-a-number\t1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Summarize(path, time.Now(), 0, 0, 0); err == nil {
		t.Fatal("a bad record summarized without an error")
	}
}
