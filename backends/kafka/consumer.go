package kafka

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	ck "github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/pubsub-conformance/harness/backends"
)

const (
	// pollSlice is how long one Poll may block: it bounds how late a Nack's seek or Close is
	// served by the poll loop.
	pollSlice = 50 // ms
	// rebalanceCallTimeout bounds the broker calls made while fixing a start position.
	rebalanceCallTimeout = 10 * time.Second
	// fixBudget bounds the retries of a start position that hit transient broker errors (a
	// coordinator still loading after a broker restart); fixRetry spaces them.
	fixBudget = 15 * time.Second
	fixRetry  = 200 * time.Millisecond
	// The buffer between the poll loop and Receive is bounded: above these the assigned
	// partitions are paused (librdkafka then resumes from the last message handed to us).
	maxBuffered      = 10000
	maxBufferedBytes = 64 << 20
)

// consumer is one group member. A dedicated goroutine (run) owns the librdkafka consumer's
// Poll: it must poll continuously, because with Kafka's group protocol a member that does not
// serve its rebalance events stalls every other member's join until max.poll.interval.ms. Polled
// messages go to a buffer that Receive takes from; rebalances and Nack seeks run on the same
// goroutine, so a message fetched before a seek can never slip past it.
type consumer struct {
	b     *Backend
	topic string // contract topic string
	name  string // Kafka topic name
	group string
	pos   backends.Position
	kc    *ck.Consumer
	token string // prefix of this consumer's Delivery IDs: tells its deliveries from others'

	reqs          chan seekReq
	stop          chan struct{} // closed by Close: ends run and committer
	loopDone      chan struct{} // closed when run returned
	committerDone chan struct{} // closed when committer returned (at once with KAFKA_ACK_SYNC)
	acked         chan struct{} // signalled by Ack: the committer has books to commit
	closed        chan struct{} // closed when Close started
	ready         chan struct{} // closed after the first assignment with a fixed start position
	failed        chan struct{} // closed on a fatal or auth error; failErr says which

	// handleMu keeps kc alive for calls made outside the poll loop (the commits of Ack and of
	// the committer): Close destroys kc only under the write lock.
	handleMu sync.RWMutex
	// commitMu orders commits: each commits the bookkeeping as it is when its turn comes, so a
	// slower commit never overwrites a newer one with an older state. Lock order: handleMu
	// (read) before commitMu; the revoke callback, which runs where kc is alive anyway (in
	// Poll, or inside kc.Close under handleMu's write lock), takes commitMu alone.
	commitMu sync.Mutex

	readyOnce, failOnce, closeOnce sync.Once
	closeErr                       error
	closeDone                      chan struct{}

	mu       sync.Mutex
	buf      []*ck.Message
	bufBytes int
	avail    chan struct{} // signalled when buf grows
	paused   bool
	failErr  error
	lastErr  error               // the latest non-fatal client error, for timeouts' messages
	parts    map[int32]*partAcks // ack bookkeeping of the assigned partitions (acks.go)
	dirty    map[int32]struct{}  // partitions with acks the committer has not committed yet
	// carried keeps the books of a revoked partition whose last commit the group refused (this
	// member's session expired, during a network cut say): when the partition is assigned to
	// this consumer again, the new books adopt them and commit them (F6). Were they dropped,
	// the acks would be lost and their messages delivered again.
	carried map[int32]*partAcks
	// rewind is, per partition, the offset a Nack sought back to whose message has not been
	// fetched again yet: a later Nack of a higher offset must not seek past it (seek).
	rewind map[int32]int64
	// rebalanced is closed (and replaced) at every revoke and assignment: an Ack whose commit
	// found the membership stale waits on it for the revoke that follows.
	rebalanced chan struct{}
	// assignments counts the books made (partAcks.assignment), under mu.
	assignments uint64
	// committedAt is when a commit of this member last succeeded (UnixNano; 0 before the
	// first): the group knew the member then. An Ack returns before its commit only while
	// that is less than backends.AckCrashBound ago (see Ack).
	committedAt atomic.Int64
	// reassigning is set, under mu, between an eager revoke and the assignment that always
	// follows it (the classic protocol revokes every partition at every rebalance, also one
	// that comes straight back): an Ack or Nack meeting no books then waits for that
	// assignment rather than refuse a delivery whose partition never moved (see awaitBooks).
	reassigning bool
}

type seekReq struct {
	partition  int32
	offset     int64
	assignment uint64 // of the nacked delivery's books
	done       chan error
}

