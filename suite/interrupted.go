package suite

import (
	"fmt"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/pubsub-conformance/harness/reports"
	"github.com/pubsub-conformance/harness/specs/catalogue"
)

// BackendOf is the backend spec s ran on: its "backend:<name>" label (specs.Conformance), the
// one source of a spec's backend; "" for a suite node.
func BackendOf(s types.SpecReport) string { return catalogue.BackendFromLabels(s.Labels()) }

// ResultOf is spec s's structured result (reports.Result) in its column (cols, the run's
// targets' columns), for the run whose spec selection is sel: what the suite's
// ReportAfterEach attaches to every spec.
func ResultOf(s types.SpecReport, sel types.SuiteConfig, cols Columns) reports.Result {
	return reports.NewResult(s, cols.Label(BackendOf(s)), sel)
}

// WithResults returns r with every spec's result attached: the one ReportAfterEach attached,
// or, for a spec that has none (its process ended before it was reported), one made now.
// Then, when the run stopped early (Ctrl-C, another process aborting, the suite timeout), the
// specs that never started, or that the interrupt cut off while they ran (a partial outcome is
// no verdict on the backend), are not run, with why: Ginkgo reports those exactly like specs
// a filter left out (skipped, no message), and the matrix must not show them as skipped
// without a reason. Specs that --label-filter, --focus or --skip left out stay not selected.
// For people reading the JUnit, such a spec's skip message says "not run: <why>" too.
// A spec whose result is unknown (Ginkgo passed it; its history overflowed) is skipped in
// Ginkgo's record, its message "unknown: <why>", so a CI system's JUnit view does not count it
// as passed either.
// cols are the run's targets' columns (ColumnsOf), which the results made here are in.
func WithResults(r types.Report, cols Columns) types.Report {
	why := reports.InterruptedReason(r.SpecialSuiteFailureReasons)
	notRun := "the run was interrupted"
	if why == "Suite Timeout Elapsed" {
		notRun = "the suite timeout elapsed first"
	}
	out := r
	out.SpecReports = make(types.SpecReports, len(r.SpecReports))
	for i, s := range r.SpecReports {
		if s.LeafNodeType != types.NodeTypeIt {
			out.SpecReports[i] = s
			continue
		}
		res, ok := reports.ResultOf(s.ReportEntries)
		if !ok {
			res = ResultOf(s, r.SuiteConfig, cols)
		}
		switch {
		case res.Status == reports.Unknown && s.State == types.SpecStatePassed:
			// Ginkgo passed it, but its checkers could not vouch for it: for whoever reads
			// only Ginkgo's status (a CI system's JUnit view) it is no pass either.
			s.State, s.Failure.Message = types.SpecStateSkipped, "unknown: "+res.Reason
		case why == "":
		case res.Status == reports.Skip && !res.NotSelected && s.NumAttempts == 0 && s.Failure.Message == "":
			res.Status, res.Reason = reports.NotRun, notRun
			s.Failure.Message = "not run: " + notRun
		case s.State == types.SpecStateInterrupted:
			res.Status, res.Cause = reports.NotRun, ""
			res.Reason = fmt.Sprintf("%s while it ran (after %s)", notRun, s.RunTime.Round(100*time.Millisecond))
			s.State, s.Failure.Message = types.SpecStateSkipped, "not run: "+res.Reason
		}
		s.ReportEntries = reports.SetResult(s.ReportEntries, res)
		out.SpecReports[i] = s
	}
	return out
}
