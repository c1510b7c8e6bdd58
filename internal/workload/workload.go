// Package workload is the generative workload of issue 22: a seeded program of contract
// operations over several producers, topics, subscriptions and consumers, run on a Backend with
// every call recorded, then judged by the history checkers (internal/history), by its own
// check of nacks that never came back, and by comparison with the reference backend run on the
// same program (Compare). Programs are drawn by pgregory.net/rapid (Gen, Generate); a failing
// one is cut down by Shrink.
//
// A program is sequential: each step returns before the next starts, so every Send is either
// wholly before or wholly after every Consumer call, and what each subscription must end up
// with is determined by the contract (the reference's outcome is the expected one).
package workload

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"pgregory.net/rapid"

	"github.com/pubsub-conformance/harness/backends"
	"github.com/pubsub-conformance/harness/internal/history"
)

// Op is one step of a program.
type Op int

// The steps. Each picks its target by Arg (modulo what exists), so every program is valid and
// a program with steps removed is still a program (Shrink).
const (
	Send      Op = iota // producer Arg sends a new message (producers 0 and 1 on topic 0, 2 on topic 1)
	Receive             // consumer Arg receives one message and holds it: bound ReceiveWithin, or LongReceive when Pick is odd
	Ack                 // consumer Arg (of those holding a delivery) acks held delivery Pick
	Nack                // consumer Arg (of those holding a delivery) nacks held delivery Pick
	Close               // consumer Arg closes (what it held comes again to its subscription)
	Join                // a new consumer on subscription Arg: joins a shared one, reopens a closed one, a new unique subscriber
	Subscribe           // a new subscription with its first consumer: topic Arg%2, position Arg/2%2 (earliest, latest), mode Arg/4%2 (shared, unique)
	numOps
)

var opNames = [...]string{"send", "receive", "ack", "nack", "close", "join", "subscribe"}

func (o Op) String() string { return opNames[o] }

// Step is an operation and its arguments.
type Step struct {
	Op   Op
	Arg  int
	Pick int // Ack, Nack: which held delivery (modulo how many)
}

func (s Step) String() string {
	switch s.Op {
	case Ack, Nack:
		return fmt.Sprintf("%s(%d,%d)", s.Op, s.Arg, s.Pick)
	case Receive:
		if s.Pick%2 == 1 {
			return fmt.Sprintf("receive(%d,long)", s.Arg)
		}
	case Subscribe:
		pos, mode := "earliest", "shared"
		if s.Arg/2%2 == 1 {
			pos = "latest"
		}
		if s.Arg/4%2 == 1 {
			mode = "unique"
		}
		return fmt.Sprintf("subscribe(t%d,%s,%s)", s.Arg%2, pos, mode)
	}
	return fmt.Sprintf("%s(%d)", s.Op, s.Arg)
}

// Program is what a run does, in order.
type Program []Step

func (p Program) String() string {
	parts := make([]string, len(p))
	for i, s := range p {
		parts[i] = s.String()
	}
	return strings.Join(parts, " ")
}

// weighted: sends and receives more often than the rest, so messages flow.
var weighted = []Op{Send, Send, Send, Send, Receive, Receive, Receive, Receive, Receive, Ack, Ack, Nack, Nack, Close, Join, Subscribe}

// GenStep draws one step.
var GenStep = rapid.Custom(func(t *rapid.T) Step {
	return Step{
		Op:   rapid.SampledFrom(weighted).Draw(t, "op"),
		Arg:  rapid.IntRange(0, 7).Draw(t, "arg"),
		Pick: rapid.IntRange(0, 3).Draw(t, "pick"),
	}
})

// Gen draws programs of min to max steps.
func Gen(min, max int) *rapid.Generator[Program] {
	return rapid.Custom(func(t *rapid.T) Program {
		return Program(rapid.SliceOfN(GenStep, min, max).Draw(t, "steps"))
	})
}

// Generate is the program of a seed: the same seed gives the same program, everywhere.
func Generate(seed, min, max int) Program { return Gen(min, max).Example(seed) }

