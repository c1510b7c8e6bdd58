package main

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/pubsub-conformance/harness/internal/history"
	"github.com/pubsub-conformance/harness/internal/modroot"
	"github.com/pubsub-conformance/harness/internal/workload"
	"github.com/pubsub-conformance/harness/reports"
)

// spec is a spec report as Ginkgo writes it; text "[D2] x" gets the label id:D2, as
// specs.Behaviour gives it.
func spec(text string, state types.SpecState, msg string) types.SpecReport {
	s := types.SpecReport{
		LeafNodeType:            types.NodeTypeIt,
		ContainerHierarchyTexts: []string{"pub/sub conformance of kafka~x", "delivery"},
		LeafNodeText:            text,
		State:                   state,
		Failure:                 types.Failure{Message: msg},
	}
	if id, _, ok := strings.Cut(strings.TrimPrefix(text, "["), "]"); ok && strings.HasPrefix(text, "[") {
		s.LeafNodeLabels = []string{"id:" + id}
	}
	return s
}

// writeReport writes specs as a Ginkgo JSON report, as the suite does.
func writeReport(t *testing.T, specs []types.SpecReport) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ginkgo-kafka~x.json")
	data, err := json.Marshal([]types.Report{{SuiteDescription: "s", SpecReports: specs}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// outcomeOf reads specs back as the driver does.
func outcomeOf(t *testing.T, specs []types.SpecReport) Outcome {
	t.Helper()
	o, err := readOutcome(writeReport(t, specs), "kafka~x")
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// casesOf reads specs back through the reports reader.
func casesOf(t *testing.T, specs []types.SpecReport) []reports.Case {
	t.Helper()
	run, err := reports.ReadRun(writeReport(t, specs))
	if err != nil {
		t.Fatal(err)
	}
	return run.Cases
}

func TestClassify(t *testing.T) {
	cases := []struct {
		name   string
		specs  []types.SpecReport
		failed []string
		first  string
		msg    string
	}{
		{"all pass", []types.SpecReport{spec("[D1] x", types.SpecStatePassed, "")}, nil, "", ""},
		{"catalogue order, not report order",
			[]types.SpecReport{
				spec("[R1] close", types.SpecStateFailed, "gap lost"),
				spec("[D2] right after", types.SpecStateFailed, "message sent 2 ms after\nConsumer() returned"),
				spec("[A3] unacked", types.SpecStateTimedout, "hung"),
				spec("[D7] x", types.SpecStateFailed, "seven"),
			},
			[]string{"D2", "D7", "A3", "R1"}, "D2", "message sent 2 ms after"}, // the cause: the first line
		{"timeout is a kill, named", []types.SpecReport{spec("[A3] unacked", types.SpecStateTimedout, "hung")},
			[]string{"A3"}, "A3", "timedout: hung"},
		{"setup failure kills everything",
			[]types.SpecReport{{LeafNodeType: types.NodeTypeSynchronizedBeforeSuite, State: types.SpecStateFailed, Failure: types.Failure{Message: "start brokers"}}},
			[]string{"setup"}, "setup", "start brokers"},
	}
	cases = append(cases, struct {
		name   string
		specs  []types.SpecReport
		failed []string
		first  string
		msg    string
	}{"the variant's own spec is quoted first",
		[]types.SpecReport{spec("[D1] intact", types.SpecStateFailed, "0 arrived"), spec("[D2] right after", types.SpecStateFailed, "sent 2 ms after")},
		[]string{"D1", "D2"}, "D2", "sent 2 ms after"})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := Outcome{Catches: []string{"D2"}}
			classify(&o, casesOf(t, c.specs))
			if strings.Join(o.Failed, ",") != strings.Join(c.failed, ",") || o.FirstID != c.first || o.FirstMessage != c.msg {
				t.Errorf("got failed %v first %q %q; want %v %q %q", o.Failed, o.FirstID, o.FirstMessage, c.failed, c.first, c.msg)
			}
		})
	}
}

func TestMessageDropsGomegaNoise(t *testing.T) {
	in := "open with good credentials\nUnexpected error:\n    <*fmt.wrapError | 0x379040bb59a0>: \n    kafka: connect: broker unavailable\n    {\n        msg: \"kafka: connect\",\n    }\noccurred"
	o := outcomeOf(t, []types.SpecReport{spec("[S1] creds", types.SpecStateFailed, in)})
	if got, want := o.FirstMessage, "open with good credentials: kafka: connect: broker unavailable"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if o.FirstID != "S1" {
		t.Errorf("id %q, want S1 from the label", o.FirstID)
	}
	// A failed spec without an id label is "?", never an ID guessed from its text.
	o = outcomeOf(t, []types.SpecReport{{LeafNodeType: types.NodeTypeIt, LeafNodeText: "[D1] no label", State: types.SpecStateFailed}})
	if o.FirstID != "?" {
		t.Errorf("unlabelled spec: id %q, want ?", o.FirstID)
	}
}

