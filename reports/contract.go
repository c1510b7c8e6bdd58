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
	"slices"
	"sort"
	"strings"

	"github.com/pubsub-conformance/harness/specs/catalogue"
)

// Sentence is one normative sentence of the contract, found by its marker ("[C-ACK-1]") in a
// doc comment of backends/backend.go or backends/topic.go.
type Sentence struct {
	ID   string
	Text string // the comment text from the previous marker (or the comment's start) to this one
	File string // as given ("backends/backend.go")
	Line int
}

// Coverage is one row of the contract table.
type Coverage struct {
	Sentence
	Specs       []string // behaviour IDs asserting it, in catalogue order
	NotTestable string   // the reason, when no spec can assert it
	// Level is MUST when a MUST behaviour asserts the sentence, SHOULD when only SHOULD ones
	// do; a not-testable sentence has its declared level (ContractLevels).
	Level catalogue.Level
}

// ContractLevels sets each sentence's level from the behaviours asserting it, or from
// declared for a sentence no behaviour asserts, and returns the problems: a not-testable
// sentence without a declared level, a declared level for an asserted or unknown sentence.
func ContractLevels(cov []Coverage, behaviours []catalogue.Behaviour, declared map[string]catalogue.Level) []string {
	var problems []string
	level := map[string]catalogue.Level{}
	for _, b := range behaviours {
		level[b.ID] = b.Level
	}
	known := map[string]bool{}
	for i := range cov {
		c := &cov[i]
		known[c.ID] = true
		d, isDeclared := declared[c.ID]
		switch {
		case len(c.Specs) > 0:
			c.Level = catalogue.SHOULD
			for _, id := range c.Specs {
				if level[id] == catalogue.MUST {
					c.Level = catalogue.MUST
				}
			}
			if isDeclared {
				problems = append(problems, fmt.Sprintf("specs/catalogue/contract.go: DeclaredLevels[%s]: the sentence is asserted by %s and takes their level", c.ID, strings.Join(c.Specs, ", ")))
			}
		case isDeclared && (d == catalogue.MUST || d == catalogue.SHOULD):
			c.Level = d
		case isDeclared:
			problems = append(problems, fmt.Sprintf("specs/catalogue/contract.go: DeclaredLevels[%s] is %q: want MUST or SHOULD", c.ID, d))
		case c.NotTestable != "":
			problems = append(problems, fmt.Sprintf("specs/catalogue/contract.go: not-testable sentence [%s] has no level in DeclaredLevels", c.ID))
		}
	}
	for id := range declared {
		if !known[id] {
			problems = append(problems, fmt.Sprintf("specs/catalogue/contract.go: DeclaredLevels names %s, which no contract sentence is marked with", id))
		}
	}
	sort.Strings(problems)
	return problems
}

var (
	contractMarker = regexp.MustCompile(`\[(C-[A-Z]+-\d+)\]`)
	// normative words: text with one of them after a comment's last marker needs a marker.
	normative = regexp.MustCompile(`(?i)\b(must|never|only|always|idempotent|returns?|blocks?|wrapping|delivered|creates?|deletes?|keeps?|closes?|compete|resumes?|starts?|safe|acknowledges?|arrive)\b`)
)

