// Package remote is the Go side of the adapter protocol (proto/pubsub/v1/adapter.proto): a
// backends.Backend that talks to an adapter process the harness starts, so that a backend
// written in any language runs through the same suite. Adapters are declared in declare.go
// (and by users through PUBSUB_ADAPTER_<NAME>); the Python SDK is backends/remote/python.
//
// Processes: one adapter process per (adapter, settings) per harness process, started by the
// first Open and shared by every Backend opened with the same settings afterwards (so an
// in-process reference port keeps one broker per harness process, like backends/memory). Each
// Open is one Backend inside that process. The process is in its own process group and dies
// with the harness (Pdeathsig); a dead process is restarted by the next Open, and every call on
// a Backend of the dead one fails with an error that names the adapter and quotes its last
// output lines.
//
// Deadlines: every call carries its ctx deadline to the adapter (gRPC deadline propagation) and
// the harness enforces it itself: a call the adapter has not answered when ctx ends returns a
// timeout that says so. A ctx without a deadline gets DefaultCallTimeout.
package remote

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/pubsub-conformance/harness/backends"
	"github.com/pubsub-conformance/harness/internal/cache"
	"github.com/pubsub-conformance/harness/internal/history"
	pb "github.com/pubsub-conformance/harness/proto/pubsub/v1"
)

// DefaultCallTimeout bounds a call whose ctx has no deadline: a hung adapter never hangs a run.
const DefaultCallTimeout = 2 * time.Minute

// StartTimeout bounds starting an adapter process and its handshake when ctx allows more (the
// virtualenv is made before, by Prepare).
const StartTimeout = 30 * time.Second

// startTimeout is StartTimeout, a variable so that a test can show the bound applies without
// waiting 30 s for it.
var startTimeout = StartTimeout

var (
	poolMu   sync.Mutex
	children = map[string]*child{}
	starting = map[string]*sync.Mutex{}
)

// settingsKey identifies the process for an adapter and its settings.
func settingsKey(name string, settings map[string]string) string {
	keys := make([]string, 0, len(settings))
	for k := range settings {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	h := sha256.New()
	for _, k := range keys {
		fmt.Fprintf(h, "%s\x00%s\x00", k, settings[k])
	}
	return name + "/" + hex.EncodeToString(h.Sum(nil))[:12]
}

// Prepare makes what starting the adapter needs that may take long (its virtualenv; pip needs
// the package index the first time), so that a spec's Open only starts a process. The suite
// calls it once per run, before the specs.
func Prepare(ctx context.Context, ad Adapter) error {
	if ad.GoMain != "" {
		if _, err := goBuild(ctx, ad); err != nil {
			return err
		}
	}
	if len(ad.Requirements) == 0 {
		return nil
	}
	pip, err := pipArgs(ctx, ad)
	if err != nil {
		return err
	}
	_, err = VenvWith(ctx, ad.Requirements, pip)
	return err
}

var (
	builtMu sync.Mutex
	built   = map[string]string{}
)

// goBuild builds ad.GoMain once per harness process into the cache directory (go build is
// quick when nothing changed) and returns the binary's path.
func goBuild(ctx context.Context, ad Adapter) (string, error) {
	builtMu.Lock()
	defer builtMu.Unlock()
	if p, ok := built[ad.GoMain]; ok {
		return p, nil
	}
	cacheDir, err := cache.Root()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(cacheDir, "bin")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	// Built under a name of its own, then renamed to a name that hashes its content: parallel
	// Ginkgo processes never replace a binary another one runs, and the same source (Go builds
	// are reproducible) leaves one file, not one per run.
	tmp := filepath.Join(dir, fmt.Sprintf(".%s-%d", ad.Name, os.Getpid()))
	cmd := exec.CommandContext(ctx, "go", "build", "-o", tmp, ad.GoMain)
	cmd.Dir = RepoRoot()
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("adapter %s: go build %s: %w\n%s", ad.Name, ad.GoMain, err, indent(lastLines(string(b), 15)))
	}
	content, err := os.ReadFile(tmp)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(content)
	out := filepath.Join(dir, ad.Name+"-"+hex.EncodeToString(sum[:])[:16])
	if err := os.Rename(tmp, out); err != nil {
		return "", err
	}
	built[ad.GoMain] = out
	return out, nil
}

