package suite_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/reporters"
	"github.com/onsi/ginkgo/v2/types"
	. "github.com/onsi/gomega"

	"github.com/pubsub-conformance/harness/backends/all" // the registered backends; AdapterError
	"github.com/pubsub-conformance/harness/backends/mutants"
	"github.com/pubsub-conformance/harness/fixtures"
	"github.com/pubsub-conformance/harness/internal/column"
	"github.com/pubsub-conformance/harness/internal/history"
	"github.com/pubsub-conformance/harness/reports"
	"github.com/pubsub-conformance/harness/specs"
	"github.com/pubsub-conformance/harness/suite"
	"github.com/pubsub-conformance/harness/suite/run"
)

// -pubsub-backends overrides PUBSUB_BACKENDS: go test ./suite -args -pubsub-backends=kafka,
// ginkgo ./suite -- -pubsub-backends=kafka.
var backendsFlag = flag.String("pubsub-backends", "", "comma-separated backends to test (default $PUBSUB_BACKENDS, else memory)")

func init() {
	// Known-bad variants ("memory~nack-noop", "kafka~latest-race", ...) for the self-test that
	// proves the specs fail (suite/selftest) and for `make mutants` (suite/cmd/mutants). They
	// are only registry entries: a run tests them only when PUBSUB_BACKENDS names them. A
	// record naming an unknown backend or spec fails the run (TestConformance).
	variantsErr = mutants.RegisterAll()
}

var variantsErr error

func TestMain(m *testing.M) {
	if spec := os.Getenv(suite.CrashChildEnv); spec != "" {
		os.Exit(suite.RunCrashChild(spec)) // R5's crashing consumer: see suite.crashInChild
	}
	os.Exit(m.Run())
}

func TestConformance(t *testing.T) {
	RegisterFailHandler(Fail)
	// The tree: one Conformance container per selected backend. Backends are chosen here
	// (after flag parsing, before RunSpecs) so --label-filter, --focus and -p all see the
	// real spec list; each is resolved once, into the run's target (descriptor, broker kind,
	// column), which every later step takes.
	if all.AdapterError != nil {
		t.Fatalf("%v", all.AdapterError)
	}
	if variantsErr != nil {
		t.Fatalf("%v", variantsErr)
	}
	selected, err := run.Select(*backendsFlag, os.Getenv)
	if err != nil {
		t.Fatalf("select backends: %v", err)
	}
	if targets, err = suite.InRun(selected); err != nil {
		t.Fatalf("%v", err)
	}
	if _, err := history.LimitFromEnv(os.Getenv); err != nil {
		t.Fatalf("%v", err) // one line, not the same failure in every spec
	}
	columns = suite.ColumnsOf(targets)
	for _, tg := range targets {
		specs.Conformance(suite.NewEnv(tg, &shared, progress))
	}
	RunSpecs(t, "pub/sub conformance")
}

var (
	targets  []run.Target
	columns  suite.Columns // the targets' columns by registry name
	shared   suite.Shared
	brokers  []fixtures.Broker // process 1 only
	progress = func(format string, args ...any) {
		// Why stdout: the user should see provider, jar cache and startup times without -v.
		fmt.Fprintf(os.Stdout, "%s [pubsub] "+format+"\n", append([]any{time.Now().Format("15:04:05.000")}, args...)...)
	}
)

var _ = SynchronizedBeforeSuite(func(ctx SpecContext) []byte {
	progress("backends under test: %v", run.Names(targets))
	if len(targets) > 0 && targets[0].Column.Isolated {
		progress("isolation mode (%s=topics): the harness creates the topics of every spec outside the lifecycle and security areas through the broker's admin; columns are labelled <backend>%s", suite.IsolateEnv, column.IsolatedSuffix)
	}
	for _, tg := range targets {
		if tg.Descriptor.Reference {
			progress("%s is the in-process REFERENCE backend: a self-test of the specs, never a conformance result", tg.Name())
		}
	}
	var err error
	var sh suite.Shared
	if err := suite.PrepareBackends(ctx, targets, progress); err != nil {
		Fail(err.Error()) // "prepare <backend>: ...", one line, like a broker that cannot start
	}
	sh, brokers, err = suite.StartBrokers(ctx, run.Kinds(targets), progress)
	if err != nil {
		// The message once, plainly: HaveOccurred would print Gomega's dump of the wrapped
		// error chain around it, which buries a setup problem the user must fix by hand.
		Fail("start brokers: " + err.Error())
	}
	data, err := json.Marshal(sh)
	Expect(err).NotTo(HaveOccurred())
	return data
}, func(data []byte) {
	Expect(json.Unmarshal(data, &shared)).To(Succeed(), "broker endpoints from process 1")
}, NodeTimeout(10*time.Minute))

