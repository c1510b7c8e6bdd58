package suite

import (
	"context"

	"github.com/onsi/ginkgo/v2"

	"github.com/pubsub-conformance/harness/backends"
	"github.com/pubsub-conformance/harness/specs"
	"github.com/pubsub-conformance/harness/suite/run"
)

// openClient is the one way a spec's client (Backend) is opened, whatever it reaches: the
// run's shared broker (Env.Open), a private or fault broker, a cluster, an auth-enabled broker,
// a private in-process instance, the in-process crash consumer. It sends the client's logs
// (KAFKA_DEBUG, the Pulsar client's log, an adapter's stderr) to the spec's own output, which
// Ginkgo shows when the spec fails (or with -v), and wraps the client in the recording
// decorator of the spec's history (specs.RecordClient), which a failed spec attaches and the
// checkers read; in isolation mode (PUBSUB_ISOLATE=topics, isolate) the harness prepares the
// topics of its Producer and Consumer calls first. t is the run's target cfg is a Config of
// (run.Target.BaseConfig). where says in a few words what the client is connected to.
func openClient(ctx context.Context, t run.Target, cfg backends.Config, where string) (backends.Backend, error) {
	cfg.Log = ginkgo.GinkgoWriter
	b, err := backends.Open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return specs.RecordClient(isolate(b, t, cfg), where), nil
}
