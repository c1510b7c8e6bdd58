package reports

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pubsub-conformance/harness/specs/catalogue"
)

var testEntries = []catalogue.Behaviour{
	{ID: "D1", Area: "delivery", Title: "round trip", Level: catalogue.MUST, Source: "note: \"x\"", Requirement: "MUST deliver payload | properties intact.", Asserts: []string{"C-MSG-1"}},
	{ID: "D2", Area: "delivery", Title: "ready on return", Level: catalogue.MUST, Source: "s", Requirement: "MUST deliver right after Consumer() returns.", Labels: []string{"seed-bug"}, Asserts: []string{}, Priority: catalogue.PriorityEarly},
	{ID: "G1", Area: "groups", Title: "competing consumers", Level: catalogue.SHOULD, Source: "stronger", Requirement: "SHOULD give each message to one consumer.", Asserts: []string{}},
}

func TestScanSpecs(t *testing.T) {
	impls, problems, err := ScanSpecs("testdata/specs-good")
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) != 0 {
		t.Errorf("problems in good specs: %v", problems)
	}
	want := []Implementation{{"D1", "specs-good/delivery.go", 6}, {"D2", "specs-good/delivery.go", 11}, {"G1", "specs-good/groups.go", 4}}
	if !slices.Equal(impls, want) {
		t.Errorf("implementations\n got %v\nwant %v", impls, want)
	}
	if _, _, err := ScanSpecs("testdata/no-such-dir"); err == nil {
		t.Error("missing spec dir must be an error")
	}
}

func TestCatalogueProblems(t *testing.T) {
	_, problems, err := GenerateCatalogue(testEntries[:1], "testdata/specs-bad")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`specs-bad/acks.go:8: spec [A2] is declared with It: use Behaviour("A2", ...) or BehaviourTable so it carries its ID label`,
		`specs-bad/acks.go:9: spec [A10] is declared with It: use Behaviour("A10", ...) or BehaviourTable so it carries its ID label`,
		`specs-bad/groups.go:6: a comment states a requirement ("MUST"): the catalogue entry says what is required; say here only how the spec checks it`,
		`specs-bad/acks.go:6: spec "A1" is not in the catalogue (specs/catalogue): add its entry there`,
		`specs-bad/acks.go:7: spec "A1" is not in the catalogue (specs/catalogue): add its entry there`,
		`specs-bad/acks.go:10: spec "Q9" is not in the catalogue (specs/catalogue): add its entry there`,
		`specs-bad/groups.go:7: spec D1 of area delivery is declared outside its area's files (specs/delivery*.go)`,
		`specs-bad/groups.go:8: spec "L10" is not in the catalogue (specs/catalogue): add its entry there`,
	}
	if !slices.Equal(problems, want) {
		t.Errorf("problems\n got %q\nwant %q", problems, want)
	}
	entries := append(slices.Clone(testEntries), catalogue.Behaviour{ID: "A1", Area: "acks", Title: "t", Level: catalogue.MUST, Source: "s", Requirement: "nope", Priority: 9})
	_, problems, _ = GenerateCatalogue(entries, "testdata/specs-bad")
	joined := strings.Join(problems, "\n")
	for _, w := range []string{
		`catalogue entry 4 ("A1"): the requirement must start with its level, MUST`,
		"catalogue entry A1 has 2 specs (specs-bad/acks.go:6, specs-bad/acks.go:7): one behaviour, one spec",
		`catalogue entry 4 ("A1"): priority 9: want 0 (none) to 5 (PriorityWorkload)`,
	} {
		if !strings.Contains(joined, w) {
			t.Errorf("problems lack %q:\n%s", w, joined)
		}
	}
}

func TestCheckCatalogue(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "catalogue.md")
	md, problems, err := GenerateCatalogue(testEntries, "testdata/specs-good")
	if err != nil || len(problems) > 0 {
		t.Fatal(err, problems)
	}
	for _, s := range []string{"## delivery", "## groups", `| D1 | round trip | MUST | MUST deliver payload \| properties intact. | note: "x" | delivery | specs-good/delivery.go |`,
		"| D2 | ready on return | MUST | MUST deliver right after Consumer() returns. | s | delivery, seed-bug | specs-good/delivery.go |",
		"| G1 | competing consumers | SHOULD | SHOULD give each message to one consumer. | stronger | groups | specs-good/groups.go |"} {
		if !strings.Contains(string(md), s) {
			t.Errorf("catalogue lacks %q:\n%s", s, md)
		}
	}
	if err := CheckCatalogue(testEntries, "testdata/specs-good", path); !errors.Is(err, ErrStale) {
		t.Errorf("missing file: %v, want ErrStale", err)
	}
	writeFile(t, path, string(md))
	if err := CheckCatalogue(testEntries, "testdata/specs-good", path); err != nil {
		t.Errorf("current file: %v", err)
	}
	writeFile(t, path, strings.Replace(string(md), "ready on return", "ready", 1))
	if err := CheckCatalogue(testEntries, "testdata/specs-good", path); !errors.Is(err, ErrStale) {
		t.Errorf("edited file: %v, want ErrStale", err)
	}
	// A changed table makes the committed file stale too: the table is the source.
	writeFile(t, path, string(md))
	changed := slices.Clone(testEntries)
	changed[0].Title = "round trip, renamed"
	if err := CheckCatalogue(changed, "testdata/specs-good", path); !errors.Is(err, ErrStale) {
		t.Errorf("changed table: %v, want ErrStale", err)
	}
	// Problems and staleness are reported together.
	badPath := filepath.Join(dir, "bad.md")
	if err := os.WriteFile(badPath, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	err = CheckCatalogue(testEntries, "testdata/specs-bad", badPath)
	if err == nil || !errors.Is(err, ErrStale) || !strings.Contains(err.Error(), "[A2] is declared with It") {
		t.Errorf("bad specs: %v", err)
	}
}

// The committed catalogue is the generated one: the same check as make catalogue.
func TestCommittedCatalogueIsCurrent(t *testing.T) {
	if err := CheckCatalogue(catalogue.Behaviours, "../specs", "catalogue.md"); err != nil {
		t.Error(err)
	}
}

// The catalogue table names each file that implements an entry, once.
func TestCatalogueMarkdownFiles(t *testing.T) {
	b, _ := catalogue.Lookup("D1")
	md := string(CatalogueMarkdown([]catalogue.Behaviour{b}, []Implementation{
		{"D1", "specs/a.go", 1}, {"D1", "specs/a.go", 9}, {"D1", "specs/b.go", 3},
	}))
	if !strings.Contains(md, " | specs/a.go, specs/b.go |\n") {
		t.Errorf("files of D1:\n%s", md)
	}
}
