package specs

import (
	"fmt"
	"os"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"

	"github.com/pubsub-conformance/harness/backends"
	"github.com/pubsub-conformance/harness/internal/evidence"
	"github.com/pubsub-conformance/harness/internal/history"
)

// Every client a spec opens records its contract calls into the spec's history (RecordClient,
// called by the suite's one open function for every kind of client: shared broker, private
// broker, fault broker, cluster, auth broker, in-process instance). A failed spec attaches the
// last historyAttached calls as data (the console shows a digest); the specs that move many
// messages also run the checkers of internal/history over it (checkHistory).

// historyAttached is how many calls a failed spec's report entry carries: the last ones,
// nearest the failure. Every spec but F5 (about 10,000 calls) and an overflowed history fits
// whole; the bound keeps a report's size (about 300 bytes a call) in reason.
const historyAttached = 20_000

// historyChecksEnv switches the checkers of checkHistory off ("off") for a run.
const historyChecksEnv = "PUBSUB_HISTORY_CHECKS"

// newRecorder is a spec's history, keeping PUBSUB_HISTORY_LIMIT calls when that is set
// (history.LimitFromEnv; make's preflight and the suite refuse a bad value before any spec).
func newRecorder() *history.Recorder {
	GinkgoHelper()
	n, err := history.LimitFromEnv(os.Getenv)
	if err != nil {
		Fail(err.Error())
	}
	r := history.NewRecorder()
	r.SetLimit(n)
	return r
}

var (
	specHistoryMu sync.Mutex
	specHistory   *history.Recorder // the running spec's; one spec at a time per process
)

// beginHistory starts the running spec's history and attaches it to the spec's report when the
// spec fails. Called by a BeforeEach around the whole catalogue (Conformance), so its cleanup
// is registered before any of the spec's own and runs after them: the history includes the
// closes.
func beginHistory() {
	r := newRecorder()
	specHistoryMu.Lock()
	specHistory = r
	specHistoryMu.Unlock()
	DeferCleanup(func() {
		specHistoryMu.Lock()
		if specHistory == r {
			specHistory = nil
		}
		specHistoryMu.Unlock()
		attachHistory(r)
	})
}

// attachHistory attaches r to a failed spec's report as data (internal/evidence): the failure
// record - the call whose error the failure quotes, its code and kind, what the history owed
// it - unless the checkers already wrote one (checkHistory), and the calls, which the console
// shows as a digest (the call behind the failure, the last calls) and the JSON report and the
// HTML page whole.
func attachHistory(r *history.Recorder) {
	rep := CurrentSpecReport()
	if r.Len() == 0 || !rep.Failed() {
		return
	}
	var rec *evidence.Failure
	for _, e := range rep.ReportEntries {
		if f, ok := e.Value.GetRawValue().(evidence.Failure); ok && e.Name == evidence.FailureEntry {
			rec = &f
		}
	}
	if rec == nil {
		f := history.FailureOf(r.Ops(), rep.Failure.Message)
		rec = &f
		AddReportEntry(evidence.FailureEntry, ReportEntryVisibilityNever, f)
	}
	h := r.Evidence(historyAttached)
	h.Focus = rec.Seq
	AddReportEntry(evidence.HistoryEntry, ReportEntryVisibilityFailureOrVerbose, h)
}

// RecordClient returns b recording into the running spec's history, as a client opened on
// where (a few words: "the run's broker", "a private broker"). Outside a spec's history (a
// BeforeAll, which runs before the first spec's BeforeEach) the client gets a history of its
// own, attached to a failed report by the cleanup of the node that opened it.
func RecordClient(b backends.Backend, where string) backends.Backend {
	specHistoryMu.Lock()
	r := specHistory
	specHistoryMu.Unlock()
	if r == nil {
		r = newRecorder()
		DeferCleanup(func() { attachHistory(r) })
	}
	return history.Wrap(b, r, where)
}

// currentHistory is the running spec's history (nil outside one).
func currentHistory() *history.Recorder {
	specHistoryMu.Lock()
	defer specHistoryMu.Unlock()
	return specHistory
}

// checkHistory runs every checker of internal/history over the running spec's history, with
// b's capabilities and faults telling whether the history spans network faults or a broker
// restart, and fails the spec naming each anomaly and its messages. The time it took and the
// history's size are a report entry ("history check"), visible with -v.
//
// PUBSUB_HISTORY_CHECKS=off skips the checkers (a report entry says so): the mutants runs that
// prove no spec's own assertion kills a variant written for the checkers use it.
func checkHistory(b backends.Backend, faults bool) {
	GinkgoHelper()
	switch v := os.Getenv(historyChecksEnv); v {
	case "", "on":
	case "off":
		AddReportEntry("history check", ReportEntryVisibilityFailureOrVerbose, historyChecksEnv+"=off: not checked")
		return
	default:
		Fail(fmt.Sprintf("%s=%q: want on or off", historyChecksEnv, v))
	}
	r := currentHistory()
	if r == nil {
		Fail("no history was recorded for this spec: its clients were not opened through the suite's open function")
		return
	}
	p := history.PolicyFor(b)
	p.Faults = faults
	start := time.Now()
	ops := r.Ops()
	fs := history.Check(ops, p)
	if d := r.Dropped(); d > 0 {
		// A history missing its end would show losses that are only unrecorded receipts: the
		// checkers judge nothing, and the spec's result is unknown (the reports read the entry),
		// not a pass - unless the spec fails anyway.
		AddReportEntry(evidence.UnknownEntry, ReportEntryVisibilityFailureOrVerbose, evidence.HistoryFull(len(ops), d))
		return
	}
	AddReportEntry("history check", ReportEntryVisibilityFailureOrVerbose,
		fmt.Sprintf("%d calls checked in %s (faults allowed: %v): %d anomalies", len(ops), since(start), faults, len(fs)))
	if len(fs) > 0 {
		// The anomalies and the failure as data, where the spec fails (attachHistory adds the
		// calls): the findings group by the record, not by the text below.
		AddReportEntry(evidence.AnomaliesEntry, ReportEntryVisibilityNever, history.Anomalies(fs))
		AddReportEntry(evidence.FailureEntry, ReportEntryVisibilityNever, history.AnomalyFailure(fs))
		Fail(history.Report(r.Started(), fs, 5))
	}
}
