package reports

import (
	"strings"
	"testing"
)

// An interrupted run (Ctrl-C): the specs that never ran, or were cut off, are NotRun with the
// reason, not "skipped, no reason given"; a spec skipped without a reason (a filter) stays a
// skip; the matrix says at the top that the run was interrupted.
func TestInterruptedRun(t *testing.T) {
	run, err := ReadRun("testdata/ginkgo-interrupted.xml")
	if err != nil {
		t.Fatal(err)
	}
	if run.Interrupted != "Interrupted by User" {
		t.Errorf("Interrupted = %q, want Ginkgo's reason", run.Interrupted)
	}
	m := Build([]*Run{run})
	want := map[string]struct {
		status  Status
		message string
	}{
		"D1": {Pass, ""},
		"T3": {NotRun, "the run was interrupted while it ran (after 20s)"},
		"L1": {NotRun, "the run was interrupted"},
		"T1": {NotRun, "the run was interrupted (1 of 2 entries ran)"}, // a half-run table is no pass
		"S1": {Skip, ""},
	}
	for _, r := range m.Rows {
		w, ok := want[r.Key]
		if !ok {
			t.Errorf("unexpected row %q", r.Key)
			continue
		}
		if c := r.Cells[0]; c.Status != w.status || c.Message != w.message {
			t.Errorf("%s = %s %q, want %s %q", r.Key, c.Status, c.Message, w.status, w.message)
		}
	}
	note := m.InterruptedNote()
	if !strings.Contains(note, "INTERRUPTED") || !strings.Contains(note, "kafka: Interrupted by User") {
		t.Errorf("note = %q", note)
	}
	for name, render := range map[string]func(*strings.Builder) error{
		"markdown": func(sb *strings.Builder) error { return Markdown(sb, m, Options{}) },
		"terminal": func(sb *strings.Builder) error { return Terminal(sb, m, Options{}) },
		"html":     func(sb *strings.Builder) error { return HTML(sb, m, Options{}) },
	} {
		var sb strings.Builder
		if err := render(&sb); err != nil {
			t.Fatal(err)
		}
		head := sb.String()
		if len(head) > 3000 {
			head = head[:3000]
		}
		if !strings.Contains(head, "INTERRUPTED RUN") {
			t.Errorf("%s does not say at the top that the run was interrupted", name)
		}
		if strings.Contains(sb.String(), "not run: not run") {
			t.Errorf("%s repeats 'not run'", name)
		}
	}
	if got := InterruptedReason([]string{"Detected pending specs", "Suite Timeout Elapsed"}); got != "Suite Timeout Elapsed" {
		t.Errorf("InterruptedReason(timeout) = %q", got)
	}
	if got := InterruptedReason([]string{"Detected pending specs and --fail-on-pending is set"}); got != "" {
		t.Errorf("a run that only failed is not interrupted, got %q", got)
	}
}

// A complete run has no note and its matrix is unchanged.
func TestCompleteRunNotInterrupted(t *testing.T) {
	run, err := ReadRun("testdata/ginkgo-basic.xml")
	if err != nil {
		t.Fatal(err)
	}
	if run.Interrupted != "" || Build([]*Run{run}).InterruptedNote() != "" {
		t.Errorf("complete run read as interrupted: %q", run.Interrupted)
	}
}

// The same through our runs' own format: a real Ginkgo JSON report of a memory run stopped with
// SIGINT (trimmed), as the suite writes it (suite.WithResults: a result on every spec).
func TestInterruptedGinkgoJSON(t *testing.T) {
	run, err := ReadRun("testdata/ginkgo-interrupted.json")
	if err != nil {
		t.Fatal(err)
	}
	if run.Interrupted != "Interrupted by User" {
		t.Errorf("Interrupted = %q", run.Interrupted)
	}
	got := map[string]*Cell{}
	m := Build([]*Run{run})
	for _, r := range m.Rows {
		got[r.Key] = r.Cells[0]
	}
	for key, want := range map[string]Status{"A2": Pass, "A5": NotRun, "G2": NotRun, "S1": Skip} {
		if c := got[key]; c == nil || c.Status != want {
			t.Errorf("%s = %+v, want %s", key, c, want)
		}
	}
	if c := got["A5"]; c != nil && !strings.HasPrefix(c.Message, "the run was interrupted while it ran (after ") {
		t.Errorf("A5 message = %q", c.Message)
	}
	if c := got["S1"]; c != nil && len(c.Reasons) != 0 {
		t.Errorf("S1 (left out by --label-filter) must stay a plain skip, got %v", c.Reasons)
	}
	if !strings.Contains(m.InterruptedNote(), ": Interrupted by User") {
		t.Errorf("note = %q", m.InterruptedNote())
	}
}
