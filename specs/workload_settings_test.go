package specs

import (
	"strings"
	"testing"
)

// The workload settings a preflight checks are read as W1 and W2 read them.
func TestCheckWorkloadSettings(t *testing.T) {
	for _, v := range []string{"", "1s", "10m", "1h30m"} {
		if err := CheckWorkloadDuration("DURATION", v); err != nil {
			t.Errorf("%q: %v", v, err)
		}
	}
	for _, v := range []string{"10", "ten minutes", "0s", "-5m"} {
		err := CheckWorkloadDuration("DURATION", v)
		if want := `DURATION="` + v + `": want a positive Go duration such as 30s or 10m`; err == nil || err.Error() != want {
			t.Errorf("%q: %v, want %s", v, err, want)
		}
	}
	env := map[string]string{workloadBudgetEnv: "5x", workloadShrinkEnv: "2m", workloadSeedEnv: "0x10"}
	errs := CheckWorkloadEnv(func(k string) string { return env[k] })
	var got []string
	for _, err := range errs {
		got = append(got, err.Error())
	}
	want := []string{`PUBSUB_WORKLOAD_BUDGET="5x": want a positive Go duration such as 30s or 10m`, `PUBSUB_WORKLOAD_SEED="0x10": want an integer seed`}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("CheckWorkloadEnv:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	env = map[string]string{workloadBudgetEnv: "30m", workloadSeedEnv: "-17"}
	if errs := CheckWorkloadEnv(func(k string) string { return env[k] }); len(errs) != 0 {
		t.Errorf("good settings: %v", errs)
	}
}
