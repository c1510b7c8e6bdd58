package mutants

import "github.com/pubsub-conformance/harness/backends/pulsar"

// This backend's known-bad variants (make mutants, docs/md): each switches on ordinary,
// documented settings of this backend - the settings ParseConfig reads - or calls its genuine
// admin operation at the wrong moment, so the backend has no code for them.
//
// Not here: latest-race and acks-leader-only (Kafka's). Pulsar's Subscribe returns after the
// broker created the subscription, so there is no early return to make; a producer's receipt
// always comes after the bookies' write quorum, and no client setting weakens it.
var pulsarBases = []string{pulsar.Descriptor.Name, pulsar.PersistentDescriptor.Name}

var pulsarVariants = []Variant{
	CloseUnsubscribes(pulsarBases...),
	// PULSAR_ADMIN_API_KEY is the admin REST calls' token alone.
	AuthAdminOnly(map[string]string{"PULSAR_API_KEY": "PULSAR_ADMIN_API_KEY"}, pulsarBases...),
	Variant{
		Name:    "permits-race-1in20",
		Catches: []string{"D2"},
		Sanity:  []string{"D7"}, // D1 sends right after Consumer() returns
		Defect:  "one Consumer() call in 20 on a non-persistent topic returns before the broker granted the consumer permits",
		// pulsar only: on pulsar-persistent every topic is persistent, no permits to race for.
		Bases: []string{pulsar.Descriptor.Name},
		Open:  SometimesRacy(map[string]string{"PULSAR_CONSUMER_NO_WAIT": "true"}),
	},
}
