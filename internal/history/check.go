package history

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/pubsub-conformance/harness/backends"
)

// The checkers restate Jepsen's Kafka workload taxonomy (jepsen.tests.kafka: lost, duplicate,
// unseen, non-monotonic polls, ...) for this contract. Each is a pure function of a history
// and a Policy; Check runs them all. What the contract allows - the sentences of
// backends/backend.go that let a message come twice or not at all - is the Policy and the
// allowances written into each checker, each with the sentence it rests on.

// Anomaly names a class of finding.
type Anomaly string

// The anomaly classes.
const (
	// Lost: a Send returned nil, at least one subscription was obliged to get the message
	// (C-SUB-2, C-POS-3), none of them ever received it, and one of them received a message
	// sent after that Send returned: it read past it (Jepsen's "lost"; without the read past it
	// is only unseen, which a history that stops reading early cannot tell from a loss).
	Lost Anomaly = "lost"
	// Duplicate: one subscription received a message again with nothing the contract names as
	// a cause of redelivery: no nack (C-NACK-1), no close or kill of the consumer that held it
	// (C-ACK-1, C-CLOSE-1), no change of the subscription's members (a rebalance hands the
	// unacknowledged messages of a leaving or joining member to another), no second or failed
	// Send of it (C-SEND-3), no fault (Policy.Faults).
	Duplicate Anomaly = "unexpected duplicate"
	// AckedRedelivered: a subscription received a message again after an Ack of an earlier
	// delivery of it returned nil (C-ACK-2), the message having been sent once, successfully.
	AckedRedelivered Anomaly = "redelivery of an acked message"
	// NackNotRedelivered: a Nack returned nil and the subscription, read for longer than
	// Policy.NackWithin after it, never received the message again (C-NACK-1).
	NackNotRedelivered Anomaly = "nacked message never redelivered"
	// WrongSubscription: a subscription received a message it must not see: one whose every
	// Send had returned before the subscription's first Consumer call started (one that
	// failed counts: it may have made the subscription, C-SUB-7), on a new subscription at
	// the latest position (C-POS-2), or one sent only to another topic (C-DLV-2).
	WrongSubscription Anomaly = "delivery to a subscription that should not see it"
	// Reordered: one producer's sequential sends (the second started after the first returned
	// nil) reached the only consumer of a subscription out of send order (D4's MUST: one
	// producer, one consumer, send order is kept; nothing nacked, no fault).
	Reordered Anomaly = "per-producer order broken"
	// LateReturn: a Receive returned later than its context's deadline by more than
	// Policy.Grace (C-RECV-1, C-LIFE-5).
	LateReturn Anomaly = "receive outlived its context"
)

// Policy is what a history's circumstances allow.
type Policy struct {
	// Faults: the history spans network cuts, latency, a broker restart or a failover, in which
	// a client may lose its session and the broker hand out again what was not yet
	// acknowledged (C-LIFE-7 asks only that clients reconnect). Unacknowledged messages may then
	// come again without a nack or close, and order is not judged.
	Faults bool
	// TransientReplay and TransientRedelivery are the capabilities of the same names
	// (C-CAP-1, C-CAP-2): without them a non-durable topic keeps nothing for a subscription
	// with no consumer connected, and a nack or reopen of one redelivers nothing.
	TransientReplay, TransientRedelivery bool
	// NackWithin is the bounded delay of C-NACK-1 the checker waits for a redelivery.
	NackWithin time.Duration
	// Grace is how far past its deadline a Receive may return (D7 allows 3 s).
	Grace time.Duration
	// Order judges per-producer order (Reordered).
	Order bool
	// AckCrashBound: an Ack may return before the broker stored it, and a message acked less
	// than this long before its consumer's process died (no Close) may come again (the
	// contract's at-least-once crash allowance, C-ACK-6, backends.AckCrashBound on main).
	AckCrashBound time.Duration
	// MoveWithin: how long after a join or close of a subscription's members the rebalance it
	// starts may still reach a member (at its next heartbeat or poll) and hand it a message
	// again that it received meanwhile (C-ACK-8, the workload's Config.MoveWithin). Only a
	// change that left another member open counts; 0 counts changes between the copies only.
	MoveWithin time.Duration
	// Outages are the periods the broker was out of reach for longer than a client session
	// (a long network cut, reset or pause, a restart): the group may take the session of a
	// member cut off that long, and with it the acks the member had not committed yet. An
	// Ack that returned nil less than AckCrashBound before an outage began, or in its first
	// AckCrashBound (before the client could know), may come again after it began, as after
	// a crash (C-ACK-6).
	Outages []Window
}

