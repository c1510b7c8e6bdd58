package suite

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"

	"github.com/pubsub-conformance/harness/backends"
	"github.com/pubsub-conformance/harness/backends/admin"
	"github.com/pubsub-conformance/harness/internal/column"
	"github.com/pubsub-conformance/harness/specs/catalogue"
	"github.com/pubsub-conformance/harness/suite/run"
)

// IsolateEnv selects the isolation mode (docs/isolation.md): PUBSUB_ISOLATE=topics makes the
// harness create, through the broker's admin (backends/admin), the topic of every Producer()
// and Consumer() call of the specs outside the lifecycle (L) and security (S) areas before
// the backend sees the call, so a backend whose topic lifecycle is broken fails the L specs
// and not everything. The columns of such a run are labelled <backend>+isolated.
const IsolateEnv = "PUBSUB_ISOLATE"

// notIsolated are the areas whose specs keep the backend's own topic lifecycle: the lifecycle
// area is what isolation leaves to be tested, and the security area's clients carry the
// credentials under test (a bad client's topics cannot be prepared with them).
var notIsolated = map[string]bool{"L": true, "S": true}

// Isolated reports whether this run is in isolation mode; any value of PUBSUB_ISOLATE but ""
// and "topics" is an error saying so.
func Isolated() (bool, error) { return IsolatedFrom(os.Getenv) }

// IsolatedFrom is Isolated with PUBSUB_ISOLATE read from getenv (the preflight's check).
func IsolatedFrom(getenv func(string) string) (bool, error) {
	switch v := strings.TrimSpace(getenv(IsolateEnv)); v {
	case "", "none", "off":
		return false, nil
	case "topics":
		return true, nil
	default:
		return false, fmt.Errorf("%s=%q: want topics (the harness creates every spec's topics outside the lifecycle area) or empty", IsolateEnv, v)
	}
}

// InRun completes the columns of the run's targets (run.Target's is the pinned release, out
// of isolation mode) with what this run's environment says: the broker release of each
// target's kind when it is not the pinned one (Release: kafka@3.9.1) and isolation mode
// (PUBSUB_ISOLATE: kafka+isolated; a bad value is the error). The column's name is the
// target's column label and report file name. ts is not changed.
func InRun(ts []run.Target) ([]run.Target, error) {
	on, err := Isolated()
	if err != nil {
		return nil, err
	}
	out := slices.Clone(ts)
	for i := range out {
		out[i].Column.Release = Release(out[i].Kind)
		out[i].Column.Isolated = on
	}
	return out, nil
}

// Columns are the columns of a run's targets (InRun) by registry name: the name a spec's
// result and report files carry.
type Columns map[string]column.Column

// ColumnsOf indexes the columns of ts.
func ColumnsOf(ts []run.Target) Columns {
	out := Columns{}
	for _, t := range ts {
		out[t.Name()] = t.Column
	}
	return out
}

// Label is the column name of backend n in the run: n's column, or n itself for a name that
// is not one of the run's targets.
func (c Columns) Label(n string) string {
	if col, ok := c[n]; ok {
		return col.String()
	}
	return n
}

// isolate wraps b, a client of target t, in isolation mode (t's column is isolated) for a
// spec outside the L and S areas: its Producer and Consumer calls first prepare their topic
// through the broker's admin. Anything else (isolation off, a spec of those areas, a backend
// without a broker) returns b as it is.
func isolate(b backends.Backend, t run.Target, cfg backends.Config) backends.Backend {
	if !t.Column.Isolated || !t.NeedsBroker() {
		return b
	}
	if id := catalogue.IDFromLabels(ginkgo.CurrentSpecReport().Labels()); id != "" && notIsolated[id[:1]] {
		return b
	}
	p, err := admin.For(string(t.Kind), cfg.Settings, cfg.RetentionFor)
	if err != nil {
		fmt.Fprintf(ginkgo.GinkgoWriter, "isolation off for this client: %v\n", err)
		return b
	}
	// The optional interfaces of b stay visible, as the history's decorator keeps them.
	i := &isolated{Backend: b, prep: p}
	k, kill := b.(backends.Killer)
	d, del := b.(backends.SubscriptionDeleter)
	switch {
	case kill && del:
		return &struct {
			*isolated
			backends.Killer
			backends.SubscriptionDeleter
		}{i, k, d}
	case kill:
		return &struct {
			*isolated
			backends.Killer
		}{i, k}
	case del:
		return &struct {
			*isolated
			backends.SubscriptionDeleter
		}{i, d}
	}
	return i
}

// isolated is a client whose topics the harness prepares (isolate).
type isolated struct {
	backends.Backend
	prep admin.Preparer
}

// Unwrap returns the client it decorates (openKillable looks for a Kill through it).
func (i *isolated) Unwrap() backends.Backend { return i.Backend }

// prepare creates topic through the admin, within ctx and at most 10 s. A failure is written
// to the spec's output and the backend's own call decides: isolation prepares, it never fails
// a spec by itself.
func (i *isolated) prepare(ctx context.Context, topic string) {
	t, err := backends.ParseTopic(topic)
	if err != nil {
		return // an invalid topic string is for the backend to reject
	}
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	start := time.Now()
	if err := i.prep.Prepare(pctx, t); err != nil {
		fmt.Fprintf(ginkgo.GinkgoWriter, "isolation: could not prepare %s (%s) after %s: %v; the backend's own call decides\n",
			topic, i.prep.Describe(t), time.Since(start).Round(time.Millisecond), err)
	}
}

func (i *isolated) Producer(ctx context.Context, topic string) (backends.Producer, error) {
	i.prepare(ctx, topic)
	return i.Backend.Producer(ctx, topic)
}

func (i *isolated) Consumer(ctx context.Context, topic, subscription string, opts ...backends.ConsumerOption) (backends.Consumer, error) {
	i.prepare(ctx, topic)
	return i.Backend.Consumer(ctx, topic, subscription, opts...)
}

// DeleteTopic deletes through the backend and forgets the topic, so a later Producer or
// Consumer prepares it again.
func (i *isolated) DeleteTopic(ctx context.Context, topic string) error {
	if t, err := backends.ParseTopic(topic); err == nil {
		i.prep.Forget(t)
	}
	return i.Backend.DeleteTopic(ctx, topic)
}
