package kafka

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	ck "github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/pubsub-conformance/harness/backends"
)

const (
	// maxMessageBytes bounds one record, on the producer (message.max.bytes) and on every topic
	// this backend creates (max.message.bytes): 10 MiB leaves room for a 5 MiB payload (D5) plus
	// headers and batch overhead. The broker's default (about 1 MB) would reject it.
	maxMessageBytes = 10 << 20

	// sessionTimeout is how long the group coordinator waits for a silent member before moving
	// its partition to the next member (R5). 6 s is the broker's default
	// group.min.session.timeout.ms, the lowest a stock broker accepts. Users may lower it with
	// KAFKA_CONFIG_SESSION_TIMEOUT_MS when their broker allows.
	sessionTimeout = 6 * time.Second
)

// managedKeys are librdkafka properties the backend's guarantees depend on; a passthrough that
// changed them would silently break the contract (auto commit acknowledges unprocessed
// messages, a fixed group.id turns fan-out into competition), so they are refused.
var managedKeys = map[string]string{
	"group.id":                 "the group is the subscription name (shared) or a unique name (fan-out)",
	"enable.auto.commit":       "Ack commits explicitly; auto commit would acknowledge unprocessed messages",
	"enable.auto.offset.store": "Ack commits explicit offsets",
	"bootstrap.servers":        "set KAFKA_BOOTSTRAP_SERVERS instead",
	"group.protocol":           "set KAFKA_GROUP_PROTOCOL instead",
}

// validateExtra checks the passthrough keys the backend can judge itself; librdkafka judges the
// rest when the first client is created (see New), and its error names the key.
func validateExtra(extra map[string]string) error {
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if k == "" || strings.TrimSpace(k) != k {
			return fmt.Errorf("%w: kafka config key %q is not a librdkafka property name", backends.ErrInvalidConfig, k)
		}
		if why, ok := managedKeys[k]; ok {
			return fmt.Errorf("%w: kafka config key %q is managed by the backend (%s)", backends.ErrInvalidConfig, k, why)
		}
		if strings.HasPrefix(k, "go.") {
			return fmt.Errorf("%w: kafka config key %q: Go client settings are managed by the backend", backends.ErrInvalidConfig, k)
		}
	}
	return nil
}

// commonConfig is the one place that builds the settings every client shares - producer,
// consumer and admin - so that security settings and passthrough reach all three.
// logs receives librdkafka's log lines (routed to Config.Log by the backend).
func commonConfig(k Config, logs chan ck.LogEvent) (ck.ConfigMap, error) {
	if strings.TrimSpace(k.BootstrapServers) == "" {
		return nil, fmt.Errorf("%w: kafka bootstrap servers are empty (set KAFKA_BOOTSTRAP_SERVERS=host:port)", backends.ErrInvalidConfig)
	}
	if err := validateExtra(k.Extra); err != nil {
		return nil, err
	}
	m := ck.ConfigMap{
		"bootstrap.servers": k.BootstrapServers,
		"client.id":         "pubsub-conformance",
		// A broker restart (R4) must not leave clients waiting out librdkafka's 10 s backoff.
		"reconnect.backoff.ms":     100,
		"reconnect.backoff.max.ms": 1000,
		// Idle connections closed by the broker are normal, not worth a log line.
		"log.connection.close": false,
		// Logs go to a channel the backend drains into Config.Log instead of stderr.
		"go.logs.channel.enable": true,
	}
	if logs != nil {
		m["go.logs.channel"] = logs
	}
	set := func(key, v string) {
		if v != "" {
			m[key] = v
		}
	}
	set("security.protocol", k.SecurityProtocol)
	set("sasl.mechanisms", k.SASLMechanism)
	set("sasl.username", k.SASLUsername)
	set("sasl.password", k.SASLPassword)
	set("ssl.ca.location", k.SSLCALocation)
	set("ssl.certificate.location", k.SSLCertLocation)
	set("ssl.key.location", k.SSLKeyLocation)
	set("debug", k.Debug)
	return m, nil
}

// withExtra copies base, adds the client-specific settings and then the user's passthrough,
// which wins over the backend's defaults (validateExtra refused the keys it must not touch).
func withExtra(base ck.ConfigMap, specific ck.ConfigMap, extra map[string]string) ck.ConfigMap {
	m := make(ck.ConfigMap, len(base)+len(specific)+len(extra))
	for k, v := range base {
		m[k] = v
	}
	for k, v := range specific {
		m[k] = v
	}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

// producerConfig is the shared producer (which also carries the admin client).
func producerConfig(base ck.ConfigMap, extra map[string]string) ck.ConfigMap {
	return withExtra(base, ck.ConfigMap{
		"acks": "all",
		// No duplicates from internal retries (D3: none duplicated in steady state).
		"enable.idempotence": true,
		"message.max.bytes":  maxMessageBytes,
		"linger.ms":          2,
	}, extra)
}

// consumerConfig is one group member. The start offset is fixed by the backend's rebalance
// callback, so auto.offset.reset only matters when a committed offset fell out of the log
// (retention): then the oldest retained message is the loss-free choice.
//
// On the consumer group protocol (KIP-848) the session and heartbeat timeouts belong to the
// broker (group.consumer.session.timeout.ms, group.consumer.heartbeat.interval.ms), and
// librdkafka refuses the client-side ones.
func consumerConfig(base ck.ConfigMap, extra map[string]string, group, protocol string) ck.ConfigMap {
	m := ck.ConfigMap{
		"group.id":                 group,
		"enable.auto.commit":       false,
		"enable.auto.offset.store": false,
		"auto.offset.reset":        "earliest",
		"enable.partition.eof":     false,
		"fetch.wait.max.ms":        100,
	}
	if protocol == GroupProtocolConsumer {
		m["group.protocol"] = GroupProtocolConsumer
	} else {
		m["session.timeout.ms"] = int(sessionTimeout / time.Millisecond)
		m["heartbeat.interval.ms"] = 1000
	}
	return withExtra(base, m, extra)
}

// topicConfig is the broker-side configuration of a created topic: the class's retention, and,
// when that retention is shorter than the broker's default segment age (7 days), a segment.ms
// equal to it so the active segment rolls and expired messages really go.
func topicConfig(retention time.Duration) map[string]string {
	ms := retention.Milliseconds()
	if ms < 1 {
		ms = 1
	}
	c := map[string]string{
		"retention.ms":      strconv.FormatInt(ms, 10),
		"max.message.bytes": strconv.Itoa(maxMessageBytes),
	}
	if retention < 7*24*time.Hour {
		c["segment.ms"] = strconv.FormatInt(ms, 10)
	}
	return c
}
