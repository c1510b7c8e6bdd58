package reports

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2/reporters"
	"github.com/onsi/ginkgo/v2/types"

	"github.com/pubsub-conformance/harness/internal/evidence"
)

// recordCase is a failed spec of our own runs: its one-line cause and its failure record.
func recordCase(id, message string, f evidence.Failure) Case {
	return Case{ID: id, Status: Fail, Message: message, Detail: message + "\n\nhistory of contract calls:\n(text no tool reads)", Failure: &f}
}

var (
	goTimeout      = "receive from flow:tg:a2-3e9aaf-p1-108: timeout (context deadline exceeded)"
	adapterTimeout = "Receive#7: adapter tg (pid 2958) did not answer within the deadline: timeout"
)

// Our runs' failures group by their records' fields: the same call owed the same thing with
// the same code is one cause however a backend words its error, and what the history owed
// the call (its context) names the finding - RabbitMQ's no-replay reads as a new earliest
// subscription that got nothing sent before it, not as a bare Receive timeout.
func TestFindingsGroupByTheFailureRecord(t *testing.T) {
	noReplay := evidence.Failure{Kind: evidence.KindHang, Call: "Receive", Context: "on a new earliest subscription, for messages sent before it", Code: "timeout"}
	reopened := evidence.Failure{Kind: evidence.KindHang, Call: "Receive", Context: "on a reopened subscription", Code: "timeout"}
	nacked := evidence.Failure{Kind: evidence.KindHang, Call: "Receive", Context: "after Nack", Code: "timeout"}
	withErr := func(f evidence.Failure, err string) evidence.Failure { f.Error = err; return f }
	run := &Run{File: "ginkgo-rabbitmq.json", Label: "rabbitmq", Cases: []Case{
		recordCase("D6", "the confirmed message never arrived", withErr(noReplay, goTimeout)),
		recordCase("T2", "flow messages sent before any subscription must reach a new earliest subscriber", withErr(noReplay, adapterTimeout)),
		recordCase("L2", "the message sent before the first subscription: "+goTimeout, withErr(noReplay, goTimeout)),
		recordCase("A2", "unacked m2 must come again after reopen", withErr(reopened, goTimeout)),
		recordCase("A3", "unacked message must come again", withErr(reopened, adapterTimeout)),
		recordCase("A1", "nacked a1 must come again", withErr(nacked, goTimeout)),
		recordCase("D3", "history checkers found 1 lost", evidence.Failure{Kind: evidence.KindAnomaly, Anomaly: "lost", Call: "Receive", Seq: 9}),
		recordCase("G1", "history checkers found 2 lost", evidence.Failure{Kind: evidence.KindAnomaly, Anomaly: "lost", Call: "Ack", Seq: 4}),
		recordCase("R6", "send after restart", evidence.Failure{Kind: evidence.KindError, Call: "Send", Code: "closed", Error: "send on a closed channel", Seq: 3}),
		recordCase("L1", "a fresh topic request:tg:l1-73c229-p2-129 must not exist before CreateTopic", evidence.Failure{Kind: evidence.KindAssertion}),
		recordCase("L5", "a fresh topic must not exist", evidence.Failure{Kind: evidence.KindAssertion}),
	}}
	m := Build([]*Run{run})
	fs := m.Findings(0)
	byFirst := map[string]Finding{}
	for _, f := range fs {
		byFirst[f.First] = f
	}
	want := map[string]struct {
		ids, clue string
	}{
		// L2's own line shows the error: it shows the finding first (Direct)
		"L2": {"D6 T2 L2", "hang: Receive on a new earliest subscription, for messages sent before it: nothing arrived before the deadline"},
		"A2": {"A2 A3", "hang: Receive on a reopened subscription: nothing arrived before the deadline"},
		"D3": {"D3 G1", "anomaly: the history checkers found lost"},
		"L1": {"L1 L5", "TopicExists is true for a topic never created"},
		"A1": {"A1", "hang: Receive after Nack: nothing arrived before the deadline"},
		"R6": {"R6", "error: Send: closed: send on a closed channel"},
	}
	if len(fs) != len(want) {
		t.Errorf("%d findings, want %d: %s", len(fs), len(want), findingLines(fs))
	}
	for first, w := range want {
		f, ok := byFirst[first]
		if !ok {
			t.Errorf("no finding first shown by %s: %s", first, findingLines(fs))
			continue
		}
		if got := strings.Join(f.IDs, " "); got != w.ids {
			t.Errorf("finding of %s: specs %s, want %s", first, got, w.ids)
		}
		if got := f.Cause.Kind + ": " + f.Cause.Clue; !strings.HasPrefix(got, w.clue) && !strings.HasPrefix(f.Cause.Clue, w.clue) {
			t.Errorf("finding of %s: %q, want %q", first, got, w.clue)
		}
	}
	// The calls a finding lists are the calls, without the context the cause already names.
	if calls := byFirst["L2"].CallList(); calls != "Receive x3" {
		t.Errorf("L2's finding lists calls %q, want Receive x3", calls)
	}
	// The text of a failure with a record is not read: the same record under another text is
	// the same cause.
	a := causeOfRecord(withErr(nacked, goTimeout), "one text")
	b := causeOfRecord(withErr(nacked, adapterTimeout), "another text entirely")
	if a.Key != b.Key {
		t.Errorf("one record, two keys: %q, %q", a.Key, b.Key)
	}
	if c := causeOfRecord(withErr(reopened, goTimeout), "x"); c.Key == a.Key {
		t.Errorf("after Nack and on a reopened subscription share the key %q", c.Key)
	}
}

