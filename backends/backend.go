// Package backends defines the pub/sub contract every backend implements: the contract of
// TrustGraph's pub/sub layer, in idiomatic Go.
//
// The contract is deliberately wire-friendly (plain data in and out, no channels or callbacks,
// errors that map to a small set of codes) so that an out-of-process adapter can speak it over a
// simple protocol later.
//
// Lifecycle, for every implementation (the bracketed IDs name the contract's sentences;
// reports/contract.md lists the specs that assert each one):
//   - A Backend is created by a Constructor from a Config (see registry.go). It owns its clients.
//     The caller that created it calls Close exactly once, after closing what it handed out.
//     [C-LIFE-1]
//   - Producers and Consumers are created by the Backend and closed by whoever created them.
//     [C-LIFE-2] Closing the Backend closes anything still open. [C-LIFE-3]
//   - After Close, every other method of the closed Producer, Consumer or Backend returns an
//     error wrapping ErrClosed. [C-LIFE-4]
//   - Every call takes a context.Context and never blocks past it: when ctx ends, the call returns
//     an error wrapping ErrTimeout (deadline) or context.Canceled. [C-LIFE-5]
//   - Nothing panics on bad input: it returns an error wrapping one of the sentinels below.
//     [C-LIFE-6]
//   - Producers and Consumers outlive a broker restart: they reconnect by themselves, and a
//     message sent after the restart through a producer opened before it reaches a consumer
//     opened before it. [C-LIFE-7]
package backends

import (
	"context"
	"errors"
	"time"
)

// Message is what a producer sends: opaque payload bytes and string properties. Payload and
// property keys and values arrive byte for byte as sent (letter case, dots, dashes, spaces,
// long values). [C-MSG-1] A nil and an empty Properties map mean the same thing. [C-MSG-2]
type Message struct {
	Payload    []byte
	Properties map[string]string
}

// Delivery is one received message. ID is an opaque token, unique within the Consumer that
// returned it, that Ack and Nack use to find the message again; backends encode in it whatever
// they need (an offset, a serialized message id). [C-DLV-1] Delivery is plain data so it can
// cross a wire.
type Delivery struct {
	ID         string
	Topic      string // the contract topic string it was received from [C-DLV-2]
	Payload    []byte
	Properties map[string]string
}

// Backend is one pub/sub system behind the contract.
//
// Who calls it: the spec suite (one Backend per spec, created in a BeforeEach and closed by a
// DeferCleanup) and, in production, the application's service layer. All methods are safe for
// concurrent use. [C-BE-1]
type Backend interface {
	// Name is the registry name of the backend ("kafka", "pulsar", "memory"). [C-BE-2]
	Name() string

	// Producer returns a producer for topic, creating the topic when missing (EnsureTopic).
	// [C-PROD-1] The caller closes the producer. [C-PROD-2]
	Producer(ctx context.Context, topic string) (Producer, error)

	// Consumer returns a consumer of topic on the named subscription, creating the topic when
	// missing. [C-SUB-1] It returns only when the subscription is live: a message sent after
	// Consumer returned is delivered to this subscription, whatever the initial position.
	// [C-SUB-2] Shared classes (flow, request) compete on the subscription name; [C-SUB-3]
	// unique classes (response, notify) give every consumer its own subscription (fan-out)
	// unless WithMode overrides. [C-SUB-4] The caller closes the consumer; Close never removes
	// the subscription. [C-SUB-5] Consumers receiving concurrently on one shared subscription
	// share its messages among them, so a consumer added to it adds capacity. [C-SUB-6]
	// An error does not mean no subscription was made: a Consumer call that timed out or
	// failed on a broken connection may have made it on the broker, so a later Consumer with
	// that name may resume from where the failed call made it. [C-SUB-7]
	Consumer(ctx context.Context, topic, subscription string, opts ...ConsumerOption) (Consumer, error)

	// CreateTopic creates topic with its class's retention (or the TopicOption override).
	// [C-TOP-1] Idempotent: creating an existing topic is not an error and changes nothing.
	// [C-TOP-2]
	CreateTopic(ctx context.Context, topic string, opts ...TopicOption) error

	// DeleteTopic deletes topic with its messages, subscriptions and committed positions.
	// [C-TOP-3] Idempotent: deleting a missing topic is not an error. [C-TOP-4]
	DeleteTopic(ctx context.Context, topic string) error

	// TopicExists reports whether topic exists on the broker. [C-TOP-5]
	TopicExists(ctx context.Context, topic string) (bool, error)

	// EnsureTopic creates topic when missing and does nothing when present. [C-TOP-6]
	EnsureTopic(ctx context.Context, topic string, opts ...TopicOption) error

	// Retention reads back from the broker the retention in force for an existing topic.
	// [C-TOP-7]
	Retention(ctx context.Context, topic string) (time.Duration, error)

	// Unsupported lists the capabilities this backend, as configured, truly lacks, each with the
	// reason a report should show. Specs that need one skip with that reason. Empty means the
	// backend claims the whole contract. [C-BE-3]
	Unsupported() map[Capability]string

	// Close closes the backend and everything it handed out (C-LIFE-3). Idempotent. [C-BE-4]
	Close(ctx context.Context) error
}

