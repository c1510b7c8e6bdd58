package reports

import (
	"github.com/pubsub-conformance/harness/specs/catalogue"

	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// fixtureMatrix builds the matrix used by the model, render, gate and browser tests:
// kafka (Ginkgo run with failures and skips, with meta), pulsar (BeforeSuite failed),
// python (foreign pytest JUnit), memory (reference backend).
func fixtureMatrix(t *testing.T, extra ...string) *Matrix {
	t.Helper()
	dir := t.TempDir()
	copyFile(t, "testdata/ginkgo-basic.xml", filepath.Join(dir, "junit-kafka.xml"))
	writeFile(t, filepath.Join(dir, "meta-kafka.json"), `{"backend":"kafka","provider":"local","brokerVersion":"kafka 4.1.0",
		"brokerStartup":{"kafka":6.25},"settings":{"bootstrap":"127.0.0.1:40123"},"suiteSeconds":75.5}`)
	copyFile(t, "testdata/ginkgo-beforesuite-failed.xml", filepath.Join(dir, "junit-pulsar.xml"))
	copyFile(t, "testdata/foreign-multi.xml", filepath.Join(dir, "junit-python.xml"))
	copyFile(t, "testdata/ginkgo-basic.xml", filepath.Join(dir, "junit-memory.xml"))
	writeFile(t, filepath.Join(dir, "meta-memory.json"), `{"backend":"memory","provider":"in-process","reference":true}`)
	var files []string
	for _, b := range []string{"memory", "pulsar", "kafka", "python"} {
		files = append(files, filepath.Join(dir, "junit-"+b+".xml"))
	}
	runs, err := ReadRuns(files)
	if err != nil {
		t.Fatal(err)
	}
	return Build(runs, extra...)
}

func TestBuildMatrix(t *testing.T) {
	m := fixtureMatrix(t)
	var labels []string
	for _, b := range m.Backends {
		labels = append(labels, b.Label)
	}
	if got := strings.Join(labels, ","); got != "kafka,pulsar,python,memory" {
		t.Errorf("backends %s: want sorted, reference last", got)
	}
	var keys []string
	for _, r := range m.Rows {
		keys = append(keys, r.Key)
	}
	if got := strings.Join(keys, ","); got != "D1,D2,D7,G1,G2,A1,T1,T3" {
		t.Errorf("rows %s: want catalogue order", got)
	}
	tests := []struct {
		key, backend string
		status       Status
		summary      string // substring
		entries      int
	}{
		{"D1", "kafka", Pass, "", 1},
		{"D2", "kafka", Fail, "Timed out after 0.050s: message never arrived", 1},
		{"D7", "kafka", Fail, "Expected receive: context deadline exceeded to match error timeout (entry: bounded receive on cancel)", 2},
		{"T1", "kafka", Skip, "capability transient-replay unsupported for request; capability transient-replay unsupported for notify", 2},
		{"T3", "kafka", Skip, "backend lacks retention-expiry", 1},
		{"D1", "pulsar", NotRun, "not run: BeforeSuite failed: start broker: kafka not ready after 90s: connection refused", 0},
		{"T3", "pulsar", NotRun, "BeforeSuite failed", 0},
		{"D1", "python", Pass, "", 2},
		{"A1", "python", Fail, "AssertionError: no redelivery within 10s", 1},
		{"D2", "python", NotRun, "not in this run", 0},
		{"G2", "kafka", NotRun, "not in this run", 0},
		{"D2", "memory", Fail, "Timed out", 1},
	}
	for _, tt := range tests {
		t.Run(tt.key+"/"+tt.backend, func(t *testing.T) {
			c := m.Cell(tt.key, tt.backend)
			if c == nil {
				t.Fatal("no cell")
			}
			if c.Status != tt.status || !strings.Contains(c.Summary(), tt.summary) || len(c.Entries) != tt.entries {
				t.Errorf("got %s %q (%d entries)", c.Status, c.Summary(), len(c.Entries))
			}
		})
	}
	d7 := m.Cell("D7", "kafka")
	if d7.Duration != d7.Entries[0].Duration+d7.Entries[1].Duration || d7.Duration <= 0 {
		t.Errorf("D7 duration %v should be the sum of its entries", d7.Duration)
	}
	if b, _ := catalogue.Lookup("D7"); m.Rows[2].Title != b.Title {
		t.Errorf("table title %q: want the catalogue's %q", m.Rows[2].Title, b.Title)
	}
	kafka := m.Backend("kafka")
	if kafka.Counts[Pass] != 2 || kafka.Counts[Fail] != 2 || kafka.Counts[Skip] != 2 || kafka.Counts[NotRun] != 2 {
		t.Errorf("kafka counts %v", kafka.Counts)
	}
	if kafka.SuiteSeconds != 75.5 || m.Backend("pulsar").SetupFailure == "" || !m.Backend("memory").Reference() {
		t.Errorf("backend info: %+v %+v", kafka, m.Backend("pulsar"))
	}
}

// Titles come from one place: a catalogue row has its catalogue title, whatever its specs' texts;
// a foreign row (no catalogue ID) is named after its testcases' common leading words.
func TestRowTitles(t *testing.T) {
	cases := []Case{{Text: "bounded receive on cancel"}, {Text: "bounded receive on deadline"}}
	if got, _ := titleAndLabels("", cases); got != "bounded receive on" {
		t.Errorf("foreign row title %q, want the entries' common text", got)
	}
	if got, _ := titleAndLabels("", []Case{{Text: "a b"}, {Text: "c d"}}); got != "a b" {
		t.Errorf("foreign row without common words: %q, want the first text", got)
	}
	b, _ := catalogue.Lookup("D7")
	if got, _ := titleAndLabels("D7", cases); got != b.Title {
		t.Errorf("catalogue row title %q, want %q", got, b.Title)
	}
	if got, _ := titleAndLabels("Z99", cases); got != "bounded receive on" {
		t.Errorf("an ID the catalogue lacks is named after its texts, got %q", got)
	}
}

func TestBuildExtraIDsAndMerge(t *testing.T) {
	// A baseline's IDs add rows nobody reported; two files with one label merge into one column.
	a, err := ReadRun("testdata/foreign-multi.xml")
	if err != nil {
		t.Fatal(err)
	}
	b := &Run{File: "other.xml", Label: a.Label, Cases: []Case{{ID: "R4", Text: "broker restart", Status: Pass, Duration: time.Second}}}
	m := Build([]*Run{a, b}, "S1", "D1")
	if len(m.Backends) != 1 || len(m.Backends[0].Files) != 2 {
		t.Fatalf("backends %+v", m.Backends)
	}
	if c := m.Cell("S1", a.Label); c == nil || c.Status != NotRun {
		t.Errorf("S1 %+v", c)
	}
	if c := m.Cell("R4", a.Label); c == nil || c.Status != Pass {
		t.Errorf("R4 %+v", c)
	}
}

func TestAggregate(t *testing.T) {
	tests := []struct {
		name   string
		cases  []Case
		status Status
	}{
		{"all pass", []Case{{Status: Pass}, {Status: Pass}}, Pass},
		{"one fail wins", []Case{{Status: Pass}, {Status: Skip}, {Status: Fail}}, Fail},
		{"skip only if all skipped", []Case{{Status: Skip}, {Status: Pass}}, Pass},
		{"all skipped", []Case{{Status: Skip, Message: "a"}, {Status: Skip, Message: "a"}}, Skip},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := aggregate(tt.cases)
			if c.Status != tt.status {
				t.Errorf("got %s want %s", c.Status, tt.status)
			}
			if c.Status == Skip && len(c.Reasons) != 1 {
				t.Errorf("reasons should be distinct: %v", c.Reasons)
			}
		})
	}
	if aggregate(nil) != nil {
		t.Error("no cases must give no cell (not run)")
	}
}