// The record travels in our Ginkgo JSON (a report entry) and our JUnit (a property).
func TestFailureRecordRoundTrip(t *testing.T) {
	rec := evidence.Failure{Kind: evidence.KindHang, Call: "Receive", Context: "after Nack", Code: "timeout", Error: goTimeout, Seq: 7}
	s := resultSpec("A1", types.SpecStateFailed, 1, "nacked a1 must come again: "+goTimeout)
	s.ReportEntries = types.ReportEntries{
		{Name: evidence.FailureEntry, Visibility: types.ReportEntryVisibilityNever, Value: types.WrapEntryValue(rec)},
		{Name: evidence.HistoryEntry, Visibility: types.ReportEntryVisibilityNever, Value: types.WrapEntryValue(evidence.History{Calls: 1, Ops: []evidence.Op{{Seq: 7, Call: "Receive", Code: "timeout"}}})},
	}
	s.ReportEntries = SetResult(s.ReportEntries, NewResult(s, "kafka", types.SuiteConfig{}))
	rep := types.Report{SuiteDescription: "pub/sub conformance - kafka", SpecReports: types.SpecReports{s}}
	dir := t.TempDir()
	jsonPath, junitPath := filepath.Join(dir, "ginkgo-kafka.json"), filepath.Join(dir, "junit-kafka.xml")
	if err := reporters.GenerateJSONReport(rep, jsonPath); err != nil {
		t.Fatal(err)
	}
	if err := reporters.GenerateJUnitReportWithConfig(rep, junitPath, reporters.JunitReportConfig{OmitLeafNodeType: true}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{jsonPath, junitPath} {
		run, err := ReadRun(p)
		if err != nil {
			t.Fatal(err)
		}
		c := run.Cases[0]
		if c.Failure == nil || *c.Failure != rec {
			t.Errorf("%s: record %+v, want %+v", filepath.Base(p), c.Failure, rec)
		}
		if strings.Contains(c.Detail, "pubsub-") {
			t.Errorf("%s: the detail for people shows the data entries:\n%s", filepath.Base(p), c.Detail)
		}
	}
}

// The HTML page's failure detail has the whole history and broker log, where the console (the
// entry's representation) has their digests; read from the typed value and from the JSON alike.
func TestFailureDetailHasTheWholeEvidence(t *testing.T) {
	h := evidence.History{Evidence: "history", Calls: 500}
	for i := 1; i <= 500; i++ {
		h.Ops = append(h.Ops, evidence.Op{Seq: i, Client: "kafka#1", Call: "Send", Summary: "2B \"m\""})
	}
	var log []string
	for i := 1; i <= 120; i++ {
		log = append(log, "broker line")
	}
	s := resultSpec("D3", types.SpecStateFailed, 1, "lost m3")
	s.ReportEntries = types.ReportEntries{
		{Name: evidence.HistoryEntry, Visibility: types.ReportEntryVisibilityFailureOrVerbose, Value: types.WrapEntryValue(h)},
		{Name: "broker log", Visibility: types.ReportEntryVisibilityFailureOrVerbose, Value: types.WrapEntryValue(evidence.NewLog(strings.Join(log, "\n")))},
	}
	if n := strings.Count(s.ReportEntries[0].StringRepresentation(), "\n"); n > 12 {
		t.Errorf("the console's history has %d lines", n)
	}
	path := filepath.Join(t.TempDir(), "ginkgo-kafka.json")
	if err := reporters.GenerateJSONReport(types.Report{SuiteDescription: "x", SpecReports: types.SpecReports{s}}, path); err != nil {
		t.Fatal(err)
	}
	run, err := ReadRun(path)
	if err != nil {
		t.Fatal(err)
	}
	for name, d := range map[string]string{"typed": failureDetail(s), "json": run.Cases[0].Detail} {
		if n := strings.Count(d, `Send          2B "m"`); n != 500 {
			t.Errorf("%s: %d calls in the detail, want 500", name, n)
		}
		if n := strings.Count(d, "broker line"); n != 120 {
			t.Errorf("%s: %d broker log lines in the detail, want 120", name, n)
		}
	}
}

// A failure of our own runs (it carries a result: Case.Backend) without a record is an
// assertion on its one-line cause; its text is not read. A foreign one is read from its text.
func TestOurFailureWithoutARecordIsNotReadFromItsText(t *testing.T) {
	detail := unexpected("start a private broker", "producer.send('flow:tg:x')", "broker down")
	ours := Case{ID: "R4", Status: Fail, Backend: "kafka", Message: "start a private broker: producer.send('flow:tg:x'): broker down", Detail: detail}
	m := Build([]*Run{{File: "ginkgo-kafka.json", Label: "kafka", Cases: []Case{ours}}})
	if c := cellCause(m.Cell("R4", "kafka")); c.Kind != evidence.KindAssertion || c.Call != "" {
		t.Errorf("ours without a record: %+v, want an assertion with no call", c)
	}
	ours.Backend = ""
	m = Build([]*Run{{File: "junit-foreign.xml", Label: "foreign", Cases: []Case{ours}}})
	if c := cellCause(m.Cell("R4", "foreign")); c.Kind != "error" || c.Call != "producer.send" {
		t.Errorf("foreign: %+v, want the error of producer.send read from the text", c)
	}
}

// What makes two failures of our own runs one finding is their records' grouping fields -
// kind, call, context, code, anomaly - and nothing else: a record that differs from another in
// any one of them is another finding, one that differs only in its error's text, its call's
// place in the history or its spec's words is the same one.
func TestFindingKeyIsEveryGroupingFieldAndNoOther(t *testing.T) {
	base := evidence.Failure{Kind: evidence.KindError, Call: "Send", Context: "after Nack", Code: "closed", Error: "send on a closed channel", Seq: 3}
	anomaly := evidence.Failure{Kind: evidence.KindAnomaly, Call: "Receive", Anomaly: "lost", Seq: 9}
	key := func(f evidence.Failure, msg string) string { return causeOfRecord(f, msg).Key }
	apart := map[string]evidence.Failure{}
	set := func(name string, f evidence.Failure, edit func(*evidence.Failure)) {
		edit(&f)
		apart[name] = f
	}
	set("kind", base, func(f *evidence.Failure) { f.Kind = evidence.KindHang })
	set("call", base, func(f *evidence.Failure) { f.Call = "Receive" })
	set("context", base, func(f *evidence.Failure) { f.Context = "on a reopened subscription" })
	set("no context", base, func(f *evidence.Failure) { f.Context = "" })
	set("code", base, func(f *evidence.Failure) { f.Code = "internal" })
	for name, f := range apart {
		if key(f, "x") == key(base, "x") {
			t.Errorf("a record with another %s shares the key %q", name, key(base, "x"))
		}
	}
	other := anomaly
	other.Anomaly = "unexpected duplicate"
	if key(other, "x") == key(anomaly, "x") {
		t.Errorf("two anomalies share the key %q", key(anomaly, "x"))
	}
	same := base
	same.Error, same.Seq = "channel closed by the broker", 17
	if key(same, "another spec's words") != key(base, "x") {
		t.Errorf("one record's grouping fields, two keys: %q and %q", key(same, "y"), key(base, "x"))
	}
	lastCall := anomaly
	lastCall.Call, lastCall.Seq = "Ack", 4
	if key(lastCall, "y") != key(anomaly, "x") {
		t.Errorf("an anomaly is keyed by the call that shows it last: %q and %q", key(lastCall, "y"), key(anomaly, "x"))
	}
	// Two assertions are apart by what the spec said, one anomaly is not an assertion.
	a, b := evidence.Failure{Kind: evidence.KindAssertion}, evidence.Failure{Kind: evidence.KindAssertion}
	if key(a, "D4: out of order") == key(b, "D4: duplicates") || key(a, "the history checkers found lost") == key(anomaly, "x") {
		t.Error("assertions grouped by something other than their words")
	}
}

// A failure entry that is not a record - no kind, or a value of another shape - is no record,
// in the JSON (a report entry) and in our JUnit (a property): the case is then read as a
// failure without one, never grouped under an empty kind.
func TestAFailureEntryWithoutAKindIsNoRecord(t *testing.T) {
	for _, v := range []string{`{"call": "Send", "code": "closed"}`, `{"kind": "hang", "seq": "x"}`, `"hang"`} {
		e := types.ReportEntry{Name: evidence.FailureEntry, Value: types.ReportEntryValue{AsJSON: v}}
		if f := failureRecord(types.ReportEntries{e}); f != nil {
			t.Errorf("entry %s: record %+v", v, f)
		}
		x := xmlCase{Properties: []xmlProperty{{Name: evidence.FailureEntry, Value: v}}}
		if f := x.failureProperty(); f != nil {
			t.Errorf("property %s: record %+v", v, f)
		}
	}
	good := `{"kind": "hang", "call": "Receive", "code": "timeout"}`
	e := types.ReportEntry{Name: evidence.FailureEntry, Value: types.ReportEntryValue{AsJSON: good}}
	x := xmlCase{Properties: []xmlProperty{{Name: "other", Value: good}, {Name: evidence.FailureEntry, Value: good}}}
	if f := failureRecord(types.ReportEntries{{Name: "other", Value: e.Value}, e}); f == nil || f.Call != "Receive" {
		t.Errorf("entry: %+v", f)
	}
	if f := x.failureProperty(); f == nil || f.Call != "Receive" {
		t.Errorf("property: %+v", f)
	}
}

// An anomaly's finding names the call that showed it last when the record has one, and only
// then.
func TestAnomalyClueNamesItsLastCall(t *testing.T) {
	with := causeOfRecord(evidence.Failure{Kind: evidence.KindAnomaly, Anomaly: "lost", Call: "Ack"}, "x")
	without := causeOfRecord(evidence.Failure{Kind: evidence.KindAnomaly, Anomaly: "lost"}, "x")
	if with.Clue != "the history checkers found lost (last evidence: Ack)" || without.Clue != "the history checkers found lost" {
		t.Errorf("clues %q and %q", with.Clue, without.Clue)
	}
	if with.Key != without.Key || with.Call != "" {
		t.Errorf("keys %q and %q, call %q: the anomaly is the cause, not its last call", with.Key, without.Key, with.Call)
	}
}
