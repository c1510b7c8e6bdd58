package reports

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseJUnitGinkgo(t *testing.T) {
	run, err := ReadRun("testdata/ginkgo-basic.xml")
	if err != nil {
		t.Fatal(err)
	}
	if run.Label != "fixture suite" {
		t.Errorf("label = %q, want the testsuite name when there is no junit-<backend>.xml name or meta", run.Label)
	}
	byName := map[string]Case{}
	for _, c := range run.Cases {
		byName[c.Name] = c
	}
	tests := []struct {
		name                  string
		id, text, container   string
		status                Status
		message               string
		labels                []string
		setup                 bool
		nodeType              string
		minDuration, maxDurat time.Duration
	}{
		{name: "[BeforeSuite]", status: Pass, setup: true, nodeType: "BeforeSuite"},
		{name: "[It] Delivery [D1] round trip keeps payload and properties [id:D1, delivery]", id: "D1",
			text: "round trip keeps payload and properties", container: "Delivery", status: Pass, labels: []string{"delivery"}, nodeType: "It"},
		{name: "[It] Delivery [D2] a message sent right after Consumer returns is delivered [id:D2, delivery, seed-bug]", id: "D2",
			text: "a message sent right after Consumer returns is delivered", container: "Delivery", status: Fail,
			message: "Timed out after 0.050s: message never arrived", labels: []string{"delivery", "seed-bug"}, nodeType: "It", minDuration: 40 * time.Millisecond},
		{name: "[It] Delivery [D7] bounded receive on cancel [id:D7, delivery]", id: "D7", text: "bounded receive on cancel",
			container: "Delivery", status: Fail, message: "Expected receive: context deadline exceeded to match error timeout", labels: []string{"delivery"}, nodeType: "It"},
		{name: "[It] Retention [T3] expired messages are not delivered [id:T3, retention, slow]", id: "T3",
			text: "expired messages are not delivered", container: "Retention", status: Skip,
			message: "backend lacks retention-expiry: non-persistent topics keep nothing", labels: []string{"retention", "slow"}, nodeType: "It"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, ok := byName[tt.name]
			if !ok {
				t.Fatalf("testcase %q not found in %v", tt.name, slices.Collect(func(yield func(string) bool) {
					for k := range byName {
						if !yield(k) {
							return
						}
					}
				}))
			}
			if c.ID != tt.id || c.Text != tt.text || c.Container != tt.container || c.Status != tt.status ||
				c.Message != tt.message || c.Setup != tt.setup || c.NodeType != tt.nodeType || !slices.Equal(c.Labels, tt.labels) {
				t.Errorf("got %+v", c)
			}
			if c.Duration < tt.minDuration {
				t.Errorf("duration %v < %v", c.Duration, tt.minDuration)
			}
			if c.Status == Fail && !strings.Contains(c.Detail, "suite_test.go") {
				t.Errorf("detail should keep the whole failure incl. location, got %q", c.Detail)
			}
		})
	}
	if len(run.Cases) != 10 {
		t.Errorf("%d cases, want 10 (BeforeSuite, ReportAfterSuite, 8 specs)", len(run.Cases))
	}
}

func TestParseJUnitForeign(t *testing.T) {
	t.Run("surefire bare testsuite", func(t *testing.T) {
		run, err := ReadRun("testdata/foreign-surefire.xml")
		if err != nil {
			t.Fatal(err)
		}
		if run.Label != "org.example.PubSubIT" {
			t.Errorf("label %q", run.Label)
		}
		want := []struct {
			text    string
			status  Status
			message string
		}{
			{"roundTrip", Pass, ""},
			{"largePayload", Fail, "java.lang.AssertionError: expected 5242880 bytes but got 1048576"},
			{"brokerRestart", Fail, "java.net.ConnectException: Connection refused"},
			{"expiry", Skip, ""},
		}
		if len(run.Cases) != len(want) {
			t.Fatalf("%d cases, want %d", len(run.Cases), len(want))
		}
		for i, w := range want {
			c := run.Cases[i]
			if c.ID != "" || c.Text != w.text || c.Status != w.status || c.Message != w.message || c.Setup {
				t.Errorf("case %d: got %+v, want %+v", i, c, w)
			}
		}
		if run.Cases[2].Duration != 0 {
			t.Errorf("unparsable time should count as zero, got %v", run.Cases[2].Duration)
		}
	})
	t.Run("pytest several and nested suites", func(t *testing.T) {
		run, err := ReadRun("testdata/foreign-multi.xml")
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, c := range run.Cases {
			ids = append(ids, c.ID+":"+string(c.Status))
		}
		if got := strings.Join(ids, " "); got != "D1:pass D1:pass A1:fail T3:skip G2:pass" {
			t.Errorf("got %s", got)
		}
		if run.Cases[2].Message != "AssertionError: no redelivery within 10s" {
			t.Errorf("first line of failure: %q", run.Cases[2].Message)
		}
		if run.Cases[3].Message != "requires retention override" {
			t.Errorf("skip reason: %q", run.Cases[3].Message)
		}
		if run.SuiteSeconds != 3.5 {
			t.Errorf("suite seconds %v", run.SuiteSeconds)
		}
	})
}

