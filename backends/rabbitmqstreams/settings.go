package rabbitmqstreams

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/pubsub-conformance/harness/backends"
	"github.com/pubsub-conformance/harness/internal/envvars"
)

// Name is the registry name.
const Name = "rabbitmq-streams"

// Descriptor registers this backend (see backends/all). It uses the broker of the rabbitmq
// backend (the fixture enables the stream plugin and sets RABBITMQ_STREAM_PORT).
var Descriptor = backends.Descriptor{
	Name: Name,
	Description: "RabbitMQ streams via rabbitmq-stream-go-client: a stream per topic, a subscription's position as server-side " +
		"stored offsets, one active member per shared subscription (a single-active-consumer classic queue as the lock)",
	Broker: "rabbitmq",
	New:    New,
	Vars:   Vars,
	// Out of the default set until the CPU budget of the default run (issue 33) leaves room:
	// make conformance BACKENDS=rabbitmq-streams runs it.
	OptIn: true,
}

// Vars are the environment variables this backend reads, parsed by ParseConfig;
// docs/settings.md is generated from them. The connection's are the rabbitmq backend's names.
var Vars = envvars.Table{
	{Name: "RABBITMQ_HOST", Meaning: "the broker's host name (required)"},
	{Name: "RABBITMQ_PORT", Meaning: "the AMQP 0-9-1 port (the shared subscriptions' lock)", Default: "5672"},
	{Name: "RABBITMQ_STREAM_PORT", Meaning: "the stream protocol's port (the fixture sets it)", Default: "5552"},
	{Name: "RABBITMQ_USERNAME", Meaning: "the user", Default: "guest"},
	{Name: "RABBITMQ_PASSWORD", Meaning: "the user's password", Default: "guest", Secret: true},
	{Name: "RABBITMQ_VHOST", Meaning: "the virtual host", Default: "/"},
	{Name: "RABBITMQ_MANAGEMENT_URL", Meaning: "the management plugin's HTTP API: reads a stream's x-max-age back (Retention); without it retention read-back is unsupported"},
	{Name: "RABBITMQ_MANAGEMENT_USERNAME", Meaning: "the management API's user", Default: "RABBITMQ_USERNAME"},
	{Name: "RABBITMQ_MANAGEMENT_PASSWORD", Meaning: "the management API user's password", Default: "RABBITMQ_PASSWORD", Secret: true},
	{Name: "RABBITMQ_SSL", Meaning: "`true` is refused: the backend does not speak the stream protocol over TLS yet"},
	{Name: "RABBITMQ_STREAM_COMMIT_INTERVAL_MS", Meaning: "how often a shared subscription's position is stored while acks move it (below 1000: the contract's ack crash bound)", Default: "200"},
	{Name: "RABBITMQ_STREAM_STORE_OFFSETS", Meaning: "`false`: keep the position in memory only (a known-bad variant: [rabbitmq.md](rabbitmq.md#known-bad-variants-of-its-own-mechanisms))", Default: "true"},
	{Name: "RABBITMQ_STREAM_EARLIEST", Meaning: "where a new subscription asking for Earliest starts: `first` or `next` (a known-bad variant: replays nothing)", Default: "first"},
	{Name: "RABBITMQ_STREAM_SINGLE_ACTIVE", Meaning: "`false`: every member of a shared subscription reads the stream (a known-bad variant: each message goes to every member)", Default: "true"},
}

// Config holds the client settings parsed from backends.Config.Settings.
type Config struct {
	Host       string // RABBITMQ_HOST (required)
	Port       int    // RABBITMQ_PORT, the AMQP 0-9-1 port (the shared subscriptions' lock); 0 means 5672
	StreamPort int    // RABBITMQ_STREAM_PORT, the stream protocol's port; 0 means 5552
	Username   string // RABBITMQ_USERNAME; "" means guest
	Password   string // RABBITMQ_PASSWORD; "" means guest
	Vhost      string // RABBITMQ_VHOST; "" means "/"
	// ManagementURL (RABBITMQ_MANAGEMENT_URL) reads a stream's x-max-age back (Retention);
	// without it retention-read-back is Unsupported.
	ManagementURL                          string
	ManagementUsername, ManagementPassword string
	// TLS (RABBITMQ_SSL=true) is refused: this backend has no stream TLS listener to reach.
	TLS bool

	// StoreOffsets (RABBITMQ_STREAM_STORE_OFFSETS, default true) stores a shared
	// subscription's position on the broker as acks advance it. false keeps it in memory only:
	// a reopened subscription starts where it was created (a variant: make mutants).
	StoreOffsets bool
	// EarliestSpec (RABBITMQ_STREAM_EARLIEST: first, the default, or next) is the offset
	// specification a new subscription asking for Earliest starts at; next replays nothing (a
	// variant).
	EarliestSpec string
	// SingleActive (RABBITMQ_STREAM_SINGLE_ACTIVE, default true) gives a shared subscription
	// one active member at a time; false lets every member read the stream (a variant: each
	// message goes to every member).
	SingleActive bool
	// CommitIntervalMS (RABBITMQ_STREAM_COMMIT_INTERVAL_MS, default 200) is how often the
	// position is stored while acks move it; below backends.AckCrashBound.
	CommitIntervalMS int
}

