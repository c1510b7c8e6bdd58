package mutants

import (
	"context"
	"time"

	"github.com/pubsub-conformance/harness/backends"
)

// ackBudget is the fixed time ack-unconfirmed gives its check with the broker: plenty on
// loopback (an admin round trip takes milliseconds), too little when each round trip takes
// 400 ms (F2's 200 ms each way).
const ackBudget = 150 * time.Millisecond

// Variants whose defect shows only on a slow network (F2): they decorate the contract, so
// they apply to every base, the reference included.
var latencyVariants = []Variant{
	Variant{
		Name:    "ack-unconfirmed",
		Catches: []string{"F2"},
		Defect: "Ack first checks the delivery's topic with the broker under a fixed 150 ms budget that ignores the caller's context, " +
			"and when the budget runs out it returns nil without acknowledging: on a fast network every ack lands, " +
			"under 200 ms of latency each way none does and the acked message comes again after a reopen",
		Wrap: func(b backends.Backend) backends.Backend {
			return &backend{Backend: b, wrapNamed: func(c backends.Consumer, topic, _ string) backends.Consumer {
				return &ackUnconfirmed{Consumer: c, admin: b, topic: topic}
			}}
		},
	},
}

// ackUnconfirmed reports an ack as done when its fixed budget ran out (ack-unconfirmed).
type ackUnconfirmed struct {
	backends.Consumer
	admin backends.Backend
	topic string
}

func (c *ackUnconfirmed) Ack(ctx context.Context, d backends.Delivery) error {
	check, cancel := context.WithTimeout(context.Background(), ackBudget)
	defer cancel()
	if _, err := c.admin.TopicExists(check, c.topic); err != nil {
		return nil // the defect: the budget ran out, the ack is skipped and reported done
	}
	return c.Consumer.Ack(ctx, d)
}
