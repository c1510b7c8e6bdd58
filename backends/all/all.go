// Package all is the explicit list of backends a conformance run knows. Importing it (for its
// side effect) registers each into the backends registry. Adding a backend is one line here:
// its package's Descriptor says everything else (broker kind, settings); its known-bad variants
// are a file of backends/mutants.
package all

import (
	"github.com/pubsub-conformance/harness/backends"
	"github.com/pubsub-conformance/harness/backends/kafka"
	"github.com/pubsub-conformance/harness/backends/memory"
	"github.com/pubsub-conformance/harness/backends/pulsar"
	"github.com/pubsub-conformance/harness/backends/rabbitmq"
	"github.com/pubsub-conformance/harness/backends/rabbitmqstreams"
	"github.com/pubsub-conformance/harness/backends/remote"
)

func init() {
	backends.Register(memory.Descriptor) // the reference: never a conformance result
	backends.Register(kafka.Descriptor)
	backends.Register(kafka.KIP848Descriptor)
	backends.Register(pulsar.Descriptor)
	backends.Register(pulsar.PersistentDescriptor)
	backends.Register(rabbitmq.Descriptor)
	backends.Register(rabbitmqstreams.Descriptor)
	// Out-of-process adapters: backends/remote/declare.go and the user's PUBSUB_ADAPTER_<NAME>.
	// An invalid user declaration is kept for the suite to report as one line.
	AdapterError = remote.Register()
}

// AdapterError is the error of an invalid user adapter declaration (PUBSUB_ADAPTER_<NAME>);
// nil when all are valid.
var AdapterError error
