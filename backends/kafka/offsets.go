package kafka

import (
	"context"
	"fmt"
	"time"

	ck "github.com/confluentinc/confluent-kafka-go/v2/kafka"
)

// offsetsCleanupWait bounds how long DeleteTopic waits for the group coordinator to drop the
// deleted topic's committed offsets.
const offsetsCleanupWait = 5 * time.Second

// rememberGroup records a shared group that consumed topic (Kafka name), so DeleteTopic can
// check that the broker dropped its committed offset.
func (b *Backend) rememberGroup(topic, group string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.groups == nil {
		b.groups = map[string]map[string]struct{}{}
	}
	if b.groups[topic] == nil {
		b.groups[topic] = map[string]struct{}{}
	}
	b.groups[topic][group] = struct{}{}
}

// dropOffsets makes delete + create start every old subscription fresh (L3). Kafka 4.1 removes
// a deleted topic's committed offsets itself (the group coordinator is told of deleted
// partitions), but it does so after the topic already vanished from metadata; so, for the
// groups this backend used on the topic, wait until their offsets are really gone. Groups of
// other processes are covered by the consumer's guard: a committed offset beyond the new
// topic's end is treated as stale (see startOffsets).
func (b *Backend) dropOffsets(ctx context.Context, topic string) error {
	b.mu.Lock()
	groups := make([]string, 0, len(b.groups[topic]))
	for g := range b.groups[topic] {
		groups = append(groups, g)
	}
	delete(b.groups, topic)
	b.mu.Unlock()
	if len(groups) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, offsetsCleanupWait)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for _, g := range groups {
		for {
			left, err := b.committed(ctx, g, topic)
			if err == nil && !left {
				break
			}
			select {
			case <-ctx.Done():
				fmt.Fprintf(b.logWriter(), "kafka: group %s still has an offset for deleted topic %s (err %v); consumers will treat it as stale\n", g, topic, err)
				return nil
			case <-tick.C:
			}
		}
	}
	return nil
}

// committed reports whether group has a committed offset for partition 0 of topic.
func (b *Backend) committed(ctx context.Context, group, topic string) (bool, error) {
	res, err := b.admin.ListConsumerGroupOffsets(ctx, []ck.ConsumerGroupTopicPartitions{{
		Group: group, Partitions: []ck.TopicPartition{{Topic: &topic, Partition: 0}},
	}}, ck.SetAdminRequireStableOffsets(true))
	if err != nil {
		return false, err
	}
	for _, g := range res.ConsumerGroupsTopicPartitions {
		for _, p := range g.Partitions {
			if p.Error == nil && p.Offset >= 0 {
				return true, nil
			}
		}
	}
	return false, nil
}
