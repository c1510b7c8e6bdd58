// Package raw is the baseline of the bench: each broker's own client library, used directly
// with the delivery guarantees the contract gives (a send returns after the broker confirmed
// it; an ack returns after the broker recorded it), on the same broker and topics as the
// backend under test. One file per broker kind; the contract path (package bench) never
// imports this package.
package raw

import (
	"context"
	"fmt"

	"github.com/pubsub-conformance/harness/bench"
	"github.com/pubsub-conformance/harness/fixtures"
	"github.com/pubsub-conformance/harness/reports"
)

// For returns the raw clients for a broker kind at ep: reports.ClientRaw (the library's
// defaults plus the contract's guarantees) and reports.ClientRawSame (also the backend's own
// performance settings), or an error for a kind without a baseline. The caller closes them.
func For(ep fixtures.Endpoints) ([]bench.Client, error) {
	var def, same bench.Target
	var err error
	switch ep.Kind {
	case fixtures.Kafka:
		if def, err = NewKafka(ep.Bootstrap, nil); err == nil {
			same, err = NewKafka(ep.Bootstrap, kafkaBackendSettings)
		}
	case fixtures.Pulsar:
		if def, err = NewPulsar(ep.ServiceURL, false); err == nil {
			same, err = NewPulsar(ep.ServiceURL, true)
		}
	default:
		return nil, fmt.Errorf("raw client: no baseline for broker kind %q", ep.Kind)
	}
	if err != nil {
		if def != nil {
			_ = def.Close(context.Background())
		}
		return nil, err
	}
	return []bench.Client{{Name: reports.ClientRaw, T: def}, {Name: reports.ClientRawSame, T: same}}, nil
}