// ParseConfig reads the settings; unusable values are errors wrapping ErrInvalidConfig.
func ParseConfig(s map[string]string) (Config, error) {
	c := Config{
		Host: s["RABBITMQ_HOST"], Username: s["RABBITMQ_USERNAME"], Password: s["RABBITMQ_PASSWORD"], Vhost: s["RABBITMQ_VHOST"],
		ManagementURL: s["RABBITMQ_MANAGEMENT_URL"], ManagementUsername: s["RABBITMQ_MANAGEMENT_USERNAME"],
		ManagementPassword: s["RABBITMQ_MANAGEMENT_PASSWORD"],
		StoreOffsets:       true, SingleActive: true, EarliestSpec: "first", CommitIntervalMS: 200,
	}
	if c.Host == "" {
		return Config{}, fmt.Errorf("%w: RABBITMQ_HOST is empty (want the broker's host name)", backends.ErrInvalidConfig)
	}
	if strings.ContainsAny(c.Host, "/:@ ") && net.ParseIP(c.Host) == nil {
		return Config{}, fmt.Errorf("%w: RABBITMQ_HOST=%q is not a host name", backends.ErrInvalidConfig, c.Host)
	}
	for key, dst := range map[string]*int{"RABBITMQ_PORT": &c.Port, "RABBITMQ_STREAM_PORT": &c.StreamPort} {
		if v := s[key]; v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > 65535 {
				return Config{}, fmt.Errorf("%w: %s=%q is not a port number", backends.ErrInvalidConfig, key, v)
			}
			*dst = n
		}
	}
	if v := s["RABBITMQ_STREAM_COMMIT_INTERVAL_MS"]; v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n >= int(backends.AckCrashBound.Milliseconds()) {
			return Config{}, fmt.Errorf("%w: RABBITMQ_STREAM_COMMIT_INTERVAL_MS=%q is not a whole number from 1 to %d",
				backends.ErrInvalidConfig, v, backends.AckCrashBound.Milliseconds()-1)
		}
		c.CommitIntervalMS = n
	}
	for key, dst := range map[string]*bool{"RABBITMQ_SSL": &c.TLS, "RABBITMQ_STREAM_STORE_OFFSETS": &c.StoreOffsets,
		"RABBITMQ_STREAM_SINGLE_ACTIVE": &c.SingleActive} {
		if v := s[key]; v != "" {
			b, err := strconv.ParseBool(v)
			if err != nil {
				return Config{}, fmt.Errorf("%w: %s=%q is not a boolean", backends.ErrInvalidConfig, key, v)
			}
			*dst = b
		}
	}
	if v := s["RABBITMQ_STREAM_EARLIEST"]; v != "" {
		if v != "first" && v != "next" {
			return Config{}, fmt.Errorf("%w: RABBITMQ_STREAM_EARLIEST=%q is neither first nor next", backends.ErrInvalidConfig, v)
		}
		c.EarliestSpec = v
	}
	if c.TLS {
		return Config{}, fmt.Errorf("%w: RABBITMQ_SSL=true: the %s backend does not speak the stream protocol over TLS yet "+
			"(the harness's broker has no stream TLS listener)", backends.ErrInvalidConfig, Name)
	}
	if c.ManagementURL != "" {
		u, err := url.Parse(c.ManagementURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return Config{}, fmt.Errorf("%w: RABBITMQ_MANAGEMENT_URL=%q is not an http://host:port URL", backends.ErrInvalidConfig, c.ManagementURL)
		}
		c.ManagementURL = strings.TrimRight(c.ManagementURL, "/")
	}
	if c.Port == 0 {
		c.Port = 5672
	}
	if c.StreamPort == 0 {
		c.StreamPort = 5552
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
	return c, nil
}

// StreamName is the stream of a contract topic: "topicspace.class.topic", the name the
// rabbitmq backend gives the topic's exchange (TrustGraph's mapping).
func StreamName(t backends.Topic) string { return t.Space + "." + string(t.Class) + "." + t.Name }

// LockQueueName is the classic queue whose single active consumer is a shared subscription's
// active member.
func LockQueueName(stream, subscription string) string {
	return stream + "." + subscription + ".active-member"
}
