package reports

import (
	"strings"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/pubsub-conformance/harness/internal/evidence"
)

// The evidence our own runs attach to a failed spec as data (internal/evidence): the failure
// record the findings group by, read from Ginkgo's JSON (a report entry) and our JUnit (a
// property, the entry's JSON).

// failureRecord is the evidence.Failure among a spec's report entries; nil when it has none.
func failureRecord(entries types.ReportEntries) *evidence.Failure {
	for _, e := range entries {
		if e.Name != evidence.FailureEntry {
			continue
		}
		if f, ok := e.Value.GetRawValue().(evidence.Failure); ok {
			return &f
		}
		var f evidence.Failure
		if evidence.Decode(e.Value.GetRawValue(), e.Value.AsJSON, &f) == nil && f.Kind != "" {
			return &f
		}
	}
	return nil
}

// failureProperty is the evidence.Failure among a JUnit testcase's properties; nil when none.
func (x xmlCase) failureProperty() *evidence.Failure {
	for _, p := range x.Properties {
		if p.Name != evidence.FailureEntry {
			continue
		}
		var f evidence.Failure
		if evidence.Decode(nil, p.Value, &f) == nil && f.Kind != "" {
			return &f
		}
	}
	return nil
}

// causeOfRecord is the cause of a failure of our own runs, from its record: grouped by its
// fields - kind, call and what the history owed the call (Context), the error's contract code,
// the anomaly - never by re-reading the failure's text. message is the failure's one-line
// cause: an assertion's clue, and whether the spec shows the cause in it (Direct).
//
// The record's error text only names the cause for people (normalised), and a known family
// of one root cause (causeFamilies: a topic that was never created, TopicExists that lies)
// names and groups the finding whatever call showed it, as for foreign reports.
func causeOfRecord(f evidence.Failure, message string) Cause {
	c := Cause{Kind: f.Kind, Call: f.Call} // the finding lists calls; the clue has the context
	call := f.Call
	if f.Context != "" {
		call += " " + f.Context
	}
	var key string
	switch f.Kind {
	case evidence.KindAnomaly:
		c.Clue = "the history checkers found " + f.Anomaly
		if f.Call != "" {
			c.Clue += " (last evidence: " + f.Call + ")"
		}
		key = "anomaly: " + f.Anomaly
		c.Call = "" // the anomaly is the cause, not the call that shows it last
		c.Direct = true
	case evidence.KindHang, evidence.KindError:
		what := strings.TrimSpace(loggedClue(f.Error)) // what an adapter's client logged meanwhile
		if what == "" {
			what = f.Error
		}
		switch {
		case f.Kind == evidence.KindHang && f.Call == "Receive":
			// however a backend words it, a Receive that timed out got nothing
			c.Clue = call + ": nothing arrived before the deadline"
		case f.Kind == evidence.KindHang:
			c.Clue = call + ": no answer before the deadline: " + what
		default:
			c.Clue = call + ": " + f.Code + ": " + what
		}
		key = f.Kind + ": " + call + " (" + f.Code + ")"
		c.Direct = strings.Contains(message, strings.TrimSuffix(truncate(f.Error, quotedLen), "…"))
	default: // an assertion: what the spec said
		c.Kind, c.Clue, c.Direct = evidence.KindAssertion, message, true
		key = ""
	}
	if c.inFamily() {
		return c
	}
	if key == "" {
		key = c.Kind + ": " + c.Clue
	}
	c.Key = key
	return c
}

// quotedLen is how much of a call's error a failure line must show to show the cause.
const quotedLen = 60