// Window is a period of time, Start before End.
type Window struct{ Start, End time.Time }

// DefaultPolicy is the policy of a fault-free history of a backend with every capability.
func DefaultPolicy() Policy {
	return Policy{TransientReplay: true, TransientRedelivery: true,
		NackWithin: 30 * time.Second, Grace: 3 * time.Second, Order: true, AckCrashBound: time.Second,
		MoveWithin: 30 * time.Second}
}

// PolicyFor is DefaultPolicy with b's declared capabilities (backends.Backend.Unsupported).
func PolicyFor(b backends.Backend) Policy {
	p := DefaultPolicy()
	u := b.Unsupported()
	_, noReplay := u[backends.CapTransientReplay]
	_, noRedelivery := u[backends.CapTransientRedelivery]
	p.TransientReplay, p.TransientRedelivery = !noReplay, !noRedelivery
	return p
}

// Finding is one anomaly with the calls that show it.
type Finding struct {
	Anomaly      Anomaly
	Contract     string // the contract sentences it breaks
	Key          string // the message
	Subscription string // the subscription, as topic/name (and the consumer, for unique ones)
	Detail       string
	Ops          []Op // the evidence, in start order
}

func (f Finding) String() string {
	s := fmt.Sprintf("%s [%s]: message %q", f.Anomaly, f.Contract, f.Key)
	if f.Subscription != "" {
		s += " on " + f.Subscription
	}
	return s + ": " + f.Detail
}

// Check runs every checker over ops (a Recorder's Ops) and returns what they found, grouped by
// anomaly in the order of the constants above.
func Check(ops []Op, p Policy) []Finding {
	m := model(ops)
	var out []Finding
	for _, c := range []func(*hist, Policy) []Finding{
		checkLost, checkDuplicates, checkNacks, checkWrongSubscription, checkOrder, checkLate,
	} {
		out = append(out, c(m, p)...)
	}
	return out
}

// Report renders findings for a failure message: a count per anomaly, then each finding with
// its evidence, at most perAnomaly of each class.
func Report(origin time.Time, fs []Finding, perAnomaly int) string {
	if len(fs) == 0 {
		return "no anomalies"
	}
	byKind := map[Anomaly][]Finding{}
	var order []Anomaly
	for _, f := range fs {
		if _, seen := byKind[f.Anomaly]; !seen {
			order = append(order, f.Anomaly)
		}
		byKind[f.Anomaly] = append(byKind[f.Anomaly], f)
	}
	var sb strings.Builder
	var counts []string
	for _, a := range order {
		counts = append(counts, fmt.Sprintf("%d %s", len(byKind[a]), a))
	}
	fmt.Fprintf(&sb, "history checkers found %s", strings.Join(counts, ", "))
	for _, a := range order {
		for i, f := range byKind[a] {
			if i == perAnomaly {
				fmt.Fprintf(&sb, "\n  ... and %d more %s", len(byKind[a])-perAnomaly, a)
				break
			}
			sb.WriteString("\n- " + f.String())
			for _, op := range f.Ops {
				sb.WriteString("\n    " + FormatOp(origin, op))
			}
		}
	}
	return sb.String()
}

// ---- the model a history is read into ----

type consumerInfo struct {
	open   Op
	closed time.Time // start of its Close, Kill or its client's Close; zero while open
	killed time.Time // when its client was killed (backends.Killer), zero if never
	sub    *subInfo
}