func TestParseJUnitBadInput(t *testing.T) {
	tests := []struct {
		file string
		want string
	}{
		{"empty.xml", "empty file"},
		{"blank.xml", "empty file"},
		{"not-xml.txt", "not a JUnit XML report"},
		{"wrong-root.xml", "root element <html> is not JUnit"},
		{"malformed-truncated.xml", "malformed JUnit XML"},
		{"no-testcases.xml", "contains no <testcase>"},
		{"trailing-garbage.xml", "malformed JUnit XML"},
		{"does-not-exist.xml", "no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			path := filepath.Join("testdata", tt.file)
			run, err := ReadRun(path)
			if err == nil {
				t.Fatalf("no error, got %+v", run)
			}
			if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q should name %s and say %q", err, path, tt.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error should be one line: %q", err)
			}
		})
	}
}

// FuzzParseJUnit: whatever the bytes, ParseJUnit returns a run or an error naming the input,
// never a panic.
func FuzzParseJUnit(f *testing.F) {
	for _, name := range []string{"ginkgo-basic.xml", "foreign-multi.xml", "foreign-surefire.xml", "malformed-truncated.xml"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		run, err := ParseJUnit("fuzz.xml", strings.NewReader(string(data)))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.xml: ") {
				t.Errorf("error does not name the file: %v", err)
			}
			return
		}
		Build([]*Run{run}) // must not panic either
	})
}

func TestMeta(t *testing.T) {
	dir := t.TempDir()
	copyFile(t, "testdata/ginkgo-basic.xml", filepath.Join(dir, "junit-kafka.xml"))
	writeFile(t, filepath.Join(dir, "meta-kafka.json"), `{"backend":"kafka","provider":"local","brokerVersion":"kafka 4.1.0",
		"brokerStartup":{"kafka":6.25},"settings":{"bootstrap":"127.0.0.1:40123","saslPassword":"hunter2","partitions":1},
		"startedAt":"2026-11-29T21:00:00Z","suiteSeconds":75.5}`)
	run, err := ReadRun(filepath.Join(dir, "junit-kafka.xml"))
	if err != nil {
		t.Fatal(err)
	}
	if run.Label != "kafka" || run.Meta == nil || run.Meta.Provider != "local" || run.Meta.BrokerStartup["kafka"] != 6.25 {
		t.Fatalf("meta not read: %+v %+v", run, run.Meta)
	}
	if got := strings.Join(run.Meta.SettingsList(), " "); got != "bootstrap=127.0.0.1:40123 partitions=1 saslPassword=***" {
		t.Errorf("settings %q (secrets must be masked)", got)
	}

	t.Run("label from file name without meta", func(t *testing.T) {
		d := t.TempDir()
		copyFile(t, "testdata/ginkgo-basic.xml", filepath.Join(d, "junit-pulsar.xml"))
		run, err := ReadRun(filepath.Join(d, "junit-pulsar.xml"))
		if err != nil || run.Label != "pulsar" || run.Meta != nil {
			t.Fatalf("run %+v err %v", run, err)
		}
	})
	t.Run("meta backend wins over file name", func(t *testing.T) {
		d := t.TempDir()
		copyFile(t, "testdata/ginkgo-basic.xml", filepath.Join(d, "junit-x.xml"))
		writeFile(t, filepath.Join(d, "meta-x.json"), `{"backend":"memory","reference":true,"brokerStartup":0.5}`)
		run, err := ReadRun(filepath.Join(d, "junit-x.xml"))
		if err != nil || run.Label != "memory" || !run.Meta.Reference || run.Meta.BrokerStartup["broker"] != 0.5 {
			t.Fatalf("run %+v err %v", run, err)
		}
	})
	t.Run("malformed meta names the file", func(t *testing.T) {
		d := t.TempDir()
		copyFile(t, "testdata/ginkgo-basic.xml", filepath.Join(d, "junit-y.xml"))
		writeFile(t, filepath.Join(d, "meta-y.json"), `{"backend":`)
		_, err := ReadRun(filepath.Join(d, "junit-y.xml"))
		if err == nil || !strings.Contains(err.Error(), "meta-y.json") {
			t.Fatalf("err %v", err)
		}
	})
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, to, string(b))
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The harness's suite writes JUnit with OmitLeafNodeType: no "[It]", and suite nodes with an
// empty name. Same results as the default format, and a failed BeforeSuite still means every
// spec is not run.
func TestParseJUnitOmittedNodeTypes(t *testing.T) {
	withTypes, err := ReadRun("testdata/ginkgo-basic.xml")
	if err != nil {
		t.Fatal(err)
	}
	without, err := ReadRun("testdata/ginkgo-omit-nodetype.xml")
	if err != nil {
		t.Fatal(err)
	}
	summarise := func(r *Run) string {
		var parts []string
		for _, c := range r.Cases {
			if c.Setup {
				continue // both hold the suite nodes, in different places
			}
			parts = append(parts, c.ID+"|"+c.Container+"|"+c.Text+"|"+strings.Join(c.Labels, ",")+"|"+string(c.Status)+"|"+c.Message)
		}
		return strings.Join(parts, "\n")
	}
	a, b := summarise(withTypes), summarise(without)
	secs := regexp.MustCompile(`\d+\.\d+s`) // the fixtures come from two runs
	a, b = secs.ReplaceAllString(a, "Ns"), secs.ReplaceAllString(b, "Ns")
	if a != b {
		t.Errorf("with node types:\n%s\nwithout:\n%s", a, b)
	}

	broken, err := ReadRun("testdata/ginkgo-omit-nodetype-beforesuite-failed.xml")
	if err != nil {
		t.Fatal(err)
	}
	m := Build([]*Run{broken}, "D1")
	be := m.Backends[0]
	if !strings.Contains(be.SetupFailure, "suite setup failed: start broker: kafka not ready") {
		t.Errorf("setup failure %q", be.SetupFailure)
	}
	if c := m.Cell("D1", be.Label); c.Status != NotRun || !strings.Contains(c.Message, "start broker") {
		t.Errorf("D1 %+v", c)
	}
	if len(m.Rows) != 1 {
		t.Errorf("suite nodes must not become rows: %d rows", len(m.Rows))
	}
}

