package suite

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/pubsub-conformance/harness/reports"
)

// MarkNotRun returns r with every spec that never started because the run stopped early
// (Ctrl-C, another process aborting, the suite timeout) marked as such: Ginkgo reports those
// exactly like specs a filter left out (skipped, no message), and the matrix must not show
// them as skipped without a reason. Their message starts with reports.NotRunPrefix, which the
// reports read as "not run". A spec the interrupt cut off while it ran is not run too (its
// partial outcome is no verdict on the backend). Specs that --label-filter, --focus or --skip left out stay as they
// are. A complete run is returned unchanged.
func MarkNotRun(r types.Report) types.Report {
	why := reports.InterruptedReason(r.SpecialSuiteFailureReasons)
	if why == "" {
		return r
	}
	msg := reports.NotRunPrefix + "the run was interrupted"
	if why == "Suite Timeout Elapsed" {
		msg = reports.NotRunPrefix + "the suite timeout elapsed first"
	}
	selected := filters(r.SuiteConfig)
	out := r
	out.SpecReports = make(types.SpecReports, len(r.SpecReports))
	for i, s := range r.SpecReports {
		switch {
		case s.LeafNodeType != types.NodeTypeIt:
		case s.State == types.SpecStateSkipped && s.NumAttempts == 0 && s.Failure.Message == "" && selected(s):
			s.Failure.Message = msg
		case s.State == types.SpecStateInterrupted:
			// Cut off by the interrupt: no verdict on the backend either way.
			s.State = types.SpecStateSkipped
			s.Failure.Message = fmt.Sprintf("%s while it ran (after %s)", msg, s.RunTime.Round(100*time.Millisecond))
		}
		out.SpecReports[i] = s
	}
	return out
}

// filters mirrors Ginkgo's own spec selection (label filter, focus and skip regexps over the
// spec's full text), so a spec the user filtered out is not called interrupted.
func filters(c types.SuiteConfig) func(types.SpecReport) bool {
	var checks []func(types.SpecReport) bool
	if c.LabelFilter != "" {
		if f, err := types.ParseLabelFilter(c.LabelFilter); err == nil {
			checks = append(checks, func(s types.SpecReport) bool { return f(s.Labels()) })
		}
	}
	if len(c.FocusStrings) > 0 {
		if re, err := regexp.Compile(strings.Join(c.FocusStrings, "|")); err == nil {
			checks = append(checks, func(s types.SpecReport) bool { return re.MatchString(s.FullText()) })
		}
	}
	if len(c.SkipStrings) > 0 {
		if re, err := regexp.Compile(strings.Join(c.SkipStrings, "|")); err == nil {
			checks = append(checks, func(s types.SpecReport) bool { return !re.MatchString(s.FullText()) })
		}
	}
	return func(s types.SpecReport) bool {
		for _, ok := range checks {
			if !ok(s) {
				return false
			}
		}
		return true
	}
}
