package specs

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"

	"github.com/pubsub-conformance/harness/backends"
	"github.com/pubsub-conformance/harness/internal/history"
	"github.com/pubsub-conformance/harness/internal/workload"
)

// The generative workload (W1, internal/workload): first the corpus, every program W1 failed
// on before (internal/workload/testdata/corpus), then fresh seeded programs; each run on the
// backend and again on the in-process reference, judged by the history checkers, the
// workload's nack check and the comparison of outcomes. A corpus entry's failure names the
// entry; a fresh seed's failure names the seed, the program, the program Shrink cut it down to
// on the same backend (failing the same way: workload.Failure) and the command that adds it to
// the corpus.
//
// Settings (environment; `make soak` sets the first):
//
//	PUBSUB_WORKLOAD_BUDGET  how long to keep starting programs, the corpus's included (default
//	                        25s); the whole corpus and at least one fresh program always run
//	PUBSUB_WORKLOAD_SEED    the first fresh program's seed (default Ginkgo's random seed);
//	                        program i has seed+i, the same on every backend of the run
//	PUBSUB_WORKLOAD_SHRINK  how long a failure may spend shrinking its program (default 2m)
//	PUBSUB_WORKLOAD_CORPUS  the corpus entries to replay: all (the default), none, or entry
//	                        names or seeds, comma-separated (to replay one alone)
const (
	workloadBudgetEnv = "PUBSUB_WORKLOAD_BUDGET"
	workloadSeedEnv   = "PUBSUB_WORKLOAD_SEED"
	workloadShrinkEnv = "PUBSUB_WORKLOAD_SHRINK"
	workloadCorpusEnv = "PUBSUB_WORKLOAD_CORPUS"
	// workloadProgramMax bounds one program's run (its steps and drain, each call bounded).
	workloadProgramMax = 3 * time.Minute
	// corpusParallel is how many W1 corpus entries replay at once.
	corpusParallel = 4
	// workloadEntryAllowance is what the spec's timeout allows per corpus entry on average
	// (a program takes 5-20 s on a broker, one that waits out the 30 s nack bound about 40 s;
	// each is bounded by workloadProgramMax on its own).
	workloadEntryAllowance = time.Minute
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

// workloadTimeout is W1's SpecTimeout: the budget, the corpus of id, one more program, the
// shrink, the margin.
func workloadTimeout(id string, perEntry time.Duration) time.Duration {
	budget, _ := workloadDuration(workloadBudgetEnv, 25*time.Second)
	shrink, _ := workloadDuration(workloadShrinkEnv, 2*time.Minute)
	entries, err := workloadCorpus(id)
	n := len(entries)
	if err != nil { // the spec fails on it at once; bound it as if all entries ran
		all, _ := workload.Corpus()
		n = len(all)
	}
	return budget + time.Duration(n)*perEntry + 2*workloadProgramMax + shrink
}

// workloadCorpus is the corpus of workload id ("W1", "W2") that PUBSUB_WORKLOAD_CORPUS selects.
func workloadCorpus(id string) ([]workload.Entry, error) {
	all, err := workload.Corpus()
	if err != nil {
		return nil, fmt.Errorf("the workload corpus (%s): %w", workload.CorpusDir, err)
	}
	sel, err := workload.SelectEntries(all, id, os.Getenv(workloadCorpusEnv))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", workloadCorpusEnv, err)
	}
	return sel, nil
}

func workloadArea(env *Env) {
	Describe("workload", Label("workload"), func() {
		Behaviour("W1", func(ctx SpecContext) { runWorkload(ctx, env) }, SpecTimeout(workloadTimeout("W1", workloadEntryAllowance)))
		nemesisArea(env) // W2: specs/workload_nemesis.go
	})
}

// programRun is one program run on the backend and on the reference.
type programRun struct {
	got, ref workload.Result
	findings []history.Finding
	err      error // the backend's run failed
	refErr   error // the reference's run failed or showed anomalies (a defect of the workload)
	origin   time.Time
	rec      *history.Recorder // the program's calls on the backend
}

// failure is the run's kind of failure, what shrinking keeps (the zero Failure: it passed).
func (pr programRun) failure() workload.Failure {
	if pr.err == nil && pr.refErr != nil {
		return workload.Failure{Step: "reference", Class: workload.ErrorClass(pr.refErr)}
	}
	return workload.FailureOf(pr.err, pr.findings)
}

// what is the run's failure in words: the error, or the anomalies with their calls.
func (pr programRun) what() string {
	switch {
	case pr.err != nil:
		return pr.err.Error()
	case pr.refErr != nil:
		return pr.refErr.Error()
	}
	return history.Report(pr.origin, pr.findings, 3)
}

