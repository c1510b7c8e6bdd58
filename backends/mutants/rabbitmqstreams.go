package mutants

import "github.com/pubsub-conformance/harness/backends/rabbitmqstreams"

// This backend's known-bad variants (make mutants, docs/mutants.md): each switches one of its
// own mechanisms off through an ordinary setting ParseConfig reads, as a stream application
// that got it wrong would run.
var rabbitmqStreamsBases = []string{rabbitmqstreams.Descriptor.Name}

var rabbitmqStreamsVariants = []Variant{
	Variant{
		Name:      "offset-not-stored",
		Catches:   []string{"A4", "A2", "R3"},
		Defect:    "acks never advance the subscription's stored offset (only its initial position is stored): a reopened subscription reads again everything acked since it was created",
		Bases:     rabbitmqStreamsBases,
		Configure: WithSettings(map[string]string{"RABBITMQ_STREAM_STORE_OFFSETS": "false"}),
	},
	Variant{
		Name:      "earliest-from-next",
		Catches:   []string{"T2", "D6", "L2"},
		Defect:    "a new earliest subscription starts at the stream's offset specification \"next\" instead of \"first\": it replays nothing sent before it existed",
		Bases:     rabbitmqStreamsBases,
		Configure: WithSettings(map[string]string{"RABBITMQ_STREAM_EARLIEST": "next"}),
	},
	Variant{
		Name:      "two-active-members",
		Catches:   []string{"G1", "G3"},
		Defect:    "every member of a shared subscription reads the stream (no single active member): each message goes to every member",
		Bases:     rabbitmqStreamsBases,
		Configure: WithSettings(map[string]string{"RABBITMQ_STREAM_SINGLE_ACTIVE": "false"}),
	},
}
