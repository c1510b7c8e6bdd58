package kafka

import (
	"context"
	"errors"
	"fmt"
	"time"

	ck "github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/pubsub-conformance/harness/backends"
)

// This file holds the optional features around the core backend: a separate admin client
// (Config.AdminExtra), the no-wait Consumer (Config.ConsumerNoWait, applied in
// Consumer) and subscription deletion (backends.SubscriptionDeleter).

var _ backends.SubscriptionDeleter = (*Backend)(nil)

// newAdmin returns the admin client: the producer's handle (one connection set for both) unless
// AdminExtra asks for admin-specific settings, such as another principal's credentials; then a
// separate admin client built from the common settings, Extra and AdminExtra, in that order.
// Close destroys either kind (AdminClient.Close of a derived client leaves the producer alone).
func (b *Backend) newAdmin() (*ck.AdminClient, error) {
	if len(b.kc.AdminExtra) == 0 {
		return ck.NewAdminClientFromProducer(b.prod)
	}
	if err := validateExtra(b.kc.AdminExtra); err != nil {
		return nil, fmt.Errorf("kafka admin config: %w", err)
	}
	m := withExtra(b.base, nil, b.kc.Extra)
	for k, v := range b.kc.AdminExtra {
		m[k] = v
	}
	// A standalone admin client refuses the Go log channel; its librdkafka logs go to stderr.
	delete(m, "go.logs.channel")
	delete(m, "go.logs.channel.enable")
	a, err := ck.NewAdminClient(&m)
	if err != nil {
		return nil, configErr(err, b.kc.AdminExtra)
	}
	return a, nil
}

// DeleteSubscription implements backends.SubscriptionDeleter: it deletes the consumer group of
// the shared subscription (its committed offsets, for every topic). The group must have no live
// member; a missing group is not an error. Unique (fan-out) subscriptions have per-consumer
// groups with generated names and nothing to delete by name.
func (b *Backend) DeleteSubscription(ctx context.Context, topic, subscription string) error {
	if _, err := backends.ParseTopic(topic); err != nil {
		return err
	}
	group, err := groupName(subscription, backends.Shared)
	if err != nil {
		return err
	}
	release, err := b.acquire()
	if err != nil {
		return err
	}
	defer release()
	ctx, cancel := withDefault(ctx)
	defer cancel()
	// A member that just left may still be counted for a moment: retry "non-empty" briefly.
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		err := b.deleteGroup(ctx, group)
		if err == nil || !errors.Is(err, errNonEmptyGroup) {
			return err
		}
		select {
		case <-ctx.Done():
			return mapErr(ctx, "kafka delete group "+group+" (it still has members)", err)
		case <-tick.C:
		}
	}
}

var errNonEmptyGroup = errors.New("group has members")

func (b *Backend) deleteGroup(ctx context.Context, group string) error {
	res, err := b.admin.DeleteConsumerGroups(ctx, []string{group})
	if err != nil {
		return mapErr(ctx, "kafka delete group "+group, err)
	}
	for _, r := range res.ConsumerGroupResults {
		switch r.Error.Code() {
		case ck.ErrNoError, ck.ErrGroupIDNotFound:
		case ck.ErrNonEmptyGroup:
			return fmt.Errorf("kafka delete group %s: %w: %w", group, errNonEmptyGroup, r.Error)
		default:
			return mapErr(ctx, "kafka delete group "+group, r.Error)
		}
	}
	return nil
}
