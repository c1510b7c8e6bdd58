package brief

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestOneLine(t *testing.T) {
	if got := OneLine("a\n  b\tc\n", 0); got != "a b c" {
		t.Errorf("OneLine = %q", got)
	}
	if got := OneLine("abcdef", 3); got != "abc..." {
		t.Errorf("OneLine cut = %q", got)
	}
	if got := OneLineEnd("abc\ndef", 3); got != "...def" {
		t.Errorf("OneLineEnd cut = %q", got)
	}
}

func TestTailFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "log")
	if err := os.WriteFile(p, []byte("1\n2\n3\n4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := TailFile(p, 2); got != "3\n4" {
		t.Errorf("TailFile = %q", got)
	}
	if got := TailFile(p, 10); got != "1\n2\n3\n4" {
		t.Errorf("TailFile(all) = %q", got)
	}
	if TailFile(filepath.Join(t.TempDir(), "none"), 3) != "" || TailFile("", 3) != "" || TailFile(p, 0) != "" {
		t.Error("missing file, empty path or n=0 must give \"\"")
	}
	big := strings.Repeat("x", 300<<10) + "\nlast\n"
	if err := os.WriteFile(p, []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := TailFile(p, 5); got != "last" {
		t.Errorf("TailFile of a big file = %.20q; want the partial first line dropped", got)
	}
}