// The suite writes the Meta this package reads: a written Meta reads back equal, per-broker
// startup times included.
func TestMetaRoundTrip(t *testing.T) {
	m := Meta{Backend: "kafka", Provider: "local", BrokerVersion: "4.1.1", BrokerStartup: map[string]float64{"kafka": 4.5},
		Settings: map[string]any{"KAFKA_BOOTSTRAP_SERVERS": "h:1"}, StartedAt: "2026-01-02T03:04:05Z", SuiteSeconds: 12}
	data, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var back Meta
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(m, back) {
		t.Errorf("round trip:\n got %+v\nwant %+v\n(json %s)", back, m, data)
	}
}

// A failed AfterSuite (or another suite node after the specs ran) is no setup failure: the
// specs' results stand. A failed BeforeSuite, or a failed suite node of a run without specs, is.
func TestSetupFailureOnlyBeforeTheSpecs(t *testing.T) {
	run := func(nodeType string, specs ...Case) *Run {
		return &Run{File: "ginkgo-" + nodeType + ".json", Label: nodeType,
			Cases: append(specs, Case{Setup: true, NodeType: nodeType, Status: Fail, Message: "broker gone"})}
	}
	m := Build([]*Run{
		run("AfterSuite", Case{ID: "D1", Status: Pass}),
		run("SynchronizedAfterSuite", Case{ID: "D1", Status: Pass}),
		run("BeforeSuite"),
		run("SynchronizedBeforeSuite"),
		run(""),
	})
	for label, want := range map[string]string{
		"AfterSuite": "", "SynchronizedAfterSuite": "",
		"BeforeSuite": "BeforeSuite failed: broker gone", "SynchronizedBeforeSuite": "SynchronizedBeforeSuite failed: broker gone",
		"": "suite setup failed: broker gone",
	} {
		if got := m.Backend(label).SetupFailure; got != want {
			t.Errorf("%q: setup failure %q, want %q", label, got, want)
		}
	}
}

