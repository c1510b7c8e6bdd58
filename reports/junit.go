package reports

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/pubsub-conformance/harness/specs/catalogue"
)

// Status is the outcome of one spec (or one catalogue behaviour) on one backend.
type Status string

const (
	Pass   Status = "pass"
	Fail   Status = "fail"
	Skip   Status = "skip"
	NotRun Status = "not-run" // the spec is known but this backend's run has no result for it
)

// Case is one spec of a run: a spec of a Ginkgo JSON report, or a <testcase> of a JUnit file
// (for Ginkgo's JUnit, node type and labels are taken out of the name
// "[It] <containers> <text> [label, label]").
type Case struct {
	Name      string   // the spec's full text (JUnit: the testcase name exactly as in the file)
	NodeType  string   // Ginkgo leaf node type ("It", "BeforeSuite", ...); "" for foreign names
	ID        string   // catalogue ID from the spec's "id:<ID>" label; "" when it has none
	Container string   // Ginkgo container texts (JUnit: the text before "[ID] ")
	Text      string   // the spec's own text (JUnit: after "[ID] ", or the whole name without labels)
	Labels    []string // Ginkgo labels but the ID's
	Status    Status
	Message   string // fail: first line of the cause; skip: the reason ("" when none was given)
	Detail    string // fail: the whole failure message and body, for the HTML page
	Duration  time.Duration
	Setup     bool // a suite-level node (BeforeSuite, AfterSuite, ReportAfterSuite, ...), not a spec
	// NotSelected: the run's spec filters (--label-filter, --focus, ...) left the spec out
	// (Status Skip, Message saying which filter). Not a result, and never a regression.
	NotSelected bool
}

// Run is one report file (and its optional meta sidecar) as read from disk.
type Run struct {
	File         string // path of the report file
	Label        string // backend column label: meta.backend, ginkgo-<label>.json / junit-<label>.xml, suite name, or file name
	SuiteName    string // name of the first <testsuite>
	SuiteSeconds float64
	Timestamp    string
	Meta         *Meta // nil when no sidecar exists
	Cases        []Case
	// Interrupted says why the run stopped before every spec ran ("Interrupted by User" on
	// Ctrl-C, "Suite Timeout Elapsed"); "" for a complete run. See InterruptedReason.
	Interrupted string
}

// ginkgoNodeTypes are the leaf node types Ginkgo prints in brackets at the start of a JUnit
// testcase name; anything else in a leading bracket belongs to a foreign name.
var ginkgoNodeTypes = map[string]bool{
	"It": true, "BeforeSuite": true, "SynchronizedBeforeSuite": true, "AfterSuite": true,
	"SynchronizedAfterSuite": true, "ReportBeforeSuite": true, "ReportAfterSuite": true,
	"ReportBeforeEach": true, "ReportAfterEach": true, "BeforeAll": true, "AfterAll": true,
	"DeferCleanup": true, "DeferCleanup (Each)": true, "DeferCleanup (All)": true, "DeferCleanup (Suite)": true,
	"DeferOnFailure": true, "DeferOnFailure (Each)": true, "DeferOnFailure (All)": true, "DeferOnFailure (Suite)": true,
}

var (
	leadingBracket  = regexp.MustCompile(`^\[([^\[\]]+)\]\s*`)
	trailingBracket = regexp.MustCompile(`\s*\[([^\[\]]*)\]$`)
	reportFileName  = regexp.MustCompile(`^(?:junit-(.+)\.xml|ginkgo-(.+)\.json)$`)
)

