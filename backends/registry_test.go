package backends

import (
	"context"
	"errors"
	"flag"
	"strings"
	"testing"
	"time"
)

func TestRegistryLookupAndOpen(t *testing.T) {
	Register("regtest-a", func(_ context.Context, cfg Config) (Backend, error) { return nil, nil })
	Register("regtest-b", func(_ context.Context, cfg Config) (Backend, error) {
		return nil, errors.New("b: " + cfg.Kafka.BootstrapServers)
	})
	if _, err := Lookup("regtest-a"); err != nil {
		t.Fatalf("Lookup(regtest-a): %v", err)
	}
	_, err := Lookup("nope")
	if !errors.Is(err, ErrUnknownBackend) || Code(err) != "unknown_backend" {
		t.Fatalf("Lookup(nope) = %v; want ErrUnknownBackend", err)
	}
	for _, want := range []string{`"nope"`, "regtest-a", "regtest-b"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("unknown-backend error %q does not list %s", err, want)
		}
	}
	// Known-bad variants are counted, not listed, so the real names stay readable.
	Register("regtest-a~broken", func(_ context.Context, cfg Config) (Backend, error) { return nil, nil })
	_, err = Lookup("nope")
	if msg := err.Error(); strings.Contains(msg, "regtest-a~broken") || !strings.Contains(msg, "known-bad variants named <backend>~<defect>") {
		t.Errorf("unknown-backend error %q should count variants instead of listing them", msg)
	}
	if _, err := Open(context.Background(), Config{Backend: "regtest-b", Kafka: KafkaConfig{BootstrapServers: "h:1"}}); err == nil || err.Error() != "b: h:1" {
		t.Errorf("Open passes the config to the constructor: got %v", err)
	}
	defer func() {
		if recover() == nil {
			t.Error("duplicate Register did not panic")
		}
	}()
	Register("regtest-a", nil)
}

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestFromEnv(t *testing.T) {
	cfg, err := FromEnv(env(map[string]string{
		"PUBSUB_BACKEND":               "kafka",
		"KAFKA_BOOTSTRAP_SERVERS":      "k:9092",
		"KAFKA_SECURITY_PROTOCOL":      "SASL_PLAINTEXT",
		"KAFKA_SASL_MECHANISM":         "PLAIN",
		"KAFKA_SASL_USERNAME":          "u",
		"KAFKA_SASL_PASSWORD":          "p",
		"KAFKA_REPLICATION_FACTOR":     "3",
		"PULSAR_HOST":                  "pulsar://p:6650",
		"PULSAR_ADMIN_URL":             "http://p:8080",
		"PULSAR_API_KEY":               "tok",
		"PULSAR_ALL_PERSISTENT":        "true",
		"PULSAR_NACK_REDELIVERY_DELAY": "250ms",
		"PUBSUB_RETENTION_REQUEST":     "90s",
	}))
	if err != nil {
		t.Fatal(err)
	}
	k, p := cfg.Kafka, cfg.Pulsar
	if cfg.Backend != "kafka" || k.BootstrapServers != "k:9092" || k.SecurityProtocol != "SASL_PLAINTEXT" ||
		k.SASLMechanism != "PLAIN" || k.SASLUsername != "u" || k.SASLPassword != "p" || k.ReplicationFactor != 3 {
		t.Errorf("kafka config %+v", cfg)
	}
	if p.Host != "pulsar://p:6650" || p.AdminURL != "http://p:8080" || p.APIKey != "tok" || !p.AllPersistent || p.NackRedeliveryDelay != 250*time.Millisecond {
		t.Errorf("pulsar config %+v", p)
	}
	if cfg.RetentionFor(ClassRequest) != 90*time.Second || cfg.RetentionFor(ClassFlow) != 7*24*time.Hour {
		t.Errorf("retention override: request %s flow %s", cfg.RetentionFor(ClassRequest), cfg.RetentionFor(ClassFlow))
	}

	def, err := FromEnv(env(nil))
	if err != nil || def.Backend != "pulsar" {
		t.Errorf("default backend = %q, %v; want pulsar (TrustGraph's default)", def.Backend, err)
	}
}

func TestFromEnvRejectsBadValues(t *testing.T) {
	for key, val := range map[string]string{
		"KAFKA_REPLICATION_FACTOR":     "zero",
		"PULSAR_ALL_PERSISTENT":        "maybe",
		"PULSAR_NACK_REDELIVERY_DELAY": "soon",
		"PUBSUB_RETENTION_FLOW":        "-1h",
	} {
		_, err := FromEnv(env(map[string]string{key: val}))
		if !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%s=%s: err %v; want ErrInvalidConfig", key, val, err)
			continue
		}
		if !strings.Contains(err.Error(), key) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s=%s: error %q should be one line naming the variable", key, val, err)
		}
	}
}

func TestKafkaExtraAndFlags(t *testing.T) {
	extra := KafkaExtraFromEnviron([]string{"KAFKA_CONFIG_FETCH_WAIT_MAX_MS=10", "KAFKA_CONFIG_=x", "OTHER=1"})
	if len(extra) != 1 || extra["fetch.wait.max.ms"] != "10" {
		t.Errorf("extra = %v", extra)
	}
	cfg := Config{Backend: "pulsar", Kafka: KafkaConfig{BootstrapServers: "env:1"}}
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	RegisterFlags(fs, &cfg)
	if err := fs.Parse([]string{"--pubsub-backend=kafka", "--pulsar-api-key=t"}); err != nil {
		t.Fatal(err)
	}
	if cfg.Backend != "kafka" || cfg.Pulsar.APIKey != "t" || cfg.Kafka.BootstrapServers != "env:1" {
		t.Errorf("flags over env: %+v", cfg)
	}
}

func TestCodeAndCtxErr(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Nanosecond)
	defer cancel()
	<-ctx.Done()
	err := CtxErr(ctx, "receive")
	if !errors.Is(err, ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) || Code(err) != "timeout" {
		t.Errorf("deadline: %v (code %s)", err, Code(err))
	}
	cctx, ccancel := context.WithCancel(context.Background())
	ccancel()
	if err := CtxErr(cctx, "receive"); !errors.Is(err, context.Canceled) || Code(err) != "canceled" {
		t.Errorf("cancel: %v", err)
	}
	if CtxErr(context.Background(), "x") != nil || Code(nil) != "" || Code(errors.New("x")) != "internal" {
		t.Error("live context / nil / plain error codes")
	}
	for sentinel, code := range map[error]string{ErrInvalidTopic: "invalid_topic", ErrClosed: "closed", ErrAuth: "auth",
		ErrUnavailable: "unavailable", ErrUnknownDelivery: "unknown_delivery", ErrInvalidConfig: "invalid_config"} {
		if got := Code(errors.Join(errors.New("ctx"), sentinel)); got != code {
			t.Errorf("Code(%v) = %q; want %q", sentinel, got, code)
		}
	}
}
