// Package history records the contract calls made on Backends and on what they hand out, and
// checks such a record for anomalies (check.go): Jepsen's Kafka taxonomy restated for the
// contract of package backends.
//
// A Recorder is one history: the suite keeps one per spec and every client a spec opens records
// into it (Wrap), so that a message sent on one client and received on another is one story. It
// is plain data and imports no test framework, so the checkers are pure functions of it and can
// be tested on hand-made histories.
package history

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pubsub-conformance/harness/backends"
)

// Kind is the contract call an Op records.
type Kind string

// The recorded calls: the methods of backends.Backend, Producer and Consumer.
const (
	Open          Kind = "Open" // a client joined the history (not a contract call: no error, no duration)
	CloseBackend  Kind = "Close"
	NewProducer   Kind = "Producer"
	NewConsumer   Kind = "Consumer"
	CreateTopic   Kind = "CreateTopic"
	DeleteTopic   Kind = "DeleteTopic"
	TopicExists   Kind = "TopicExists"
	EnsureTopic   Kind = "EnsureTopic"
	Retention     Kind = "Retention"
	Send          Kind = "Send"
	CloseProducer Kind = "CloseProducer"
	Receive       Kind = "Receive"
	Ack           Kind = "Ack"
	Nack          Kind = "Nack"
	CloseConsumer Kind = "CloseConsumer"
	Kill          Kind = "Kill" // backends.Killer: the client dropped without any Close
)

// Op is one recorded call.
type Op struct {
	Seq    int    // order in which calls started, from 1
	Client string // the client (Backend) the call was made on, e.g. "kafka#2"
	// Handle names the producer or consumer the call was made on ("p1", "c3"; for
	// NewProducer/NewConsumer the one it returned), "" for Backend calls.
	Handle string
	Kind   Kind

	Topic        string // the call's topic (for producer and consumer calls, theirs)
	Subscription string // NewConsumer and the consumer's calls
	Position     backends.Position
	Mode         backends.Mode // as resolved for the topic's class (ModeDefault when the topic is invalid)

	// Key identifies a message: its payload when short, else a digest of it (Send, and a
	// Receive that returned a delivery). Summary describes it for people.
	Key     string
	Summary string
	// Delivery is the ID of the delivery received (Receive) or settled (Ack, Nack).
	Delivery string

	Start, End time.Time
	Deadline   time.Time // the call's context deadline; zero when it had none
	Err        error     // nil for success
	Result     string    // what a successful query returned ("exists=true", "7m0s")
}

// Failed reports whether the call returned an error.
func (o Op) Failed() bool { return o.Err != nil }

// keyLimit is how long a payload may be to be its own key.
const keyLimit = 64

// KeyOf identifies a message payload in a history: the payload itself when short, else its
// length and a digest. Two messages with the same payload are the same message to the checkers.
func KeyOf(payload []byte) string {
	if len(payload) <= keyLimit {
		return string(payload)
	}
	sum := sha256.Sum256(payload)
	return fmt.Sprintf("%dB:%s", len(payload), hex.EncodeToString(sum[:8]))
}

// Summarise describes a message: size, a short quoted prefix, property names (values may be
// long; names say enough).
func Summarise(payload []byte, props map[string]string) string {
	p, more := payload, ""
	if len(p) > 24 {
		p, more = p[:24], "..."
	}
	s := fmt.Sprintf("%dB %q%s", len(payload), p, more)
	if len(props) > 0 {
		keys := make([]string, 0, len(props))
		for k := range props {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		s += " props=" + strings.Join(keys, ",")
	}
	return s
}

// DefaultLimit is how many calls a Recorder keeps: enough for the specs that move the most
// messages (F5 records about 10,000 calls), small enough (about 300 bytes a call) to keep in
// memory for every spec of a run.
const DefaultLimit = 200_000

// LimitEnv sets how many calls a spec's history keeps (default DefaultLimit): a small limit
// makes the histories of the specs that move many messages overflow, so their result is
// unknown (docs/results.md).
const LimitEnv = "PUBSUB_HISTORY_LIMIT"

// LimitFromEnv is the number of calls a spec's history keeps as getenv sets it (LimitEnv):
// DefaultLimit when unset or empty, else a whole number of at least 1; anything else is an
// error naming the setting and its value. The specs read it for every spec's Recorder, the
// preflight of make's targets (suite/cmd/preflight) before a run starts.
func LimitFromEnv(getenv func(string) string) (int, error) {
	v := getenv(LimitEnv)
	if v == "" {
		return DefaultLimit, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%s=%q: want a number of calls, at least 1", LimitEnv, v)
	}
	return n, nil
}

// Recorder is one history. Safe for concurrent use.
type Recorder struct {
	mu      sync.Mutex
	start   time.Time
	ops     []Op
	seq     int
	clients map[string]int
	handles int
	limit   int
	dropped int
}

// NewRecorder returns an empty history that keeps up to DefaultLimit calls (the first ones:
// the checkers need a history's beginning to judge its end; a full Recorder says so).
func NewRecorder() *Recorder {
	return &Recorder{start: time.Now(), clients: map[string]int{}, limit: DefaultLimit}
}

// SetLimit changes how many calls r keeps (tests).
func (r *Recorder) SetLimit(n int) {
	r.mu.Lock()
	r.limit = n
	r.mu.Unlock()
}

// Started is when the history began.
func (r *Recorder) Started() time.Time { return r.start }

// begin reserves the next sequence number; the op is added by end.
func (r *Recorder) begin() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seq++
	return r.seq
}