// ReadRun is the one reader of results: a Ginkgo JSON report (*.json: our own runs,
// ginkgo-<backend>.json) or a JUnit file (anything else: foreign reports, or our own JUnit), plus
// the meta-<backend>.json sidecar next to a ginkgo-<backend>.json or junit-<backend>.xml. Every
// error names the file.
func ReadRun(path string) (*Run, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read report: %w", err)
	}
	defer f.Close()
	parse := ParseJUnit
	if strings.EqualFold(filepath.Ext(path), ".json") {
		parse = ParseGinkgoJSON
	}
	run, err := parse(path, f)
	if err != nil {
		return nil, err
	}
	base := filepath.Base(path)
	if m := reportFileName.FindStringSubmatch(base); m != nil {
		m[1] += m[2]
		run.Label = m[1]
		metaPath := filepath.Join(filepath.Dir(path), "meta-"+m[1]+".json")
		meta, err := ReadMeta(metaPath)
		switch {
		case errors.Is(err, os.ErrNotExist):
			// Meta is optional: JUnit from elsewhere has none.
		case err != nil:
			return nil, err
		default:
			run.Meta = meta
		}
	}
	if run.Meta != nil && run.Meta.Backend != "" {
		run.Label = run.Meta.Backend
	}
	if run.Label == "" {
		run.Label = run.SuiteName
	}
	if run.Label == "" {
		run.Label = strings.TrimSuffix(base, filepath.Ext(base))
	}
	return run, nil
}

type xmlSuite struct {
	Name       string        `xml:"name,attr"`
	Properties []xmlProperty `xml:"properties>property"`
	Time       string        `xml:"time,attr"`
	Timestamp  string        `xml:"timestamp,attr"`
	Cases      []xmlCase     `xml:"testcase"`
	Suites     []xmlSuite    `xml:"testsuite"` // some tools nest suites
}

type xmlProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type xmlSuites struct {
	Suites []xmlSuite `xml:"testsuite"`
}

type xmlCase struct {
	Name      string   `xml:"name,attr"`
	Classname string   `xml:"classname,attr"`
	Status    string   `xml:"status,attr"`
	Time      string   `xml:"time,attr"`
	Skipped   *xmlMsg  `xml:"skipped"`
	Failures  []xmlMsg `xml:"failure"`
	Errors    []xmlMsg `xml:"error"`
}

type xmlMsg struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Body    string `xml:",chardata"`
}

// ParseJUnit reads a JUnit document from r; name is used in errors and as the Run's File.
// It accepts a <testsuites> root with any number of suites or a bare <testsuite> root, and
// tolerates missing attributes. Empty, non-XML, truncated or non-JUnit input and a report
// with no testcase at all are errors naming the file.
func ParseJUnit(name string, r io.Reader) (*Run, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("%s: read junit: %w", name, err)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fmt.Errorf("%s: empty file, expected a JUnit XML report", name)
	}
	dec := xml.NewDecoder(bytes.NewReader(data))
	var root *xml.StartElement
	for root == nil {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s: no XML element found, expected a JUnit XML report", name)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: not a JUnit XML report: %w", name, err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			root = &t
		case xml.CharData:
			if len(bytes.TrimSpace(t)) > 0 {
				return nil, fmt.Errorf("%s: not a JUnit XML report: text %q before the root element", name, firstLine(string(t)))
			}
		}
	}
	var suites []xmlSuite
	switch root.Name.Local {
	case "testsuites":
		var doc xmlSuites
		if err := dec.DecodeElement(&doc, root); err != nil {
			return nil, fmt.Errorf("%s: malformed JUnit XML: %w", name, err)
		}
		suites = doc.Suites
	case "testsuite":
		var s xmlSuite
		if err := dec.DecodeElement(&s, root); err != nil {
			return nil, fmt.Errorf("%s: malformed JUnit XML: %w", name, err)
		}
		suites = []xmlSuite{s}
	default:
		return nil, fmt.Errorf("%s: root element <%s> is not JUnit: expected <testsuites> or <testsuite>", name, root.Name.Local)
	}
	// Anything but whitespace, comments or processing instructions after the root means the
	// file was concatenated or corrupted: refuse rather than report half of it.
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: malformed JUnit XML after </%s>: %w", name, root.Name.Local, err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			return nil, fmt.Errorf("%s: malformed JUnit XML: second root element <%s> after </%s>", name, t.Name.Local, root.Name.Local)
		case xml.CharData:
			if len(bytes.TrimSpace(t)) > 0 {
				return nil, fmt.Errorf("%s: malformed JUnit XML: text after </%s>", name, root.Name.Local)
			}
		}
	}
	run := &Run{File: name}
	var walk func([]xmlSuite)
	walk = func(ss []xmlSuite) {
		for _, s := range ss {
			if run.SuiteName == "" {
				run.SuiteName = s.Name
				run.Timestamp = s.Timestamp
			}
			run.SuiteSeconds += parseSeconds(s.Time)
			for _, p := range s.Properties {
				if p.Name == "SpecialSuiteFailureReason" && run.Interrupted == "" {
					run.Interrupted = InterruptedReason(strings.Split(p.Value, ","))
				}
			}
			for _, c := range s.Cases {
				run.Cases = append(run.Cases, toCase(c))
			}
			walk(s.Suites)
		}
	}
	walk(suites)
	if len(run.Cases) == 0 {
		return nil, fmt.Errorf("%s: JUnit report contains no <testcase>: did the suite run at all?", name)
	}
	return run, nil
}

