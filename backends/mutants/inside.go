package mutants

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"

	"github.com/pubsub-conformance/harness/backends"
)

// The building blocks of the variants whose defect lives inside a real backend. Each backend's
// own records are a file of this package named after it (kafka.go, ...), with its own
// setting names; each record only switches on ordinary, documented settings of the backend
// (or calls a genuine admin operation at the wrong moment): the backends carry no test-only
// code for them. The defects several backends share are built here once.

// WithSettings returns a Configure that lays fixed settings over a variant's Config.
func WithSettings(s map[string]string) func(*backends.Config) {
	s = maps.Clone(s)
	return func(cfg *backends.Config) { *cfg = cfg.WithSettings(s) }
}

// CloseUnsubscribes is the record of close-unsubscribes for the given bases, whose backends
// implement backends.SubscriptionDeleter: Close also deletes the subscription.
func CloseUnsubscribes(bases ...string) Variant {
	return Variant{
		Name:    "close-unsubscribes",
		Catches: []string{"R1", "R2"},
		Defect:  "Consumer.Close also deletes the subscription and its position (TrustGraph's unsubscribe() on close)",
		Bases:   bases,
		Wrap: func(b backends.Backend) backends.Backend {
			del, ok := b.(backends.SubscriptionDeleter)
			if !ok {
				return b // a base this applies to implements it; the base run shows if not
			}
			return &backend{Backend: b, wrapNamed: func(c backends.Consumer, topic, sub string) backends.Consumer {
				return &unsubscribing{Consumer: c, del: del, topic: topic, sub: sub}
			}}
		},
	}
}

// AuthAdminOnly is the record of auth-admin-only for the given bases: moved maps each
// data-path credential setting of the backend to the admin-only setting that carries the same
// value to the admin client alone.
func AuthAdminOnly(moved map[string]string, bases ...string) Variant {
	return Variant{
		Name:      "auth-admin-only",
		Catches:   []string{"S1"},
		Defect:    "the credentials reach the admin client but not the producer or consumer",
		Bases:     bases,
		Configure: MoveSettings(moved),
	}
}

// MoveSettings returns a Configure that moves each set setting from a key of moved to its
// value (and clears the original): a misconfiguration the settings make possible. It runs in
// the variant's constructor, after the suite built the Config from the environment and the
// broker.
func MoveSettings(moved map[string]string) func(*backends.Config) {
	moved = maps.Clone(moved)
	return func(cfg *backends.Config) {
		changes := map[string]string{}
		for _, from := range slices.Sorted(maps.Keys(moved)) {
			if v := cfg.Setting(from); v != "" {
				changes[moved[from]], changes[from] = v, ""
			}
		}
		if len(changes) > 0 {
			*cfg = cfg.WithSettings(changes)
		}
	}
}

// unsubscribing closes, then deletes the subscription it was created on.
type unsubscribing struct {
	backends.Consumer
	del        backends.SubscriptionDeleter
	topic, sub string
}

func (c *unsubscribing) Close(ctx context.Context) error {
	err := c.Consumer.Close(ctx)
	if derr := c.del.DeleteSubscription(ctx, c.topic, c.sub); derr != nil {
		err = errors.Join(err, fmt.Errorf("close-unsubscribes: %w", derr))
	}
	return err
}

// RaceOdds is how rarely the race variants lose the race: one Consumer() call in RaceOdds.
const RaceOdds = 20

// SometimesRacy is the Open of a race variant: Consumer() returns before the subscription is
// live in only one call of RaceOdds, as an intermittent race does in the field. It mixes two
// clients of the base on the same broker: a working one, and one with racySettings (the
// backend's documented no-wait opt-out), to which a random one call in RaceOdds goes. A spec
// that opens one subscription per run misses it nineteen times in twenty; D2 must not.
func SometimesRacy(racySettings map[string]string) func(context.Context, backends.Config) (backends.Backend, error) {
	racySettings = maps.Clone(racySettings)
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
	if rand.IntN(RaceOdds) == 0 {
		return b.racy.Consumer(ctx, topic, sub, opts...)
	}
	return b.Backend.Consumer(ctx, topic, sub, opts...)
}

func (b *racyBackend) Close(ctx context.Context) error {
	return errors.Join(b.racy.Close(ctx), b.Backend.Close(ctx))
}
