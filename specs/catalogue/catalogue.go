// Package catalogue is the behaviour catalogue: the one machine-readable list of what every
// backend must do (docs/catalogue.md). One entry is the one record of a behaviour - ID, area,
// title, level and source, requirement, the contract sentences it asserts, labels, scheduling
// priority - and everything else derives from this table:
//
//   - the specs (package specs) implement each entry once, under its ID, in its area's file,
//     through specs.Behaviour / specs.BehaviourTable, which take the spec text, Ginkgo labels
//     (ID, area, level, extra) and priority from here (the label "id:<ID>" is how tools find a
//     spec's ID);
//   - reports/contract.md maps contract sentences to the entries' Asserts;
//   - reports/catalogue.md is generated from it (go run ./reports/cmd/catalogue; -check fails when
//     the file is stale, an entry has no spec or two, a spec sits outside its area's files or
//     a spec file's comment copies requirement text);
//   - the reports, the baseline and the mutants driver order IDs by it (Less).
//
// Adding a behaviour: append an entry to Behaviours in its area (the slice order is the one ID
// order everywhere), write its spec with specs.Behaviour("<ID>", ...) or specs.BehaviourTable,
// and run go run ./reports/cmd/catalogue. The package imports nothing, so any tool may use it.
package catalogue

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// Behaviour is one catalogue entry.
type Behaviour struct {
	ID    string // area letter and number: "D1"
	Area  string // one of Areas: "delivery"
	Title string // the spec text after "[ID] ", short and specific
	// Level says whether TrustGraph requires the behaviour (MUST) or the harness tests a
	// stronger guarantee than TrustGraph asks for (SHOULD).
	Level Level
	// Source grounds the level. MUST: the TrustGraph sentence it comes from, quoted exactly,
	// with its file (paths in github.com/trustgraph-ai/trustgraph, read at commit fb17283,
	// August 2026; trustgraph-base 2.11.1 ships the same async_backend.py docstrings). SHOULD:
	// which stronger guarantee, what TrustGraph says instead, and why it is tested anyway.
	Source string
	// Requirement is one paragraph starting with the level's word ("MUST ...", "SHOULD ...").
	Requirement string
	Labels      []string // Ginkgo labels beyond the area's, the ID's and the level's ("slow", "fault")
	// Asserts names the contract sentences the spec asserts ("C-ACK-1"; contract.go, the
	// markers in backends/backend.go): reports/contract.md is built from them.
	Asserts []string
	// Priority is scheduling only, never a result: with many specs spread over processes, the
	// ones that take longest start first (Ginkgo's SpecPriority, higher first; an Ordered
	// container starts at the highest of its specs'), so their waiting overlaps the rest
	// instead of trailing the run. 0: no preference.
	Priority int
}

// The priorities in use, by what makes a spec long (measured spec times of the four-backend
// run, docs/performance.md). Ginkgo hands the next spec to whichever process is free, so
// longest first is the classic list-scheduling order: a long spec started last is the tail.
const (
	PriorityEarly  = 1 // S1, S2 (a private auth broker on Pulsar), D3 (1,000 messages), R5, R7, R8 (a child process)
	PriorityThird  = 2 // F2 (a private broker, then ~35 s under latency)
	PrioritySecond = 3 // the private-broker area (R4, R6, F1, F3, F4: ~45-60 s), F5's cluster
	PriorityFirst  = 4 // T3: waits out a broker's retention expiry (~72 s on Pulsar)
	// PriorityWorkload is W1: 25 s of programs, and when a program fails (an accepted defect
	// on kafka and rabbitmq) up to 2 more minutes of shrinking it: 110-150 s, the longest spec
	// of the run. Without a priority it started at ~170 s and ended the run at 323 s.
	PriorityWorkload = 5
)

// Level is a requirement level in the sense of RFC 2119.
type Level string

const (
	MUST   Level = "MUST"   // TrustGraph requires it: a failure is a TrustGraph-visible defect
	SHOULD Level = "SHOULD" // stronger than TrustGraph requires: a failure is a finding, not non-conformance
)

// LevelLabel is the Ginkgo label of a spec of level l ("level:must"), so that
// --label-filter='level:must' runs exactly TrustGraph's requirements.
func LevelLabel(l Level) string { return "level:" + strings.ToLower(string(l)) }

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
	{"workload", "W"},
}

