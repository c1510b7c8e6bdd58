package reports

import (
	"bytes"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/pubsub-conformance/harness/specs/catalogue"
)

// Implementation is where the spec of a catalogue entry is declared.
type Implementation struct {
	ID   string
	File string // path relative to the scanned directory's parent ("specs/delivery.go")
	Line int
}

// specWrappers are the specs package's declarations of a catalogue entry's spec.
var specWrappers = map[string]bool{"Behaviour": true, "BehaviourTable": true}

// bareID is a spec text that names an ID itself instead of going through a wrapper.
var bareID = regexp.MustCompile(`^\[([A-Z]\d+)\] `)

// requirementComment is a comment line that states a requirement ("// MUST keep ..."): the
// catalogue entry is the one place for that text, and a copy goes stale.
var requirementComment = regexp.MustCompile(`^//\s*(MUST|SHOULD)\b`)

// ScanSpecs parses every .go file in dir and returns the Behaviour("ID", ...) and
// BehaviourTable("ID", ...) calls in source order, plus one problem per spec whose text starts
// with "[ID] " outside those wrappers (it would carry no ID label) and per comment line that
// copies requirement text ("// MUST ...").
func ScanSpecs(dir string) ([]Implementation, []string, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, nil, fmt.Errorf("scan specs: %w", err)
	}
	if len(paths) == 0 {
		if _, err := os.Stat(dir); err != nil {
			return nil, nil, fmt.Errorf("scan specs: %w", err)
		}
	}
	sort.Strings(paths)
	fset := token.NewFileSet()
	var out []Implementation
	var problems []string
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ParseComments)
		if err != nil {
			return nil, nil, fmt.Errorf("scan specs: %w", err)
		}
		rel := filepath.ToSlash(filepath.Join(filepath.Base(filepath.Clean(dir)), filepath.Base(p)))
		for _, g := range f.Comments {
			for _, c := range g.List {
				if m := requirementComment.FindStringSubmatch(c.Text); m != nil {
					problems = append(problems, fmt.Sprintf("%s:%d: a comment states a requirement (%q): the catalogue entry says what is required; say here only how the spec checks it",
						rel, fset.Position(c.Pos()).Line, m[1]))
				}
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) == 0 {
				return true
			}
			lit, ok := call.Args[0].(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			text, err := strconv.Unquote(lit.Value)
			if err != nil {
				return true
			}
			line := fset.Position(call.Pos()).Line
			if name := funcName(call); specWrappers[name] {
				out = append(out, Implementation{ID: text, File: rel, Line: line})
			} else if m := bareID.FindStringSubmatch(text); m != nil && name != "Entry" {
				problems = append(problems, fmt.Sprintf("%s:%d: spec [%s] is declared with %s: use Behaviour(%q, ...) or BehaviourTable so it carries its ID label",
					rel, line, m[1], name, m[1]))
			}
			return true
		})
	}
	return out, problems, nil
}

func funcName(call *ast.CallExpr) string {
	switch fn := call.Fun.(type) {
	case *ast.Ident:
		return fn.Name
	case *ast.SelectorExpr:
		return fn.Sel.Name
	}
	return ""
}

// coverage checks that every entry has exactly one spec, every spec an entry, and that each
// spec is declared in its area's files (specs/<area>*.go: delivery.go; faults.go,
// faults_send.go for the area fault), so one area's specs are found in one place.
func coverage(entries []catalogue.Behaviour, impls []Implementation) []string {
	var problems []string
	known := map[string]catalogue.Behaviour{}
	for _, b := range entries {
		known[b.ID] = b
	}
	where := map[string][]string{}
	for _, im := range impls {
		loc := fmt.Sprintf("%s:%d", im.File, im.Line)
		b, ok := known[im.ID]
		switch {
		case !ok:
			problems = append(problems, fmt.Sprintf("%s: spec %q is not in the catalogue (specs/catalogue): add its entry there", loc, im.ID))
		case !strings.HasPrefix(filepath.Base(im.File), b.Area):
			problems = append(problems, fmt.Sprintf("%s: spec %s of area %s is declared outside its area's files (specs/%s*.go)", loc, im.ID, b.Area, b.Area))
		}
		where[im.ID] = append(where[im.ID], loc)
	}
	for _, b := range entries {
		switch locs := where[b.ID]; len(locs) {
		case 0:
			problems = append(problems, fmt.Sprintf("catalogue entry %s has no spec: declare it with Behaviour(%q, ...) in specs/", b.ID, b.ID))
		case 1:
		default:
			problems = append(problems, fmt.Sprintf("catalogue entry %s has %d specs (%s): one behaviour, one spec", b.ID, len(locs), strings.Join(locs, ", ")))
		}
	}
	return problems
}

