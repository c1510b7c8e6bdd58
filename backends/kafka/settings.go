package kafka

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/pubsub-conformance/harness/backends"
	"github.com/pubsub-conformance/harness/internal/envvars"
)

// Descriptor registers this backend (see backends/all). Settings come from TrustGraph's
// environment names, listed in Vars and parsed by ParseConfig.
var Descriptor = backends.Descriptor{
	Name:        "kafka",
	Description: "Apache Kafka via confluent-kafka-go (librdkafka)",
	Broker:      "kafka",
	New:         New,
	Vars:        Vars,
}

// passthroughSecrets are the members of a librdkafka passthrough family that may carry a
// credential (sasl.password, ssl.key.password, sasl.oauthbearer.client.secret).
func passthroughSecrets(prefix string) []string {
	return []string{prefix + "*PASSWORD*", prefix + "*SECRET*", prefix + "*TOKEN*"}
}

// Vars are the environment variables this backend reads (TrustGraph's names), parsed by
// ParseConfig; docs/settings.md is generated from them.
var Vars = envvars.Table{
	{Name: "KAFKA_BOOTSTRAP_SERVERS", Meaning: "the brokers (`host:port,...`); the fixtures set it; with `PUBSUB_BROKERS=external`, and in the backends' go tests when `PUBSUB_BROKERS` is unset, the broker to test against"},
	{Name: "KAFKA_SECURITY_PROTOCOL", Meaning: "`PLAINTEXT`, `SASL_PLAINTEXT`, `SASL_SSL` or `SSL` (the external provider reads it too)", Default: "PLAINTEXT"},
	{Name: "KAFKA_SASL_MECHANISM", Meaning: "`PLAIN`, `SCRAM-SHA-256` or `SCRAM-SHA-512`"},
	{Name: "KAFKA_SASL_USERNAME", Meaning: "the SASL user"},
	{Name: "KAFKA_SASL_PASSWORD", Meaning: "the SASL user's password", Secret: true},
	{Name: "KAFKA_SSL_CA_LOCATION", Meaning: "the CA file for `SASL_SSL` and `SSL` ([tls.md](tls.md))"},
	{Name: "KAFKA_SSL_CERT_LOCATION", Meaning: "a client certificate file"},
	{Name: "KAFKA_SSL_KEY_LOCATION", Meaning: "the client certificate's key file"},
	{Name: "KAFKA_REPLICATION_FACTOR", Meaning: "replication factor of created topics (the cluster fixture sets its node count)", Default: "1"},
	{Name: "KAFKA_DEBUG", Meaning: "librdkafka's debug contexts (`cgrp,topic,fetch`), logged to the client log"},
	{Name: "KAFKA_CONSUMER_NO_WAIT", Meaning: "`true`: `Consumer()` returns before the group assignment (faster start, loses what is sent before it; breaks D2)", Default: "false"},
	{Name: "KAFKA_ACK_SYNC", Meaning: "`true`: every Ack commits before it returns (one round trip each); by default Ack records the ack and returns, and a committer commits it (Close and every revoke commit synchronously)", Default: "false"},
	{Name: "KAFKA_COMMIT_INTERVAL_MS", Meaning: "the least time between two commits of the background committer when acks come faster (at most 500: half the contract's ack crash bound)", Default: "100"},
	{Name: "KAFKA_GROUP_PROTOCOL", Meaning: "`classic` or `consumer` (KIP-848, Kafka 4.0 and later; the `kafka-kip848` registration sets it)", Default: "classic"},
	{Name: "KAFKA_CONFIG_<KEY>", Meaning: "passed to librdkafka as is, `_` becoming `.` (`KAFKA_CONFIG_FETCH_WAIT_MAX_MS=10`); validated by the backend", SecretIf: passthroughSecrets("KAFKA_CONFIG_")},
	{Name: "KAFKA_ADMIN_CONFIG_<KEY>", Meaning: "passed to the admin client only, after `KAFKA_CONFIG_*`: another principal for topic administration (the backend then runs a separate admin client)", SecretIf: passthroughSecrets("KAFKA_ADMIN_CONFIG_")},
}

