package pulsar

import (
	"strings"
	"sync"

	"github.com/apache/pulsar-client-go/pulsar"
)

// ackMemory is how many acknowledged message IDs an ackBook keeps per subscription: ten times
// the client's default receiver queue (1,000), so every copy still queued in a consumer of
// this Backend when its ack was made, and what a reconnect sends again right after, is
// covered. About 60 bytes each (map entry and ring slot): at most ~600 KB per subscription.
const ackMemory = 10_000

// ackKey is a message's position on a persistent topic: unique within the topic (BookKeeper
// ledger IDs are never reused, so not even a deleted and re-created topic repeats one).
type ackKey struct {
	ledger, entry    int64
	batch, partition int32
}

func keyOf(id pulsar.MessageID) ackKey {
	return ackKey{ledger: id.LedgerID(), entry: id.EntryID(), batch: id.BatchIdx(), partition: id.PartitionIdx()}
}

// ackBook remembers the message IDs acknowledged through this Backend on one subscription of
// a persistent topic (the most recent ackMemory of them), so that no consumer of that
// subscription in this Backend hands such a message to the application again (C-ACK-2).
//
// Why the broker's receipt is not enough (issue 32, W2 on pulsar and pulsar-persistent): the
// broker sends the ack receipt once its consumer took the ack in memory, before the cursor
// stored it ("Even when the broker returns a receipt, it doesn't guarantee that the message
// won't be redelivered later", Pulsar's ConsumerBuilder.isAckReceiptEnabled), and then
//   - a broker that stops before storing it (the standalone's bookie stopped first: "Error
//     updating cursor ... Attempt to write to a closed ledger") delivers the message again
//     after its restart, with the same ID;
//   - a reconnect makes the broker send every unacknowledged message of the old connection
//     again, while pulsar-client-go v0.19.0 clears only its partition queue on reconnect, not
//     the consumer's channel: the old copies still come out of it, also after another
//     consumer acked the copy the broker sent again, or after this consumer acked them;
//   - a copy the broker sent again before the ack reached it arrives after the receipt.
//
// A consumer that receives a message in the book does not return it: it acks it again (which
// stores an ack the broker lost and is harmless otherwise) and receives on. Only this
// Backend's acks are known here: a consumer in another process can still be handed a message
// acked here, in the cases above (Pulsar's at-least-once across processes).
type ackBook struct {
	mu   sync.Mutex
	ids  map[ackKey]struct{}
	ring []ackKey // insertion order, for eviction once ackMemory are kept
	next int      // the ring slot the next key goes to
}

func newAckBook() *ackBook { return &ackBook{ids: map[ackKey]struct{}{}} }

// add records an acknowledged message; recording one already kept changes nothing.
func (k *ackBook) add(id pulsar.MessageID) {
	key := keyOf(id)
	k.mu.Lock()
	defer k.mu.Unlock()
	if _, ok := k.ids[key]; ok {
		return
	}
	if len(k.ring) < ackMemory {
		k.ring = append(k.ring, key)
	} else {
		delete(k.ids, k.ring[k.next])
		k.ring[k.next] = key
		k.next = (k.next + 1) % ackMemory
	}
	k.ids[key] = struct{}{}
}

// has reports whether the message was acknowledged through this Backend.
func (k *ackBook) has(id pulsar.MessageID) bool {
	key := keyOf(id)
	k.mu.Lock()
	defer k.mu.Unlock()
	_, ok := k.ids[key]
	return ok
}

// ackBook returns the book of the shared subscription on r, made on first use. It lives as
// long as the Backend (a consumer that reopens the subscription here still holds back what
// was acked before), or until the Backend deletes the subscription or its topic: a subscription
// made again under the same name starts afresh and may rightly deliver those messages again.
// (One deleted and made again behind the Backend's back, while it lives, is not seen here.)
func (b *Backend) ackBook(r resolved, subscription string) *ackBook {
	key := bookKey(r, subscription)
	b.booksMu.Lock()
	defer b.booksMu.Unlock()
	if k := b.books[key]; k != nil {
		return k
	}
	k := newAckBook()
	if b.books == nil {
		b.books = map[string]*ackBook{}
	}
	b.books[key] = k
	return k
}

// forgetAcks drops the books of r's subscription (every one of r when subscription is "").
func (b *Backend) forgetAcks(r resolved, subscription string) {
	b.booksMu.Lock()
	defer b.booksMu.Unlock()
	if subscription != "" {
		delete(b.books, bookKey(r, subscription))
		return
	}
	prefix := r.fullName() + "\x00"
	for key := range b.books {
		if strings.HasPrefix(key, prefix) {
			delete(b.books, key)
		}
	}
}

func bookKey(r resolved, subscription string) string { return r.fullName() + "\x00" + subscription }
