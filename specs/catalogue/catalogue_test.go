package catalogue

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestTableIsWellFormed(t *testing.T) {
	for _, p := range Check(Behaviours) {
		t.Error(p)
	}
	if len(Behaviours) == 0 {
		t.Fatal("empty catalogue")
	}
}

func TestCheckFindsProblems(t *testing.T) {
	bs := []Behaviour{
		{ID: "D1", Area: "delivery", Title: "t", Level: MUST, Source: "s", Requirement: "MUST x"},
		{ID: "G1", Area: "groups", Title: "t", Level: SHOULD, Source: "s", Requirement: "SHOULD x"},
		{ID: "D1", Area: "delivery", Title: "", Level: MUST, Source: "s", Requirement: "should x"},
		{ID: "X1", Area: "nowhere", Title: "t", Level: MUST, Source: "s", Requirement: "MUST x"},
		{ID: "Gx", Area: "groups", Title: "t", Level: MUST, Source: "s", Requirement: "MUST x"},
		{ID: "G2", Area: "groups", Title: "t", Level: SHOULD, Source: "s", Requirement: "MUST x"},
		{ID: "G3", Area: "groups", Title: "t", Level: "MAY", Requirement: "MAY x"},
		// The level is a word of its own: "SHOULDER" does not start with SHOULD.
		{ID: "G4", Area: "groups", Title: "t", Level: SHOULD, Source: "s", Requirement: "SHOULDER x"},
		{ID: "G5", Area: "groups", Title: "t", Level: MUST, Source: "s", Requirement: "MUST, when x", Priority: PriorityWorkload + 1},
		{ID: "G6", Area: "groups", Title: "t", Level: MUST, Source: "s", Requirement: "MUST x", Priority: -1},
		{ID: "G10", Area: "groups", Title: "t", Level: MUST, Source: "s", Requirement: "MUST x", Priority: PriorityWorkload},
	}
	got := Check(bs)
	want := []string{
		`catalogue entry 3 ("D1"): ID used twice`,
		`catalogue entry 3 ("D1"): area delivery is split; keep its entries together`,
		`catalogue entry 3 ("D1"): empty title`,
		`catalogue entry 3 ("D1"): the requirement must start with its level, MUST`,
		`catalogue entry 4 ("X1"): unknown area "nowhere"`,
		`catalogue entry 5 ("Gx"): an ID of area groups is G followed by a number`,
		`catalogue entry 5 ("Gx"): area groups is split; keep its entries together`,
		`catalogue entry 6 ("G2"): the requirement must start with its level, SHOULD`,
		`catalogue entry 7 ("G3"): level "MAY": want MUST or SHOULD`,
		`catalogue entry 7 ("G3"): no source: a MUST quotes TrustGraph's sentence, a SHOULD says which stronger guarantee and why`,
		`catalogue entry 8 ("G4"): the requirement must start with its level, SHOULD`,
		`catalogue entry 9 ("G5"): priority 6: want 0 (none) to 5 (PriorityWorkload)`,
		`catalogue entry 10 ("G6"): priority -1: want 0 (none) to 5 (PriorityWorkload)`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("Check:\n got %q\nwant %q", got, want)
	}
}

func TestLessIsCatalogueOrder(t *testing.T) {
	ids := []string{"setup", "S1", "Z9", "T1", "A10", "D2", "G3", "D99", "A1", "R5", "L1", "D1", "?", "T9", "Dx", "D100", "L10", "12"}
	slices.SortStableFunc(ids, func(a, b string) int {
		switch {
		case Less(a, b):
			return -1
		case Less(b, a):
			return 1
		}
		return 0
	})
	// Known IDs in table order; unknown ones after, by area then number; non-IDs last.
	// Numbers compare as numbers, whatever their length: D99 before D100, L1 before L10.
	want := []string{"D1", "D2", "G3", "A1", "R5", "T1", "L1", "L10", "S1", "D99", "D100", "A10", "T9", "Z9", "12", "?", "Dx", "setup"}
	if !slices.Equal(ids, want) {
		t.Errorf("order %v, want %v", ids, want)
	}
	// A strict order: nothing comes before itself (sort.Slice and slices.SortFunc rely on it).
	for _, id := range []string{"D1", "D99", "setup", ""} {
		if Less(id, id) {
			t.Errorf("Less(%q, %q)", id, id)
		}
	}
	if !slices.Equal(IDs()[:3], []string{"D1", "D2", "D3"}) {
		t.Errorf("IDs() starts %v", IDs()[:3])
	}
}

