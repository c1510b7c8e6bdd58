package reports

import (
	"fmt"
	"strings"
	"testing"

	"github.com/pubsub-conformance/harness/specs/catalogue"
)

// exitRun is one column of a run of our suite that selected selected: the cases are ID=status.
func exitRun(label string, selected []string, cases map[string]Status) *Run {
	r := &Run{File: "ginkgo-" + label + ".json", Label: label,
		Meta: &Meta{Backend: label, Selected: selected}}
	for id, st := range cases {
		c := Case{ID: id, Status: st, Backend: label}
		if st == Fail {
			c.Message = id + " broke"
		}
		r.Cases = append(r.Cases, c)
	}
	return r
}

// The baseline of these tests: kafka passes D1-D4; rabbitmq is accepted to fail R6 (a MUST)
// and D4 (a SHOULD); trustgraph-kafka has a column the runs below do not select.
func exitBaseline() *Baseline {
	return &Baseline{Backends: map[string]map[string]Accepted{
		"kafka":            {"D1": {Result: Pass}, "D2": {Result: Pass}, "D4": {Result: Pass}, "R6": {Result: Pass}},
		"rabbitmq":         {"D1": {Result: Pass}, "D2": {Result: Pass}, "D4": {Result: Fail, Note: "no order"}, "R6": {Result: Fail, Note: "no replay"}},
		"trustgraph-kafka": {"D1": {Result: Fail}},
	}}
}

func runExit(t *testing.T, level catalogue.Level, strict bool, runs ...*Run) (int, string) {
	t.Helper()
	m := Build(runs, catalogue.IDs()...)
	g := GateWith(m, exitBaseline(), GateOptions{Level: level})
	code, line := RunExit(m, g, RunExitOptions{Strict: strict, Baseline: "ci/baseline.yaml"})
	if strings.Contains(line, "\n") {
		t.Errorf("the verdict is not one line: %q", line)
	}
	return code, line
}

