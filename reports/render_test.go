package reports

import (
	"bytes"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
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
