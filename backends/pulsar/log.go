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

// handshakeFailure is how the client library reports a broker that refused its CONNECT (a bad
// token, above all). The library only logs it and retries until its operation timeout, so the
// backend watches the log for it to fail fast with ErrAuth.
const handshakeFailure = "Failed to establish connection with broker"

// certFailure says that the client could not verify the broker's TLS certificate (a wrong
// PULSAR_TLS_TRUST_CERTS_FILE): the library logs "Failed to connect to broker." with the
// x509 error and retries as for an unreachable broker, so the backend watches for this too.
func certFailure(msg string) bool {
	return strings.Contains(msg, "Failed to connect to broker") &&
		containsAny(msg, "x509:", "failed to verify certificate", "certificate signed by unknown authority")
}

// newLogger routes the client library's logging to w (Config.Log). nil discards it: the
// library logs every (re)connection at info level, which would drown a spec's output.
// Debug lines are dropped even with a writer: they are per-message and only slow a run.
// hook, when not nil, sees every warning and error line, written or not.
func newLogger(w io.Writer, hook func(msg string)) plog.Logger {
	if w == nil && hook == nil {
		return plog.DefaultNopLogger()
	}
	l := &writerLogger{hook: hook}
	if w != nil {
		l.out = &lockedWriter{w: w}
	}
	return l
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
	out    *lockedWriter // nil discards
	hook   func(string)
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
	return &writerLogger{out: l.out, hook: l.hook, fields: merged}
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
	l.emit(level, fmt.Sprint(args...))
}

func (l *writerLogger) logf(level, format string, args ...any) {
	l.emit(level, fmt.Sprintf(format, args...))
}

func (l *writerLogger) emit(level, msg string) {
	if l.hook != nil && level != "INFO" {
		l.hook(msg + l.fieldString()) // the fields carry the error (WithError)
	}
	if l.out != nil {
		l.out.line(level, l.fieldString(), msg)
	}
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
