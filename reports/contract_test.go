package reports

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pubsub-conformance/harness/specs/catalogue"
)

func TestContractCoverageFindsGaps(t *testing.T) {
	dir := t.TempDir()
	src := `// Package x is a contract.
package x

// Thing does things. It returns only when done. [C-X-1] Close is idempotent. [C-X-2]
// It never blocks past ctx.
type Thing interface {
	// Do does it. [C-X-3]
	Do()
}

// helper is unexported: never scanned, whatever it says it returns.
func helper() {}
`
	if err := os.WriteFile(filepath.Join(dir, "x.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	sentences, problems, err := ScanContract(dir, []string{"x.go"})
	if err != nil {
		t.Fatal(err)
	}
	if len(sentences) != 3 || sentences[0].Text != "Thing does things. It returns only when done." || sentences[1].Text != "Close is idempotent." {
		t.Fatalf("sentences = %+v", sentences)
	}
	if len(problems) != 1 || !strings.Contains(problems[0], "never blocks past ctx") {
		t.Fatalf("want one unmarked-text problem, got %q", problems)
	}
	cov, problems := ContractCoverage(sentences,
		map[string][]string{"D1": {"C-X-1"}, "D9": {"C-X-9"}},
		map[string]string{"C-X-3": "a declaration", "C-X-2": ""},
		[]string{"D1"})
	want := []string{"Asserts names behaviour D9", "asserts C-X-9", "NotTestable[C-X-2] gives no reason"}
	for _, w := range want {
		found := false
		for _, p := range problems {
			found = found || strings.Contains(p, w)
		}
		if !found {
			t.Errorf("no problem mentions %q in %q", w, problems)
		}
	}
	md := string(ContractMarkdown(cov))
	if !strings.Contains(md, "3 sentences: 1 asserted by specs, 1 not testable (reason given), 1 uncovered.") {
		t.Errorf("summary line missing:\n%s", md)
	}
}

// The repository's own contract is fully covered and its table is current (make catalogue).
func TestRepositoryContractIsCovered(t *testing.T) {
	if err := CheckContract("..", "contract.md"); err != nil {
		t.Fatal(err)
	}
}

func TestContractLevels(t *testing.T) {
	cov := []Coverage{
		{Sentence: Sentence{ID: "C-A-1"}, Specs: []string{"D1", "D4"}}, // a MUST and a SHOULD: MUST
		{Sentence: Sentence{ID: "C-A-2"}, Specs: []string{"D4"}},       // only a SHOULD
		{Sentence: Sentence{ID: "C-A-3"}, NotTestable: "caller's"},
		{Sentence: Sentence{ID: "C-A-4"}, NotTestable: "caller's"},
	}
	bs := []catalogue.Behaviour{{ID: "D1", Level: catalogue.MUST}, {ID: "D4", Level: catalogue.SHOULD}}
	problems := ContractLevels(cov, bs, map[string]catalogue.Level{"C-A-3": catalogue.SHOULD, "C-A-1": catalogue.SHOULD, "C-X-9": catalogue.MUST})
	if cov[0].Level != catalogue.MUST || cov[1].Level != catalogue.SHOULD || cov[2].Level != catalogue.SHOULD {
		t.Errorf("levels %v %v %v", cov[0].Level, cov[1].Level, cov[2].Level)
	}
	want := []string{
		"specs/catalogue/contract.go: DeclaredLevels names C-X-9, which no contract sentence is marked with",
		"specs/catalogue/contract.go: DeclaredLevels[C-A-1]: the sentence is asserted by D1, D4 and takes their level",
		"specs/catalogue/contract.go: not-testable sentence [C-A-4] has no level in DeclaredLevels",
	}
	if strings.Join(problems, "\n") != strings.Join(want, "\n") {
		t.Errorf("problems\n%s\nwant\n%s", strings.Join(problems, "\n"), strings.Join(want, "\n"))
	}
}

// What is scanned of a type: the doc of its exported and embedded members, not of unexported
// ones; a marker used twice is named at both places; the table marks an uncovered sentence.
func TestContractScanMembersAndDuplicates(t *testing.T) {
	dir := t.TempDir()
	src := `package x

// Thing does things. [C-X-1]
type Thing interface {
	// Embedded closes. [C-X-10]
	io.Closer
	// hidden returns. [C-X-6]
	hidden()
	// Do does it,
	// twice. [C-X-1]
	Do()
}
`
	if err := os.WriteFile(filepath.Join(dir, "x.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	sentences, problems, err := ScanContract(dir, []string{"x.go"})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, s := range sentences {
		ids = append(ids, s.ID)
	}
	if strings.Join(ids, " ") != "C-X-1 C-X-10" {
		t.Errorf("sentences %q, want C-X-1 and the embedded member's C-X-10 (markers of any length)", ids)
	}
	if want := "x.go:10: contract marker [C-X-1] used twice (first at x.go:3)"; len(problems) != 1 || problems[0] != want {
		t.Errorf("problems %q, want %q", problems, want)
	}
	cov, _ := ContractCoverage(sentences, map[string][]string{"D1": {"C-X-1"}}, map[string]string{}, []string{"D1"})
	md := string(ContractMarkdown(cov))
	if !strings.Contains(md, "| C-X-1 |") || !strings.Contains(md, "| D1 |") || !strings.Contains(md, "x.go:5 | **UNCOVERED** |") {
		t.Errorf("table:\n%s", md)
	}
}

// make catalogue fails on a stale contract table.
func TestCheckContractFailsOnAStaleTable(t *testing.T) {
	stale := filepath.Join(t.TempDir(), "contract.md")
	if err := os.WriteFile(stale, []byte("# Contract coverage\n\nold\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := CheckContract("..", stale); err == nil || !strings.Contains(err.Error(), "contract table is stale") {
		t.Errorf("CheckContract of a stale table: %v", err)
	}
}

// A long unmarked text is clipped in the problem that quotes it, a short one is whole.
func TestClip(t *testing.T) {
	if clip("abc", 3) != "abc" || clip("abcd", 3) != "abc..." {
		t.Errorf("clip: %q %q", clip("abc", 3), clip("abcd", 3))
	}
}
