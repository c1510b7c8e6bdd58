package reports

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The JSON reader and the JUnit reader agree on every spec of the same run (the fixtures come
// from one Ginkgo run of testdata/ginkgosuite), and the JSON one takes IDs from labels only.
func TestGinkgoJSONMatchesJUnit(t *testing.T) {
	js, err := ReadRun("testdata/ginkgo-fixture.json")
	if err != nil {
		t.Fatal(err)
	}
	xml, err := ReadRun("testdata/ginkgo-basic.xml")
	if err != nil {
		t.Fatal(err)
	}
	if js.Label != "fixture" {
		t.Errorf("label %q, want the file's ginkgo-<label>.json", js.Label)
	}
	if js.SuiteName != "fixture suite" || js.SuiteSeconds <= 0 {
		t.Errorf("suite %q %v", js.SuiteName, js.SuiteSeconds)
	}
	secs := regexp.MustCompile(`\d+\.\d+s`)
	summarise := func(r *Run) []string {
		var out []string
		for _, c := range r.Cases {
			if c.Setup {
				out = append(out, "setup "+c.NodeType+" "+string(c.Status))
				continue
			}
			out = append(out, strings.Join([]string{c.ID, c.Container, c.Text, strings.Join(c.Labels, ","), string(c.Status),
				secs.ReplaceAllString(c.Message, "Ns")}, "|"))
		}
		slices.Sort(out)
		return out
	}
	a, b := summarise(js), summarise(xml)
	if !slices.Equal(a, b) {
		t.Errorf("JSON:\n%s\nJUnit:\n%s", strings.Join(a, "\n"), strings.Join(b, "\n"))
	}
	for _, c := range js.Cases {
		if c.ID == "D2" && (!strings.Contains(c.Detail, "suite_test.go") || c.Duration <= 0) {
			t.Errorf("D2 detail should keep the failure's location and the duration: %+v", c)
		}
	}
}

func TestGinkgoJSONBeforeSuiteFailed(t *testing.T) {
	run, err := ReadRun("testdata/ginkgo-fixture-beforesuite-failed.json")
	if err != nil {
		t.Fatal(err)
	}
	m := Build([]*Run{run}, "D1")
	be := m.Backends[0]
	if !strings.Contains(be.SetupFailure, "BeforeSuite failed: start broker: kafka not ready") {
		t.Errorf("setup failure %q", be.SetupFailure)
	}
	if c := m.Cell("D1", be.Label); c == nil || c.Status != NotRun {
		t.Errorf("D1 %+v", c)
	}
}

func TestGinkgoJSONBadInput(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"empty.json":   "  \n",
		"object.json":  `{"a": 1}`,
		"nospecs.json": `[{"SuiteDescription": "s", "SpecReports": []}]`,
		"trunc.json":   `[{"SuiteDescription": "s", "SpecReports": [`,
	} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadRun(p); err == nil || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: want an error naming the file, got %v", name, err)
		}
	}
}
