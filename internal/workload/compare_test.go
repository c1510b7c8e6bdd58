package workload

import (
	"strings"
	"testing"
	"time"

	"github.com/pubsub-conformance/harness/internal/history"
)

// Compare: a drained subscription that misses a message the reference's got, or has one the
// reference's did not, differs, whatever the counts (one missing and one extra is not "the
// same number"); the run prefixes are not part of a message; a subscription the backend's run
// did not drain is not judged. The finding names the first missing message, else the first
// extra one, and lists at most eight of each.
func TestCompare(t *testing.T) {
	ref := Outcome{"t0/s0": {"r-p0-m0", "r-p0-m1"}, "t0/s1": {"r-p0-m0"}, "t1/s2": {"r-p2-m2"}}
	for _, c := range []struct {
		name string
		got  Outcome
		want string // subscription: key: detail's tail, one per finding; "" for none
	}{
		{"the same, other prefix", Outcome{"t0/s0": {"g-p0-m1", "g-p0-m0"}, "t0/s1": {"g-p0-m0"}, "t1/s2": {"g-p2-m2"}}, ""},
		{"one missing", Outcome{"t0/s0": {"g-p0-m0"}, "t0/s1": {"g-p0-m0"}, "t1/s2": {"g-p2-m2"}},
			"t0/s0: g-p0-m1: the reference received 2 distinct messages here, this backend 1: missing [p0-m1]; not on the reference none"},
		{"one extra", Outcome{"t0/s0": {"g-p0-m0", "g-p0-m1"}, "t0/s1": {"g-p0-m0", "g-p0-m1"}, "t1/s2": {"g-p2-m2"}},
			"t0/s1: g-p0-m1: the reference received 1 distinct messages here, this backend 2: missing none; not on the reference [p0-m1]"},
		{"one missing, one extra", Outcome{"t0/s0": {"g-p0-m0", "g-p0-m1"}, "t0/s1": {"g-p0-m0"}, "t1/s2": {"g-p2-m3"}},
			"t1/s2: g-p2-m2: the reference received 1 distinct messages here, this backend 1: missing [p2-m2]; not on the reference [p2-m3]"},
		{"not drained", Outcome{"t0/s0": {"g-p0-m0", "g-p0-m1"}}, ""},
	} {
		var lines []string
		for _, f := range Compare(ref, c.got, "r-", "g-") {
			if f.Anomaly != Differs {
				t.Errorf("%s: anomaly %q", c.name, f.Anomaly)
			}
			lines = append(lines, f.Subscription+": "+f.Key+": "+f.Detail)
		}
		if got := strings.Join(lines, "\n"); got != c.want {
			t.Errorf("%s:\n%s\nwant\n%s", c.name, got, c.want)
		}
	}
	eight := []string{"r-a", "r-b", "r-c", "r-d", "r-e", "r-f", "r-g", "r-h"}
	for n, want := range map[int]string{
		8: "missing [a b c d e f g h];",
		9: "missing [a b c d e f g h] and 1 more;",
	} {
		r := Outcome{"t0/s0": append(append([]string(nil), eight...), "r-i")[:n]}
		fs := Compare(r, Outcome{"t0/s0": nil}, "r-", "g-")
		if len(fs) != 1 || !strings.Contains(fs[0].Detail, want) {
			t.Errorf("%d missing: %v, want %q", n, fs, want)
		}
	}
}

// CompareUnderFaults leaves out on both sides a message whose Send failed on the backend (it
// may or may not be there, C-SEND-3) and every subscriber of a subscription whose Consumer call
// failed (made at an unknown time or position); everything else must match as without faults.
func TestCompareUnderFaults(t *testing.T) {
	ref := Outcome{"t0/s0": {"r-p0-m0", "r-p0-m1"}, "t0/s2#1": {"r-p0-m0"}, "t0/s3": {"r-p0-m0"}}
	got := Result{
		Outcome:       Outcome{"t0/s0": {"g-p0-m0"}, "t0/s2#1": {}, "t0/s3": {"g-p0-m1"}},
		Uncertain:     map[string]bool{"g-p0-m1": true},
		UncertainSubs: map[string]bool{"t0/s2": true},
	}
	fs := CompareUnderFaults(ref, got, "r-", "g-")
	if len(fs) != 1 || fs[0].Subscription != "t0/s3" || fs[0].Key != "g-p0-m0" {
		t.Errorf("want t0/s3 missing p0-m0 alone (p0-m1 uncertain, t0/s2 uncertain):\n%s", history.Report(time.Time{}, fs, 5))
	}
}