// Config bounds a run.
type Config struct {
	// Prefix makes the run's topic and subscription names unique (a run of its own).
	Prefix string
	// ReceiveWithin bounds a Receive step, LongReceive one with an odd Pick (a broker's first
	// fetch after a join may take longer than a short bound, so some receives wait more).
	ReceiveWithin, LongReceive time.Duration
	// Quiet: the drain of a subscription ends when a Receive waited this long for nothing
	// (and no nacked message is still awaited).
	Quiet time.Duration
	// NackWithin is how long the drain of an open consumer waits for a nacked message to come
	// again (the bounded delay of C-NACK-1; A1 waits 30 s).
	NackWithin time.Duration
	// MoveWithin: how long after a join or close of a subscription's members the rebalance it
	// starts may still move a delivery handed out meanwhile (C-ACK-8). A join reaches the
	// other members at their next heartbeat or poll, and they give up partitions only then:
	// an Ack of a delivery handed out after the join step but before that may be refused.
	MoveWithin time.Duration
	// Call bounds every other call (Consumer, Producer, Send, Ack, Nack, Close).
	Call time.Duration
	// Recover: under a nemesis schedule, the first quiet window of the drain of a consumer
	// that lived through the faults (it may still be reconnecting or rejoining its group).
	Recover time.Duration
	// SharedOnly never asks for unique mode (the backend under test lacks mode-override, and
	// the reference run of the same program must do what it does).
	SharedOnly bool
	// Nemesis and Schedule: the faults of the run (W2, nemesis.go); none when Schedule is
	// empty. Under a schedule the steps tolerate failed calls (Result.Tolerated) and the
	// checkers judge with the contract's allowances for faults (Result, Compare).
	Nemesis  *Nemesis
	Schedule Schedule
}

// ReferenceConfig is the configuration for the in-process reference: nothing waits long there.
func ReferenceConfig(prefix string) Config {
	return Config{Prefix: prefix, ReceiveWithin: 20 * time.Millisecond, LongReceive: 50 * time.Millisecond, Quiet: 100 * time.Millisecond,
		NackWithin: time.Second, MoveWithin: time.Second, Call: 10 * time.Second}
}

// BrokerConfig is the configuration for a real broker.
func BrokerConfig(prefix string) Config {
	return Config{Prefix: prefix, ReceiveWithin: 100 * time.Millisecond, LongReceive: 500 * time.Millisecond, Quiet: time.Second,
		NackWithin: 30 * time.Second, MoveWithin: 30 * time.Second, Call: 30 * time.Second, Recover: 15 * time.Second}
}

// NackNeverRedelivered is the workload's own finding of that class: a consumer nacked a
// delivery, stayed open, and was read for NackWithin without the message coming again to its
// subscription (the history checker needs 30 s of reading after the nack; the workload knows
// its consumer stayed open, so it can judge at the end of its drain).
const nackAnomaly = history.NackNotRedelivered

// Differs is a subscription whose messages differ from the reference backend's on the same
// program.
const Differs history.Anomaly = "outcome differs from the reference backend"

// Outcome is what each drained subscription received over the whole run: its label
// ("t0/s1", "t1/s4#2" for the second unique subscriber of that name) and the distinct message
// keys, sorted. Only subscriptions the run drained are in it (shared ones by a reopened
// consumer, unique ones still open at the end); their content is what the contract determines.
type Outcome map[string][]string

// Result is what a run gives.
type Result struct {
	Findings []history.Finding
	Outcome  Outcome
	Calls    int
	Sent     int
	Took     time.Duration
	// Under a nemesis schedule: what the nemesis did when (Timeline), the calls that failed
	// and were tolerated (Tolerated), the messages whose Send failed (Uncertain: they may or
	// may not have been written, C-SEND-3) and the subscriptions whose Consumer call failed
	// (UncertainSubs: the broker may or may not have created them, at an unknown position).
	Timeline      []string
	Tolerated     []string
	Uncertain     map[string]bool
	UncertainSubs map[string]bool
}

type subscription struct {
	label   string // t0/s1
	topic   int
	name    string
	pos     backends.Position
	mode    backends.Mode
	members int // consumers opened on it (unique: its subscribers)
	// changes counts the joins and closes of its members (shared mode): a message held across
	// one may move to another member (C-ACK-8). movedAt is when the last change was made that
	// left another member open to move messages to or from (not a lone first join).
	changes int
	movedAt time.Time
}

