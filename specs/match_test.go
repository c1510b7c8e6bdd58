package specs

import (
	"strings"
	"testing"

	"github.com/onsi/gomega"
)

func TestEqualPropsShowsADiff(t *testing.T) {
	g := gomega.NewWithT(t)
	g.Expect(map[string]string(nil)).To(equalProps(map[string]string{}), "nil and empty are equal")
	g.Expect(map[string]string{"k": "v"}).To(equalProps(map[string]string{"k": "v"}))
	m := equalProps(map[string]string{"k": "v", "empty": ""})
	ok, err := m.Match(map[string]string{"k": "w"})
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(ok).To(gomega.BeFalse())
	msg := m.FailureMessage(map[string]string{"k": "w"})
	if !strings.HasPrefix(msg, "properties differ (-sent +received)") {
		t.Errorf("message %q", msg)
	}
	// go-cmp varies its whitespace on purpose: look for the marked lines, not exact text.
	has := func(mark, text string) bool {
		for _, l := range strings.Split(msg, "\n") {
			if l = strings.TrimSpace(l); strings.HasPrefix(l, mark) && strings.Contains(l, text) {
				return true
			}
		}
		return false
	}
	if !has("-", `"empty"`) || !has("-", `"v"`) || !has("+", `"w"`) {
		t.Errorf("diff lacks a marked line:\n%s", msg)
	}
	if _, err := m.Match("not a map"); err == nil {
		t.Error("a non-map must be an error, not a mismatch")
	}
}

func TestEqualSequenceShowsTheDifferingStretch(t *testing.T) {
	var want, got []string
	for i := range 200 {
		want = append(want, "d4-"+string(rune('a'+i%26))+string(rune('0'+i/26)))
	}
	got = append(got, want...)
	got[100], got[101] = got[101], got[100]
	m := equalSequence(want)
	if ok, _ := m.Match(want); !ok {
		t.Fatal("equal sequences must match")
	}
	if ok, _ := m.Match(got); ok {
		t.Fatal("a swapped pair must not match")
	}
	msg := m.FailureMessage(got)
	if !strings.Contains(msg, want[100]) || strings.Contains(msg, want[10]) {
		t.Errorf("the diff should show the swapped pair and not the whole list:\n%s", msg)
	}
}

func TestFirstDifference(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{{"abc", "abc", -1}, {"abc", "abd", 2}, {"ab", "abc", 2}, {"", "", -1}, {"x", "", 0}} {
		if got := firstDifference([]byte(c.a), []byte(c.b)); got != c.want {
			t.Errorf("firstDifference(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

func TestBriefCutsLongAndBinaryPayloads(t *testing.T) {
	if got := brief([]byte("d1-0")); got != `"d1-0"` {
		t.Errorf("short payload: %s", got)
	}
	big := []byte(strings.Repeat("x", 5<<20))
	got := brief(big)
	if len(got) > 120 || !strings.Contains(got, "(5242880 bytes, sha256 ") {
		t.Errorf("5 MiB payload: %d chars: %.200s", len(got), got)
	}
	bin := []byte{0xff, 0xfe, 0}
	if got := brief(bin); !strings.Contains(got, "3 bytes, sha256") {
		t.Errorf("binary payload: %s", got)
	}
	if brief(append([]byte{}, big...)) != got || brief(append(big[:len(big)-1:len(big)-1], 'y')) == got {
		t.Error("briefs must be equal exactly when the payloads are")
	}
	if s := show([]string{"a", string(big)}); len(s) > 150 {
		t.Errorf("show keeps a long payload: %.200s", s)
	}
}
