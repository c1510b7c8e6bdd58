package reports

import (
	"strings"
	"testing"
)

// Hand-made failures in the shapes the suite reports them (Gomega's "Unexpected error:", an
// assertion listing errors, the adapters' "meanwhile ... logged:" transcript, the history of
// contract calls), each with its own topic names, durations and ports.
const (
	hangConsumer = `Consumer(flow:tg:d3-3e9aaf-p1-4, d3-3e9aaf-p1-5) failed after 29.952s
Unexpected error:
    <*remote.wireError | 0x1005feea2ba0>: 
    ensure_topic + create_consumer('flow:tg:d3-3e9aaf-p1-4'): TrustGraph's call did not return within 29.9s; meanwhile TrustGraph's client logged: aiokafka.cluster: Topic tg.flow.d3-3e9aaf-p1-4 not found in cluster metadata
    {msg: "..."}
occurred

at github.com/pubsub-conformance/harness/specs/delivery.go:71`
	hangSend = `send message 1 of 5 ("r5-0") failed after 29.951s
Unexpected error:
    <*remote.wireError | 0x1005fecbed20>: 
    producer.send('request:tg:r5-77aa01-p4-18'): TrustGraph's call did not return within 29.8s; meanwhile TrustGraph's client logged: aiokafka.cluster: Topic tg.request.r5-77aa01-p4-18 not found in cluster metadata
occurred`
	unknownTopic = `prepare L9: create a consumer
Unexpected error:
    <*remote.wireError | 0xc000123>: 
    create_consumer: TrustGraph raised aiokafka.errors.UnknownTopicOrPartitionError: [Error 3] UnknownTopicOrPartitionError (at aiokafka/client.py:612 in _wait_on_metadata) (internal)
occurred`
	listed = `response: calls failed
Expected
    <[]string | len:2, cap:2>: [
        "d2-s1-r0: Consumer() failed after 29.993s: ensure_topic + create_consumer('response:tg:d2-73c229-p2-320'): TrustGraph's call did not return within 29.9s; meanwhile TrustGraph's client logged: aiokafka.cluster: Topic tg.response.d2-73c229-p2-320 not found in cluster metadata",
        "d2-s6-r0: Consumer() failed after 29.994s: ...",
    ]
to be empty`
	freshExists1 = "a fresh topic request:tg:l1-73c229-p2-129 must not exist before CreateTopic\nExpected\n    <bool>: true\nto be false"
	freshExists2 = "a fresh topic must not exist\nExpected\n    <bool>: true\nto be false"
	authFailure  = `admin CreateTopic with bad credentials failed after 316ms with "create_topic: KafkaConnectionError: Unable to bootstrap from [('127.0.0.1', 20094)]"; expected an error wrapping backends.ErrAuth`
)

func failCase(id, detail string) Case {
	return Case{ID: id, Status: Fail, Message: cause(detail), Detail: detail}
}

func findingRuns() []*Run {
	return []*Run{{File: "ginkgo-tg.json", Label: "tg", Meta: &Meta{Backend: "tg"}, Cases: []Case{
		{ID: "D1", Status: Pass},
		failCase("D2", listed), // first in the catalogue, but its own line does not show the cause
		failCase("D3", hangConsumer),
		failCase("R5", hangSend),
		failCase("L1", freshExists1),
		failCase("L2", freshExists2),
		failCase("L9", unknownTopic),
		failCase("S1", authFailure),
	}}}
}

