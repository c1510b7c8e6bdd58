package mutants

import (
	"context"
	"errors"
	"math/rand/v2"

	"github.com/pubsub-conformance/harness/backends"
)

// raceOdds is how rarely the race variants lose the race: one Consumer() call in raceOdds.
const raceOdds = 20

// Race variants: Consumer() returns before the subscription is live in only one call of
// raceOdds, as an intermittent race does in the field. Each mixes two clients of the base on the
// same broker: a working one, and one with the backend's documented no-wait opt-out, to which a
// random one call in raceOdds goes. A spec that opens one subscription per run misses it
// nineteen times in twenty; D2 must not.
func init() {
	Catalogue = append(Catalogue,
		Variant{
			Name:     "latest-race-1in20",
			Catches:  []string{"D2"},
			Defect:   "one Consumer() call in 20 returns before the group assignment fixed the start position, and the group then starts at latest",
			Declared: true,
			Open: sometimesRacy(map[string]string{
				"KAFKA_CONSUMER_NO_WAIT":         "true",
				"KAFKA_CONFIG_AUTO_OFFSET_RESET": "latest",
			}),
		},
		Variant{
			Name:     "permits-race-1in20",
			Catches:  []string{"D2"},
			Defect:   "one Consumer() call in 20 on a non-persistent topic returns before the broker granted the consumer permits",
			Declared: true,
			Open:     sometimesRacy(map[string]string{"PULSAR_CONSUMER_NO_WAIT": "true"}),
		},
	)
}

func sometimesRacy(racySettings map[string]string) func(context.Context, backends.Config) (backends.Backend, error) {
	return func(ctx context.Context, cfg backends.Config) (backends.Backend, error) {
		good, err := backends.Open(ctx, cfg)
		if err != nil {
			return nil, err
		}
		racy, err := backends.Open(ctx, cfg.WithSettings(racySettings))
		if err != nil {
			_ = good.Close(ctx)
			return nil, err
		}
		return &racyBackend{Backend: good, racy: racy}, nil
	}
}

type racyBackend struct {
	backends.Backend
	racy backends.Backend
}

func (b *racyBackend) Consumer(ctx context.Context, topic, sub string, opts ...backends.ConsumerOption) (backends.Consumer, error) {
	if rand.IntN(raceOdds) == 0 {
		return b.racy.Consumer(ctx, topic, sub, opts...)
	}
	return b.Backend.Consumer(ctx, topic, sub, opts...)
}

func (b *racyBackend) Close(ctx context.Context) error {
	return errors.Join(b.racy.Close(ctx), b.Backend.Close(ctx))
}
