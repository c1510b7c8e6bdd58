package mutants

import "github.com/pubsub-conformance/harness/backends"

// RabbitMQ's known-bad variants (backends/rabbitmq declares them): each switches on one
// ordinary setting of the backend that reproduces a mistake of AMQP 0-9-1 client code.
func init() {
	Catalogue = append(Catalogue,
		Variant{
			Name:    "unconfirmed-publish",
			Catches: []string{"F3"},
			Defect:  "the channel is not in confirm mode: Send returns once the frame is written, before the broker took the message (aio-pika without publisher_confirms)",
			// RabbitMQ only: Kafka's and Pulsar's clients always wait for the broker's receipt
			// in the backends' Send; the contract-level unconfirmed-send covers them.
			Declared:  true,
			Configure: settings(map[string]string{"RABBITMQ_PUBLISH_NO_CONFIRM": "true"}),
		},
		Variant{
			Name:      "auto-ack",
			Catches:   []string{"A3", "A1"},
			Defect:    "the consumer consumes with no-ack (auto-ack): the broker forgets each message as it sends it, so a close, a crash or a nack before processing loses it",
			Declared:  true,
			Configure: settings(map[string]string{"RABBITMQ_CONSUMER_AUTO_ACK": "true"}),
		},
		Variant{
			Name:      "shared-exclusive",
			Catches:   []string{"G1", "G4"},
			Defect:    "a shared subscription's queue is consumed exclusively: the second member of the subscription is refused, so competing consumers cannot share it",
			Declared:  true,
			Configure: settings(map[string]string{"RABBITMQ_CONSUMER_EXCLUSIVE": "true"}),
		},
	)
}

// settings returns a Configure that lays fixed settings over a variant's Config.
func settings(s map[string]string) func(*backends.Config) {
	return func(cfg *backends.Config) { *cfg = cfg.WithSettings(s) }
}