// changed counts a join or close of a member of s (shared mode); others says whether another
// member of s stays open beside it.
func (s *subscription) changed(now time.Time, others bool) {
	if s.mode != backends.Shared {
		return
	}
	s.changes++
	if others {
		s.movedAt = now
	}
}

// heldFrom is the count of changes a delivery handed out at now is held across from: the
// changes so far, less the last one while its rebalance may still be under way (less than
// within after it), since that one may still move the delivery (Config.MoveWithin).
func (s *subscription) heldFrom(now time.Time, within time.Duration) int {
	if s.changes > 0 && !s.movedAt.IsZero() && now.Sub(s.movedAt) < within {
		return s.changes - 1
	}
	return s.changes
}

type member struct {
	c      backends.Consumer
	sub    *subscription
	label  string // the subscription this consumer reads: sub.label, or label#k for unique
	held   []backends.Delivery
	nacked map[string]time.Time // keys nacked by this consumer, awaited again
	ids    map[string]int       // how often this consumer handed out each delivery ID
	heldAt map[string]int       // sub.heldFrom when each delivery ID was handed out
	acked  map[string]bool      // keys this consumer acked (an Ack that returned nil)
}

func newMember(c backends.Consumer, s *subscription, label string) *member {
	return &member{c: c, sub: s, label: label, nacked: map[string]time.Time{}, ids: map[string]int{}, heldAt: map[string]int{}, acked: map[string]bool{}}
}

// settleErr is err, or nil when err is ErrUnknownDelivery for a delivery this consumer handed
// out more than once (a duplicate the checkers report; the second settle of one ID may fail),
// of a message this consumer acked through another delivery of it (C-ACK-9), or held while its
// subscription's members changed (or handed out while a change's rebalance may still have been
// under way: Config.MoveWithin): the message may have moved to another member, and the
// contract lets the settle fail then (C-ACK-8). refused says the settle was such a failure: it
// is not in force, and the message comes again (or, C-ACK-9, is acknowledged already).
func (m *member) settleErr(d backends.Delivery, err error) (_ error, refused bool) {
	if !errors.Is(err, backends.ErrUnknownDelivery) {
		return err, false
	}
	if m.ids[d.ID] > 1 || m.acked[history.KeyOf(d.Payload)] || m.sub.changes > m.heldAt[d.ID] {
		return nil, true
	}
	return err, false
}

type run struct {
	ctx     context.Context
	b       backends.Backend
	cfg     Config
	topics  [2]string
	prods   []backends.Producer
	subs    []*subscription
	members []*member
	seen    map[string]map[string]bool // subscription label -> keys received
	drained map[string]bool
	sent    int
	unique  bool // CapModeOverride: unique mode may be asked for on a flow topic
	extra   []history.Finding

	rec           *history.Recorder
	nem           *nemesisRun // nil without a schedule
	tolerated     []string
	uncertain     map[string]bool
	uncertainSubs map[string]bool
}

