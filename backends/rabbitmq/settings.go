package rabbitmq

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/pubsub-conformance/harness/backends"
	"github.com/pubsub-conformance/harness/internal/envvars"
)

// Descriptor registers this backend (see backends/all). Settings come from TrustGraph's
// environment names (trustgraph/base/pubsub.py), listed in Vars and parsed by ParseConfig.
var Descriptor = backends.Descriptor{
	Name:        "rabbitmq",
	Description: "RabbitMQ via amqp091-go: a fanout exchange per topic, a classic queue per subscription, publisher confirms",
	Broker:      "rabbitmq",
	New:         New,
	Vars:        Vars,
}

// Vars are the environment variables this backend reads (TrustGraph's names but the TLS
// ones), parsed by ParseConfig; docs/settings.md is generated from them. The fixtures set the
// connection's; with PUBSUB_BROKERS=external the external provider reads them too.
var Vars = envvars.Table{
	{Name: "RABBITMQ_HOST", Meaning: "the broker's host name (required; no scheme or port)"},
	{Name: "RABBITMQ_PORT", Meaning: "the AMQP port", Default: "5672 (5671 with RABBITMQ_SSL)"},
	{Name: "RABBITMQ_USERNAME", Meaning: "the user", Default: "guest"},
	{Name: "RABBITMQ_PASSWORD", Meaning: "the user's password", Default: "guest", Secret: true},
	{Name: "RABBITMQ_VHOST", Meaning: "the virtual host", Default: "/"},
	{Name: "RABBITMQ_MANAGEMENT_URL", Meaning: "the management plugin's HTTP API (`http://host:15672`): DeleteTopic deletes the subscriptions and Retention reads the retention through it; without it Retention is unsupported and DeleteTopic removes only the exchange"},
	{Name: "RABBITMQ_MANAGEMENT_USERNAME", Meaning: "the management API's user when administration uses another user than the data path", Default: "RABBITMQ_USERNAME"},
	{Name: "RABBITMQ_MANAGEMENT_PASSWORD", Meaning: "the management API user's password", Default: "RABBITMQ_PASSWORD", Secret: true},
	{Name: "RABBITMQ_PREFETCH", Meaning: "the consumer's basic.qos prefetch count (1-65535): how many unacknowledged deliveries the broker pushes to one consumer", Default: "1000"},
	{Name: "RABBITMQ_SSL", Meaning: "`true`: connect with amqps, verifying the broker's certificate and name (not TrustGraph's: its RabbitMQ backends have no TLS; [tls.md](tls.md))", Default: "false"},
	{Name: "RABBITMQ_SSL_CA_FILE", Meaning: "the CA (PEM) for RABBITMQ_SSL", Default: "the system's roots"},
	{Name: "RABBITMQ_PUBLISH_NO_CONFIRM", Meaning: "`true`: publish without publisher confirms (Send returns before the broker took the message; breaks C-SEND-1)", Default: "false"},
	{Name: "RABBITMQ_CONSUMER_AUTO_ACK", Meaning: "`true`: consume in no-ack mode (a known-bad variant: Nack, a close before the ack and a crash lose the message)", Default: "false"},
	{Name: "RABBITMQ_CONSUMER_EXCLUSIVE", Meaning: "`true`: an exclusive basic.consume on shared subscriptions (a known-bad variant: a second member is refused)", Default: "false"},
	{Name: "RABBITMQ_QUEUE_PER_CONSUMER", Meaning: "`true`: every consumer gets its own queue, shared subscriptions too (a known-bad variant: each member gets every message)", Default: "false"},
}

// Config holds the client settings, parsed from backends.Config.Settings by ParseConfig.
type Config struct {
	Host     string // RABBITMQ_HOST (required)
	Port     int    // RABBITMQ_PORT; 0 means 5672
	Username string // RABBITMQ_USERNAME; "" means guest (TrustGraph's default)
	Password string // RABBITMQ_PASSWORD; "" means guest (TrustGraph's default)
	Vhost    string // RABBITMQ_VHOST; "" means "/"
	// ManagementURL is the management plugin's HTTP API (RABBITMQ_MANAGEMENT_URL, e.g.
	// http://host:15672), called with the same user and password. AMQP 0-9-1 can neither list
	// the queues bound to an exchange nor read a queue's or exchange's arguments back, so
	// DeleteTopic deletes the subscriptions and Retention reads the retention through it;
	// without it Retention is declared unsupported and DeleteTopic removes only the exchange.
	ManagementURL string
	// ManagementUsername and ManagementPassword are the management API's credentials when
	// administration uses another user than the data path (RABBITMQ_MANAGEMENT_USERNAME,
	// RABBITMQ_MANAGEMENT_PASSWORD); empty means Username and Password.
	ManagementUsername, ManagementPassword string
	// Prefetch is the consumer's basic.qos prefetch count (RABBITMQ_PREFETCH; 0 means
	// DefaultPrefetch): how many unacknowledged deliveries the broker pushes to one consumer.
	Prefetch int
	// NoConfirm publishes without publisher confirms (RABBITMQ_PUBLISH_NO_CONFIRM=true): Send
	// returns once the frame is written, before the broker took the message. Faster, and it
	// breaks C-SEND-1; for callers that accept losing messages, as TrustGraph's aio-pika
	// channel without publisher_confirms does.
	NoConfirm bool
	// AutoAck consumes in no-ack mode (RABBITMQ_CONSUMER_AUTO_ACK=true): the broker forgets a
	// message as soon as it sent it, so Nack, a close before the ack and a crash lose it.
	AutoAck bool
	// ExclusiveConsumer asks for an exclusive basic.consume on shared subscriptions
	// (RABBITMQ_CONSUMER_EXCLUSIVE=true): one consumer per queue, so a second member of a
	// subscription is refused.
	ExclusiveConsumer bool
	// QueuePerConsumer gives every consumer its own queue, shared subscriptions too
	// (RABBITMQ_QUEUE_PER_CONSUMER=true): the topology of an application that declares an
	// anonymous queue per consumer for every class, so members of one subscription each get
	// every message and a reopened consumer starts on a new, empty queue.
	QueuePerConsumer bool
	// TLS connects with amqps (RABBITMQ_SSL=true), verifying the broker's certificate
	// against CAFile (RABBITMQ_SSL_CA_FILE, PEM; "" means the system's roots) and its name
	// against Host. Not TrustGraph's names: its RabbitMQ backends have no TLS (docs/tls.md).
	TLS    bool
	CAFile string
}

