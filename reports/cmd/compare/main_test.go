package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func copyTo(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestCompare(t *testing.T) {
	dir := t.TempDir()
	// Our runs' reports: Ginkgo JSON (the JUnit reader is covered in reports).
	kafka := filepath.Join(dir, "ginkgo-kafka.json")
	pulsar := filepath.Join(dir, "ginkgo-pulsar.json")
	copyTo(t, "../../testdata/ginkgo-fixture.json", kafka)
	copyTo(t, "../../testdata/ginkgo-fixture-beforesuite-failed.json", pulsar)
	md, html := filepath.Join(dir, "out", "c.md"), filepath.Join(dir, "out", "c.html")
	baseline := filepath.Join(dir, "baseline.yaml")

	var out, errOut bytes.Buffer
	code := run([]string{"-md", md, "-html", html, kafka, pulsar}, &out, &errOut)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	for _, p := range []string{md, html} {
		if st, err := os.Stat(p); err != nil || st.Size() == 0 {
			t.Errorf("%s not written: %v", p, err)
		}
	}
	if !strings.Contains(out.String(), "kafka D2 FAIL: Timed out") || strings.Contains(out.String(), "\x1b[") {
		t.Errorf("terminal output (no colour when not a TTY):\n%s", out.String())
	}

	t.Run("write baseline then gate passes", func(t *testing.T) {
		var o, e bytes.Buffer
		// The pulsar run has no results at all, so accept kafka only and gate kafka only.
		if code := run([]string{"-md", "", "-html", "", "-quiet", "-write-baseline", baseline, kafka}, &o, &e); code != 0 {
			t.Fatalf("exit %d: %s", code, e.String())
		}
		o.Reset()
		if code := run([]string{"-md", "", "-html", "", "-gate", baseline, kafka}, &o, &e); code != 0 {
			t.Fatalf("gate against own results: exit %d\n%s%s", code, o.String(), e.String())
		}
		if !strings.Contains(o.String(), "gate PASS") {
			t.Errorf("output: %s", o.String())
		}
	})

	t.Run("gate fails on regression and names it", func(t *testing.T) {
		b, err := os.ReadFile(baseline)
		if err != nil {
			t.Fatal(err)
		}
		// Pretend D2 used to pass.
		mod := regexp.MustCompile(`(?m)^    D2: .*$`).ReplaceAllString(string(b), "    D2: pass")
		if mod == string(b) {
			t.Fatalf("baseline has no D2 fail line:\n%s", b)
		}
		p := filepath.Join(dir, "regressed.yaml")
		if err := os.WriteFile(p, []byte(mod), 0o644); err != nil {
			t.Fatal(err)
		}
		var o, e bytes.Buffer
		code := run([]string{"-md", "", "-html", "", "-gate", p, kafka}, &o, &e)
		if code != 1 || !strings.Contains(o.String(), "NEW FAILURE") || !strings.Contains(o.String(), "kafka D2: pass -> fail") {
			t.Errorf("exit %d\n%s", code, o.String())
		}
		// With the pulsar report whose BeforeSuite failed, a baseline for pulsar sees everything missing.
		withPulsar := mod + "  pulsar:\n    D1: pass\n"
		if err := os.WriteFile(p, []byte(withPulsar), 0o644); err != nil {
			t.Fatal(err)
		}
		o.Reset()
		code = run([]string{"-md", "", "-html", "", "-gate", p, "-backend", "pulsar", kafka, pulsar}, &o, &e)
		gate := o.String()[strings.LastIndex(o.String(), "gate "):]
		if code != 1 || !strings.Contains(gate, "MISSING") || !strings.Contains(gate, "BeforeSuite failed") ||
			strings.Contains(gate, "kafka D2") {
			t.Errorf("exit %d\n%s", code, o.String())
		}
	})

	t.Run("bad input exits 2 naming the file", func(t *testing.T) {
		var o, e bytes.Buffer
		bad := "../../testdata/not-xml.txt"
		if code := run([]string{"-md", "", "-html", "", kafka, bad}, &o, &e); code != 2 || !strings.Contains(e.String(), bad) {
			t.Errorf("exit %d, stderr %q", code, e.String())
		}
		e.Reset()
		if code := run([]string{"-color", "purple", kafka}, &o, &e); code != 2 || !strings.Contains(e.String(), "-color") {
			t.Errorf("exit %d, stderr %q", code, e.String())
		}
	})

	t.Run("default files from reports/out", func(t *testing.T) {
		wd, _ := os.Getwd()
		t.Chdir(dir)
		var o, e bytes.Buffer
		if code := run(nil, &o, &e); code != 2 || !strings.Contains(e.String(), "reports/out/ginkgo-*.json") {
			t.Errorf("no files: exit %d, stderr %q", code, e.String())
		}
		if err := os.MkdirAll("reports/out", 0o755); err != nil {
			t.Fatal(err)
		}
		copyTo(t, filepath.Join(wd, "../../testdata/ginkgo-fixture.json"), "reports/out/ginkgo-kafka.json")
		o.Reset()
		if code := run(nil, &o, &e); code != 0 || !strings.Contains(o.String(), "wrote reports/out/compare.html") {
			t.Errorf("exit %d\n%s%s", code, o.String(), e.String())
		}
	})
}

// TestBaselineOfAndStillFailing: -baseline-of gates a variant against another column, and
// -still-failing lists the accepted failures that failed again and leaves out what the run
// did not select (make against).
func TestBaselineOfAndStillFailing(t *testing.T) {
	dir := t.TempDir()
	kafka, baseline, b := fixtureBaseline(t, dir)
	var o, e bytes.Buffer
	// The accepted column is called "shipped"; the run's backend (kafka) has none of its own.
	if err := os.WriteFile(baseline, bytes.Replace(b, []byte("\n  kafka:"), []byte("\n  shipped:"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	o.Reset()
	code := run([]string{"-md", "", "-html", "", "-quiet", "-still-failing", "-gate", baseline,
		"-backend", "kafka", "-baseline-of", "kafka=shipped", kafka}, &o, &e)
	if code != 0 || !strings.Contains(o.String(), "gate PASS") || !strings.Contains(o.String(), "STILL FAILING kafka D2: fail -> fail: Timed out") ||
		strings.Contains(o.String(), "NOT SELECTED") {
		t.Fatalf("exit %d\n%s%s", code, o.String(), e.String())
	}
	o.Reset()
	e.Reset()
	if code := run([]string{"-md", "", "-html", "", "-quiet", "-gate", baseline, "-baseline-of", "kafka=nope", kafka}, &o, &e); code != 2 ||
		!strings.Contains(e.String(), `has no column "nope"`) {
		t.Fatalf("unknown column: exit %d: %s", code, e.String())
	}
	if code := run([]string{"-baseline-of", "kafka=shipped", kafka}, &o, &e); code != 2 {
		t.Fatalf("-baseline-of without a baseline: exit %d", code)
	}
}

// fixtureBaseline copies the fixture's kafka run into dir and writes the baseline that accepts
// its results as they are (it fails D2 and D7): the report's path, the baseline's, its text.
func fixtureBaseline(t *testing.T, dir string) (report, baseline string, text []byte) {
	t.Helper()
	report = filepath.Join(dir, "ginkgo-kafka.json")
	copyTo(t, "../../testdata/ginkgo-fixture.json", report)
	baseline = filepath.Join(dir, "accepted.yaml")
	var o, e bytes.Buffer
	if code := run([]string{"-md", "", "-html", "", "-quiet", "-write-baseline", baseline, report}, &o, &e); code != 0 {
		t.Fatalf("exit %d: %s", code, e.String())
	}
	text, err := os.ReadFile(baseline)
	if err != nil {
		t.Fatal(err)
	}
	return report, baseline, text
}
