package layers

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pubsub-conformance/harness/internal/modroot"
)

// TestImportsFollowTheLayers lists every package of the module (go list, test code left out)
// and fails on each import the table does not allow and on each package it does not place.
func TestImportsFollowTheLayers(t *testing.T) {
	root, err := modroot.Find()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "list", "-e", "-json=ImportPath,Imports,Error", "./...")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	pkgs := 0
	for {
		var p struct {
			ImportPath string
			Imports    []string
			Error      *struct{ Err string }
		}
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("go list output: %v", err)
		}
		if p.Error != nil {
			t.Errorf("%s: %s", p.ImportPath, p.Error.Err)
		}
		pkgs++
		for _, v := range Check(p.ImportPath, p.Imports) {
			t.Error(v)
		}
	}
	if pkgs < 40 { // the module has about 60: go list did not list it
		t.Fatalf("go list listed %d packages", pkgs)
	}
}

// The table catches what it must: one forbidden import of each kind, and a package it cannot
// place.
func TestCheckNamesTheImportAgainstTheLayers(t *testing.T) {
	for _, tc := range []struct {
		pkg, imp, want string
	}{
		{"specs", "backends/memory", "layer specs may not import layer backend"},
		{"backends/kafka", "backends/mutants", "layer backend may not import layer backend sets"},
		{"backends/mutants", "specs", "layer backend sets may not import layer specs"},
		{"fixtures/local", "backends/kafka", "layer brokers may not import layer backend"},
		{"backends/remote", "fixtures/maven", "layer backend may not import layer brokers"},
		{"bench/cmd/bench", "suite", "layer bench may not import layer suite"},
		{"bench/cmd/bench", "github.com/onsi/ginkgo/v2", "only layers specs, suite may import github.com/onsi/ginkgo/v2"},
		{"bench", "github.com/onsi/gomega/types", "only layers specs, suite may import github.com/onsi/gomega"},
		{"backends/newbroker", "fixtures/providers", "layer backend may not import layer brokers"},
		{"newtree/x", "backends", "in no layer"},
		{"suite/run", "backends/kafka", "layer run may not import layer backend"},
		{"backends", "backends/kafka", "layer contract may not import layer backend"},
	} {
		imp := tc.imp
		if !strings.Contains(imp, ".") {
			imp = Module + "/" + imp
		}
		got := Check(Module+"/"+tc.pkg, []string{imp})
		if len(got) != 1 || !strings.Contains(got[0].String(), tc.want) {
			t.Errorf("%s -> %s: %v, want one violation saying %q", tc.pkg, tc.imp, got, tc.want)
		}
	}
	for _, ok := range [][2]string{
		{"suite", "backends/memory"}, {"backends/mutants", "backends/kafka"}, {"backends/kafka", "backends"},
		{"reports", "github.com/onsi/ginkgo/v2/types"}, {"bench/cmd/bench", "suite/run"}, {"fixtures/local", "internal/cache"},
	} {
		imp := ok[1]
		if !strings.Contains(imp, ".") {
			imp = Module + "/" + imp
		}
		if got := Check(Module+"/"+ok[0], []string{imp}); len(got) > 0 {
			t.Errorf("%s -> %s is allowed: %v", ok[0], ok[1], got)
		}
	}
}

// docs/architecture.md carries the table as Markdown renders it.
func TestArchitectureDocShowsTheTable(t *testing.T) {
	root, err := modroot.Find()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(root, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), Markdown()) {
		t.Errorf("docs/architecture.md lacks the layer table of internal/layers; put this in it:\n\n%s", Markdown())
	}
}