// CatalogueMarkdown renders the catalogue file from entries (in their order) and where their
// specs are. The output depends only on its inputs, so a committed copy can be checked for
// staleness byte for byte.
func CatalogueMarkdown(entries []catalogue.Behaviour, impls []Implementation) []byte {
	files := map[string][]string{}
	for _, im := range impls {
		if !contains(files[im.ID], im.File) {
			files[im.ID] = append(files[im.ID], im.File)
		}
	}
	var buf bytes.Buffer
	buf.WriteString("# Behaviour catalogue\n\n" +
		"Generated from specs/catalogue/catalogue.go by `go run ./reports/cmd/catalogue`; do not edit.\n" +
		"`go run ./reports/cmd/catalogue -check` fails when this file is stale, an entry has no spec\n" +
		"or two, or a spec is not in the catalogue.\n\n" +
		"Level: MUST is TrustGraph's requirement, its sentence quoted with the file it is from (in\n" +
		"github.com/trustgraph-ai/trustgraph); SHOULD is a stronger guarantee than TrustGraph asks for,\n" +
		"with why it is tested. A SHOULD failure is a finding, not a breach of TrustGraph's contract.\n")
	area := ""
	for _, b := range entries {
		if b.Area != area {
			area = b.Area
			fmt.Fprintf(&buf, "\n## %s\n\n| ID | Behaviour | Level | Requirement | Why this level | Labels | Spec |\n|---|---|---|---|---|---|---|\n", area)
		}
		labels := append([]string{b.Area}, b.Labels...)
		fmt.Fprintf(&buf, "| %s | %s | %s | %s | %s | %s | %s |\n", b.ID, mdEscape(b.Title), b.Level,
			mdEscape(b.Requirement), mdEscape(b.Source), mdEscape(strings.Join(labels, ", ")), strings.Join(files[b.ID], ", "))
	}
	if len(entries) == 0 {
		buf.WriteString("\n(no behaviours)\n")
	}
	return buf.Bytes()
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// ErrStale is returned by CheckCatalogue when the committed file differs from the generated one.
var ErrStale = errors.New("catalogue is stale: run `go run ./reports/cmd/catalogue` and commit the result")

// GenerateCatalogue scans specDir and renders the catalogue of entries, returning every
// problem of the table and of its specs (see CheckCatalogue) alongside.
func GenerateCatalogue(entries []catalogue.Behaviour, specDir string) ([]byte, []string, error) {
	impls, problems, err := ScanSpecs(specDir)
	if err != nil {
		return nil, nil, err
	}
	problems = append(append(catalogue.Check(entries), problems...), coverage(entries, impls)...)
	return CatalogueMarkdown(entries, impls), problems, nil
}

// CheckCatalogue checks the table entries, that every entry has exactly one spec in specDir
// and every spec there an entry, and that the file at path is the generated catalogue. It
// returns every problem joined, so one run shows all of them.
func CheckCatalogue(entries []catalogue.Behaviour, specDir, path string) error {
	want, problems, err := GenerateCatalogue(entries, specDir)
	if err != nil {
		return err
	}
	var errs []error
	for _, p := range problems {
		errs = append(errs, errors.New(p))
	}
	got, err := os.ReadFile(path)
	switch {
	case err != nil:
		errs = append(errs, fmt.Errorf("%s: %w: %w", path, ErrStale, err))
	case !bytes.Equal(got, want):
		errs = append(errs, fmt.Errorf("%s: %w", path, ErrStale))
	}
	return errors.Join(errs...)
}
