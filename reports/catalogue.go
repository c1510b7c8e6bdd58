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
)

// Behaviour is one catalogue entry, read from a spec's source.
type Behaviour struct {
	ID     string
	Title  string // the spec text after "[ID] "
	Must   string // the MUST comment, joined into one paragraph
	Area   string // the spec file's name without .go ("delivery")
	File   string // path relative to the scanned directory's parent ("specs/delivery.go")
	Line   int
	Labels []string // string literals of Label(...) arguments in the same call, when present
}

var (
	specIDPrefix = regexp.MustCompile(`^\[([A-Z]\d+)\] `)
	// mustComment accepts "// MUST deliver ..." and "// MUST, against ..., make ...".
	mustComment = regexp.MustCompile(`^// MUST\b[ ,:]`)
)

// ScanSpecs parses every .go file in dir and returns the catalogue behaviours sorted by ID,
// plus one problem per spec without a "// MUST " comment directly above it and per duplicated
// ID. A spec is a call whose first argument is a string literal starting with "[ID] ".
func ScanSpecs(dir string) ([]Behaviour, []string, error) {
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
	var out []Behaviour
	var problems []string
	for _, p := range paths {
		f, err := parser.ParseFile(fset, p, nil, parser.ParseComments)
		if err != nil {
			return nil, nil, fmt.Errorf("scan specs: %w", err)
		}
		// The doc of a spec is the comment group that ends on the line just above the call.
		endsAt := map[int]*ast.CommentGroup{}
		for _, cg := range f.Comments {
			endsAt[fset.Position(cg.End()).Line] = cg
		}
		rel := filepath.ToSlash(filepath.Join(filepath.Base(filepath.Clean(dir)), filepath.Base(p)))
		var stack []ast.Node // enclosing nodes, for the labels of enclosing containers
		ast.Inspect(f, func(n ast.Node) bool {
			if n == nil {
				stack = stack[:len(stack)-1]
				return true
			}
			stack = append(stack, n)
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
			m := specIDPrefix.FindStringSubmatch(text)
			if m == nil {
				return true
			}
			pos := fset.Position(call.Pos())
			b := Behaviour{ID: m[1], Title: strings.TrimSpace(text[len(m[0]):]), File: rel, Line: pos.Line,
				Area: strings.TrimSuffix(filepath.Base(p), ".go"), Labels: stackLabels(stack)}
			cg := endsAt[pos.Line-1]
			if cg == nil || !mustComment.MatchString(cg.List[0].Text) {
				problems = append(problems, fmt.Sprintf("%s:%d: spec [%s] has no \"// MUST \" comment directly above it", rel, pos.Line, b.ID))
			} else {
				b.Must = mustText(cg)
			}
			out = append(out, b)
			return true
		})
	}
	sort.SliceStable(out, func(i, j int) bool { return IDLess(out[i].ID, out[j].ID) })
	for i := 1; i < len(out); i++ {
		if out[i].ID == out[i-1].ID {
			problems = append(problems, fmt.Sprintf("%s:%d: spec ID [%s] is also used at %s:%d", out[i].File, out[i].Line,
				out[i].ID, out[i-1].File, out[i-1].Line))
		}
	}
	return out, problems, nil
}

// mustText joins the comment's first paragraph (up to a blank comment line) into one line.
func mustText(cg *ast.CommentGroup) string {
	var parts []string
	for _, c := range cg.List {
		t := strings.TrimSpace(strings.TrimPrefix(c.Text, "//"))
		if t == "" {
			break
		}
		parts = append(parts, t)
	}
	return strings.Join(parts, " ")
}

// stackLabels collects the Label(...) arguments of the spec call and of every enclosing call
// (Describe containers), outermost first, without duplicates.
func stackLabels(stack []ast.Node) []string {
	var labels []string
	seen := map[string]bool{}
	for _, n := range stack {
		if call, ok := n.(*ast.CallExpr); ok {
			for _, l := range callLabels(call) {
				if !seen[l] {
					seen[l] = true
					labels = append(labels, l)
				}
			}
		}
	}
	return labels
}