// argvEnv resolves the command's placeholders and the environment of an adapter process.
func argvEnv(ctx context.Context, ad Adapter, settings map[string]string) ([]string, []string, error) {
	root := RepoRoot()
	python := ""
	env := os.Environ()
	uses := false
	for _, a := range ad.Command {
		uses = uses || strings.Contains(a, "{python}")
	}
	if uses {
		if len(ad.Requirements) > 0 {
			pip, err := pipArgs(ctx, ad)
			if err != nil {
				return nil, nil, err
			}
			p, err := VenvWith(ctx, ad.Requirements, pip)
			if err != nil {
				return nil, nil, fmt.Errorf("adapter %s: %w", ad.Name, err)
			}
			python = p
			pp := filepath.Join(root, SDKDir) + string(os.PathListSeparator) + GenDir(p)
			if old := os.Getenv("PYTHONPATH"); old != "" {
				pp += string(os.PathListSeparator) + old
			}
			env = append(env, "PYTHONPATH="+pp)
		} else {
			python = "python3"
		}
	}
	bin := ""
	if ad.GoMain != "" {
		b, err := goBuild(ctx, ad)
		if err != nil {
			return nil, nil, err
		}
		bin = b
	}
	argv := make([]string, len(ad.Command))
	for i, a := range ad.Command {
		argv[i] = strings.NewReplacer("{python}", python, "{repo}", root, "{bin}", bin).Replace(a)
	}
	for k, v := range settings {
		env = append(env, k+"="+v)
	}
	for k, v := range ad.Env {
		env = append(env, k+"="+v)
	}
	env = append(env, "PYTHONUNBUFFERED=1")
	return argv, env, nil
}

// process returns the running adapter process for (ad, settings), starting it when needed.
func process(ctx context.Context, ad Adapter, settings map[string]string, cfg backends.Config) (*child, error) {
	key := settingsKey(ad.Name, settings)
	poolMu.Lock()
	m, ok := starting[key]
	if !ok {
		m = &sync.Mutex{}
		starting[key] = m
	}
	poolMu.Unlock()
	m.Lock()
	defer m.Unlock()
	poolMu.Lock()
	c := children[key]
	poolMu.Unlock()
	if c != nil && !c.exited() {
		c.setLog(cfg.Log)
		return c, nil
	}
	argv, env, err := argvEnv(ctx, ad, settings)
	if err != nil {
		return nil, err
	}
	sctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	c, err = startChild(sctx, ad, argv, env, cfg.Log)
	if err != nil {
		return nil, err
	}
	c.settings = settings
	poolMu.Lock()
	children[key] = c
	poolMu.Unlock()
	return c, nil
}

// instanceProcess returns the adapter process of ad whose settings carry InstanceSetting=id
// (a private instance, see register.go), or nil; forget also removes it from the pool.
func instanceProcess(ad Adapter, id string, forget bool) *child {
	poolMu.Lock()
	defer poolMu.Unlock()
	for k, c := range children {
		if c.ad.Name == ad.Name && c.settings[InstanceSetting] == id {
			if forget {
				delete(children, k)
			}
			return c
		}
	}
	return nil
}

// mergeSettings is what Open passes to the adapter: the Config's settings, then ad's fixed ones.
func mergeSettings(ad Adapter, settings map[string]string) map[string]string {
	out := maps.Clone(settings)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, ad.Settings)
	return out
}

// Shutdown kills every adapter process this harness process started (they would die with it
// anyway). For tests and tools that start adapters repeatedly.
func Shutdown() {
	poolMu.Lock()
	cs := make([]*child, 0, len(children))
	for _, c := range children {
		cs = append(cs, c)
	}
	children = map[string]*child{}
	poolMu.Unlock()
	for _, c := range cs {
		c.kill()
	}
}

// Constructor returns the backends.Constructor of ad: Open on its adapter process.
func Constructor(ad Adapter) backends.Constructor {
	return func(ctx context.Context, cfg backends.Config) (backends.Backend, error) {
		return Open(ctx, ad, cfg)
	}
}