func TestRunExit(t *testing.T) {
	sel, onlyKafka := []string{"kafka", "rabbitmq"}, []string{"kafka"}
	kafkaOK := map[string]Status{"D1": Pass, "D2": Pass, "D4": Pass, "R6": Pass}
	rabbitAccepted := map[string]Status{"D1": Pass, "D2": Pass, "D4": Fail, "R6": Fail}
	for _, tc := range []struct {
		name   string
		level  catalogue.Level
		strict bool
		runs   []*Run
		code   int
		want   []string // substrings of the line
		unwant []string
	}{
		{name: "only the failures the baseline accepts for their column", runs: []*Run{exitRun("kafka", sel, kafkaOK), exitRun("rabbitmq", sel, rabbitAccepted)},
			code: 0, want: []string{"conformance: exit 0: 2 failures accepted by ci/baseline.yaml for its column (rabbitmq D4 R6)", "CONFORMANCE_STRICT=1"},
			unwant: []string{"SHOULD failure"}},
		{name: "accepted failures and a SHOULD one below the gate's level", level: catalogue.MUST,
			runs: []*Run{exitRun("kafka", sel, map[string]Status{"D1": Pass, "D2": Pass, "D4": Fail, "R6": Pass}), exitRun("rabbitmq", sel, rabbitAccepted)},
			code: 0, want: []string{"conformance: exit 0: 2 failures accepted by ci/baseline.yaml for its column (rabbitmq D4 R6); " +
				"1 SHOULD failure ci/baseline.yaml does not list, not blocking at gate level must (kafka D4); CONFORMANCE_STRICT=1 exits 1 on them"}},
		// as many accepted failures as SHOULD ones below the level: both are failures, not none
		{name: "one accepted failure and one SHOULD failure below the gate's level", level: catalogue.MUST,
			runs: []*Run{exitRun("kafka", sel, map[string]Status{"D1": Pass, "D2": Pass, "D4": Fail, "R6": Pass}),
				exitRun("rabbitmq", sel, map[string]Status{"D1": Pass, "D2": Pass, "D4": Pass, "R6": Fail})},
			code: 0, want: []string{"conformance: exit 0: 1 failure accepted by ci/baseline.yaml for its column (rabbitmq R6); " +
				"1 SHOULD failure ci/baseline.yaml does not list, not blocking at gate level must (kafka D4)"}, unwant: []string{"no failures"}},
		// as many accepted failures as unknown results: both are said, not "no failures"
		{name: "one accepted failure and one unknown where a failure is accepted",
			runs: []*Run{exitRun("kafka", sel, kafkaOK), exitRun("rabbitmq", sel, map[string]Status{"D1": Pass, "D2": Pass, "D4": Fail, "R6": Unknown})},
			code: 0, want: []string{"conformance: exit 0: 1 failure accepted by ci/baseline.yaml for its column (rabbitmq D4); " +
				"1 unknown result where ci/baseline.yaml accepts no pass or below the gate's level (rabbitmq R6)"}, unwant: []string{"no failures"}},
		{name: "strict: accepted failures exit 1", strict: true, runs: []*Run{exitRun("kafka", sel, kafkaOK), exitRun("rabbitmq", sel, rabbitAccepted)},
			code: 1, want: []string{"conformance: exit 1 (CONFORMANCE_STRICT=1, any failure or unknown): 2 failures accepted", "rabbitmq D4 R6"}},
		{name: "no failures", strict: true, runs: []*Run{exitRun("kafka", onlyKafka, kafkaOK)},
			code: 0, want: []string{"conformance: exit 0: no failures (4 results checked against ci/baseline.yaml)"}},
		{name: "a pass -> fail regression beside accepted failures", runs: []*Run{
			exitRun("kafka", sel, map[string]Status{"D1": Fail, "D2": Pass, "D4": Pass, "R6": Pass}), exitRun("rabbitmq", sel, rabbitAccepted)},
			code: 1, want: []string{"conformance: exit 1: 1 result ci/baseline.yaml does not accept: kafka D1 (new failure)"}, unwant: []string{"rabbitmq"}},
		{name: "a failure accepted for another column only", runs: []*Run{exitRun("kafka", onlyKafka, map[string]Status{"D1": Pass, "D2": Pass, "D4": Pass, "R6": Fail})},
			code: 1, want: []string{"conformance: exit 1: 1 result ci/baseline.yaml does not accept: kafka R6 (new failure)"}},
		{name: "a failure the baseline does not know on a column it knows", runs: []*Run{
			exitRun("kafka", onlyKafka, map[string]Status{"D1": Pass, "D2": Pass, "D4": Pass, "R6": Pass, "A1": Fail})},
			code: 1, want: []string{"kafka A1 (new failure)"}},
		{name: "newly skipped is not accepted", runs: []*Run{exitRun("kafka", onlyKafka, map[string]Status{"D1": Pass, "D2": Skip, "D4": Pass, "R6": Pass})},
			code: 1, want: []string{"kafka D2 (newly skipped)"}},
		{name: "a backend without a baseline column fails on any failure", runs: []*Run{exitRun("new-adapter", []string{"new-adapter"}, map[string]Status{"D1": Pass, "R6": Fail})},
			code: 1, want: []string{"new-adapter R6 (new failure)"}},
		{name: "a backend without a baseline column that passes", runs: []*Run{exitRun("new-adapter", []string{"new-adapter"}, map[string]Status{"D1": Pass})},
			code: 0, want: []string{"no failures"}},
		{name: "a SHOULD regression at gate level should", runs: []*Run{exitRun("kafka", onlyKafka, map[string]Status{"D1": Pass, "D2": Pass, "D4": Fail, "R6": Pass})},
			code: 1, want: []string{"kafka D4 (new failure)"}},
		{name: "a SHOULD regression at gate level must", level: catalogue.MUST, runs: []*Run{exitRun("kafka", onlyKafka, map[string]Status{"D1": Pass, "D2": Pass, "D4": Fail, "R6": Pass})},
			code: 0, want: []string{"conformance: exit 0: 1 SHOULD failure ci/baseline.yaml does not list, not blocking at gate level must (kafka D4)"}},
		{name: "a MUST regression at gate level must", level: catalogue.MUST, runs: []*Run{exitRun("kafka", onlyKafka, map[string]Status{"D1": Pass, "D2": Fail, "D4": Fail, "R6": Pass})},
			code: 1, want: []string{"kafka D2 (new failure)"}, unwant: []string{"kafka D4"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, line := runExit(t, tc.level, tc.strict, tc.runs...)
			if code != tc.code {
				t.Errorf("exit %d, want %d: %s", code, tc.code, line)
			}
			for _, w := range tc.want {
				if !strings.Contains(line, w) {
					t.Errorf("line lacks %q: %s", w, line)
				}
			}
			for _, w := range tc.unwant {
				if strings.Contains(line, w) {
					t.Errorf("line has %q: %s", w, line)
				}
			}
		})
	}

	t.Run("a column the gate does not judge fails on any failure", func(t *testing.T) {
		iso := exitRun("kafka+isolated", []string{"kafka"}, map[string]Status{"D1": Fail})
		iso.Meta.Isolated = true
		ref := exitRun("memory", []string{"memory"}, map[string]Status{"D2": Fail})
		ref.Meta.Reference = true
		code, line := runExit(t, "", false, iso, ref)
		if code != 1 || !strings.Contains(line, "kafka+isolated D1 (failed; ci/baseline.yaml judges no kafka+isolated column)") ||
			!strings.Contains(line, "memory D2 (failed;") {
			t.Errorf("exit %d: %s", code, line)
		}
	})

	t.Run("a broker that could not start is exit 2, its cause once", func(t *testing.T) {
		var runs []*Run
		for _, b := range sel {
			r := exitRun(b, sel, nil)
			r.Cases = []Case{{Setup: true, NodeType: "SynchronizedBeforeSuite", Status: Fail, Message: "start brokers: rabbitmq: no rabbitmq-server"}}
			runs = append(runs, r)
		}
		code, line := runExit(t, "", false, runs...)
		want := "conformance: exit 2, the harness could not run: kafka, rabbitmq: SynchronizedBeforeSuite failed: start brokers: rabbitmq: no rabbitmq-server"
		if code != 2 || line != want {
			t.Errorf("exit %d:\n got %s\nwant %s", code, line, want)
		}
	})

	t.Run("an interrupted run is exit 2, whatever passed", func(t *testing.T) {
		r := exitRun("kafka", sel, kafkaOK)
		r.Interrupted = "Interrupted by User"
		code, line := runExit(t, "", false, r, exitRun("rabbitmq", sel, rabbitAccepted))
		if code != 2 || !strings.Contains(line, "kafka: the run was interrupted (Interrupted by User)") {
			t.Errorf("exit %d: %s", code, line)
		}
	})

	t.Run("a long list is cut and counted", func(t *testing.T) {
		cases := map[string]Status{}
		for _, id := range catalogue.IDs() {
			cases[id] = Fail
		}
		code, line := runExit(t, "", false, exitRun("kafka", onlyKafka, cases))
		n := len(catalogue.IDs())
		if code != 1 || !strings.Contains(line, fmt.Sprintf("%d results", n)) || !strings.Contains(line, fmt.Sprintf("and %d more (listed above)", n-listMax)) {
			t.Errorf("exit %d: %s", code, line)
		}
	})
}

func TestParseGateLevel(t *testing.T) {
	for v, want := range map[string]catalogue.Level{"": "", "should": "", "SHOULD": "", "must": catalogue.MUST, " Must ": catalogue.MUST} {
		if got, err := ParseGateLevel(v); err != nil || got != want {
			t.Errorf("%q: %q, %v; want %q", v, got, err, want)
		}
	}
	_, err := ParseGateLevel("may")
	if err == nil || err.Error() != `"may": want must (only MUST regressions block) or should (every regression blocks)` {
		t.Errorf("may: %v", err)
	}
}

// limit names up to listMax items, all of them when there are exactly that many.
func TestLimit(t *testing.T) {
	items := strings.Fields("a b c d e f g h i")
	if got := limit(items[:listMax]); got != strings.Join(items[:listMax], ", ") {
		t.Errorf("limit of %d: %q", listMax, got)
	}
	if got := limit(items[:listMax+1]); !strings.HasSuffix(got, "h and 1 more (listed above)") {
		t.Errorf("limit of %d: %q", listMax+1, got)
	}
}
