// Package cost measures what a conformance run costs in CPU: every broker, adapter or setup
// process the run starts records its own CPU time (user + sys, children included) when it is
// reaped, and the wrapper around the suite (suite/cmd/cost) takes the CPU of the whole process
// tree from the operating system and prints one line: the total, split into broker JVMs,
// Erlang, adapters, setup and the suite's own Go processes (the rest).
//
// Records go to the file named by the environment variable FileEnv (one tab-separated line
// each, appended with O_APPEND, so the run's Ginkgo processes write to it at once); without it
// Record does nothing. The figures are the kernel's (wait4's rusage): exact for every process
// the run reaps, and nothing is sampled.
package cost

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// FileEnv names the file that Record appends to.
const FileEnv = "PUBSUB_COST_FILE"

// The kinds a process is recorded as.
const (
	JVM     = "jvm"     // broker JVMs, their storage formats and class-data dumps
	Erlang  = "erlang"  // RabbitMQ nodes
	Adapter = "adapter" // out-of-process backend adapters (TrustGraph's Python backends)
	Setup   = "setup"   // virtualenvs, pip, Maven: once per machine, then cached
)

// KindOf tells a broker process's kind from the program it runs.
func KindOf(argv0 string) string {
	switch base := filepath.Base(argv0); {
	case base == "java":
		return JVM
	case strings.HasPrefix(base, "rabbitmq") || base == "erl" || strings.HasPrefix(base, "beam"):
		return Erlang
	default:
		return Setup
	}
}

// Record appends ps's CPU time (its own and its reaped children's) under kind and what, when
// FileEnv is set. Errors are ignored: a cost figure never fails a run.
func Record(kind, what string, ps *os.ProcessState) {
	path := os.Getenv(FileEnv)
	if path == "" || ps == nil {
		return
	}
	line := fmt.Sprintf("%s\t%s\t%.3f\t%.3f\n", kind, strings.ReplaceAll(what, "\t", " "), ps.UserTime().Seconds(), ps.SystemTime().Seconds())
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return
	}
	_, _ = f.WriteString(line) // one write: whole lines from concurrent writers
	_ = f.Close()
}

// Summary is the cost of one run: CPU-seconds (user + sys) of the whole tree and per kind, and
// the wall time. Suite is what no record claims: the suite's own Go processes (Ginkgo and its
// test processes, the crash children, the go tool).
type Summary struct {
	Wall      float64            `json:"wall_s"`
	CPU       float64            `json:"cpu_s"`
	User      float64            `json:"user_s"`
	Sys       float64            `json:"sys_s"`
	Kinds     map[string]float64 `json:"kinds_s"`
	Processes map[string]int     `json:"processes"`
	Suite     float64            `json:"suite_s"`
	Started   time.Time          `json:"started"`
}

// Rec is one recorded process.
type Rec struct {
	Kind, What string
	CPU        float64 // user + sys, seconds
}

// Records reads the records in path (missing: none).
func Records(path string) ([]Rec, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Rec
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Split(sc.Text(), "\t")
		if len(fs) != 4 {
			return nil, fmt.Errorf("%s: bad record %q", path, sc.Text())
		}
		u, err1 := strconv.ParseFloat(fs[2], 64)
		y, err2 := strconv.ParseFloat(fs[3], 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("%s: bad record %q", path, sc.Text())
		}
		out = append(out, Rec{Kind: fs[0], What: fs[1], CPU: u + y})
	}
	return out, sc.Err()
}

// Summarize reads the records in path (missing: none) under the tree's totals.
func Summarize(path string, started time.Time, wall, user, sys time.Duration) (Summary, error) {
	s := Summary{Wall: wall.Seconds(), User: user.Seconds(), Sys: sys.Seconds(), Kinds: map[string]float64{}, Processes: map[string]int{}, Started: started}
	s.CPU = s.User + s.Sys
	recs, err := Records(path)
	if err != nil {
		return s, err
	}
	claimed := 0.0
	for _, r := range recs {
		s.Kinds[r.Kind] += r.CPU
		s.Processes[r.Kind]++
		claimed += r.CPU
	}
	s.Suite = max(s.CPU-claimed, 0)
	return s, nil
}

// Line is the run's cost in one line.
func (s Summary) Line() string {
	part := func(kind, label string) string {
		n := s.Processes[kind]
		if n == 0 {
			return ""
		}
		return fmt.Sprintf(", %s %.1f (%d)", label, s.Kinds[kind], n)
	}
	return fmt.Sprintf("cost: %.1f CPU-s (user %.1f + sys %.1f) in %.1f s wall: suite %.1f%s%s%s%s",
		s.CPU, s.User, s.Sys, s.Wall, s.Suite,
		part(JVM, "broker JVMs"), part(Erlang, "Erlang"), part(Adapter, "adapters"), part(Setup, "setup"))
}

// Write writes s as JSON to path.
func (s Summary) Write(path string) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// Read reads a Summary written by Write.
func Read(path string) (Summary, error) {
	var s Summary
	b, err := os.ReadFile(path)
	if err != nil {
		return s, err
	}
	return s, json.Unmarshal(b, &s)
}