// Open starts (or reuses) ad's process and opens a Backend in it with cfg.
func Open(ctx context.Context, ad Adapter, cfg backends.Config) (*Backend, error) {
	settings := mergeSettings(ad, cfg.Settings)
	name := cfg.Backend
	if name == "" {
		name = ad.Name
	}
	tr := &transcript{start: time.Now()}
	ctx, cancel := bound(ctx)
	defer cancel()
	c, err := process(ctx, ad, settings, cfg)
	if err != nil {
		return nil, err
	}
	req := &pb.OpenRequest{Name: name, Settings: settings, Retention: map[string]*durationpb.Duration{}}
	for cl, d := range cfg.Retention {
		req.Retention[string(cl)] = durationpb.New(d)
	}
	b := &Backend{name: name, c: c, tr: tr}
	var resp *pb.OpenResponse
	err = b.call(ctx, "Open", fmt.Sprintf("settings=%s", settingNames(settings)), func(ctx context.Context) (*pb.Error, error) {
		var err error
		resp, err = c.client.Open(ctx, req)
		if err != nil {
			return nil, err
		}
		return resp.Error, nil
	})
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", name, err)
	}
	b.id = resp.Backend
	b.unsupported = map[backends.Capability]string{}
	for k, v := range resp.Unsupported {
		b.unsupported[backends.Capability(k)] = v
	}
	tr.note("adapter %s; unsupported=%v", c.adapter, resp.Unsupported)
	if ad.Source != "" {
		tr.note("code under test: %s", ad.Source)
	}
	return b, nil
}

func settingNames(s map[string]string) string {
	keys := make([]string, 0, len(s))
	for k := range s {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return "[" + strings.Join(keys, " ") + "]" // names only: values may be secrets
}

// bound gives ctx a deadline when it has none.
func bound(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, DefaultCallTimeout)
}

// Backend is a backends.Backend served by an adapter process.
type Backend struct {
	name        string
	c           *child
	id          uint64
	unsupported map[backends.Capability]string
	tr          *transcript
	closed      atomic.Bool
}

var (
	_ backends.Backend     = (*Backend)(nil)
	_ backends.Transcriber = (*Backend)(nil)
	_ backends.Killer      = (*Backend)(nil)
)

// call runs one contract call: bounded by ctx (and DefaultCallTimeout), recorded in the
// transcript, transport failures turned into errors that name the adapter.
func (b *Backend) call(ctx context.Context, what, args string, fn func(context.Context) (*pb.Error, error)) error {
	ctx, cancel := bound(ctx)
	defer cancel()
	start := time.Now()
	var err error
	if cerr := backends.CtxErr(ctx, what); cerr != nil {
		err = cerr
	} else {
		var werr *pb.Error
		werr, err = fn(ctx)
		if err != nil {
			err = b.c.callError(what, err)
		} else {
			err = FromWire(werr)
		}
	}
	b.tr.add(start, what, args, err)
	return err
}

// Name implements backends.Backend.
func (b *Backend) Name() string { return b.name }

// Unsupported implements backends.Backend: what the adapter's Open answered.
func (b *Backend) Unsupported() map[backends.Capability]string { return b.unsupported }

// Transcript implements backends.Transcriber.
func (b *Backend) Transcript() string { return b.tr.String() }

func topicArgs(topic string, r *durationpb.Duration) string {
	if r == nil {
		return fmt.Sprintf("%q", topic)
	}
	return fmt.Sprintf("%q retention=%s", topic, r.AsDuration())
}

func (b *Backend) topicReq(topic string, opts []backends.TopicOption) *pb.TopicRequest {
	req := &pb.TopicRequest{Backend: b.id, Topic: topic}
	var s backends.TopicSettings
	for _, o := range opts {
		if o != nil {
			o(&s)
		}
	}
	if s.Retention != 0 {
		req.Retention = durationpb.New(s.Retention)
	}
	return req
}

// CreateTopic implements backends.Backend.
func (b *Backend) CreateTopic(ctx context.Context, topic string, opts ...backends.TopicOption) error {
	req := b.topicReq(topic, opts)
	return b.call(ctx, "CreateTopic", topicArgs(topic, req.Retention), func(ctx context.Context) (*pb.Error, error) {
		r, err := b.c.client.CreateTopic(ctx, req)
		return r.GetError(), err
	})
}

// EnsureTopic implements backends.Backend.
func (b *Backend) EnsureTopic(ctx context.Context, topic string, opts ...backends.TopicOption) error {
	req := b.topicReq(topic, opts)
	return b.call(ctx, "EnsureTopic", topicArgs(topic, req.Retention), func(ctx context.Context) (*pb.Error, error) {
		r, err := b.c.client.EnsureTopic(ctx, req)
		return r.GetError(), err
	})
}

// DeleteTopic implements backends.Backend.
func (b *Backend) DeleteTopic(ctx context.Context, topic string) error {
	return b.call(ctx, "DeleteTopic", fmt.Sprintf("%q", topic), func(ctx context.Context) (*pb.Error, error) {
		r, err := b.c.client.DeleteTopic(ctx, &pb.TopicRequest{Backend: b.id, Topic: topic})
		return r.GetError(), err
	})
}