func runWorkload(ctx SpecContext, env *Env) {
	ws := workloadSettings("W1")
	runPrograms(ctx, env, open(ctx, env), ws, nil)
}

// workloadSettings are what W1 and W2 share: the first fresh seed (the run's random seed
// unless PUBSUB_WORKLOAD_SEED says), the program budget, the shrink budget and the corpus
// entries of id to replay; a bad value fails the spec.
type workloadSettingsOf struct {
	id                   string
	seed0                int
	budget, shrinkBudget time.Duration
	corpus               []workload.Entry
}

func workloadSettings(id string) workloadSettingsOf {
	ws := workloadSettingsOf{id: id}
	ws.budget = mustWorkloadDuration(workloadBudgetEnv, 25*time.Second)
	ws.shrinkBudget = mustWorkloadDuration(workloadShrinkEnv, 2*time.Minute)
	ws.seed0 = int(GinkgoRandomSeed())
	n, ok, err := parseWorkloadSeed(os.Getenv(workloadSeedEnv))
	if err != nil {
		Fail(err.Error())
	}
	if ok {
		ws.seed0 = n
	}
	if ws.corpus, err = workloadCorpus(id); err != nil {
		Fail(err.Error())
	}
	return ws
}

// mustWorkloadDuration is workloadDuration, failing the spec on a bad value.
func mustWorkloadDuration(name string, def time.Duration) time.Duration {
	d, err := workloadDuration(name, def)
	if err != nil {
		Fail(err.Error())
	}
	return d
}

