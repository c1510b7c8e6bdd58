// Package catalogue is the behaviour catalogue: the one machine-readable list of what every
// backend must do (README.md, "The behaviour catalogue"). Everything else derives from this table:
//
//   - the specs (package specs) implement each entry once, under its ID, through
//     specs.Behaviour / specs.BehaviourTable, which take the spec text and Ginkgo labels from here
//     (the label "id:<ID>" is how tools find a spec's ID);
//   - reports/catalogue.md is generated from it (go run ./reports/cmd/catalogue; -check fails when
//     the file is stale or an entry has no spec or two);
//   - the reports, the baseline and the mutants driver order IDs by it (Less).
//
// Adding a behaviour: append an entry to Behaviours in its area (the slice order is the one ID
// order everywhere), write its spec with specs.Behaviour("<ID>", ...) or specs.BehaviourTable,
// and run go run ./reports/cmd/catalogue. The package imports nothing, so any tool may use it.
package catalogue

import (
	"fmt"
	"strconv"
	"strings"
)

// Behaviour is one catalogue entry.
type Behaviour struct {
	ID     string   // area letter and number: "D1"
	Area   string   // one of Areas: "delivery"
	Title  string   // the spec text after "[ID] ", short and specific
	Must   string   // the requirement, one paragraph starting with "MUST"
	Labels []string // Ginkgo labels beyond the area's and the ID's ("slow", "fault")
}

// Areas in catalogue order, each with the letter its IDs start with.
var Areas = []struct{ Name, Letter string }{
	{"delivery", "D"},
	{"groups", "G"},
	{"acks", "A"},
	{"restart", "R"},
	{"retention", "T"},
	{"lifecycle", "L"},
	{"security", "S"},
	{"fault", "F"},
}