func TestVerdictsAndExit(t *testing.T) {
	base := Outcome{Backend: "kafka", Base: "kafka", Passed: 20}
	killed := Outcome{Backend: "kafka~a", Base: "kafka", Variant: "a", Failed: []string{"D2"}}
	survived := Outcome{Backend: "kafka~b", Base: "kafka", Variant: "b", Passed: 20}
	badBase := Outcome{Backend: "kafka", Base: "kafka", Failed: []string{"T1"}, Passed: 19}
	for _, c := range []struct {
		name string
		r    Results
		ok   bool
	}{
		{"all killed, base clean", Results{Outcomes: []Outcome{base, killed}}, true},
		{"a survivor", Results{Outcomes: []Outcome{base, killed, survived}}, false},
		{"base fails", Results{Outcomes: []Outcome{badBase, killed}}, false},
		{"base ran nothing", Results{Outcomes: []Outcome{{Backend: "kafka", Base: "kafka"}, killed}}, false},
		{"base unknown", Results{Outcomes: []Outcome{{Backend: "kafka", Base: "kafka", Passed: 19, Unknown: []string{"D3"}}, killed}}, false},
		{"missing report", Results{Outcomes: []Outcome{base, {Backend: "kafka~c", Variant: "c", Missing: true}}}, false},
		{"empty", Results{}, false},
	} {
		if got := c.r.ok(); got != c.ok {
			t.Errorf("%s: ok() = %v, want %v", c.name, got, c.ok)
		}
	}
	if v := verdict(Outcome{Base: "kafka", Passed: 19, Unknown: []string{"D3"}}); !strings.HasPrefix(v, "BASE UNKNOWN") {
		t.Errorf("a base with an unknown result: %q", v)
	}
	if v := verdict(Outcome{Variant: "a", Failed: []string{"D1"}, Catches: []string{"D2"}}); v != "KILLED by D1 (none of D2)" {
		t.Errorf("kill that missed the variant's own specs: %q", v)
	}
	// A failed sanity spec: the variant may not work at all, so its killer's failure is no kill.
	broken := Outcome{Backend: "kafka~c", Base: "kafka", Variant: "c", Failed: []string{"D1", "D2"}, Catches: []string{"D2"}, Sanity: []string{"D1"}}
	if broken.Killed() || verdict(broken) != "BROKEN: sanity D1 failed (failed: D1,D2)" {
		t.Errorf("sanity failed: killed %v, %q", broken.Killed(), verdict(broken))
	}
	if (Results{Outcomes: []Outcome{base, broken}}).ok() {
		t.Error("ok with a broken variant")
	}
	// Specs cut off by the budget: neither a kill nor a survivor, and the run is not ok.
	cut := Outcome{Backend: "kafka~d", Base: "kafka", Variant: "d", NotRun: []string{"F1"}, Catches: []string{"F1"}, Sanity: []string{"D1"}, Passed: 1}
	if v := verdict(cut); !strings.HasPrefix(v, "NOT RUN: F1") {
		t.Errorf("cut off: %q", v)
	}
	if (Results{Outcomes: []Outcome{base, cut}}).ok() || (Results{Outcomes: []Outcome{{Backend: "kafka", Base: "kafka", Passed: 3, NotRun: []string{"R6"}}, killed}}).ok() {
		t.Error("ok with specs the budget cut off")
	}
	md := Markdown(Results{Outcomes: []Outcome{base, killed, survived}}, time.Minute)
	for _, want := range []string{"| a | kafka | KILLED by D2 |", "| b | kafka | SURVIVED |", "**1/2 killed**"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
}

func TestLabelFilter(t *testing.T) {
	// Each variant: its killers and its sanity set (D1 unless the record names others); the
	// base: all of them, in catalogue order.
	got := labelFilter("kafka", []string{"kafka", "kafka~nack-noop", "kafka~reconnect-stalls"}, "")
	want := "(backend:kafka && (id:D1 || id:A1 || id:A5 || id:R6)) || (backend:kafka~nack-noop && (id:D1 || id:A1 || id:A5)) || (backend:kafka~reconnect-stalls && (id:D1 || id:R6))"
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	// A record's own sanity set replaces D1.
	got = labelFilter("memory", []string{"memory", "memory~drops-empty-properties"}, "acks")
	want = "((backend:memory && (id:D1 || id:D4)) || (backend:memory~drops-empty-properties && (id:D1 || id:D4))) && (acks)"
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

func TestBadInput(t *testing.T) {
	root, err := modroot.Find()
	if err != nil {
		t.Fatal(err)
	}
	// Bad input must be refused before anything runs; should it run, its files go to a temp
	// dir, never into the source tree (a nosuch/run.log was once committed that way).
	dir := t.TempDir()
	o := options{bases: []string{"nosuch"}, moduleRoot: root, out: filepath.Join(dir, "mutants.md"), reportDir: dir}
	if _, err := run(context.Background(), o, io.Discard); err == nil || !strings.Contains(err.Error(), "not a registered backend") {
		t.Errorf("unknown base: err %v", err)
	}
	o = options{bases: []string{"kafka"}, variants: []string{"nosuch"}, moduleRoot: root, out: filepath.Join(dir, "mutants.md"), reportDir: dir}
	if _, err := run(context.Background(), o, io.Discard); err == nil || !strings.Contains(err.Error(), "applies to none") {
		t.Errorf("unknown variant: err %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) > 0 {
		t.Errorf("bad input left files behind: %v", entries)
	}
}

// TestMemoryRun runs the whole driver on the reference backend (the fast mode, no broker), with
// a filter that lets one variant be killed and another survive: the driver must tell them
// apart and refuse the run. (suite/selftest checks that every reference variant is killed.)
func TestMemoryRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the suite binary (about 30 s)")
	}
	root, err := modroot.Find()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	o := options{
		bases: []string{"memory"}, variants: []string{"exists-always-true", "nack-noop", "restart-strands-consumers"},
		// Each variant runs its own specs only: nack-noop's (A1, A5, D1) are all filtered out.
		procs: 2, labelFilter: "(lifecycle && !id:L8) || id:R6", timeout: 5 * time.Minute,
		out: filepath.Join(dir, "mutants.md"), reportDir: filepath.Join(dir, "mutants"), moduleRoot: root,
		suiteBin: os.Getenv(SuiteBinEnv),
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	res, err := run(ctx, o, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, out := range res.Outcomes {
		got[out.Backend] = verdict(out)
	}
	if !strings.HasPrefix(got["memory"], "base ok") {
		t.Errorf("memory: %q, want base ok", got["memory"])
	}
	if !strings.HasPrefix(got["memory~exists-always-true"], "KILLED by L1") {
		t.Errorf("exists-always-true: %q, want KILLED by L1...", got["memory~exists-always-true"])
	}
	if !strings.HasPrefix(got["memory~restart-strands-consumers"], "KILLED by R6") {
		t.Errorf("restart-strands-consumers: %q, want KILLED by R6 (its own spec, slow, in the run because its record names it)", got["memory~restart-strands-consumers"])
	}
	if got["memory~nack-noop"] != "SURVIVED" { // none of its specs ran
		t.Errorf("nack-noop under a lifecycle-only filter: %q, want SURVIVED", got["memory~nack-noop"])
	}
	if res.ok() {
		t.Error("a run with a survivor must not be ok")
	}
	md, err := os.ReadFile(o.out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "| nack-noop | memory | SURVIVED |") {
		t.Errorf("mutants.md:\n%s", md)
	}

	// -report-only rebuilds the same verdicts from the files the run left.
	o.reportOnly = true
	again, err := run(ctx, o, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	for _, out := range again.Outcomes {
		if verdict(out) != got[out.Backend] {
			t.Errorf("report-only %s: %q, the run said %q", out.Backend, verdict(out), got[out.Backend])
		}
	}
	if len(again.Outcomes) != len(res.Outcomes) || len(again.Runs) != 1 || again.Runs[0].Took != res.Runs[0].Took {
		t.Errorf("report-only: %d outcomes, runs %+v; the run had %d, %+v", len(again.Outcomes), again.Runs, len(res.Outcomes), res.Runs)
	}
}

// A base failure the baseline accepts does not fail the run, and a variant failing only what
// its base fails is not killed.
func TestSettleBase(t *testing.T) {
	out := settleBase([]Outcome{
		{Backend: "rabbitmq", Base: "rabbitmq", Failed: []string{"D6", "T2"}, Passed: 3},
		{Backend: "rabbitmq~a", Base: "rabbitmq", Variant: "a", Failed: []string{"D6"}},
		{Backend: "rabbitmq~b", Base: "rabbitmq", Variant: "b", Failed: []string{"A3", "T2"}},
	}, map[string][]string{"rabbitmq": {"D6"}})
	if got := out[0]; strings.Join(got.Failed, ",") != "T2" || strings.Join(got.Accepted, ",") != "D6" {
		t.Errorf("base: failed %v accepted %v; want T2 and D6", got.Failed, got.Accepted)
	}
	if out[1].Killed() || strings.Join(out[1].AsBase, ",") != "D6" {
		t.Errorf("variant a: %+v; want not killed, D6 as on the base", out[1])
	}
	if strings.Join(out[2].Failed, ",") != "A3" {
		t.Errorf("variant b failed %v; want A3 alone", out[2].Failed)
	}
	if (Results{Outcomes: out}).ok() {
		t.Error("ok with a base failure the baseline does not accept")
	}
}

// The classes are read from the header history.Report really writes, as one line or several.
func TestAnomalyClasses(t *testing.T) {
	fs := []history.Finding{{Anomaly: history.Lost, Key: "m1"}, {Anomaly: history.Lost, Key: "m2"}, {Anomaly: workload.Differs, Key: "m3"}}
	msg := "workload program of seed 7 on kafka~x (21 steps): " + history.Report(time.Now(), fs, 3)
	want := []string{string(history.Lost), string(workload.Differs)}
	for _, m := range []string{msg, strings.ReplaceAll(msg, "\n", " ")} {
		if got := anomalyClasses(m); strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("anomalyClasses(%q) = %q, want %q", m, got, want)
		}
	}
	if got := anomalyClasses("sent 2 ms after"); got != nil {
		t.Errorf("a message without checker findings: %q", got)
	}
	// W1 fails once with every failed program: a corpus entry's report, then a fresh seed's.
	two := "W1 on kafka~x: 1 of 11 corpus entries failed\n\nW1: corpus entry w1-1.txt: " +
		history.Report(time.Now(), []history.Finding{{Anomaly: history.NackNotRedelivered, Key: "m0"}}, 3) +
		"\n\n----\n\nW1: workload program of seed 7: " + history.Report(time.Now(), fs, 3)
	want = []string{string(history.NackNotRedelivered), string(history.Lost), string(workload.Differs)}
	for _, m := range []string{two, strings.ReplaceAll(two, "\n", " ")} {
		if got := anomalyClasses(m); strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("two reports: anomalyClasses(%q) = %q, want %q", m, got, want)
		}
	}
}

// A spec the base fails too kills a variant only where the checkers found a class of anomaly
// in the variant that the base's failure does not show.
func TestSettleBaseComparesAnomalyClasses(t *testing.T) {
	w1 := func(classes ...history.Anomaly) map[string]string {
		var fs []history.Finding
		for _, c := range classes {
			fs = append(fs, history.Finding{Anomaly: c, Key: "k"})
		}
		return map[string]string{"W1": "workload program of seed 7: " + history.Report(time.Now(), fs, 3)}
	}
	out := settleBase([]Outcome{
		{Backend: "kafka", Base: "kafka", Failed: []string{"W1"}, Messages: w1(history.AckedRedelivered), Passed: 3},
		{Backend: "kafka~a", Base: "kafka", Variant: "a", Failed: []string{"W1"}, Messages: w1(history.Lost, workload.Differs)},
		{Backend: "kafka~b", Base: "kafka", Variant: "b", Failed: []string{"W1"}, Messages: w1(history.AckedRedelivered)},
		{Backend: "kafka~c", Base: "kafka", Variant: "c", Failed: []string{"W1"}, Messages: map[string]string{"W1": "setup failed"}},
	}, map[string][]string{"kafka": {"W1"}})
	if !out[1].Killed() || strings.Join(out[1].Beyond, ",") != "W1" || !strings.Contains(verdict(out[1]), "anomalies the base's failure does not show") {
		t.Errorf("new classes: %+v, %q; want a kill beyond the base", out[1], verdict(out[1]))
	}
	if out[2].Killed() || verdict(out[2]) != "SURVIVED (failed only as the base does: W1)" {
		t.Errorf("the base's own class: %q; want no kill", verdict(out[2]))
	}
	if out[3].Killed() {
		t.Errorf("no checker findings: %q; want no kill", verdict(out[3]))
	}
}

// An unknown result is no pass: it is neither counted as passed nor lost.
func TestClassifyUnknown(t *testing.T) {
	var o Outcome
	classify(&o, []reports.Case{{ID: "D1", Status: reports.Pass}, {ID: "D3", Status: reports.Unknown}})
	if o.Passed != 1 || strings.Join(o.Unknown, ",") != "D3" || len(o.Failed) != 0 {
		t.Errorf("outcome %+v: want 1 passed and D3 unknown", o)
	}
}
