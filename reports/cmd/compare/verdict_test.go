package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// lastLine is the last line of out: where -run-verdict says the run's exit status.
func lastLine(out string) string {
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	return lines[len(lines)-1]
}

// -run-verdict: make conformance's exit status, from the gate's own comparison.
func TestRunVerdict(t *testing.T) {
	dir := t.TempDir()
	// The fixture's kafka run fails D2 and D7: accepted is its results as they are.
	kafka, accepted, b := fixtureBaseline(t, dir)
	regressed := filepath.Join(dir, "regressed.yaml")
	mod := regexp.MustCompile(`(?m)^    D2: .*$`).ReplaceAllString(string(b), "    D2: pass")
	if mod == string(b) {
		t.Fatalf("baseline has no D2 line:\n%s", b)
	}
	if err := os.WriteFile(regressed, []byte(mod), 0o644); err != nil {
		t.Fatal(err)
	}
	verdict := func(args ...string) (int, string, string) {
		var o, e bytes.Buffer
		code := run(append([]string{"-md", "", "-html", "", "-quiet", "-run-verdict"}, args...), &o, &e)
		return code, o.String(), e.String()
	}

	t.Run("accepted failures exit 0 and are listed", func(t *testing.T) {
		code, out, errOut := verdict("-gate", accepted, kafka)
		if code != 0 || !strings.HasPrefix(lastLine(out), "conformance: exit 0: 2 failures accepted by "+accepted+" for its column (kafka D2 D7)") ||
			!strings.Contains(out, "STILL FAILING kafka D2") || strings.Contains(out, "NOT SELECTED") {
			t.Errorf("exit %d\n%s%s", code, out, errOut)
		}
	})
	t.Run("strict: accepted failures exit 1", func(t *testing.T) {
		code, out, _ := verdict("-strict", "-gate", accepted, kafka)
		if code != 1 || !strings.HasPrefix(lastLine(out), "conformance: exit 1 (CONFORMANCE_STRICT=1, any failure or unknown)") {
			t.Errorf("exit %d\n%s", code, out)
		}
	})
	t.Run("a regression exits 1 and the last line names it", func(t *testing.T) {
		code, out, _ := verdict("-gate", regressed, kafka)
		if code != 1 || lastLine(out) != "conformance: exit 1: 1 result "+regressed+" does not accept: kafka D2 (new failure)" {
			t.Errorf("exit %d\n%s", code, out)
		}
	})
	t.Run("a missing report is exit 2 in one line", func(t *testing.T) {
		code, out, errOut := verdict("-gate", accepted, kafka, filepath.Join(dir, "ginkgo-nosuch.json"))
		if code != 2 || strings.Count(errOut, "\n") != 1 || !strings.HasPrefix(errOut, "conformance: exit 2, the harness could not run: ") ||
			!strings.Contains(errOut, "ginkgo-nosuch.json") || out != "" {
			t.Errorf("exit %d\nstdout %q\nstderr %q", code, out, errOut)
		}
	})
	t.Run("a failed BeforeSuite is exit 2", func(t *testing.T) {
		p := filepath.Join(dir, "ginkgo-pulsar.json")
		copyTo(t, "../../testdata/ginkgo-fixture-beforesuite-failed.json", p)
		code, out, _ := verdict("-gate", accepted, p)
		// The cause once, in the last line: not a "missing" line per spec for it.
		if code != 2 || !strings.HasPrefix(lastLine(out), "conformance: exit 2, the harness could not run: pulsar: BeforeSuite failed") ||
			strings.Contains(out, "MISSING") {
			t.Errorf("exit %d\n%s", code, out)
		}
	})
	t.Run("an interrupted run is exit 2", func(t *testing.T) {
		p := filepath.Join(dir, "ginkgo-memory.json")
		copyTo(t, "../../testdata/ginkgo-interrupted.json", p)
		code, out, _ := verdict("-gate", accepted, p)
		if code != 2 || !strings.Contains(lastLine(out), "the run was interrupted (Interrupted by User)") {
			t.Errorf("exit %d\n%s", code, out)
		}
	})
	t.Run("bad usage is exit 2 before any report is read", func(t *testing.T) {
		nosuch := filepath.Join(dir, "ginkgo-nosuch.json")
		for _, args := range [][]string{
			{"-gate", accepted, "-gate-level", "may", nosuch},
			{nosuch}, // -run-verdict without -gate
		} {
			code, out, errOut := verdict(args...)
			if code != 2 || strings.Count(errOut, "\n") != 1 || strings.Contains(errOut, "nosuch") || out != "" {
				t.Errorf("%v: exit %d\nstdout %q\nstderr %q", args, code, out, errOut)
			}
		}
		var o, e bytes.Buffer
		if code := run([]string{"-gate", accepted, "-gate-level=may", nosuch}, &o, &e); code != 2 ||
			e.String() != `compare: -gate-level "may": want must (only MUST regressions block) or should (every regression blocks)`+"\n" {
			t.Errorf("make gate GATE_LEVEL=may: exit %d, stderr %q", code, e.String())
		}
	})
}