// Run runs prog on b, which must record into rec (history.Wrap): two flow topics (created
// first), three
// producers, two shared earliest subscriptions of topic 0 with one consumer each; then the
// steps; then the drain: every open consumer acks what it holds and reads on (acking) until
// quiet and until every message it nacked came again or NackWithin passed; every consumer
// closes; every shared subscription is read by a new consumer until quiet. It returns the
// checkers' findings, the nacks never redelivered and the outcome. An error is a call that
// failed where the contract says it must not.
func Run(ctx context.Context, b backends.Backend, rec *history.Recorder, prog Program, cfg Config) (Result, error) {
	start := time.Now()
	r := &run{ctx: ctx, b: b, cfg: cfg, seen: map[string]map[string]bool{}, drained: map[string]bool{}, rec: rec,
		uncertain: map[string]bool{}, uncertainSubs: map[string]bool{}}
	if len(cfg.Schedule) > 0 && cfg.Nemesis != nil {
		r.nem = &nemesisRun{n: cfg.Nemesis, start: start}
	}
	_, noMode := b.Unsupported()[backends.CapModeOverride]
	r.unique = !noMode && !cfg.SharedOnly
	for i := range r.topics {
		r.topics[i] = fmt.Sprintf("flow:tg:%s-t%d", cfg.Prefix, i)
	}
	err := r.exec(prog)
	if r.nem != nil { // a failed run leaves no fault behind
		err = errors.Join(err, r.nem.wait(ctx))
		if r.nem.n.Heal != nil {
			hctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.Call)
			if herr := r.nem.n.Heal(hctx); herr != nil {
				err = errors.Join(err, fmt.Errorf("nemesis: heal after the run: %w", herr))
			}
			cancel()
		}
	}
	closeErr := r.closeAll()
	setStep(closeErr, "end")
	res := Result{Outcome: Outcome{}, Sent: r.sent, Tolerated: r.tolerated, Uncertain: r.uncertain, UncertainSubs: r.uncertainSubs}
	if r.nem != nil {
		res.Timeline = r.nem.lines
	}
	for label := range r.drained {
		keys := make([]string, 0, len(r.seen[label]))
		for k := range r.seen[label] {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		res.Outcome[label] = keys
	}
	if err == nil {
		err = closeErr
	}
	ops := rec.Ops()
	res.Calls = len(ops)
	if err != nil {
		res.Took = time.Since(start)
		return res, err
	}
	policy := history.PolicyFor(b)
	policy.Faults = r.nem != nil
	if r.nem != nil {
		policy.Outages = r.nem.outages // every fault ended before the drain (nemesisRun.wait)
	}
	res.Findings = append(history.Check(ops, policy), r.extra...)
	res.Took = time.Since(start)
	return res, nil
}

func (r *run) call() (context.Context, context.CancelFunc) {
	return context.WithTimeout(r.ctx, r.cfg.Call)
}

func (r *run) exec(prog Program) error {
	// The topics are created before anything uses them, as TrustGraph's services create theirs
	// (L5 and L6 judge a missing topic; the workload judges what comes after).
	for _, t := range r.topics {
		ctx, cancel := r.call()
		err := r.b.CreateTopic(ctx, t)
		cancel()
		if err != nil {
			return setStep(callErr("CreateTopic", fmt.Errorf("%s: %w", t, err)), "setup")
		}
	}
	for i, t := range []int{0, 0, 1} {
		ctx, cancel := r.call()
		p, err := r.b.Producer(ctx, r.topics[t])
		cancel()
		if err != nil {
			return setStep(callErr("Producer", fmt.Errorf("producer %d: %w", i, err)), "setup")
		}
		r.prods = append(r.prods, p)
	}
	for range 2 {
		if err := r.subscribe(0, backends.Earliest, backends.Shared); err != nil {
			return setStep(err, "setup")
		}
	}
	faults := r.cfg.Schedule
	startFaults := func(before int) error {
		for r.nem != nil && len(faults) > 0 && min(faults[0].Before, len(prog)) == before {
			if err := r.fault(faults[0]); err != nil {
				return err
			}
			faults = faults[1:]
		}
		return nil
	}
	for i, st := range prog {
		if err := startFaults(i); err != nil {
			return err
		}
		if err := r.step(st); err != nil {
			return fmt.Errorf("step %d %s: %w", i+1, st, setStep(err, st.Op.String()))
		}
	}
	if err := startFaults(len(prog)); err != nil {
		return err
	}
	if r.nem != nil { // the last fault ends before the drain
		if err := r.nem.wait(r.ctx); err != nil {
			return err
		}
		r.nem.log("drain starts")
	}
	return setStep(r.drain(), "drain")
}

func (r *run) subscribe(topic int, pos backends.Position, mode backends.Mode) error {
	s := &subscription{topic: topic, name: fmt.Sprintf("%s-s%d", r.cfg.Prefix, len(r.subs)), pos: pos, mode: mode}
	s.label = fmt.Sprintf("t%d/s%d", topic, len(r.subs))
	r.subs = append(r.subs, s)
	return r.join(s)
}

