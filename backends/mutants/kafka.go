package mutants

import "github.com/pubsub-conformance/harness/backends/kafka"

// This backend's known-bad variants (make mutants, docs/md): each switches on ordinary,
// documented settings of this backend - the settings ParseConfig reads - so the backend has no
// code for them. They apply to both registrations of the backend.
var kafkaBases = []string{kafka.Descriptor.Name, kafka.KIP848Descriptor.Name}

var kafkaVariants = []Variant{
	Variant{
		Name:    "latest-race",
		Catches: []string{"D2"},
		Sanity:  []string{"D7"}, // D1 sends right after Consumer() returns
		Defect:  "Consumer() returns before the partition assignment and the group starts at latest (TrustGraph's blocking bug)",
		Bases:   kafkaBases,
		Configure: WithSettings(map[string]string{
			"KAFKA_CONSUMER_NO_WAIT":         "true",
			"KAFKA_CONFIG_AUTO_OFFSET_RESET": "latest",
		}),
	},
	Variant{
		Name:    "latest-race-1in20",
		Catches: []string{"D2"},
		Sanity:  []string{"D7"}, // D1 sends right after Consumer() returns
		Defect:  "one Consumer() call in 20 returns before the group assignment fixed the start position, and the group then starts at latest",
		Bases:   kafkaBases,
		Open: SometimesRacy(map[string]string{
			"KAFKA_CONSUMER_NO_WAIT":         "true",
			"KAFKA_CONFIG_AUTO_OFFSET_RESET": "latest",
		}),
	},
	CloseUnsubscribes(kafkaBases...),
	Variant{
		Name:    "acks-leader-only",
		Catches: []string{"F5"},
		Defect:  "the producer takes the partition leader's acknowledgement alone (acks=1, no idempotence): a write the leader confirmed but had not yet replicated is lost when the leader dies",
		Bases:   kafkaBases,
		Configure: WithSettings(map[string]string{
			"KAFKA_CONFIG_ACKS": "1",
			// librdkafka refuses acks other than all with the idempotent producer.
			"KAFKA_CONFIG_ENABLE_IDEMPOTENCE": "false",
		}),
	},
	// KAFKA_ADMIN_CONFIG_<KEY> is a librdkafka property of the admin client alone.
	AuthAdminOnly(map[string]string{
		"KAFKA_SECURITY_PROTOCOL": "KAFKA_ADMIN_CONFIG_SECURITY_PROTOCOL",
		"KAFKA_SASL_MECHANISM":    "KAFKA_ADMIN_CONFIG_SASL_MECHANISMS",
		"KAFKA_SASL_USERNAME":     "KAFKA_ADMIN_CONFIG_SASL_USERNAME",
		"KAFKA_SASL_PASSWORD":     "KAFKA_ADMIN_CONFIG_SASL_PASSWORD",
	}, kafkaBases...),
	Variant{
		Name:    "reconnect-stalls",
		Catches: []string{"R6"},
		Defect:  "clients wait ten minutes before reconnecting to a broker that went away (reconnect backoff misconfigured), so producers and consumers opened before a broker restart stall",
		Bases:   kafkaBases,
		// librdkafka's reconnect.backoff(.max).ms, through the ordinary passthrough.
		Configure: WithSettings(map[string]string{
			"KAFKA_CONFIG_RECONNECT_BACKOFF_MS":     "600000",
			"KAFKA_CONFIG_RECONNECT_BACKOFF_MAX_MS": "600000",
		}),
	},
}
