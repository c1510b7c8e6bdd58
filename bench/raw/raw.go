// Package raw is the baseline of the bench: each broker's own client library, used directly
// with the delivery guarantees the contract gives (a send returns after the broker confirmed
// it; an ack returns after the broker recorded it), on the same broker and topics as the
// backend under test. One file per client library, each registering its clients for a broker
// kind (the kind's record is in package fixtures; bench types cannot live there) or, where a
// backend speaks another protocol than its kind's baseline (rabbitmq-streams: the stream
// protocol, not AMQP 0-9-1), for that backend; the contract path (package bench) never imports
// this package.
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

// clientsForBackend builds a backend's own raw clients at ep, where its kind's do not fit it.
var clientsForBackend = map[string]func(ep fixtures.Endpoints) ([]bench.Client, error){}

// register adds kind's raw clients (from an init of the kind's file).
func register(kind fixtures.Kind, f func(ep fixtures.Endpoints) ([]bench.Client, error)) {
	if _, dup := clientsFor[kind]; dup {
		panic("raw: kind " + string(kind) + " registered twice")
	}
	clientsFor[kind] = f
}

// registerBackend adds the raw clients of one backend (by registry name), chosen over its
// kind's.
func registerBackend(name string, f func(ep fixtures.Endpoints) ([]bench.Client, error)) {
	if _, dup := clientsForBackend[name]; dup {
		panic("raw: backend " + name + " registered twice")
	}
	clientsForBackend[name] = f
}

// For returns the raw clients for backend on the broker at ep: the backend's own baseline
// when it has one (rabbitmq-streams: the stream client), else its broker kind's.
// reports.ClientRaw is the library's defaults plus the contract's guarantees and, where the
// backend has performance settings of its own, reports.ClientRawSame has those too; an error
// for a kind without a baseline. The caller closes them.
func For(backend string, ep fixtures.Endpoints) ([]bench.Client, error) {
	if f, ok := clientsForBackend[backend]; ok {
		return f(ep)
	}
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