// ScanContract reads the contract's doc comments in files (relative to root) and returns their
// marked sentences, plus one problem per duplicated marker and per doc comment whose text after
// its last marker reads as normative but carries no marker.
func ScanContract(root string, files []string) ([]Sentence, []string, error) {
	var out []Sentence
	var problems []string
	seen := map[string]string{}
	fset := token.NewFileSet()
	for _, rel := range files {
		f, err := parser.ParseFile(fset, filepath.Join(root, rel), nil, parser.ParseComments)
		if err != nil {
			return nil, nil, fmt.Errorf("scan contract: %w", err)
		}
		for _, cg := range contractComments(f) {
			text := cg.Text()
			line := fset.Position(cg.Pos()).Line
			prevEnd := 0
			for _, m := range contractMarker.FindAllStringSubmatchIndex(text, -1) {
				id := text[m[2]:m[3]]
				before := text[prevEnd:m[0]]
				prevEnd = m[1]
				// In a list, the sentence starts at its item.
				if i := strings.LastIndex(before, "\n  - "); i >= 0 {
					before = before[i+len("\n  - "):]
				}
				where := fmt.Sprintf("%s:%d", rel, line+strings.Count(text[:m[0]], "\n"))
				if prev, dup := seen[id]; dup {
					problems = append(problems, fmt.Sprintf("%s: contract marker [%s] used twice (first at %s)", where, id, prev))
					continue
				}
				seen[id] = where
				out = append(out, Sentence{ID: id, Text: oneLine(before), File: rel, Line: line + strings.Count(text[:m[0]], "\n")})
			}
			if tail := oneLine(text[prevEnd:]); normative.MatchString(tail) {
				problems = append(problems, fmt.Sprintf("%s:%d: contract text without a marker (add \"[C-AREA-n]\" after the sentence and map it in specs/catalogue/contract.go): %q", rel, line, clip(tail, 120)))
			}
		}
	}
	return out, problems, nil
}

// contractComments are the doc comments of the exported declarations (and their exported
// fields and interface methods) and the package doc.
func contractComments(f *ast.File) []*ast.CommentGroup {
	var out []*ast.CommentGroup
	add := func(cgs ...*ast.CommentGroup) {
		for _, cg := range cgs {
			if cg != nil {
				out = append(out, cg)
			}
		}
	}
	add(f.Doc)
	fields := func(fl *ast.FieldList) {
		if fl == nil {
			return
		}
		for _, fd := range fl.List {
			exported := len(fd.Names) == 0
			for _, n := range fd.Names {
				exported = exported || n.IsExported()
			}
			if exported {
				add(fd.Doc, fd.Comment)
			}
		}
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Name.IsExported() {
				add(d.Doc)
			}
		case *ast.GenDecl:
			groupDoc := false
			for _, sp := range d.Specs {
				switch sp := sp.(type) {
				case *ast.TypeSpec:
					if !sp.Name.IsExported() {
						continue
					}
					groupDoc = true
					add(sp.Doc, sp.Comment)
					switch t := sp.Type.(type) {
					case *ast.InterfaceType:
						fields(t.Methods)
					case *ast.StructType:
						fields(t.Fields)
					}
				case *ast.ValueSpec:
					exported := false
					for _, n := range sp.Names {
						exported = exported || n.IsExported()
					}
					if exported {
						groupDoc = true
						add(sp.Doc, sp.Comment)
					}
				}
			}
			if groupDoc {
				add(d.Doc)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Pos() < out[j].Pos() })
	return out
}

// ContractCoverage joins the sentences with the behaviours asserting them (asserts: behaviour
// ID -> sentence IDs) and the not-testable reasons. Problems: a sentence with neither, a
// sentence with both, a reason that is empty, a table entry naming a sentence or behaviour
// that does not exist.
func ContractCoverage(sentences []Sentence, asserts map[string][]string, notTestable map[string]string, behaviours []string) ([]Coverage, []string) {
	var problems []string
	known := map[string]bool{}
	for _, s := range sentences {
		known[s.ID] = true
	}
	isBehaviour := map[string]bool{}
	for _, b := range behaviours {
		isBehaviour[b] = true
	}
	by := map[string][]string{}
	for b, ids := range asserts {
		if !isBehaviour[b] {
			problems = append(problems, fmt.Sprintf("specs/catalogue/contract.go: Asserts names behaviour %s, which is not in the catalogue", b))
		}
		for _, id := range ids {
			if !known[id] {
				problems = append(problems, fmt.Sprintf("specs/catalogue/contract.go: behaviour %s asserts %s, which no contract sentence is marked with", b, id))
				continue
			}
			by[id] = append(by[id], b)
		}
	}
	for id := range notTestable {
		if !known[id] {
			problems = append(problems, fmt.Sprintf("specs/catalogue/contract.go: NotTestable names %s, which no contract sentence is marked with", id))
		}
	}
	out := make([]Coverage, 0, len(sentences))
	for _, s := range sentences {
		c := Coverage{Sentence: s, Specs: by[s.ID], NotTestable: strings.TrimSpace(notTestable[s.ID])}
		sort.Slice(c.Specs, func(i, j int) bool { return catalogue.Less(c.Specs[i], c.Specs[j]) })
		_, listed := notTestable[s.ID]
		switch {
		case len(c.Specs) == 0 && !listed:
			problems = append(problems, fmt.Sprintf("%s:%d: contract sentence [%s] has no spec and no reasoned NotTestable entry: %q", s.File, s.Line, s.ID, clip(s.Text, 120)))
		case listed && c.NotTestable == "":
			problems = append(problems, fmt.Sprintf("specs/catalogue/contract.go: NotTestable[%s] gives no reason", s.ID))
		case listed && len(c.Specs) > 0:
			problems = append(problems, fmt.Sprintf("specs/catalogue/contract.go: [%s] is asserted by %s and also listed as not testable", s.ID, strings.Join(c.Specs, ", ")))
		}
		out = append(out, c)
	}
	sort.Strings(problems)
	return out, problems
}