// Consumer implements backends.Backend. It returns only after this member's group join and
// partition assignment completed and the start position of every assigned partition is fixed
// and committed for the group; a member that was assigned nothing (another member of a shared
// subscription holds the single partition) is live once its join completed.
func (b *Backend) Consumer(ctx context.Context, topic, subscription string, opts ...backends.ConsumerOption) (backends.Consumer, error) {
	if err := b.checkOpen(); err != nil {
		return nil, err
	}
	t, err := backends.ParseTopic(topic)
	if err != nil {
		return nil, err
	}
	s := backends.ApplyConsumerOptions(t, opts...)
	group, err := groupName(subscription, s.Mode)
	if err != nil {
		return nil, err
	}
	ctx, cancel := withDefault(ctx)
	defer cancel()
	if err := b.EnsureTopic(ctx, topic); err != nil {
		return nil, fmt.Errorf("kafka consumer: %w", err)
	}
	m := consumerConfig(b.base, b.kc.Extra, group, b.kc.GroupProtocol)
	var tok [6]byte
	if _, err := rand.Read(tok[:]); err != nil {
		return nil, fmt.Errorf("kafka consumer: delivery id token: %w", err)
	}
	kc, err := ck.NewConsumer(&m)
	if err != nil {
		return nil, configErr(err, b.kc.Extra)
	}
	c := &consumer{
		b: b, topic: topic, name: TopicName(t), group: group, pos: s.Position, kc: kc,
		token:         hex.EncodeToString(tok[:]),
		parts:         map[int32]*partAcks{},
		dirty:         map[int32]struct{}{},
		carried:       map[int32]*partAcks{},
		rewind:        map[int32]int64{},
		rebalanced:    make(chan struct{}),
		reqs:          make(chan seekReq),
		stop:          make(chan struct{}),
		loopDone:      make(chan struct{}),
		committerDone: make(chan struct{}),
		acked:         make(chan struct{}, 1),
		closed:        make(chan struct{}),
		ready:         make(chan struct{}),
		failed:        make(chan struct{}),
		closeDone:     make(chan struct{}),
		avail:         make(chan struct{}, 1),
	}
	if err := kc.Subscribe(c.name, c.rebalance); err != nil {
		_ = kc.Close()
		return nil, mapErr(ctx, "kafka subscribe to "+c.name, err)
	}
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		_ = kc.Close()
		return nil, fmt.Errorf("kafka backend: %w", backends.ErrClosed)
	}
	b.consumers[c] = struct{}{}
	b.mu.Unlock()
	if s.Mode != backends.Unique {
		b.rememberGroup(c.name, group)
	}
	go c.run()
	if b.kc.AckSync {
		close(c.committerDone)
	} else {
		go c.committer(b.kc.CommitInterval)
	}
	if b.kc.ConsumerNoWait {
		// Documented opt-out (KAFKA_CONSUMER_NO_WAIT): live only once the group assigns.
		return c, nil
	}
	if b.kc.GroupProtocol == GroupProtocolConsumer && s.Mode != backends.Unique {
		go c.readyOnStoredPosition(ctx)
	}

	select {
	case <-c.ready:
		return c, nil
	case <-c.failed:
		err = c.failure()
	case <-ctx.Done():
		err = errors.Join(backends.CtxErr(ctx, fmt.Sprintf("kafka consumer %s on %s: waiting for the group join and assignment", group, c.name)), c.lastError())
	}
	// Leaving the group may take a while with a sick broker; Consumer must not block past ctx.
	go func() { _ = c.Close(context.Background()) }()
	return nil, err
}

// storedPositionPoll paces readyOnStoredPosition's reads of the group's committed offsets.
const storedPositionPoll = 200 * time.Millisecond

// readyOnStoredPosition makes a member of a shared subscription on the consumer group protocol
// (KIP-848) ready once the group has a committed position for every partition of the topic.
// There a member whose assignment is empty - every member but one, since a topic has one
// partition - gets no rebalance callback at all (the cooperative protocol signals changes only,
// and librdkafka's statistics show no join either), so the assignment cannot say it joined.
// A stored position says what the contract needs: the subscription is live, and whatever is
// sent from now on reaches it, through the member that owns the partition or through this one
// once it does (it starts at the committed offset). The first member fixes that position when
// it is assigned (startOffsets). Ends when the consumer is ready, failed, closed, or ctx ends.
func (c *consumer) readyOnStoredPosition(ctx context.Context) {
	tick := time.NewTicker(storedPositionPoll)
	defer tick.Stop()
	ms := int(rebalanceCallTimeout / time.Millisecond)
	for {
		select {
		case <-c.ready:
			return
		case <-c.failed:
			return
		case <-c.stop:
			return
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		md, err := c.kc.GetMetadata(&c.name, false, ms)
		if err != nil {
			continue
		}
		tm, ok := md.Topics[c.name]
		if !ok || len(tm.Partitions) == 0 {
			continue
		}
		parts := make([]ck.TopicPartition, len(tm.Partitions))
		for i, p := range tm.Partitions {
			parts[i] = ck.TopicPartition{Topic: &c.name, Partition: p.ID}
		}
		committed, err := c.kc.Committed(parts, ms)
		if err != nil {
			continue
		}
		stored := len(committed) == len(parts)
		for _, p := range committed {
			if p.Error != nil || p.Offset < 0 {
				stored = false
			}
		}
		if stored {
			c.readyOnce.Do(func() { close(c.ready) })
			return
		}
	}
}

// groupName is the consumer group: the subscription name for shared subscriptions, a fresh
// unique name per consumer for unique ones (fan-out).
func groupName(subscription string, mode backends.Mode) (string, error) {
	if mode == backends.Unique {
		var r [8]byte
		if _, err := rand.Read(r[:]); err != nil {
			return "", fmt.Errorf("kafka: unique group name: %w", err)
		}
		if subscription == "" {
			subscription = "unique"
		}
		return subscription + "." + hex.EncodeToString(r[:]), nil
	}
	if strings.TrimSpace(subscription) == "" {
		return "", fmt.Errorf("%w: empty subscription name for a shared subscription", backends.ErrInvalidConfig)
	}
	return subscription, nil
}

// run is the poll loop; see consumer.
func (c *consumer) run() {
	defer close(c.loopDone)
	for {
		select {
		case <-c.stop:
			return
		case r := <-c.reqs:
			r.done <- c.seek(r)
			continue
		default:
		}
		c.flowControl()
		switch e := c.kc.Poll(pollSlice).(type) {
		case *ck.Message:
			if e.TopicPartition.Error != nil {
				c.onError(e.TopicPartition.Error)
				continue
			}
			if c.track(e) {
				c.push(e)
			}
		case ck.Error:
			c.onError(e)
		}
	}
}

// track records a fetched message in its partition's ack bookkeeping and reports whether to
// hand it out: a message acknowledged already (out of order, by this member or, through the
// commit metadata, an earlier one) is skipped.
func (c *consumer) track(m *ck.Message) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	p, off := m.TopicPartition.Partition, int64(m.TopicPartition.Offset)
	if rw, ok := c.rewind[p]; ok && off >= rw {
		delete(c.rewind, p) // fetching again from the rewind point (a seek drops older fetches)
	}
	st := c.parts[p]
	if st == nil {
		// Assigned without a fixed start (a failed position fix): start the books here.
		st = c.newBooks(off, nil)
		c.parts[p] = st
	}
	return st.fetch(off)
}

