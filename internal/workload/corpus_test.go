package workload

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pubsub-conformance/harness/backends/memory"
	"github.com/pubsub-conformance/harness/internal/history"
)

// TestCorpusFiles: the embedded corpus is the directory's, every file is an entry in its
// canonical form (what the add command writes), and every seed W1 and W2 are known to have
// failed on (docs/workload.md, docs/nemesis.md, issue 32) is in it.
func TestCorpusFiles(t *testing.T) {
	entries, err := Corpus()
	if err != nil {
		t.Fatal(err)
	}
	onDisk, err := ReadCorpusDir("testdata/corpus")
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(onDisk) {
		t.Fatalf("embedded %d entries, the directory has %d", len(entries), len(onDisk))
	}
	for _, e := range entries {
		text, err := os.ReadFile(filepath.Join("testdata/corpus", e.File()))
		if err != nil {
			t.Fatal(err)
		}
		if e.Format() != string(text) {
			t.Errorf("%s is not in the form the add command writes:\n%s\nwant:\n%s", e.File(), text, e.Format())
		}
		// The stored program is what replays; the generator may have moved on since.
		if drawn := Generate(e.Seed, MinSteps, MaxSteps); drawn.String() != e.Program.String() {
			t.Logf("%s: seed %d now draws another program (the stored one replays)", e.File(), e.Seed)
		}
		if len(e.Shrunk) > len(e.Program) {
			t.Errorf("%s: shrunk to %d steps from %d", e.File(), len(e.Shrunk), len(e.Program))
		}
	}
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name
	}
	for _, want := range []string{
		"w1-1796172496", "w1-1796173037", "w1-1796175085", "w1-1796175086", "w1-1796182611", "w1-1796183137",
		"w1-1796183138", "w1-1796183140", "w1-1796184132", "w1-1796197958", "w1-1796307262",
		"w2-1796182174", "w2-1796182860", "w2-1796190012", "w2-1796190013", "w2-1796190029", "w2-1796325185",
	} {
		if !slices.Contains(names, want) {
			t.Errorf("no corpus entry %s", want)
		}
	}
}

// TestCorpusOnReference: every entry's program runs on the reference backend, under its
// schedule's faults the reference can make for W2, with no anomaly: the corpus holds valid
// programs, and a failure replayed on a broker is the broker's.
func TestCorpusOnReference(t *testing.T) {
	entries, err := Corpus()
	if err != nil {
		t.Fatal(err)
	}
	can := memoryNemesis(memory.NewBroker()).Can()
	for _, e := range entries {
		t.Run(e.Name, func(t *testing.T) {
			var res Result
			if e.Workload == "W2" {
				sched, _ := e.Schedule.Within(can)
				got, ref := runUnder(t, e.Program, sched)
				res = got
				res.Findings = append(res.Findings, CompareUnderFaults(ref.Outcome, got, fmt.Sprintf("w%d", runs), fmt.Sprintf("n%d", runs-1))...)
			} else {
				res = runOn(t, "", e.Program)
			}
			if len(res.Findings) > 0 {
				t.Fatalf("%s on the reference: %s", e.File(), history.Report(time.Now(), res.Findings, 3))
			}
			if res.Calls == 0 || len(res.Outcome) < 2 {
				t.Fatalf("%s on the reference: %d calls, %d subscriptions drained", e.File(), res.Calls, len(res.Outcome))
			}
		})
	}
}

