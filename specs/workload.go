package specs

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"

	"github.com/pubsub-conformance/harness/backends"
	"github.com/pubsub-conformance/harness/backends/memory"
	"github.com/pubsub-conformance/harness/internal/history"
	"github.com/pubsub-conformance/harness/internal/workload"
)

// The generative workload (W1, internal/workload): seeded programs of contract operations on
// the backend, each run again on the in-process reference, judged by the history checkers, the
// workload's nack check and the comparison of outcomes. A failure names the seed, the program
// and the program Shrink cut it down to on the same backend.
//
// Settings (environment; `make soak` sets the first):
//
//	PUBSUB_WORKLOAD_BUDGET  how long to keep starting programs (default 25s; at least one runs)
//	PUBSUB_WORKLOAD_SEED    the first program's seed (default Ginkgo's random seed); program i
//	                        has seed+i, the same on every backend of the run
//	PUBSUB_WORKLOAD_SHRINK  how long a failure may spend shrinking its program (default 2m)
const (
	workloadBudgetEnv = "PUBSUB_WORKLOAD_BUDGET"
	workloadSeedEnv   = "PUBSUB_WORKLOAD_SEED"
	workloadShrinkEnv = "PUBSUB_WORKLOAD_SHRINK"
	// A program has 20 to 40 steps: on Kafka each Consumer() is a group join of about a
	// second, so a program with its drain takes 5-20 s.
	workloadMinSteps, workloadMaxSteps = 20, 40
	// workloadProgramMax bounds one program's run (its steps and drain, each call bounded).
	workloadProgramMax = 3 * time.Minute
)

func workloadDuration(env string, def time.Duration) (time.Duration, error) {
	return parseWorkloadDuration(env, os.Getenv(env), def)
}

// parseWorkloadDuration reads v, the value of setting name: def when empty, else a positive Go
// duration.
func parseWorkloadDuration(name, v string, def time.Duration) (time.Duration, error) {
	if v == "" {
		return def, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return def, fmt.Errorf("%s=%q: want a positive Go duration such as 30s or 10m", name, v)
	}
	return d, nil
}

// parseWorkloadSeed reads PUBSUB_WORKLOAD_SEED's value v: ok is false when it is empty.
func parseWorkloadSeed(v string) (seed int, ok bool, err error) {
	if v == "" {
		return 0, false, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, false, fmt.Errorf("%s=%q: want an integer seed", workloadSeedEnv, v)
	}
	return n, true, nil
}

// CheckWorkloadDuration checks v as a workload duration setting called name would read it
// (make's DURATION, which becomes PUBSUB_WORKLOAD_BUDGET): empty, or a positive Go duration.
func CheckWorkloadDuration(name, v string) error {
	_, err := parseWorkloadDuration(name, v, 0)
	return err
}

// CheckWorkloadEnv checks the workload settings of getenv as W1 and W2 read them (the budget,
// the shrink budget, the seed): one error per bad value, for a run's preflight. The specs fail
// on the same values with the same words.
func CheckWorkloadEnv(getenv func(string) string) []error {
	var errs []error
	for _, env := range []string{workloadBudgetEnv, workloadShrinkEnv} {
		if err := CheckWorkloadDuration(env, getenv(env)); err != nil {
			errs = append(errs, err)
		}
	}
	if _, _, err := parseWorkloadSeed(getenv(workloadSeedEnv)); err != nil {
		errs = append(errs, err)
	}
	return errs
}

// workloadTimeout is W1's SpecTimeout: the budget, one more program, the shrink, the margin.
func workloadTimeout() time.Duration {
	budget, _ := workloadDuration(workloadBudgetEnv, 25*time.Second)
	shrink, _ := workloadDuration(workloadShrinkEnv, 2*time.Minute)
	return budget + 2*workloadProgramMax + shrink
}

func workloadArea(env *Env) {
	Describe("workload", Label("workload"), func() {
		Behaviour("W1", func(ctx SpecContext) { runWorkload(ctx, env) }, SpecTimeout(workloadTimeout()))
		nemesisArea(env) // W2: specs/workload_nemesis.go
	})
}