func (c *consumer) push(m *ck.Message) {
	c.mu.Lock()
	c.buf = append(c.buf, m)
	c.bufBytes += len(m.Value)
	c.mu.Unlock()
	select {
	case c.avail <- struct{}{}:
	default:
	}
}

// onError fails the consumer on errors that will not heal (auth, fatal) and remembers others.
func (c *consumer) onError(err error) {
	var ke ck.Error
	if errors.As(err, &ke) && (ke.IsFatal() || sentinelFor(ke.Code()) == backends.ErrAuth) {
		c.fail(mapErr(nil, fmt.Sprintf("kafka consumer %s on %s", c.group, c.name), err))
		return
	}
	c.mu.Lock()
	c.lastErr = err
	c.mu.Unlock()
}

func (c *consumer) fail(err error) {
	c.failOnce.Do(func() {
		c.mu.Lock()
		c.failErr = err
		c.mu.Unlock()
		close(c.failed)
	})
}

func (c *consumer) failure() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.failErr
}

func (c *consumer) lastError() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.lastErr == nil {
		return nil
	}
	return fmt.Errorf("last client error: %w", mapErr(nil, "kafka", c.lastErr))
}

// flowControl pauses fetching while the buffer is over its bound and resumes below half of it.
func (c *consumer) flowControl() {
	c.mu.Lock()
	n, bytes, paused := len(c.buf), c.bufBytes, c.paused
	c.mu.Unlock()
	over := n >= maxBuffered || bytes >= maxBufferedBytes
	under := n <= maxBuffered/2 && bytes <= maxBufferedBytes/2
	if over == paused || (paused && !under) {
		return
	}
	parts, err := c.kc.Assignment()
	if err != nil || len(parts) == 0 {
		return
	}
	if over {
		err = c.kc.Pause(parts)
	} else {
		err = c.kc.Resume(parts)
	}
	if err == nil {
		c.mu.Lock()
		c.paused = over
		c.mu.Unlock()
	}
}

// rebalance is the group rebalance callback; librdkafka calls it from Poll (in run) and from
// Close.
func (c *consumer) rebalance(kc *ck.Consumer, ev ck.Event) error {
	switch e := ev.(type) {
	case ck.AssignedPartitions:
		parts, fresh, err := c.startOffsets(e.Partitions)
		if aerr := assign(kc, parts); aerr != nil {
			c.onError(aerr)
			return aerr
		}
		c.mu.Lock()
		c.paused = false
		adopted := false
		for _, p := range parts {
			if p.Offset >= 0 {
				var meta string
				if p.Metadata != nil {
					meta = *p.Metadata
				}
				st := c.newBooks(int64(p.Offset), decodeAcked(int64(p.Offset), meta))
				// Books whose commit was refused at the last revoke: their acks still stand,
				// unless the partition starts fresh (its topic deleted and created again).
				if old := c.carried[p.Partition]; old != nil && !fresh[p.Partition] {
					st.adopt(old)
					c.dirty[p.Partition] = struct{}{}
					adopted = true
				}
				delete(c.carried, p.Partition)
				c.parts[p.Partition] = st
			}
		}
		c.reassigning = false
		c.mu.Unlock()
		if adopted {
			// Commit the adopted acks now, in this generation, before anything is handed out;
			// what fails stays dirty for the committer (or the next revoke, or Close).
			c.commitMu.Lock()
			if cerr := c.commitDirty(kc); cerr != nil {
				c.onError(cerr)
				c.signalAcked()
			}
			c.commitMu.Unlock()
		}
		c.mu.Lock()
		c.signalRebalance()
		c.mu.Unlock()
		switch {
		case err == nil:
			c.readyOnce.Do(func() { close(c.ready) })
		case rebalancing(err):
			// The group is already rebalancing again: the next assignment fixes the position.
		default:
			// Not live and no way to become live: let Consumer return the cause now rather
			// than at its deadline. (After the first assignment this only reaches the log.)
			select {
			case <-c.ready:
			default:
				c.fail(fmt.Errorf("kafka consumer %s on %s: fix the start position: %w", c.group, c.name, err))
			}
		}
	case ck.RevokedPartitions:
		// Messages fetched but not yet handed out belong to the next owner now, which starts
		// from the committed offset; handing them out here would duplicate them.
		revoked := map[int32]bool{}
		c.mu.Lock()
		for _, p := range e.Partitions {
			revoked[p.Partition] = true
			delete(c.rewind, p.Partition) // the next owner starts from the committed offset
		}
		c.mu.Unlock()
		c.dropBuffered(func(m *ck.Message) bool { return revoked[m.TopicPartition.Partition] })
		// The acks recorded since the committer's last round go to the broker before the
		// partition does, so the next owner skips them (C-ACK-5). When the group refuses the
		// commit (this member's generation already gone: its session expired) the books are
		// carried to the partition's next assignment to this consumer; if the partition goes
		// to another member instead, that member delivers those messages again.
		c.commitMu.Lock()
		if err := c.commitDirty(kc); err != nil {
			c.onError(err)
		}
		c.commitMu.Unlock()
		c.mu.Lock()
		for _, p := range e.Partitions {
			if _, refused := c.dirty[p.Partition]; refused && c.parts[p.Partition] != nil {
				c.carried[p.Partition] = c.parts[p.Partition]
			}
			delete(c.dirty, p.Partition)
			delete(c.parts, p.Partition)
		}
		c.reassigning = kc.GetRebalanceProtocol() != "COOPERATIVE"
		c.signalRebalance()
		c.mu.Unlock()
		if err := unassign(kc, e.Partitions); err != nil {
			c.onError(err)
			return err
		}
	}
	return nil
}

