package specs

import (
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"

	"github.com/pubsub-conformance/harness/specs/catalogue"
)

// Conformance declares the whole catalogue for env's backend. Call it once per backend at tree
// construction time (var _ = specs.Conformance(env)); env's functions are used only when specs
// run. It returns true so it can initialise a package-level var.
func Conformance(env *Env) bool {
	Describe(fmt.Sprintf("pub/sub conformance of %s", env.Backend), Label(catalogue.BackendLabel(env.Backend)), func() {
		// Why: every client a spec opens records into the spec's history (RecordClient); a
		// failed spec attaches it, and the specs that move many messages check it.
		BeforeEach(beginHistory)

		// Why: a backend that needs a newer broker than this run's (kafka-kip848 before Kafka
		// 4.0) is not tested there; every spec says why instead of failing for that reason.
		BeforeEach(func() {
			if env.SkipAll != nil {
				if why := env.SkipAll(); why != "" {
					Skip(why)
				}
			}
		})

		// Why: a failed spec is diagnosed from the broker side too: attach what the broker
		// logged while it ran (sharedbroker.go).
		BeforeEach(func() { markBrokerLog(env) })
		AfterEach(func(_ SpecContext) { attachBrokerLog() }, NodeTimeout(10*time.Second))

		delivery(env)
		groups(env)
		acks(env)
		restart(env)
		privateBrokerArea(env) // R4, R6, F1, F2, F3, F4, F6
		failover(env)
		retention(env)
		lifecycle(env)
		security(env)
		workloadArea(env) // W1: the generative workload (specs/workload.go)
	})
	return true
}
