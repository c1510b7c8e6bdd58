// Package raw is the baseline of the bench: each broker's own client library, used directly
// with the delivery guarantees the contract gives (a send returns after the broker confirmed
// it; an ack returns after the broker recorded it), on the same broker and topics as the
// backend under test. One file per broker kind, each registering its clients for its kind
// (the kind's record is in package fixtures; bench types cannot live there); the contract path
// (package bench) never imports this package.
package raw

import (
	"context"
	"fmt"

	"github.com/pubsub-conformance/harness/bench"
	"github.com/pubsub-conformance/harness/fixtures"
	"github.com/pubsub-conformance/harness/reports"
)

// clientsFor builds a kind's raw clients at ep; registered by the kind's file.
var clientsFor = map[fixtures.Kind]func(ep fixtures.Endpoints) ([]bench.Client, error){}

// register adds kind's raw clients (from an init of the kind's file).
func register(kind fixtures.Kind, f func(ep fixtures.Endpoints) ([]bench.Client, error)) {
	if _, dup := clientsFor[kind]; dup {
		panic("raw: kind " + string(kind) + " registered twice")
	}
	clientsFor[kind] = f
}

// For returns the raw clients for a broker kind at ep: reports.ClientRaw (the library's
// defaults plus the contract's guarantees) and, where the backend has performance settings of
// its own, reports.ClientRawSame (those too), or an error for a kind without a baseline. The
// caller closes them.
func For(ep fixtures.Endpoints) ([]bench.Client, error) {
	f, ok := clientsFor[ep.Kind]
	if !ok {
		return nil, fmt.Errorf("raw client: no baseline for broker kind %q", ep.Kind)
	}
	return f(ep)
}

// pair is the clients of a kind with both baselines; def is closed when same fails.
func pair(def bench.Target, same func() (bench.Target, error), err error) ([]bench.Client, error) {
	if err != nil {
		return nil, err
	}
	s, err := same()
	if err != nil {
		_ = def.Close(context.Background())
		return nil, err
	}
	return []bench.Client{{Name: reports.ClientRaw, T: def}, {Name: reports.ClientRawSame, T: s}}, nil
}

func init() {
	register(fixtures.Kafka, func(ep fixtures.Endpoints) ([]bench.Client, error) {
		def, err := NewKafka(ep.Bootstrap, nil)
		return pair(def, func() (bench.Target, error) { return NewKafka(ep.Bootstrap, kafkaBackendSettings) }, err)
	})
	register(fixtures.Pulsar, func(ep fixtures.Endpoints) ([]bench.Client, error) {
		def, err := NewPulsar(ep.ServiceURL, false)
		return pair(def, func() (bench.Target, error) { return NewPulsar(ep.ServiceURL, true) }, err)
	})
}