// programRun is one program run on the backend and on the reference.
type programRun struct {
	got, ref workload.Result
	findings []history.Finding
	err      error
	origin   time.Time
}

func runWorkload(ctx SpecContext, env *Env) {
	seed0, budget, shrinkBudget := workloadSettings()
	runPrograms(ctx, env, open(ctx, env), seed0, budget, shrinkBudget, nil)
}

// workloadSettings reads the first seed (the run's random seed unless PUBSUB_WORKLOAD_SEED
// says), the program budget and the shrink budget that W1 and W2 share; a bad value fails the
// spec.
func workloadSettings() (seed0 int, budget, shrinkBudget time.Duration) {
	budget = mustWorkloadDuration(workloadBudgetEnv, 25*time.Second)
	shrinkBudget = mustWorkloadDuration(workloadShrinkEnv, 2*time.Minute)
	seed0 = int(GinkgoRandomSeed())
	n, ok, err := parseWorkloadSeed(os.Getenv(workloadSeedEnv))
	if err != nil {
		Fail(err.Error())
	}
	if ok {
		seed0 = n
	}
	return seed0, budget, shrinkBudget
}

// mustWorkloadDuration is workloadDuration, failing the spec on a bad value.
func mustWorkloadDuration(name string, def time.Duration) time.Duration {
	d, err := workloadDuration(name, def)
	if err != nil {
		Fail(err.Error())
	}
	return d
}