func (r *run) join(s *subscription) error {
	opts := []backends.ConsumerOption{backends.WithPosition(s.pos)}
	if r.unique {
		opts = append(opts, backends.WithMode(s.mode))
	}
	ctx, cancel := r.call()
	c, err := r.b.Consumer(ctx, r.topics[s.topic], s.name, opts...)
	cancel()
	if err != nil && r.faulty() {
		// The broker may or may not have made the subscription, at a position of its choosing.
		r.tolerate(fmt.Errorf("consumer on %s: %w", s.label, err))
		r.uncertainSubs[s.label] = true
		return nil
	}
	if err != nil {
		return callErr("Consumer", fmt.Errorf("on %s: %w", s.label, err))
	}
	s.members++
	s.changed(time.Now(), r.openOn(s) > 0)
	label := s.label
	if s.mode == backends.Unique {
		label = fmt.Sprintf("%s#%d", s.label, s.members)
	}
	r.members = append(r.members, newMember(c, s, label))
	return nil
}

// openOn is how many members of s are open.
func (r *run) openOn(s *subscription) int {
	n := 0
	for _, m := range r.members {
		if m.c != nil && m.sub == s {
			n++
		}
	}
	return n
}

func (r *run) live() []*member {
	var out []*member
	for _, m := range r.members {
		if m.c != nil {
			out = append(out, m)
		}
	}
	return out
}

func holders(ms []*member) []*member {
	var out []*member
	for _, m := range ms {
		if len(m.held) > 0 {
			out = append(out, m)
		}
	}
	return out
}

func (r *run) got(m *member, d backends.Delivery) {
	k := history.KeyOf(d.Payload)
	if r.seen[m.label] == nil {
		r.seen[m.label] = map[string]bool{}
	}
	r.seen[m.label][k] = true
	m.ids[d.ID]++
	m.heldAt[d.ID] = m.sub.heldFrom(time.Now(), r.cfg.MoveWithin)
	// A nacked message awaited by any open consumer of the same subscription came again.
	for _, o := range r.live() {
		if o.label == m.label {
			delete(o.nacked, k)
		}
	}
}

// acked records an Ack of d by m that returned nil: a nacked message acked through another
// delivery of it (handed out twice across a rebalance) is done, and no longer awaited
// (history.ackedAfter judges the same).
func (r *run) acked(m *member, d backends.Delivery) {
	k := history.KeyOf(d.Payload)
	m.acked[k] = true
	for _, o := range r.live() {
		if o.label == m.label {
			delete(o.nacked, k)
		}
	}
}

func (r *run) receive(m *member, within time.Duration) (bool, error) {
	ctx, cancel := context.WithTimeout(r.ctx, within)
	d, err := m.c.Receive(ctx)
	cancel()
	switch {
	case err == nil:
		m.held = append(m.held, d)
		r.got(m, d)
		return true, nil
	case errors.Is(err, backends.ErrTimeout) || errors.Is(err, context.DeadlineExceeded):
		if r.ctx.Err() != nil {
			return false, callErr("Receive", r.ctx.Err())
		}
		return false, nil
	case r.faulty():
		r.tolerate(fmt.Errorf("receive on %s: %w", m.label, err))
		return false, nil
	}
	return false, callErr("Receive", err)
}

func (r *run) settle(m *member, i int, nack bool) error {
	d := m.held[i]
	m.held = slices.Delete(m.held, i, i+1)
	ctx, cancel := r.call()
	defer cancel()
	if nack {
		err, refused := m.settleErr(d, m.c.Nack(ctx, d))
		if err != nil && r.faulty() { // not settled: it may come again (allowed under faults)
			r.tolerate(fmt.Errorf("nack on %s: %w", m.label, err))
			return nil
		}
		if err != nil {
			return callErr("Nack", err)
		}
		if !refused {
			m.nacked[history.KeyOf(d.Payload)] = time.Now()
		}
		return nil
	}
	err, refused := m.settleErr(d, m.c.Ack(ctx, d))
	if err != nil && r.faulty() {
		r.tolerate(fmt.Errorf("ack on %s: %w", m.label, err))
		return nil
	}
	if err != nil {
		return callErr("Ack", err)
	}
	if !refused {
		r.acked(m, d)
	}
	return nil
}

func (r *run) closeMember(m *member) error {
	ctx, cancel := r.call()
	err := m.c.Close(ctx)
	cancel()
	m.c, m.held, m.nacked = nil, nil, nil
	m.sub.changed(time.Now(), r.openOn(m.sub) > 0)
	if err != nil && r.faulty() {
		r.tolerate(fmt.Errorf("close on %s: %w", m.label, err))
		return nil
	}
	if err != nil {
		return callErr("Close", err)
	}
	return nil
}

