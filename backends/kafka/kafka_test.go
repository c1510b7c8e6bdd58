package kafka

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	ck "github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/pubsub-conformance/harness/backends"
)

// Unit tests: no broker needed.

func TestIDRoundTrip(t *testing.T) {
	for _, c := range []deliveryID{{"tok", 0, 0, 0}, {"tok", 7, 0, 42}, {"tok", 1 << 33, 3, 1 << 40}} {
		id := encodeID(c.token, c.assignment, c.partition, c.offset)
		got, err := decodeID(id)
		if err != nil || got != c {
			t.Fatalf("decodeID(%q) = %+v, %v; want %+v", id, got, err, c)
		}
	}
	for _, bad := range []string{"", "1", "0:1", "t:0:1", "t:1:a:1", "t:1:1:b", "t:x:1:1", "t:-1:0:1", "t:1:-1:3", "t:1:0:-2", "t:1:0:1:2", "t:1:99999999999:1", ":1:0:1"} {
		if _, err := decodeID(bad); !errors.Is(err, backends.ErrUnknownDelivery) {
			t.Errorf("decodeID(%q) error = %v; want ErrUnknownDelivery", bad, err)
		}
	}
}

func TestCommonConfigCarriesSecurityAndDebug(t *testing.T) {
	k := Config{
		BootstrapServers: "b:1", SecurityProtocol: "SASL_SSL", SASLMechanism: "PLAIN",
		SASLUsername: "u", SASLPassword: "p", SSLCALocation: "/ca", SSLCertLocation: "/cert",
		SSLKeyLocation: "/key", Debug: "cgrp,fetch", Extra: map[string]string{"fetch.wait.max.ms": "7"},
	}
	base, err := commonConfig(k, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"bootstrap.servers": "b:1", "security.protocol": "SASL_SSL", "sasl.mechanisms": "PLAIN",
		"sasl.username": "u", "sasl.password": "p", "ssl.ca.location": "/ca",
		"ssl.certificate.location": "/cert", "ssl.key.location": "/key", "debug": "cgrp,fetch",
	}
	// Every client kind gets the security settings and the passthrough.
	for name, m := range map[string]ck.ConfigMap{
		"producer": producerConfig(base, k.Extra),
		"consumer": consumerConfig(base, k.Extra, "g", GroupProtocolClassic),
	} {
		for key, v := range want {
			if got := m[key]; got != v {
				t.Errorf("%s config %s = %v; want %q", name, key, got, v)
			}
		}
		if got := m["fetch.wait.max.ms"]; got != "7" {
			t.Errorf("%s config: passthrough fetch.wait.max.ms = %v; want 7", name, got)
		}
	}
	c := consumerConfig(base, nil, "g", GroupProtocolClassic)
	if c["enable.auto.commit"] != false || c["group.id"] != "g" {
		t.Errorf("consumer config: enable.auto.commit=%v group.id=%v", c["enable.auto.commit"], c["group.id"])
	}
	if _, ok := c["group.protocol"]; ok || c["session.timeout.ms"] == nil {
		t.Errorf("classic consumer config: group.protocol=%v session.timeout.ms=%v", c["group.protocol"], c["session.timeout.ms"])
	}
	// KIP-848: the broker owns the session and heartbeat timeouts; librdkafka refuses them.
	c = consumerConfig(base, nil, "g", GroupProtocolConsumer)
	if c["group.protocol"] != "consumer" || c["session.timeout.ms"] != nil || c["heartbeat.interval.ms"] != nil {
		t.Errorf("consumer-protocol config: group.protocol=%v session.timeout.ms=%v heartbeat.interval.ms=%v",
			c["group.protocol"], c["session.timeout.ms"], c["heartbeat.interval.ms"])
	}
}