func toCase(x xmlCase) Case {
	c := Case{Name: x.Name, Duration: time.Duration(parseSeconds(x.Time) * float64(time.Second))}
	rest := strings.TrimSpace(x.Name)
	if m := leadingBracket.FindStringSubmatch(rest); m != nil && ginkgoNodeTypes[m[1]] {
		c.NodeType = m[1]
		c.Setup = m[1] != "It"
		rest = rest[len(m[0]):]
	}
	if rest == "" {
		// Ginkgo with OmitLeafNodeType writes suite nodes (BeforeSuite, AfterSuite, ...) with
		// an empty name: a spec always has text.
		c.Setup = true
	}
	if !c.Setup {
		// Ginkgo appends labels (and semver constraints) as trailing bracket groups.
		var groups []string
		trimmed := rest
		for {
			m := trailingBracket.FindStringSubmatchIndex(trimmed)
			if m == nil || m[0] == 0 {
				break
			}
			groups = append([]string{trimmed[m[2]:m[3]]}, groups...)
			trimmed = trimmed[:m[0]]
		}
		var labels []string
		for _, g := range groups {
			for _, l := range strings.Split(g, ",") {
				if l = strings.TrimSpace(l); l != "" {
					labels = append(labels, l)
				}
			}
		}
		c.ID = catalogue.IDFromLabels(labels)
		// A foreign name may end in a bracket that is no label list: only a Ginkgo name (node
		// type) or one with an ID label has labels.
		if c.ID != "" || c.NodeType != "" {
			rest = trimmed
			for _, l := range labels {
				if !strings.HasPrefix(l, catalogue.LabelPrefix) {
					c.Labels = append(c.Labels, l)
				}
			}
		}
		c.Container, rest = splitAtID(rest, c.ID)
	}
	c.Text = strings.TrimSpace(rest)
	if c.Text == "" && c.ID == "" && !c.Setup {
		c.Text = x.Classname
	}

	switch {
	case len(x.Failures) > 0 || len(x.Errors) > 0:
		c.Status = Fail
		m := append(append([]xmlMsg{}, x.Failures...), x.Errors...)[0]
		c.Message = cause(m.Message)
		if c.Message == "" {
			c.Message = firstLine(m.Body)
		}
		if c.Message == "" {
			c.Message = strings.TrimSpace(m.Type)
		}
		if c.Message == "" {
			c.Message = "failed (no message in the report)"
		}
		c.Detail = strings.TrimSpace(strings.TrimSpace(m.Message) + "\n\n" + strings.TrimSpace(m.Body))
	case x.Skipped != nil:
		c.Status = Skip
		c.Message = skipReason(x.Skipped.Message)
		if c.Message == "" {
			c.Message = firstLine(x.Skipped.Body)
		}
		if m, ok := strings.CutPrefix(c.Message, NotRunPrefix); ok {
			c.Status, c.Message = NotRun, m // never started or cut off: the run stopped first
		}
	default:
		switch strings.ToLower(strings.TrimSpace(x.Status)) {
		case "skipped", "disabled", "pending", "notrun":
			c.Status = Skip
			c.Message = strings.ToLower(strings.TrimSpace(x.Status))
		case "failed", "failure", "error", "timedout", "panicked", "interrupted", "aborted":
			c.Status = Fail
			c.Message = x.Status + " (no message in the report)"
		default:
			c.Status = Pass
		}
	}
	return c
}