// newBooks starts the books of a new assignment of a partition; c.mu is held.
func (c *consumer) newBooks(start int64, acked []int64) *partAcks {
	c.assignments++
	st := newPartAcks(start, acked)
	st.assignment = c.assignments
	return st
}

// assign and unassign change the member's assignment the way the group's rebalance protocol
// demands: the classic protocol's eager rebalances replace the whole assignment, the
// cooperative ones (the consumer group protocol, KIP-848) add and remove only the partitions
// of the event. A topic here has one partition, so both move the same set.
func assign(kc *ck.Consumer, parts []ck.TopicPartition) error {
	if kc.GetRebalanceProtocol() == "COOPERATIVE" {
		return kc.IncrementalAssign(parts)
	}
	return kc.Assign(parts)
}

func unassign(kc *ck.Consumer, parts []ck.TopicPartition) error {
	if kc.GetRebalanceProtocol() == "COOPERATIVE" {
		return kc.IncrementalUnassign(parts)
	}
	return kc.Unassign()
}

// signalRebalance wakes the Acks waiting for a rebalance; c.mu is held.
func (c *consumer) signalRebalance() {
	close(c.rebalanced)
	c.rebalanced = make(chan struct{})
}

// rebalancing reports whether err means the group moved on to a new generation, so a new
// assignment is on its way.
func rebalancing(err error) bool {
	switch codeOf(err) {
	case ck.ErrRebalanceInProgress, ck.ErrIllegalGeneration, ck.ErrUnknownMemberID:
		return true
	}
	return false
}

// startOffsets fixes where each assigned partition starts: at the group's committed offset,
// or, for a partition the group never committed, at the high (latest) or low (earliest)
// watermark - committed at once, so the group's position exists from now on (R2) and no later
// auto.offset.reset can skip a message sent after Consumer returned. Transient broker errors
// are retried for up to fixBudget. On error the returned offsets are still safe to assign:
// the resolved start, or the committed offset / oldest retained message (never skipping).
// fresh holds the partitions that start at a watermark, not at a committed offset.
func (c *consumer) startOffsets(parts []ck.TopicPartition) (out []ck.TopicPartition, fresh map[int32]bool, err error) {
	deadline := time.Now().Add(fixBudget)
	for {
		out, fresh, err = c.resolveStart(parts)
		if err == nil || rebalancing(err) || time.Now().After(deadline) {
			return out, fresh, err
		}
		c.onError(err)
		select {
		case <-c.stop:
			return out, fresh, err
		case <-time.After(fixRetry):
		}
	}
}

func (c *consumer) resolveStart(parts []ck.TopicPartition) ([]ck.TopicPartition, map[int32]bool, error) {
	out := make([]ck.TopicPartition, len(parts))
	copy(out, parts)
	fresh := map[int32]bool{}
	if len(parts) == 0 {
		return out, fresh, nil
	}
	stored := func(err error) ([]ck.TopicPartition, map[int32]bool, error) {
		for i := range out {
			out[i].Offset = ck.OffsetStored
		}
		return out, fresh, err
	}
	ms := int(rebalanceCallTimeout / time.Millisecond)
	committed, err := c.kc.Committed(parts, ms)
	if err != nil {
		return stored(fmt.Errorf("read committed offsets: %w", err))
	}
	var toCommit []ck.TopicPartition
	for i, p := range committed {
		if p.Error != nil && codeOf(p.Error) != ck.ErrNoError {
			return stored(fmt.Errorf("read committed offset of partition %d: %w", p.Partition, p.Error))
		}
		low, high, err := c.kc.QueryWatermarkOffsets(*p.Topic, p.Partition, ms)
		if err != nil {
			return stored(fmt.Errorf("read watermarks of partition %d: %w", p.Partition, err))
		}
		// A committed offset beyond the end of the log belongs to an earlier topic of the same
		// name (deleted and created again): the subscription starts fresh.
		if p.Offset >= 0 && int64(p.Offset) <= high {
			out[i].Offset = p.Offset
			out[i].Metadata = p.Metadata // the acks above the offset (acks.go)
			continue
		}
		start := high
		if c.pos == backends.Earliest {
			start = low
		}
		out[i].Offset = ck.Offset(start)
		fresh[p.Partition] = true
		toCommit = append(toCommit, out[i])
	}
	if len(toCommit) > 0 {
		if err := c.commit(c.kc, toCommit); err != nil {
			return out, fresh, fmt.Errorf("commit the start position: %w", err)
		}
	}
	return out, fresh, nil
}