// ContractMarkdown renders the coverage table (reports/contract.md).
func ContractMarkdown(cov []Coverage) []byte {
	var asserted, untestable, open int
	for _, c := range cov {
		switch {
		case len(c.Specs) > 0:
			asserted++
		case c.NotTestable != "":
			untestable++
		default:
			open++
		}
	}
	var b bytes.Buffer
	b.WriteString("# Contract coverage\n\n")
	b.WriteString("Generated by `go run ./reports/cmd/contract` from the markers in the contract's doc comments\n")
	b.WriteString("(" + strings.Join(catalogue.ContractFiles, ", ") + ") and the tables in specs/catalogue/contract.go;\n")
	b.WriteString("do not edit. `make catalogue` fails when a sentence has no spec and no reasoned not-testable entry.\n\n")
	fmt.Fprintf(&b, "%d sentences: %d asserted by specs, %d not testable (reason given), %d uncovered.\n\n", len(cov), asserted, untestable, open)
	b.WriteString("Level: MUST when a MUST behaviour of reports/catalogue.md asserts the sentence, SHOULD when only\n" +
		"SHOULD behaviours do; a not-testable sentence has the level declared for it in specs/catalogue/contract.go.\n\n")
	b.WriteString("| ID | Level | Contract sentence | Source | Asserted by |\n|---|---|---|---|---|\n")
	for _, c := range cov {
		by := strings.Join(c.Specs, " ")
		if by == "" && c.NotTestable != "" {
			by = "not testable: " + c.NotTestable
		}
		if by == "" {
			by = "**UNCOVERED**"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s:%d | %s |\n", c.ID, c.Level, contractCell(c.Text), c.File, c.Line, contractCell(by))
	}
	return b.Bytes()
}

// BuildContract scans the contract under root and joins it with the catalogue's tables.
func BuildContract(root string) ([]Coverage, []string, error) {
	sentences, problems, err := ScanContract(root, catalogue.ContractFiles)
	if err != nil {
		return nil, nil, err
	}
	cov, more := ContractCoverage(sentences, catalogue.Asserts(), catalogue.NotTestable, catalogue.IDs())
	more = append(more, ContractLevels(cov, catalogue.Behaviours, catalogue.DeclaredLevels)...)
	return cov, append(problems, more...), nil
}

// CheckContract fails when a contract sentence is uncovered, a table is inconsistent or the
// committed table at out is not the generated one.
func CheckContract(root, out string) error {
	cov, problems, err := BuildContract(root)
	if err != nil {
		return err
	}
	have, err := os.ReadFile(out)
	if err != nil {
		problems = append(problems, fmt.Sprintf("%s: %v: run `go run ./reports/cmd/contract`", out, err))
	} else if !bytes.Equal(have, ContractMarkdown(cov)) {
		problems = append(problems, fmt.Sprintf("%s: contract table is stale: run `go run ./reports/cmd/contract` and commit the result", out))
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(slices.Compact(problems), "\n"))
	}
	return nil
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

func contractCell(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "\n", " ")
}
