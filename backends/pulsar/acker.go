package pulsar

import (
	"context"
	"sync"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"
)

// ackRetry spaces the acker's attempts after a failed ack (a broken connection, a broker
// restarting): the client reconnects by itself meanwhile.
const ackRetry = 100 * time.Millisecond

// acker sends a consumer's acks in the background (the default; PULSAR_ACK_SYNC turns it off):
// Ack queues the message and returns, and one goroutine sends everything queued as one ack
// command with a receipt (AckIDList with AckWithResponse), so a consumer acks at one round
// trip per batch instead of one per message. An ack that failed is sent again until the broker
// confirms it, and until then, on a persistent topic, a redelivery of that message (the broker
// hands an unconfirmed message out again when the connection that carried it broke) is not
// handed to the application: it is acked again instead. (A non-persistent topic redelivers
// nothing, and its message IDs need not be unique.) Close sends what is left before it closes
// the consumer (C-ACK-5).
type acker struct {
	c      pulsar.Consumer
	log    func(format string, args ...any)
	filter bool          // persistent topic: hold back redeliveries of unconfirmed acks
	wake   chan struct{} // cap 1: there is something to send
	stop   chan struct{} // closed by halt
	done   chan struct{} // closed when run returned

	mu          sync.Mutex
	queue       []pulsar.Message
	unconfirmed map[string]int // message ID -> acks of it queued or in flight
}

func newAcker(c pulsar.Consumer, persistent bool, log func(string, ...any)) *acker {
	a := &acker{c: c, log: log, filter: persistent, wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}),
		unconfirmed: map[string]int{}}
	go a.run()
	return a
}

// add queues an ack of m.
func (a *acker) add(m pulsar.Message) {
	a.mu.Lock()
	a.queue = append(a.queue, m)
	a.unconfirmed[m.ID().String()]++
	a.mu.Unlock()
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

// acked reports whether m was acked and the broker has not confirmed it yet: a redelivery the
// application must not see. It queues an ack of this delivery too.
func (a *acker) acked(m pulsar.Message) bool {
	if !a.filter {
		return false
	}
	a.mu.Lock()
	pending := a.unconfirmed[m.ID().String()] > 0
	a.mu.Unlock()
	if pending {
		a.add(m)
	}
	return pending
}

func (a *acker) run() {
	defer close(a.done)
	for {
		select {
		case <-a.stop:
			return
		case <-a.wake:
		}
		for a.send() != nil {
			select {
			case <-a.stop:
				return
			case <-time.After(ackRetry):
			}
		}
	}
}

// send sends everything queued as one ack and waits for the receipt; on failure the batch goes
// back to the queue.
func (a *acker) send() error {
	a.mu.Lock()
	batch := a.queue
	a.queue = nil
	a.mu.Unlock()
	if len(batch) == 0 {
		return nil
	}
	ids := make([]pulsar.MessageID, len(batch))
	for i, m := range batch {
		ids[i] = m.ID()
	}
	err := a.c.AckIDList(ids)
	a.mu.Lock()
	defer a.mu.Unlock()
	if err != nil {
		a.queue = append(batch, a.queue...)
		a.log("pulsar: %d acks not confirmed, sending them again: %v", len(batch), err)
		return err
	}
	for _, m := range batch {
		k := m.ID().String()
		if a.unconfirmed[k]--; a.unconfirmed[k] <= 0 {
			delete(a.unconfirmed, k)
		}
	}
	return nil
}

// halt stops the background loop and sends what is still queued, within ctx.
func (a *acker) halt(ctx context.Context) error {
	select {
	case <-a.stop:
	default:
		close(a.stop)
	}
	<-a.done
	_, err := runCtx(ctx, "pulsar: send the queued acks", func() (struct{}, error) {
		for {
			err := a.send()
			if err == nil {
				return struct{}{}, nil
			}
			if ctx.Err() != nil {
				return struct{}{}, err
			}
			select {
			case <-ctx.Done():
				return struct{}{}, err
			case <-time.After(ackRetry):
			}
		}
	}, nil)
	return err
}