func TestFindingsGroupOneCause(t *testing.T) {
	m := Build(findingRuns())
	fs := m.Findings(0)
	if len(fs) != 3 {
		for _, f := range fs {
			t.Logf("%s", f.Summary())
		}
		t.Fatalf("%d findings, want 3 (topic missing, TopicExists true, the auth failure)", len(fs))
	}
	top := fs[0]
	if got := strings.Join(top.IDs, " "); got != "D2 D3 R5 L9" {
		t.Errorf("finding 1 blocks %q, want D2 D3 R5 L9", got)
	}
	if top.N != 1 || top.First != "D3" || !top.Must {
		t.Errorf("finding 1: N %d, first %s (want D3: the first whose own failure line shows the cause), must %v", top.N, top.First, top.Must)
	}
	if !strings.Contains(top.Cause.Clue, "Topic <topic> not found in cluster metadata") || top.Cause.Kind != "hang" {
		t.Errorf("finding 1 cause %+v", top.Cause)
	}
	if got := top.CallList(); !strings.Contains(got, "ensure_topic + create_consumer") || !strings.Contains(got, "producer.send") {
		t.Errorf("finding 1 calls %q", got)
	}
	if got := strings.Join(fs[1].IDs, " "); got != "L1 L2" || !strings.Contains(fs[1].Key, "TopicExists is true") {
		t.Errorf("finding 2 %q key %q, want L1 L2 under TopicExists", got, fs[1].Key)
	}
	if got := strings.Join(fs[2].IDs, " "); got != "S1" {
		t.Errorf("finding 3 %q, want S1", got)
	}

	var term, md, html strings.Builder
	for _, err := range []error{Terminal(&term, m, Options{}), Markdown(&md, m, Options{}), HTML(&html, m, Options{})} {
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range []string{"tg finding #1 (4 specs, first D3): hang: topic missing", "blocks D2 D3 R5 L9", "FAIL#1", "FAIL#2", "tg S1 FAIL: admin CreateTopic"} {
		if !strings.Contains(term.String(), s) {
			t.Errorf("terminal lacks %q:\n%s", s, term.String())
		}
	}
	if strings.Count(term.String(), "aiokafka.cluster") != 1 {
		t.Errorf("terminal: the shared cause must read once, as one finding:\n%s", term.String())
	}
	for _, s := range []string{"## Findings", "### tg: 3 findings behind 7 failed specs", "| 1 | MUST | 4: D2 D3 R5 L9 | D3 |", "❌ fail (finding #1)"} {
		if !strings.Contains(md.String(), s) {
			t.Errorf("markdown lacks %q:\n%s", s, md.String())
		}
	}
	for _, s := range []string{`data-finding="1"`, `<span class="finding">finding #1</span>`} {
		if !strings.Contains(html.String(), s) {
			t.Errorf("html lacks %q", s)
		}
	}
}

func TestCauseOfNormalises(t *testing.T) {
	a := CauseOf("Consumer(flow:tg:x-abcdef-p1-2, x-abcdef-p1-3) failed after 30.001s\nUnexpected error:\n    <*errors.errorString | 0xc0001>: \n    kafka: consumer of tg.flow.x-abcdef-p1-2 at 127.0.0.1:39001: timeout after 30s")
	b := CauseOf("Consumer(notify:tg:y-012345-p6-88, y-012345-p6-89) failed after 1m2.5s\nUnexpected error:\n    <*errors.errorString | 0xc0abc>: \n    kafka: consumer of tg.notify.y-012345-p6-88 at 127.0.0.1:41234: timeout after 62s")
	if a.Key != b.Key {
		t.Errorf("same failure, other names and numbers: keys differ\n%q\n%q", a.Key, b.Key)
	}
	if a.Kind != "hang" || strings.Contains(a.Key, "abcdef") || strings.Contains(a.Key, "39001") {
		t.Errorf("key %q (kind %s) keeps a run-specific token", a.Key, a.Kind)
	}
	c := CauseOf("Consumer(flow:tg:x-abcdef-p1-2, x-abcdef-p1-3) failed after 1ms\nUnexpected error:\n    <*errors.errorString | 0xc0001>: \n    kafka: invalid topic")
	if c.Key == a.Key || c.Kind != "error" {
		t.Errorf("another error must be another cause: %q (%s)", c.Key, c.Kind)
	}
	if x, y := CauseOf("D4: out of order"), CauseOf("D4: duplicates"); x.Key == y.Key {
		t.Errorf("two assertions, one key %q", x.Key)
	}
}

func TestCauseOfReadsTheHistory(t *testing.T) {
	const reopened = `unacked m2 (a2-1) must come again after reopen; 0 arrived [] within 29.981s; the loop ended with: receive: nothing arrived before the deadline
Expected
    <[]string | len:0, cap:0>: []
to contain element matching
    <string>: a2-1

history of contract calls:
history: 5 calls
00:08:43.363    +0.005s tg#1               Open           -> client opened (the run's broker) (0s)
00:08:43.364    +0.005s tg#1/c1            Consumer      "flow:tg:a2-3e9aaf-p1-108" sub="a2-3e9aaf-p1-109" position=latest mode=shared -> ok (41.26ms)
00:08:43.442    +0.083s tg#1/c1            CloseConsumer  -> ok (5.87ms)
00:08:43.448    +0.089s tg#1/c3            Consumer      "flow:tg:a2-3e9aaf-p1-108" sub="a2-3e9aaf-p1-109" position=latest mode=shared -> ok (9.59ms)
00:08:43.457    +0.099s tg#1/c3            Receive       deadline=+30.000s -> ERROR timeout: receive: nothing arrived before the deadline (29.98102s)`
	const nacked = `nacked a5-0 must come again; 0 arrived [] within 29.978s; the loop ended with: receive: nothing arrived before the deadline

history of contract calls:
history: 3 calls
00:08:43.364    +0.005s tg#1/c1            Consumer      "flow:tg:a5-3e9aaf-p1-110" sub="a5-3e9aaf-p1-111" position=latest mode=shared -> ok (41.26ms)
00:08:43.400    +0.040s tg#1/c1            Nack          id=c1-1 4B "a5-0" props=seq,tag -> ok (1ms)
00:08:43.457    +0.099s tg#1/c1            Receive       deadline=+30.000s -> ERROR timeout: receive: nothing arrived before the deadline (29.98102s)`
	r := CauseOf(reopened)
	if r.Call != "Receive" || r.Kind != "hang" || !strings.Contains(r.Key, "Receive on a reopened subscription") {
		t.Errorf("reopened: %+v", r)
	}
	// the same Receive timeout in another backend's words is the same cause
	adapter := strings.NewReplacer("receive: nothing arrived before the deadline (29", "Receive#7: adapter tg (pid 2958) did not answer within the deadline: timeout (30",
		"the loop ended with: receive: nothing arrived before the deadline", "the loop ended with: Receive#7: adapter tg (pid 2958) did not answer within the deadline: timeout").Replace(reopened)
	if a := CauseOf(adapter); a.Key != r.Key {
		t.Errorf("an adapter's Receive timeout: key %q, want %q", a.Key, r.Key)
	}
	n := CauseOf(nacked)
	if !strings.Contains(n.Key, "Receive after Nack") || n.Key == r.Key {
		t.Errorf("nacked: %+v", n)
	}
}