// Producer sends messages to one topic. Safe for concurrent use: concurrent Sends are allowed.
// [C-PROD-3]
type Producer interface {
	// Send returns only after the broker confirmed the message (a delivery report, a send
	// receipt); [C-SEND-1] the broker's error, if any, is returned, never only logged. [C-SEND-2]
	// An error does not mean the message was not delivered: a Send that timed out or failed on
	// a broken connection may have reached the broker, so a caller that sends it again may
	// deliver it twice. [C-SEND-3]
	Send(ctx context.Context, msg Message) error
	// Close flushes anything pending within ctx and releases the producer. [C-PROD-4]
	// Idempotent. [C-PROD-5]
	Close(ctx context.Context) error
}

// Consumer receives from one subscription. Receive, Ack and Nack may be called from different
// goroutines, [C-CONS-1] but Receive is not meant to be called concurrently with itself.
// [C-CONS-2]
type Consumer interface {
	// Receive blocks for the next message. When ctx ends first it returns an error wrapping
	// ErrTimeout (deadline exceeded) or context.Canceled; it never blocks past ctx. [C-RECV-1]
	Receive(ctx context.Context) (Delivery, error)
	// Ack acknowledges d and nothing else: other unacknowledged messages, earlier or later, are
	// delivered again after the subscription is reopened, [C-ACK-1] and d is not. [C-ACK-2]
	// Acks may come in any order (completion order). [C-ACK-3] A delivery this consumer did not
	// hand out (another consumer's, a made-up ID) is an error wrapping ErrUnknownDelivery, for
	// Ack and Nack alike. [C-ACK-4]
	//
	// Ack may return before the broker stored the acknowledgement (a background commit, a
	// grouped ack); once this consumer's Close returned, every ack it returned is in force.
	// [C-ACK-5] When the consumer's process dies instead (no Close), a message acked less than
	// AckCrashBound before the death may be delivered again (at-least-once); one acked earlier is
	// not. A broker out of reach for longer than the consumer's session (a network cut, a paused
	// broker) is such a death to the group: a message acked less than AckCrashBound before it
	// went out of reach, or in the first AckCrashBound of the outage, may be delivered again;
	// a later Ack either is in force or returns an error. [C-ACK-6] A crash never costs an unacknowledged message, whatever was acked around it
	// and in whatever order: every message the dead consumer had not acked reaches the
	// subscription's next member. [C-ACK-7]
	//
	// After the subscription's members changed (a join, a close, a session lost), a message
	// this consumer holds may have moved to another member, which delivers it again. Only then
	// may an Ack or a Nack of this consumer's own delivery fail with an error wrapping
	// ErrUnknownDelivery: it is not in force, and the message comes again to the subscription
	// (or came already). An Ack that returned nil is never dropped for that reason. [C-ACK-8]
	// A message this consumer was handed more than once (a rebalance gave its partition back
	// and it was fetched again) is acknowledged by the first Ack of any of its deliveries that
	// returned nil; a Nack of another of its deliveries after that may fail with an error
	// wrapping ErrUnknownDelivery, and the message does not come again for it. [C-ACK-9]
	Ack(ctx context.Context, d Delivery) error
	// Nack asks for d to be delivered again (to this or another member of the subscription),
	// within a bounded delay. [C-NACK-1]
	Nack(ctx context.Context, d Delivery) error
	// Close leaves the subscription without removing it: the subscription keeps its position
	// and a later Consumer with the same name resumes from it. [C-CLOSE-1] Idempotent.
	// [C-CLOSE-2]
	Close(ctx context.Context) error
}

// AckCrashBound is how long an acknowledgement may stay unstored after Ack returned (C-ACK-6):
// a backend that commits acks in the background commits each within this bound.
const AckCrashBound = time.Second

// Position is where a new subscription starts. An existing subscription always resumes from its
// own position, whatever is asked here. [C-POS-1]
type Position int

const (
	// Latest starts a new subscription at the end of the topic (the default): what was sent
	// before the subscription was live is not delivered to it. [C-POS-2]
	Latest Position = iota
	// Earliest starts a new subscription at the oldest retained message. [C-POS-3]
	Earliest
)

func (p Position) String() string {
	if p == Earliest {
		return "earliest"
	}
	return "latest"
}

// Mode is how consumers of one subscription name share messages.
type Mode int

const (
	// ModeDefault takes the mode of the topic's class. [C-MODE-1]
	ModeDefault Mode = iota
	// Shared consumers of one subscription name compete: each message goes to one of them.
	// [C-MODE-2]
	Shared
	// Unique gives every consumer its own subscription: each gets every message (fan-out).
	// [C-MODE-3]
	Unique
)

func (m Mode) String() string {
	switch m {
	case Shared:
		return "shared"
	case Unique:
		return "unique"
	default:
		return "default"
	}
}

