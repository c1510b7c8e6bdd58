package reports

import (
	"bytes"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/pubsub-conformance/harness/specs/catalogue"
)

func TestMarkdown(t *testing.T) {
	m := fixtureMatrix(t)
	var buf bytes.Buffer
	if err := Markdown(&buf, m, Options{}); err != nil {
		t.Fatal(err)
	}
	md := buf.String()
	for _, s := range []string{
		"| ID | Level | Behaviour | kafka | pulsar | python | memory (reference) |",
		"| D2 | MUST | a message sent right after Consumer() returns is delivered | ❌ fail",
		"Timed out after 0.050s: message never arrived",
		"⏭️ skip: backend lacks retention-expiry",
		"➖ not run: not run: BeforeSuite failed: start broker",
		"| kafka | local | kafka 4.1.0 | kafka 6.2s | 1m16s |",
		"reference backend, not a conformance result",
		"**pulsar** BeforeSuite failed: start broker",
		"`bootstrap=127.0.0.1:40123`",
	} {
		if !strings.Contains(md, s) {
			t.Errorf("markdown lacks %q:\n%s", s, md)
		}
	}
	// Every row of the matrix table has the same number of columns.
	for _, l := range strings.Split(md, "\n") {
		if strings.HasPrefix(l, "| D") || strings.HasPrefix(l, "| A") || strings.HasPrefix(l, "| T") {
			if n := strings.Count(strings.ReplaceAll(l, `\|`, ""), "|"); n != 8 {
				t.Errorf("%d pipes in %q", n, l)
			}
		}
	}
}

var ansi = regexp.MustCompile("\x1b\\[[0-9;]*m")

