package history

import "testing"

// The history limit is read in one place for the specs and the preflight: unset is the
// default, a positive whole number is taken, anything else is one error naming the setting.
func TestLimitFromEnv(t *testing.T) {
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == LimitEnv {
				return v
			}
			return ""
		}
	}
	for v, want := range map[string]int{"": DefaultLimit, "1": 1, "50": 50} {
		if n, err := LimitFromEnv(env(v)); n != want || err != nil {
			t.Errorf("%s=%q: %d, %v; want %d", LimitEnv, v, n, err, want)
		}
	}
	for _, v := range []string{"0", "-3", "ten", "1e3", " 5", "5 calls"} {
		n, err := LimitFromEnv(env(v))
		if want := `PUBSUB_HISTORY_LIMIT="` + v + `": want a number of calls, at least 1`; err == nil || err.Error() != want || n != 0 {
			t.Errorf("%s=%q: %d, %v; want the error %q", LimitEnv, v, n, err, want)
		}
	}
}