// Behaviours is the catalogue, in catalogue order.
var Behaviours = []Behaviour{
	{ID: "D1", Area: "delivery",
		Title: "payload bytes and properties arrive intact",
		Must:  "MUST deliver payload bytes and properties intact: arbitrary bytes, unicode keys and values, an empty property value, and nil / empty property maps (which are equal)."},
	{ID: "D2", Area: "delivery",
		Title: "a message sent right after Consumer() returns is delivered",
		Must:  "MUST deliver a message sent immediately after Consumer() returned, for every class, with initial position latest and no waiting of any kind: Consumer returns only when the subscription is live. Every call counts: each class opens at least 36 fresh subscriptions, 12 at a time, and more while the class is younger than 2 s, so a race lost in one call of twenty fails the spec."},
	{ID: "D3", Area: "delivery",
		Title: "1,000 concurrently sent messages all arrive exactly once",
		Must:  "MUST deliver every one of 1,000 messages sent concurrently: none missing, and none duplicated in steady state (one consumer, nothing nacked, no restart)."},
	{ID: "D4", Area: "delivery",
		Title: "one producer, one consumer: send order is kept",
		Must:  "MUST deliver the messages of one producer to one consumer in send order."},
	{ID: "D5", Area: "delivery",
		Title: "a 5 MiB payload round-trips",
		Must:  "MUST round-trip a 5 MiB payload byte for byte."},
	{ID: "D6", Area: "delivery",
		Title: "a confirmed send is there for a later earliest subscriber",
		Must:  "MUST keep a message once Send returned: after Send returned and the producer was closed, a later earliest subscriber (another client) receives it (flow class)."},
	{ID: "D7", Area: "delivery",
		Title: "Receive is bounded by its context (deadline and cancel)",
		Must:  "MUST end Receive on an empty topic at its context deadline with an error wrapping ErrTimeout, and promptly with context.Canceled when its context is cancelled."},
	{ID: "D8", Area: "delivery",
		Title: "property keys and values come back byte-exact",
		Must:  "MUST deliver property keys and values byte for byte as sent: letter case (two keys differing only in case stay two), dots, dashes, spaces (leading and trailing too), non-ASCII text and long keys and values."},
	{ID: "D9", Area: "delivery",
		Title: "a new latest subscription does not receive what was sent before it was live",
		Must:  "MUST NOT deliver to a new subscription with initial position latest the messages sent before Consumer() returned, while delivering those sent after it."},
	{ID: "G1", Area: "groups",
		Title: "competing consumers on one shared subscription split the messages",
		Must:  "MUST give each message of a shared subscription to exactly one of its consumers, and all messages to the group as a whole."},
	{ID: "G2", Area: "groups",
		Title: "unique subscribers each receive every message (fan-out)",
		Must:  "MUST give every message to every consumer when each has its own (unique) subscription: the default of response and notify, or WithMode(Unique) on any class."},
	{ID: "G3", Area: "groups",
		Title: "two named subscriptions each get everything, competing within each",
		Must:  "MUST give every message to each of two named subscriptions on one topic, while the consumers within each subscription compete (each message once per subscription)."},
	{ID: "A1", Area: "acks",
		Title: "a nacked message is delivered again",
		Must:  "MUST deliver a nacked message again, with the same payload and properties, within a bounded delay (other messages may come first; Kafka-style seek-back duplicates of later messages are allowed)."},
	{ID: "A2", Area: "acks",
		Title: "ack acknowledges nothing after it",
		Must:  "MUST acknowledge only the acked message: receive m1 and m2, ack m1 only, close, reopen the subscription -> m2 is delivered again and m1 is not."},
	{ID: "A3", Area: "acks",
		Title: "an unacked message is redelivered after close and reopen",
		Must:  "MUST redeliver a received but unacknowledged message after its consumer closed and the subscription was reopened."},
	{ID: "A4", Area: "acks",
		Title: "acked messages are not redelivered after close and reopen",
		Must:  "MUST NOT redeliver acknowledged messages after the consumer closed and the subscription was reopened."},
	{ID: "A5", Area: "acks",
		Title: "nack then ack: no further redelivery",
		Must:  "MUST stop redelivering a message once it was nacked and then acked."},
	{ID: "A6", Area: "acks",
		Title: "acks out of order acknowledge only the acked messages",
		Must:  "MUST acknowledge exactly the acked messages when acks come out of order: receive m1, m2, m3, ack m3 and m2 only, close, reopen the subscription -> m1 is delivered again (an ack never acknowledges an earlier unacked message) and m2 and m3 are not (A4)."},
	{ID: "A7", Area: "acks",
		Title: "concurrent out-of-order acks across restarts lose nothing",
		Must:  "MUST lose nothing and redeliver no acked message when many messages are acked in random order from several goroutines, with some left unacked, across repeated consumer restarts: every message is eventually acked, none acked comes again after a reopen."},
	{ID: "A8", Area: "acks",
		Title: "ack or nack of a delivery this consumer did not hand out is ErrUnknownDelivery",
		Must:  "MUST reject, with an error wrapping ErrUnknownDelivery, an Ack or Nack of a delivery this consumer did not hand out (another consumer's, a made-up ID), and leave this consumer's own deliveries untouched by it."},
	{ID: "R1", Area: "restart",
		Title: "close is not unsubscribe: the gap's messages arrive after reopen",
		Must:  "MUST keep the subscription when a consumer closes: messages sent while nobody was connected reach the reopened subscription even with initial position latest (closing is not unsubscribing)."},
	{ID: "R2", Area: "restart",
		Title: "a never-acked subscription survives close: reopen with latest gets what was sent meanwhile",
		Must:  "MUST keep a subscription that never acknowledged anything: subscribe (live), close before any message, send, reopen with latest -> the messages arrive."},
	{ID: "R3", Area: "restart",
		Title: "repeated restarts under a steady producer lose nothing",
		Must:  "MUST lose nothing across repeated consumer restarts under a steady producer: the union of what the restarted consumers received is everything sent."},
	{ID: "R4", Area: "restart",
		Title:  "flow messages sent before a broker restart are delivered after it",
		Labels: []string{"fault", "slow"},
		Must:   "MUST deliver durable (flow) messages sent before a broker restart after it."},
	{ID: "R5", Area: "restart",
		Title:  "a crashed consumer's unacked messages reach the next group member",
		Labels: []string{"fault"},
		Must:   "MUST hand the unacknowledged messages of a consumer whose process was killed (no Close) to the next member of its subscription, within a bound."},
	{ID: "R6", Area: "restart",
		Title:  "a producer and a consumer opened before a broker restart keep working after it",
		Labels: []string{"fault", "slow"},
		Must:   "MUST keep a producer and a consumer opened before a broker restart working after it without the application reopening them: messages sent through the old producer after the restart arrive on the old consumer."},
	{ID: "R7", Area: "restart",
		Title:  "a consumer crash after out-of-order acks loses no unacked message",
		Labels: []string{"fault"},
		Must:   "MUST hand every unacknowledged message of a killed consumer (no Close) to the next member of its subscription, also when the consumer acked later messages out of order before it died: receive m1..m5, ack m5, m3 and m4, wait out the ack crash bound, kill -> m1 and m2 reach the next member (an ack never commits through an earlier unacked message, not even until a Close that never comes)."},
	{ID: "R8", Area: "restart",
		Title:  "acks older than the crash bound survive a consumer crash",
		Labels: []string{"fault"},
		Must:   "MUST keep in force, after the consumer's process was killed (no Close), every ack that returned more than the contract's ack crash bound (backends.AckCrashBound, 1 s) before the kill: the next member receives none of those messages again, only what was sent after."},
	{ID: "T1", Area: "retention",
		Title: "a created topic's retention matches its class",
		Must:  "MUST give a created topic the retention of its class (flow 7 days, others 5 minutes, unless configured otherwise), as read back from the broker."},
	{ID: "T2", Area: "retention",
		Title: "flow messages sent before any subscription reach a new earliest subscriber",
		Must:  "MUST keep flow messages sent before any subscription existed for a new subscriber that starts at earliest (durable replay), in send order."},
	{ID: "T3", Area: "retention",
		Title:  "expired messages are not delivered",
		Labels: []string{"slow"},
		Must:   "MUST stop delivering messages older than a topic's retention: with a short retention override, an expired message is not delivered to a new earliest subscriber."},
	{ID: "L1", Area: "lifecycle",
		Title: "exists -> create -> exists -> delete -> gone, idempotently",
		Must:  "MUST report a topic as missing, then existing after CreateTopic, then missing after DeleteTopic; creating an existing and deleting a missing topic are not errors."},
	{ID: "L2", Area: "lifecycle",
		Title: "EnsureTopic creates when missing and is a no-op when present",
		Must:  "MUST create a missing topic in EnsureTopic, and leave a present one (and its messages) untouched."},
	{ID: "L3", Area: "lifecycle",
		Title: "delete drops subscriptions: an old subscription name starts fresh",
		Must:  "MUST drop a topic's subscriptions and positions with the topic: after delete and re-create, an old subscription name starts fresh (here: at earliest, so it gets every message of the new topic rather than resuming at the old position)."},
	{ID: "L4", Area: "lifecycle",
		Title: "invalid topic strings are rejected with a clear error, nothing created",
		Must:  "MUST reject invalid topic strings and classes with a clear error wrapping ErrInvalidTopic from every call, quickly, and create nothing."},
	{ID: "L5", Area: "lifecycle",
		Title: "Consumer() on a topic that does not exist yet creates it, and what is sent then arrives",
		Must:  "MUST, for Consumer() on a topic that does not exist yet, return promptly with a live subscription on a topic that now exists, and deliver what is sent to it afterwards (TrustGraph's async Kafka consumer blocked 40 s and raised here)."},
	{ID: "L6", Area: "lifecycle",
		Title: "Producer() on a topic that does not exist yet creates it",
		Must:  "MUST create a missing topic when Producer() is called for it: the topic exists as soon as Producer() returned, before any Send."},
	{ID: "L7", Area: "lifecycle",
		Title: "a bare topic is flow:tg:<topic>; further colons belong to the topic",
		Must:  "MUST treat a topic string without colons as flow:tg:<topic> (a producer of \"x\" reaches a consumer of \"flow:tg:x\"), and keep further colons in the topic part: \"request:tg:x:one\" and \"request:tg:x:two\" are two topics."},
	{ID: "L8", Area: "lifecycle",
		Title: "Receive, Ack, Nack and Send after Close fail with ErrClosed",
		Must:  "MUST fail promptly with an error wrapping ErrClosed a Receive, Ack or Nack on a closed consumer and a Send on a closed producer (not wait out the context, not report success)."},
	{ID: "L9", Area: "lifecycle",
		Title: "Close is idempotent for producer, consumer and backend",
		Must:  "MUST accept a second Close of a producer, a consumer and a backend without an error."},
	{ID: "L10", Area: "lifecycle",
		Title: "closing the backend closes the producers and consumers it handed out",
		Must:  "MUST close, when the Backend is closed, the producers and consumers it handed out: their Send and Receive then fail promptly with ErrClosed."},
	{ID: "S1", Area: "security",
		Title: "good credentials work; bad ones fail fast with an auth error",
		Must:  "MUST, against an auth-enabled broker, make admin, producer and consumer work with good credentials, and fail fast (well within the bound, not a hang) with an error wrapping ErrAuth with bad credentials."},
	{ID: "F1", Area: "fault",
		Title:  "a consumer waiting through a 5 s network cut gets what was sent before, during and after it",
		Labels: []string{"fault", "network"},
		Must:   "MUST keep a consumer that waits through a 5 s network cut working without the application reopening it: a message sent before the cut, one sent during it (the sender retrying until a Send returns nil) and one sent after the heal all arrive on it, and the message acked before the cut is not delivered again."},
	{ID: "F2", Area: "fault",
		Title:  "under 200 ms of latency each way, ready-on-return, nack, ack and competing consumers still hold",
		Labels: []string{"fault", "network"},
		Must:   "MUST keep ready-on-return (D2, every class), nack redelivery (A1), ack-only-that (A2) and competing consumers (G1) under 200 ms of added network latency each way between every client and the broker: each check asserts exactly what its no-fault spec asserts, with the same bounds (F2 runs them at once, each on its own client, and G1's three consumers subscribe and its 30 messages, half G1's, are sent concurrently there: sequential synchronous acks under latency would measure throughput, not G1)."},
	{ID: "F3", Area: "fault",
		Title:  "a Send during a network cut returns an error within its context or is delivered; no Send that returned nil is lost",
		Labels: []string{"fault", "network"},
		Must:   "MUST end every Send made while the network to the broker is cut within its context, with an error or nil, and deliver every message whose Send returned nil once the network is healed, to a consumer subscribed before the cut: an error may be returned for a message that is delivered anyway (the count is reported), a nil for one that is not may never be (no silent loss)."},
	{ID: "F4", Area: "fault",
		Title:  "while the broker is unreachable every call fails within its context; after the heal the same Backend works",
		Labels: []string{"fault", "network"},
		Must:   "MUST end every call made while the network to the broker is cut - Consumer(), Producer(), Send, CreateTopic, DeleteTopic, TopicExists - within its context with an error wrapping ErrUnavailable or ErrTimeout (never nil: a delete or an exists that swallows the failure is a defect), and work again, the same Backend and the producer opened before the cut, once the network is healed (a round trip)."},
	{ID: "F5", Area: "fault",
		Title:  "killing the partition leader of a three-node Kafka cluster loses no acknowledged write",
		Labels: []string{"fault", "slow", "cluster"},
		Must:   "MUST not lose an acknowledged write when the partition leader of a replicated cluster (three nodes, replication factor 3, min.insync.replicas 2) is killed (SIGKILL) during a steady send from several producers, after its followers fell 1 s behind (replication from it cut, clients still reaching it): every message whose Send returned nil - before, during or after the failover - is delivered afterwards (duplicates are allowed and counted), and Sends succeed again within 30 s of the kill. The unavailability window (last confirmed Send before the kill to the first confirmed Send started after it) is measured and reported."},
}