func (r *Recorder) end(op Op) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.ops) >= r.limit {
		r.dropped++
		return
	}
	r.ops = append(r.ops, op)
}

func (r *Recorder) clientName(name string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.clients[name]++
	return fmt.Sprintf("%s#%d", name, r.clients[name])
}

func (r *Recorder) handle(prefix string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.handles++
	return fmt.Sprintf("%s%d", prefix, r.handles)
}

// Ops returns the calls recorded so far that have ended, in the order they started.
func (r *Recorder) Ops() []Op {
	r.mu.Lock()
	ops := append([]Op(nil), r.ops...)
	r.mu.Unlock()
	sort.Slice(ops, func(i, j int) bool { return ops[i].Seq < ops[j].Seq })
	return ops
}

// Dropped says how many calls did not fit (0 for a complete history).
func (r *Recorder) Dropped() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.dropped
}

// Len is how many calls were recorded.
func (r *Recorder) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.ops)
}

// Format renders the last calls of r, at most last of them (all when last <= 0), one line
// each: start time, offset from the history's start, client and handle, call, arguments,
// result, duration. The calls nearest a failure are the last ones.
func (r *Recorder) Format(last int) string {
	ops := r.Ops()
	var sb strings.Builder
	skipped := 0
	if last > 0 && len(ops) > last {
		skipped = len(ops) - last
		ops = ops[skipped:]
	}
	fmt.Fprintf(&sb, "history: %d calls", len(ops)+skipped)
	if skipped > 0 {
		fmt.Fprintf(&sb, ", the last %d shown", len(ops))
	}
	if d := r.Dropped(); d > 0 {
		fmt.Fprintf(&sb, ", %d more not recorded (the history is full)", d)
	}
	sb.WriteString("\n")
	for _, op := range ops {
		sb.WriteString(FormatOp(r.start, op))
		sb.WriteString("\n")
	}
	return strings.TrimRight(sb.String(), "\n")
}

// FormatOp renders one call as a line (see Format).
func FormatOp(origin time.Time, op Op) string {
	who := op.Client
	if op.Handle != "" {
		who += "/" + op.Handle
	}
	res := "ok"
	switch {
	case op.Kind == Open:
		res = op.Result
	case op.Err != nil:
		res = fmt.Sprintf("ERROR %s: %v", backends.Code(op.Err), op.Err)
	case op.Result != "":
		res = op.Result
	}
	return fmt.Sprintf("%s %+9.3fs %-18s %-13s %s -> %s (%s)", op.Start.Format("15:04:05.000"),
		op.Start.Sub(origin).Seconds(), who, op.Kind, args(op), res, op.End.Sub(op.Start).Round(10*time.Microsecond))
}

func args(op Op) string {
	var parts []string
	switch op.Kind {
	case NewConsumer:
		parts = append(parts, fmt.Sprintf("%q sub=%q position=%s mode=%s", op.Topic, op.Subscription, op.Position, op.Mode))
	case NewProducer, CreateTopic, DeleteTopic, TopicExists, EnsureTopic, Retention:
		parts = append(parts, fmt.Sprintf("%q", op.Topic))
	case Send:
		parts = append(parts, op.Summary)
	case Receive:
		if op.Err == nil {
			parts = append(parts, "id="+op.Delivery, op.Summary)
		}
	case Ack, Nack:
		parts = append(parts, "id="+op.Delivery, op.Summary)
	}
	if !op.Deadline.IsZero() && (op.Kind == Receive || op.Kind == Send) {
		parts = append(parts, fmt.Sprintf("deadline=%+.3fs", op.Deadline.Sub(op.Start).Seconds()))
	}
	return strings.Join(parts, " ")
}
