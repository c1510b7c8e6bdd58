package reports

import (
	"path/filepath"
	"strings"
	"testing"
)

const fixtureBaseline = `# accepted results
backends:
  kafka:
    D1: pass
    D2: pass
    D7: {result: fail, note: "KAFKA-1: cancel maps to the wrong error"}
    G1: {result: skip, note: "was unsupported"}
    T1: skip
    T3: pass
    R4: pass
  pulsar:
    D1: pass
  nosuch:
    D1: pass
`

func TestGate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "baseline.yaml")
	writeFile(t, path, fixtureBaseline)
	b, err := ReadBaseline(path)
	if err != nil {
		t.Fatal(err)
	}
	if b.Backends["kafka"]["D7"].Note == "" || b.Backends["kafka"]["T1"].Result != Skip {
		t.Fatalf("both YAML forms should parse: %+v", b.Backends["kafka"])
	}
	m := fixtureMatrix(t, b.IDs()...)

	g := Gate(m, b, nil)
	var got []string
	for _, c := range g.Changes {
		got = append(got, string(c.Kind)+" "+c.Backend+" "+c.ID)
	}
	want := []string{
		"new failure kafka D2",
		"missing kafka R4",
		"newly skipped kafka T3",
		"missing nosuch *",
		"missing pulsar D1",
		"new failure python A1",
		"newly skipped python T3",
		"improvement kafka G1",
		"new spec python *",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("changes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !g.Failed() {
		t.Error("gate should fail")
	}
	report := g.Report()
	for _, s := range []string{"gate FAIL", "NEW FAILURE", "kafka D2: pass -> fail: Timed out after 0.050s: message never arrived",
		"MISSING", "pulsar D1: pass -> not-run: not run: BeforeSuite failed", "IMPROVEMENT", "kafka G1: skip -> pass: was unsupported"} {
		if !strings.Contains(report, s) {
			t.Errorf("report lacks %q:\n%s", s, report)
		}
	}

	t.Run("only kafka", func(t *testing.T) {
		g := Gate(m, b, []string{"kafka"})
		for _, c := range g.Changes {
			if c.Backend != "kafka" {
				t.Errorf("unexpected %v", c)
			}
		}
		if len(g.Changes) != 4 || !g.Failed() {
			t.Errorf("changes %v", g.Changes)
		}
	})

	t.Run("accepting the current results passes, improvements alone pass", func(t *testing.T) {
		nb := FromMatrix(m, b)
		if _, ok := nb.Backends["memory"]; ok {
			t.Error("reference backend must not be baselined")
		}
		if nb.Backends["kafka"]["D7"].Note == "" {
			t.Error("notes of unchanged results must be kept")
		}
		if _, ok := nb.Backends["nosuch"]; !ok {
			t.Error("a baseline backend this run did not report must be kept as it was")
		}
		delete(nb.Backends, "nosuch")
		out := filepath.Join(t.TempDir(), "b.yaml")
		if err := nb.Write(out); err != nil {
			t.Fatal(err)
		}
		rb, err := ReadBaseline(out)
		if err != nil {
			t.Fatal(err)
		}
		if g := Gate(m, rb, nil); g.Failed() || len(g.Changes) != 0 {
			t.Errorf("gate against own results: %s", g.Report())
		}
		// Accept a failure where the run passes: an improvement, reported, not failing.
		rb.Backends["kafka"]["D1"] = Accepted{Result: Fail}
		g := Gate(m, rb, nil)
		if g.Failed() || len(g.Changes) != 1 || g.Changes[0].Kind != Improvement {
			t.Errorf("improvement only: %s", g.Report())
		}
	})
}

func TestReadBaselineErrors(t *testing.T) {
	tests := []struct{ name, content, want string }{
		{"bad result", "backends:\n  kafka:\n    D1: passed\n", `result "passed": want pass, skip or fail`},
		{"unknown field", "backends:\n  kafka:\n    D1: {result: pass, note: x, extra: 1}\n", "extra"},
		{"no backends", "# nothing\n", "baseline has no backends"},
		{"not yaml", "backends: [unclosed\n", "malformed baseline"},
		{"wrong top level", "kafka:\n  D1: pass\n", "malformed baseline"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "baseline.yaml")
			writeFile(t, path, tt.content)
			_, err := ReadBaseline(path)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), path) {
				t.Errorf("err %v, want %q naming the file", err, tt.want)
			}
		})
	}
}