// openBeside reports whether a member of s other than c was open at t.
func (s *subInfo) openBeside(c *consumerInfo, t time.Time) bool {
	for _, o := range s.members {
		if o != c && !o.open.End.After(t) && (o.closed.IsZero() || o.closed.After(t)) {
			return true
		}
	}
	return false
}

type subInfo struct {
	key      string // topic/name (#epoch) (/handle for unique)
	topic    string
	name     string
	position backends.Position
	created  Op // the first Consumer call that returned a consumer of it
	// tried are the Consumer calls of its name that failed before created, after the last
	// delete of the topic: each may have made the subscription all the same (C-SUB-7).
	tried   []Op
	durable bool
	members []*consumerInfo
	nacked  bool
	got     map[string][]Op // message key -> Receive ops that returned it, in end order
	recvs   []Op            // every Receive on it
}

type hist struct {
	ops       []Op
	consumers map[string]*consumerInfo // by handle
	subs      []*subInfo
	sends     map[string][]Op // message key -> Send calls (any result), by start
	acks      map[string][]Op // handle+"\x00"+delivery -> Ack calls
	nacks     []Op            // Nack calls that returned nil
	epoch     map[int]int     // Send and Consumer call -> deletes of its topic before it
}

func model(ops []Op) *hist {
	ops = append([]Op(nil), ops...)
	sort.Slice(ops, func(i, j int) bool { return ops[i].Seq < ops[j].Seq })
	h := &hist{ops: ops, consumers: map[string]*consumerInfo{}, sends: map[string][]Op{}, acks: map[string][]Op{}, epoch: map[int]int{}}
	subs := map[string]*subInfo{}
	epoch := map[string]int{} // topic -> successful deletes so far
	clientClosed := map[string]time.Time{}
	clientKilled := map[string]time.Time{}
	tried := map[string][]Op{} // subscription key -> failed Consumer calls not yet followed by one that returned
	for _, op := range ops {
		switch op.Kind {
		case DeleteTopic:
			if op.Err == nil {
				epoch[op.Topic]++
			}
		case CloseBackend, Kill:
			if _, ok := clientKilled[op.Client]; !ok && op.Kind == Kill {
				clientKilled[op.Client] = op.Start
			}
			if _, ok := clientClosed[op.Client]; !ok {
				clientClosed[op.Client] = op.Start
			}
		case NewConsumer:
			h.epoch[op.Seq] = epoch[op.Topic]
			key := fmt.Sprintf("%s/%s", op.Topic, op.Subscription)
			if e := epoch[op.Topic]; e > 0 {
				key += fmt.Sprintf(" (after delete %d)", e)
			}
			if op.Mode == backends.Unique {
				key += "/" + op.Handle
			}
			if op.Err != nil {
				if subs[key] == nil {
					tried[key] = append(tried[key], op)
				}
				continue
			}
			s := subs[key]
			if s == nil {
				durable := true
				if t, err := backends.ParseTopic(op.Topic); err == nil {
					durable = t.Class.Durable()
				}
				s = &subInfo{key: key, topic: op.Topic, name: op.Subscription, position: op.Position,
					created: op, tried: tried[key], durable: durable, got: map[string][]Op{}}
				subs[key] = s
				h.subs = append(h.subs, s)
			}
			c := &consumerInfo{open: op, sub: s}
			s.members = append(s.members, c)
			h.consumers[op.Handle] = c
		case CloseConsumer:
			if c := h.consumers[op.Handle]; c != nil && c.closed.IsZero() {
				c.closed = op.Start
			}
		case Send:
			h.epoch[op.Seq] = epoch[op.Topic]
			h.sends[op.Key] = append(h.sends[op.Key], op)
		case Receive:
			c := h.consumers[op.Handle]
			if c == nil {
				continue
			}
			c.sub.recvs = append(c.sub.recvs, op)
			if op.Err == nil {
				c.sub.got[op.Key] = append(c.sub.got[op.Key], op)
			}
		case Ack:
			h.acks[op.Handle+"\x00"+op.Delivery] = append(h.acks[op.Handle+"\x00"+op.Delivery], op)
		case Nack:
			if op.Err == nil {
				h.nacks = append(h.nacks, op)
				if c := h.consumers[op.Handle]; c != nil {
					c.sub.nacked = true
				}
			}
		}
	}
	for _, c := range h.consumers {
		if t, ok := clientKilled[c.open.Client]; ok && (c.closed.IsZero() || !c.closed.Before(t)) {
			c.killed = t // killed while still open: a crash, no Close
		}
		if t, ok := clientClosed[c.open.Client]; ok && (c.closed.IsZero() || t.Before(c.closed)) {
			c.closed = t
		}
	}
	for _, s := range h.subs {
		for _, ds := range s.got {
			sort.Slice(ds, func(i, j int) bool { return ds[i].End.Before(ds[j].End) })
		}
	}
	return h
}

