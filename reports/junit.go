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
)

// Status is the outcome of one spec (or one catalogue behaviour) on one backend.
type Status string

const (
	Pass   Status = "pass"
	Fail   Status = "fail"
	Skip   Status = "skip"
	NotRun Status = "not-run" // the spec is known but this backend's run has no result for it
)

// Case is one <testcase> of a JUnit file, with the catalogue ID and labels pulled out of the
// Ginkgo spec name ("[It] <containers> [D2] <text> [label, label]").
type Case struct {
	Name      string   // the testcase name exactly as in the file
	NodeType  string   // Ginkgo leaf node type ("It", "BeforeSuite", ...); "" for foreign names
	ID        string   // catalogue ID ("D2"); "" when the name carries none
	Container string   // text before the ID (Ginkgo container texts)
	Text      string   // text after the ID without the trailing labels; the whole name for foreign cases
	Labels    []string // Ginkgo labels from the trailing bracket group(s)
	Status    Status
	Message   string // fail: first line of the cause; skip: the reason ("" when none was given)
	Detail    string // fail: the whole failure message and body, for the HTML page
	Duration  time.Duration
	Setup     bool // a suite-level node (BeforeSuite, AfterSuite, ReportAfterSuite, ...), not a spec
}

// Run is one JUnit file (and its optional meta sidecar) as read from disk.
type Run struct {
	File         string // path of the JUnit file
	Label        string // backend column label: meta.backend, junit-<label>.xml, testsuite name, or file name
	SuiteName    string // name of the first <testsuite>
	SuiteSeconds float64
	Timestamp    string
	Meta         *Meta // nil when no sidecar exists
	Cases        []Case
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
	idPattern       = regexp.MustCompile(`\[([A-Z]\d+)\]`)
	trailingBracket = regexp.MustCompile(`\s*\[([^\[\]]*)\]$`)
	junitFileName   = regexp.MustCompile(`^junit-(.+)\.xml$`)
)

// ReadRun reads one JUnit file and, when it is named junit-<backend>.xml, the meta-<backend>.json
// sidecar next to it. Every error names the file.
func ReadRun(path string) (*Run, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read junit: %w", err)
	}
	defer f.Close()
	run, err := ParseJUnit(path, f)
	if err != nil {
		return nil, err
	}
	base := filepath.Base(path)
	if m := junitFileName.FindStringSubmatch(base); m != nil {
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
	Name      string     `xml:"name,attr"`
	Time      string     `xml:"time,attr"`
	Timestamp string     `xml:"timestamp,attr"`
	Cases     []xmlCase  `xml:"testcase"`
	Suites    []xmlSuite `xml:"testsuite"` // some tools nest suites
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
	if loc := idPattern.FindStringSubmatchIndex(rest); loc != nil && !c.Setup {
		c.ID = rest[loc[2]:loc[3]]
		c.Container = strings.TrimSpace(rest[:loc[0]])
		rest = strings.TrimSpace(rest[loc[1]:])
	}
	if c.NodeType != "" || c.ID != "" {
		// Ginkgo appends labels (and semver constraints) as trailing bracket groups.
		var groups []string
		for {
			m := trailingBracket.FindStringSubmatchIndex(rest)
			if m == nil || m[0] == 0 {
				break
			}
			groups = append([]string{rest[m[2]:m[3]]}, groups...)
			rest = rest[:m[0]]
		}
		for _, g := range groups {
			for _, l := range strings.Split(g, ",") {
				if l = strings.TrimSpace(l); l != "" {
					c.Labels = append(c.Labels, l)
				}
			}
		}
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
