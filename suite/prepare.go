package suite

import (
	"context"
	"fmt"
	"time"

	"github.com/pubsub-conformance/harness/suite/run"
)

// PrepareBackends readies the run's targets that need it before any spec runs (once per
// run, on Ginkgo process 1; Descriptor.Prepare: an adapter's build or virtualenv), so that a
// spec's Open only starts a client.
func PrepareBackends(ctx context.Context, ts []run.Target, progress func(string, ...any)) error {
	for _, t := range ts {
		d, n := t.Descriptor, t.Name()
		if d.Prepare == nil {
			continue
		}
		start := time.Now()
		if err := d.Prepare(ctx); err != nil {
			return fmt.Errorf("prepare %s: %w", n, err)
		}
		progress("%s ready (%s)", n, time.Since(start).Round(time.Millisecond))
		if d.Source != "" {
			progress("%s: code under test: %s", n, d.Source)
		}
	}
	return nil
}