func TestGroupProtocolSetting(t *testing.T) {
	for v, want := range map[string]string{"": GroupProtocolClassic, "classic": GroupProtocolClassic, "consumer": GroupProtocolConsumer} {
		c, err := ParseConfig(map[string]string{"KAFKA_BOOTSTRAP_SERVERS": "b:1", "KAFKA_GROUP_PROTOCOL": v})
		if err != nil || c.GroupProtocol != want {
			t.Errorf("KAFKA_GROUP_PROTOCOL=%q: %q, %v; want %q", v, c.GroupProtocol, err, want)
		}
	}
	_, err := ParseConfig(map[string]string{"KAFKA_BOOTSTRAP_SERVERS": "b:1", "KAFKA_GROUP_PROTOCOL": "cooperative"})
	if !errors.Is(err, backends.ErrInvalidConfig) || !strings.Contains(err.Error(), "KAFKA_GROUP_PROTOCOL") {
		t.Errorf("bad protocol: %v", err)
	}
	if KIP848Descriptor.Name != "kafka-kip848" || KIP848Descriptor.Settings["KAFKA_GROUP_PROTOCOL"] != GroupProtocolConsumer || !KIP848Descriptor.OptIn {
		t.Errorf("KIP848Descriptor: %+v", KIP848Descriptor)
	}
}

func TestConfigRejects(t *testing.T) {
	if _, err := commonConfig(Config{}, nil); !errors.Is(err, backends.ErrInvalidConfig) || !strings.Contains(err.Error(), "KAFKA_BOOTSTRAP_SERVERS") {
		t.Errorf("empty bootstrap: %v", err)
	}
	for _, key := range []string{"enable.auto.commit", "group.id", "go.events.channel.enable"} {
		_, err := commonConfig(Config{BootstrapServers: "b:1", Extra: map[string]string{key: "x"}}, nil)
		if !errors.Is(err, backends.ErrInvalidConfig) || !strings.Contains(err.Error(), key) {
			t.Errorf("managed key %s: %v", key, err)
		}
	}
}

func TestNewRejectsUnknownPassthroughKey(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := New(ctx, backends.Config{Settings: map[string]string{
		"KAFKA_BOOTSTRAP_SERVERS": "127.0.0.1:1", "KAFKA_CONFIG_NO_SUCH_PROPERTY": "1",
	}})
	if !errors.Is(err, backends.ErrInvalidConfig) || !strings.Contains(err.Error(), "no.such.property") {
		t.Fatalf("New with unknown key: %v; want ErrInvalidConfig naming the key", err)
	}
}

