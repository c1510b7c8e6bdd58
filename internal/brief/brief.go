// Package brief shortens diagnostics for the places that show them in one line or a few: error
// messages of a failed setup, report cells, the broker log tail attached to a failed spec.
package brief

import (
	"os"
	"strings"
)

// OneLine collapses every run of white space in s (newlines included) into one space and keeps
// at most max bytes of the start, marking a cut with "...". max <= 0 means no limit.
func OneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if max > 0 && len(s) > max {
		s = s[:max] + "..."
	}
	return s
}

// OneLineEnd is OneLine keeping the end of s instead: for process output, whose last lines
// say why it stopped.
func OneLineEnd(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if max > 0 && len(s) > max {
		s = "..." + s[len(s)-max:]
	}
	return s
}

// TailFile returns the last n lines of the file at path ("" when it is unreadable or empty). It
// reads at most the last 256 KiB, dropping the first, probably partial, line of what it read.
func TailFile(path string, n int) string {
	if path == "" || n <= 0 {
		return ""
	}
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return ""
	}
	const maxRead = 256 << 10
	off := max(st.Size()-maxRead, 0)
	buf := make([]byte, st.Size()-off)
	if _, err := f.ReadAt(buf, off); err != nil || len(buf) == 0 {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(buf), "\n"), "\n")
	if off > 0 && len(lines) > 1 {
		lines = lines[1:]
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