// splitAtID splits a spec's full text at "[id] ": the ID is in the text for people, the label
// said which, so the containers' texts come before it and the behaviour's after. Without an ID
// (or without it in the text) the whole text is the spec's own.
func splitAtID(name, id string) (container, text string) {
	if id != "" {
		if k := strings.Index(name, "["+id+"] "); k >= 0 {
			return strings.TrimSpace(name[:k]), strings.TrimSpace(name[k+len(id)+3:])
		}
	}
	return "", strings.TrimSpace(name)
}

// skipReason turns Ginkgo's "skipped - <reason>" into "<reason>"; a bare "skipped" gives "".
func skipReason(msg string) string {
	msg = firstLine(msg)
	if r, ok := strings.CutPrefix(msg, "skipped - "); ok {
		return strings.TrimSpace(r)
	}
	if msg == "skipped" {
		return ""
	}
	return msg
}

// firstLine returns the first non-blank line of s, trimmed.
func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return l
		}
	}
	return ""
}

// parseSeconds reads a JUnit time attribute; missing or unreadable values count as zero
// because a foreign report's timing is informational, not a reason to reject it.
func parseSeconds(s string) float64 {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || f < 0 {
		return 0
	}
	return f
}

var gomegaValue = regexp.MustCompile(`^<[^<>]*>: ?(.*)$`)

// cause is the one-line cause of a failure message: its first line, except that Gomega's
// multi-line shapes, whose first line alone says little, are folded into one line:
//
//	"desc\nUnexpected error:\n    <*T | 0x..>: \n    the error"   -> "desc: the error"
//	"Expected\n    <T>: a\nto equal\n    <T>: b"                 -> "Expected a to equal b"
//	"Timed out after 10.001s.\ndesc\nExpected..."               -> "Timed out after 10.001s: desc"
func cause(msg string) string {
	var lines []string
	for _, l := range strings.Split(msg, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		return ""
	}
	// value returns the Gomega-formatted value starting at line i and the index after it.
	value := func(i int) (string, int) {
		if i >= len(lines) {
			return "", i
		}
		m := gomegaValue.FindStringSubmatch(lines[i])
		if m == nil {
			return lines[i], i + 1
		}
		if m[1] != "" {
			return m[1], i + 1
		}
		if i+1 < len(lines) {
			return lines[i+1], i + 2
		}
		return "", i + 1
	}
	limit := func(s string) string { return truncate(s, 300) }
	first := lines[0]
	for k, l := range lines {
		if l == "Unexpected error:" {
			v, _ := value(k + 1)
			if k == 0 {
				return limit("unexpected error: " + v)
			}
			return limit(strings.TrimSuffix(lines[k-1], ":") + ": " + v)
		}
	}
	if strings.HasPrefix(first, "Timed out after ") || strings.HasPrefix(first, "Failed after ") {
		if len(lines) > 1 && lines[1] != "Expected" && !strings.HasPrefix(lines[1], "<") {
			return limit(strings.TrimSuffix(first, ".") + ": " + lines[1])
		}
		return limit(first)
	}
	if first == "Expected" && len(lines) > 2 {
		got, next := value(1)
		// Skip a struct dump ("{ ... }") to the matcher line ("to equal", "not to be nil").
		for ; next < len(lines); next++ {
			if strings.HasPrefix(lines[next], "to ") || strings.HasPrefix(lines[next], "not to ") {
				want, _ := value(next + 1)
				return limit(strings.TrimSpace("Expected " + got + " " + lines[next] + " " + want))
			}
		}
		return limit("Expected " + got)
	}
	return limit(first)
}

// InterruptedReason picks, from Ginkgo's special suite failure reasons (JUnit property
// SpecialSuiteFailureReason, JSON SpecialSuiteFailureReasons), the one that means the run
// stopped early: a signal (Ctrl-C), another process aborting, or the suite timeout. "" when
// none does, e.g. a run that only failed specs.
func InterruptedReason(reasons []string) string {
	for _, r := range reasons {
		r = strings.TrimSpace(r)
		if strings.HasPrefix(r, "Interrupted") || r == "Suite Timeout Elapsed" {
			return r
		}
	}
	return ""
}

// NotRunPrefix starts the message the suite gives a spec that never started because the run
// stopped early (suite/suite_test.go); such a spec is NotRun, not skipped.
const NotRunPrefix = "not run: "
