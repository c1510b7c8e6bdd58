package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An interrupted run never silently replaces the last complete matrix: its pages go to
// c-interrupted.md/.html, c.md stays as it was, and the output says both.
func TestInterruptedRunKeepsCompleteMatrix(t *testing.T) {
	dir := t.TempDir()
	kafka := filepath.Join(dir, "junit-kafka.xml")
	copyTo(t, "../../testdata/ginkgo-interrupted.xml", kafka)
	md, html := filepath.Join(dir, "c.md"), filepath.Join(dir, "c.html")
	if err := os.WriteFile(md, []byte("complete run\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if code := run([]string{"-md", md, "-html", html, "-catalogue=false", kafka}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if b, _ := os.ReadFile(md); string(b) != "complete run\n" {
		t.Errorf("the complete matrix was overwritten:\n%s", b)
	}
	if _, err := os.Stat(html); err == nil {
		t.Errorf("%s written by an interrupted run", html)
	}
	b, err := os.ReadFile(filepath.Join(dir, "c-interrupted.md"))
	if err != nil || !strings.Contains(string(b), "INTERRUPTED RUN") {
		t.Errorf("c-interrupted.md: %v\n%s", err, b)
	}
	if _, err := os.Stat(filepath.Join(dir, "c-interrupted.html")); err != nil {
		t.Error(err)
	}
	for _, want := range []string{"INTERRUPTED RUN", "wrote " + filepath.Join(dir, "c-interrupted.md"), "kept " + md} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

// A run whose SynchronizedBeforeSuite failed (here PUBSUB_BROKERS=bogus) has no spec at all:
// the matrix must still list every catalogue behaviour as not run, with the setup failure as
// the cause, not come out empty.
func TestSetupFailedRunListsEveryBehaviourNotRun(t *testing.T) {
	dir := t.TempDir()
	kafka := filepath.Join(dir, "ginkgo-kafka.json")
	copyTo(t, "../../testdata/ginkgo-setup-failed.json", kafka)
	md := filepath.Join(dir, "c.md")
	var out, errOut bytes.Buffer
	if code := run([]string{"-md", md, "-html", "", kafka}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	b, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| D1 |", "| T3 |", "is not valid; use one of"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("matrix lacks %q:\n%s", want, b)
		}
	}
	if strings.Contains(out.String(), " 0 not run") {
		t.Errorf("no behaviour counted as not run:\n%s", out.String())
	}
	// The terminal says the cause once: one setup line (not the other processes' colour-coded
	// echoes of it) and one not-run line for all behaviours.
	term := out.String()
	if n := strings.Count(term, "start brokers: choose broker provider"); n != 2 {
		t.Errorf("the cause appears %d times, want 2 (setup failure, not-run line):\n%s", n, term)
	}
	if strings.Contains(term, "parallel process #1") || strings.Contains(term, "\x1b[") {
		t.Errorf("echo or colour codes in the terminal summary:\n%s", term)
	}
}