// TopicExists implements backends.Backend.
func (b *Backend) TopicExists(ctx context.Context, topic string) (bool, error) {
	var exists bool
	err := b.call(ctx, "TopicExists", fmt.Sprintf("%q", topic), func(ctx context.Context) (*pb.Error, error) {
		r, err := b.c.client.TopicExists(ctx, &pb.TopicRequest{Backend: b.id, Topic: topic})
		exists = r.GetExists()
		return r.GetError(), err
	})
	if err == nil {
		b.tr.note("  -> exists=%v", exists)
	}
	return exists, err
}

// Retention implements backends.Backend.
func (b *Backend) Retention(ctx context.Context, topic string) (time.Duration, error) {
	var d time.Duration
	err := b.call(ctx, "Retention", fmt.Sprintf("%q", topic), func(ctx context.Context) (*pb.Error, error) {
		r, err := b.c.client.Retention(ctx, &pb.TopicRequest{Backend: b.id, Topic: topic})
		d = r.GetRetention().AsDuration()
		return r.GetError(), err
	})
	if err == nil {
		b.tr.note("  -> %s", d)
	}
	return d, err
}

// Close implements backends.Backend. Idempotent.
func (b *Backend) Close(ctx context.Context) error {
	if b.closed.Swap(true) {
		return nil
	}
	return b.call(ctx, "Close", "", func(ctx context.Context) (*pb.Error, error) {
		r, err := b.c.client.CloseBackend(ctx, &pb.Handle{Handle: b.id})
		return r.GetError(), err
	})
}

