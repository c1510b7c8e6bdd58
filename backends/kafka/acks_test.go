package kafka

import (
	"slices"
	"strings"
	"testing"
)

func TestAckedMetadataRoundTrip(t *testing.T) {
	for _, offs := range [][]int64{nil, {10}, {11, 12, 13, 20, 22, 23}, {10, 1000000}} {
		meta := encodeAcked(10, offs)
		got := decodeAcked(10, meta)
		if !slices.Equal(got, offs) {
			t.Errorf("decodeAcked(encodeAcked(%v) = %q) = %v", offs, meta, got)
		}
	}
	for _, foreign := range []string{"", "some other client's note", "acked1:x", "acked1:1", "acked1:-1.2"} {
		if got := decodeAcked(0, foreign); got != nil {
			t.Errorf("decodeAcked(%q) = %v; want nothing", foreign, got)
		}
	}
}

func TestAckedMetadataStaysBounded(t *testing.T) {
	var offs []int64
	for o := int64(0); o < 100000; o += 2 { // every other offset: one run each
		offs = append(offs, o)
	}
	meta := encodeAcked(0, offs)
	if len(meta) > maxMetadata {
		t.Fatalf("metadata is %d bytes; want at most %d", len(meta), maxMetadata)
	}
	got := decodeAcked(0, meta)
	if len(got) == 0 || !slices.Equal(got, offs[:len(got)]) {
		t.Fatalf("truncated metadata must keep a prefix of the offsets; got %d offsets", len(got))
	}
	if !strings.HasPrefix(meta, metadataPrefix) {
		t.Fatalf("metadata %q lacks its prefix", meta[:20])
	}
}

// The A6 case on the books: fetched 5, 6, 7; ack 7 then 6 -> commit 5 with 6 and 7 in the
// metadata; a new assignment from that commit skips 6 and 7 and hands out 5 and 8.
func TestOutOfOrderAcksCommitTheContiguousPrefix(t *testing.T) {
	st := newPartAcks(5, nil)
	for _, o := range []int64{5, 6, 7} {
		if !st.fetch(o) {
			t.Fatalf("fresh offset %d must be handed out", o)
		}
	}
	st.ack(7)
	st.ack(6)
	point, meta := st.commitState()
	if point != 5 {
		t.Fatalf("commit point %d; want 5 (offset 5 is not acked)", point)
	}
	next := newPartAcks(point, decodeAcked(point, meta))
	for o, want := range map[int64]bool{5: true, 6: false, 7: false, 8: true} {
		if got := next.fetch(o); got != want {
			t.Errorf("after reopen, fetch(%d) hands out %v; want %v", o, got, want)
		}
	}
	st.ack(5)
	if point, meta = st.commitState(); point != 8 || meta != "" {
		t.Fatalf("after acking 5 the commit is %d %q; want 8 and no metadata", point, meta)
	}
	if st.ack(6) {
		t.Fatal("a second ack of 6 must change nothing")
	}
}

// F6 on the books: a consumer fetched 3..6 and acked 3 and 5; the commit was refused (its
// session expired). Reassigned from the group's last commit, 3, the adopted books skip 3 and
// 5, hand out 4 and 6 again, and commit 4 with 5 in the metadata.
func TestAdoptedBooksKeepTheRefusedAcks(t *testing.T) {
	old := newPartAcks(3, nil)
	for _, o := range []int64{3, 4, 5, 6} {
		old.fetch(o)
	}
	old.ack(3)
	old.ack(5)
	old.commitState() // the refused commit
	st := newPartAcks(3, nil)
	st.adopt(old)
	point, meta := st.commitState()
	if point != 4 || !slices.Equal(decodeAcked(point, meta), []int64{5}) {
		t.Fatalf("adopted books commit %d %q; want 4 with 5 acked above it", point, meta)
	}
	for o, want := range map[int64]bool{3: false, 4: true, 5: false, 6: true, 7: true} {
		if got := st.fetch(o); got != want {
			t.Errorf("adopted books: fetch(%d) hands out %v; want %v", o, got, want)
		}
	}
}

func TestHeldOffsetsAreHandedOutOnce(t *testing.T) {
	st := newPartAcks(0, nil)
	for o := int64(0); o < 3; o++ {
		st.fetch(o)
		if !st.handOut(o) {
			t.Fatalf("first hand-out of %d refused", o)
		}
	}
	st.release(0) // nacked
	st.ack(2)
	for o, want := range map[int64]bool{0: true, 1: false, 2: false} { // fetched again by the seek
		st.fetch(o)
		if got := st.handOut(o); got != want {
			t.Errorf("after the nack of 0: hand-out of %d = %v; want %v (0 nacked, 1 held, 2 acked)", o, got, want)
		}
	}
}
