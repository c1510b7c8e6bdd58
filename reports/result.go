package reports

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/pubsub-conformance/harness/internal/evidence"
	"github.com/pubsub-conformance/harness/specs/catalogue"
)

// ResultEntry names the Ginkgo report entry that carries a spec's Result: the suite attaches one
// to every spec (ReportAfterEach, suite/suite_test.go); Ginkgo writes it into the JSON report
// (SpecReport.ReportEntries, the value as JSON in Value.AsJSON) and into JUnit (a
// <property name="pubsub-result" value="JSON"/> of the testcase).
const ResultEntry = "pubsub-result"

// Result is one spec's outcome as data: what the reports read first, so that a run of our
// suite is never re-derived from its messages (only foreign reports are).
type Result struct {
	ID      string `json:"id,omitempty"` // catalogue ID ("" for a spec without one)
	Backend string `json:"backend"`      // the column: the backend, <backend>+isolated in isolation mode
	Status  Status `json:"status"`       // pass, fail, skip, not-run, unknown
	// Cause: a failure's one-line cause (the matrix cell's text).
	Cause string `json:"cause,omitempty"`
	// Reason: why a spec was skipped ("" when it gave none), not selected, not run or unknown.
	Reason string `json:"reason,omitempty"`
	// NotSelected: the run's spec filters left the spec out (Status skip); never a regression.
	NotSelected bool            `json:"notSelected,omitempty"`
	Level       catalogue.Level `json:"level,omitempty"` // the catalogue entry's; "" without one
	Seconds     float64         `json:"seconds"`         // the spec's run time
}

// String is the entry's representation in Ginkgo's reports: "D1 on kafka: fail: <cause>".
func (r Result) String() string {
	s := r.ID
	if s == "" {
		s = "spec"
	}
	s += " on " + r.Backend + ": " + string(r.Status)
	if m := r.Message(); m != "" {
		s += ": " + m
	}
	return s
}

// Message is the cause of a failure, or the reason of anything else.
func (r Result) Message() string {
	if r.Status == Fail {
		return r.Cause
	}
	return r.Reason
}

// Duration is the spec's run time.
func (r Result) Duration() time.Duration {
	return time.Duration(math.Round(r.Seconds * float64(time.Second)))
}

// NewResult is the result of spec s on column backend, from Ginkgo's own record of it; sel is
// the run's spec selection (GinkgoConfiguration, Report.SuiteConfig). A spec the selection left
// out is not selected, with the filter that did it. Not run (the run stopped before the spec)
// is only known at the end of the run: the suite marks it then (suite.WithResults).
func NewResult(s types.SpecReport, backend string, sel types.SuiteConfig) Result {
	r := Result{ID: catalogue.IDFromLabels(s.Labels()), Backend: backend, Seconds: s.RunTime.Seconds()}
	if b, ok := catalogue.Lookup(r.ID); ok {
		r.Level = b.Level
	}
	var msg string
	r.Status, msg = outcome(s)
	if r.Status == Fail {
		r.Cause = msg
	} else {
		r.Reason = msg
	}
	if r.Status == Skip && msg == "" && s.State == types.SpecStateSkipped && s.NumAttempts == 0 {
		if f := NewSelection(sel); !f.Selects(s) {
			r.NotSelected, r.Reason = true, "not selected by this run's "+f.String()
		}
	}
	return r
}

// ResultOf is the Result among a spec's report entries; false when it has none (a foreign
// report, or one written before the suite attached results).
func ResultOf(entries types.ReportEntries) (Result, bool) {
	for _, e := range entries {
		if e.Name != ResultEntry {
			continue
		}
		if r, ok := e.Value.GetRawValue().(Result); ok {
			return r, true
		}
		r, err := decodeResult(e.Value.AsJSON)
		return r, err == nil
	}
	return Result{}, false
}

// SetResult replaces (or adds) the Result among entries, keeping where and when the replaced
// one was attached; the other entries are kept in order. entries itself is not changed.
func SetResult(entries types.ReportEntries, r Result) types.ReportEntries {
	e := types.ReportEntry{Name: ResultEntry, Visibility: types.ReportEntryVisibilityNever}
	out := make(types.ReportEntries, 0, len(entries)+1)
	for _, x := range entries {
		if x.Name == ResultEntry {
			e = x
			continue
		}
		out = append(out, x)
	}
	e.Value = types.WrapEntryValue(r)
	return append(out, e)
}

