package mutants

import (
	"context"
	"errors"
	"fmt"
	"maps"

	"github.com/pubsub-conformance/harness/backends"
)

// The variants whose defect lives inside a real backend. Each one only switches on an ordinary,
// documented option of the backend (or calls a genuine admin operation at the wrong moment);
// the backends carry no test-only code for them.
var brokerBases = []string{"kafka", "pulsar", "pulsar-persistent"}

func init() {
	Catalogue = append(Catalogue,
		Variant{
			Name:    "latest-race",
			Catches: []string{"D2"},
			Defect:  "Consumer() returns before the partition assignment and the group starts at latest (TrustGraph's blocking bug)",
			// Pulsar's Subscribe returns after the broker created the subscription, so the
			// client offers no way to return earlier: the defect does not exist there.
			Bases: []string{"kafka"},
			Configure: func(cfg *backends.Config) {
				cfg.Kafka.ConsumerNoWait = true
				extra := maps.Clone(cfg.Kafka.Extra)
				if extra == nil {
					extra = map[string]string{}
				}
				extra["auto.offset.reset"] = "latest"
				cfg.Kafka.Extra = extra
			},
		},
		Variant{
			Name:    "close-unsubscribes",
			Catches: []string{"R1", "R2"},
			Defect:  "Consumer.Close also deletes the subscription and its position (TrustGraph's unsubscribe() on close)",
			Bases:   brokerBases,
			Wrap: func(b backends.Backend) backends.Backend {
				del, ok := b.(backends.SubscriptionDeleter)
				if !ok {
					return b // cannot happen for the bases above: their backends implement it
				}
				return &backend{Backend: b, wrapNamed: func(c backends.Consumer, topic, sub string) backends.Consumer {
					return &unsubscribing{Consumer: c, del: del, topic: topic, sub: sub}
				}}
			},
		},
		Variant{
			Name:      "auth-admin-only",
			Catches:   []string{"S1"},
			Defect:    "the credentials reach the admin client but not the producer or consumer",
			Bases:     brokerBases,
			Configure: adminOnlyCredentials,
		},
	)
}

// adminOnlyCredentials moves the data path's credentials to the admin-only settings
// (KAFKA_ADMIN_CONFIG_*, PULSAR_ADMIN_API_KEY): a misconfiguration the options make possible.
// It runs in the variant's constructor, after the suite built the Config from the broker.
func adminOnlyCredentials(cfg *backends.Config) {
	k := &cfg.Kafka
	admin := maps.Clone(k.AdminExtra)
	move := func(key string, v *string) {
		if *v == "" {
			return
		}
		if admin == nil {
			admin = map[string]string{}
		}
		admin[key] = *v
		*v = ""
	}
	move("security.protocol", &k.SecurityProtocol)
	move("sasl.mechanisms", &k.SASLMechanism)
	move("sasl.username", &k.SASLUsername)
	move("sasl.password", &k.SASLPassword)
	k.AdminExtra = admin
	if cfg.Pulsar.APIKey != "" {
		cfg.Pulsar.AdminAPIKey, cfg.Pulsar.APIKey = cfg.Pulsar.APIKey, ""
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
