package brief

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLogMarkSinceReturnsOnlyLinesWrittenAfterTheMark(t *testing.T) {
	path := filepath.Join(t.TempDir(), "broker.log")
	write := func(s string, flag int) {
		f, err := os.OpenFile(path, flag|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteString(s); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	write("before 1\nbefore 2\n", os.O_TRUNC)
	m := MarkLog(path)
	if got := m.Since(10); got != "" {
		t.Fatalf("nothing written since the mark: got %q", got)
	}
	write("during 1\nduring 2\nduring 3\n", os.O_APPEND)
	if got := m.Since(10); got != "during 1\nduring 2\nduring 3" {
		t.Fatalf("Since(10) = %q", got)
	}
	got := m.Since(2)
	if !strings.HasPrefix(got, "(1 earlier lines written during the spec left out)\n") || !strings.HasSuffix(got, "during 2\nduring 3") {
		t.Fatalf("Since(2) = %q", got)
	}
	// A new broker start replaced the file: everything in it is from after the mark.
	write("new\n", os.O_TRUNC)
	if got := m.Since(10); got != "new" {
		t.Fatalf("after truncation: %q", got)
	}
}

func TestLogMarkOfNoFileIsEmpty(t *testing.T) {
	if got := MarkLog("").Since(10); got != "" {
		t.Fatalf("no path: %q", got)
	}
	m := MarkLog(filepath.Join(t.TempDir(), "missing.log"))
	if got := m.Since(10); got != "" {
		t.Fatalf("missing file: %q", got)
	}
}
