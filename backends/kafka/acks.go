package kafka

import (
	"slices"
	"strconv"
	"strings"
)

// Out-of-order acknowledgement on a Kafka partition.
//
// A Kafka group commits one offset per partition, and committing offset N acknowledges every
// offset below N. Acks in completion order (m3 before m1) therefore cannot be a commit of
// "offset+1" each: that would acknowledge m1 too. The technique of Confluent's parallel
// consumer is used instead: per partition, the committed offset is the contiguous acked prefix
// (the lowest fetched offset not yet acked), and the offsets acked above it travel in the
// commit's metadata string. A consumer that is assigned the partition later reads the metadata
// with the committed offset and skips those offsets when it fetches them again.
//
// The metadata is bounded (Kafka's offset.metadata.max.bytes, 4096 by default): offsets that do
// not fit are left out, so at worst a reopened subscription delivers an acked message again
// (at-least-once); it never skips an unacked one.

// maxMetadata keeps the commit metadata below the broker's default offset.metadata.max.bytes.
const maxMetadata = 3500

// metadataPrefix marks metadata written by this backend (and its encoding version).
const metadataPrefix = "acked1:"

// partAcks is the acknowledgement bookkeeping of one assigned partition. Guarded by consumer.mu.
type partAcks struct {
	floor   int64              // commit point: every offset below it is acknowledged
	fetched int64              // one past the highest offset fetched in this assignment
	unacked map[int64]struct{} // fetched (buffered or handed out), not acked
	acked   map[int64]struct{} // acked at or above floor (out of order)
	// held: handed out to the application and neither acked nor nacked since. A Nack's seek
	// fetches them again; they are not handed out twice (W1 seed 1796183138: the nack of an
	// earlier message gave a held later one to the same consumer again).
	held map[int64]struct{}
	// assignment numbers this consumer's assignments of the partition: a delivery carries the
	// number of the books it was handed out from, so an Ack or Nack can tell a delivery of an
	// earlier assignment (the partition moved away and came back meanwhile) from its own.
	assignment uint64
}

func newPartAcks(start int64, acked []int64) *partAcks {
	st := &partAcks{floor: start, fetched: start, unacked: map[int64]struct{}{}, acked: map[int64]struct{}{}, held: map[int64]struct{}{}}
	for _, o := range acked {
		if o >= start {
			st.acked[o] = struct{}{}
		}
	}
	return st
}

// fetch records a fetched offset and reports whether it must be handed out (false: it was
// acknowledged already, out of order, by this or an earlier member of the group).
func (st *partAcks) fetch(off int64) bool {
	if off+1 > st.fetched {
		st.fetched = off + 1
	}
	if st.settled(off) {
		return false
	}
	st.unacked[off] = struct{}{}
	return true
}

// settled reports whether off was acknowledged: below the commit point, or acked out of order.
func (st *partAcks) settled(off int64) bool {
	_, done := st.acked[off]
	return done || off < st.floor
}

// handOut records that off goes to the application and reports whether it may: false when
// it is settled or held already (fetched again by a seek while the application holds it).
func (st *partAcks) handOut(off int64) bool {
	if _, dup := st.held[off]; dup || st.settled(off) {
		return false
	}
	st.held[off] = struct{}{}
	return true
}

// release records a Nack of off: it is no longer held, so its next fetch is handed out.
func (st *partAcks) release(off int64) { delete(st.held, off) }

// ack records an acknowledged offset; false when it was acknowledged before.
func (st *partAcks) ack(off int64) bool {
	delete(st.held, off)
	if off < st.floor {
		return false
	}
	delete(st.unacked, off)
	if _, done := st.acked[off]; done {
		return false
	}
	st.acked[off] = struct{}{}
	return true
}

// adopt takes over the acks in old, this partition's books from the consumer's previous
// assignment, whose last commit the group refused (the member's session had expired and the
// consumer rejoined): every offset below old's commit point and every offset old holds as
// acked was acknowledged by the application, so these books skip them and commit past them.
func (st *partAcks) adopt(old *partAcks) {
	old.commitState() // old's commit point: its contiguous acked prefix
	if old.floor > st.floor {
		st.floor = old.floor
	}
	if st.fetched < st.floor {
		st.fetched = st.floor
	}
	for o := range old.acked {
		st.acked[o] = struct{}{}
	}
	for o := range st.acked {
		if o < st.floor {
			delete(st.acked, o)
		}
	}
}

// commitState moves the commit point to the lowest fetched, unacknowledged offset (or past
// everything fetched), drops the acked offsets below it, and returns the offset to commit with
// the metadata listing the acked offsets above it.
func (st *partAcks) commitState() (int64, string) {
	point := st.fetched
	for o := range st.unacked {
		if o < point {
			point = o
		}
	}
	if point < st.floor {
		point = st.floor
	}
	st.floor = point
	above := make([]int64, 0, len(st.acked))
	for o := range st.acked {
		if o < point {
			delete(st.acked, o)
			continue
		}
		above = append(above, o)
	}
	slices.Sort(above)
	return point, encodeAcked(point, above)
}

// encodeAcked writes sorted offsets (all >= base) as runs "gap.length" in base 36, gap counted
// from the end of the previous run (from base for the first): "acked1:2.1,3.4". Runs that do
// not fit in maxMetadata are left out.
func encodeAcked(base int64, sorted []int64) string {
	if len(sorted) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(metadataPrefix)
	prevEnd := base
	for i := 0; i < len(sorted); {
		j := i + 1
		for j < len(sorted) && sorted[j] == sorted[j-1]+1 {
			j++
		}
		run := strconv.FormatInt(sorted[i]-prevEnd, 36) + "." + strconv.FormatInt(int64(j-i), 36)
		if b.Len()+len(run)+1 > maxMetadata {
			break
		}
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(run)
		prevEnd = sorted[j-1] + 1
		i = j
	}
	return b.String()
}

// decodeAcked reverses encodeAcked. Metadata it did not write (another client's, or none)
// yields no offsets: the committed offset alone then says where the group is.
func decodeAcked(base int64, meta string) []int64 {
	body, ok := strings.CutPrefix(meta, metadataPrefix)
	if !ok || body == "" {
		return nil
	}
	var out []int64
	prevEnd := base
	for _, run := range strings.Split(body, ",") {
		gs, ls, ok := strings.Cut(run, ".")
		if !ok {
			return nil
		}
		gap, err1 := strconv.ParseInt(gs, 36, 64)
		n, err2 := strconv.ParseInt(ls, 36, 64)
		if err1 != nil || err2 != nil || gap < 0 || n <= 0 || n > 1<<20 {
			return nil
		}
		start := prevEnd + gap
		for o := start; o < start+n; o++ {
			out = append(out, o)
		}
		prevEnd = start + n
	}
	return out
}
