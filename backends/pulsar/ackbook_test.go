package pulsar

import (
	"testing"

	"github.com/apache/pulsar-client-go/pulsar"
)

func TestAckBookKeepsTheLatest(t *testing.T) {
	k := newAckBook()
	id := func(e int64) pulsar.MessageID { return pulsar.NewMessageID(17, e, -1, 0) }
	if k.has(id(0)) {
		t.Fatal("empty book has 17:0")
	}
	k.add(id(0))
	k.add(id(0)) // again: no second slot
	if !k.has(id(0)) || k.has(id(1)) || k.has(pulsar.NewMessageID(18, 0, -1, 0)) || k.has(pulsar.NewMessageID(17, 0, 0, 0)) {
		t.Fatal("the book is keyed by ledger, entry, batch index and partition")
	}
	for e := int64(1); e < ackMemory; e++ {
		k.add(id(e))
	}
	if !k.has(id(0)) || len(k.ids) != ackMemory {
		t.Fatalf("full book: has 17:0 %v, %d kept, want %d", k.has(id(0)), len(k.ids), ackMemory)
	}
	k.add(id(ackMemory)) // evicts the oldest
	k.add(id(ackMemory + 1))
	if k.has(id(0)) || k.has(id(1)) || !k.has(id(2)) || !k.has(id(ackMemory+1)) || len(k.ids) != ackMemory {
		t.Fatalf("after 2 more: 17:0 %v, 17:1 %v, 17:2 %v, newest %v, %d kept", k.has(id(0)), k.has(id(1)), k.has(id(2)), k.has(id(ackMemory+1)), len(k.ids))
	}
}

func TestAckBookPerSubscription(t *testing.T) {
	b := &Backend{books: map[string]*ackBook{}}
	r, err := b.resolve("flow:tg:t")
	if err != nil {
		t.Fatal(err)
	}
	other, _ := b.resolve("flow:tg:u")
	s0 := b.ackBook(r, "s0")
	if b.ackBook(r, "s0") != s0 {
		t.Fatal("two consumers of one subscription in one Backend must share its book")
	}
	if b.ackBook(r, "s1") == s0 || b.ackBook(other, "s0") == s0 {
		t.Fatal("another subscription or topic has its own book")
	}
	s0.add(pulsar.NewMessageID(1, 1, -1, 0))
	b.forgetAcks(r, "s0") // DeleteSubscription: a subscription of that name starts afresh
	if b.ackBook(r, "s0").has(pulsar.NewMessageID(1, 1, -1, 0)) {
		t.Fatal("a deleted subscription's book must go")
	}
	s1 := b.ackBook(r, "s1")
	keep := b.ackBook(other, "s0")
	b.forgetAcks(r, "") // DeleteTopic
	if b.ackBook(r, "s1") == s1 || b.ackBook(other, "s0") != keep {
		t.Fatal("DeleteTopic drops the books of that topic's subscriptions only")
	}
}