func (r *run) step(st Step) error {
	live := r.live()
	switch st.Op {
	case Send:
		p := st.Arg % len(r.prods)
		ctx, cancel := r.call()
		payload := fmt.Appendf(nil, "%s-p%d-m%d", r.cfg.Prefix, p, r.sent)
		err := r.prods[p].Send(ctx, backends.Message{Payload: payload})
		cancel()
		if err != nil && r.faulty() {
			// C-SEND-3: a failed Send may or may not have been written.
			r.tolerate(fmt.Errorf("send %s: %w", payload, err))
			r.uncertain[history.KeyOf(payload)] = true
			err = nil
		}
		if err != nil {
			return callErr("Send", fmt.Errorf("%s: %w", payload, err))
		}
		r.sent++
	case Receive, Ack, Nack, Close:
		if st.Op == Ack || st.Op == Nack {
			live = holders(live) // a settle targets a consumer that holds something
		}
		if len(live) == 0 {
			return nil
		}
		m := live[st.Arg%len(live)]
		switch st.Op {
		case Receive:
			within := r.cfg.ReceiveWithin
			if st.Pick%2 == 1 {
				within = r.cfg.LongReceive
			}
			_, err := r.receive(m, within)
			return err
		case Ack, Nack:
			if len(m.held) == 0 {
				return nil
			}
			return r.settle(m, st.Pick%len(m.held), st.Op == Nack)
		case Close:
			return r.closeMember(m)
		}
	case Join:
		return r.join(r.subs[st.Arg%len(r.subs)])
	case Subscribe:
		pos, mode := backends.Earliest, backends.Shared
		if st.Arg/2%2 == 1 {
			pos = backends.Latest
		}
		if st.Arg/4%2 == 1 && r.unique {
			mode = backends.Unique
		}
		return r.subscribe(st.Arg%2, pos, mode)
	}
	return nil
}

// drainOpen reads one open consumer: acks what it holds, then receives and acks until a
// Receive waited Quiet for nothing and no nacked message is awaited (or NackWithin passed).
func (r *run) drainOpen(m *member) error { return r.drainOpenLocked(&sync.Mutex{}, m, r.cfg.Quiet) }

// awaited counts the nacked messages the open consumers of label still wait for.
func (r *run) awaited(label string) int {
	n := 0
	for _, o := range r.live() {
		if o.label == label {
			n += len(o.nacked)
		}
	}
	return n
}

