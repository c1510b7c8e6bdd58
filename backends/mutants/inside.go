package mutants

import (
	"context"
	"errors"
	"fmt"

	"github.com/pubsub-conformance/harness/backends"
)

// The variants whose defect lives inside a real backend. Each one only switches on an ordinary,
// documented setting of the backend (or calls a genuine admin operation at the wrong moment);
// the backends carry no test-only code for them. They are Declared: a backend's Descriptor
// names the ones it can express (backends.Descriptor.Variants).

func init() {
	Catalogue = append(Catalogue,
		Variant{
			Name:    "latest-race",
			Catches: []string{"D2"},
			Defect:  "Consumer() returns before the partition assignment and the group starts at latest (TrustGraph's blocking bug)",
			// Kafka only: Pulsar's Subscribe returns after the broker created the subscription,
			// so the client offers no way to return earlier; the defect does not exist there.
			Declared: true,
			Configure: func(cfg *backends.Config) {
				*cfg = cfg.WithSettings(map[string]string{
					"KAFKA_CONSUMER_NO_WAIT":         "true",
					"KAFKA_CONFIG_AUTO_OFFSET_RESET": "latest",
				})
			},
		},
		Variant{
			Name:     "close-unsubscribes",
			Catches:  []string{"R1", "R2"},
			Defect:   "Consumer.Close also deletes the subscription and its position (TrustGraph's unsubscribe() on close)",
			Declared: true,
			Wrap: func(b backends.Backend) backends.Backend {
				del, ok := b.(backends.SubscriptionDeleter)
				if !ok {
					return b // a backend declaring this variant implements it; the base run shows if not
				}
				return &backend{Backend: b, wrapNamed: func(c backends.Consumer, topic, sub string) backends.Consumer {
					return &unsubscribing{Consumer: c, del: del, topic: topic, sub: sub}
				}}
			},
		},
		Variant{
			Name:    "acks-leader-only",
			Catches: []string{"F5"},
			Defect:  "the producer takes the partition leader's acknowledgement alone (acks=1, no idempotence): a write the leader confirmed but had not yet replicated is lost when the leader dies",
			// Kafka only: a Pulsar producer's receipt always comes after the bookies' write
			// quorum; there is no client setting that weakens it.
			Declared: true,
			Configure: func(cfg *backends.Config) {
				*cfg = cfg.WithSettings(map[string]string{
					"KAFKA_CONFIG_ACKS": "1",
					// librdkafka refuses acks other than all with the idempotent producer.
					"KAFKA_CONFIG_ENABLE_IDEMPOTENCE": "false",
				})
			},
		},
		Variant{
			Name:      "auth-admin-only",
			Catches:   []string{"S1"},
			Defect:    "the credentials reach the admin client but not the producer or consumer",
			Declared:  true,
			Configure: adminOnlyCredentials,
		},
	)
}

// adminOnly maps each data-path credential setting to the admin-only setting that carries the
// same value to the admin client alone (KAFKA_ADMIN_CONFIG_<KEY> is a librdkafka property of
// the admin client; PULSAR_ADMIN_API_KEY the admin REST calls' token).
var adminOnly = map[string]string{
	"KAFKA_SECURITY_PROTOCOL": "KAFKA_ADMIN_CONFIG_SECURITY_PROTOCOL",
	"KAFKA_SASL_MECHANISM":    "KAFKA_ADMIN_CONFIG_SASL_MECHANISMS",
	"KAFKA_SASL_USERNAME":     "KAFKA_ADMIN_CONFIG_SASL_USERNAME",
	"KAFKA_SASL_PASSWORD":     "KAFKA_ADMIN_CONFIG_SASL_PASSWORD",
	"PULSAR_API_KEY":          "PULSAR_ADMIN_API_KEY",
}

// adminOnlyCredentials moves the data path's credentials to the admin-only settings: a
// misconfiguration the settings make possible. It runs in the variant's constructor, after the
// suite built the Config from the environment and the broker.
func adminOnlyCredentials(cfg *backends.Config) {
	changes := map[string]string{}
	for from, to := range adminOnly {
		if v := cfg.Setting(from); v != "" {
			changes[to], changes[from] = v, ""
		}
	}
	if len(changes) > 0 {
		*cfg = cfg.WithSettings(changes)
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
