// Package bench measures a backend through the contract, and the broker's raw client beside
// it on the same broker in the same run: confirmed-send throughput, end-to-end latency at a
// fixed offered rate (HdrHistogram, from the intended send time, so coordinated omission
// cannot hide a stall), and how long Consumer() takes to return a live subscription.
//
// The workloads see only Target, Sender and Receiver. ContractTarget adapts any registered
// backend (backends.Open, never a concrete package); bench/raw adapts each broker's own client
// library, one file per library, chosen per broker kind or, where a backend speaks another
// protocol (rabbitmq-streams), per backend. bench/cmd/bench runs them on brokers it starts itself.
package bench

import (
	"context"
	"fmt"

	"github.com/pubsub-conformance/harness/backends"
)

// Target is something to measure: a backend through the contract or a raw client.
//
// Who calls it: the workloads in this package, one at a time, from one goroutine (Sender and
// Receiver are used concurrently as documented on them). The caller closes what it opened and
// closes the Target last.
type Target interface {
	// Info says what is measured: library and the settings that matter for speed.
	Info() string
	// Sender returns a sender on topic (a contract topic string; the Target maps it).
	Sender(ctx context.Context, topic string) (Sender, error)
	// Receiver returns a receiver on a new subscription of topic, live when it returns: a
	// message sent after it returned is delivered to it.
	Receiver(ctx context.Context, topic, subscription string) (Receiver, error)
	// Close releases the target's clients.
	Close(ctx context.Context) error
}

// Sender sends to one topic. Send returns only after the broker confirmed the message, as the
// contract's Producer.Send does. Safe for concurrent use.
type Sender interface {
	Send(ctx context.Context, payload []byte) error
	Close(ctx context.Context) error
}

// Receiver receives from one subscription, from one goroutine. Receive returns the next
// payload and its acknowledgement; ack gives the contract Ack's guarantee (C-ACK-5, C-ACK-6):
// stored in the background within the ack crash bound, and in force after Close.
type Receiver interface {
	Receive(ctx context.Context) (payload []byte, ack func(context.Context) error, err error)
	Close(ctx context.Context) error
}

// ContractTarget measures b through the contract only.
type ContractTarget struct {
	B backends.Backend
	// Description goes into Info.
	Description string
}

var _ Target = ContractTarget{}

func (t ContractTarget) Info() string {
	if t.Description != "" {
		return t.Description
	}
	return "backends.Open(" + t.B.Name() + ")"
}

func (t ContractTarget) Sender(ctx context.Context, topic string) (Sender, error) {
	p, err := t.B.Producer(ctx, topic)
	if err != nil {
		return nil, err
	}
	return contractSender{p}, nil
}

type contractSender struct{ p backends.Producer }

func (s contractSender) Send(ctx context.Context, payload []byte) error {
	return s.p.Send(ctx, backends.Message{Payload: payload})
}
func (s contractSender) Close(ctx context.Context) error { return s.p.Close(ctx) }

func (t ContractTarget) Receiver(ctx context.Context, topic, sub string) (Receiver, error) {
	c, err := t.B.Consumer(ctx, topic, sub, backends.WithPosition(backends.Latest))
	if err != nil {
		return nil, err
	}
	return contractReceiver{c}, nil
}

type contractReceiver struct{ c backends.Consumer }

func (r contractReceiver) Receive(ctx context.Context) ([]byte, func(context.Context) error, error) {
	d, err := r.c.Receive(ctx)
	if err != nil {
		return nil, nil, err
	}
	return d.Payload, func(ctx context.Context) error { return r.c.Ack(ctx, d) }, nil
}
func (r contractReceiver) Close(ctx context.Context) error { return r.c.Close(ctx) }

// Close does not close the backend: whoever opened it does.
func (t ContractTarget) Close(context.Context) error { return nil }

// Subscriber is what the subscribe-to-live figure times: the contract's Consumer().
func (t ContractTarget) subscribe(ctx context.Context, topic, sub string) (func(context.Context) error, error) {
	c, err := t.B.Consumer(ctx, topic, sub, backends.WithPosition(backends.Latest))
	if err != nil {
		return nil, fmt.Errorf("consumer %s on %s: %w", sub, topic, err)
	}
	return c.Close, nil
}