func TestCause(t *testing.T) {
	tests := []struct{ name, msg, want string }{
		{"plain", "boom\nsecond line", "boom"},
		{"blank first line", "\n  boom  \n", "boom"},
		{"unexpected error with description",
			"run and kill the crashing consumer\nUnexpected error:\n    <*fmt.wrapError | 0x2bd5>: \n    start crash child: no such file\n    {\n        msg: \"x\",\n    }\noccurred",
			"run and kill the crashing consumer: start crash child: no such file"},
		{"unexpected error bare", "Unexpected error:\n    <*errors.errorString | 0x1>: \n    dial tcp: refused\n    {s: \"dial\"}\noccurred",
			"unexpected error: dial tcp: refused"},
		{"expected to equal", "Expected\n    <int>: 0\nto equal\n    <int>: 1", "Expected 0 to equal 1"},
		{"expected struct dump", "Expected\n    <*errors.errorString | 0x1>: \n    nope\n    {\n        s: \"nope\",\n    }\nto match error\n    <string>: timeout",
			"Expected nope to match error timeout"},
		{"timed out with description", "Timed out after 10.001s.\nno message arrived\nExpected\n    <int>: 0\nto equal\n    <int>: 1",
			"Timed out after 10.001s: no message arrived"},
		{"timed out bare", "Timed out after 10.001s.\nExpected\n    <int>: 0\nto equal\n    <int>: 1", "Timed out after 10.001s."},
		{"empty", " \n ", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := cause(tt.msg); got != tt.want {
				t.Errorf("cause = %q, want %q", got, tt.want)
			}
		})
	}
}

// A foreign testcase keeps its name, brackets and all (only a Ginkgo name or one with an ID
// label has a label list), and not its class's. Of two reasons a merged
// report gives for stopping, the first is the run's.
func TestParseJUnitForeignNamesAndReasons(t *testing.T) {
	const x = `<testsuites>
  <testsuite name="a" tests="1"><properties><property name="SpecialSuiteFailureReason" value="Interrupted by User"/></properties>
    <testcase name="test_send [kafka, big]" classname="tests.test_send" time="0.1"></testcase>
  </testsuite>
  <testsuite name="b" tests="0"><properties><property name="SpecialSuiteFailureReason" value="Suite Timeout Elapsed"/></properties></testsuite>
</testsuites>`
	run, err := ParseJUnit("junit-py.xml", strings.NewReader(x))
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Cases) != 1 || run.Cases[0].Text != "test_send [kafka, big]" || len(run.Cases[0].Labels) != 0 {
		t.Errorf("cases %+v", run.Cases)
	}
	if run.Interrupted != "Interrupted by User" {
		t.Errorf("interrupted %q, want the first reason", run.Interrupted)
	}
}

// The one-line cause of Gomega's shapes, including the cut-short ones.
func TestCauseShapes(t *testing.T) {
	for msg, want := range map[string]string{
		"send failed\nUnexpected error:":                                     "send failed",
		"send failed\nUnexpected error:\n    <*errors.errorString | 0xc1>: ": "send failed",
		"Timed out after 10.001s.":                                           "Timed out after 10.001s.",
		"D4 broke\nsecond\nthird":                                            "D4 broke",
		"Expected\n    <int>: 1":                                             "Expected",
		"Expected\n    <int>: 1\nwhatever":                                   "Expected 1",
	} {
		if got := cause(msg); got != want {
			t.Errorf("cause(%q) = %q, want %q", msg, got, want)
		}
	}
	if c, text := splitAtID("[D1] round trip", "D1"); c != "" || text != "round trip" {
		t.Errorf("splitAtID: %q %q", c, text)
	}
	for _, s := range []string{"-1", "1e999", "x"} {
		if parseSeconds(s) != 0 {
			t.Errorf("parseSeconds(%q) = %v, want 0", s, parseSeconds(s))
		}
	}
}
