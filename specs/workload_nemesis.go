package specs

import (
	"fmt"
	"os"
	"time"

	. "github.com/onsi/ginkgo/v2"

	"github.com/pubsub-conformance/harness/backends"
	"github.com/pubsub-conformance/harness/internal/workload"
)

// W2: W1's programs under a nemesis schedule (internal/workload/nemesis.go) on a private
// broker behind the fault proxy: cuts, latency, connections reset when the broker answers,
// answers cut off (limit_data), the broker paused (SIGSTOP) and restarted, a consumer's client
// killed; each fault shorter or longer than the Kafka backend's 6 s group session. A program
// with its faults and drain takes about a minute on a broker, so W2 does not fit `make
// conformance`'s 30 s per backend: it runs when PUBSUB_NEMESIS is set (`make soak NEMESIS=1`)
// and skips with that reason otherwise, before any broker starts.
//
// Settings (environment) beside W1's budget, seed and shrink:
//
//	PUBSUB_NEMESIS        set (any value): run W2
//	PUBSUB_NEMESIS_SHORT  a short fault (default 2s: within every client's session)
//	PUBSUB_NEMESIS_LONG   a long fault (default 9s: longer than the Kafka backend's 6 s session)
const (
	nemesisEnv      = "PUBSUB_NEMESIS"
	nemesisShortEnv = "PUBSUB_NEMESIS_SHORT"
	nemesisLongEnv  = "PUBSUB_NEMESIS_LONG"
	// nemesisDelay is FaultLatency's latency each way (F2's is 200 ms).
	nemesisDelay = 300 * time.Millisecond
)

func nemesisArea(env *Env) {
	Describe("under a nemesis", Ordered, func() {
		area := &faultArea{}
		BeforeAll(func(ctx SpecContext) {
			if os.Getenv(nemesisEnv) == "" {
				area.skip = fmt.Sprintf("W2 runs only with %s set (make soak NEMESIS=1): a program under faults takes about a minute on a private broker, more than make conformance's 30 s per backend", nemesisEnv)
				return
			}
			area.start(ctx, env.Backend, "private broker behind a fault proxy", env.FaultyBroker)
		}, NodeTimeout(3*time.Minute))
		AfterEach(func(ctx SpecContext) {
			if nb, ok := any(area.b).(NemesisBroker); ok && area.started() {
				_ = nb.Resume(ctx) // never leave a paused broker behind (a no-op when running)
			}
			afterFault(ctx, area)
		}, NodeTimeout(callWithin))
		Behaviour("W2", func(ctx SpecContext) { runNemesis(ctx, env, area) }, SpecTimeout(workloadTimeout("W2", workloadProgramMax)+3*time.Minute))
	})
}

func runNemesis(ctx SpecContext, env *Env, area *faultArea) {
	fb := area.broker()
	ws := workloadSettings("W2")
	short := mustWorkloadDuration(nemesisShortEnv, 2*time.Second)
	long := mustWorkloadDuration(nemesisLongEnv, 9*time.Second)
	nem := &workload.Nemesis{
		Cut: fb.Cut, Heal: fb.Heal, Latency: fb.SetLatency, Restart: fb.Restart,
		Short: short, Long: long, Delay: nemesisDelay,
	}
	var notes []string
	if nb, ok := fb.(NemesisBroker); ok {
		nem.ResetPeer, nem.LimitData, nem.Pause, nem.Resume = nb.ResetPeer, nb.LimitData, nb.Pause, nb.Resume
	} else {
		notes = append(notes, "reset, limit, pause: this private broker cannot (no NemesisBroker)")
	}
	// Kill needs a client that can be killed without a Close (backends.Killer): the
	// out-of-process adapters, RabbitMQ's and the reference's; Kafka's and Pulsar's Go
	// clients cannot be dropped like a crashed process inside this one (R5, R7 and R8 kill a
	// child process on the run's broker instead).
	probe := openFaulty(ctx, fb)
	if _, ok := probe.(backends.Killer); ok {
		nem.Open = fb.Open
	} else {
		notes = append(notes, fmt.Sprintf("kill: %s's client has no Kill (backends.Killer)", env.Backend))
	}
	if len(notes) > 0 {
		AddReportEntry("nemesis: faults not drawn", ReportEntryVisibilityFailureOrVerbose, fmt.Sprint(notes))
	}
	runPrograms(ctx, env, probe, ws, nem)
}
