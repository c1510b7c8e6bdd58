package reports

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/pubsub-conformance/harness/internal/evidence"
)

// Status is the outcome of one spec (or one catalogue behaviour) on one backend.
type Status string

const (
	Pass   Status = "pass"
	Fail   Status = "fail"
	Skip   Status = "skip"
	NotRun Status = "not-run" // the spec is known but this backend's run has no result for it
	// Unknown (Jepsen's :unknown): the spec's assertions passed but its checkers could not
	// vouch for the run (its history overflowed: evidence.Unknown). Never a pass: the
	// matrix, the verdict, the gate and the exit status each say so (docs/results.md).
	Unknown Status = "unknown"
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
	// Backend is the column the suite's structured result names (Result.Backend); "" for a
	// case of a foreign report.
	Backend string
	Setup   bool // a suite-level node (BeforeSuite, AfterSuite, ReportAfterSuite, ...), not a spec
	// NotSelected: the run's spec filters (--label-filter, --focus, ...) left the spec out
	// (Status Skip, Message saying which filter). Not a result, and never a regression.
	NotSelected bool
	// Failure: a failed spec's failure as a record (evidence.Failure: call, error code, error,
	// kind, anomaly), which our own runs attach; nil for a foreign report. The findings group
	// by it.
	Failure *evidence.Failure
}

// Run is one report file (and its optional meta sidecar) as read from disk.
type Run struct {
	File         string // path of the report file
	Label        string // backend column label (runLabel): the structured results', else meta.backend, file name, suite name
	SuiteName    string // name of the first <testsuite>
	SuiteSeconds float64
	Timestamp    string
	Meta         *Meta // nil when no sidecar exists
	Cases        []Case
	// Interrupted says why the run stopped before every spec ran ("Interrupted by User" on
	// Ctrl-C, "Suite Timeout Elapsed"); "" for a complete run. See InterruptedReason.
	Interrupted string
}

// ReadRun is the one reader of results: a Ginkgo JSON report (*.json: our own runs,
// ginkgo-<backend>.json) or a JUnit file (anything else: foreign reports, or our own JUnit), plus
// the meta-<backend>.json sidecar next to a ginkgo-<backend>.json or junit-<backend>.xml. A spec
// of our suite is read from the structured result it carries (Result); only a foreign report's
// is read from its text. Every error names the file.
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
	fileLabel := ""
	if m := reportFileName.FindStringSubmatch(base); m != nil {
		fileLabel = m[1] + m[2]
		meta, err := ReadMeta(filepath.Join(filepath.Dir(path), "meta-"+fileLabel+".json"))
		switch {
		case errors.Is(err, os.ErrNotExist):
			// Meta is optional: JUnit from elsewhere has none.
		case err != nil:
			return nil, err
		default:
			run.Meta = meta
		}
	}
	run.Label = runLabel(run, fileLabel, strings.TrimSuffix(base, filepath.Ext(base)))
	return run, nil
}

var reportFileName = regexp.MustCompile(`^(?:junit-(.+)\.xml|ginkgo-(.+)\.json)$`)

// runLabel is the one rule naming a run's column: the backend its structured results name
// (our suite's runs), else the meta sidecar's backend, the report file's name
// (ginkgo-<label>.json, junit-<label>.xml), the suite's name or the file's base name.
func runLabel(run *Run, fileLabel, base string) string {
	return firstNonEmpty(resultsBackend(run.Cases), metaBackend(run), fileLabel, run.SuiteName, base)
}

// resultsBackend is the backend every structured result of cs names; "" when none carries one
// or they name several (then the file is not one column's).
func resultsBackend(cs []Case) string {
	b := ""
	for _, c := range cs {
		switch {
		case c.Backend == "":
		case b == "":
			b = c.Backend
		case b != c.Backend:
			return ""
		}
	}
	return b
}

func metaBackend(run *Run) string {
	if run.Meta == nil {
		return ""
	}
	return run.Meta.Backend
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// ReadRuns reads every file; it stops at the first bad file so the error names it.
func ReadRuns(paths []string) ([]*Run, error) {
	if len(paths) == 0 {
		return nil, fmt.Errorf("no report files given: run the suite first (make conformance) or pass FILE...")
	}
	runs := make([]*Run, 0, len(paths))
	for _, p := range paths {
		r, err := ReadRun(p)
		if err != nil {
			return nil, err
		}
		runs = append(runs, r)
	}
	return runs, nil
}