// DefaultPrefetch bounds what one consumer holds unacknowledged (basic.qos): as many as
// Pulsar's default receiver queue, since the contract lets a consumer receive without acking
// (a spec receives a whole batch, then acks it out of order). The broker hands new messages
// round-robin to the consumers of a queue that have room, so competing consumers still share.
const DefaultPrefetch = 1000

// ParseConfig reads the settings and rejects unusable values with an error wrapping
// backends.ErrInvalidConfig that names the setting.
func ParseConfig(s map[string]string) (Config, error) {
	c := Config{
		Host:               s["RABBITMQ_HOST"],
		Username:           s["RABBITMQ_USERNAME"],
		Password:           s["RABBITMQ_PASSWORD"],
		Vhost:              s["RABBITMQ_VHOST"],
		ManagementURL:      s["RABBITMQ_MANAGEMENT_URL"],
		ManagementUsername: s["RABBITMQ_MANAGEMENT_USERNAME"],
		ManagementPassword: s["RABBITMQ_MANAGEMENT_PASSWORD"],
	}
	if c.Host == "" {
		return Config{}, fmt.Errorf("%w: RABBITMQ_HOST is empty (want the broker's host name)", backends.ErrInvalidConfig)
	}
	if strings.ContainsAny(c.Host, "/:@ ") && net.ParseIP(c.Host) == nil {
		return Config{}, fmt.Errorf("%w: RABBITMQ_HOST=%q is not a host name (no scheme, port or path; the port is RABBITMQ_PORT)", backends.ErrInvalidConfig, c.Host)
	}
	if v := s["RABBITMQ_PORT"]; v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 65535 {
			return Config{}, fmt.Errorf("%w: RABBITMQ_PORT=%q is not a port number", backends.ErrInvalidConfig, v)
		}
		c.Port = n
	}
	if v := s["RABBITMQ_PREFETCH"]; v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 65535 {
			return Config{}, fmt.Errorf("%w: RABBITMQ_PREFETCH=%q is not a whole number from 1 to 65535", backends.ErrInvalidConfig, v)
		}
		c.Prefetch = n
	}
	if c.ManagementURL != "" {
		u, err := url.Parse(c.ManagementURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return Config{}, fmt.Errorf("%w: RABBITMQ_MANAGEMENT_URL=%q is not an http://host:port URL", backends.ErrInvalidConfig, c.ManagementURL)
		}
		c.ManagementURL = strings.TrimRight(c.ManagementURL, "/")
	}
	for key, dst := range map[string]*bool{
		"RABBITMQ_PUBLISH_NO_CONFIRM": &c.NoConfirm,
		"RABBITMQ_CONSUMER_AUTO_ACK":  &c.AutoAck,
		"RABBITMQ_CONSUMER_EXCLUSIVE": &c.ExclusiveConsumer,
		"RABBITMQ_QUEUE_PER_CONSUMER": &c.QueuePerConsumer,
		"RABBITMQ_SSL":                &c.TLS,
	} {
		if v := s[key]; v != "" {
			b, err := strconv.ParseBool(v)
			if err != nil {
				return Config{}, fmt.Errorf("%w: %s=%q is not a boolean", backends.ErrInvalidConfig, key, v)
			}
			*dst = b
		}
	}
	c.CAFile = s["RABBITMQ_SSL_CA_FILE"]
	if c.CAFile != "" && !c.TLS {
		return Config{}, fmt.Errorf("%w: RABBITMQ_SSL_CA_FILE is set but RABBITMQ_SSL is not true (the CA is only used over amqps)", backends.ErrInvalidConfig)
	}
	if c.Port == 0 {
		c.Port = 5672
		if c.TLS {
			c.Port = 5671
		}
	}
	if c.Username == "" {
		c.Username = "guest"
	}
	if c.Password == "" {
		c.Password = "guest"
	}
	if c.Vhost == "" {
		c.Vhost = "/"
	}
	if c.ManagementUsername == "" {
		c.ManagementUsername, c.ManagementPassword = c.Username, c.Password
	}
	if c.Prefetch == 0 {
		c.Prefetch = DefaultPrefetch
	}
	return c, nil
}

// ExchangeName is the fanout exchange of a contract topic, TrustGraph's mapping:
// "topicspace.class.topic" (colons in the topic part are kept; RabbitMQ allows them).
func ExchangeName(t backends.Topic) string {
	return t.Space + "." + string(t.Class) + "." + t.Name
}

// QueueName is the queue of a shared subscription, TrustGraph's mapping: "<exchange>.<subscription>".
func QueueName(t backends.Topic, subscription string) string {
	return ExchangeName(t) + "." + subscription
}
