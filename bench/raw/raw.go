// Package raw is the baseline of the bench: each broker's own client library, used directly
// with the delivery guarantees the contract gives (a send returns after the broker confirmed
// it; an ack returns after the broker recorded it), on the same broker and topics as the
// backend under test. One file per broker kind; the contract path (package bench) never
// imports this package.
package raw

import (
	"fmt"

	"github.com/pubsub-conformance/harness/bench"
	"github.com/pubsub-conformance/harness/fixtures"
)

// For returns the raw client target for a broker kind at ep, or an error for a kind without
// one. The caller closes it.
func For(ep fixtures.Endpoints) (bench.Target, error) {
	switch ep.Kind {
	case fixtures.Kafka:
		return NewKafka(ep.Bootstrap)
	case fixtures.Pulsar:
		return NewPulsar(ep.ServiceURL)
	default:
		return nil, fmt.Errorf("raw client: no baseline for broker kind %q", ep.Kind)
	}
}
