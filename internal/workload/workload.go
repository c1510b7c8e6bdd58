// Package workload is a first version of the generative workload of issue 22: a program of
// contract operations over several consumers and subscriptions, drawn at random (by
// pgregory.net/rapid in the tests, which shrinks a failing program to a minimal one), run on a
// Backend with every call recorded, then judged by the history checkers (internal/history).
//
// This version runs on the in-process reference only (its tests), without a nemesis; the
// catalogue entry, the broker runs and the fault schedule are still to come.
package workload

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/pubsub-conformance/harness/backends"
	"github.com/pubsub-conformance/harness/internal/history"
)

// Op is one step of a program.
type Op int

// The steps. Each picks its target by Arg (modulo what exists), so every program is valid.
const (
	Send    Op = iota // the producer sends a new message
	Receive           // a consumer receives one message (a short bound) and holds it
	Ack               // a consumer acks the oldest delivery it holds
	Nack              // a consumer nacks the oldest delivery it holds
	Close             // a consumer closes (what it held comes again to the subscription)
	Join              // a new consumer joins one of the shared subscriptions
	numOps
)

var opNames = [...]string{"send", "receive", "ack", "nack", "close", "join"}

func (o Op) String() string { return opNames[o] }

// Step is an operation and its argument (which consumer, which subscription).
type Step struct {
	Op  Op
	Arg int
}

func (s Step) String() string { return fmt.Sprintf("%s(%d)", s.Op, s.Arg) }

// Program is what a run does, in order.
type Program []Step

func (p Program) String() string {
	parts := make([]string, len(p))
	for i, s := range p {
		parts[i] = s.String()
	}
	return strings.Join(parts, " ")
}

// Subscriptions is how many shared subscriptions a program's topic has.
const Subscriptions = 2

// receiveWithin bounds each Receive of a program; drainWithin each Receive of the final drain.
const (
	receiveWithin = 20 * time.Millisecond
	drainWithin   = 100 * time.Millisecond
)

type member struct {
	c    backends.Consumer
	sub  int
	held []backends.Delivery
}

// Run runs prog on b (a fresh topic of class flow, one producer, Subscriptions shared
// subscriptions each starting with one consumer), then drains every subscription with a new
// consumer that acks everything until a Receive times out, and returns the history's findings.
// b must record into rec (history.Wrap). An error is a call that failed where the contract
// says it must not; the findings are the anomalies.
func Run(ctx context.Context, b backends.Backend, rec *history.Recorder, prog Program) ([]history.Finding, error) {
	topic := fmt.Sprintf("flow:tg:workload-%d", time.Now().UnixNano())
	subs := make([]string, Subscriptions)
	var members []*member
	for i := range subs {
		subs[i] = fmt.Sprintf("s%d", i)
		c, err := b.Consumer(ctx, topic, subs[i], backends.WithPosition(backends.Earliest))
		if err != nil {
			return nil, fmt.Errorf("subscribe %s: %w", subs[i], err)
		}
		members = append(members, &member{c: c, sub: i})
	}
	p, err := b.Producer(ctx, topic)
	if err != nil {
		return nil, fmt.Errorf("producer: %w", err)
	}
	defer p.Close(ctx)
	open := func() []*member {
		var out []*member
		for _, m := range members {
			if m.c != nil {
				out = append(out, m)
			}
		}
		return out
	}
	sent := 0
	for i, st := range prog {
		live := open()
		switch st.Op {
		case Send:
			if err := p.Send(ctx, backends.Message{Payload: fmt.Appendf(nil, "m%d", sent)}); err != nil {
				return nil, fmt.Errorf("step %d %s: %w", i, st, err)
			}
			sent++
		case Receive, Ack, Nack, Close:
			if len(live) == 0 {
				continue
			}
			m := live[st.Arg%len(live)]
			switch st.Op {
			case Receive:
				rctx, cancel := context.WithTimeout(ctx, receiveWithin)
				d, err := m.c.Receive(rctx)
				cancel()
				if err == nil {
					m.held = append(m.held, d)
				}
			case Ack, Nack:
				if len(m.held) == 0 {
					continue
				}
				d := m.held[0]
				m.held = m.held[1:]
				settle := m.c.Ack
				if st.Op == Nack {
					settle = m.c.Nack
				}
				if err := settle(ctx, d); err != nil {
					return nil, fmt.Errorf("step %d %s: %w", i, st, err)
				}
			case Close:
				if err := m.c.Close(ctx); err != nil {
					return nil, fmt.Errorf("step %d %s: %w", i, st, err)
				}
				m.c, m.held = nil, nil
			}
		case Join:
			sub := st.Arg % Subscriptions
			c, err := b.Consumer(ctx, topic, subs[sub])
			if err != nil {
				return nil, fmt.Errorf("step %d %s: %w", i, st, err)
			}
			members = append(members, &member{c: c, sub: sub})
		}
	}
	for _, m := range open() {
		if err := m.c.Close(ctx); err != nil {
			return nil, fmt.Errorf("close before the drain: %w", err)
		}
	}
	for _, s := range subs {
		c, err := b.Consumer(ctx, topic, s)
		if err != nil {
			return nil, fmt.Errorf("drain %s: %w", s, err)
		}
		for {
			rctx, cancel := context.WithTimeout(ctx, drainWithin)
			d, err := c.Receive(rctx)
			cancel()
			if err != nil {
				break
			}
			if err := c.Ack(ctx, d); err != nil {
				return nil, fmt.Errorf("drain %s: ack: %w", s, err)
			}
		}
		if err := c.Close(ctx); err != nil {
			return nil, fmt.Errorf("drain %s: close: %w", s, err)
		}
	}
	return history.Check(rec.Ops(), history.PolicyFor(b)), nil
}