func TestLabels(t *testing.T) {
	b, ok := Lookup("R4")
	if !ok {
		t.Fatal("R4 not in the catalogue")
	}
	if got := b.SpecLabels(); !slices.Equal(got, []string{"id:R4", "restart", "level:must", "fault", "slow"}) {
		t.Errorf("R4 labels %v", got)
	}
	if got := IDFromLabels([]string{"restart", "id:R4", "slow"}); got != "R4" {
		t.Errorf("IDFromLabels = %q", got)
	}
	if got := IDFromLabels([]string{"restart"}); got != "" {
		t.Errorf("IDFromLabels without id label = %q", got)
	}
	for _, id := range []string{"Q7", "R", ""} {
		if b, ok := Lookup(id); ok {
			t.Errorf("Lookup(%q) found %s", id, b.ID)
		}
	}
	if b, ok := Lookup("L1"); !ok || b.ID != "L1" {
		t.Errorf("Lookup(L1) = %s", b.ID)
	}
	if b.SpecText() != "[R4] flow messages sent before a broker restart are delivered after it" {
		t.Errorf("SpecText %q", b.SpecText())
	}
}

// SPECS=... of make: catalogue IDs, unknown ones named with what the catalogue has.
func TestParseIDs(t *testing.T) {
	got, err := ParseIDs(" D2,A1 D2,,W1 ")
	if err != nil || strings.Join(got, " ") != "D2 A1 W1" {
		t.Errorf("ParseIDs = %v, %v; want [D2 A1 W1]", got, err)
	}
	if got, err := ParseIDs(""); err != nil || len(got) != 0 {
		t.Errorf("empty: %v, %v", got, err)
	}
	ranges := IDRanges()
	if !strings.HasPrefix(ranges, "D1-D10, G1-G6, A1-A8, R1-R8, T1-T3, L1-L10, S1-S2, F1-F6, W1-W") {
		t.Errorf("IDRanges = %q", ranges)
	}
	for list, want := range map[string]string{
		"Z9":       `unknown catalogue ID "Z9"; the catalogue has ` + ranges,
		"D2,Z9,Q1": `unknown catalogue IDs "Z9", "Q1"; the catalogue has ` + ranges,
		"d2":       `unknown catalogue ID "d2" (IDs are upper case: D2); the catalogue has ` + ranges,
		// An ID is the whole ID: D is not D1, nor L1 a prefix of L10's.
		"D": `unknown catalogue ID "D"; the catalogue has ` + ranges,
	} {
		if _, err := ParseIDs(list); err == nil || err.Error() != want {
			t.Errorf("%q: %v\nwant %s", list, err, want)
		}
	}
}

// An ID is its area's letter followed by a number of any length, and nothing else: a bare
// letter, a number with a tail, or a second letter is refused; D10 and G100 are IDs.
func TestCheckIDsOfAnyLengthOnly(t *testing.T) {
	entry := func(id string) Behaviour {
		return Behaviour{ID: id, Area: "delivery", Title: "t", Level: MUST, Source: "s", Requirement: "MUST x"}
	}
	for id, bad := range map[string]bool{
		"D": true, "D1x": true, "DD1": true, "D-1": true, "D1 ": true, "d1": true,
		"D1": false, "D10": false, "D100": false, "D1234": false,
	} {
		got := Check([]Behaviour{entry(id)})
		if want := fmt.Sprintf(`catalogue entry 1 (%q): an ID of area delivery is D followed by a number`, id); bad != (len(got) == 1 && got[0] == want) || !bad && len(got) != 0 {
			t.Errorf("Check(%q) = %q; refused: want %v", id, got, bad)
		}
	}
}

// The ID label is a label that starts with "id:", whatever the ID's length; a label that only
// contains "id:" elsewhere is not one.
func TestIDFromLabelsTakesOnlyTheIDLabel(t *testing.T) {
	for _, tt := range []struct {
		labels []string
		want   string
	}{
		{[]string{"grid:D1", "id:D10"}, "D10"},
		{[]string{"backend:kafka~id:x", "id:C12"}, "C12"},
		{[]string{"xid:D1"}, ""},
		{[]string{"id:W2", "id:D1"}, "W2"},
	} {
		if got := IDFromLabels(tt.labels); got != tt.want {
			t.Errorf("IDFromLabels(%q) = %q, want %q", tt.labels, got, tt.want)
		}
	}
}
