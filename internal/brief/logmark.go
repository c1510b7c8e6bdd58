package brief

import (
	"fmt"
	"os"
	"strings"
)

// LogMark is where a log file ended at one moment (a spec's start), so that what the broker
// wrote after it - while the spec ran - can be attached to a failed spec, instead of the last
// lines of a log that other specs, processes and backends share.
type LogMark struct {
	path string
	off  int64
}

// MarkLog marks the current end of the file at path ("" or an unreadable file marks nothing:
// Since then returns "").
func MarkLog(path string) LogMark {
	if path == "" {
		return LogMark{}
	}
	st, err := os.Stat(path)
	if err != nil {
		return LogMark{path: path}
	}
	return LogMark{path: path, off: st.Size()}
}

// maxSince bounds what Since reads: a spec that ran for minutes beside busy ones.
const maxSince = 256 << 10

// Since returns at most the last n lines written after the mark, with a first line saying how
// many were left out when there were more. A file that shrank since the mark was replaced (a
// new broker start): all of it counts as written since.
func (m LogMark) Since(n int) string {
	if m.path == "" || n <= 0 {
		return ""
	}
	f, err := os.Open(m.path)
	if err != nil {
		return ""
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return ""
	}
	from := m.off
	if st.Size() < from {
		from = 0
	}
	partial := false
	if st.Size()-from > maxSince {
		from, partial = st.Size()-maxSince, true
	}
	buf := make([]byte, st.Size()-from)
	if len(buf) == 0 {
		return ""
	}
	if _, err := f.ReadAt(buf, from); err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(buf), "\n"), "\n")
	if partial && len(lines) > 1 {
		lines = lines[1:] // the first line read is probably cut
	}
	if len(lines) <= n {
		return strings.Join(lines, "\n")
	}
	left := "more"
	if !partial {
		left = fmt.Sprint(len(lines) - n)
	}
	return fmt.Sprintf("(%s earlier lines written during the spec left out)\n%s", left, strings.Join(lines[len(lines)-n:], "\n"))
}