func TestTerminal(t *testing.T) {
	m := fixtureMatrix(t)
	path := filepath.Join(t.TempDir(), "b.yaml")
	writeFile(t, path, fixtureBaseline)
	b, err := ReadBaseline(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, colour := range []bool{false, true} {
		var buf bytes.Buffer
		if err := Terminal(&buf, m, Options{Color: colour, Baseline: b}); err != nil {
			t.Fatal(err)
		}
		out := buf.String()
		if !colour && ansi.MatchString(out) {
			t.Error("colour codes without Color")
		}
		if colour && !ansi.MatchString(out) {
			t.Error("no colour codes with Color")
		}
		plain := ansi.ReplaceAllString(out, "")
		for _, l := range strings.Split(plain, "\n") {
			if n := utf8.RuneCountInString(l); n > 120 {
				t.Errorf("line of %d columns: %q", n, l)
			}
		}
		for _, s := range []string{"ID   Behaviour", "(memory)", "kafka D2 FAIL: Timed out after 0.050s: message never arrived",
			"kafka T1 SKIP: capability transient-replay", "pulsar 8 behaviours NOT-RUN: not run: BeforeSuite failed", // one line per cause
			"pulsar BeforeSuite FAILED: start broker", "provider local, broker kafka 4.1.0, startup kafka 6.2s",
			"FAIL 50ms !p"} {
			if !strings.Contains(plain, s) {
				t.Errorf("terminal lacks %q:\n%s", s, plain)
			}
		}
	}
}

func TestHTMLSelfContained(t *testing.T) {
	m := fixtureMatrix(t)
	var buf bytes.Buffer
	if err := HTML(&buf, m, Options{}); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	for _, bad := range []string{"http://", "https://", "<script", "<link", "@import", "url("} {
		if strings.Contains(page, bad) {
			t.Errorf("page is not self-contained: contains %q", bad)
		}
	}
	for _, r := range m.Rows {
		if !strings.Contains(page, `data-id="`+r.Key+`"`) {
			t.Errorf("row %s missing", r.Key)
		}
	}
}

func TestTerminalManyBackends(t *testing.T) {
	base, err := ReadRun("testdata/ginkgo-basic.xml")
	if err != nil {
		t.Fatal(err)
	}
	var runs []*Run
	for _, l := range []string{"kafka", "pulsar", "pulsar-persistent", "memory~nack-noop", "memory~ready-late",
		"memory~unsubscribe-on-close", "memory~drop-after-ack", "python-adapter", "nats"} {
		r := *base
		r.Label = l
		runs = append(runs, &r)
	}
	m := Build(runs)
	var buf bytes.Buffer
	if err := Terminal(&buf, m, Options{}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, l := range strings.Split(out, "\n") {
		if n := utf8.RuneCountInString(l); n > 120 {
			t.Errorf("line of %d columns: %q", n, l)
		}
	}
	if n := strings.Count(out, "ID   Behaviour"); n < 2 {
		t.Errorf("%d tables for 9 backends, want them split:\n%s", n, out)
	}
	if !strings.Contains(out, "nats") || !strings.Contains(out, "memory~unsubs") {
		t.Errorf("a backend is missing:\n%s", out)
	}
}

// A cell the run did not select is no difference from the baseline: no !p on a focused run's
// other rows, while a real difference keeps its mark.
func TestNotSelectedIsNoBaselineDifference(t *testing.T) {
	run := &Run{File: "ginkgo-kafka.json", Label: "kafka", Meta: &Meta{Backend: "kafka"}, Cases: []Case{
		{ID: "D1", Status: Skip, NotSelected: true, Message: `not selected by this run's filter --label-filter="id:D2"`},
		{ID: "D2", Status: Fail, Message: "lost"},
	}}
	m := Build([]*Run{run})
	b := &Baseline{Backends: map[string]map[string]Accepted{"kafka": {"D1": {Result: Pass}, "D2": {Result: Pass}}}}
	var term, md bytes.Buffer
	if err := Terminal(&term, m, Options{Baseline: b}); err != nil {
		t.Fatal(err)
	}
	if err := Markdown(&md, m, Options{Baseline: b}); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(term.String(), " !p"); n != 1 {
		t.Errorf("%d cells marked !p, want 1 (D2):\n%s", n, term.String())
	}
	if n := strings.Count(md.String(), "(baseline: pass)"); n != 1 {
		t.Errorf("%d cells marked (baseline: pass), want 1 (D2):\n%s", n, md.String())
	}
}

func terminalOf(t *testing.T, m *Matrix, o Options) string {
	t.Helper()
	var buf bytes.Buffer
	if err := Terminal(&buf, m, o); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// The terminal splits backends over as many tables as it takes, each with as many columns as
// fit beside a readable behaviour column (24): 12 backends at width 80 and cells of 12 are 4
// tables of 3. Every table's rule is as long as its header line.
func TestTerminalTablesFitTheirWidth(t *testing.T) {
	var runs []*Run
	for i := range 12 {
		runs = append(runs, &Run{File: fmt.Sprint(i), Label: fmt.Sprintf("b%02d", i), Cases: []Case{{ID: "D1", Status: Pass}}})
	}
	out := terminalOf(t, Build(runs), Options{Width: 80})
	lines := strings.Split(out, "\n")
	tables := 0
	for i, l := range lines {
		if !strings.HasPrefix(l, "ID   Behaviour") {
			continue
		}
		tables++
		if n := strings.Count(l, " b"); n != 3 {
			t.Errorf("table %d has %d columns, want 3: %q", tables, n, l)
		}
		if utf8.RuneCountInString(lines[i+1]) != utf8.RuneCountInString(l) {
			t.Errorf("rule %q under header %q: want as long", lines[i+1], l)
		}
		if utf8.RuneCountInString(l) > 80 || strings.Trim(lines[i+1], "-") != "" {
			t.Errorf("header %q / rule %q", l, lines[i+1])
		}
	}
	if tables != 4 {
		t.Errorf("%d tables, want 4:\n%s", tables, out)
	}
	// No backends: one empty table, not nothing.
	if out := terminalOf(t, Build(nil, "D1"), Options{}); !strings.HasPrefix(out, "ID   Behaviour") {
		t.Errorf("a matrix without backends:\n%s", out)
	}
}

// What the terminal says of a column: its counts and what is known of it (no empty "; "), its
// verdict and how many causes its failures have (none said for none), a line per setup failure
// each cause once; cell durations only where they fit whole and mean something; the catalogue
// title of a catalogue row, the name of a foreign one; the baseline's legend only with a
// baseline; no blank lines doubled.
func TestTerminalSaysWhatIsKnown(t *testing.T) {
	echo := "SynchronizedBeforeSuite failed on Ginkgo parallel process #1\x1b[0m"
	runs := []*Run{
		{File: "a", Label: "clean", Cases: []Case{{ID: "D1", Status: Pass, Duration: 1500 * time.Millisecond}, {Container: "foreign", Text: "case", Status: Pass}}},
		{File: "b", Label: "meta", SuiteSeconds: 1.5, Meta: &Meta{Backend: "meta"}, Cases: []Case{{ID: "D1", Status: Pass, Duration: 90 * time.Second},
			{ID: "D2", Status: NotRun, Message: "stopped", Duration: time.Second}, {ID: "D3", Status: Skip, NotSelected: true, Message: "not selected by x", Duration: time.Second},
			{Setup: true, NodeType: "AfterSuite", Status: Fail, Message: "cleanup failed"}, {Setup: true, NodeType: "AfterSuite", Status: Fail, Message: echo}}},
		{File: "c", Label: "echoes", Cases: []Case{{ID: "D1", Status: Fail, Message: "lost"}, {ID: "D2", Status: Fail, Message: "lost"},
			{Setup: true, NodeType: "SynchronizedBeforeSuite", Status: Fail, Message: echo}}},
	}
	d1, _ := catalogue.Lookup("D1")
	out := terminalOf(t, Build(runs), Options{Width: 200})
	for _, want := range []string{
		"\nclean: 2 pass, 0 fail, 0 skip, 2 not run\nclean: TrustGraph's contract: conforms; 0 SHOULD failures (2 MUST without a result: skipped, not run or not selected)\n",
		"meta: 1 pass, 0 fail, 1 skip, 2 not run; suite 1.5s\n",
		"echoes: TrustGraph's contract: 2 MUST failures; 0 SHOULD failures (2 MUST without a result: skipped, not run or not selected); the failures have 1 cause\n",
		"echoes SynchronizedBeforeSuite FAILED: SynchronizedBeforeSuite failed on Ginkgo parallel process #1\n",
		"meta AfterSuite FAILED: cleanup failed\n",
		"echoes finding #1 (2 specs, first D1): assertion: lost\n    blocks D1 D2\n",
		"D1   " + d1.Title[:20], "     foreign case",
		"PASS 1.5s", "PASS 1m30s", " -- ", " n/s ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("terminal lacks %q:\n%s", want, out)
		}
	}
	for _, unwant := range []string{"-- 1s", "n/s 1s", "the failures have 0", "; \n", "meta AfterSuite FAILED: SynchronizedBeforeSuite failed on", "\n\n\n", "!p/!s/!f", "failing calls: \n"} {
		if strings.Contains(out, unwant) {
			t.Errorf("terminal has %q:\n%s", unwant, out)
		}
	}
	// A duration that does not fit whole beside the word and the baseline's mark is left out.
	b := &Baseline{Backends: map[string]map[string]Accepted{"meta": {"D1": {Result: Fail}}}}
	out = terminalOf(t, Build(runs), Options{Baseline: b, Width: 200})
	if !strings.Contains(out, "PASS !f ") || strings.Contains(out, "PASS !f 1") {
		t.Errorf("cell with a mark:\n%s", out)
	}
	if !strings.Contains(out, "(!p/!s/!f: differs from the accepted baseline result pass/skip/fail)") {
		t.Errorf("no baseline legend:\n%s", out)
	}
}

// Behaviours not run for one cause: listed when a few, counted when more than three.
func TestTerminalNotRunGroups(t *testing.T) {
	cases := func(n int) []Case {
		var cs []Case
		for i := 1; i <= n; i++ {
			cs = append(cs, Case{ID: fmt.Sprintf("D%d", i), Status: NotRun, Message: "stopped"})
		}
		return cs
	}
	out := terminalOf(t, Build([]*Run{{File: "a", Label: "three", Cases: cases(3)}, {File: "b", Label: "four", Cases: cases(4)}}), Options{})
	for _, want := range []string{"three D1 D2 D3 NOT-RUN: stopped", "four 4 behaviours NOT-RUN: stopped"} {
		if !strings.Contains(out, want) {
			t.Errorf("terminal lacks %q:\n%s", want, out)
		}
	}
}

// Column labels: the start they share is dropped only when two or more columns have labels too
// long for their cells; a finding with its failing calls names them.
func TestTerminalLabelPrefixAndCalls(t *testing.T) {
	header := func(labels ...string) string {
		var runs []*Run
		for _, l := range labels {
			runs = append(runs, &Run{File: l, Label: l, Cases: []Case{{ID: "D1", Status: Pass}}})
		}
		return strings.SplitN(terminalOf(t, Build(runs), Options{}), "\n", 2)[0]
	}
	if h := header("trustgraph-k", "trustgraph-p"); strings.HasPrefix(h, "(columns:") {
		t.Errorf("labels that fit (12 runes) keep their start: %q", h)
	}
	if h := header("trustgraph-kafka-sync"); strings.HasPrefix(h, "(columns:") {
		t.Errorf("one column keeps its whole label: %q", h)
	}
	if h := header("trustgraph-kafka-sync", "trustgraph-pulsar-x"); h != "(columns: trustgraph-…)" {
		t.Errorf("two long labels: %q", h)
	}
	if got := sharedPrefix([]string{"kafka-x+isolated", "kafka-x"}); got != "kafka-" {
		t.Errorf("sharedPrefix of a label and a shorter one: %q", got)
	}
	if got := sharedPrefix([]string{"-ab", "-ac"}); got != "-" {
		t.Errorf("sharedPrefix up to a leading '-': %q", got)
	}
	if got := midTruncate("kafka-123456", 12); got != "kafka-123456" {
		t.Errorf("midTruncate of a label that fits exactly: %q", got)
	}
	if truncate("abc", 0) != "" {
		t.Errorf("truncate to 0: %q", truncate("abc", 0))
	}
	send := "Unexpected error:\n    <*errors.errorString | 0xc1>: \n    producer.send('flow:tg:x'): broker down\noccurred"
	out := terminalOf(t, Build([]*Run{{File: "a", Label: "k", Cases: []Case{failCase("D1", send), failCase("D2", send)}}}), Options{})
	if !strings.Contains(out, "    blocks D1 D2; failing calls: producer.send x2\n") {
		t.Errorf("finding's calls:\n%s", out)
	}
}

// The markdown: a finding's number only on cells of a finding of several specs, a cell's
// duration after its word, setup failures and settings sections only when there are any.
func TestMarkdownSaysWhatIsKnown(t *testing.T) {
	m := Build([]*Run{{File: "a", Label: "k", Meta: &Meta{Backend: "k", Settings: map[string]any{"KAFKA_X": "1"}}, Cases: []Case{
		{ID: "D1", Status: Fail, Message: "lost"}, {ID: "D2", Status: Pass, Duration: 1200 * time.Millisecond}}},
		{File: "b", Label: "p", Cases: []Case{{ID: "D1", Status: Pass}, {Setup: true, NodeType: "BeforeSuite", Status: Fail, Message: "no broker"}}}})
	var buf bytes.Buffer
	if err := Markdown(&buf, m, Options{}); err != nil {
		t.Fatal(err)
	}
	md := buf.String()
	for _, want := range []string{"| ✅ pass 1.2s |", "❌ fail: lost |", "## Suite setup failures\n\n- **p** BeforeSuite failed: no broker\n", "## Backend settings\n\n- **k**: `KAFKA_X=1`\n"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "finding #") || strings.Contains(md, "- **p**: ``") {
		t.Errorf("markdown:\n%s", md)
	}
	buf.Reset()
	if err := Markdown(&buf, Build([]*Run{{File: "a", Label: "k", Cases: []Case{{ID: "D1", Status: Pass}}}}), Options{}); err != nil {
		t.Fatal(err)
	}
	if md := buf.String(); strings.Contains(md, "## Suite setup failures") || strings.Contains(md, "## Backend settings") || strings.Contains(md, "| ✅ pass |") == false {
		t.Errorf("markdown of a clean run:\n%s", md)
	}
}

// The HTML page: a foreign row is named by its key, a passing cell has no cause, a failure its
// cause and its full message when the message is only its first line, the entries of a
// behaviour with several, the baseline's note only with a baseline.
func TestHTMLCells(t *testing.T) {
	m := Build([]*Run{{File: "a", Label: "k", Cases: []Case{
		{ID: "D1", Status: Pass},
		{ID: "D2", Status: Fail, Message: "lost m3", Detail: "lost m3\n\nhistory: 7 calls"},
		{ID: "D3", Status: Fail, Message: "dup", Detail: "dup"},
		{ID: "D7", Text: "on cancel", Status: Fail, Message: "late"}, {ID: "D7", Text: "on deadline", Status: Pass},
		{Container: "foreign", Text: "case", Status: Skip, Message: "no reason"},
	}}})
	var buf bytes.Buffer
	if err := HTML(&buf, m, Options{}); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	for _, want := range []string{`<td class="title">foreign case`, `<span class="cause">lost m3</span>`, "<pre>lost m3\n\nhistory: 7 calls</pre>",
		"<summary>2 entries</summary>", `<span class="reason">no reason</span>`} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if n := strings.Count(page, "<summary>full failure message</summary>"); n != 1 {
		t.Errorf("%d full failure messages, want 1 (D2's; D3's is its first line)", n)
	}
	if n := strings.Count(page, " entries</summary>"); n != 1 {
		t.Errorf("%d entry lists, want D7's", n)
	}
	if strings.Contains(page, "Cells that differ from the accepted baseline") || strings.Count(page, `<span class="cause">`) != 3 {
		t.Errorf("page: a baseline note without a baseline, or not one cause per failed cell (D2, D3, D7)")
	}
	buf.Reset()
	if err := HTML(&buf, m, Options{Baseline: &Baseline{Backends: map[string]map[string]Accepted{"k": {"D1": {Result: Fail}}}}}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "Cells that differ from the accepted baseline") || !strings.Contains(buf.String(), `<span class="baseline">baseline: fail</span>`) {
		t.Errorf("page with a baseline lacks its note")
	}
}
