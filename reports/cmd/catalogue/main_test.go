package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pubsub-conformance/harness/specs/catalogue"
)

func TestCatalogueCommand(t *testing.T) {
	out := filepath.Join(t.TempDir(), "catalogue.md")
	good, bad := "../../../specs", "../../testdata/specs-bad"
	var o, e bytes.Buffer
	if code := run([]string{"-specs", good, "-out", out, "-check"}, &o, &e); code != 1 || !strings.Contains(e.String(), "stale") {
		t.Errorf("check before generating: exit %d, %q", code, e.String())
	}
	e.Reset()
	n := len(catalogue.Behaviours)
	if code := run([]string{"-specs", good, "-out", out}, &o, &e); code != 0 || !strings.Contains(o.String(), "behaviours") || n == 0 {
		t.Fatalf("generate: exit %d, %q %q", code, o.String(), e.String())
	}
	if code := run([]string{"-specs", good, "-out", out, "-check"}, &o, &e); code != 0 {
		t.Errorf("check after generating: exit %d, %q", code, e.String())
	}
	e.Reset()
	if code := run([]string{"-specs", bad, "-out", out, "-check"}, &o, &e); code != 1 ||
		!strings.Contains(e.String(), "[A2] is declared with It") || !strings.Contains(e.String(), "catalogue entry D2 has no spec") {
		t.Errorf("bad specs: exit %d, %q", code, e.String())
	}
	e.Reset()
	// Generating against bad specs still writes the file but exits 1 so nobody commits it unnoticed.
	if code := run([]string{"-specs", bad, "-out", out}, &o, &e); code != 1 {
		t.Errorf("generate bad: exit %d", code)
	}
	if b, _ := os.ReadFile(out); !strings.Contains(string(b), "| D1 |") {
		t.Errorf("file not written: %s", b)
	}
	if code := run([]string{"stray"}, &o, &e); code != 2 {
		t.Errorf("stray argument: exit %d", code)
	}
}