// KIP848Descriptor registers the same backend on Kafka's new consumer group protocol
// (KAFKA_GROUP_PROTOCOL=consumer, KIP-848, generally available since Kafka 4.0): rebalances -
// the heart of D2, G1 and the restart area - work differently there. Opt-in: it runs when
// named, on a Kafka 4.x broker.
var KIP848Descriptor = func() backends.Descriptor {
	d := Descriptor
	d.Name = "kafka-kip848"
	d.Description = "Apache Kafka via confluent-kafka-go (librdkafka), KIP-848 consumer group protocol (group.protocol=consumer)"
	d.Settings = map[string]string{"KAFKA_GROUP_PROTOCOL": GroupProtocolConsumer}
	d.OptIn = true
	d.MinBroker = "4.0.0"
	d.MinBrokerWhy = "the consumer group protocol (KIP-848) is generally available from Kafka 4.0; 3.7-3.9 have only an early-access form behind group.coordinator.rebalance.protocols, which the harness does not test"
	return d
}()

// Config holds the Kafka client settings, parsed from backends.Config.Settings by ParseConfig.
// Auth fields reach producer, consumer and admin.
type Config struct {
	BootstrapServers string // KAFKA_BOOTSTRAP_SERVERS
	SecurityProtocol string // KAFKA_SECURITY_PROTOCOL: PLAINTEXT, SASL_PLAINTEXT, SASL_SSL, SSL
	SASLMechanism    string // KAFKA_SASL_MECHANISM: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512
	SASLUsername     string // KAFKA_SASL_USERNAME
	SASLPassword     string // KAFKA_SASL_PASSWORD
	SSLCALocation    string // KAFKA_SSL_CA_LOCATION
	SSLCertLocation  string // KAFKA_SSL_CERT_LOCATION
	SSLKeyLocation   string // KAFKA_SSL_KEY_LOCATION
	// ReplicationFactor for created topics (KAFKA_REPLICATION_FACTOR); 0 means 1.
	ReplicationFactor int
	// Extra is passed to librdkafka as is (KAFKA_CONFIG_<key with _ for .>=value); validated by the backend.
	Extra map[string]string
	// Debug is librdkafka's debug contexts (KAFKA_DEBUG=cgrp,topic,fetch), logged to Config.Log.
	Debug string
	// AdminExtra is passed to the admin client only, after Extra (KAFKA_ADMIN_CONFIG_<key>=value):
	// for deployments whose topic administration uses another principal than the data path.
	// When set, the backend runs a separate admin client instead of sharing the producer's.
	AdminExtra map[string]string
	// ConsumerNoWait makes Consumer() return right after subscribing, without waiting for the
	// group join and partition assignment (KAFKA_CONSUMER_NO_WAIT=true). For callers that
	// accept losing what is sent before the assignment in exchange for a fast start; the
	// default (false) waits, as the contract requires.
	ConsumerNoWait bool
	// AckSync makes every Ack commit its partition's books before it returns (KAFKA_ACK_SYNC=true):
	// durable on return, one broker round trip per ack (about 130 acks/s on loopback). The
	// default records the ack and returns; a background committer commits it, at most once
	// per CommitInterval, and Close and every partition revoke commit synchronously (C-ACK-5).
	AckSync bool
	// CommitInterval is the least time between two commits of the background committer
	// (KAFKA_COMMIT_INTERVAL_MS; 0 means DefaultCommitInterval): an ack waits at most this long
	// plus one commit. At most MaxCommitInterval, so that an ack is committed well within
	// backends.AckCrashBound.
	CommitInterval time.Duration
	// GroupProtocol is librdkafka's group.protocol (KAFKA_GROUP_PROTOCOL): "classic" (the
	// default: the eager join/sync protocol, rebalances stop the whole group) or "consumer"
	// (KIP-848, Kafka 4.0 and later: the broker computes assignments and members move
	// partitions incrementally; session and heartbeat timeouts are then the broker's
	// group.consumer.* settings, not the client's).
	GroupProtocol string
}

// The group protocols of KAFKA_GROUP_PROTOCOL.
const (
	GroupProtocolClassic  = "classic"
	GroupProtocolConsumer = "consumer"
)

