package mutants

import (
	"testing"

	"github.com/pubsub-conformance/harness/backends"
)

func TestAdminOnlyCredentialsMovesThemOutOfTheDataPath(t *testing.T) {
	cfg := backends.Config{
		Kafka:  backends.KafkaConfig{SecurityProtocol: "SASL_PLAINTEXT", SASLMechanism: "PLAIN", SASLUsername: "u", SASLPassword: "p", AdminExtra: map[string]string{"x": "1"}},
		Pulsar: backends.PulsarConfig{APIKey: "tok"},
	}
	orig := cfg.Kafka.AdminExtra
	adminOnlyCredentials(&cfg)
	k := cfg.Kafka
	if k.SecurityProtocol != "" || k.SASLMechanism != "" || k.SASLUsername != "" || k.SASLPassword != "" {
		t.Errorf("kafka data-path credentials left: %+v", k)
	}
	want := map[string]string{"x": "1", "security.protocol": "SASL_PLAINTEXT", "sasl.mechanisms": "PLAIN", "sasl.username": "u", "sasl.password": "p"}
	for key, v := range want {
		if k.AdminExtra[key] != v {
			t.Errorf("AdminExtra[%q] = %q, want %q", key, k.AdminExtra[key], v)
		}
	}
	if len(orig) != 1 {
		t.Errorf("the caller's AdminExtra map was modified: %v", orig)
	}
	if cfg.Pulsar.APIKey != "" || cfg.Pulsar.AdminAPIKey != "tok" {
		t.Errorf("pulsar: APIKey %q AdminAPIKey %q; want \"\" and tok", cfg.Pulsar.APIKey, cfg.Pulsar.AdminAPIKey)
	}

	var plain backends.Config // no credentials: nothing to move, nothing added
	adminOnlyCredentials(&plain)
	if plain.Kafka.AdminExtra != nil || plain.Pulsar.AdminAPIKey != "" {
		t.Errorf("credential-less config changed: %+v", plain)
	}
}

func TestLatestRaceConfig(t *testing.T) {
	v, ok := LookupFor("kafka", "latest-race")
	if !ok || v.Configure == nil {
		t.Fatalf("kafka latest-race: %+v %v", v, ok)
	}
	extra := map[string]string{"fetch.wait.max.ms": "10"}
	cfg := backends.Config{Kafka: backends.KafkaConfig{Extra: extra}}
	v.Configure(&cfg)
	if !cfg.Kafka.ConsumerNoWait || cfg.Kafka.Extra["auto.offset.reset"] != "latest" || cfg.Kafka.Extra["fetch.wait.max.ms"] != "10" {
		t.Errorf("got %+v", cfg.Kafka)
	}
	if _, set := extra["auto.offset.reset"]; set {
		t.Error("the caller's Extra map was modified")
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
			if (v.Wrap == nil) == (v.Configure == nil) {
				t.Errorf("%s~%s: exactly one of Wrap and Configure must be set", base, v.Name)
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
}