func TestNewFailsFastWhenNoBrokerListens(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // a port nobody listens on
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	start := time.Now()
	_, err = New(ctx, backends.Config{Settings: map[string]string{"KAFKA_BOOTSTRAP_SERVERS": addr}})
	if !errors.Is(err, backends.ErrUnavailable) {
		t.Fatalf("New against a closed port: %v; want ErrUnavailable", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("New took %v to report an unreachable broker; want fail fast", d)
	}
}

func TestErrorMapping(t *testing.T) {
	for code, want := range map[ck.ErrorCode]error{
		ck.ErrAuthentication:           backends.ErrAuth,
		ck.ErrSaslAuthenticationFailed: backends.ErrAuth,
		ck.ErrAllBrokersDown:           backends.ErrUnavailable,
		ck.ErrTransport:                backends.ErrUnavailable,
		ck.ErrTopicException:           backends.ErrInvalidTopic,
		ck.ErrInvalidConfig:            backends.ErrInvalidConfig,
		ck.ErrTimedOut:                 backends.ErrTimeout,
	} {
		err := mapErr(context.Background(), "op", ck.NewError(code, "x", false))
		if !errors.Is(err, want) {
			t.Errorf("code %v mapped to %v; want %v", code, err, want)
		}
		var ke ck.Error
		if !errors.As(err, &ke) || ke.Code() != code {
			t.Errorf("code %v: original error lost in %v", code, err)
		}
	}
	if got := backends.Code(mapErr(context.Background(), "op", ck.NewError(ck.ErrMsgSizeTooLarge, "x", false))); got != "internal" {
		t.Errorf("unmapped code: Code = %q; want internal", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Nanosecond)
	defer cancel()
	<-ctx.Done()
	if err := mapErr(ctx, "op", ck.NewError(ck.ErrTransport, "x", false)); !errors.Is(err, backends.ErrTimeout) {
		t.Errorf("ended ctx: %v; want ErrTimeout", err)
	}
}

func TestTopicConfig(t *testing.T) {
	c := topicConfig(2 * time.Second)
	if c["retention.ms"] != "2000" || c["segment.ms"] != "2000" {
		t.Errorf("short retention: %v", c)
	}
	c = topicConfig(7 * 24 * time.Hour)
	if c["retention.ms"] != "604800000" || c["segment.ms"] != "" {
		t.Errorf("flow retention: %v", c)
	}
}

func TestParseConfig(t *testing.T) {
	c, err := ParseConfig(map[string]string{
		"KAFKA_BOOTSTRAP_SERVERS": "k:9092", "KAFKA_SECURITY_PROTOCOL": "SASL_PLAINTEXT", "KAFKA_SASL_MECHANISM": "PLAIN",
		"KAFKA_SASL_USERNAME": "u", "KAFKA_SASL_PASSWORD": "p", "KAFKA_REPLICATION_FACTOR": "3", "KAFKA_CONSUMER_NO_WAIT": "true",
		"KAFKA_CONFIG_FETCH_WAIT_MAX_MS": "10", "KAFKA_CONFIG_": "x", "KAFKA_ADMIN_CONFIG_SASL_USERNAME": "admin", "OTHER": "1",
		"KAFKA_ACK_SYNC": "true", "KAFKA_COMMIT_INTERVAL_MS": "250",
	})
	if err != nil {
		t.Fatal(err)
	}
	if c.BootstrapServers != "k:9092" || c.SecurityProtocol != "SASL_PLAINTEXT" || c.SASLMechanism != "PLAIN" ||
		c.SASLUsername != "u" || c.SASLPassword != "p" || c.ReplicationFactor != 3 || !c.ConsumerNoWait ||
		!c.AckSync || c.CommitInterval != 250*time.Millisecond {
		t.Errorf("parsed %+v", c)
	}
	if len(c.Extra) != 1 || c.Extra["fetch.wait.max.ms"] != "10" || len(c.AdminExtra) != 1 || c.AdminExtra["sasl.username"] != "admin" {
		t.Errorf("passthrough: extra %v admin %v", c.Extra, c.AdminExtra)
	}
	for _, kv := range [][2]string{{"KAFKA_REPLICATION_FACTOR", "zero"}, {"KAFKA_CONSUMER_NO_WAIT", "maybe"},
		{"KAFKA_ACK_SYNC", "sometimes"}, {"KAFKA_COMMIT_INTERVAL_MS", "0"}, {"KAFKA_COMMIT_INTERVAL_MS", "501"}, {"KAFKA_COMMIT_INTERVAL_MS", "1s"}} {
		key, val := kv[0], kv[1]
		_, err := ParseConfig(map[string]string{key: val})
		if !errors.Is(err, backends.ErrInvalidConfig) || !strings.Contains(err.Error(), key) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s=%s: %v; want one ErrInvalidConfig line naming the setting", key, val, err)
		}
	}
}

func TestTopicName(t *testing.T) {
	for in, want := range map[string]string{
		"x": "tg.flow.x", "request:tg:prompt:default": "tg.request.prompt.default",
		"response:space-1:a.b_c": "space-1.response.a.b_c", "notify:tg:a:b:c": "tg.notify.a.b.c",
	} {
		if got := TopicName(backends.MustParseTopic(in)); got != want {
			t.Errorf("TopicName(%s) = %q; want %q", in, got, want)
		}
	}
}

func TestDescriptorSettings(t *testing.T) {
	s := Descriptor.EnvSettings([]string{"KAFKA_BOOTSTRAP_SERVERS=b:1", "KAFKA_CONFIG_SASL_PASSWORD=x", "KAFKA_SASL_PASSWORD=p", "PULSAR_HOST=p", "HOME=/"})
	if len(s) != 3 || s["KAFKA_BOOTSTRAP_SERVERS"] != "b:1" {
		t.Errorf("EnvSettings = %v; want the three KAFKA_ settings only", s)
	}
	pub := Descriptor.Public(s)
	if len(pub) != 1 || pub["KAFKA_BOOTSTRAP_SERVERS"] != "b:1" {
		t.Errorf("Public = %v; want the passwords left out", pub)
	}
}