const (
	// DefaultCommitInterval: ten commits a second per consumer at most, whatever the ack rate.
	DefaultCommitInterval = 100 * time.Millisecond
	// MaxCommitInterval leaves half of backends.AckCrashBound for the commit's round trip.
	MaxCommitInterval = backends.AckCrashBound / 2
)

// ParseConfig reads the Kafka settings (TrustGraph's names, see Config's fields) and rejects
// unusable values with an error wrapping backends.ErrInvalidConfig that names the setting.
func ParseConfig(s map[string]string) (Config, error) {
	c := Config{
		BootstrapServers: s["KAFKA_BOOTSTRAP_SERVERS"],
		SecurityProtocol: s["KAFKA_SECURITY_PROTOCOL"],
		SASLMechanism:    s["KAFKA_SASL_MECHANISM"],
		SASLUsername:     s["KAFKA_SASL_USERNAME"],
		SASLPassword:     s["KAFKA_SASL_PASSWORD"],
		SSLCALocation:    s["KAFKA_SSL_CA_LOCATION"],
		SSLCertLocation:  s["KAFKA_SSL_CERT_LOCATION"],
		SSLKeyLocation:   s["KAFKA_SSL_KEY_LOCATION"],
		Debug:            s["KAFKA_DEBUG"],
		Extra:            librdkafkaKeys(backends.SettingsWithPrefix(s, "KAFKA_CONFIG_")),
		AdminExtra:       librdkafkaKeys(backends.SettingsWithPrefix(s, "KAFKA_ADMIN_CONFIG_")),
	}
	if v := s["KAFKA_REPLICATION_FACTOR"]; v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return Config{}, fmt.Errorf("%w: KAFKA_REPLICATION_FACTOR=%q is not a positive integer", backends.ErrInvalidConfig, v)
		}
		c.ReplicationFactor = n
	}
	if v := s["KAFKA_CONSUMER_NO_WAIT"]; v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return Config{}, fmt.Errorf("%w: KAFKA_CONSUMER_NO_WAIT=%q is not a boolean", backends.ErrInvalidConfig, v)
		}
		c.ConsumerNoWait = b
	}
	if v := s["KAFKA_ACK_SYNC"]; v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return Config{}, fmt.Errorf("%w: KAFKA_ACK_SYNC=%q is not a boolean", backends.ErrInvalidConfig, v)
		}
		c.AckSync = b
	}
	switch v := s["KAFKA_GROUP_PROTOCOL"]; v {
	case "", GroupProtocolClassic:
		c.GroupProtocol = GroupProtocolClassic
	case GroupProtocolConsumer:
		c.GroupProtocol = v
	default:
		return Config{}, fmt.Errorf("%w: KAFKA_GROUP_PROTOCOL=%q: want %s or %s (KIP-848, Kafka 4.0 and later)",
			backends.ErrInvalidConfig, v, GroupProtocolClassic, GroupProtocolConsumer)
	}
	if v := s["KAFKA_COMMIT_INTERVAL_MS"]; v != "" {
		n, err := strconv.Atoi(v)
		d := time.Duration(n) * time.Millisecond
		if err != nil || n < 1 || d > MaxCommitInterval {
			return Config{}, fmt.Errorf("%w: KAFKA_COMMIT_INTERVAL_MS=%q is not a whole number of milliseconds from 1 to %d (the contract's ack crash bound is %v)",
				backends.ErrInvalidConfig, v, MaxCommitInterval.Milliseconds(), backends.AckCrashBound)
		}
		c.CommitInterval = d
	}
	return c, nil
}

// librdkafkaKeys turns setting-name suffixes into librdkafka property names:
// FETCH_WAIT_MAX_MS -> fetch.wait.max.ms.
func librdkafkaKeys(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[strings.ToLower(strings.ReplaceAll(k, "_", "."))] = v
	}
	return out
}

// TopicName is the Kafka topic of a contract topic: "topicspace.class.topic" with colons turned
// into dots.
func TopicName(t backends.Topic) string {
	return t.Space + "." + string(t.Class) + "." + strings.ReplaceAll(t.Name, ":", ".")
}