// shellQuote is s as one shell word.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// runPrograms replays the corpus entries of ws, then runs fresh programs of seeds seed0,
// seed0+1, ... on b until the budget (counted from the corpus's start) passed, at least one;
// each under its nemesis schedule when nem is set (W2). Every corpus entry runs whatever the
// others did; the first fresh program that fails is shrunk and ends the fresh seeds. The spec
// then fails with every failure: a corpus entry's names the entry, a fresh seed's the seed,
// the schedule, the program, its shrunk form and the command that adds it to the corpus.
func runPrograms(ctx SpecContext, env *Env, b backends.Backend, ws workloadSettingsOf, nem *workload.Nemesis) {
	_, noMode := b.Unsupported()[backends.CapModeOverride]
	id, tag := ws.id, strings.ToLower(ws.id)
	var can []workload.Fault
	if nem != nil {
		can = nem.Can()
	}

	runOnce := func(prog workload.Program, sched workload.Schedule) programRun {
		var pr programRun
		cfg := workload.BrokerConfig(unique(tag))
		cfg.SharedOnly = noMode
		cfg.Nemesis, cfg.Schedule = nem, sched
		rec := history.NewRecorder()
		pr.origin, pr.rec = rec.Started(), rec
		pctx, cancel := context.WithTimeout(ctx, workloadProgramMax)
		defer cancel()
		pr.got, pr.err = workload.Run(pctx, history.Wrap(b, rec, "workload"), rec, prog, cfg)
		if pr.err != nil {
			return pr
		}
		refCfg := workload.ReferenceConfig(unique(tag + "ref"))
		refCfg.SharedOnly = noMode
		ref, err := env.Reference(ctx)
		if err != nil {
			pr.refErr = fmt.Errorf("open the reference: %w", err)
			return pr
		}
		defer ref.Close(ctx)
		refRec := history.NewRecorder()
		pr.ref, err = workload.Run(pctx, history.Wrap(ref, refRec, "reference"), refRec, prog, refCfg)
		switch {
		case err != nil:
			pr.refErr = fmt.Errorf("the same program on the reference backend: %w", err)
		case len(pr.ref.Findings) > 0:
			pr.refErr = fmt.Errorf("the same program on the reference backend shows anomalies (a defect of the workload or its checkers):\n%s",
				history.Report(refRec.Started(), pr.ref.Findings, 3))
		}
		pr.findings = append(pr.got.Findings, workload.CompareUnderFaults(pr.ref.Outcome, pr.got, refCfg.Prefix, cfg.Prefix)...)
		return pr
	}
	line := func(what string, prog workload.Program, sched workload.Schedule, pr programRun) string {
		l := fmt.Sprintf("%s: %d steps, %d sent, %d calls, %s", what, len(prog), pr.got.Sent, pr.got.Calls, pr.got.Took.Round(time.Millisecond))
		if f := pr.failure(); f.Failed() {
			l += "; FAILED: " + f.String()
		}
		if nem != nil {
			l += fmt.Sprintf("; nemesis %s: %d calls failed and were tolerated, %d sends uncertain, %d subscriptions uncertain\n    %s",
				sched, len(pr.got.Tolerated), len(pr.got.Uncertain), len(pr.got.UncertainSubs), strings.Join(pr.got.Timeline, "\n    "))
		}
		return l
	}
	under := func(sched workload.Schedule, pr programRun) string {
		if nem == nil {
			return ""
		}
		return fmt.Sprintf("\n\nnemesis schedule: %s (short %s, long %s, latency %s each way)\nwhat it did:\n  %s\ncalls that failed and were tolerated (%d): %s",
			sched, nem.Short, nem.Long, nem.Delay, strings.Join(pr.got.Timeline, "\n  "), len(pr.got.Tolerated), briefList(pr.got.Tolerated, 5))
	}
	// attach puts a failed program's own calls in the report (the spec's history holds every
	// program's, and its last calls are the later programs').
	attach := func(what string, pr programRun) {
		if pr.rec != nil && pr.rec.Len() > 0 {
			AddReportEntry("history of "+what, ReportEntryVisibilityFailureOrVerbose, pr.rec.Evidence(historyAttached))
		}
	}
	// run is the command that runs this workload on this backend with the given settings.
	run := func(settings string) string {
		if nem != nil {
			return fmt.Sprintf("%s make soak NEMESIS=1 DURATION=1s BACKENDS=%s", settings, env.Backend)
		}
		return fmt.Sprintf("%s %s=1s make conformance BACKENDS=%s SPECS=%s", settings, workloadBudgetEnv, env.Backend, id)
	}
	// add is the command that keeps a failure in the corpus (or adds this backend's failure to
	// an entry).
	add := func(seed int, prog workload.Program, sched workload.Schedule, f workload.Failure, small workload.Program) string {
		cmd := fmt.Sprintf("go run ./internal/workload/cmd/corpus add -workload %s -seed %d -backend %s -failure %s -program %s",
			id, seed, env.Backend, shellQuote(f.String()), shellQuote(prog.String()))
		if len(sched) > 0 {
			cmd += " -schedule " + shellQuote(sched.String())
		}
		if len(small) > 0 && len(small) < len(prog) {
			cmd += " -shrunk " + shellQuote(small.String())
		}
		return cmd
	}

	start := time.Now()
	var lines, failures, failedEntries []string
	calls, steps := 0, 0
	// W1's entries replay side by side, corpusParallel at a time: each program has topics and
	// subscriptions of its own and mostly waits on receive windows, so the corpus costs about
	// its longest entries rather than their sum (11 entries: 128 s one after the other on
	// kafka). W2's run one at a time: a nemesis fault hits the whole broker.
	parallel := corpusParallel
	if nem != nil {
		parallel = 1
	}
	replayed := make([]programRun, len(ws.corpus))
	scheds, lefts := make([]workload.Schedule, len(ws.corpus)), make([]workload.Schedule, len(ws.corpus))
	// replayedFailure: each kind of failure a corpus entry showed in this run, and the first
	// entry that did.
	replayedFailure := map[workload.Failure]string{}
	var wg sync.WaitGroup
	slots := make(chan struct{}, parallel)
	for i, e := range ws.corpus {
		scheds[i], lefts[i] = e.Schedule.Within(can)
		wg.Go(func() {
			defer GinkgoRecover()
			slots <- struct{}{}
			defer func() { <-slots }()
			replayed[i] = runOnce(e.Program, scheds[i])
		})
	}
	wg.Wait()
	for i, e := range ws.corpus {
		sched, left, pr := scheds[i], lefts[i], replayed[i]
		calls += pr.got.Calls
		steps += len(e.Program)
		l := line(fmt.Sprintf("corpus %s (seed %d, %s)", e.File(), e.Seed, e.Status), e.Program, sched, pr)
		if len(left) > 0 {
			l += fmt.Sprintf("\n    left out of its schedule %s: %s (this broker cannot)", e.Schedule, left)
		}
		lines = append(lines, l)
		f := pr.failure()
		if !f.Failed() {
			continue
		}
		failedEntries = append(failedEntries, e.Name)
		if _, seen := replayedFailure[f]; !seen {
			replayedFailure[f] = e.Name
		}
		attach("corpus entry "+e.File(), pr)
		known := slices.ContainsFunc(e.Failed, func(r workload.Failed) bool { return r.Backend == env.Backend && r.Failure == f.String() })
		record := "this backend's failure is in the entry already"
		if !known {
			record = "a failure the entry does not record yet; record it: " + add(e.Seed, e.Program, e.Schedule, f, nil)
		}
		stored := make([]string, len(e.Failed))
		for i, r := range e.Failed {
			stored[i] = r.String()
		}
		shrunk := "not recorded"
		if len(e.Shrunk) > 0 {
			shrunk = e.Shrunk.String()
		}
		failures = append(failures, fmt.Sprintf("%s: corpus entry %s/%s (seed %d, status %s) failed on %s (%d steps, %s): %s%s\n\nprogram: %s\n\nthe entry: failed before %s; shrunk when added: %s\nnote: %s\n%s\n\nreplay it alone: %s",
			id, workload.CorpusDir, e.File(), e.Seed, e.Status, env.Backend, len(e.Program), f, pr.what(), under(sched, pr),
			e.Program, strings.Join(stored, "; "), shrunk, e.Note, record,
			run(fmt.Sprintf("%s=%s", workloadCorpusEnv, e.Name))))
	}
	corpusTook := time.Since(start)
	fresh := 0
	for i := 0; i == 0 || time.Since(start) < ws.budget; i++ {
		seed := ws.seed0 + i
		prog := workload.Generate(seed, workload.MinSteps, workload.MaxSteps)
		var sched workload.Schedule
		if nem != nil {
			sched = workload.GenerateSchedule(seed, len(prog), can)
		}
		pr := runOnce(prog, sched)
		fresh++
		calls += pr.got.Calls
		steps += len(prog)
		lines = append(lines, line(fmt.Sprintf("seed %d", seed), prog, sched, pr))
		want := pr.failure()
		if !want.Failed() {
			continue
		}
		attach(fmt.Sprintf("seed %d", seed), pr)
		reproduce := run(fmt.Sprintf("%s=none %s=%d", workloadCorpusEnv, workloadSeedEnv, seed))
		if entry, seen := replayedFailure[want]; seen {
			// A corpus entry failed the same way in this run: the entry is the reproduction at
			// hand (its file has its shrunk form), and shrinking this program (up to the shrink
			// budget, two minutes of a failing backend's receive windows) would add nothing to
			// the verdict. Replayed alone, without the corpus, the seed is shrunk.
			failures = append(failures, fmt.Sprintf("%s: workload program of seed %d on %s (%d steps): %s%s\n\nprogram: %s\n\nnot shrunk: corpus entry %s failed the same way (%s) in this run; to shrink this program, reproduce it alone (the corpus is not replayed then, and the failure is shrunk)\n\nkeep it in the corpus (every run replays it then): %s\n\nreproduce: %s",
				id, seed, env.Backend, len(prog), pr.what(), under(sched, pr), prog, entry, want,
				add(seed, prog, sched, want, nil), reproduce))
			break
		}
		// Shrink on the same backend, under the same schedule (a fault whose step was cut
		// away starts before the drain): a candidate is kept only when it fails the same
		// way (workload.Failure: the same first anomaly class; or the same step kind, call
		// and error class).
		small, tries := workload.ShrinkFailure(prog, want, func(p workload.Program) workload.Failure {
			if ctx.Err() != nil {
				return workload.Failure{}
			}
			return runOnce(p, sched).failure()
		}, ws.shrinkBudget)
		failures = append(failures, fmt.Sprintf("%s: workload program of seed %d on %s (%d steps): %s%s\n\nprogram: %s\n\nshrunk (%d runs within %s) to %d steps that fail the same way (%s): %s\n\nkeep it in the corpus (every run replays it then): %s\n\nreproduce: %s",
			id, seed, env.Backend, len(prog), pr.what(), under(sched, pr), prog, tries, ws.shrinkBudget, len(small), want, small,
			add(seed, prog, sched, want, small), reproduce))
		break
	}
	took := time.Since(start)
	if nem != nil {
		lines = append(lines, "faults drawn from: "+fmt.Sprint(can))
	}
	verdict := "no anomalies, outcomes equal to the reference's"
	if len(failures) > 0 {
		verdict = fmt.Sprintf("%d failed", len(failures))
	}
	AddReportEntry("workload", ReportEntryVisibilityFailureOrVerbose, fmt.Sprintf(
		"corpus: %d entries in %s; fresh: %d programs in %s; %d steps, %d calls in all, %s; %s\n%s",
		len(ws.corpus), corpusTook.Round(time.Millisecond), fresh, (took-corpusTook).Round(time.Millisecond), steps, calls, took.Round(time.Millisecond),
		verdict, strings.Join(lines, "\n")))
	if len(failures) > 0 {
		head := fmt.Sprintf("%s on %s: %d of %d corpus entries failed %v; %d fresh programs ran", id, env.Backend, len(failedEntries), len(ws.corpus), failedEntries, fresh)
		Fail(head + "\n\n" + strings.Join(failures, "\n\n----\n\n"))
	}
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