// runPrograms runs programs of seeds seed0, seed0+1, ... on b until budget passed (at least
// one), each under its seed's nemesis schedule when nem is set (W2), and fails with the seed,
// the schedule, the program and its shrunk form on the first that shows an anomaly.
func runPrograms(ctx SpecContext, env *Env, b backends.Backend, seed0 int, budget, shrinkBudget time.Duration, nem *workload.Nemesis) {
	_, noMode := b.Unsupported()[backends.CapModeOverride]
	id, tag := "W1", "w1"
	var can []workload.Fault
	if nem != nil {
		id, tag, can = "W2", "w2", nem.Can()
	}

	runOnce := func(prog workload.Program, sched workload.Schedule) programRun {
		var pr programRun
		cfg := workload.BrokerConfig(unique(tag))
		cfg.SharedOnly = noMode
		cfg.Nemesis, cfg.Schedule = nem, sched
		rec := history.NewRecorder()
		pr.origin = rec.Started()
		pctx, cancel := context.WithTimeout(ctx, workloadProgramMax)
		defer cancel()
		pr.got, pr.err = workload.Run(pctx, history.Wrap(b, rec, "workload"), rec, prog, cfg)
		if pr.err != nil {
			return pr
		}
		refCfg := workload.ReferenceConfig(unique("w1ref"))
		refCfg.SharedOnly = noMode
		ref, err := memory.NewBroker().Open(ctx, backends.Config{Backend: memory.Name})
		if err != nil {
			pr.err = fmt.Errorf("open the reference: %w", err)
			return pr
		}
		defer ref.Close(ctx)
		refRec := history.NewRecorder()
		pr.ref, err = workload.Run(pctx, history.Wrap(ref, refRec, "reference"), refRec, prog, refCfg)
		switch {
		case err != nil:
			pr.err = fmt.Errorf("the same program on the reference backend: %w", err)
		case len(pr.ref.Findings) > 0:
			pr.err = fmt.Errorf("the same program on the reference backend shows anomalies (a defect of the workload or its checkers):\n%s",
				history.Report(refRec.Started(), pr.ref.Findings, 3))
		}
		pr.findings = append(pr.got.Findings, workload.CompareUnderFaults(pr.ref.Outcome, pr.got, refCfg.Prefix, cfg.Prefix)...)
		return pr
	}
	signature := func(pr programRun) string {
		if pr.err != nil {
			return "error"
		}
		if cs := workload.Classes(pr.findings); len(cs) > 0 {
			return string(cs[0])
		}
		return ""
	}

	start := time.Now()
	var lines []string
	calls, steps := 0, 0
	for i := 0; i == 0 || time.Since(start) < budget; i++ {
		seed := seed0 + i
		prog := workload.Generate(seed, workloadMinSteps, workloadMaxSteps)
		var sched workload.Schedule
		if nem != nil {
			sched = workload.GenerateSchedule(seed, len(prog), can)
		}
		pr := runOnce(prog, sched)
		calls += pr.got.Calls
		steps += len(prog)
		line := fmt.Sprintf("seed %d: %d steps, %d sent, %d calls, %s", seed, len(prog), pr.got.Sent, pr.got.Calls, pr.got.Took.Round(time.Millisecond))
		if nem != nil {
			line += fmt.Sprintf("; nemesis %s: %d calls failed and were tolerated, %d sends uncertain, %d subscriptions uncertain\n    %s",
				sched, len(pr.got.Tolerated), len(pr.got.Uncertain), len(pr.got.UncertainSubs), strings.Join(pr.got.Timeline, "\n    "))
		}
		lines = append(lines, line)
		sig := signature(pr)
		if sig == "" {
			continue
		}
		what := ""
		if pr.err != nil {
			what = pr.err.Error()
		} else {
			what = history.Report(pr.origin, pr.findings, 3)
		}
		// Shrink on the same backend: a candidate fails the same way (same first anomaly
		// class, or an error again).
		// Shrink on the same backend, under the same schedule (a fault whose step was cut
		// away starts before the drain): a candidate fails the same way (same first anomaly
		// class, or an error again).
		small, tries := workload.Shrink(prog, func(p workload.Program) bool {
			if ctx.Err() != nil {
				return false
			}
			return signature(runOnce(p, sched)) == sig
		}, shrinkBudget)
		under, reproduce := "", fmt.Sprintf("%s=%d %s=%s make conformance BACKENDS=%s SPECS=W1", workloadSeedEnv, seed, workloadBudgetEnv, "1s", env.Backend)
		if nem != nil {
			under = fmt.Sprintf("\n\nnemesis schedule: %s (short %s, long %s, latency %s each way)\nwhat it did:\n  %s\ncalls that failed and were tolerated (%d): %s",
				sched, nem.Short, nem.Long, nem.Delay, strings.Join(pr.got.Timeline, "\n  "), len(pr.got.Tolerated), briefList(pr.got.Tolerated, 5))
			reproduce = fmt.Sprintf("%s=%d %s=%s make soak NEMESIS=1 BACKENDS=%s", workloadSeedEnv, seed, workloadBudgetEnv, "1s", env.Backend)
		}
		Fail(fmt.Sprintf("%s: workload program of seed %d on %s (%d steps): %s%s\n\nprogram: %s\n\nshrunk (%d runs within %s) to %d steps that fail the same way (%s): %s\n\nreproduce: %s",
			id, seed, env.Backend, len(prog), what, under, prog, tries, shrinkBudget, len(small), sig, small, reproduce))
	}
	took := time.Since(start)
	programs := len(lines)
	if nem != nil {
		lines = append(lines, "faults drawn from: "+fmt.Sprint(can))
	}
	AddReportEntry("workload", ReportEntryVisibilityFailureOrVerbose, fmt.Sprintf(
		"%d programs (%d steps, %d calls) in %s, %s per program; no anomalies, outcomes equal to the reference's\n%s",
		programs, steps, calls, took.Round(time.Millisecond), (took/time.Duration(programs)).Round(time.Millisecond), strings.Join(lines, "\n")))
}

// briefList is at most n of xs, one a line, and how many more.
func briefList(xs []string, n int) string {
	if len(xs) == 0 {
		return "none"
	}
	if len(xs) <= n {
		return "\n  " + strings.Join(xs, "\n  ")
	}
	return "\n  " + strings.Join(xs[:n], "\n  ") + fmt.Sprintf("\n  and %d more", len(xs)-n)
}
