package suite

import (
	"context"
	"fmt"
	"time"

	"github.com/onsi/ginkgo/v2"

	"github.com/pubsub-conformance/harness/backends"
)

// PrepareBackends readies the selected backends that need it before any spec runs (once per
// run, on Ginkgo process 1; Descriptor.Prepare: an adapter's build or virtualenv), so that a
// spec's Open only starts a client.
func PrepareBackends(ctx context.Context, names []string, progress func(string, ...any)) error {
	for _, n := range names {
		d, err := backends.Lookup(n)
		if err != nil || d.Prepare == nil {
			continue
		}
		start := time.Now()
		if err := d.Prepare(ctx); err != nil {
			return fmt.Errorf("prepare %s: %w", n, err)
		}
		progress("%s ready (%s)", n, time.Since(start).Round(time.Millisecond))
	}
	return nil
}

// attachTranscript makes a spec that fails attach the contract transcript of b, when b keeps
// one (backends.Transcriber: the out-of-process adapters). Called from Env.Open, which specs
// call inside their nodes; the cleanup is registered after the spec's own (deferred) Close of
// b, so it runs after it and the transcript includes the closes.
func attachTranscript(b backends.Backend) {
	t, ok := backends.FindTranscriber(b)
	if !ok {
		return
	}
	ginkgo.DeferCleanup(func() {
		if ginkgo.CurrentSpecReport().Failed() {
			ginkgo.AddReportEntry("contract transcript of "+b.Name(), ginkgo.ReportEntryVisibilityFailureOrVerbose, t.Transcript())
		}
	})
}
