package suite

import (
	"context"
	"time"

	"github.com/onsi/ginkgo/v2"

	"github.com/pubsub-conformance/harness/backends"
	"github.com/pubsub-conformance/harness/backends/remote"
)

// PrepareAdapters makes the virtualenvs of the selected adapters before any spec runs (once per
// run, on Ginkgo process 1), so that a spec's Open only starts a process.
func PrepareAdapters(ctx context.Context, names []string, progress func(string, ...any)) error {
	start := time.Now()
	if err := remote.PrepareNamed(ctx, names); err != nil {
		return err
	}
	for _, n := range names {
		if _, ok := remote.Lookup(n); ok {
			progress("adapter %s ready (%s)", n, time.Since(start).Round(time.Millisecond))
		}
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