// callLabels finds Label("a", "b") arguments of a call.
func callLabels(call *ast.CallExpr) []string {
	var labels []string
	for _, a := range call.Args {
		c, ok := a.(*ast.CallExpr)
		if !ok {
			continue
		}
		name := ""
		switch fn := c.Fun.(type) {
		case *ast.Ident:
			name = fn.Name
		case *ast.SelectorExpr:
			name = fn.Sel.Name
		}
		if name != "Label" {
			continue
		}
		for _, la := range c.Args {
			if lit, ok := la.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if s, err := strconv.Unquote(lit.Value); err == nil {
					labels = append(labels, s)
				}
			}
		}
	}
	return labels
}

// CatalogueMarkdown renders the catalogue file. The output depends only on the specs, so a
// committed copy can be checked for staleness byte for byte.
func CatalogueMarkdown(bs []Behaviour) []byte {
	var buf bytes.Buffer
	buf.WriteString("# Behaviour catalogue\n\n" +
		"Generated from the specs' `// MUST` comments by `go run ./reports/cmd/catalogue`; do not edit.\n" +
		"`go run ./reports/cmd/catalogue -check` fails when this file is stale, a spec lacks its MUST\n" +
		"comment, or an ID is used twice.\n")
	area := ""
	for _, b := range bs {
		if b.Area != area {
			area = b.Area
			fmt.Fprintf(&buf, "\n## %s\n\n| ID | Behaviour | Requirement | Labels | Source |\n|---|---|---|---|---|\n", area)
		}
		fmt.Fprintf(&buf, "| %s | %s | %s | %s | %s |\n", b.ID, mdEscape(b.Title),
			mdEscape(b.Must), mdEscape(strings.Join(b.Labels, ", ")), b.File)
	}
	if len(bs) == 0 {
		buf.WriteString("\n(no specs found)\n")
	}
	return buf.Bytes()
}

// ErrStale is returned by CheckCatalogue when the committed file differs from the generated one.
var ErrStale = errors.New("catalogue is stale: run `go run ./reports/cmd/catalogue` and commit the result")

// CheckCatalogue scans specDir and compares the generated catalogue with the file at path.
// It returns every problem joined, so one run shows all of them.
func CheckCatalogue(specDir, path string) error {
	bs, problems, err := ScanSpecs(specDir)
	if err != nil {
		return err
	}
	var errs []error
	for _, p := range problems {
		errs = append(errs, errors.New(p))
	}
	want := CatalogueMarkdown(bs)
	got, err := os.ReadFile(path)
	switch {
	case err != nil:
		errs = append(errs, fmt.Errorf("%s: %w: %w", path, ErrStale, err))
	case !bytes.Equal(got, want):
		errs = append(errs, fmt.Errorf("%s: %w", path, ErrStale))
	}
	return errors.Join(errs...)
}

var catalogueRow = regexp.MustCompile(`^\| ([A-Z]\d+) \| (.*)$`)

// ReadCatalogueTitles reads the ID and behaviour title of every row of a generated catalogue
// file, so the matrix can name DescribeTable rows exactly and list behaviours no run reported.
func ReadCatalogueTitles(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read catalogue: %w", err)
	}
	titles := map[string]string{}
	for _, l := range strings.Split(string(data), "\n") {
		m := catalogueRow.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		// The title ends at the first pipe that mdEscape did not escape.
		rest := m[2]
		end := 0
		for end < len(rest) && (rest[end] != '|' || (end > 0 && rest[end-1] == '\\')) {
			end++
		}
		titles[m[1]] = strings.ReplaceAll(strings.TrimSpace(rest[:end]), `\|`, "|")
	}
	return titles, nil
}

// sortedIDs returns the keys of a title map in catalogue order.
func sortedIDs(titles map[string]string) []string {
	ids := make([]string, 0, len(titles))
	for id := range titles {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return IDLess(ids[i], ids[j]) })
	return ids
}

// CatalogueIDs returns the catalogue's IDs in catalogue order, for Build's extra rows.
func CatalogueIDs(titles map[string]string) []string { return sortedIDs(titles) }