// okSend is the first Send of key to topic that returned nil.
func (h *hist) okSend(key, topic string) (Op, bool) {
	for _, s := range h.sends[key] {
		if s.Topic == topic && s.Err == nil {
			return s, true
		}
	}
	return Op{}, false
}

// sentOnce reports whether key was sent exactly once: one Send call, and it returned nil. A
// message sent twice may arrive twice, and one whose Send failed may be in the log any number
// of times (C-SEND-3: a Send that timed out or failed on a broken connection may have reached
// the broker; the client library may have written it more than once while retrying), so the
// duplicate and acked-redelivery checkers judge only messages sent once.
func (h *hist) sentOnce(key string) bool {
	return len(h.sends[key]) == 1 && h.sends[key][0].Err == nil
}

// firstSendStart is when the first Send of key started.
func (h *hist) firstSendStart(key string) time.Time { return h.sends[key][0].Start }

// ackedBefore returns the Ack of d that returned nil before t.
func (h *hist) ackedBefore(d Op, t time.Time) (Op, bool) {
	for _, a := range h.acks[d.Handle+"\x00"+d.Delivery] {
		if a.Err == nil && a.End.Before(t) {
			return a, true
		}
	}
	return Op{}, false
}

// sameEpoch reports whether s was created and send made between the same deletes of the topic
// (C-TOP-3: a delete drops the messages and subscriptions before it).
func sameEpoch(h *hist, s *subInfo, send Op) bool {
	return h.epoch[send.Seq] == h.epoch[s.created.Seq]
}

// obliged reports whether s must receive the message that send (returned nil) sent.
func (h *hist) obliged(s *subInfo, send Op, p Policy) bool {
	if s.topic != send.Topic || !sameEpoch(h, s, send) {
		return false
	}
	live := s.created.End.Before(send.Start) // C-SUB-2: sent after Consumer returned
	if !s.durable && !p.TransientReplay {
		// C-CAP-2: without transient replay, only while a consumer is connected: one that
		// returned before the Send and is still open at the end of the history.
		for _, c := range s.members {
			if c.open.End.Before(send.Start) && c.closed.IsZero() {
				return true
			}
		}
		return false
	}
	if live {
		return true
	}
	return s.position == backends.Earliest && s.durable // C-POS-3, within retention
}