// Kill implements backends.Killer for reference ports: the adapter drops the Backend without
// closing anything. An adapter that cannot (UNIMPLEMENTED) gets a Close instead, and the
// transcript and log say so.
func (b *Backend) Kill() {
	if b.closed.Swap(true) {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := b.call(ctx, "Kill", "", func(ctx context.Context) (*pb.Error, error) {
		r, err := b.c.client.KillBackend(ctx, &pb.Handle{Handle: b.id})
		return r.GetError(), err
	})
	if err != nil {
		b.c.line(fmt.Sprintf("harness: Kill of backend %d failed: %v", b.id, err))
	}
}

// Producer implements backends.Backend.
func (b *Backend) Producer(ctx context.Context, topic string) (backends.Producer, error) {
	var h uint64
	err := b.call(ctx, "Producer", fmt.Sprintf("%q", topic), func(ctx context.Context) (*pb.Error, error) {
		r, err := b.c.client.NewProducer(ctx, &pb.ProducerRequest{Backend: b.id, Topic: topic})
		h = r.GetHandle()
		return r.GetError(), err
	})
	if err != nil {
		return nil, err
	}
	b.tr.note("  -> producer #%d", h)
	return &producer{b: b, id: h, topic: topic}, nil
}

// Consumer implements backends.Backend. Position and mode travel as the caller asked
// (ModeDefault unresolved): the adapter maps them the way its backend does.
func (b *Backend) Consumer(ctx context.Context, topic, sub string, opts ...backends.ConsumerOption) (backends.Consumer, error) {
	var s backends.ConsumerSettings
	for _, o := range opts {
		if o != nil {
			o(&s)
		}
	}
	req := &pb.ConsumerRequest{Backend: b.id, Topic: topic, Subscription: sub}
	if s.Position == backends.Earliest {
		req.Position = pb.Position_POSITION_EARLIEST
	}
	switch s.Mode {
	case backends.Shared:
		req.Mode = pb.Mode_MODE_SHARED
	case backends.Unique:
		req.Mode = pb.Mode_MODE_UNIQUE
	}
	var h uint64
	err := b.call(ctx, "Consumer", fmt.Sprintf("%q sub=%q position=%s mode=%s", topic, sub, s.Position, s.Mode),
		func(ctx context.Context) (*pb.Error, error) {
			r, err := b.c.client.NewConsumer(ctx, req)
			h = r.GetHandle()
			return r.GetError(), err
		})
	if err != nil {
		return nil, err
	}
	b.tr.note("  -> consumer #%d", h)
	return &consumer{b: b, id: h, topic: topic}, nil
}

type producer struct {
	b      *Backend
	id     uint64
	topic  string
	closed atomic.Bool
}

func (p *producer) Send(ctx context.Context, m backends.Message) error {
	return p.b.call(ctx, fmt.Sprintf("Send#%d", p.id), history.Summarise(m.Payload, m.Properties), func(ctx context.Context) (*pb.Error, error) {
		r, err := p.b.c.client.Send(ctx, &pb.SendRequest{Producer: p.id,
			Message: &pb.Message{Payload: m.Payload, Properties: m.Properties}})
		return r.GetError(), err
	})
}

func (p *producer) Close(ctx context.Context) error {
	if p.closed.Swap(true) {
		return nil
	}
	return p.b.call(ctx, fmt.Sprintf("CloseProducer#%d", p.id), "", func(ctx context.Context) (*pb.Error, error) {
		r, err := p.b.c.client.CloseProducer(ctx, &pb.Handle{Handle: p.id})
		return r.GetError(), err
	})
}

type consumer struct {
	b      *Backend
	id     uint64
	topic  string
	closed atomic.Bool
}

func (c *consumer) Receive(ctx context.Context) (backends.Delivery, error) {
	var d backends.Delivery
	err := c.b.call(ctx, fmt.Sprintf("Receive#%d", c.id), "", func(ctx context.Context) (*pb.Error, error) {
		r, err := c.b.c.client.Receive(ctx, &pb.Handle{Handle: c.id})
		if pd := r.GetDelivery(); pd != nil {
			d = backends.Delivery{ID: pd.Id, Topic: pd.Topic, Payload: pd.Payload, Properties: pd.Properties}
		}
		return r.GetError(), err
	})
	if err != nil {
		return backends.Delivery{}, err
	}
	c.b.tr.note("  -> id=%s %s", d.ID, history.Summarise(d.Payload, d.Properties))
	return d, nil
}

func (c *consumer) settle(ctx context.Context, what string, d backends.Delivery, ack bool) error {
	req := &pb.SettleRequest{Consumer: c.id, Delivery: &pb.Delivery{Id: d.ID, Topic: d.Topic, Payload: d.Payload, Properties: d.Properties}}
	return c.b.call(ctx, fmt.Sprintf("%s#%d", what, c.id), "id="+d.ID, func(ctx context.Context) (*pb.Error, error) {
		var r *pb.Empty
		var err error
		if ack {
			r, err = c.b.c.client.Ack(ctx, req)
		} else {
			r, err = c.b.c.client.Nack(ctx, req)
		}
		return r.GetError(), err
	})
}

func (c *consumer) Ack(ctx context.Context, d backends.Delivery) error {
	return c.settle(ctx, "Ack", d, true)
}

func (c *consumer) Nack(ctx context.Context, d backends.Delivery) error {
	return c.settle(ctx, "Nack", d, false)
}

func (c *consumer) Close(ctx context.Context) error {
	if c.closed.Swap(true) {
		return nil
	}
	return c.b.call(ctx, fmt.Sprintf("CloseConsumer#%d", c.id), "", func(ctx context.Context) (*pb.Error, error) {
		r, err := c.b.c.client.CloseConsumer(ctx, &pb.Handle{Handle: c.id})
		return r.GetError(), err
	})
}

// transcript is the bounded record of the contract calls on one Backend and what it handed out.
type transcript struct {
	start   time.Time
	mu      sync.Mutex
	lines   []string
	dropped int
}

// maxTranscript is how many lines a transcript keeps (the last ones).
const maxTranscript = 1500

func (t *transcript) push(l string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lines = append(t.lines, l)
	if len(t.lines) > maxTranscript {
		n := len(t.lines) - maxTranscript
		t.dropped += n
		t.lines = append([]string(nil), t.lines[n:]...)
	}
}

func (t *transcript) add(start time.Time, what, args string, err error) {
	res := "ok"
	if err != nil {
		res = fmt.Sprintf("ERROR %s: %v", backends.Code(err), err)
		if errors.Is(err, backends.ErrTimeout) && !strings.Contains(err.Error(), "did not answer") {
			res = "timeout"
		}
	}
	t.push(fmt.Sprintf("%s %+8.3fs %-16s %s -> %s (%s)", start.Format("15:04:05.000"),
		start.Sub(t.start).Seconds(), what, args, res, time.Since(start).Round(10*time.Microsecond)))
}

func (t *transcript) note(format string, args ...any) {
	t.push(fmt.Sprintf(format, args...))
}

func (t *transcript) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var sb strings.Builder
	if t.dropped > 0 {
		fmt.Fprintf(&sb, "(%d earlier lines dropped)\n", t.dropped)
	}
	sb.WriteString(strings.Join(t.lines, "\n"))
	return sb.String()
}
