package mutants

import "github.com/pubsub-conformance/harness/backends/rabbitmq"

// This backend's known-bad variants (make mutants, docs/md): each switches on one
// ordinary setting of the backend (ParseConfig reads it) that reproduces a mistake of AMQP
// 0-9-1 client code, or calls its genuine admin operation at the wrong moment.
// (An unconfirmed publish, RABBITMQ_PUBLISH_NO_CONFIRM, was tried too and SURVIVED every
// spec: the fault proxy closes connections, so a write during a cut fails at once, and no
// spec kills the broker between a write and its fsync; docs/rabbitmq.md.)
var rabbitmqBases = []string{rabbitmq.Descriptor.Name}

var rabbitmqVariants = []Variant{
	CloseUnsubscribes(rabbitmqBases...),
	Variant{
		Name:      "auto-ack",
		Catches:   []string{"A3", "A1"},
		Defect:    "the consumer consumes with no-ack (auto-ack): the broker forgets each message as it sends it, so a close, a crash or a nack before processing loses it",
		Bases:     rabbitmqBases,
		Configure: WithSettings(map[string]string{"RABBITMQ_CONSUMER_AUTO_ACK": "true"}),
	},
	Variant{
		Name:      "shared-exclusive",
		Catches:   []string{"G1", "G4"},
		Defect:    "a shared subscription's queue is consumed exclusively: the second member of the subscription is refused, so competing consumers cannot share it",
		Bases:     rabbitmqBases,
		Configure: WithSettings(map[string]string{"RABBITMQ_CONSUMER_EXCLUSIVE": "true"}),
	},
	Variant{
		Name:      "queue-per-consumer",
		Catches:   []string{"G1", "A3", "R1"},
		Defect:    "every consumer declares its own queue, shared subscriptions too: members of a subscription each get every message, and a reopened consumer starts on a new, empty queue",
		Bases:     rabbitmqBases,
		Configure: WithSettings(map[string]string{"RABBITMQ_QUEUE_PER_CONSUMER": "true"}),
	},
}