func TestEntryRoundTrip(t *testing.T) {
	prog, _ := ParseProgram("send(1) receive(3,long) nack(0,1)")
	sched, _ := ParseSchedule("cut(long)@0 kill(1)@2")
	e := Entry{Name: "w2-42", Workload: "W2", Seed: 42, Program: prog, Schedule: sched,
		Failed: []Failed{{"2026-12-03", "kafka", "error: nack step, Nack: ErrUnknownDelivery"}, {"2026-12-04", "pulsar", "lost"}},
		Shrunk: prog[:1], Status: "closed", Note: strings.Repeat("a long note that wraps ", 12) + "end"}
	got, err := ParseEntry(e.File(), e.Format())
	if err != nil {
		t.Fatal(err)
	}
	if got.Format() != e.Format() || got.Note != strings.TrimSpace(e.Note) || len(got.Failed) != 2 || got.Failed[0] != e.Failed[0] {
		t.Fatalf("round trip:\n%s\ngave:\n%s", e.Format(), got.Format())
	}
	if n := strings.Count(e.Format(), "\nnote: "); n < 2 {
		t.Errorf("the note is not wrapped (%d lines):\n%s", n, e.Format())
	}
}

func TestParseEntryRejects(t *testing.T) {
	ok := "workload: W1\nseed: 7\nprogram: send(0)\nfailed: 2026-12-03 kafka: lost\nstatus: open\n"
	if _, err := ParseEntry("w1-7.txt", ok); err != nil {
		t.Fatalf("a valid entry: %v", err)
	}
	for name, c := range map[string]struct{ file, text string }{
		"unknown key":        {"w1-7.txt", ok + "fixed: yes\n"},
		"no failed line":     {"w1-7.txt", strings.Replace(ok, "failed: 2026-12-03 kafka: lost\n", "", 1)},
		"bad date":           {"w1-7.txt", strings.Replace(ok, "2026-12-03", "3 Dec", 1)},
		"no backend":         {"w1-7.txt", strings.Replace(ok, "kafka: lost", "lost", 1)},
		"bad status":         {"w1-7.txt", strings.Replace(ok, "open", "fixed", 1)},
		"bad program":        {"w1-7.txt", strings.Replace(ok, "send(0)", "send(0) sned(1)", 1)},
		"program twice":      {"w1-7.txt", ok + "program: send(1)\n"},
		"W1 with a schedule": {"w1-7.txt", ok + "schedule: cut(long)@0\n"},
		"W2 without one":     {"w2-7.txt", strings.Replace(ok, "W1", "W2", 1)},
		"name not the seed":  {"w1-8.txt", ok},
		"a longer seed":      {"w1-71.txt", ok},
		"no key":             {"w1-7.txt", ok + "just words\n"},
	} {
		if _, err := ParseEntry(c.file, c.text); err == nil {
			t.Errorf("%s: parsed", name)
		}
	}
}

func TestSelectEntries(t *testing.T) {
	all := []Entry{{Name: "w1-1", Workload: "W1", Seed: 1}, {Name: "w1-2", Workload: "W1", Seed: 2}, {Name: "w2-3", Workload: "W2", Seed: 3}}
	for sel, want := range map[string]string{"": "w1-1 w1-2", "all": "w1-1 w1-2", "none": "", "2": "w1-2", "w1-2.txt, w1-1": "w1-2 w1-1", "1,w1-1": "w1-1"} {
		got, err := SelectEntries(all, "W1", sel)
		if err != nil {
			t.Fatalf("%q: %v", sel, err)
		}
		var names []string
		for _, e := range got {
			names = append(names, e.Name)
		}
		if strings.Join(names, " ") != want {
			t.Errorf("SelectEntries(W1, %q) = %v, want %s", sel, names, want)
		}
	}
	for _, bad := range []string{"3", "w2-3", "w1-9"} {
		if _, err := SelectEntries(all, "W1", bad); err == nil || !strings.Contains(err.Error(), "w1-1") {
			t.Errorf("SelectEntries(W1, %q): %v, want an error listing the entries", bad, err)
		}
	}
}

func TestScheduleWithin(t *testing.T) {
	s, _ := ParseSchedule("cut(long)@0 kill(1)@3 limit(short)@5")
	kept, left := s.Within([]Fault{FaultCut, FaultLimit})
	if kept.String() != "cut(long)@0 limit(short)@5" || left.String() != "kill(1)@3" {
		t.Fatalf("Within: kept %s, left %s", kept, left)
	}
}
