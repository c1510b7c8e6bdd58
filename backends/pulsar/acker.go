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

// acker sends a consumer's acks in the background: Ack queues the message and returns (the
// default; with PULSAR_ACK_SYNC only the consumer's acks of redeliveries it holds back come
// here), and one goroutine sends everything queued as one ack command with a receipt
// (AckIDList with AckWithResponse), so a consumer acks at one round trip per batch instead of
// one per message. An ack that failed is sent again until the broker confirms it. A
// redelivery of an acked message is held back from the application by the subscription's
// ackBook, whether its ack is confirmed yet or not, and acked again. Close sends what is left
// before it closes the consumer (C-ACK-5).
type acker struct {
	c    pulsar.Consumer
	log  func(format string, args ...any)
	wake chan struct{} // cap 1: there is something to send
	stop chan struct{} // closed by halt
	done chan struct{} // closed when run returned

	mu    sync.Mutex
	queue []pulsar.Message
}

func newAcker(c pulsar.Consumer, log func(string, ...any)) *acker {
	a := &acker{c: c, log: log, wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go a.run()
	return a
}

// add queues an ack of m.
func (a *acker) add(m pulsar.Message) {
	a.mu.Lock()
	a.queue = append(a.queue, m)
	a.mu.Unlock()
	select {
	case a.wake <- struct{}{}:
	default:
	}
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
	return nil
}

// stopIdle ends the background loop of an acker that was never given an ack (a consumer whose
// creation failed after Subscribe).
func (a *acker) stopIdle() {
	close(a.stop)
	<-a.done
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
