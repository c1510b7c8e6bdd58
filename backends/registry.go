package backends

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Config is everything a backend constructor needs. Fields follow TrustGraph's names; FromEnv
// fills them from the environment and RegisterFlags from command-line flags.
type Config struct {
	// Backend is the registry name ("kafka", "pulsar", "memory"): --pubsub-backend / PUBSUB_BACKEND.
	Backend string

	Kafka  KafkaConfig
	Pulsar PulsarConfig

	// Retention overrides the class default retention for topics this backend creates.
	Retention map[Class]time.Duration

	// Log receives a backend's diagnostic output (client debug logs); nil discards it.
	Log io.Writer
}

// KafkaConfig holds the Kafka client settings. Auth fields reach producer, consumer and admin.
type KafkaConfig struct {
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
}

// PulsarConfig holds the Pulsar client and admin settings. Auth fields reach client and admin.
type PulsarConfig struct {
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
}

// RetentionFor is the retention for class c: the override when set, else the class default.
func (c Config) RetentionFor(cl Class) time.Duration {
	if d, ok := c.Retention[cl]; ok && d > 0 {
		return d
	}
	return cl.DefaultRetention()
}

// Constructor builds a Backend from cfg. It must fail fast (within ctx) with an error wrapping
// ErrUnavailable or ErrAuth when the broker cannot be reached or refuses the credentials, and
// ErrInvalidConfig for settings it cannot use.
type Constructor func(ctx context.Context, cfg Config) (Backend, error)

var (
	registryMu sync.RWMutex
	registry   = map[string]Constructor{}
)

// Register adds a backend under name. The explicit list of backends lives in backends/all;
// Register panics on a duplicate name because that is a programming error, not input.
func Register(name string, ctor Constructor) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if _, dup := registry[name]; dup {
		panic("backends: duplicate registration of " + name)
	}
	registry[name] = ctor
}

// Names lists the registered backends, sorted.
func Names() []string {
	registryMu.RLock()
	defer registryMu.RUnlock()
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Lookup returns the constructor for name, or an error wrapping ErrUnknownBackend that lists
// the known names.
func Lookup(name string) (Constructor, error) {
	registryMu.RLock()
	ctor, ok := registry[name]
	registryMu.RUnlock()
	if !ok {
		// Known-bad variants ("kafka~nack-noop", see backends/mutants) are counted, not listed:
		// a user who mistyped a backend wants the few real names.
		var real []string
		variants := 0
		for _, n := range Names() {
			if strings.Contains(n, "~") {
				variants++
				continue
			}
			real = append(real, n)
		}
		known := strings.Join(real, ", ")
		if variants > 0 {
			known += fmt.Sprintf("; and %d known-bad variants named <backend>~<defect>", variants)
		}
		return nil, fmt.Errorf("%w %q (known: %s)", ErrUnknownBackend, name, known)
	}
	return ctor, nil
}

// Open looks up cfg.Backend and constructs it.
func Open(ctx context.Context, cfg Config) (Backend, error) {
	ctor, err := Lookup(cfg.Backend)
	if err != nil {
		return nil, err
	}
	return ctor(ctx, cfg)
}

// FromEnv reads a Config from environment variables with TrustGraph's names (see the field
// comments). getenv is os.Getenv in production; tests pass a map's lookup.
func FromEnv(getenv func(string) string) (Config, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	cfg := Config{
		Backend: getenv("PUBSUB_BACKEND"),
		Kafka: KafkaConfig{
			BootstrapServers: getenv("KAFKA_BOOTSTRAP_SERVERS"),
			SecurityProtocol: getenv("KAFKA_SECURITY_PROTOCOL"),
			SASLMechanism:    getenv("KAFKA_SASL_MECHANISM"),
			SASLUsername:     getenv("KAFKA_SASL_USERNAME"),
			SASLPassword:     getenv("KAFKA_SASL_PASSWORD"),
			SSLCALocation:    getenv("KAFKA_SSL_CA_LOCATION"),
			SSLCertLocation:  getenv("KAFKA_SSL_CERT_LOCATION"),
			SSLKeyLocation:   getenv("KAFKA_SSL_KEY_LOCATION"),
			Debug:            getenv("KAFKA_DEBUG"),
		},
		Pulsar: PulsarConfig{
			Host:              getenv("PULSAR_HOST"),
			AdminURL:          getenv("PULSAR_ADMIN_URL"),
			APIKey:            getenv("PULSAR_API_KEY"),
			AdminAPIKey:       getenv("PULSAR_ADMIN_API_KEY"),
			TLSTrustCertsFile: getenv("PULSAR_TLS_TRUST_CERTS_FILE"),
		},
	}
	if cfg.Backend == "" {
		cfg.Backend = "pulsar" // TrustGraph's default
	}
	if v := getenv("KAFKA_REPLICATION_FACTOR"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return Config{}, fmt.Errorf("%w: KAFKA_REPLICATION_FACTOR=%q is not a positive integer", ErrInvalidConfig, v)
		}
		cfg.Kafka.ReplicationFactor = n
	}
	if v := getenv("KAFKA_CONSUMER_NO_WAIT"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return Config{}, fmt.Errorf("%w: KAFKA_CONSUMER_NO_WAIT=%q is not a boolean", ErrInvalidConfig, v)
		}
		cfg.Kafka.ConsumerNoWait = b
	}
	if v := getenv("PULSAR_ALL_PERSISTENT"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return Config{}, fmt.Errorf("%w: PULSAR_ALL_PERSISTENT=%q is not a boolean", ErrInvalidConfig, v)
		}
		cfg.Pulsar.AllPersistent = b
	}
	if v := getenv("PULSAR_NACK_REDELIVERY_DELAY"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return Config{}, fmt.Errorf("%w: PULSAR_NACK_REDELIVERY_DELAY=%q is not a duration (e.g. 500ms)", ErrInvalidConfig, v)
		}
		cfg.Pulsar.NackRedeliveryDelay = d
	}
	for _, cl := range Classes {
		key := "PUBSUB_RETENTION_" + strings.ToUpper(string(cl))
		if v := getenv(key); v != "" {
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				return Config{}, fmt.Errorf("%w: %s=%q is not a positive duration (e.g. 168h)", ErrInvalidConfig, key, v)
			}
			if cfg.Retention == nil {
				cfg.Retention = map[Class]time.Duration{}
			}
			cfg.Retention[cl] = d
		}
	}
	return cfg, nil
}

