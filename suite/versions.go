package suite

import (
	"fmt"

	"github.com/pubsub-conformance/harness/backends"
	"github.com/pubsub-conformance/harness/fixtures"
	"github.com/pubsub-conformance/harness/fixtures/maven"
	"github.com/pubsub-conformance/harness/fixtures/rabbitmq"
)

// Release is the broker release in the column of a backend on a broker of kind (InRun:
// "kafka@3.9.1" for PUBSUB_KAFKA_VERSION=3.9.1) when that broker runs another release than
// the pinned one; "" for the pinned release, so a default run keeps today's columns, report
// files and baseline keys (docs/versions.md), and "" for no broker (kind ""). RabbitMQ's
// "pinned" release is the system's rabbitmq-server package; PUBSUB_RABBITMQ_VERSION=4.3.6
// gives "4.3.6".
func Release(kind fixtures.Kind) string {
	if kind == "" {
		return ""
	}
	if kind == fixtures.RabbitMQ {
		return rabbitmq.RequestedRelease()
	}
	pinned := maven.Pinned(string(kind))
	if pinned == "" {
		return "" // a kind whose release the harness does not pick
	}
	if v := maven.Version(string(kind)); v != pinned {
		return v
	}
	return ""
}

// brokerTooOld says why the backend registered as d cannot be tested on the broker this run
// started (its MinBroker is newer than the broker's release); "" when it can, or when the
// broker's release is unknown. It takes the Descriptor of the run's target (its test needs no
// registration, which would show a test's backend to every user of the suite binary it is
// linked into).
func brokerTooOld(d backends.Descriptor, sh *Shared) string {
	if d.MinBroker == "" || d.Broker == "" {
		return ""
	}
	kind := fixtures.Kind(d.Broker)
	v := sh.Brokers[kind].Version
	if v == "" || fixtures.AtLeast(v, d.MinBroker) {
		return ""
	}
	return fmt.Sprintf("%s needs %s %s or later, this run's broker is %s: %s", d.Name, kind, d.MinBroker, v, d.MinBrokerWhy)
}