func checkLost(h *hist, p Policy) []Finding {
	var out []Finding
	keys := sortedKeys(h.sends)
	for _, k := range keys {
		for _, topic := range topicsOf(h.sends[k]) {
			send, ok := h.okSend(k, topic)
			if !ok {
				continue
			}
			var obliged []*subInfo
			received := false
			for _, s := range h.subs {
				if h.obliged(s, send, p) {
					obliged = append(obliged, s)
					if len(s.got[k]) > 0 {
						received = true
					}
				}
			}
			if len(obliged) == 0 || received {
				continue
			}
			// Read past it: a message whose first Send started after this one returned.
			var past Op
			found := false
			for _, s := range obliged {
				for k2, ds := range s.got {
					if k2 == k || len(h.sends[k2]) == 0 {
						continue
					}
					if h.firstSendStart(k2).After(send.End) && (!found || ds[0].End.Before(past.End)) {
						past, found = ds[0], true
					}
				}
			}
			if !found {
				continue // unseen, not lost: nobody read past it
			}
			names := make([]string, len(obliged))
			for i, s := range obliged {
				names[i] = s.key
			}
			out = append(out, Finding{Anomaly: Lost, Contract: "C-SEND-1, C-SUB-2", Key: k,
				Detail: fmt.Sprintf("its Send returned nil, none of the %d subscriptions obliged to get it (%s) ever received it, and %s received %q, sent after it",
					len(obliged), strings.Join(names, ", "), past.Handle, past.Key),
				Ops: []Op{send, past}})
		}
	}
	return out
}

func checkDuplicates(h *hist, p Policy) []Finding {
	var out []Finding
	for _, s := range h.subs {
		for _, k := range sortedKeys(s.got) {
			ds := s.got[k]
			if len(ds) < 2 || !h.sentOnce(k) {
				continue // C-SEND-3
			}
			for i := 1; i < len(ds); i++ {
				di := ds[i]
				// Every earlier delivery is looked at: an Ack in force of any of them makes this
				// one a redelivery of an acked message whatever explains the others (a message
				// nacked, delivered again and acked must not come a third time, C-ACK-2).
				var acked *Op
				var ackedDelivery Op
				explained := false
				for j := 0; j < i; j++ {
					dj := ds[j]
					if a, ok := h.ackedBefore(dj, di.Start); ok {
						if h.crashedSoonAfter(dj, a, di, p) || lostWithASession(a, di, p) {
							explained = true // C-ACK-6
						} else if acked == nil {
							acked, ackedDelivery = &a, dj
						}
						continue
					}
					if !explained {
						explained = p.Faults || h.redeliveryCause(s, dj, di, p.MoveWithin)
					}
				}
				switch {
				case acked != nil:
					out = append(out, Finding{Anomaly: AckedRedelivered, Contract: "C-ACK-2", Key: k, Subscription: s.key,
						Detail: fmt.Sprintf("delivered again %s after its Ack returned nil", di.Start.Sub(acked.End).Round(time.Millisecond)),
						Ops:    []Op{ackedDelivery, *acked, di}})
				case explained:
				default:
					out = append(out, Finding{Anomaly: Duplicate, Contract: "D3, C-ACK-1", Key: k, Subscription: s.key,
						Detail: "received again while no nack, close, kill, change of members or second Send of it explains a redelivery",
						Ops:    []Op{ds[i-1], di}})
				}
			}
		}
	}
	return out
}

// crashedSoonAfter reports whether the consumer that acked earlier (with ack) died without a
// Close less than p.AckCrashBound after the Ack returned, before later was received.
func (h *hist) crashedSoonAfter(earlier, ack, later Op, p Policy) bool {
	c := h.consumers[earlier.Handle]
	return c != nil && !c.killed.IsZero() && c.killed.Before(later.End) && c.killed.Sub(ack.End) < p.AckCrashBound
}

// lostWithASession reports whether ack returned less than p.AckCrashBound before or after the
// start of one of p.Outages that began before later was received (C-ACK-6).
func lostWithASession(ack, later Op, p Policy) bool {
	for _, w := range p.Outages {
		if w.Start.Before(later.Start) && ack.End.After(w.Start.Add(-p.AckCrashBound)) && ack.End.Before(w.Start.Add(p.AckCrashBound)) {
			return true
		}
	}
	return false
}

