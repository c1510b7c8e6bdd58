package mutants

import (
	"maps"
	"os"
	"testing"

	"github.com/pubsub-conformance/harness/backends"
	"github.com/pubsub-conformance/harness/backends/kafka"
	"github.com/pubsub-conformance/harness/backends/pulsar"
	"github.com/pubsub-conformance/harness/backends/rabbitmq"
)

func TestMain(m *testing.M) {
	// The registrations the variants' applicability reads (backends/all would import memory,
	// which imports this package).
	backends.Register(kafka.Descriptor)
	backends.Register(pulsar.Descriptor)
	backends.Register(pulsar.PersistentDescriptor)
	backends.Register(rabbitmq.Descriptor)
	os.Exit(m.Run())
}

func TestAdminOnlyCredentialsMovesThemOutOfTheDataPath(t *testing.T) {
	settings := map[string]string{
		"KAFKA_SECURITY_PROTOCOL": "SASL_PLAINTEXT", "KAFKA_SASL_MECHANISM": "PLAIN", "KAFKA_SASL_USERNAME": "u",
		"KAFKA_SASL_PASSWORD": "p", "KAFKA_ADMIN_CONFIG_X": "1", "PULSAR_API_KEY": "tok",
	}
	cfg := backends.Config{Settings: settings}
	adminOnlyCredentials(&cfg)
	k, err := kafka.ParseConfig(cfg.Settings)
	if err != nil {
		t.Fatal(err)
	}
	if k.SecurityProtocol != "" || k.SASLMechanism != "" || k.SASLUsername != "" || k.SASLPassword != "" {
		t.Errorf("kafka data-path credentials left: %+v", k)
	}
	want := map[string]string{"x": "1", "security.protocol": "SASL_PLAINTEXT", "sasl.mechanisms": "PLAIN", "sasl.username": "u", "sasl.password": "p"}
	if !maps.Equal(k.AdminExtra, want) {
		t.Errorf("AdminExtra = %v, want %v", k.AdminExtra, want)
	}
	if settings["KAFKA_SASL_PASSWORD"] != "p" || len(settings) != 6 {
		t.Errorf("the caller's settings map was modified: %v", settings)
	}
	p, err := pulsar.ParseConfig(cfg.Settings)
	if err != nil || p.APIKey != "" || p.AdminAPIKey != "tok" {
		t.Errorf("pulsar: APIKey %q AdminAPIKey %q (%v); want \"\" and tok", p.APIKey, p.AdminAPIKey, err)
	}

	plain := backends.Config{Settings: map[string]string{"KAFKA_BOOTSTRAP_SERVERS": "b:1"}} // no credentials: nothing to move
	adminOnlyCredentials(&plain)
	if len(plain.Settings) != 1 {
		t.Errorf("credential-less config changed: %+v", plain)
	}
}

func TestLatestRaceConfig(t *testing.T) {
	v, ok := LookupFor("kafka", "latest-race")
	if !ok || v.Configure == nil {
		t.Fatalf("kafka latest-race: %+v %v", v, ok)
	}
	settings := map[string]string{"KAFKA_CONFIG_FETCH_WAIT_MAX_MS": "10"}
	cfg := backends.Config{Settings: settings}
	v.Configure(&cfg)
	k, err := kafka.ParseConfig(cfg.Settings)
	if err != nil || !k.ConsumerNoWait || k.Extra["auto.offset.reset"] != "latest" || k.Extra["fetch.wait.max.ms"] != "10" {
		t.Errorf("got %+v, %v", k, err)
	}
	if len(settings) != 1 {
		t.Error("the caller's settings map was modified")
	}
	if _, ok := LookupFor("pulsar", "latest-race"); ok {
		t.Error("latest-race must not apply to pulsar (Subscribe is synchronous)")
	}
}

func TestOneVariantPerNameAndBase(t *testing.T) {
	for _, base := range []string{"kafka", "pulsar", "pulsar-persistent"} {
		seen := map[string]bool{}
		for _, v := range For(base) {
			if seen[v.Name] {
				t.Errorf("%s: two variants named %s", base, v.Name)
			}
			seen[v.Name] = true
			set := 0
			for _, f := range []bool{v.Wrap != nil, v.Configure != nil, v.Open != nil} {
				if f {
					set++
				}
			}
			if set != 1 {
				t.Errorf("%s~%s: exactly one of Wrap, Configure and Open must be set", base, v.Name)
			}
		}
		for _, name := range []string{"nack-noop", "ack-commits-position", "exists-always-true", "ready-poll-discards",
			"unique-shares-group", "unconfirmed-send", "flow-short-retention", "close-unsubscribes", "auth-admin-only"} {
			if !seen[name] {
				t.Errorf("%s lacks variant %s", base, name)
			}
		}
	}
}

func TestSplit(t *testing.T) {
	if b, v := Split("kafka~nack-noop"); b != "kafka" || v != "nack-noop" {
		t.Errorf("Split = %q %q", b, v)
	}
	if b, v := Split("pulsar"); b != "pulsar" || v != "" {
		t.Errorf("Split = %q %q", b, v)
	}
	if b, v := Split(Name("pulsar-persistent", "nack-noop")); b != "pulsar-persistent" || v != "nack-noop" {
		t.Errorf("Split(Name) = %q %q", b, v)
	}
}

func TestRegisterAllUsesTheBaseDescriptor(t *testing.T) {
	RegisterAll()
	d, err := backends.Lookup("pulsar-persistent~auth-admin-only")
	if err != nil {
		t.Fatal(err)
	}
	if d.Base != "pulsar-persistent" || d.Variant != "auth-admin-only" || d.Broker != "pulsar" || d.Settings["PULSAR_ALL_PERSISTENT"] != "true" {
		t.Errorf("variant descriptor %+v; want the base's broker and fixed settings", d)
	}
	if _, err := backends.Lookup("pulsar~latest-race"); err == nil {
		t.Error("pulsar~latest-race registered; pulsar does not declare it")
	}
	if _, err := backends.Lookup("kafka~latest-race"); err != nil {
		t.Errorf("kafka~latest-race: %v", err)
	}
}

// RabbitMQ's own variants apply to it alone, and switch on the settings its backend reads.
func TestRabbitMQVariants(t *testing.T) {
	for _, name := range []string{"auto-ack", "shared-exclusive", "queue-per-consumer", "close-unsubscribes"} {
		v, ok := LookupFor("rabbitmq", name)
		if !ok {
			t.Errorf("rabbitmq %s: not applicable", name)
			continue
		}
		for _, other := range []string{"kafka", "pulsar"} {
			if name != "close-unsubscribes" && v.Applies(other) {
				t.Errorf("%s applies to %s", name, other)
			}
		}
		if v.Configure == nil {
			continue
		}
		cfg := backends.Config{Settings: map[string]string{"RABBITMQ_HOST": "mq"}}
		v.Configure(&cfg)
		rc, err := rabbitmq.ParseConfig(cfg.Settings)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !rc.NoConfirm && !rc.AutoAck && !rc.ExclusiveConsumer && !rc.QueuePerConsumer {
			t.Errorf("%s switches on none of the backend's defect settings: %+v", name, cfg.Settings)
		}
	}
}
