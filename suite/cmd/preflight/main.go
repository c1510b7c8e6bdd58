// Command preflight checks a run's settings before anything starts. make's conformance, soak,
// failover and flakes targets call it first with the user's values, so that a bad value is one
// line naming it and what is allowed, and exit 2, before the suite is built, a broker starts or
// Ginkgo runs. It checks with the suite's own functions what the suite reads - backend names
// resolved in the registry (suite/run.ParseTargets), PUBSUB_BROKERS against the providers
// (providers.Check), PUBSUB_ISOLATE, PUBSUB_RETENTION_<CLASS>, PUBSUB_HISTORY_LIMIT
// (history.LimitFromEnv), the workload's settings, the
// adapter declarations PUBSUB_ADAPTER_<NAME> - and make's own settings: SPECS against the
// catalogue, CONFORMANCE_PROCS, GATE_LEVEL, DURATION, CONFORMANCE_STRICT.
//
//	preflight [-report-dir DIR] NAME=VALUE...
//
// Only the NAMEs given are checked (a target passes those it uses), the environment's settings
// always. With -report-dir it prints the run's Ginkgo JSON report file of each backend of
// BACKENDS in DIR, space-separated, named as the suite names them (its target's column,
// suite.InRun: a broker release other than the pinned one, isolation mode), for make to clear before the run and to
// judge after it.
//
// Exit status: 0 all good, 2 a bad value (one line each on stderr) or bad usage.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/pubsub-conformance/harness/backends"
	"github.com/pubsub-conformance/harness/backends/all" // the registered backends; AdapterError
	"github.com/pubsub-conformance/harness/backends/mutants"
	"github.com/pubsub-conformance/harness/fixtures/providers"
	"github.com/pubsub-conformance/harness/internal/history"
	"github.com/pubsub-conformance/harness/reports"
	"github.com/pubsub-conformance/harness/specs"
	"github.com/pubsub-conformance/harness/specs/catalogue"
	"github.com/pubsub-conformance/harness/suite"
	suiterun "github.com/pubsub-conformance/harness/suite/run"
)

func main() {
	os.Exit(run(os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}

// checks are make's settings preflight knows, each checking its value; an error is the one
// line to print, naming the setting.
var checks = map[string]func(name, v string) error{
	"BACKENDS": func(name, v string) error {
		bs, err := suiterun.ParseTargets(v)
		if err == nil && len(bs) == 0 {
			return fmt.Errorf("%s is empty: name one or more backends (known: %s)", name, backends.Known())
		}
		return prefixed(name+": ", err)
	},
	"SPECS": func(name, v string) error {
		_, err := catalogue.ParseIDs(v)
		return prefixed(name+": ", err)
	},
	"CONFORMANCE_PROCS": func(name, v string) error {
		if n, err := strconv.Atoi(strings.TrimSpace(v)); err != nil || n < 1 {
			return fmt.Errorf("%s=%q: want a whole number of parallel Ginkgo processes, 1 or more", name, v)
		}
		return nil
	},
	"GATE_LEVEL": func(name, v string) error {
		_, err := reports.ParseGateLevel(v)
		return prefixed(name+"=", err)
	},
	"DURATION": specs.CheckWorkloadDuration, // make soak's budget, PUBSUB_WORKLOAD_BUDGET
	"CONFORMANCE_STRICT": func(name, v string) error {
		switch v {
		case "", "0", "1":
			return nil
		}
		return fmt.Errorf("%s=%q: want 1 (any failure exits 1, accepted or not) or empty", name, v)
	},
}

// prefixed is err with p before its text, nil for nil.
func prefixed(p string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s%w", p, err)
}

// run is the command: args without the program name, getenv the environment.
func run(args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("preflight", flag.ContinueOnError)
	fs.SetOutput(stderr)
	reportDir := fs.String("report-dir", "", "print the Ginkgo JSON report file of each backend of BACKENDS in this directory")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	settings := map[string]string{}
	var order []string
	for _, a := range fs.Args() {
		k, v, ok := strings.Cut(a, "=")
		if !ok || checks[k] == nil {
			fmt.Fprintf(stderr, "preflight: argument %q: want NAME=VALUE, NAME one of %s\n", a, strings.Join(names(), ", "))
			return 2
		}
		if _, dup := settings[k]; !dup {
			order = append(order, k)
		}
		settings[k] = v
	}
	if _, ok := settings["BACKENDS"]; *reportDir != "" && !ok {
		fmt.Fprintln(stderr, "preflight: -report-dir needs BACKENDS=...: the backends whose reports it names")
		return 2
	}
	errs := check(order, settings, getenv)
	for _, err := range errs {
		fmt.Fprintln(stderr, oneLine(err.Error()))
	}
	if len(errs) > 0 {
		return 2
	}
	if *reportDir != "" {
		ts, err := suiterun.ParseTargets(settings["BACKENDS"])
		if err == nil {
			ts, err = suite.InRun(ts)
		}
		if err != nil { // checked above: not reached
			fmt.Fprintln(stderr, oneLine(err.Error()))
			return 2
		}
		files := make([]string, len(ts))
		for i, t := range ts {
			files[i] = filepath.Join(*reportDir, "ginkgo-"+t.Column.String()+".json")
		}
		fmt.Fprintln(stdout, strings.Join(files, " "))
	}
	return 0
}

// check returns one error per bad value: make's settings in order, then the environment's.
func check(order []string, settings map[string]string, getenv func(string) string) []error {
	var errs []error
	for _, k := range order {
		if err := checks[k](k, settings[k]); err != nil {
			errs = append(errs, err)
		}
	}
	if variantsErr != nil {
		errs = append(errs, variantsErr)
	}
	if all.AdapterError != nil {
		errs = append(errs, all.AdapterError)
	}
	if _, err := suite.IsolatedFrom(getenv); err != nil {
		errs = append(errs, err)
	}
	if err := providers.Check(getenv); err != nil {
		errs = append(errs, err)
	}
	if _, err := backends.RetentionFromEnv(getenv); err != nil {
		errs = append(errs, err)
	}
	if _, err := history.LimitFromEnv(getenv); err != nil {
		errs = append(errs, err) // else every spec of the run fails on it
	}
	return append(errs, specs.CheckWorkloadEnv(getenv)...)
}

// variantsErr: the known-bad variants are backends too, as in the suite (suite_test.go), so
// BACKENDS may name one.
var variantsErr = mutants.RegisterAll()

func names() []string {
	var out []string
	for k := range checks {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// oneLine keeps a message on one line: a wrapped error may carry a newline.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
