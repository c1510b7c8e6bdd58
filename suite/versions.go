package suite

import (
	"fmt"

	"github.com/pubsub-conformance/harness/backends"
	"github.com/pubsub-conformance/harness/fixtures"
	"github.com/pubsub-conformance/harness/fixtures/maven"
	"github.com/pubsub-conformance/harness/fixtures/rabbitmq"
	"github.com/pubsub-conformance/harness/suite/run"
)

// Release is the broker release in the column of backend n (ColumnOf: "kafka@3.9.1" for
// PUBSUB_KAFKA_VERSION=3.9.1) when its broker runs another release than the pinned one; "" for
// the pinned release, so a default run keeps today's columns, report files and baseline keys
// (docs/versions.md). RabbitMQ's "pinned" release is the system's rabbitmq-server package;
// PUBSUB_RABBITMQ_VERSION=4.3.6 gives "4.3.6".
func Release(n string) string {
	kind, ok := run.KindFor(n)
	if !ok {
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

// BrokerTooOld says why backend n cannot be tested on the broker this run started (its
// Descriptor's MinBroker is newer than the broker's release); "" when it can, or when the
// broker's release is unknown.
func BrokerTooOld(n string, sh *Shared) string {
	d, err := backends.Lookup(n)
	if err != nil {
		return ""
	}
	return brokerTooOld(d, sh)
}

// brokerTooOld is BrokerTooOld of the registered backend d (its test needs no registration,
// which would show a test's backend to every user of the suite binary it is linked into).
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