// ConsumerSettings is the plain-data result of applying ConsumerOptions.
type ConsumerSettings struct {
	Position Position
	Mode     Mode
}

// ConsumerOption adjusts a Consumer call.
type ConsumerOption func(*ConsumerSettings)

// WithPosition sets where a new subscription starts. [C-POS-4]
func WithPosition(p Position) ConsumerOption { return func(s *ConsumerSettings) { s.Position = p } }

// WithMode overrides the class's default subscription mode.
func WithMode(m Mode) ConsumerOption { return func(s *ConsumerSettings) { s.Mode = m } }

// ApplyConsumerOptions resolves opts for topic t: the mode falls back to the class default.
func ApplyConsumerOptions(t Topic, opts ...ConsumerOption) ConsumerSettings {
	s := ConsumerSettings{Position: Latest}
	for _, o := range opts {
		if o != nil {
			o(&s)
		}
	}
	if s.Mode == ModeDefault {
		s.Mode = t.Class.DefaultMode()
	}
	return s
}

// TopicSettings is the plain-data result of applying TopicOptions.
type TopicSettings struct {
	// Retention is the retention to create the topic with; zero means the class default
	// (or the backend's Config override for the class). [C-TOP-9]
	Retention time.Duration
}

// TopicOption adjusts CreateTopic / EnsureTopic.
type TopicOption func(*TopicSettings)

// WithRetention overrides the retention of the created topic (used by the expiry spec).
// [C-TOP-8]
func WithRetention(d time.Duration) TopicOption {
	return func(s *TopicSettings) { s.Retention = d }
}

// ApplyTopicOptions resolves opts for topic t against cfg's per-class overrides.
func ApplyTopicOptions(t Topic, cfg Config, opts ...TopicOption) TopicSettings {
	var s TopicSettings
	for _, o := range opts {
		if o != nil {
			o(&s)
		}
	}
	if s.Retention == 0 {
		s.Retention = cfg.RetentionFor(t.Class)
	}
	return s
}

// Capability names a part of the contract a backend may declare it lacks.
type Capability string

const (
	// CapTransientRedelivery: nack and reopen redeliver on non-durable classes (request,
	// response, notify); Pulsar's non-persistent topics keep nothing, so they cannot. [C-CAP-1]
	CapTransientRedelivery Capability = "transient-redelivery"
	// CapTransientReplay: non-durable classes keep messages for a subscriber that was not
	// connected when they were sent. [C-CAP-2]
	CapTransientReplay Capability = "transient-replay"
	// CapRetentionExpiry: a short retention makes the broker drop expired messages in seconds.
	// [C-CAP-3]
	CapRetentionExpiry Capability = "retention-expiry"
	// CapBinaryPayloads: a payload that is not valid UTF-8 arrives intact; an adapter of an API
	// whose messages are JSON text cannot express one. [C-CAP-4]
	CapBinaryPayloads Capability = "binary-payloads"
	// CapRetentionReadBack: Retention reads a topic's retention back from the broker. [C-CAP-5]
	CapRetentionReadBack Capability = "retention-read-back"
	// CapModeOverride: WithMode overrides the subscription mode of a topic's class. [C-CAP-6]
	CapModeOverride Capability = "mode-override"
	// CapLoadSharing: competing consumers of one subscription share its messages (C-SUB-6); a
	// topic of one Kafka partition goes to one member of the group, so Kafka cannot. [C-CAP-7]
	CapLoadSharing Capability = "load-sharing"
	// CapTLS: the backend reaches a broker over TLS, verifying its certificate against a CA
	// the settings name, with the same credentials as without TLS. [C-CAP-8]
	CapTLS Capability = "tls"
)

// Sentinel errors. Implementations wrap them with %w and context; callers test with errors.Is.
// [C-ERR-1] Each maps to a wire code (see Code) for the out-of-process adapter. [C-ERR-2]
var (
	ErrTimeout         = errors.New("timeout")
	ErrInvalidTopic    = errors.New("invalid topic")
	ErrClosed          = errors.New("closed")
	ErrUnknownDelivery = errors.New("unknown delivery")
	ErrAuth            = errors.New("authentication failed")
	ErrUnavailable     = errors.New("broker unavailable")
	ErrUnknownBackend  = errors.New("unknown backend")
	ErrInvalidConfig   = errors.New("invalid configuration")
)

// Code maps err to the contract's small set of error codes ("" for nil, "internal" for
// anything not wrapping a sentinel). [C-ERR-3]
func Code(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, ErrTimeout), errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.Is(err, ErrInvalidTopic):
		return "invalid_topic"
	case errors.Is(err, ErrClosed):
		return "closed"
	case errors.Is(err, ErrUnknownDelivery):
		return "unknown_delivery"
	case errors.Is(err, ErrAuth):
		return "auth"
	case errors.Is(err, ErrUnavailable):
		return "unavailable"
	case errors.Is(err, ErrUnknownBackend):
		return "unknown_backend"
	case errors.Is(err, ErrInvalidConfig):
		return "invalid_config"
	default:
		return "internal"
	}
}
