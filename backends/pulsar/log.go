package pulsar

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	plog "github.com/apache/pulsar-client-go/pulsar/log"
)

// newLogger routes the client library's logging to w (Config.Log). nil discards it: the
// library logs every (re)connection at info level, which would drown a spec's output.
// Debug lines are dropped even with a writer: they are per-message and only slow a run.
func newLogger(w io.Writer) plog.Logger {
	if w == nil {
		return plog.DefaultNopLogger()
	}
	return &writerLogger{out: &lockedWriter{w: w}}
}

// lockedWriter serialises writes: the client logs from many goroutines.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) line(level, fields, msg string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, _ = fmt.Fprintf(l.w, "%s pulsar-client %s %s%s\n", time.Now().UTC().Format("15:04:05.000"), level, msg, fields)
}

type writerLogger struct {
	out    *lockedWriter
	fields plog.Fields
}

func (l *writerLogger) with(f plog.Fields) *writerLogger {
	merged := make(plog.Fields, len(l.fields)+len(f))
	for k, v := range l.fields {
		merged[k] = v
	}
	for k, v := range f {
		merged[k] = v
	}
	return &writerLogger{out: l.out, fields: merged}
}

func (l *writerLogger) fieldString() string {
	if len(l.fields) == 0 {
		return ""
	}
	keys := make([]string, 0, len(l.fields))
	for k := range l.fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, " %s=%v", k, l.fields[k])
	}
	return b.String()
}

func (l *writerLogger) log(level string, args ...any) {
	l.out.line(level, l.fieldString(), fmt.Sprint(args...))
}

func (l *writerLogger) logf(level, format string, args ...any) {
	l.out.line(level, l.fieldString(), fmt.Sprintf(format, args...))
}

func (l *writerLogger) SubLogger(f plog.Fields) plog.Logger  { return l.with(f) }
func (l *writerLogger) WithFields(f plog.Fields) plog.Entry  { return l.with(f) }
func (l *writerLogger) WithField(k string, v any) plog.Entry { return l.with(plog.Fields{k: v}) }
func (l *writerLogger) WithError(err error) plog.Entry       { return l.with(plog.Fields{"error": err}) }
func (l *writerLogger) Debug(...any)                         {}
func (l *writerLogger) Info(args ...any)                     { l.log("INFO", args...) }
func (l *writerLogger) Warn(args ...any)                     { l.log("WARN", args...) }
func (l *writerLogger) Error(args ...any)                    { l.log("ERROR", args...) }
func (l *writerLogger) Debugf(string, ...any)                {}
func (l *writerLogger) Infof(format string, args ...any)     { l.logf("INFO", format, args...) }
func (l *writerLogger) Warnf(format string, args ...any)     { l.logf("WARN", format, args...) }
func (l *writerLogger) Errorf(format string, args ...any)    { l.logf("ERROR", format, args...) }
