package reports

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestScanSpecs(t *testing.T) {
	bs, problems, err := ScanSpecs("testdata/specs-good")
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) != 0 {
		t.Errorf("problems in good specs: %v", problems)
	}
	want := []Behaviour{
		{ID: "D1", Title: "round trip keeps payload and properties", Area: "delivery", Labels: []string{"delivery"},
			Must: "MUST deliver payload bytes and properties intact, including an empty map and unicode."},
		{ID: "D2", Title: "ready on return", Area: "delivery", Labels: []string{"delivery", "seed-bug"},
			Must: "MUST deliver a message sent immediately after Consumer() returns, for every class, with initial position latest and no sleep anywhere."},
		{ID: "D7", Title: "bounded receive", Area: "delivery",
			Must: "MUST end Receive on an empty topic at its deadline with a timeout error."},
		{ID: "G1", Title: "competing consumers", Area: "groups", Labels: []string{"groups"},
			Must: "MUST give each message to exactly one of N consumers on one shared subscription."},
		{ID: "G10", Title: "fan-out ordering check", Area: "groups", Labels: []string{"groups", "slow"},
			Must: "MUST, with K unique subscribers, give every message to each of them."},
	}
	if len(bs) != len(want) {
		t.Fatalf("got %d behaviours %+v, want %d", len(bs), bs, len(want))
	}
	for i, w := range want {
		b := bs[i]
		if b.ID != w.ID || b.Title != w.Title || b.Area != w.Area || b.Must != w.Must ||
			strings.Join(b.Labels, ",") != strings.Join(w.Labels, ",") {
			t.Errorf("behaviour %d:\n got %+v\nwant %+v", i, b, w)
		}
		if !strings.HasPrefix(b.File, "specs-good/") || b.Line == 0 {
			t.Errorf("location %s:%d", b.File, b.Line)
		}
	}
}

func TestScanSpecsProblems(t *testing.T) {
	_, problems, err := ScanSpecs("testdata/specs-bad")
	if err != nil {
		t.Fatal(err)
	}
	joined := strings.Join(problems, "\n")
	for _, want := range []string{
		"specs-bad/acks.go:7: spec [A2] has no \"// MUST \" comment",
		"specs-bad/acks.go:10: spec [A3] has no \"// MUST \" comment",
		"specs-bad/acks.go:14: spec [A4] has no \"// MUST \" comment", // blank line between comment and spec
		"spec ID [A1] is also used at specs-bad/",
	} {
		if !strings.Contains(joined, want) {
			t.Errorf("problems lack %q:\n%s", want, joined)
		}
	}
	if len(problems) != 4 {
		t.Errorf("%d problems, want 4:\n%s", len(problems), joined)
	}
	if _, _, err := ScanSpecs("testdata/no-such-dir"); err == nil {
		t.Error("missing spec dir must be an error")
	}
}

func TestCheckCatalogue(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "catalogue.md")
	bs, _, err := ScanSpecs("testdata/specs-good")
	if err != nil {
		t.Fatal(err)
	}
	md := CatalogueMarkdown(bs)
	for _, s := range []string{"## delivery", "## groups", "| D2 | ready on return | MUST deliver a message sent immediately after Consumer() returns",
		"| delivery, seed-bug | specs-good/delivery.go |"} {
		if !strings.Contains(string(md), s) {
			t.Errorf("catalogue lacks %q:\n%s", s, md)
		}
	}
	if err := CheckCatalogue("testdata/specs-good", path); !errors.Is(err, ErrStale) {
		t.Errorf("missing file: %v, want ErrStale", err)
	}
	writeFile(t, path, string(md))
	if err := CheckCatalogue("testdata/specs-good", path); err != nil {
		t.Errorf("current file: %v", err)
	}
	writeFile(t, path, strings.Replace(string(md), "ready on return", "ready", 1))
	if err := CheckCatalogue("testdata/specs-good", path); !errors.Is(err, ErrStale) {
		t.Errorf("edited file: %v, want ErrStale", err)
	}
	// Problems and staleness are reported together.
	badPath := filepath.Join(dir, "bad.md")
	if err := os.WriteFile(badPath, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	err = CheckCatalogue("testdata/specs-bad", badPath)
	if err == nil || !errors.Is(err, ErrStale) || !strings.Contains(err.Error(), "[A2] has no") {
		t.Errorf("bad specs: %v", err)
	}
}

func TestCatalogueTitlesRoundTrip(t *testing.T) {
	bs := []Behaviour{
		{ID: "D2", Title: "a message sent right after Consumer() returns is delivered", Area: "delivery", Must: "MUST x"},
		{ID: "L4", Title: "pipes | in titles survive", Area: "lifecycle", Must: "MUST y | z", Labels: []string{"a"}},
	}
	path := filepath.Join(t.TempDir(), "catalogue.md")
	writeFile(t, path, string(CatalogueMarkdown(bs)))
	titles, err := ReadCatalogueTitles(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(titles) != 2 || titles["D2"] != bs[0].Title || titles["L4"] != bs[1].Title {
		t.Errorf("titles %q", titles)
	}
	if got := strings.Join(CatalogueIDs(titles), ","); got != "D2,L4" {
		t.Errorf("ids %s", got)
	}
	// A table's row takes the catalogue title instead of the entries' common words.
	m := fixtureMatrix(t, CatalogueIDs(titles)...)
	m.ApplyTitles(map[string]string{"D7": "Receive is bounded"})
	for _, r := range m.Rows {
		if r.Key == "D7" && r.Title != "Receive is bounded" {
			t.Errorf("D7 title %q", r.Title)
		}
		if r.Key == "L4" && r.Cells[0].Status != NotRun {
			t.Errorf("catalogue-only row should be not run: %+v", r.Cells[0])
		}
	}
	if _, err := ReadCatalogueTitles(filepath.Join(t.TempDir(), "none.md")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}
