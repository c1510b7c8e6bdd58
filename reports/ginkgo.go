package reports

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/pubsub-conformance/harness/internal/evidence"
	"github.com/pubsub-conformance/harness/specs/catalogue"
)

// ParseGinkgoJSON reads a Ginkgo JSON report (the suite's ginkgo-<backend>.json, or any
// --json-report) from r; name is used in errors and as the Run's File. This is how our own
// runs are read: each spec's outcome from the result the suite attached (Result), its catalogue
// ID from its "id:<ID>" label, never from its text; a report without results (someone else's
// suite, or ours before results) from Ginkgo's state and messages. Empty, non-JSON and
// spec-less input are errors naming the file.
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
		sel := NewSelection(rep.SuiteConfig)
		for _, sp := range rep.SpecReports {
			run.Cases = append(run.Cases, specCase(sp, sel))
		}
	}
	if len(run.Cases) == 0 {
		return nil, fmt.Errorf("%s: Ginkgo report contains no spec: did the suite run at all?", name)
	}
	return run, nil
}

// specCase is one Ginkgo spec (or suite node) as a Case: its outcome from the structured result
// the suite attached (Result), else, for a report without one, from Ginkgo's state and text.
func specCase(s types.SpecReport, sel Selection) Case {
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
	if r, ok := ResultOf(s.ReportEntries); ok && !c.Setup {
		c.applyResult(r)
	} else {
		c.Status, c.Message = outcome(s)
		if c.Status == Skip && c.Message == "" && s.State == types.SpecStateSkipped && !c.Setup && !sel.Selects(s) {
			// Ginkgo reports a spec its filters left out as skipped with no message.
			c.Message, c.NotSelected = "not selected by this run's "+sel.String(), true
		}
	}
	if c.Status == Fail {
		c.Detail = failureDetail(s)
		c.Failure = failureRecord(s.ReportEntries)
	}
	return c
}

// applyResult takes c's outcome from the suite's structured result.
func (c *Case) applyResult(r Result) {
	c.ID, c.Backend, c.Status, c.Message, c.NotSelected = r.ID, r.Backend, r.Status, r.Message(), r.NotSelected
	c.Duration = r.Duration()
}

// failureDetail is the whole failure for the HTML page: message, where, report entries (the
// history of contract calls and the broker's log whole, evidence.Text) and the end of what the
// spec wrote to GinkgoWriter.
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
		if e.Name == ResultEntry || e.Visibility == types.ReportEntryVisibilityNever {
			continue // data for the tools (the result, the evidence), not for people
		}
		// A history or a log whole (the console had its digest), anything else as Ginkgo shows it.
		text, ok := evidence.Text(e.Value.GetRawValue(), e.Value.AsJSON)
		if !ok {
			text = e.StringRepresentation()
		}
		fmt.Fprintf(&b, "\n\n%s:\n%s", e.Name, strings.TrimSpace(text))
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