// A column's suite time: the meta's when it has one, else the run's own.
func TestSuiteSecondsFromMetaOrRun(t *testing.T) {
	m := Build([]*Run{
		{File: "a.json", Label: "k", SuiteSeconds: 12, Meta: &Meta{Backend: "k", SuiteSeconds: 0}},
		{File: "b.json", Label: "k", SuiteSeconds: 7, Meta: &Meta{Backend: "k", SuiteSeconds: 30}},
	})
	if got := m.Backend("k").SuiteSeconds; got != 42 {
		t.Errorf("suite seconds %v, want 12 (no meta time) + 30 (the meta's)", got)
	}
}

// A one-entry failure's message is its own; an entry is named only among several. Row labels
// are the specs' labels once each, without the suite's backend label (the column says it);
// foreign rows come after the catalogue's, by name; the verdict counts MUST rows without a
// result.
func TestRowsLabelsAndMessages(t *testing.T) {
	m := Build([]*Run{
		{File: "a.json", Label: "k", Cases: []Case{
			{ID: "D2", Text: "one entry", Status: Fail, Message: "lost", Labels: []string{"backend:k", "delivery"}},
			{ID: "D7", Text: "on cancel", Status: Fail, Message: "late", Labels: []string{"delivery"}},
			{ID: "D7", Text: "on deadline", Status: Pass},
			{Container: "zeta", Text: "case", Status: Pass},
			{Container: "alpha", Text: "case", Status: Pass},
			{ID: "D1", Status: Skip, Message: "no"},
			{ID: "D3", Status: NotRun, Message: "interrupted"},
		}},
		{File: "b.json", Label: "p", Cases: []Case{{ID: "D2", Status: Pass, Labels: []string{"backend:p", "delivery"}}}},
	})
	if c := m.Cell("D2", "k"); c.Message != "lost" {
		t.Errorf("one entry: message %q", c.Message)
	}
	if c := m.Cell("D7", "k"); c.Message != "late (entry: on cancel)" {
		t.Errorf("two entries: message %q", c.Message)
	}
	var keys []string
	for _, r := range m.Rows {
		keys = append(keys, r.Key)
		if r.Key == "D2" && strings.Join(r.Labels, ",") != "delivery" {
			t.Errorf("D2 labels %q, want delivery alone", r.Labels)
		}
	}
	if got := strings.Join(keys, ","); got != "D1,D2,D3,D7,alpha case,zeta case" {
		t.Errorf("rows %s", got)
	}
	if v := m.Verdict(0); v.MustOpen != 2 || v.MustFailures != 2 {
		t.Errorf("verdict %+v: want 2 MUST failures (D2, D7) and 2 MUST without a result (D1, D3)", v)
	}
}

// A foreign row's title is the words its testcases' texts share, however long each is.
func TestRowTitleOfTextsOfTwoLengths(t *testing.T) {
	for _, cs := range [][]Case{
		{{Text: "bounded receive"}, {Text: "bounded receive on deadline"}},
		{{Text: "bounded receive on deadline"}, {Text: "bounded receive"}},
	} {
		if got, _ := titleAndLabels("", cs); got != "bounded receive" {
			t.Errorf("title of %q and %q: %q", cs[0].Text, cs[1].Text, got)
		}
	}
}
