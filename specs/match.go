package specs

import (
	"bytes"
	"fmt"
	"maps"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/onsi/gomega/types"
)

// Matchers whose failure shows a diff of what was sent and what arrived, where a diff says more
// than "expected false to be true". Gomega prints the spec's own description above it.

// diffMatcher succeeds when equal(actual) holds and fails with cmp.Diff(want, actual).
type diffMatcher struct {
	what  string // "properties", "payloads in send order"
	want  any
	equal func(actual any) (bool, error)
	opts  []cmp.Option
}

func (m *diffMatcher) Match(actual any) (bool, error) { return m.equal(actual) }

func (m *diffMatcher) FailureMessage(actual any) string {
	return fmt.Sprintf("%s differ (-sent +received):\n%s", m.what, cmp.Diff(m.want, actual, m.opts...))
}

func (m *diffMatcher) NegatedFailureMessage(actual any) string {
	return fmt.Sprintf("%s must differ, but both are %v", m.what, actual)
}

// equalProps matches a property map equal to want, nil and empty being equal (maps.Equal).
func equalProps(want map[string]string) types.GomegaMatcher {
	return &diffMatcher{what: "properties", want: want, opts: []cmp.Option{cmpopts.EquateEmpty()},
		equal: func(actual any) (bool, error) {
			got, ok := actual.(map[string]string)
			if !ok {
				return false, fmt.Errorf("equalProps wants a map[string]string, got %T", actual)
			}
			return maps.Equal(got, want), nil
		}}
}

// equalSequence matches a []string equal to want, element by element (order matters); the
// failure shows only the differing stretch, not two lists of hundreds of payloads.
func equalSequence(want []string) types.GomegaMatcher {
	return &diffMatcher{what: "payloads in send order", want: want, opts: []cmp.Option{cmpopts.EquateEmpty()},
		equal: func(actual any) (bool, error) {
			got, ok := actual.([]string)
			if !ok {
				return false, fmt.Errorf("equalSequence wants a []string, got %T", actual)
			}
			return cmp.Equal(want, got, cmpopts.EquateEmpty()), nil
		}}
}

// firstDifference is the offset of the first differing byte of a and b (the shorter one's
// length when one is a prefix of the other), or -1 when they are equal.
func firstDifference(a, b []byte) int {
	if bytes.Equal(a, b) {
		return -1
	}
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}
