package workload

import (
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// The corpus (docs/workload.md): every program W1 or W2 ever failed on, one file per entry in
// testdata/corpus/, replayed by every run of that workload on every backend before its fresh
// seeds, as `go test -fuzz` keeps and replays testdata/fuzz. An entry stores the program's
// steps, not only its seed: the same seed draws another program once the generator changes,
// and the stored program is what failed. `go run ./internal/workload/cmd/corpus add ...` (the
// command a failure prints) writes an entry.

//go:embed testdata/corpus/*.txt
var corpusFiles embed.FS

// CorpusDir is where the entries are, from the module's root.
const CorpusDir = "internal/workload/testdata/corpus"

// MinSteps and MaxSteps are the length of W1's and W2's programs: Generate(seed, MinSteps,
// MaxSteps) is the program of a seed. On Kafka each Consumer() is a group join of about a
// second, so a program of 20 to 40 steps with its drain takes 5-20 s.
const MinSteps, MaxSteps = 20, 40

// Entry is one program of the corpus.
type Entry struct {
	// Name is the file's name without .txt: the workload and the seed, "w1-1796307262" (a
	// suffix "-<anything>" may tell apart two programs of one seed, from two generators).
	Name     string
	Workload string // "W1" or "W2"
	// Seed drew Program when the entry was added (Generate(Seed, MinSteps, MaxSteps)); the
	// stored Program is what replays, whatever the generator draws now.
	Seed    int
	Program Program
	// Schedule (W2 only) is the nemesis schedule it failed under, as drawn on that backend
	// (a schedule draws among the faults the broker can take).
	Schedule Schedule
	// Failed lists each failure seen: date, backend, kind of failure.
	Failed []Failed
	// Shrunk is the program the failure was shrunk to, when known (nil otherwise).
	Shrunk Program
	// Status is "open" (the defect it found is not fixed, or not ours to fix: the entry is
	// expected to fail on that backend) or "closed" (Note names the fix or the spec).
	Status string
	Note   string
}

// Failed is one failure of an entry's program.
type Failed struct {
	Date    string // 2006-01-02
	Backend string
	Failure string // Failure.String(): the anomaly class, or "error: <step> step, <call>: <class>"
}

func (f Failed) String() string { return fmt.Sprintf("%s %s: %s", f.Date, f.Backend, f.Failure) }

// File is the entry's file name.
func (e Entry) File() string { return e.Name + ".txt" }

// EntryName is the name of the entry of seed in workload ("W1" -> "w1-<seed>").
func EntryName(workload string, seed int) string {
	return fmt.Sprintf("%s-%d", strings.ToLower(workload), seed)
}

const corpusHeader = "# workload corpus entry (docs/workload.md): replayed by every %s run on every backend before its fresh seeds.\n"

// Format is the entry's file text; ParseEntry reads it back.
func (e Entry) Format() string {
	var b strings.Builder
	fmt.Fprintf(&b, corpusHeader, e.Workload)
	line := func(k, v string) {
		if v != "" {
			fmt.Fprintf(&b, "%s: %s\n", k, v)
		}
	}
	line("workload", e.Workload)
	line("seed", strconv.Itoa(e.Seed))
	line("program", e.Program.String())
	line("schedule", e.Schedule.String())
	for _, f := range e.Failed {
		line("failed", f.String())
	}
	line("shrunk", e.Shrunk.String())
	line("status", e.Status)
	for _, l := range wrap(e.Note, 100-len("note: ")) {
		line("note", l)
	}
	return b.String()
}

// wrap cuts s into lines of at most width runes at spaces (a longer word stays whole).
func wrap(s string, width int) []string {
	var out []string
	cur := ""
	for _, w := range strings.Fields(s) {
		switch {
		case cur == "":
			cur = w
		case len([]rune(cur))+1+len([]rune(w)) > width:
			out = append(out, cur)
			cur = w
		default:
			cur += " " + w
		}
	}
	if cur != "" {
		out = append(out, cur)
	}
	return out
}

// ParseEntry reads an entry file (name is its file name, with or without .txt): lines `key:
// value`, # comments and blank lines ignored; keys workload, seed, program, schedule (W2),
// failed (one or more: `<date> <backend>: <failure>`), shrunk, status (open or closed) and
// note (several note lines join with a space). Anything else is an error, so a typo does not
// pass as an entry.
func ParseEntry(name, text string) (Entry, error) {
	e := Entry{Name: strings.TrimSuffix(name, ".txt")}
	fail := func(n int, format string, args ...any) (Entry, error) {
		return Entry{}, fmt.Errorf("%s line %d: %s", e.File(), n, fmt.Sprintf(format, args...))
	}
	seen := map[string]bool{}
	var notes []string
	for i, raw := range strings.Split(text, "\n") {
		n, l := i+1, strings.TrimSpace(raw)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		k, v, ok := strings.Cut(l, ":")
		if !ok {
			return fail(n, "want key: value")
		}
		v = strings.TrimSpace(v)
		if seen[k] && k != "failed" && k != "note" {
			return fail(n, "%s given twice", k)
		}
		seen[k] = true
		var err error
		switch k {
		case "workload":
			if v != "W1" && v != "W2" {
				return fail(n, "workload %q: want W1 or W2", v)
			}
			e.Workload = v
		case "seed":
			if e.Seed, err = strconv.Atoi(v); err != nil {
				return fail(n, "seed %q: want an integer", v)
			}
		case "program":
			if e.Program, err = ParseProgram(v); err != nil {
				return fail(n, "program: %v", err)
			}
		case "schedule":
			if e.Schedule, err = ParseSchedule(v); err != nil {
				return fail(n, "schedule: %v", err)
			}
		case "shrunk":
			if e.Shrunk, err = ParseProgram(v); err != nil {
				return fail(n, "shrunk: %v", err)
			}
		case "failed":
			f, err := ParseFailed(v)
			if err != nil {
				return fail(n, "failed: %v", err)
			}
			e.Failed = append(e.Failed, f)
		case "status":
			if v != "open" && v != "closed" {
				return fail(n, "status %q: want open or closed", v)
			}
			e.Status = v
		case "note":
			notes = append(notes, v)
		default:
			return fail(n, "unknown key %q (want workload, seed, program, schedule, failed, shrunk, status, note)", k)
		}
	}
	e.Note = strings.Join(strings.Fields(strings.Join(notes, " ")), " ")
	switch {
	case e.Workload == "" || !seen["seed"] || len(e.Program) == 0 || len(e.Failed) == 0 || e.Status == "":
		return Entry{}, fmt.Errorf("%s: an entry needs workload, seed, program, at least one failed line and a status", e.File())
	case e.Workload == "W2" && len(e.Schedule) == 0:
		return Entry{}, fmt.Errorf("%s: a W2 entry needs the schedule it failed under", e.File())
	case e.Workload == "W1" && len(e.Schedule) > 0:
		return Entry{}, fmt.Errorf("%s: a W1 entry has no schedule (W1 runs without faults)", e.File())
	case e.Name != EntryName(e.Workload, e.Seed) && !strings.HasPrefix(e.Name, EntryName(e.Workload, e.Seed)+"-"):
		return Entry{}, fmt.Errorf("%s: the file of seed %d of %s is named %s.txt", e.File(), e.Seed, e.Workload, EntryName(e.Workload, e.Seed))
	}
	return e, nil
}

// ParseFailed reads a failed line's value: `<yyyy-mm-dd> <backend>: <failure>`.
func ParseFailed(v string) (Failed, error) {
	date, rest, _ := strings.Cut(v, " ")
	backend, failure, ok := strings.Cut(rest, ":")
	if _, err := time.Parse(time.DateOnly, date); err != nil || !ok || strings.TrimSpace(backend) == "" || strings.TrimSpace(failure) == "" {
		return Failed{}, fmt.Errorf("%q: want <yyyy-mm-dd> <backend>: <failure>", v)
	}
	return Failed{Date: date, Backend: strings.TrimSpace(backend), Failure: strings.TrimSpace(failure)}, nil
}

// Corpus is the corpus the binary was built with (testdata/corpus, embedded), sorted by name.
func Corpus() ([]Entry, error) { return readCorpus(corpusFiles, "testdata/corpus") }

// ReadCorpusDir reads the entries of a corpus directory on disk (the command that adds one).
func ReadCorpusDir(dir string) ([]Entry, error) { return readCorpus(os.DirFS(dir), ".") }

func readCorpus(fsys fs.FS, dir string) ([]Entry, error) {
	files, err := fs.Glob(fsys, filepath.ToSlash(filepath.Join(dir, "*.txt")))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	var out []Entry
	for _, f := range files {
		text, err := fs.ReadFile(fsys, f)
		if err != nil {
			return nil, err
		}
		e, err := ParseEntry(filepath.Base(f), string(text))
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

// SelectEntries picks workload's entries of all by sel (PUBSUB_WORKLOAD_CORPUS): "" or "all"
// every one, "none" none, else a comma-separated list of entry names or seeds, each of which
// must be an entry of workload.
func SelectEntries(all []Entry, workload, sel string) ([]Entry, error) {
	var mine []Entry
	for _, e := range all {
		if e.Workload == workload {
			mine = append(mine, e)
		}
	}
	switch sel = strings.TrimSpace(sel); sel {
	case "", "all":
		return mine, nil
	case "none":
		return nil, nil
	}
	var out []Entry
	for _, want := range strings.Split(sel, ",") {
		want = strings.TrimSuffix(strings.TrimSpace(want), ".txt")
		i := slices.IndexFunc(mine, func(e Entry) bool { return e.Name == want || strconv.Itoa(e.Seed) == want })
		if i < 0 {
			names := make([]string, len(mine))
			for j, e := range mine {
				names[j] = e.Name
			}
			return nil, fmt.Errorf("no %s corpus entry %q (want all, none, or names or seeds of %v)", workload, want, names)
		}
		if !slices.ContainsFunc(out, func(e Entry) bool { return e.Name == mine[i].Name }) {
			out = append(out, mine[i])
		}
	}
	return out, nil
}

// Within is the part of s the nemesis can make (can) and the faults left out.
func (s Schedule) Within(can []Fault) (kept, left Schedule) {
	for _, f := range s {
		if slices.Contains(can, f.Fault) {
			kept = append(kept, f)
		} else {
			left = append(left, f)
		}
	}
	return kept, left
}