// LabelPrefix starts the Ginkgo label that carries a spec's ID ("id:D1").
const LabelPrefix = "id:"

// IDLabel is the Ginkgo label of a spec implementing behaviour id.
func IDLabel(id string) string { return LabelPrefix + id }

// IDFromLabels returns the ID carried by labels ("id:D1" -> "D1"), or "" when none does.
func IDFromLabels(labels []string) string {
	for _, l := range labels {
		if id, ok := strings.CutPrefix(l, LabelPrefix); ok {
			return id
		}
	}
	return ""
}

// Lookup returns the entry with the given ID.
func Lookup(id string) (Behaviour, bool) {
	for _, b := range Behaviours {
		if b.ID == id {
			return b, true
		}
	}
	return Behaviour{}, false
}

// IDs lists every ID in catalogue order.
func IDs() []string {
	out := make([]string, len(Behaviours))
	for i, b := range Behaviours {
		out[i] = b.ID
	}
	return out
}

// SpecText is the text of the spec implementing b: "[D1] payload bytes ...". The ID stays in
// the text for people reading Ginkgo's output; tools read the ID label.
func (b Behaviour) SpecText() string { return "[" + b.ID + "] " + b.Title }

// SpecLabels are the Ginkgo labels of the spec implementing b: its ID label and b.Labels (the
// area's label sits on the area's container).
func (b Behaviour) SpecLabels() []string { return append([]string{IDLabel(b.ID)}, b.Labels...) }