// redeliveryCause reports whether the contract lets earlier (not acknowledged) come again as
// later on s: a Nack of it (C-NACK-1), its consumer closed or killed (C-ACK-1, C-CLOSE-1), or
// the subscription's members changed in between (a rebalance hands unacknowledged messages to
// another member) - or less than moveWithin before earlier, by a change that left another
// member open, whose rebalance may have reached this one only after earlier.
func (h *hist) redeliveryCause(s *subInfo, earlier, later Op, moveWithin time.Duration) bool {
	for _, n := range h.nacks {
		if n.Handle == earlier.Handle && n.Delivery == earlier.Delivery && n.Start.Before(later.End) {
			return true
		}
	}
	if c := h.consumers[earlier.Handle]; c != nil && !c.closed.IsZero() && c.closed.Before(later.End) {
		return true
	}
	changedAt := func(t time.Time, c *consumerInfo) bool {
		if !t.Before(later.End) {
			return false
		}
		if t.After(earlier.Start) {
			return true
		}
		return moveWithin > 0 && earlier.Start.Sub(t) < moveWithin && s.openBeside(c, t)
	}
	for _, c := range s.members {
		if changedAt(c.open.End, c) {
			return true // joined
		}
		if !c.closed.IsZero() && changedAt(c.closed, c) {
			return true // left
		}
	}
	return false
}

// ackedAfter reports whether an Ack that returned nil settled n's message on s after or
// around the Nack: through a second delivery of it (a rebalance handed it out again, with the
// same or another ID). The message is then done (C-ACK-2 forbids it coming again), so the Nack
// owes no redelivery (W1 seed 1796183140 on kafka: one of two deliveries of m0 nacked, the
// other acked in the drain). An Ack that ended before the Nack began does not discharge it: a
// Nack that returned nil after its message was acked through another delivery must deliver it
// again; the backend may refuse it instead (C-ACK-9; W1 seeds 1796183137 and 1796307262).
func (h *hist) ackedAfter(s *subInfo, n Op) bool {
	for _, op := range h.ops {
		if op.Kind != Ack || op.Err != nil || op.Key != n.Key || !op.End.After(n.Start) {
			continue
		}
		if c := h.consumers[op.Handle]; c != nil && c.sub == s {
			return true
		}
	}
	return false
}

func checkNacks(h *hist, p Policy) []Finding {
	var out []Finding
	for _, n := range h.nacks {
		c := h.consumers[n.Handle]
		if c == nil {
			continue
		}
		s := c.sub
		if !s.durable && !p.TransientRedelivery {
			continue // C-CAP-1
		}
		again := false
		for _, d := range s.got[n.Key] {
			if d.End.After(n.Start) {
				again = true
				break
			}
		}
		if again || h.ackedAfter(s, n) {
			continue
		}
		// The subscription must have been read well past the bound.
		var last Op
		for _, r := range s.recvs {
			if r.End.After(last.End) {
				last = r
			}
		}
		if last.End.Sub(n.End) <= p.NackWithin {
			continue // not read for longer than the bound: the message may still come
		}
		out = append(out, Finding{Anomaly: NackNotRedelivered, Contract: "C-NACK-1", Key: n.Key, Subscription: s.key,
			Detail: fmt.Sprintf("its Nack returned nil and the subscription was read for %s more without it coming again (bound %s)",
				last.End.Sub(n.End).Round(time.Millisecond), p.NackWithin),
			Ops: []Op{n, last}})
	}
	return out
}

