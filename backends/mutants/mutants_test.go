package mutants_test

import (
	"maps"
	"strings"
	"testing"

	"github.com/pubsub-conformance/harness/backends"
	_ "github.com/pubsub-conformance/harness/backends/all" // the bases, and their own variants
	"github.com/pubsub-conformance/harness/backends/kafka"
	"github.com/pubsub-conformance/harness/backends/mutants"
	"github.com/pubsub-conformance/harness/backends/pulsar"
	"github.com/pubsub-conformance/harness/backends/rabbitmq"
)

func TestTheCatalogueChecks(t *testing.T) {
	if err := mutants.Check(); err != nil {
		t.Fatal(err)
	}
	for _, v := range mutants.All() {
		if len(v.Catches) == 0 {
			t.Errorf("%s names no spec expected to kill it", v.Name)
		}
	}
}

// A typo in any name a record uses fails Check and RegisterAll, naming the record; nothing is
// registered then.
func TestATypoFailsLoudly(t *testing.T) {
	ok := mutants.Variant{Name: "ok", Defect: "d", Catches: []string{"A1"}, Wrap: func(b backends.Backend) backends.Backend { return b }}
	with := func(f func(*mutants.Variant)) mutants.Variant {
		v := ok
		v.Name = "typo-variant"
		f(&v)
		return v
	}
	for _, c := range []struct {
		name string
		v    mutants.Variant
		want string
	}{
		{"base", with(func(v *mutants.Variant) { v.Bases = []string{"kafak"} }), `variant typo-variant: Bases names "kafak", not a registered backend`},
		{"a variant as base", with(func(v *mutants.Variant) { v.Bases = []string{"kafka~nack-noop"} }), `Bases names "kafka~nack-noop"`},
		{"killer", with(func(v *mutants.Variant) { v.Catches = []string{"A1", "D99"} }), `variant typo-variant: "D99" is not a catalogue spec ID`},
		{"killer id form", with(func(v *mutants.Variant) { v.Catches = []string{"id:A1"} }), `"id:A1" is not a catalogue spec ID`},
		{"sanity", with(func(v *mutants.Variant) { v.Sanity = []string{"d1"} }), `"d1" is not a catalogue spec ID`},
		{"sanity is a killer", with(func(v *mutants.Variant) { v.Catches = []string{"D1"} }), "D1 is in both Catches and its sanity set"},
		{"except", with(func(v *mutants.Variant) { v.Except = map[string]string{"rabitmq": "why"} }), `Except names "rabitmq"`},
		{"except without a reason", with(func(v *mutants.Variant) { v.Except = map[string]string{"rabbitmq": ""} }), `Except names "rabbitmq"`},
		{"two records for one base", with(func(v *mutants.Variant) { v.Name = "ok"; v.Bases = []string{"kafka"} }), "two records of variant ok apply to kafka"},
	} {
		t.Run(c.name, func(t *testing.T) {
			restore := mutants.SwapCatalogue([]mutants.Variant{ok, c.v})
			defer restore()
			err := mutants.Check()
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Check: %v; want an error containing %q", err, c.want)
			}
			if err := mutants.RegisterAll(); err == nil {
				t.Error("RegisterAll registered a catalogue that fails its check")
			}
			if _, err := backends.Lookup("kafka~ok"); err == nil {
				t.Error("RegisterAll registered variants despite the failed check")
			}
		})
	}
	restore := mutants.SwapCatalogue([]mutants.Variant{ok})
	defer restore()
	if err := mutants.Check(); err != nil {
		t.Errorf("a correct catalogue: %v", err)
	}
}

func TestRegisterRefusesAnIncompleteRecord(t *testing.T) {
	restore := mutants.SwapCatalogue(nil)
	defer restore()
	wrap := func(b backends.Backend) backends.Backend { return b }
	for name, v := range map[string]mutants.Variant{
		"no killer":       {Name: "a", Defect: "d", Wrap: wrap},
		"no defect":       {Name: "a", Catches: []string{"A1"}, Wrap: wrap},
		"two ways":        {Name: "a", Defect: "d", Catches: []string{"A1"}, Wrap: wrap, Configure: func(*backends.Config) {}},
		"separator":       {Name: "a~b", Defect: "d", Catches: []string{"A1"}, Wrap: wrap},
		"no construction": {Name: "a", Defect: "d", Catches: []string{"A1"}},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: Register accepted %+v", name, v)
				}
			}()
			mutants.Register(v)
		}()
	}
}

