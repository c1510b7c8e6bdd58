package pulsar

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/pubsub-conformance/harness/backends"
	"github.com/pubsub-conformance/harness/internal/envvars"
)

// Descriptor registers this backend with TrustGraph's mapping (non-persistent topics for
// request, response and notify); PersistentDescriptor with every class persistent.
var Descriptor = backends.Descriptor{
	Name:        "pulsar",
	Description: "Apache Pulsar via pulsar-client-go; TrustGraph's mapping (non-persistent for request, response, notify)",
	Broker:      "pulsar",
	New:         New,
	Vars:        Vars,
}

// Vars are the environment variables this backend reads (TrustGraph's names), parsed by
// ParseConfig; docs/settings.md is generated from them.
var Vars = envvars.Table{
	{Name: "PULSAR_HOST", Meaning: "the broker's service URL (`pulsar://host:6650`, `pulsar+ssl://`); the fixtures set it; with `PUBSUB_BROKERS=external`, and in the backends' go tests when `PUBSUB_BROKERS` is unset, the broker to test against"},
	{Name: "PULSAR_ADMIN_URL", Meaning: "the broker's admin REST URL (`http://host:8080`); with `PUBSUB_BROKERS=external` too"},
	{Name: "PULSAR_API_KEY", Meaning: "a token, sent by the client and on every admin call", Secret: true},
	{Name: "PULSAR_ADMIN_API_KEY", Meaning: "the token for admin calls when administration uses another role than the data path", Default: "PULSAR_API_KEY", Secret: true},
	{Name: "PULSAR_TLS_TRUST_CERTS_FILE", Meaning: "the CA for `pulsar+ssl://` and `https://` ([tls.md](tls.md))"},
	{Name: "PULSAR_ALL_PERSISTENT", Meaning: "`true`: every class on persistent topics (the `pulsar-persistent` registration sets it); else TrustGraph's mapping (non-persistent for request, response, notify)", Default: "false"},
	{Name: "PULSAR_NACK_REDELIVERY_DELAY", Meaning: "the native negative-ack redelivery delay (a Go duration)", Default: "1s"},
	{Name: "PULSAR_CONSUMER_NO_WAIT", Meaning: "`true`: `Consumer()` on a non-persistent topic returns before the broker granted the consumer permits (faster start, loses what is sent before it; breaks D2)", Default: "false"},
	{Name: "PULSAR_ACK_SYNC", Meaning: "`true`: Ack waits for the broker's receipt; by default acks are queued and sent in batches, each with a receipt, again until confirmed, and Close sends what is left", Default: "false"},
}

// PersistentDescriptor is the registration with every class on persistent topics.
var PersistentDescriptor = func() backends.Descriptor {
	d := Descriptor
	d.Name = "pulsar-persistent"
	d.Description = "Apache Pulsar via pulsar-client-go; every class on persistent topics"
	d.Settings = map[string]string{"PULSAR_ALL_PERSISTENT": "true"}
	return d
}()

// Config holds the Pulsar client and admin settings, parsed from backends.Config.Settings by
// ParseConfig. Auth fields reach client and admin.
type Config struct {
	Host     string // PULSAR_HOST: pulsar://host:6650
	AdminURL string // PULSAR_ADMIN_URL: http://host:8080
	APIKey   string // PULSAR_API_KEY: a token, sent by the client and on every admin call
	// AdminAPIKey is the token for admin REST calls when administration uses another role than
	// the data path (PULSAR_ADMIN_API_KEY); empty means APIKey.
	AdminAPIKey string
	// TLSTrustCertsFile is the CA for pulsar+ssl:// and https:// (PULSAR_TLS_TRUST_CERTS_FILE).
	TLSTrustCertsFile string
	// AllPersistent maps every class to persistent:// topics (PULSAR_ALL_PERSISTENT=true);
	// false keeps TrustGraph's mapping (non-persistent for request, response, notify).
	AllPersistent bool
	// NackRedeliveryDelay is the native negative-ack delay (PULSAR_NACK_REDELIVERY_DELAY); 0 means 1s.
	NackRedeliveryDelay time.Duration
	// ConsumerNoWait (PULSAR_CONSUMER_NO_WAIT=true) lets Consumer return on a non-persistent
	// topic as soon as Subscribe did, before the broker granted the consumer permits: a faster
	// start that loses what is sent in between (breaks D2), as KAFKA_CONSUMER_NO_WAIT does.
	ConsumerNoWait bool
	// AckSync (PULSAR_ACK_SYNC=true) makes Ack wait for the broker's receipt: one round trip
	// per ack, each reporting the broker's error. The default queues the ack for the
	// consumer's acker, which sends what is queued in batches, each with a receipt, until the
	// broker confirmed it; Close sends what is left, so every ack is in force once it returned
	// (C-ACK-5).
	AckSync bool
}

// ParseConfig reads the Pulsar settings (TrustGraph's names, see Config's fields) and rejects
// unparseable values with an error wrapping backends.ErrInvalidConfig that names the setting.
// New checks the rest (URLs present and well-formed).
func ParseConfig(s map[string]string) (Config, error) {
	c := Config{
		Host:              s["PULSAR_HOST"],
		AdminURL:          s["PULSAR_ADMIN_URL"],
		APIKey:            s["PULSAR_API_KEY"],
		AdminAPIKey:       s["PULSAR_ADMIN_API_KEY"],
		TLSTrustCertsFile: s["PULSAR_TLS_TRUST_CERTS_FILE"],
	}
	if v := s["PULSAR_ALL_PERSISTENT"]; v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return Config{}, fmt.Errorf("%w: PULSAR_ALL_PERSISTENT=%q is not a boolean", backends.ErrInvalidConfig, v)
		}
		c.AllPersistent = b
	}
	if v := s["PULSAR_CONSUMER_NO_WAIT"]; v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return Config{}, fmt.Errorf("%w: PULSAR_CONSUMER_NO_WAIT=%q is not a boolean", backends.ErrInvalidConfig, v)
		}
		c.ConsumerNoWait = b
	}
	if v := s["PULSAR_ACK_SYNC"]; v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return Config{}, fmt.Errorf("%w: PULSAR_ACK_SYNC=%q is not a boolean", backends.ErrInvalidConfig, v)
		}
		c.AckSync = b
	}
	if v := s["PULSAR_NACK_REDELIVERY_DELAY"]; v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return Config{}, fmt.Errorf("%w: PULSAR_NACK_REDELIVERY_DELAY=%q is not a duration (e.g. 500ms)", backends.ErrInvalidConfig, v)
		}
		c.NackRedeliveryDelay = d
	}
	return c, nil
}

// TopicName is the Pulsar topic of a contract topic, TrustGraph's mapping: persistent for flow
// (or for every class when allPersistent), non-persistent for the others; tenant = topicspace,
// namespace = class. Colons in the topic part become dots (Pulsar forbids ':' in local names).
func TopicName(t backends.Topic, allPersistent bool) string {
	scheme := "non-persistent"
	if t.Class.Durable() || allPersistent {
		scheme = "persistent"
	}
	return scheme + "://" + t.Space + "/" + string(t.Class) + "/" + strings.ReplaceAll(t.Name, ":", ".")
}
