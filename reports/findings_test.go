package reports

import (
	"fmt"
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
	// D2's list names the contract call before the client's ("d2-s1-r0: Consumer() failed ...:
	// ensure_topic + create_consumer(...)"): the first call after the list entry's label.
	if got, want := top.CallList(), "Consumer, create_consumer, ensure_topic + create_consumer, producer.send"; got != want {
		t.Errorf("finding 1 calls %q, want %q", got, want)
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

// The shapes of Gomega's "Unexpected error:" the cause is read from: with or without a
// description before it, the value on its own line or after the type, a message cut short.
func TestCauseOfUnexpectedErrorShapes(t *testing.T) {
	for _, c := range []struct {
		name, failure    string
		kind, call, clue string
	}{
		{"no description (Expect(err).NotTo(HaveOccurred()))",
			"Unexpected error:\n    <*errors.errorString | 0xc000123>: \n    producer.send('flow:tg:x-abcdef-p1-2'): broker down\noccurred",
			"error", "producer.send", "broker down"},
		{"the value after the type",
			"send m1 failed\nUnexpected error:\n    <*errors.errorString | 0xc000123>: producer.send('flow:tg:x'): broker down\noccurred",
			"error", "producer.send", "broker down"},
		{"the description names the call and says it hung, the error does not",
			"Send(flow:tg:x) did not return within 10s\nUnexpected error:\n    <*errors.errorString | 0xc000123>: \n    broker down\noccurred",
			"hang", "Send", "broker down"},
		{"the value two lines on, the description in between",
			"step 3 of 5\nConsumer(flow:tg:x, s) failed\nUnexpected error:\n    <*errors.errorString | 0xc000123>: \n    broker down\noccurred",
			"error", "Consumer", "broker down"},
		{"words after the call's name are the error's own",
			"Unexpected error:\n    <*errors.errorString | 0xc000123>: \n    kafka: produce (partition 3): broker down\noccurred",
			"error", "kafka", "kafka: produce (partition N): broker down"},
		{"cut short after Unexpected error:", "send m1 failed\nUnexpected error:", "assertion", "", "send m1 failed"},
		{"cut short after the type", "send m1 failed\nUnexpected error:\n    <*errors.errorString | 0xc000123>: ", "assertion", "", "send m1 failed"},
		{"only a location", "\n\nat specs/delivery.go:71", "assertion", "", "(no message)"},
	} {
		got := CauseOf(c.failure)
		if got.Kind != c.kind || got.Call != c.call || got.Clue != c.clue {
			t.Errorf("%s: kind %q call %q clue %q; want %q, %q, %q", c.name, got.Kind, got.Call, got.Clue, c.kind, c.call, c.clue)
		}
	}
}

// The same error of two calls is one cause: the calls are listed per finding, not in the key.
func TestCauseOfSameErrorOfTwoCallsIsOneCause(t *testing.T) {
	a := CauseOf("Unexpected error:\n    <*errors.errorString | 0xc1>: \n    producer.send('flow:tg:x-abcdef-p1-2'): broker down\noccurred")
	b := CauseOf("Unexpected error:\n    <*errors.errorString | 0xc2>: \n    create_consumer('flow:tg:y-abcdef-p1-3'): broker down\noccurred")
	if a.Key != b.Key || a.Key != "error: broker down" {
		t.Errorf("keys %q and %q, want both \"error: broker down\"", a.Key, b.Key)
	}
}

// Gomega's "Timed out after 10s." says only that: the description on the next line is the
// cause; any other assertion is its first line alone.
func TestCauseOfAssertionLines(t *testing.T) {
	a := CauseOf("Timed out after 10.001s.\nthe consumer got nothing\nExpected\n    <int>: 0\nto equal 1")
	b := CauseOf("Timed out after 10.001s.\nthe producer was never ready\nExpected\n    <bool>: false\nto be true")
	if a.Key == b.Key || a.Clue != "Timed out after <d>: the consumer got nothing" || a.Kind != "hang" {
		t.Errorf("Eventually failures: %+v and %+v", a, b)
	}
	if c := CauseOf("Failed after 3.2s.\nthe topic still exists"); c.Clue != "Failed after <d>: the topic still exists" {
		t.Errorf("Consistently failure: %+v", c)
	}
	if c := CauseOf("Timed out after 10.001s."); c.Clue != "Timed out after <d>." {
		t.Errorf("a bare timeout: %+v", c)
	}
	if c := CauseOf("D4: out of order\nExpected\n    <int>: 2\nto equal 1"); c.Clue != "D4: out of order" {
		t.Errorf("an assertion's cause is its first line: %+v", c)
	}
}

// What the client logged: up to the end of its line or quote.
func TestLoggedClue(t *testing.T) {
	for in, want := range map[string]string{
		"logged: broker gone":                    "broker gone",
		"x; meanwhile it logged: broker gone\nB": "broker gone",
		`"x: meanwhile it logged: gone", "y"`:    "gone",
		"it logged: \nnext line":                 "",
		"nothing logged":                         "",
	} {
		if got := loggedClue(in); got != want {
			t.Errorf("loggedClue(%q) = %q, want %q", in, got, want)
		}
	}
}

// Findings: a column past the matrix has none; calls are counted across the specs of a
// finding; findings of as many specs come in catalogue order of their first spec.
func TestFindingsCallsAndTies(t *testing.T) {
	sendDown := "Unexpected error:\n    <*errors.errorString | 0xc1>: \n    producer.send('flow:tg:x'): broker down\noccurred"
	m := Build([]*Run{{File: "ginkgo-k.json", Label: "k", Meta: &Meta{Backend: "k"}, Cases: []Case{
		failCase("A3", "A3: acked twice"),
		failCase("D5", "D5: lost one"),
		failCase("D6", sendDown),
		failCase("D7", sendDown),
		failCase("D8", strings.Replace(sendDown, "producer.send('flow:tg:x')", "Consumer(flow:tg:x, s)", 1)),
	}}})
	if fs := m.Findings(1); len(fs) != 0 {
		t.Errorf("column 1 of a one-column matrix: %v", fs)
	}
	fs := m.Findings(0)
	var got []string
	for _, f := range fs {
		got = append(got, fmt.Sprintf("#%d %s [%s]", f.N, strings.Join(f.IDs, " "), f.CallList()))
	}
	want := []string{"#1 D6 D7 D8 [Consumer, producer.send x2]", "#2 D5 []", "#3 A3 []"}
	if strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Errorf("findings %q, want %q", got, want)
	}
	f := fs[0]
	if f.SpecList(3) != "D6 D7 D8" || f.SpecList(2) != "D6 D7 and 1 more" {
		t.Errorf("SpecList(3) %q, SpecList(2) %q", f.SpecList(3), f.SpecList(2))
	}
}

// A cause family takes its own symptoms only: a subscription or a delivery not found is not a
// topic missing on the broker.
func TestCauseFamiliesAreNarrow(t *testing.T) {
	topic := CauseOf("Unexpected error:\n    <*errors.errorString | 0xc1>: \n    producer.send: UnknownTopicOrPartition\noccurred")
	for _, other := range []string{
		"Unexpected error:\n    <*errors.errorString | 0xc1>: \n    consumer.ack: delivery c1-7 not found\noccurred",
		"Unexpected error:\n    <*errors.errorString | 0xc1>: \n    create_consumer: subscription not found\noccurred",
	} {
		if c := CauseOf(other); c.Key == topic.Key || strings.Contains(c.Key, "topic missing") {
			t.Errorf("%q grouped with the topic-missing family: %q", other, c.Key)
		}
	}
}