func TestAuthAdminOnlyMovesTheCredentialsOutOfTheDataPath(t *testing.T) {
	settings := map[string]string{
		"KAFKA_SECURITY_PROTOCOL": "SASL_PLAINTEXT", "KAFKA_SASL_MECHANISM": "PLAIN", "KAFKA_SASL_USERNAME": "u",
		"KAFKA_SASL_PASSWORD": "p", "KAFKA_ADMIN_CONFIG_X": "1",
	}
	v, ok := mutants.LookupFor("kafka", "auth-admin-only")
	if !ok {
		t.Fatal("kafka lacks auth-admin-only")
	}
	cfg := backends.Config{Settings: settings}
	v.Configure(&cfg)
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
	if settings["KAFKA_SASL_PASSWORD"] != "p" || len(settings) != 5 {
		t.Errorf("the caller's settings map was modified: %v", settings)
	}

	v, ok = mutants.LookupFor("pulsar-persistent", "auth-admin-only")
	if !ok {
		t.Fatal("pulsar-persistent lacks auth-admin-only")
	}
	cfg = backends.Config{Settings: map[string]string{"PULSAR_API_KEY": "tok"}}
	v.Configure(&cfg)
	p, err := pulsar.ParseConfig(cfg.Settings)
	if err != nil || p.APIKey != "" || p.AdminAPIKey != "tok" {
		t.Errorf("pulsar: APIKey %q AdminAPIKey %q (%v); want \"\" and tok", p.APIKey, p.AdminAPIKey, err)
	}

	plain := backends.Config{Settings: map[string]string{"KAFKA_BOOTSTRAP_SERVERS": "b:1"}} // no credentials: nothing to move
	v, _ = mutants.LookupFor("kafka", "auth-admin-only")
	v.Configure(&plain)
	if len(plain.Settings) != 1 {
		t.Errorf("credential-less config changed: %+v", plain)
	}
}

func TestLatestRaceConfig(t *testing.T) {
	for _, base := range []string{"kafka", "kafka-kip848"} {
		v, ok := mutants.LookupFor(base, "latest-race")
		if !ok || v.Configure == nil {
			t.Fatalf("%s latest-race: %+v %v", base, v, ok)
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
	}
	if _, ok := mutants.LookupFor("pulsar", "latest-race"); ok {
		t.Error("latest-race must not apply to pulsar (Subscribe is synchronous)")
	}
	if v, ok := mutants.LookupFor("memory", "latest-race"); !ok || v.Wrap == nil {
		t.Error("memory has its own latest-race, a decorator")
	}
}

func TestEveryBaseHasTheSharedVariants(t *testing.T) {
	for _, base := range []string{"kafka", "pulsar", "pulsar-persistent", "rabbitmq", "memory"} {
		seen := map[string]bool{}
		for _, v := range mutants.For(base) {
			seen[v.Name] = true
		}
		for _, name := range []string{"nack-noop", "ack-commits-position", "exists-always-true", "ready-poll-discards",
			"unique-shares-group", "unconfirmed-send", "flow-short-retention", "close-unsubscribes"} {
			if !seen[name] {
				t.Errorf("%s lacks variant %s", base, name)
			}
		}
	}
}

func TestSplit(t *testing.T) {
	if b, v := mutants.Split("kafka~nack-noop"); b != "kafka" || v != "nack-noop" {
		t.Errorf("Split = %q %q", b, v)
	}
	if b, v := mutants.Split("pulsar"); b != "pulsar" || v != "" {
		t.Errorf("Split = %q %q", b, v)
	}
	if b, v := mutants.Split(mutants.Name("pulsar-persistent", "nack-noop")); b != "pulsar-persistent" || v != "nack-noop" {
		t.Errorf("Split(Name) = %q %q", b, v)
	}
}

func TestRegisterAllUsesTheBaseDescriptor(t *testing.T) {
	if err := mutants.RegisterAll(); err != nil {
		t.Fatal(err)
	}
	d, err := backends.Lookup("pulsar-persistent~auth-admin-only")
	if err != nil {
		t.Fatal(err)
	}
	if d.Base != "pulsar-persistent" || d.Variant != "auth-admin-only" || d.Broker != "pulsar" || d.Settings["PULSAR_ALL_PERSISTENT"] != "true" {
		t.Errorf("variant descriptor %+v; want the base's broker and fixed settings", d)
	}
	if _, err := backends.Lookup("pulsar~latest-race"); err == nil {
		t.Error("pulsar~latest-race registered; no record of it applies to pulsar")
	}
	if _, err := backends.Lookup("pulsar-persistent~permits-race-1in20"); err == nil {
		t.Error("pulsar-persistent~permits-race-1in20 registered; it is pulsar's alone")
	}
	if _, err := backends.Lookup("rabbitmq~latest-is-earliest"); err == nil {
		t.Error("rabbitmq~latest-is-earliest registered; its record excepts rabbitmq")
	}
	for _, n := range []string{"kafka~latest-race", "kafka-kip848~reconnect-stalls", "memory~standby-members", "rabbitmq~auto-ack", "pulsar~latest-is-earliest"} {
		if _, err := backends.Lookup(n); err != nil {
			t.Errorf("%s: %v", n, err)
		}
	}
}

// RabbitMQ's own variants apply to it alone, and switch on the settings its backend reads.
func TestRabbitMQVariants(t *testing.T) {
	for _, name := range []string{"auto-ack", "shared-exclusive", "queue-per-consumer", "close-unsubscribes"} {
		v, ok := mutants.LookupFor("rabbitmq", name)
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