func checkWrongSubscription(h *hist, _ Policy) []Finding {
	var out []Finding
	for _, s := range h.subs {
		// The subscription may have been made by the first Consumer call of its name, failed
		// or not (C-SUB-7), at the position that call asked for (C-POS-1).
		first := s.created
		atLatest := s.position == backends.Latest
		for _, t := range s.tried {
			atLatest = atLatest && t.Position == backends.Latest
			if t.Start.Before(first.Start) {
				first = t
			}
		}
		for _, k := range sortedKeys(s.got) {
			sends := h.sends[k]
			if len(sends) == 0 {
				continue // sent outside this history: nothing to judge
			}
			d := s.got[k][0]
			var here []Op
			for _, sd := range sends {
				if sd.Topic == s.topic {
					here = append(here, sd)
				}
			}
			if len(here) == 0 {
				out = append(out, Finding{Anomaly: WrongSubscription, Contract: "C-DLV-2", Key: k, Subscription: s.key,
					Detail: fmt.Sprintf("it was sent only to %q", sends[0].Topic), Ops: []Op{sends[0], d}})
				continue
			}
			if !atLatest {
				continue
			}
			before := true
			for _, sd := range here {
				if !sd.End.Before(first.Start) {
					before = false
					break
				}
			}
			if before { // also across a delete: C-TOP-3 dropped what was sent before it
				out = append(out, Finding{Anomaly: WrongSubscription, Contract: "C-POS-2", Key: k, Subscription: s.key,
					Detail: fmt.Sprintf("a new subscription at the latest position received it, though its Send returned %s before the first Consumer call started",
						first.Start.Sub(here[len(here)-1].End).Round(time.Millisecond)),
					Ops: []Op{here[len(here)-1], first, d}})
			}
		}
	}
	return out
}

func checkOrder(h *hist, p Policy) []Finding {
	if !p.Order || p.Faults {
		return nil
	}
	var out []Finding
	for _, s := range h.subs {
		if len(s.members) != 1 || s.nacked {
			continue
		}
		// Position of each key's only delivery.
		pos := map[string]int{}
		var ds []Op
		for k, got := range s.got {
			if len(got) == 1 && h.sentOnce(k) {
				ds = append(ds, got[0])
			}
		}
		sort.Slice(ds, func(i, j int) bool { return ds[i].Seq < ds[j].Seq })
		for i, d := range ds {
			pos[d.Key] = i
		}
		byProducer := map[string][]Op{}
		for k := range pos {
			sd := h.sends[k][0]
			if sd.Err == nil && sd.Topic == s.topic {
				byProducer[sd.Handle] = append(byProducer[sd.Handle], sd)
			}
		}
		for _, prod := range sortedKeys(byProducer) {
			sends := byProducer[prod]
			byEnd := append([]Op(nil), sends...)
			sort.Slice(byEnd, func(i, j int) bool { return byEnd[i].End.Before(byEnd[j].End) })
			byStart := append([]Op(nil), sends...)
			sort.Slice(byStart, func(i, j int) bool { return byStart[i].Start.Before(byStart[j].Start) })
			// Sweep: for each send b, the latest-delivered send a that returned before b started.
			j, best := 0, -1
			var bestOp Op
			for _, b := range byStart {
				for j < len(byEnd) && byEnd[j].End.Before(b.Start) {
					if pos[byEnd[j].Key] > best {
						best, bestOp = pos[byEnd[j].Key], byEnd[j]
					}
					j++
				}
				if best > pos[b.Key] {
					out = append(out, Finding{Anomaly: Reordered, Contract: "D4", Key: b.Key, Subscription: s.key,
						Detail: fmt.Sprintf("sent by %s after %q's Send returned, but delivered before it", prod, bestOp.Key),
						Ops:    []Op{bestOp, b, ds[pos[b.Key]], ds[best]}})
				}
			}
		}
	}
	return out
}

func checkLate(h *hist, p Policy) []Finding {
	var out []Finding
	for _, op := range h.ops {
		if op.Kind != Receive || op.Deadline.IsZero() {
			continue
		}
		if late := op.End.Sub(op.Deadline); late > p.Grace {
			out = append(out, Finding{Anomaly: LateReturn, Contract: "C-RECV-1", Key: op.Key, Subscription: op.Topic + "/" + op.Subscription,
				Detail: fmt.Sprintf("%s/%s's Receive returned %s after its deadline (grace %s)", op.Client, op.Handle, late.Round(time.Millisecond), p.Grace),
				Ops:    []Op{op}})
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func topicsOf(ops []Op) []string {
	seen := map[string]bool{}
	var out []string
	for _, op := range ops {
		if !seen[op.Topic] {
			seen[op.Topic] = true
			out = append(out, op.Topic)
		}
	}
	return out
}
