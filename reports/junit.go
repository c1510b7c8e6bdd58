package reports

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"

	"github.com/pubsub-conformance/harness/specs/catalogue"
)

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
)

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
	Name      string `xml:"name,attr"`
	Classname string `xml:"classname,attr"`
	Status    string `xml:"status,attr"`
	Time      string `xml:"time,attr"`
	// Properties: Ginkgo writes each report entry of the spec as one, the suite's Result too.
	Properties []xmlProperty `xml:"properties>property"`
	Skipped    *xmlMsg       `xml:"skipped"`
	Failures   []xmlMsg      `xml:"failure"`
	Errors     []xmlMsg      `xml:"error"`
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

	failure, failed := x.failure()
	if failed {
		c.Detail = strings.TrimSpace(strings.TrimSpace(failure.Message) + "\n\n" + strings.TrimSpace(failure.Body))
	}
	if r, ok := x.result(); ok && !c.Setup {
		c.applyResult(r) // our suite's JUnit: the result as data
		if c.Status == Fail {
			c.Failure = x.failureProperty()
		}
		return c
	}
	// A foreign testcase: its outcome from the text.
	switch {
	case failed:
		c.Status = Fail
		m := failure
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

// failure is the testcase's first <failure> or <error>.
func (x xmlCase) failure() (xmlMsg, bool) {
	if m := append(append([]xmlMsg{}, x.Failures...), x.Errors...); len(m) > 0 {
		return m[0], true
	}
	return xmlMsg{}, false
}

// result is the suite's Result among the testcase's properties (Ginkgo writes a report entry
// as the JSON of its value); false for a foreign testcase.
func (x xmlCase) result() (Result, bool) {
	for _, p := range x.Properties {
		if p.Name == ResultEntry {
			r, err := decodeResult(p.Value)
			return r, err == nil
		}
	}
	return Result{}, false
}
