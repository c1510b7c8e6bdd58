package reports

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/pubsub-conformance/harness/specs/catalogue"
)

// ParseGinkgoJSON reads a Ginkgo JSON report (the suite's ginkgo-<backend>.json, or any
// --json-report) from r; name is used in errors and as the Run's File. This is how our own
// runs are read: each spec's catalogue ID comes from its "id:<ID>" label, never from its text.
// Empty, non-JSON and spec-less input are errors naming the file.
func ParseGinkgoJSON(name string, r io.Reader) (*Run, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("%s: read ginkgo report: %w", name, err)
	}
	if len(strings.TrimSpace(string(data))) == 0 {
		return nil, fmt.Errorf("%s: empty file, expected a Ginkgo JSON report", name)
	}
	var reports []types.Report
	if err := json.Unmarshal(data, &reports); err != nil {
		return nil, fmt.Errorf("%s: not a Ginkgo JSON report: %w", name, err)
	}
	run := &Run{File: name}
	for _, rep := range reports {
		if run.SuiteName == "" {
			run.SuiteName = rep.SuiteDescription
			if !rep.StartTime.IsZero() {
				run.Timestamp = rep.StartTime.Format("2006-01-02T15:04:05")
			}
		}
		run.SuiteSeconds += rep.RunTime.Seconds()
		if run.Interrupted == "" {
			run.Interrupted = InterruptedReason(rep.SpecialSuiteFailureReasons)
		}
		filter := selectionFilter(rep.SuiteConfig)
		for _, s := range rep.SpecReports {
			c := specCase(s)
			if c.Status == Skip && c.Message == "" && filter != "" {
				// Ginkgo reports a spec its filters left out as skipped with no message.
				c.Message = "not selected by this run's " + filter
				c.NotSelected = true
			}
			run.Cases = append(run.Cases, c)
		}
	}
	if len(run.Cases) == 0 {
		return nil, fmt.Errorf("%s: Ginkgo report contains no spec: did the suite run at all?", name)
	}
	return run, nil
}

// selectionFilter describes the run's spec filters ("" when the run selected every spec), so
// that a spec they left out reads as not selected instead of a skip with no reason.
func selectionFilter(c types.SuiteConfig) string {
	var parts []string
	if c.LabelFilter != "" {
		parts = append(parts, fmt.Sprintf("--label-filter=%q", c.LabelFilter))
	}
	for _, f := range c.FocusStrings {
		parts = append(parts, fmt.Sprintf("--focus=%q", f))
	}
	for _, f := range c.SkipStrings {
		parts = append(parts, fmt.Sprintf("--skip=%q", f))
	}
	for _, f := range c.FocusFiles {
		parts = append(parts, fmt.Sprintf("--focus-file=%q", f))
	}
	for _, f := range c.SkipFiles {
		parts = append(parts, fmt.Sprintf("--skip-file=%q", f))
	}
	if len(parts) == 0 {
		return ""
	}
	return "filter " + strings.Join(parts, " ")
}

// specCase is one Ginkgo spec (or suite node) as a Case.
func specCase(s types.SpecReport) Case {
	texts := append(slices.Clone(s.ContainerHierarchyTexts), s.LeafNodeText)
	c := Case{
		Name:     strings.TrimSpace(strings.Join(texts, " ")),
		NodeType: s.LeafNodeType.String(),
		Duration: s.RunTime,
		Setup:    s.LeafNodeType != types.NodeTypeIt,
	}
	all := s.Labels()
	c.ID = catalogue.IDFromLabels(all)
	c.Container, c.Text = splitAtID(c.Name, c.ID)
	for _, l := range all {
		if !strings.HasPrefix(l, catalogue.LabelPrefix) {
			c.Labels = append(c.Labels, l)
		}
	}
	switch {
	case s.State == types.SpecStatePassed:
		c.Status = Pass
	case s.State == types.SpecStateSkipped || s.State == types.SpecStatePending:
		c.Status = Skip
		c.Message = firstLine(s.Failure.Message)
		if s.State == types.SpecStatePending {
			c.Message = "pending"
		}
		if m, ok := strings.CutPrefix(c.Message, NotRunPrefix); ok {
			c.Status, c.Message = NotRun, m // never started or cut off: the run stopped first
		}
	case s.State.Is(types.SpecStateFailureStates):
		c.Status = Fail
		c.Message = cause(s.Failure.Message)
		if c.Message == "" {
			c.Message = "failed (no message in the report)"
		}
		if s.State != types.SpecStateFailed {
			// timedout, panicked, interrupted, aborted: the state says more than the message.
			c.Message = s.State.String() + ": " + c.Message
		}
		c.Detail = failureDetail(s)
	default:
		// Invalid or unknown states (a spec Ginkgo never reached): not a result.
		c.Status = Skip
		c.Message = "not run (" + s.State.String() + ")"
	}
	return c
}

// failureDetail is the whole failure for the HTML page: message, where, report entries (the
// broker's log tail) and what the spec wrote to GinkgoWriter.
func failureDetail(s types.SpecReport) string {
	var b strings.Builder
	b.WriteString(strings.TrimSpace(s.Failure.Message))
	if s.Failure.Location.FileName != "" {
		fmt.Fprintf(&b, "\n\nat %s", s.Failure.Location)
	}
	if s.Failure.ForwardedPanic != "" {
		fmt.Fprintf(&b, "\n\npanic: %s", s.Failure.ForwardedPanic)
	}
	for _, e := range s.ReportEntries {
		fmt.Fprintf(&b, "\n\n%s:\n%s", e.Name, strings.TrimSpace(e.StringRepresentation()))
	}
	if out := strings.TrimSpace(s.CapturedGinkgoWriterOutput); out != "" {
		fmt.Fprintf(&b, "\n\noutput:\n%s", tailLines(out, 40))
	}
	return b.String()
}

func tailLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = append([]string{fmt.Sprintf("... (%d lines before)", len(lines)-n)}, lines[len(lines)-n:]...)
	}
	return strings.Join(lines, "\n")
}
