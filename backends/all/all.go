// Package all is the explicit list of backends a conformance run knows. Importing it (for its
// side effect) registers each into the backends registry. Adding a backend is one line here
// (and, if it needs a broker, one line in the suite's broker table).
package all

import (
	"context"

	"github.com/pubsub-conformance/harness/backends"
	"github.com/pubsub-conformance/harness/backends/kafka"
	"github.com/pubsub-conformance/harness/backends/memory"
	"github.com/pubsub-conformance/harness/backends/pulsar"
)

// Descriptions says what each registered backend is, for help texts and report metadata.
var Descriptions = map[string]string{
	memory.Name:         memory.Description,
	"kafka":             "Apache Kafka via confluent-kafka-go (librdkafka)",
	"pulsar":            "Apache Pulsar via pulsar-client-go; TrustGraph's mapping (non-persistent for request, response, notify)",
	"pulsar-persistent": "Apache Pulsar via pulsar-client-go; every class on persistent topics",
}

func init() {
	backends.Register(memory.Name, memory.New) // the reference: never a conformance result
	backends.Register("kafka", kafka.New)
	backends.Register("pulsar", pulsarWith(false))
	backends.Register("pulsar-persistent", pulsarWith(true))
}

// pulsarWith fixes Config.Pulsar.AllPersistent for the two Pulsar registrations.
func pulsarWith(allPersistent bool) backends.Constructor {
	return func(ctx context.Context, cfg backends.Config) (backends.Backend, error) {
		cfg.Pulsar.AllPersistent = allPersistent
		return pulsar.New(ctx, cfg)
	}
}