func (c *consumer) dropBuffered(drop func(*ck.Message) bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	kept := c.buf[:0]
	bytes := 0
	for _, m := range c.buf {
		if !drop(m) {
			kept = append(kept, m)
			bytes += len(m.Value)
		}
	}
	for i := len(kept); i < len(c.buf); i++ {
		c.buf[i] = nil
	}
	c.buf, c.bufBytes = kept, bytes
}

// seek serves a Nack on the poll goroutine (where the assignment changes too, so c.parts is
// the assignment here): a partition revoked since the delivery is the moved error (C-ACK-8).
// Otherwise buffered messages of the partition are dropped
// (they come again after the seek) and the fetch position moves back to the nacked offset -
// or stays at an earlier Nack's offset whose message has not come again yet: seeking to a
// later nacked offset then would skip the earlier one until the consumer is reopened (found
// by W1: two nacks of held deliveries, the second of the later message).
//
// A buffered message below the nacked offset (fetched again after an earlier Nack and not
// handed out yet: the earlier rewind point is cleared when it is fetched) moves the target
// back to it too: dropping it and seeking past it skipped it (W1 seed 1796172496, two nacks
// of held deliveries, the earlier first; TestIntegrationNackAfterRefetchKeepsEarlierNack).
//
// A delivery of an earlier assignment of the partition (it moved to another member and came
// back since) is refused as moved too when the partition's books settled it meanwhile: the
// member it moved to acked it, this assignment starts past it, and seeking back to it fetched a
// message the books skip, so the Nack returned nil and nothing came again (W1 seed 1796307262;
// G6). Nor does a Nack ever seek forward past what this assignment fetched: an earlier
// assignment's delivery may lie beyond the new fetch position, and seeking there skipped the
// messages in between.
//
// A Nack of a delivery whose offset the books settled is refused whatever the assignment
// (C-ACK-9): the message was acknowledged, through this delivery or another one of it - a
// partition that came straight back in an eager rebalance has its message handed out again,
// and the application acked one copy and nacked the other (W1 seeds 1796183137 and
// 1796307262; TestIntegrationNackOfAckedDuplicate). Seeking back fetched an offset the books
// skip, so such a Nack returned nil and nothing came again.
func (c *consumer) seek(r seekReq) error {
	c.mu.Lock()
	st := c.parts[r.partition]
	moved, acked := st == nil, st != nil && st.settled(r.offset)
	target := r.offset
	if !moved && !acked {
		st.release(r.offset)
		target = min(target, st.fetched)
	}
	c.mu.Unlock()
	switch {
	case moved:
		return c.moved("nack", r.partition, r.offset)
	case acked && st.assignment != r.assignment:
		// An earlier assignment's delivery: the member it moved to may have acked it.
		return c.moved("nack", r.partition, r.offset)
	case acked:
		return fmt.Errorf("kafka nack: %w: offset %d of partition %d is acknowledged in group %s (this delivery or another delivery of the message was acked); it is not delivered again",
			backends.ErrUnknownDelivery, r.offset, r.partition, c.group)
	}
	c.dropBuffered(func(m *ck.Message) bool {
		if m.TopicPartition.Partition != r.partition {
			return false
		}
		if off := int64(m.TopicPartition.Offset); off < target {
			target = off
		}
		return true
	})
	c.mu.Lock()
	if rw, ok := c.rewind[r.partition]; ok && rw < target {
		target = rw
	}
	c.rewind[r.partition] = target
	c.mu.Unlock()
	err := c.kc.Seek(ck.TopicPartition{Topic: &c.name, Partition: r.partition, Offset: ck.Offset(target)}, 0)
	return mapErr(nil, "kafka nack: seek", err)
}

// moved is the error of an Ack or Nack whose partition was revoked from this consumer after
// the delivery (C-ACK-8): the member that holds it now starts from the committed offset,
// which this ack never reached, and delivers the message again. Kafka's Java client reports
// the same case as a CommitFailedException.
func (c *consumer) moved(what string, partition int32, offset int64) error {
	return fmt.Errorf("kafka %s: %w: offset %d of partition %d was revoked from this consumer of group %s after its delivery (a rebalance); the partition's owner delivers it again, or acked it already",
		what, backends.ErrUnknownDelivery, offset, partition, c.group)
}