// KafkaAdminExtraFromEnviron collects KAFKA_ADMIN_CONFIG_<KEY>=value pairs like
// KafkaExtraFromEnviron, for KafkaConfig.AdminExtra.
func KafkaAdminExtraFromEnviron(environ []string) map[string]string {
	return extraFromEnviron(environ, "KAFKA_ADMIN_CONFIG_")
}

// KafkaExtraFromEnviron collects KAFKA_CONFIG_<KEY>=value pairs from environ ("k=v" strings) into
// librdkafka keys: KAFKA_CONFIG_FETCH_WAIT_MAX_MS=10 -> fetch.wait.max.ms=10.
func KafkaExtraFromEnviron(environ []string) map[string]string {
	return extraFromEnviron(environ, "KAFKA_CONFIG_")
}

func extraFromEnviron(environ []string, prefix string) map[string]string {
	var out map[string]string
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(k, prefix) || len(k) == len(prefix) {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		key := strings.ToLower(strings.ReplaceAll(strings.TrimPrefix(k, prefix), "_", "."))
		out[key] = v
	}
	return out
}

// RegisterFlags binds TrustGraph's command-line flags to cfg on fs; values already in cfg (from
// FromEnv) are the defaults, so flags override the environment.
func RegisterFlags(fs *flag.FlagSet, cfg *Config) {
	fs.StringVar(&cfg.Backend, "pubsub-backend", cfg.Backend, "pub/sub backend: "+strings.Join(Names(), ", "))
	fs.StringVar(&cfg.Kafka.BootstrapServers, "kafka-bootstrap-servers", cfg.Kafka.BootstrapServers, "Kafka bootstrap servers (host:port,...)")
	fs.StringVar(&cfg.Kafka.SecurityProtocol, "kafka-security-protocol", cfg.Kafka.SecurityProtocol, "Kafka security.protocol")
	fs.StringVar(&cfg.Kafka.SASLMechanism, "kafka-sasl-mechanism", cfg.Kafka.SASLMechanism, "Kafka SASL mechanism")
	fs.StringVar(&cfg.Kafka.SASLUsername, "kafka-sasl-username", cfg.Kafka.SASLUsername, "Kafka SASL username")
	fs.StringVar(&cfg.Kafka.SASLPassword, "kafka-sasl-password", cfg.Kafka.SASLPassword, "Kafka SASL password")
	fs.StringVar(&cfg.Pulsar.Host, "pulsar-host", cfg.Pulsar.Host, "Pulsar service URL (pulsar://host:6650)")
	fs.StringVar(&cfg.Pulsar.AdminURL, "pulsar-admin-url", cfg.Pulsar.AdminURL, "Pulsar admin REST URL (http://host:8080)")
	fs.StringVar(&cfg.Pulsar.APIKey, "pulsar-api-key", cfg.Pulsar.APIKey, "Pulsar token")
}