// Less orders IDs in catalogue order. IDs not in the catalogue come after it, by area letter
// (in area order, unknown letters after) and number, then anything else ("setup") by text.
func Less(a, b string) bool {
	ka, kb := sortKey(a), sortKey(b)
	for i := range ka {
		if ka[i] != kb[i] {
			return ka[i] < kb[i]
		}
	}
	return a < b
}

func sortKey(id string) [3]int {
	for i, b := range Behaviours {
		if b.ID == id {
			return [3]int{0, i, 0}
		}
	}
	n, err := strconv.Atoi(strings.TrimLeft(id, "ABCDEFGHIJKLMNOPQRSTUVWXYZ"))
	if id == "" || err != nil || id[0] < 'A' || id[0] > 'Z' {
		return [3]int{2, 0, 0}
	}
	area := len(Areas) + int(id[0])
	for i, a := range Areas {
		if a.Letter == id[:1] {
			area = i
		}
	}
	return [3]int{1, area, n}
}

// Check lists what is wrong with a table (Behaviours, or a test's): malformed or duplicated
// IDs, unknown areas, an ID whose letter is not its area's, empty titles, requirements not
// starting with MUST, entries of one area not kept together.
func Check(bs []Behaviour) []string {
	var problems []string
	seen := map[string]bool{}
	done := map[string]bool{} // areas already left behind
	prev := ""
	for i, b := range bs {
		where := fmt.Sprintf("catalogue entry %d (%q)", i+1, b.ID)
		letter := ""
		for _, a := range Areas {
			if a.Name == b.Area {
				letter = a.Letter
			}
		}
		switch {
		case letter == "":
			problems = append(problems, fmt.Sprintf("%s: unknown area %q", where, b.Area))
		case !strings.HasPrefix(b.ID, letter) || len(b.ID) < 2 || strings.Trim(b.ID[1:], "0123456789") != "":
			problems = append(problems, fmt.Sprintf("%s: an ID of area %s is %s followed by a number", where, b.Area, letter))
		}
		if seen[b.ID] {
			problems = append(problems, fmt.Sprintf("%s: ID used twice", where))
		}
		seen[b.ID] = true
		if b.Area != prev {
			if done[b.Area] {
				problems = append(problems, fmt.Sprintf("%s: area %s is split; keep its entries together", where, b.Area))
			}
			done[prev] = true
			prev = b.Area
		}
		if strings.TrimSpace(b.Title) == "" {
			problems = append(problems, fmt.Sprintf("%s: empty title", where))
		}
		if !strings.HasPrefix(b.Must, "MUST") {
			problems = append(problems, fmt.Sprintf("%s: the requirement must start with MUST", where))
		}
	}
	return problems
}