// Receive implements backends.Consumer.
func (c *consumer) Receive(ctx context.Context) (backends.Delivery, error) {
	for {
		select {
		case <-c.closed:
			return backends.Delivery{}, fmt.Errorf("kafka consumer %s: %w", c.group, backends.ErrClosed)
		default:
		}
		c.mu.Lock()
		for len(c.buf) > 0 {
			m := c.buf[0]
			c.buf[0] = nil
			c.buf = c.buf[1:]
			c.bufBytes -= len(m.Value)
			// A message fetched again after a Nack and still held through its earlier delivery,
			// or acked through it while it waited here (A5), is not handed out again.
			st := c.parts[m.TopicPartition.Partition]
			if st != nil && !st.handOut(int64(m.TopicPartition.Offset)) {
				continue
			}
			var assignment uint64
			if st != nil {
				assignment = st.assignment
			}
			c.mu.Unlock()
			return c.delivery(m, assignment), nil
		}
		c.mu.Unlock()
		select {
		case <-c.avail:
		case <-c.failed:
			return backends.Delivery{}, c.failure()
		case <-c.closed:
		case <-ctx.Done():
			return backends.Delivery{}, errors.Join(backends.CtxErr(ctx, "kafka receive from "+c.name), c.lastError())
		}
	}
}

func (c *consumer) delivery(m *ck.Message, assignment uint64) backends.Delivery {
	return backends.Delivery{
		ID:         encodeID(c.token, assignment, m.TopicPartition.Partition, int64(m.TopicPartition.Offset)),
		Topic:      c.topic,
		Payload:    m.Value,
		Properties: fromHeaders(m.Headers),
	}
}

// encodeID is a Delivery.ID: "<token>:<assignment>:<partition>:<offset>", token being the
// consumer's and assignment the number of the books it was handed out from.
func encodeID(token string, assignment uint64, partition int32, offset int64) string {
	return token + ":" + strconv.FormatUint(assignment, 10) + ":" + strconv.FormatInt(int64(partition), 10) + ":" + strconv.FormatInt(offset, 10)
}

// deliveryID is a decoded Delivery.ID.
type deliveryID struct {
	token      string
	assignment uint64
	partition  int32
	offset     int64
}

func decodeID(id string) (deliveryID, error) {
	f := strings.Split(id, ":")
	if len(f) == 4 && f[0] != "" {
		a, err1 := strconv.ParseUint(f[1], 10, 64)
		p, err2 := strconv.ParseInt(f[2], 10, 32)
		off, err3 := strconv.ParseInt(f[3], 10, 64)
		if err1 == nil && err2 == nil && err3 == nil && p >= 0 && off >= 0 {
			return deliveryID{token: f[0], assignment: a, partition: int32(p), offset: off}, nil
		}
	}
	return deliveryID{}, fmt.Errorf("%w: %q is not a kafka delivery id (want \"token:assignment:partition:offset\")", backends.ErrUnknownDelivery, id)
}

// own decodes d's ID and checks this consumer handed it out.
func (c *consumer) own(what string, d backends.Delivery) (deliveryID, error) {
	id, err := decodeID(d.ID)
	if err != nil {
		return id, fmt.Errorf("kafka %s: %w", what, err)
	}
	if id.token != c.token {
		return id, fmt.Errorf("kafka %s: %w: %q was handed out by another consumer, not by %s on %s", what, backends.ErrUnknownDelivery, d.ID, c.group, c.name)
	}
	return id, nil
}