var _ = SynchronizedAfterSuite(func() {}, func(ctx SpecContext) {
	Expect(suite.StopBrokers(ctx, brokers)).To(Succeed(), "stop brokers")
}, NodeTimeout(3*time.Minute))

// Every spec's result as data (reports.Result: ID, backend, status, cause or reason, level,
// duration), in the JSON and JUnit reports beside Ginkgo's own record: what the reports read.
// Never printed: the console shows the failure itself.
var _ = ReportAfterEach(func(s SpecReport) {
	if s.LeafNodeType == types.NodeTypeIt {
		sel, _ := GinkgoConfiguration()
		AddReportEntry(reports.ResultEntry, ReportEntryVisibilityNever, suite.ResultOf(s, sel, columns))
	}
})

// Per-backend JUnit, Ginkgo JSON and the meta sidecar, from the whole run's report.
var _ = ReportAfterSuite("per-backend reports", func(r Report) {
	dir, err := suite.ReportDir()
	if err != nil {
		fmt.Fprintln(os.Stderr, "reports:", err)
		return
	}
	// Every spec has its result; those that never ran because the run was interrupted say so.
	r = suite.WithResults(r, columns)
	for _, tg := range targets {
		n := tg.Name()
		sub := forBackend(r, n)
		check := func(what string, err error) {
			if err != nil {
				fmt.Fprintf(os.Stderr, "reports: %s for %s: %v\n", what, n, err)
			}
		}
		// In isolation mode the column is <backend>+isolated, beside the normal one.
		label := tg.Column.String()
		check("junit", reporters.GenerateJUnitReportWithConfig(sub, filepath.Join(dir, "junit-"+label+".xml"),
			reporters.JunitReportConfig{OmitLeafNodeType: true}))
		check("json", reporters.GenerateJSONReport(sub, filepath.Join(dir, "ginkgo-"+label+".json")))
		meta := suite.NewMeta(tg, &shared, r.RunTime)
		meta.Selected = selectedLabels() // so the gate tells a backend this run did not select from a missing one
		data, err := json.MarshalIndent(meta, "", "  ")
		check("meta", err)
		check("meta", os.WriteFile(filepath.Join(dir, "meta-"+label+".json"), data, 0o644))
	}
	progress("reports for %v in %s (suite %s)", run.Names(targets), dir, r.RunTime.Round(10*time.Millisecond))
	if why := reports.InterruptedReason(r.SpecialSuiteFailureReasons); why != "" {
		progress("the run was interrupted (%s): the reports mark the specs that never ran as not run", why)
	}
})

// selectedLabels are the run's backends as the gate keys them: with the broker release of a
// non-default one (kafka@3.9.1), so that the pinned release's column reads as not selected.
func selectedLabels() []string {
	out := make([]string, len(targets))
	for i, tg := range targets {
		c := tg.Column
		c.Isolated = false
		out[i] = c.String()
	}
	return out
}

// forBackend keeps the suite-level nodes (setup failures concern every backend) and the specs
// labelled with backend n.
func forBackend(r Report, n string) Report {
	out := r
	out.SuiteDescription = r.SuiteDescription + " - " + n
	out.SpecReports = nil
	for _, s := range r.SpecReports {
		if s.LeafNodeType != types.NodeTypeIt || suite.BackendOf(s) == n {
			out.SpecReports = append(out.SpecReports, s)
		}
	}
	return out
}