func (r *run) drain() error {
	// Every open consumer at once: the members of a shared subscription compete, and one of
	// them may hold the partition (Kafka) while the others get nothing.
	live := r.live()
	var (
		mu   sync.Mutex
		wg   sync.WaitGroup
		errs []error
	)
	for _, m := range live {
		wg.Go(func() {
			// The seen map and the nacked sets are shared: one lock over each member's reads.
			// A consumer that lived through faults may still be reconnecting or rejoining:
			// its first quiet window is Recover, not Quiet.
			first := r.cfg.Quiet
			if r.faulty() && r.cfg.Recover > first {
				first = r.cfg.Recover
			}
			err := r.drainOpenLocked(&mu, m, first)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, fmt.Errorf("drain %s: %w", m.label, err))
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	for _, m := range live {
		for k, at := range m.nacked {
			r.extra = append(r.extra, history.Finding{Anomaly: nackAnomaly, Contract: "C-NACK-1", Key: k,
				Subscription: m.label,
				Detail: fmt.Sprintf("nacked %s before the end of the drain by a consumer that stayed open, not delivered again to its subscription while it was read for %s (the bound)",
					time.Since(at).Round(time.Millisecond), r.cfg.NackWithin)})
		}
		if m.sub.mode == backends.Unique {
			r.drained[m.label] = true
		}
	}
	for _, m := range live {
		if err := r.closeMember(m); err != nil {
			return fmt.Errorf("close before the drain: %w", err)
		}
	}
	for _, s := range r.subs {
		if s.mode == backends.Unique {
			continue
		}
		before := len(r.members)
		if err := r.join(s); err != nil {
			return fmt.Errorf("drain: %w", err)
		}
		if len(r.members) == before { // the Consumer call failed and was tolerated (faults)
			continue
		}
		m := r.members[len(r.members)-1]
		if err := r.drainOpen(m); err != nil {
			return fmt.Errorf("drain %s: %w", s.label, err)
		}
		r.drained[s.label] = true
		if err := r.closeMember(m); err != nil {
			return fmt.Errorf("drain %s: %w", s.label, err)
		}
	}
	return nil
}

// drainOpenLocked is drainOpen for one of several members drained at once: the run's shared
// maps are touched under mu, the broker calls are not.
func (r *run) drainOpenLocked(mu *sync.Mutex, m *member, first time.Duration) error {
	settle := func(i int) error {
		d := m.held[i]
		m.held = slices.Delete(m.held, i, i+1)
		ctx, cancel := r.call()
		defer cancel()
		ackErr := m.c.Ack(ctx, d)
		mu.Lock()
		defer mu.Unlock()
		err, refused := m.settleErr(d, ackErr)
		if err != nil && r.faulty() {
			r.tolerate(fmt.Errorf("drain ack on %s: %w", m.label, err))
			return nil
		}
		if err != nil {
			return callErr("Ack", err)
		}
		if !refused {
			r.acked(m, d)
		}
		return nil
	}
	for len(m.held) > 0 {
		if err := settle(0); err != nil {
			return err
		}
	}
	deadline := time.Now().Add(r.cfg.NackWithin)
	quiet := first
	for {
		ctx, cancel := context.WithTimeout(r.ctx, quiet)
		d, err := m.c.Receive(ctx)
		cancel()
		switch {
		case err == nil:
			mu.Lock()
			r.got(m, d)
			mu.Unlock()
			m.held = append(m.held, d)
			if err := settle(0); err != nil {
				return err
			}
			quiet = r.cfg.Quiet
			continue
		case errors.Is(err, backends.ErrTimeout) || errors.Is(err, context.DeadlineExceeded):
			if r.ctx.Err() != nil {
				return callErr("Receive", r.ctx.Err())
			}
		case r.faulty():
			// After the faults: a client still reconnecting may fail a Receive (C-LIFE-7 asks
			// only that it recovers); the drain goes on until its bound.
			mu.Lock()
			r.tolerate(fmt.Errorf("drain receive on %s: %w", m.label, err))
			mu.Unlock()
			if time.Now().After(deadline) {
				return nil
			}
			continue
		default:
			return callErr("Receive", err)
		}
		mu.Lock()
		waiting := r.awaited(m.label)
		mu.Unlock()
		if waiting == 0 || time.Now().After(deadline) {
			return nil
		}
		quiet = r.cfg.Quiet
	}
}

// closeAll closes what is still open (after an error, or the producers after the drain).
func (r *run) closeAll() error {
	var errs []error
	for _, m := range r.live() {
		errs = append(errs, r.closeMember(m)) // errors.Join leaves out the nils
	}
	for i, p := range r.prods {
		ctx, cancel := r.call()
		if err := p.Close(ctx); err != nil {
			errs = append(errs, callErr("Producer.Close", fmt.Errorf("producer %d: %w", i, err)))
		}
		cancel()
	}
	return errors.Join(errs...)
}

// Compare returns a finding for each subscription whose received messages differ from the
// reference's outcome on the same program: every drained subscription's content is determined
// by the contract (a sequential program, flow topics, C-SUB-2, C-POS-1..3). Message keys are
// compared after the run prefixes (which differ between the two runs) are removed.
func Compare(ref, got Outcome, refPrefix, gotPrefix string) []history.Finding {
	return CompareUnderFaults(ref, Result{Outcome: got}, refPrefix, gotPrefix)
}

// CompareUnderFaults is Compare with the contract's allowances for a run under a nemesis
// schedule: a message whose Send failed on the backend (got.Uncertain) may or may not be
// there (C-SEND-3), so it is left out on both sides; a subscription whose Consumer call failed
// (got.UncertainSubs) may have been made at another time or position, so it is not compared.
// What is left is determined by the contract as without faults: no message whose Send
// returned nil may be missing (C-SEND-1, C-SUB-2; a crash or a rebalance may redeliver, never
// drop), none may be extra.
func CompareUnderFaults(ref Outcome, got Result, refPrefix, gotPrefix string) []history.Finding {
	var out []history.Finding
	skip := map[string]bool{}
	for k := range got.Uncertain {
		skip[strings.TrimPrefix(k, gotPrefix)] = true
	}
	labels := make([]string, 0, len(ref))
	for l := range ref {
		labels = append(labels, l)
	}
	sort.Strings(labels)
	for _, l := range labels {
		g, ok := got.Outcome[l]
		if base, _, _ := strings.Cut(l, "#"); !ok || got.UncertainSubs[base] {
			continue // not drained there (the run stopped early; the error says why), or uncertain
		}
		want := map[string]bool{}
		for _, k := range ref[l] {
			if k := strings.TrimPrefix(k, refPrefix); !skip[k] {
				want[k] = true
			}
		}
		have := map[string]bool{}
		for _, k := range g {
			if k := strings.TrimPrefix(k, gotPrefix); !skip[k] {
				have[k] = true
			}
		}
		var missing, extra []string
		for k := range want {
			if !have[k] {
				missing = append(missing, k)
			}
		}
		for k := range have {
			if !want[k] {
				extra = append(extra, k)
			}
		}
		sort.Strings(missing)
		sort.Strings(extra)
		if len(missing)+len(extra) == 0 {
			continue
		}
		key := ""
		if len(missing) > 0 {
			key = gotPrefix + missing[0]
		} else {
			key = gotPrefix + extra[0]
		}
		out = append(out, history.Finding{Anomaly: Differs, Contract: "C-SUB-2, C-POS-1..3", Key: key, Subscription: l,
			Detail: fmt.Sprintf("the reference received %d distinct messages here, this backend %d: missing %s; not on the reference %s",
				len(want), len(have), brief(missing), brief(extra))})
	}
	return out
}

func brief(ks []string) string {
	if len(ks) == 0 {
		return "none"
	}
	if len(ks) > 8 {
		return fmt.Sprintf("%v and %d more", ks[:8], len(ks)-8)
	}
	return fmt.Sprint(ks)
}

// Shrink cuts prog down to a shorter program for which fails still holds (delta debugging:
// remove halves, quarters, ... single steps, keeping each removal after which it still fails),
// trying until budget passes. fails runs a candidate (on the failing backend: a real broker
// run of seconds each, so the budget, not a fixed count, bounds it). It returns the smallest
// failing program found and how many candidates it ran.
func Shrink(prog Program, fails func(Program) bool, budget time.Duration) (Program, int) {
	deadline := time.Now().Add(budget)
	tries := 0
	cur := slices.Clone(prog)
	for chunk := len(cur) / 2; chunk >= 1; {
		removed := false
		for at := 0; at+chunk <= len(cur); {
			if time.Now().After(deadline) {
				return cur, tries
			}
			cand := slices.Concat(cur[:at], cur[at+chunk:])
			tries++
			if fails(cand) {
				cur, removed = cand, true
				continue // the same position now holds the next steps
			}
			at += chunk
		}
		if !removed {
			chunk /= 2
		}
	}
	// Smaller arguments read more easily: lower each step's Arg and Pick where it still fails.
	for i := range cur {
		for _, lower := range []func(Step) (Step, bool){
			func(s Step) (Step, bool) { return Step{s.Op, 0, s.Pick}, s.Arg != 0 },
			func(s Step) (Step, bool) { return Step{s.Op, s.Arg, 0}, s.Pick != 0 },
		} {
			if time.Now().After(deadline) {
				return cur, tries
			}
			s, changed := lower(cur[i])
			if !changed {
				continue
			}
			cand := slices.Clone(cur)
			cand[i] = s
			tries++
			if fails(cand) {
				cur = cand
			}
		}
	}
	return cur, tries
}

// Classes lists the anomaly classes of fs, in order of first appearance.
func Classes(fs []history.Finding) []history.Anomaly {
	var out []history.Anomaly
	for _, f := range fs {
		if !slices.Contains(out, f.Anomaly) {
			out = append(out, f.Anomaly)
		}
	}
	return out
}