// Ack implements backends.Consumer: d is recorded as acknowledged in its partition's books,
// which are committed for the group as the contiguous acknowledged prefix (the committed
// offset) with the acknowledged offsets above it in the commit's metadata (acks.go). An ack
// never acknowledges an earlier unacknowledged message.
//
// By default Ack returns once the ack is in the books, while a commit of this member succeeded
// less than backends.AckCrashBound ago; the committer commits them at once or, when it
// committed less than CommitInterval ago, when that interval is over, and Close and each
// partition revoke commit what is left, synchronously (C-ACK-5, C-ACK-6). Otherwise (an idle
// member's first ack, a broker out of reach) and with KAFKA_ACK_SYNC the Ack commits before it
// returns, so an ack after a session the group took is refused rather than lost. An ack
// whose commit finds this member's group generation gone (a broker restart, an expired
// session) waits, within ctx, for the revoke that librdkafka's rejoin brings (R6). Either way,
// when the partition was revoked since d was received the ack fails with the moved error
// (ErrUnknownDelivery, C-ACK-8): the partition's next owner delivers d again.
func (c *consumer) Ack(ctx context.Context, d backends.Delivery) error {
	id, err := c.own("ack", d)
	if err != nil {
		return err
	}
	p, off := id.partition, id.offset
	select {
	case <-c.closed:
		return fmt.Errorf("kafka ack: consumer %s: %w", c.group, backends.ErrClosed)
	default:
	}
	ctx, cancel := withDefault(ctx)
	defer cancel()
	if err := c.awaitBooks(ctx, p); err != nil {
		return fmt.Errorf("kafka ack %s: %w", d.ID, err)
	}
	c.mu.Lock()
	st := c.parts[p]
	if st == nil {
		c.mu.Unlock()
		return c.moved("ack", p, off)
	}
	changed := st.ack(off)
	if changed {
		// Dirty in both modes: a revoke before this ack's own commit (KAFKA_ACK_SYNC) commits
		// it too, or carries it when the group refuses.
		c.dirty[p] = struct{}{}
	}
	c.mu.Unlock()
	if !changed {
		return nil // acked before
	}
	if !c.b.kc.AckSync && c.groupKnewUsWithin(backends.AckCrashBound) {
		c.signalAcked()
		return nil // the committer's to commit
	}
	// KAFKA_ACK_SYNC, or no commit of this member succeeded for AckCrashBound (an idle
	// consumer, a broker out of reach, a session the group may have expired): this ack
	// commits before it returns. A background commit could find the member fenced after Ack
	// returned nil, and the partition's next owner deliver the message again (C-ACK-8; W2
	// corpus w2-1796325014 and w2-1796326464 on kafka-kip848: acks right after a 9 s broker
	// pause or connection reset, longer than the 6 s session).
	what := fmt.Sprintf("kafka ack %s in group %s", d.ID, c.group)
	for {
		books, rebalanced, err := c.commitBooks(ctx, p)
		if err == nil && books == nil {
			// Revoked before this commit: the revoke committed the books, or carried them
			// when the group refused; then wait for the next assignment, as below.
			c.mu.Lock()
			books, rebalanced = st, c.rebalanced
			carried := c.carried[p] == st
			c.mu.Unlock()
			if !carried {
				return nil
			}
			err = errRefused
		}
		if err == nil || !rebalancing(err) {
			return mapErr(ctx, what, err)
		}
		// The group no longer knows this member's generation (the coordinator restarted, the
		// session expired): librdkafka rejoins, and the rejoin revokes the partition first,
		// whose commit the group refuses too, so the books are carried (see rebalance). Wait
		// (bounded by ctx) for the rebalances rather than report an error the application
		// cannot act on: books that survived are committed again; books adopted on this
		// consumer's next assignment of the partition were committed there. If the partition
		// went to another member instead, that member delivers d again - an ack dropped by a
		// revoke, as documented above.
		c.mu.Lock()
		if c.parts[p] == books {
			c.dirty[p] = struct{}{} // the revoke tries once more, and carries them if refused
		}
		c.mu.Unlock()
		for waiting := true; waiting; {
			select {
			case <-rebalanced:
			case <-ctx.Done():
				return mapErr(ctx, what, fmt.Errorf("%w (waited for the group to rebalance: %w)", err, backends.CtxErr(ctx, "rebalance")))
			}
			c.mu.Lock()
			cur, carried := c.parts[p], c.carried[p]
			rebalanced = c.rebalanced
			c.mu.Unlock()
			switch {
			case cur == books:
				waiting = false // commit them again
			case cur == nil && carried == books:
				// revoked, the books carried: wait for the next assignment
			default:
				return nil
			}
		}
	}
}

// errRefused stands for the revoke's refused commit when a KAFKA_ACK_SYNC Ack finds its books
// carried: the member's generation was gone.
var errRefused = ck.NewError(ck.ErrIllegalGeneration, "the revoke's commit of these acks was refused (generation gone); carried to the next assignment", false)

// commitBooks commits partition p's books as they are when its turn comes (commitMu), and
// returns the commit's error with the books it committed and the rebalance signal of that
// moment. A revoked partition (no books) commits nothing.
func (c *consumer) commitBooks(ctx context.Context, p int32) (books *partAcks, rebalanced chan struct{}, err error) {
	type result struct {
		err        error
		books      *partAcks
		rebalanced chan struct{}
	}
	res := make(chan result, 1)
	go func() {
		c.handleMu.RLock()
		defer c.handleMu.RUnlock()
		c.commitMu.Lock()
		defer c.commitMu.Unlock()
		select {
		case <-c.closed:
			res <- result{err: fmt.Errorf("consumer closed: %w", backends.ErrClosed)}
			return
		default:
		}
		c.mu.Lock()
		st := c.parts[p]
		rebalanced := c.rebalanced
		if st == nil {
			c.mu.Unlock()
			res <- result{} // revoked meanwhile: the next owner delivers it again
			return
		}
		point, meta := st.commitState()
		c.mu.Unlock()
		err := c.commit(c.kc, []ck.TopicPartition{{Topic: &c.name, Partition: p, Offset: ck.Offset(point), Metadata: &meta}})
		res <- result{err, st, rebalanced}
	}()
	select {
	case r := <-res:
		return r.books, r.rebalanced, r.err
	case <-ctx.Done():
		return nil, nil, backends.CtxErr(ctx, "commit")
	}
}

// committer commits the recorded acks until Close (see Ack): at once when the last commit was
// at least interval ago, else when interval has passed since it, so an ack is committed within
// interval plus one commit, and a consumer commits at most once per interval however fast it
// acks. A failed commit is tried again a round later.
func (c *consumer) committer(interval time.Duration) {
	defer close(c.committerDone)
	if interval <= 0 {
		interval = DefaultCommitInterval
	}
	var last time.Time
	for {
		select {
		case <-c.stop:
			return
		case <-c.acked:
		}
		if wait := time.Until(last.Add(interval)); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-c.stop:
				t.Stop()
				return
			case <-t.C:
			}
		}
		last = time.Now()
		if err := c.flush(); err != nil {
			c.onError(err)
			c.signalAcked() // the books stayed dirty: try again
		}
	}
}

// signalAcked wakes the committer.
func (c *consumer) signalAcked() {
	select {
	case c.acked <- struct{}{}:
	default:
	}
}

