package backends

import "context"

// SubscriptionDeleter is an optional admin operation: remove a named subscription of a topic
// together with its position, so a later Consumer with that name starts fresh.
//
// Who calls it: operators' tooling and the application's cleanup of retired subscriptions, on
// demand, never as part of closing a Consumer (Close keeps the subscription; see Consumer). The
// subscription must have no connected consumer. Idempotent: deleting a missing subscription
// (or one of a missing topic) is not an error. Check for it with a type assertion.
type SubscriptionDeleter interface {
	DeleteSubscription(ctx context.Context, topic, subscription string) error
}