// Behaviours is the catalogue, in catalogue order.
var Behaviours = []Behaviour{
	{ID: "D1", Area: "delivery", Asserts: []string{"C-MSG-1", "C-MSG-2", "C-DLV-2", "C-CAP-4"},
		Level: MUST, Source: "docs/tech-specs/pubsub-abstraction.md, hard requirement 3: \"Message properties — key-value metadata on messages, at minimum a string \"id\" field\"; docs/tech-specs/pubsub-abstraction.md, \"The pub/sub transport layer sends and receives JSON bytes\". (Non-UTF-8 payload bytes go beyond JSON: adapters of a JSON API declare binary-payloads Unsupported.)",
		Title:       "payload bytes and properties arrive intact",
		Requirement: "MUST deliver payload bytes and properties intact: arbitrary bytes, unicode keys and values, an empty property value, and nil / empty property maps (which are equal)."},
	{ID: "D2", Area: "delivery", Asserts: []string{"C-SUB-2"},
		Level: MUST, Source: "trustgraph-base/trustgraph/base/async_backend.py, AsyncPubSubBackend.create_consumer: \"Returns only when the subscription is active and ready to receive messages.\"",
		Title:       "a message sent right after Consumer() returns is delivered",
		Requirement: "MUST deliver a message sent immediately after Consumer() returned, for every class, with initial position latest and no waiting of any kind: Consumer returns only when the subscription is live. Every call counts: each class opens at least 36 fresh subscriptions, 12 at a time, and more while the class is younger than 2 s, so a race lost in one call of twenty fails the spec."},
	{ID: "D3", Area: "delivery", Asserts: []string{"C-PROD-3", "C-BE-1", "C-DLV-1"}, Priority: PriorityEarly,
		Level: MUST, Source: "docs/tech-specs/pubsub-abstraction.md, hard requirement 1: \"Shared subscription / competing consumers — multiple consumers on one queue, each message delivered to exactly one\"",
		Title:       "1,000 concurrently sent messages all arrive exactly once",
		Requirement: "MUST deliver every one of 1,000 messages sent concurrently: none missing, and none duplicated in steady state (one consumer, nothing nacked, no restart)."},
	{ID: "D4", Area: "delivery",
		Level: SHOULD, Source: "One producer to one consumer keeps send order. TrustGraph does not need it (docs/tech-specs/pubsub-abstraction.md, \"Message ordering\": \"Not required.\"); tested because both brokers give it on one partition or topic (docs/tech-specs/kafka-backend.md: \"Single partition per topic preserves message ordering\"), T3 and other specs reason with it, and an application outside TrustGraph may rely on it.",
		Title:       "one producer, one consumer: send order is kept",
		Requirement: "SHOULD deliver the messages of one producer to one consumer in send order."},
	{ID: "D5", Area: "delivery", Asserts: []string{"C-MSG-1", "C-CAP-4"},
		Level: MUST, Source: "docs/tech-specs/pubsub-abstraction.md, hard requirement 6: \"Messages up to several MB — or a chunking mechanism for large payloads\"",
		Title:       "a 5 MiB payload round-trips",
		Requirement: "MUST round-trip a 5 MiB payload byte for byte."},
	{ID: "D6", Area: "delivery", Asserts: []string{"C-SEND-1", "C-PROD-4", "C-POS-3"},
		Level: MUST, Source: "docs/tech-specs/pubsub-abstraction.md, hard requirement 5: \"Persistence for at least one queue — config state must survive broker restart\"; docs/tech-specs/pubsub-abstraction.md, hard requirement 4: \"Two consumer start positions — from beginning of topic and from current position\"",
		Title:       "a confirmed send is there for a later earliest subscriber",
		Requirement: "MUST keep a message once Send returned: after Send returned and the producer was closed, a later earliest subscriber (another client) receives it (flow class)."},
	{ID: "D7", Area: "delivery", Asserts: []string{"C-RECV-1", "C-LIFE-5", "C-ERR-1"},
		Level: MUST, Source: "trustgraph-base/trustgraph/base/backend.py, BackendConsumer.receive: \"Raises: TimeoutError: If no message received within timeout\"; trustgraph-base/trustgraph/base/async_backend.py, AsyncBackendConsumer.receive: \"Shutdown is signalled by cancelling the awaiting task.\"",
		Title:       "Receive is bounded by its context (deadline and cancel)",
		Requirement: "MUST end Receive on an empty topic at its context deadline with an error wrapping ErrTimeout, and promptly with context.Canceled when its context is cancelled."},
	{ID: "D8", Area: "delivery", Asserts: []string{"C-MSG-1"},
		Level: SHOULD, Source: "Property keys and values byte-exact whatever their case, spacing or length. TrustGraph needs \"at minimum a string \"id\" field\" (docs/tech-specs/pubsub-abstraction.md, hard requirement 3); tested because a backend that folds case or trims a header corrupts every other property silently.",
		Title:       "property keys and values come back byte-exact",
		Requirement: "SHOULD deliver property keys and values byte for byte as sent: letter case (two keys differing only in case stay two), dots, dashes, spaces (leading and trailing too), non-ASCII text, a 200-byte key and an 8 KiB value."},
	{ID: "D10", Area: "delivery", Asserts: []string{"C-MSG-1"},
		Level: SHOULD, Source: "A property key of 300 bytes round-trips. TrustGraph's keys are short (\"at minimum a string \"id\" field\", docs/tech-specs/pubsub-abstraction.md, hard requirement 3); tested apart from D8 because a broker protocol may bound header names (AMQP 0-9-1's shortstr: 255 bytes), a limit a user of long keys must know of.",
		Title:       "a 300-byte property key comes back byte-exact",
		Requirement: "SHOULD deliver a message whose properties hold a 300-byte key, key and value byte for byte as sent (or refuse the Send with an error, which fails the spec: the limit is reported, never a silent truncation)."},
	{ID: "D9", Area: "delivery", Asserts: []string{"C-POS-2", "C-POS-4"},
		Level: MUST, Source: "docs/tech-specs/pubsub-abstraction.md, \"Consumer positioning\": \"Latest (default): All flow consumers start from the current position, processing only new messages.\"",
		Title:       "a new latest subscription does not receive what was sent before it was live",
		Requirement: "MUST NOT deliver to a new subscription with initial position latest the messages sent before Consumer() returned, while delivering those sent after it."},
	{ID: "G1", Area: "groups", Asserts: []string{"C-SUB-3", "C-MODE-1", "C-MODE-2", "C-CLASS-2"},
		Level: MUST, Source: "docs/tech-specs/pubsub-abstraction.md, hard requirement 1: \"Shared subscription / competing consumers — multiple consumers on one queue, each message delivered to exactly one\"",
		Title:       "competing consumers on one shared subscription split the messages",
		Requirement: "MUST give each message of a shared subscription to exactly one of its consumers, and all messages to the group as a whole."},
	{ID: "G2", Area: "groups", Asserts: []string{"C-SUB-4", "C-MODE-1", "C-MODE-3", "C-CLASS-2", "C-CAP-6"},
		Level: MUST, Source: "trustgraph-base/trustgraph/base/backend.py, PubSubBackend.create_consumer: \"response: exclusive per-subscriber, anonymous auto-delete queue\"; docs/tech-specs/pubsub-abstraction.md, \"Request-response isolation\": \"Each client creates a unique subscription name on response queues so it only receives its own responses.\"",
		Title:       "unique subscribers each receive every message (fan-out)",
		Requirement: "MUST give every message to every consumer when each has its own (unique) subscription: the default of response and notify, or WithMode(Unique) on any class."},
	{ID: "G3", Area: "groups", Asserts: []string{"C-SUB-3"},
		Level: MUST, Source: "docs/tech-specs/pubsub-abstraction.md, hard requirement 1: \"Shared subscription / competing consumers — multiple consumers on one queue, each message delivered to exactly one\"; docs/tech-specs/pubsub-abstraction.md, \"Queue inventory\": config push, \"Full configuration state broadcast\" (every processor's own subscription gets every push)",
		Title:       "two named subscriptions each get everything, competing within each",
		Requirement: "MUST give every message to each of two named subscriptions on one topic, while the consumers within each subscription compete (each message once per subscription)."},
	{ID: "G4", Area: "groups", Asserts: []string{"C-SUB-6", "C-CAP-7"},
		Level: SHOULD, Source: "Competing consumers share the load: with 3 consumers on one shared flow subscription and 300 messages, each consumer gets work. TrustGraph's hard requirement is only each message to exactly one consumer (G1), but the same note calls competing consumers the load-balancing mechanism (docs/tech-specs/pubsub-abstraction.md, \"Consumer model\": \"This is the load-balancing mechanism.\"); tested because scaling a processor out by adding instances does nothing on a backend that gives one consumer everything. Kafka declares it unsupported: one partition per topic (docs/tech-specs/kafka-backend.md: \"Parallelism comes from multiple topics and multiple services, not from partitioning within a topic.\") goes to one group member.",
		Title:       "competing consumers on one shared subscription share the load",
		Requirement: "SHOULD share the messages of a shared subscription among its consumers: 3 consumers receiving concurrently on one flow subscription, 300 messages sent one at a time while all three wait for work -> every consumer receives at least 10 (a tenth of its even share of 100; the distribution is reported as the entry \"G4 load sharing\")."},
	{ID: "G5", Area: "groups", Asserts: []string{"C-ACK-2", "C-ACK-8"},
		Level: MUST, Source: "docs/tech-specs/pubsub-abstraction.md, hard requirement 2: \"Message acknowledgement — positive ack (remove from queue)\"; hard requirement 1 (competing consumers): TrustGraph scales a flow by starting more processors on its shared subscriptions while the running ones hold messages in their handlers. Tested because a Kafka consumer that lost its partition to a joining member used to return nil from such an Ack and drop it, so the message was processed twice.",
		Title:       "an ack held across members joining is kept or refused, never dropped",
		Requirement: "MUST keep an Ack that returned nil after other members joined the shared subscription while the message was held: with the message held, up to 5 rounds of 3 new members join (each receiving for 2 s, closed again unless the message moved to it), then the first member acks it; if that Ack returned nil the message does not come again once every member closed and the subscription is reopened; if it failed with ErrUnknownDelivery (allowed after a membership change, C-ACK-8) the message comes again; any other error fails."},
	{ID: "G6", Area: "groups", Asserts: []string{"C-NACK-1", "C-ACK-8"},
		Level: MUST, Source: "docs/tech-specs/pubsub-abstraction.md, hard requirement 2: \"negative ack (trigger redelivery)\"; trustgraph-base/trustgraph/base/async_backend.py, negative_acknowledge: \"Negative acknowledge — triggers redelivery.\"; hard requirement 1 (competing consumers): processors join a flow's shared subscriptions while the running ones hold messages. Tested because our Kafka backend returned nil from such a Nack and redelivered nothing (W1 seed 1796307262).",
		Title:       "a nack held across members joining redelivers or is refused, never dropped",
		Requirement: "MUST deliver again a message whose Nack returned nil after other members joined the shared subscription while it was held: with the message held, up to 5 rounds of 3 new members join (each receiving for 2 s); when it moved to one of them, that member acks it; every new member closes and a marker reaches the first member; then the first member nacks its delivery: if the Nack returned nil the message comes again within 30 s; it may fail with ErrUnknownDelivery (allowed after a membership change, C-ACK-8); any other error fails."},
	{ID: "A1", Area: "acks", Asserts: []string{"C-NACK-1", "C-CAP-1"},
		Level: MUST, Source: "docs/tech-specs/pubsub-abstraction.md, hard requirement 2: \"Message acknowledgement — positive ack (remove from queue) and negative ack (trigger redelivery)\"; trustgraph-base/trustgraph/base/async_backend.py, negative_acknowledge: \"Negative acknowledge — triggers redelivery.\"",
		Title:       "a nacked message is delivered again",
		Requirement: "MUST deliver a nacked message again, with the same payload and properties, within a bounded delay (other messages may come first; Kafka-style seek-back duplicates of later messages are allowed)."},
	{ID: "A2", Area: "acks", Asserts: []string{"C-ACK-1"},
		Level: MUST, Source: "docs/tech-specs/pubsub-abstraction.md, \"Message acknowledgement\": \"After successful handler execution, the message is acknowledged. This removes it from the subscription.\"; docs/tech-specs/kafka-backend.md, \"Acknowledge\": \"With a single partition and sequential processing, this is equivalent to per-message ack\"",
		Title:       "ack acknowledges nothing after it",
		Requirement: "MUST acknowledge only the acked message: receive m1 and m2, ack m1 only, close, reopen the subscription -> m2 is delivered again and m1 is not."},
	{ID: "A3", Area: "acks", Asserts: []string{"C-ACK-1", "C-CLOSE-1"},
		Level: MUST, Source: "docs/tech-specs/pubsub-abstraction.md, hard requirement 2: \"Message acknowledgement — positive ack (remove from queue) and negative ack (trigger redelivery)\" (only a positive ack removes a message)",
		Title:       "an unacked message is redelivered after close and reopen",
		Requirement: "MUST redeliver a received but unacknowledged message after its consumer closed and the subscription was reopened."},
	{ID: "A4", Area: "acks", Asserts: []string{"C-ACK-2", "C-ACK-5"},
		Level: MUST, Source: "docs/tech-specs/pubsub-abstraction.md, \"Message acknowledgement\": \"After successful handler execution, the message is acknowledged. This removes it from the subscription.\"",
		Title:       "acked messages are not redelivered after close and reopen",
		Requirement: "MUST NOT redeliver acknowledged messages after the consumer closed and the subscription was reopened."},
	{ID: "A5", Area: "acks", Asserts: []string{"C-NACK-1", "C-ACK-2"},
		Level: MUST, Source: "docs/tech-specs/pubsub-abstraction.md, \"Message acknowledgement\": \"After successful handler execution, the message is acknowledged. This removes it from the subscription.\"",
		Title:       "nack then ack: no further redelivery",
		Requirement: "MUST redeliver a message nacked while the consumer holds another delivery, which it then acks (a handler pool settles in completion order), and stop redelivering both once the nacked one's redelivery was acked: neither comes again within a quiet window."},
	{ID: "A6", Area: "acks", Asserts: []string{"C-ACK-1", "C-ACK-2", "C-ACK-3", "C-ACK-5"},
		Level: MUST, Source: "docs/tech-specs/pubsub-abstraction.md, \"Consumer model\": \"Consumers support configurable concurrency — multiple async tasks within a single process can independently call `receive()` on the same subscription.\"; \"Message ordering\": \"Concurrent handler tasks within a consumer process messages in arbitrary order\" (so acks come out of order)",
		Title:       "acks out of order acknowledge only the acked messages",
		Requirement: "MUST acknowledge exactly the acked messages when acks come out of order: receive m1, m2, m3, ack m3 and m2 only, close, reopen the subscription -> m1 is delivered again (an ack never acknowledges an earlier unacked message) and m2 and m3 are not (A4)."},
	{ID: "A7", Area: "acks", Asserts: []string{"C-ACK-1", "C-ACK-2", "C-ACK-3", "C-ACK-5", "C-CONS-1"},
		Level: MUST, Source: "docs/tech-specs/pubsub-abstraction.md, \"Consumer model\": \"Consumers support configurable concurrency — multiple async tasks within a single process can independently call `receive()` on the same subscription.\"; \"Message ordering\": \"Concurrent handler tasks within a consumer process messages in arbitrary order\"",
		Title:       "concurrent out-of-order acks across restarts lose nothing",
		Requirement: "MUST lose nothing and redeliver no acked message when many messages are acked in random order from several goroutines, with some left unacked, across repeated consumer restarts: every message is eventually acked, none acked comes again after a reopen."},
	{ID: "A8", Area: "acks", Asserts: []string{"C-ACK-4", "C-ERR-1"},
		Level: SHOULD, Source: "An Ack or Nack of a delivery this consumer did not hand out fails with ErrUnknownDelivery. TrustGraph only acks what it received; tested because a backend that acks by position would, given a foreign delivery, acknowledge its own unprocessed messages.",
		Title:       "ack or nack of a delivery this consumer did not hand out is ErrUnknownDelivery",
		Requirement: "SHOULD reject, with an error wrapping ErrUnknownDelivery, an Ack or Nack of a delivery this consumer did not hand out (another consumer's, a made-up ID), and leave this consumer's own deliveries untouched by it."},
	{ID: "R1", Area: "restart", Asserts: []string{"C-SUB-5", "C-CLOSE-1", "C-POS-1"},
		Level: MUST, Source: "trustgraph-base/trustgraph/base/backend.py, PubSubBackend.create_consumer: \"flow: shared competing consumers, durable named queue\"; close and unsubscribe are two methods of BackendConsumer (\"Close the consumer.\" / \"Unsubscribe from the topic.\")",
		Title:       "close is not unsubscribe: the gap's messages arrive after reopen",
		Requirement: "MUST keep the subscription when a consumer closes: messages sent while nobody was connected reach the reopened subscription even with initial position latest (closing is not unsubscribing)."},
	{ID: "R2", Area: "restart", Asserts: []string{"C-SUB-2", "C-SUB-5", "C-CLOSE-1"},
		Level: MUST, Source: "trustgraph-base/trustgraph/base/backend.py, PubSubBackend.create_consumer: \"flow: shared competing consumers, durable named queue\"; close and unsubscribe are two methods of BackendConsumer (\"Close the consumer.\" / \"Unsubscribe from the topic.\")",
		Title:       "a never-acked subscription survives close: reopen with latest gets what was sent meanwhile",
		Requirement: "MUST keep a subscription that never acknowledged anything: subscribe (live), close before any message, send, reopen with latest -> the messages arrive."},
	{ID: "R3", Area: "restart", Asserts: []string{"C-CLOSE-1"},
		Level: MUST, Source: "trustgraph-base/trustgraph/base/backend.py, PubSubBackend.create_consumer: \"flow: shared competing consumers, durable named queue\"; close and unsubscribe are two methods of BackendConsumer (\"Close the consumer.\" / \"Unsubscribe from the topic.\"); docs/tech-specs/pubsub-abstraction.md, hard requirement 2: \"Message acknowledgement — positive ack (remove from queue) and negative ack (trigger redelivery)\"",
		Title:       "repeated restarts under a steady producer lose nothing",
		Requirement: "MUST lose nothing across repeated consumer restarts under a steady producer: the union of what the restarted consumers received is everything sent."},
	{ID: "R4", Area: "restart", Asserts: []string{"C-CLASS-1"}, Priority: PrioritySecond,
		Level: MUST, Source: "docs/tech-specs/pubsub-abstraction.md, hard requirement 5: \"Persistence for at least one queue — config state must survive broker restart\"",
		Title:       "flow messages sent before a broker restart are delivered after it",
		Labels:      []string{"fault", "slow"},
		Requirement: "MUST deliver durable (flow) messages sent before a broker restart after it."},
	{ID: "R5", Area: "restart", Asserts: []string{"C-ACK-7"}, Priority: PriorityEarly,
		Level: MUST, Source: "docs/tech-specs/pubsub-abstraction.md, hard requirement 1: \"Shared subscription / competing consumers — multiple consumers on one queue, each message delivered to exactly one\"; docs/tech-specs/pubsub-abstraction.md, hard requirement 2: \"Message acknowledgement — positive ack (remove from queue) and negative ack (trigger redelivery)\" (an unacknowledged message is not removed, so it reaches another member)",
		Title:       "a crashed consumer's unacked messages reach the next group member",
		Labels:      []string{"fault"},
		Requirement: "MUST hand the unacknowledged messages of a consumer whose process was killed (no Close) to the next member of its subscription, within a bound."},
	{ID: "R6", Area: "restart", Asserts: []string{"C-LIFE-7"}, Priority: PrioritySecond,
		Level: SHOULD, Source: "Clients opened before a broker restart keep working after it without being reopened. TrustGraph does not ask this of a backend (docs/tech-specs/pubsub-abstraction.md, \"Reconnection and resilience\": \"The broker client itself is expected to provide a basic connection that can fail, and the wrapper classes handle recovery.\"); tested because it is what the Go clients (and most applications) expect, and a client that stalls after a restart is an outage nobody sees.",
		Title:       "a producer and a consumer opened before a broker restart keep working after it",
		Labels:      []string{"fault", "slow"},
		Requirement: "SHOULD keep a producer and a consumer opened before a broker restart working after it without the application reopening them: messages sent through the old producer after the restart arrive on the old consumer."},
	{ID: "R7", Area: "restart", Asserts: []string{"C-ACK-7", "C-ACK-3"}, Priority: PriorityEarly,
		Level: MUST, Source: "docs/tech-specs/pubsub-abstraction.md, hard requirement 2: \"Message acknowledgement — positive ack (remove from queue) and negative ack (trigger redelivery)\" (an ack removes that message only: a message the dead consumer never acked is still on the queue, whatever it acked after it)",
		Title:       "a consumer crash after out-of-order acks loses no unacked message",
		Labels:      []string{"fault"},
		Requirement: "MUST hand every unacknowledged message of a killed consumer (no Close) to the next member of its subscription, also when the consumer acked later messages out of order before it died: receive m1..m5, ack m5, m3 and m4, wait out the ack crash bound, kill -> m1 and m2 reach the next member (an ack never commits through an earlier unacked message, not even until a Close that never comes)."},
	{ID: "R8", Area: "restart", Asserts: []string{"C-ACK-6"}, Priority: PriorityEarly,
		Level: SHOULD, Source: "Acks are stored within a bound (backends.AckCrashBound, 1 s) even when the consumer dies without Close. TrustGraph's positive ack \"remove[s] from queue\" (docs/tech-specs/pubsub-abstraction.md, hard requirement 2) but names no time by which it must be stored; tested because a backend that stores acks only on Close redelivers everything a crashed consumer ever acked, and a crash is when a flow is restarted.",
		Title:       "acks older than the crash bound survive a consumer crash",
		Labels:      []string{"fault"},
		Requirement: "SHOULD keep in force, after the consumer's process was killed (no Close), every ack that returned more than the contract's ack crash bound (backends.AckCrashBound, 1 s) before the kill: the next member receives none of those messages again, only what was sent after."},
	{ID: "T1", Area: "retention", Asserts: []string{"C-TOP-1", "C-TOP-7", "C-TOP-9", "C-CLASS-3", "C-CAP-5"},
		Level: MUST, Source: "docs/tech-specs/kafka-backend.md, \"Topic Lifecycle\": \"Topic config includes `retention.ms` based on class.\"; \"Topic Classes and Retention\": \"The class prefix determines retention policy rather than durability\"",
		Title:       "a created topic's retention matches its class",
		Requirement: "MUST give a created topic the retention of its class (flow 7 days, others 5 minutes, unless configured otherwise), as read back from the broker."},
	{ID: "T2", Area: "retention", Asserts: []string{"C-POS-3", "C-POS-4", "C-CLASS-1"},
		Level: MUST, Source: "docs/tech-specs/pubsub-abstraction.md, \"Consumer positioning\": \"Earliest: The configuration consumer starts from the beginning of the topic to receive full configuration history on startup.\"; docs/tech-specs/pubsub-abstraction.md, hard requirement 4: \"Two consumer start positions — from beginning of topic and from current position\"",
		Title:       "flow messages sent before any subscription reach a new earliest subscriber",
		Requirement: "MUST keep flow messages sent before any subscription existed for a new subscriber that starts at earliest (durable replay), in any order (order is D4's)."},
	{ID: "T3", Area: "retention", Asserts: []string{"C-TOP-1", "C-TOP-8", "C-CAP-3"}, Priority: PriorityFirst,
		Level: SHOULD, Source: "Messages older than a short retention override are not delivered. TrustGraph reads no expiry back (docs/tech-specs/kafka-backend.md, \"Retention-based class semantics\": \"short retention achieves the ephemeral behaviour needed for request/response/notify classes\" is a storage bound, not a delivery rule); tested because a retention setting the broker ignores keeps storage unbounded.",
		Title:       "expired messages are not delivered",
		Labels:      []string{"slow"},
		Requirement: "SHOULD stop delivering messages older than a topic's retention: with a short retention override, an expired message is not delivered to a new earliest subscriber."},
	{ID: "L1", Area: "lifecycle", Asserts: []string{"C-TOP-2", "C-TOP-4", "C-TOP-5"},
		Level: MUST, Source: "trustgraph-base/trustgraph/base/backend.py, create_topic: \"Idempotent — creating an already-existing topic succeeds silently.\"; delete_topic: \"Idempotent — deleting a non-existent topic succeeds silently.\"; topic_exists: \"True if the topic exists, False otherwise.\"",
		Title:       "exists -> create -> exists -> delete -> gone, idempotently",
		Requirement: "MUST report a topic as missing, then existing after CreateTopic, then missing after DeleteTopic; creating an existing and deleting a missing topic are not errors."},
	{ID: "L2", Area: "lifecycle", Asserts: []string{"C-TOP-6", "C-TOP-2"},
		Level: MUST, Source: "trustgraph-base/trustgraph/base/backend.py, ensure_topic: \"Ensure a topic exists, creating it if necessary.\"",
		Title:       "EnsureTopic creates when missing and is a no-op when present",
		Requirement: "MUST create a missing topic in EnsureTopic, and leave a present one (and its messages) untouched."},
	{ID: "L3", Area: "lifecycle", Asserts: []string{"C-TOP-3"},
		Level: MUST, Source: "trustgraph-base/trustgraph/base/async_backend.py, delete_topic: \"Delete a topic and discard any in-flight messages.\"",
		Title:       "delete drops subscriptions: an old subscription name starts fresh",
		Requirement: "MUST drop a topic's subscriptions and positions with the topic: after delete and re-create, an old subscription name starts fresh (here: at earliest, so it gets every message of the new topic rather than resuming at the old position)."},
	{ID: "L4", Area: "lifecycle", Asserts: []string{"C-NAME-3", "C-LIFE-6", "C-ERR-1"},
		Level: SHOULD, Source: "Invalid topic strings and classes are rejected with ErrInvalidTopic, creating nothing. TrustGraph builds its topic strings itself (trustgraph-base/trustgraph/base/backend.py: \"topic: Queue identifier in class:topicspace:topic format\"); tested because a backend that accepts a malformed string creates a topic nobody reads.",
		Title:       "invalid topic strings are rejected with a clear error, nothing created",
		Requirement: "SHOULD reject invalid topic strings and classes with a clear error wrapping ErrInvalidTopic from every call, quickly, and create nothing."},
	{ID: "L5", Area: "lifecycle", Asserts: []string{"C-SUB-1"},
		Level: SHOULD, Source: "Consumer() on a missing topic returns promptly with a live subscription. TrustGraph creates topics first (docs/tech-specs/kafka-backend.md: \"Kafka topics must exist before consumers connect. The flow service and service startup `ensure_topic` calls handle this.\"); tested because a consumer that blocks and raises there (TrustGraph's async Kafka consumer: 40 s) is a hang where an answer belongs.",
		Title:       "Consumer() on a topic that does not exist yet creates it, and what is sent then arrives",
		Requirement: "SHOULD, for Consumer() on a topic that does not exist yet, return promptly with a live subscription on a topic that now exists, and deliver what is sent to it afterwards (TrustGraph's async Kafka consumer blocked 40 s and raised here)."},
	{ID: "L6", Area: "lifecycle", Asserts: []string{"C-PROD-1"},
		Level: SHOULD, Source: "Producer() creates a missing topic. TrustGraph creates topics first (docs/tech-specs/kafka-backend.md: \"Kafka topics must exist before consumers connect.\"); tested because a producer whose first Send fails for a missing topic fails late and far from the cause.",
		Title:       "Producer() on a topic that does not exist yet creates it",
		Requirement: "SHOULD create a missing topic when Producer() is called for it: the topic exists as soon as Producer() returned, before any Send."},
	{ID: "L7", Area: "lifecycle", Asserts: []string{"C-NAME-1", "C-NAME-2"},
		Level: MUST, Source: "trustgraph-base/trustgraph/base/async_kafka_backend.py, _parse_topic: \"if ':' not in topic_id: return f'tg.flow.{topic_id}', 'flow', True\" and \"parts = topic_id.split(':', 2)\" (further colons stay in the topic; the same in the Pulsar and RabbitMQ backends)",
		Title:       "a bare topic is flow:tg:<topic>; further colons belong to the topic",
		Requirement: "MUST treat a topic string without colons as flow:tg:<topic> (a producer of \"x\" reaches a consumer of \"flow:tg:x\"), and keep further colons in the topic part: \"request:tg:x:one\" and \"request:tg:x:two\" are two topics."},
	{ID: "L8", Area: "lifecycle", Asserts: []string{"C-LIFE-4", "C-ERR-1"},
		Level: SHOULD, Source: "Calls on a closed producer or consumer fail promptly with ErrClosed. TrustGraph does not use closed clients; tested because a closed client that waits out its context or reports success hides a shutdown bug.",
		Title:       "Receive, Ack, Nack and Send after Close fail with ErrClosed",
		Requirement: "SHOULD fail promptly with an error wrapping ErrClosed a Receive, Ack or Nack on a closed consumer and a Send on a closed producer (not wait out the context, not report success)."},
	{ID: "L9", Area: "lifecycle", Asserts: []string{"C-PROD-5", "C-CLOSE-2", "C-BE-4"},
		Level: SHOULD, Source: "A second Close is not an error. TrustGraph closes once; tested because shutdown paths (DeferCleanup, finally blocks, wrapper classes) routinely close twice.",
		Title:       "Close is idempotent for producer, consumer and backend",
		Requirement: "SHOULD accept a second Close of a producer, a consumer and a backend without an error."},
	{ID: "L10", Area: "lifecycle", Asserts: []string{"C-LIFE-3", "C-LIFE-4"},
		Level: MUST, Source: "trustgraph-base/trustgraph/base/async_backend.py, AsyncPubSubBackend.close: \"Close the backend and release all resources.\"",
		Title:       "closing the backend closes the producers and consumers it handed out",
		Requirement: "MUST close, when the Backend is closed, the producers and consumers it handed out: their Send and Receive then fail promptly with ErrClosed."},
	{ID: "S1", Area: "security", Asserts: []string{"C-SEND-2", "C-ERR-1"}, Priority: PriorityEarly,
		Level: MUST, Source: "docs/tech-specs/kafka-backend.md, \"Configuration\": \"--kafka-sasl-mechanism (optional)\", \"--kafka-sasl-username (optional)\", \"--kafka-sasl-password (optional)\" (settings TrustGraph passes must be applied to every client); a bad credential failing fast follows from \"Reconnection and resilience\": \"The broker client itself is expected to provide a basic connection that can fail, and the wrapper classes handle recovery.\"",
		Title:       "good credentials work; bad ones fail fast with an auth error",
		Requirement: "MUST, against an auth-enabled broker, make admin, producer and consumer work with good credentials, and fail fast (well within the bound, not a hang) with an error wrapping ErrAuth with bad credentials."},
	{ID: "S2", Area: "security", Asserts: []string{"C-CAP-8", "C-ERR-1"}, Priority: PriorityEarly,
		Level: SHOULD, Source: "Hosted Kafka and Pulsar accept only TLS. TrustGraph's settings name a security protocol (trustgraph-base 2.11.1, pubsub.py: KAFKA_SECURITY_PROTOCOL, which librdkafka and aiokafka take as SASL_SSL) and a pulsar+ssl:// PULSAR_HOST, but no CA and no RabbitMQ TLS at all, so no TrustGraph sentence requires TLS; tested because a deployment against a managed service needs it, and a client that trusts the wrong CA must say so, not hang.",
		Title:       "over TLS good credentials work; a client trusting the wrong CA fails fast",
		Requirement: "SHOULD, against the TLS listeners of an auth-enabled broker (Kafka SASL_SSL, Pulsar pulsar+ssl:// and https:// with a token, RabbitMQ amqps), with the CA that signed the broker's certificate and good credentials, make admin, producer and consumer work; and with an unrelated CA fail every client well within the bound (not a hang) with an error wrapping ErrAuth or ErrUnavailable that says the certificate did not verify."},
	{ID: "F1", Area: "fault", Asserts: []string{"C-ACK-2"}, Priority: PrioritySecond,
		Level: SHOULD, Source: "A consumer waiting through a 5 s network cut keeps working without being reopened. TrustGraph leaves recovery above the backend (docs/tech-specs/pubsub-abstraction.md, \"Reconnection and resilience\": \"The broker client itself is expected to provide a basic connection that can fail, and the wrapper classes handle recovery.\"); tested because it is what the Go clients promise and an application without such wrappers meets it.",
		Title:       "a consumer waiting through a 5 s network cut gets what was sent before, during and after it",
		Labels:      []string{"fault", "network"},
		Requirement: "SHOULD keep a consumer that waits through a 5 s network cut working without the application reopening it: a message sent before the cut, one sent during it (the sender retrying until a Send returns nil) and one sent after the heal all arrive on it, and the message acked before the cut is not delivered again."},
	{ID: "F2", Area: "fault", Asserts: []string{"C-SUB-2", "C-NACK-1", "C-ACK-1", "C-SUB-3", "C-MODE-2"}, Priority: PriorityThird,
		Level: MUST, Source: "The same sources as D2, A1, A2 and G1: trustgraph-base/trustgraph/base/async_backend.py, AsyncPubSubBackend.create_consumer: \"Returns only when the subscription is active and ready to receive messages.\"; docs/tech-specs/pubsub-abstraction.md, hard requirement 1: \"Shared subscription / competing consumers — multiple consumers on one queue, each message delivered to exactly one\"; docs/tech-specs/pubsub-abstraction.md, hard requirement 2: \"Message acknowledgement — positive ack (remove from queue) and negative ack (trigger redelivery)\" (TrustGraph runs across real networks: latency does not suspend them)",
		Title:       "under 200 ms of latency each way, ready-on-return, nack, ack and competing consumers still hold",
		Labels:      []string{"fault", "network"},
		Requirement: "MUST keep ready-on-return (D2, every class), nack redelivery (A1), ack-only-that (A2) and competing consumers (G1) under 200 ms of added network latency each way between every client and the broker: each check asserts exactly what its no-fault spec asserts, with the same bounds (F2 runs them at once, each on its own client, and G1's three consumers subscribe and its 30 messages, half G1's, are sent concurrently there: sequential synchronous acks under latency would measure throughput, not G1)."},
	{ID: "F3", Area: "fault", Asserts: []string{"C-SEND-1", "C-SEND-2", "C-PROD-3", "C-LIFE-5"}, Priority: PrioritySecond,
		Level: MUST, Source: "docs/tech-specs/pubsub-abstraction.md, \"Reconnection and resilience\": \"The broker client itself is expected to provide a basic connection that can fail, and the wrapper classes handle recovery.\" (a Send that returned nil is not retried by the wrappers, so it must not be lost; one that fails must say so within its bound)",
		Title:       "a Send during a network cut returns an error within its context or is delivered; no Send that returned nil is lost",
		Labels:      []string{"fault", "network"},
		Requirement: "MUST end every Send made while the network to the broker is cut within its context, with an error or nil, and deliver every message whose Send returned nil once the network is healed, to a consumer subscribed before the cut: an error may be returned for a message that is delivered anyway (the count is reported), a nil for one that is not may never be (no silent loss)."},
	{ID: "F4", Area: "fault", Asserts: []string{"C-LIFE-5", "C-ERR-1"}, Priority: PrioritySecond,
		Level: MUST, Source: "docs/tech-specs/pubsub-abstraction.md, \"Reconnection and resilience\": \"The broker client itself is expected to provide a basic connection that can fail, and the wrapper classes handle recovery.\" (calls fail within their bound, never a silent nil; the wrappers recover by calling the same backend again)",
		Title:       "while the broker is unreachable every call fails within its context; after the heal the same Backend works",
		Labels:      []string{"fault", "network"},
		Requirement: "MUST end every call made while the network to the broker is cut - Consumer(), Producer(), Send, CreateTopic, DeleteTopic, TopicExists - within its context with an error wrapping ErrUnavailable or ErrTimeout (never nil: a delete or an exists that swallows the failure is a defect), and work again, the same Backend and the producer opened before the cut, once the network is healed (a round trip)."},
	{ID: "F5", Area: "fault", Asserts: []string{"C-SEND-1"}, Priority: PrioritySecond,
		Level: SHOULD, Source: "No acknowledged write is lost when the partition leader of a replicated cluster is killed. TrustGraph asks persistence across a broker restart (docs/tech-specs/pubsub-abstraction.md, hard requirement 5: \"Persistence for at least one queue — config state must survive broker restart\", R4), not across the loss of a node; tested because production Kafka runs replicated, and acks=1 loses confirmed writes exactly here.",
		Title:       "killing the partition leader of a three-node Kafka cluster loses no acknowledged write",
		Labels:      []string{"fault", "slow", "cluster"},
		Requirement: "SHOULD not lose an acknowledged write when the partition leader of a replicated cluster (three nodes, replication factor 3, min.insync.replicas 2) is killed (SIGKILL) during a steady send from several producers, after its followers fell 1 s behind (replication from it cut, clients still reaching it): every message whose Send returned nil - before, during or after the failover - is delivered afterwards (duplicates are allowed and counted), and Sends succeed again within 30 s of the kill. The unavailability window (last confirmed Send before the kill to the first confirmed Send started after it) is measured and reported."},
	{ID: "F6", Area: "fault", Asserts: []string{"C-ACK-2", "C-ACK-5"}, Priority: PrioritySecond,
		Level: MUST, Source: "docs/tech-specs/pubsub-abstraction.md, hard requirement 2 (ack removes the message) and \"Reconnection and resilience\": \"The broker client itself is expected to provide a basic connection that can fail, and the wrapper classes handle recovery.\" (the wrappers do not ack twice: an Ack that returned nil must hold through the client's reconnect)",
		Title:       "an Ack that returned nil during a 10 s network cut holds after the heal and after a reopen",
		Labels:      []string{"fault", "network"},
		Requirement: "MUST keep in force an Ack made while the network to the broker is cut for 10 s (longer than a client session: the Kafka backend's group session is 6 s) that returned nil: the acked message is not delivered again to the consumer that waited through the cut, which receives what is sent after the heal, nor after that consumer's Close and a reopen of the subscription (an Ack that returned an error allows the redelivery; the report says so)."},
	{ID: "W1", Area: "workload", Priority: PriorityWorkload,
		Level: SHOULD, Source: "Seeded random programs of contract operations show no anomaly and end as the reference backend ends. TrustGraph's requirements are the single behaviours of the other areas (docs/tech-specs/pubsub-abstraction.md, hard requirements 1 and 2: each message to exactly one consumer of a shared subscription, ack removes, nack redelivers); tested because defects live in combinations no hand-written spec names (a nack while other deliveries are held, a join while messages flow, two producers on one topic, a latest subscription beside an earliest one), as Jepsen's Kafka workload finds them.",
		Title:       "generated programs over several clients show no anomaly and match the reference",
		Labels:      []string{"generative"},
		Requirement: "SHOULD run seeded programs of sends (three producers, two flow topics), receives, acks and nacks of any held delivery, consumer closes, joins and reopens of shared subscriptions, and new subscriptions of either position and mode - first every program of the corpus of programs W1 failed on before (internal/workload/testdata/corpus), then fresh seeded programs for the rest of about 25 s (at least one) - each followed by a drain of every subscription, with no anomaly found by the history checkers (lost, unexpected duplicate, acked redelivered, nacked never redelivered, wrong subscription, per-producer order, Receive outliving its context), every nacked message of a consumer that stayed open delivered again within 30 s, and every drained subscription's messages those of the reference backend on the same program; a corpus failure names the entry, a fresh one the seed, a program shrunk to one that fails the same way, and the command that adds it to the corpus."},
	{ID: "W2", Area: "workload",
		Level: SHOULD, Source: "W1's programs under a nemesis schedule, as Jepsen runs its Kafka workload under faults. TrustGraph's services keep running through broker restarts and network trouble (C-LIFE-7: clients reconnect) and rely on hard requirements 1 and 2 then too; defects of reconnects and rebalances show only under faults (a Send dropped after a reconnect, an ack lost with a session).",
		Title:       "generated programs under network faults, pauses, restarts and kills show no anomaly",
		Labels:      []string{"generative", "fault", "nemesis"},
		Requirement: "SHOULD run W1's seeded programs on a private broker behind a fault proxy under a seeded schedule of two or three faults drawn from what the fixtures can do there (network cut, 300 ms latency each way, connections reset when the broker answers, answers cut off after 1 KiB, the broker paused with SIGSTOP, the broker restarted, a consumer's client killed after an ack), each lasting 2 s or 9 s (shorter and longer than the Kafka backend's 6 s session), every fault ended before the drain; with no anomaly found by the history checkers under the contract's allowances for faults (a Send that returned an error may or may not be delivered; a crash, a fault or a rebalance may redeliver what was not acknowledged; order is not judged), every nacked message of a consumer that stayed open delivered again within 30 s, and every drained subscription's messages those of the fault-free reference run, less the messages whose Send failed and the subscriptions whose Consumer call failed; the corpus of W2's earlier failures (programs with their schedules, less the faults the broker cannot take) replays first; a failure names the entry or the seed, the schedule with what each fault did when, and a shrunk program. Runs with PUBSUB_NEMESIS set (make soak NEMESIS=1)."},
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

// ParseIDs reads a list of catalogue IDs separated by commas or spaces (make's SPECS=D2,A1),
// in the order given, without duplicates. An ID the catalogue does not have is an error naming
// it and the IDs there are (IDRanges); the caller prefixes the setting's name.
func ParseIDs(list string) ([]string, error) {
	var ids, unknown []string
	seen := map[string]bool{}
	for _, id := range strings.FieldsFunc(list, func(r rune) bool { return r == ',' || unicode.IsSpace(r) }) {
		if seen[id] {
			continue
		}
		seen[id] = true
		if _, ok := Lookup(id); ok {
			ids = append(ids, id)
			continue
		}
		q := strconv.Quote(id)
		if _, ok := Lookup(strings.ToUpper(id)); ok {
			q += " (IDs are upper case: " + strings.ToUpper(id) + ")"
		}
		unknown = append(unknown, q)
	}
	switch len(unknown) {
	case 0:
		return ids, nil
	case 1:
		return nil, fmt.Errorf("unknown catalogue ID %s; the catalogue has %s", unknown[0], IDRanges())
	}
	return nil, fmt.Errorf("unknown catalogue IDs %s; the catalogue has %s", strings.Join(unknown, ", "), IDRanges())
}

// IDRanges lists the catalogue's IDs area by area, consecutive numbers as a range:
// "D1-D10, G1-G5, ...".
func IDRanges() string {
	var letters []string
	nums := map[string][]int{}
	for _, b := range Behaviours {
		l, rest := b.ID[:1], b.ID[1:]
		n, err := strconv.Atoi(rest)
		if err != nil {
			continue // Check refuses such an ID
		}
		if nums[l] == nil {
			letters = append(letters, l)
		}
		nums[l] = append(nums[l], n)
	}
	var parts []string
	for _, l := range letters {
		ns := nums[l]
		slices.Sort(ns)
		for i := 0; i < len(ns); {
			j := i
			for j+1 < len(ns) && ns[j+1] == ns[j]+1 {
				j++
			}
			if j == i {
				parts = append(parts, fmt.Sprintf("%s%d", l, ns[i]))
			} else {
				parts = append(parts, fmt.Sprintf("%s%d-%s%d", l, ns[i], l, ns[j]))
			}
			i = j + 1
		}
	}
	return strings.Join(parts, ", ")
}

// SpecText is the text of the spec implementing b: "[D1] payload bytes ...". The ID stays in
// the text for people reading Ginkgo's output; tools read the ID label.
func (b Behaviour) SpecText() string { return "[" + b.ID + "] " + b.Title }

// SpecLabels are the Ginkgo labels of the spec implementing b: its ID label, its area, its
// level label and b.Labels.
func (b Behaviour) SpecLabels() []string {
	return append([]string{IDLabel(b.ID), b.Area, LevelLabel(b.Level)}, b.Labels...)
}

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
// IDs, unknown areas, an ID whose letter is not its area's, empty titles, a level that is not
// MUST or SHOULD, a requirement not starting with its level, no source, entries of one area
// not kept together.
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
		switch b.Level {
		case MUST, SHOULD:
			if rest, ok := strings.CutPrefix(b.Requirement, string(b.Level)); !ok || !strings.HasPrefix(rest, " ") && !strings.HasPrefix(rest, ",") {
				problems = append(problems, fmt.Sprintf("%s: the requirement must start with its level, %s", where, b.Level))
			}
		default:
			problems = append(problems, fmt.Sprintf("%s: level %q: want MUST or SHOULD", where, b.Level))
		}
		if strings.TrimSpace(b.Source) == "" {
			problems = append(problems, fmt.Sprintf("%s: no source: a MUST quotes TrustGraph's sentence, a SHOULD says which stronger guarantee and why", where))
		}
		if b.Priority < 0 || b.Priority > PriorityWorkload {
			problems = append(problems, fmt.Sprintf("%s: priority %d: want 0 (none) to %d (PriorityWorkload)", where, b.Priority, PriorityWorkload))
		}
	}
	return problems
}