// flush commits the recorded acks now, from outside the poll loop (the committer, Close).
func (c *consumer) flush() error {
	c.handleMu.RLock()
	defer c.handleMu.RUnlock()
	c.commitMu.Lock()
	defer c.commitMu.Unlock()
	return c.commitDirty(c.kc)
}

// commitDirty commits the books of every partition with acks not yet committed, in one
// synchronous commit. commitMu is held and kc alive. A partition whose commit failed stays
// dirty for the next round unless a revoke dropped its books meanwhile.
func (c *consumer) commitDirty(kc *ck.Consumer) error {
	c.mu.Lock()
	var offsets []ck.TopicPartition
	for p := range c.dirty {
		if st := c.parts[p]; st != nil {
			point, meta := st.commitState()
			offsets = append(offsets, ck.TopicPartition{Topic: &c.name, Partition: p, Offset: ck.Offset(point), Metadata: &meta})
		}
	}
	clear(c.dirty)
	c.mu.Unlock()
	if len(offsets) == 0 {
		return nil
	}
	err := c.commit(kc, offsets)
	if err != nil {
		c.mu.Lock()
		for _, o := range offsets {
			if c.parts[o.Partition] != nil {
				c.dirty[o.Partition] = struct{}{}
			}
		}
		c.mu.Unlock()
		return mapErr(nil, "kafka commit of the acks in group "+c.group, err)
	}
	return nil
}

// Nack implements backends.Consumer: the partition's fetch position goes back to d, so d (and
// whatever followed it, unacknowledged) is delivered again; d stays unacknowledged in the
// partition's books, so no commit moves past it, and messages acked after it are skipped
// when they are fetched again.
func (c *consumer) Nack(ctx context.Context, d backends.Delivery) error {
	id, err := c.own("nack", d)
	if err != nil {
		return err
	}
	ctx, cancel := withDefault(ctx)
	defer cancel()
	if err := c.awaitBooks(ctx, id.partition); err != nil {
		return fmt.Errorf("kafka nack %s: %w", d.ID, err)
	}
	r := seekReq{partition: id.partition, offset: id.offset, assignment: id.assignment, done: make(chan error, 1)}
	select {
	case c.reqs <- r:
	case <-c.closed:
		return fmt.Errorf("kafka nack: consumer %s: %w", c.group, backends.ErrClosed)
	case <-ctx.Done():
		return backends.CtxErr(ctx, "kafka nack "+d.ID)
	}
	select {
	case err := <-r.done:
		return err
	case <-ctx.Done():
		return backends.CtxErr(ctx, "kafka nack "+d.ID)
	}
}

// awaitBooks waits, within ctx, while partition p has no books only because an eager rebalance
// revoked it and its assignment has not come yet. The partition may come straight back: a
// W1 program (corpus w1-1796183137) had an Ack refused as moved although no member joined or
// left after the delivery - a member's Close returned before the rebalance it started revoked
// this consumer's partition, which then came back to it. Afterwards the caller finds the
// books of the new assignment (the partition stayed) or none (it moved: the moved error).
func (c *consumer) awaitBooks(ctx context.Context, p int32) error {
	for {
		c.mu.Lock()
		waiting, rebalanced := c.parts[p] == nil && c.reassigning, c.rebalanced
		c.mu.Unlock()
		if !waiting {
			return nil
		}
		select {
		case <-rebalanced:
		case <-c.closed:
			return fmt.Errorf("consumer %s: %w", c.group, backends.ErrClosed)
		case <-ctx.Done():
			return backends.CtxErr(ctx, "waiting for the group's assignment after a revoke")
		}
	}
}

// Close implements backends.Consumer: stops the poll loop and the committer, commits the acks
// recorded since the committer's last round, and closes the librdkafka consumer, which leaves
// the group (the partition moves on at once) and keeps the group's committed offsets. It never
// unsubscribes-and-forgets. Idempotent; when ctx ends first the close finishes in the
// background.
func (c *consumer) Close(ctx context.Context) error {
	c.closeOnce.Do(func() {
		close(c.closed)
		close(c.stop)
		go func() {
			<-c.loopDone
			<-c.committerDone
			flushErr := c.flush()
			c.handleMu.Lock()
			c.closeErr = errors.Join(flushErr, c.kc.Close())
			c.handleMu.Unlock()
			c.b.forget(nil, c)
			close(c.closeDone)
		}()
	})
	select {
	case <-c.closeDone:
		if c.closeErr != nil {
			return fmt.Errorf("kafka consumer %s: close: %w", c.group, c.closeErr)
		}
		return nil
	case <-ctx.Done():
		return backends.CtxErr(ctx, "kafka consumer "+c.group+": close")
	}
}

// commit commits offsets synchronously; a partition's own error counts as the commit's error.
func (c *consumer) commit(kc *ck.Consumer, offsets []ck.TopicPartition) error {
	res, err := kc.CommitOffsets(offsets)
	if err != nil {
		return err
	}
	for _, p := range res {
		if p.Error != nil {
			return p.Error
		}
	}
	c.committedAt.Store(time.Now().UnixNano())
	return nil
}

// groupKnewUsWithin reports whether a commit of this member succeeded less than d ago.
func (c *consumer) groupKnewUsWithin(d time.Duration) bool {
	at := c.committedAt.Load()
	return at != 0 && time.Since(time.Unix(0, at)) < d
}
