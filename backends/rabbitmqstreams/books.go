package rabbitmqstreams

import (
	"fmt"
	"slices"
	"strconv"
)

// The acknowledgement books of one active term of a subscription (see the package doc).
//
// A stream keeps every message; what a subscription has done is its stored position. Acks come
// in completion order, so, as in the Kafka backend (backends/kafka/acks.go), the stored floor is
// the contiguous acknowledged prefix: the lowest offset read and not acknowledged. The offsets
// acknowledged above the floor are stored too, as bitmaps of absolute 63-offset windows under
// references of their own (windowRef), so a member that takes the subscription over skips them.
// A window's bits are true forever (an acknowledged offset stays acknowledged), which is why
// they are absolute and not relative to the floor: a crash between two stores never makes a
// window say an unacknowledged offset was acknowledged.

const (
	// windowBits is how many offsets one window reference covers (63: the sign bit of the
	// protocol's int64 offset stays clear).
	windowBits = 63
	// maxWindows bounds the windows stored above the floor's own (about 2,000 offsets); an
	// offset acknowledged above them is delivered again after a takeover (at-least-once), an
	// unacknowledged one is never skipped.
	maxWindows = 32
	// floorBits: the main reference stores the floor in its low floorBits bits and the number of
	// windows in use above them.
	floorBits = 40
	floorMask = int64(1)<<floorBits - 1
)

// books is guarded by its consumer's mu.
type books struct {
	floor   int64              // every offset below it is acknowledged
	read    int64              // one past the highest offset read in this term
	unacked map[int64]struct{} // read (buffered or handed out), not acknowledged
	acked   map[int64]struct{} // acknowledged at or above floor (out of order)
	held    map[int64]struct{} // handed out, neither acknowledged nor nacked since
	started bool               // something was read in this term
}

func newBooks(floor int64, acked []int64) *books {
	b := &books{floor: floor, read: floor, unacked: map[int64]struct{}{}, acked: map[int64]struct{}{}, held: map[int64]struct{}{}}
	for _, o := range acked {
		if o >= floor {
			b.acked[o] = struct{}{}
		}
	}
	return b
}

// settled: below the floor, or acknowledged out of order.
func (b *books) settled(off int64) bool {
	_, done := b.acked[off]
	return done || off < b.floor
}

// arrive records a read offset and reports whether it is to be handed out.
func (b *books) arrive(off int64) bool {
	b.started = true
	if off+1 > b.read {
		b.read = off + 1
	}
	if b.settled(off) {
		return false
	}
	if _, dup := b.held[off]; dup {
		return false
	}
	b.unacked[off] = struct{}{}
	return true
}

// handOut records that off goes to the application.
func (b *books) handOut(off int64) { b.held[off] = struct{}{} }

// isHeld reports whether off is handed out and not settled.
func (b *books) isHeld(off int64) bool { _, ok := b.held[off]; return ok }

// release records a Nack of off: no longer held; it stays unacknowledged.
func (b *books) release(off int64) { delete(b.held, off) }

// ack records an acknowledgement; false when off was acknowledged before.
func (b *books) ack(off int64) bool {
	delete(b.held, off)
	delete(b.unacked, off)
	if b.settled(off) {
		return false
	}
	b.acked[off] = struct{}{}
	return true
}

// settleSilently acknowledges an offset the application never sees (a position marker).
func (b *books) settleSilently(off int64) {
	b.started = true
	if off+1 > b.read {
		b.read = off + 1
	}
	b.ack(off)
}

// commitState moves the floor up to the lowest read, unacknowledged offset and returns the
// position to store: the floor and the acknowledged offsets above it, sorted.
func (b *books) commitState() (int64, []int64) {
	point := b.read
	for o := range b.unacked {
		if o < point {
			point = o
		}
	}
	if point < b.floor {
		point = b.floor
	}
	b.floor = point
	above := make([]int64, 0, len(b.acked))
	for o := range b.acked {
		if o < point {
			delete(b.acked, o)
			continue
		}
		above = append(above, o)
	}
	slices.Sort(above)
	return point, above
}

// position is what the broker stores for a subscription: the main reference's value and the
// windows (absolute index -> bitmap).
type position struct {
	main    int64
	windows map[int64]int64
}

// encodePosition packs floor and the acknowledged offsets above it. Offsets beyond maxWindows
// windows above the floor's window are left out (delivered again after a takeover).
func encodePosition(floor int64, above []int64) (position, error) {
	if floor < 0 || floor > floorMask {
		return position{}, fmt.Errorf("offset %d does not fit the stored position's %d bits", floor, floorBits)
	}
	first := floor / windowBits
	p := position{windows: map[int64]int64{}}
	last := first - 1
	for _, o := range above {
		w := o / windowBits
		if w-first >= maxWindows {
			break
		}
		p.windows[w] |= 1 << (o % windowBits)
		last = max(last, w)
	}
	n := last - first + 1
	p.main = floor | n<<floorBits
	return p, nil
}

// decodeMain splits the main reference's value into the floor and the window range to read.
func decodeMain(v int64) (floor, firstWindow, n int64) {
	floor = v & floorMask
	return floor, floor / windowBits, v >> floorBits
}

// windowOffsets lists the acknowledged offsets of window w's bitmap.
func windowOffsets(w, bits int64) []int64 {
	var out []int64
	for i := int64(0); i < windowBits; i++ {
		if bits&(1<<i) != 0 {
			out = append(out, w*windowBits+i)
		}
	}
	return out
}

// windowRef is the offset-tracking reference of window w of a subscription's position.
func windowRef(sub string, w int64) string { return sub + "~w" + strconv.FormatInt(w, 36) }