// unknownOf is the evidence.Unknown among a spec's report entries.
func unknownOf(entries types.ReportEntries) (evidence.Unknown, bool) {
	for _, e := range entries {
		if e.Name != evidence.UnknownEntry {
			continue
		}
		if u, ok := e.Value.GetRawValue().(evidence.Unknown); ok {
			return u, true
		}
		// An entry of another shape still says the run cannot be vouched for: never a pass.
		var u evidence.Unknown
		if err := evidence.Decode(e.Value.GetRawValue(), e.Value.AsJSON, &u); err != nil || u.Reason == "" {
			u.Reason = "the checkers could not vouch for the run"
		}
		return u, true
	}
	return evidence.Unknown{}, false
}

func decodeResult(data string) (Result, error) {
	var r Result
	if err := json.Unmarshal([]byte(data), &r); err != nil {
		return r, err
	}
	switch r.Status {
	case Pass, Fail, Skip, NotRun, Unknown:
		return r, nil
	}
	return r, fmt.Errorf("result status %q: want pass, fail, skip, not-run or unknown", r.Status)
}

// outcome reads Ginkgo's state and failure text of s: the status and one line (a failure's
// cause, a skip's reason). Used for results the suite attaches and for Ginkgo reports without.
// A passed spec that attached evidence.Unknown (its checkers could not vouch for it) is
// Unknown, with the entry's reason.
func outcome(s types.SpecReport) (Status, string) {
	switch {
	case s.State == types.SpecStatePassed:
		if u, ok := unknownOf(s.ReportEntries); ok {
			return Unknown, u.Reason
		}
		return Pass, ""
	case s.State == types.SpecStatePending:
		return Skip, "pending"
	case s.State == types.SpecStateSkipped:
		return Skip, firstLine(s.Failure.Message)
	case s.State.Is(types.SpecStateFailureStates):
		msg := cause(s.Failure.Message)
		if msg == "" {
			msg = "failed (no message in the report)"
		}
		if s.State != types.SpecStateFailed {
			// timedout, panicked, interrupted, aborted: the state says more than the message.
			msg = s.State.String() + ": " + msg
		}
		return Fail, msg
	default:
		// Invalid or unknown states (a spec Ginkgo never reached): not a result.
		return Skip, "not run (" + s.State.String() + ")"
	}
}

// Selection is a run's spec selection as Ginkgo applies it (label filter through Ginkgo's own
// types.ParseLabelFilter, focus and skip regexps over the spec's text, focus and skip files):
// the one place that tells a spec the user's filters left out from one that did not run.
// Programmatic focus (FIt) is not known from a report; the suite uses none.
type Selection struct {
	cfg    types.SuiteConfig
	checks []func(types.SpecReport) bool
}

// NewSelection reads cfg's filters; a filter Ginkgo would have refused selects everything.
func NewSelection(cfg types.SuiteConfig) Selection {
	s := Selection{cfg: cfg}
	if cfg.LabelFilter != "" {
		if f, err := types.ParseLabelFilter(cfg.LabelFilter); err == nil {
			s.checks = append(s.checks, func(r types.SpecReport) bool { return f(r.Labels()) })
		}
	}
	if len(cfg.FocusStrings) > 0 {
		if re, err := regexp.Compile(strings.Join(cfg.FocusStrings, "|")); err == nil {
			s.checks = append(s.checks, func(r types.SpecReport) bool { return re.MatchString(r.FullText()) })
		}
	}
	if len(cfg.SkipStrings) > 0 {
		if re, err := regexp.Compile(strings.Join(cfg.SkipStrings, "|")); err == nil {
			s.checks = append(s.checks, func(r types.SpecReport) bool { return !re.MatchString(r.FullText()) })
		}
	}
	locations := func(r types.SpecReport) []types.CodeLocation {
		return append(append([]types.CodeLocation{}, r.ContainerHierarchyLocations...), r.LeafNodeLocation)
	}
	if len(cfg.FocusFiles) > 0 {
		if f, err := types.ParseFileFilters(cfg.FocusFiles); err == nil {
			s.checks = append(s.checks, func(r types.SpecReport) bool { return f.Matches(locations(r)) })
		}
	}
	if len(cfg.SkipFiles) > 0 {
		if f, err := types.ParseFileFilters(cfg.SkipFiles); err == nil {
			s.checks = append(s.checks, func(r types.SpecReport) bool { return !f.Matches(locations(r)) })
		}
	}
	return s
}

// Selects reports whether the run's filters select spec r.
func (s Selection) Selects(r types.SpecReport) bool {
	for _, ok := range s.checks {
		if !ok(r) {
			return false
		}
	}
	return true
}

// String describes the filters: `filter --label-filter="!slow" --focus="x"`; "" when the run
// selected every spec.
func (s Selection) String() string {
	c := s.cfg
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
