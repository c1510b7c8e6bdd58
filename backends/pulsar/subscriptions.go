package pulsar

import (
	"context"
	"fmt"

	"github.com/pubsub-conformance/harness/backends"
)

var _ backends.SubscriptionDeleter = (*Backend)(nil)

// adminToken is the token admin calls send: PULSAR_ADMIN_API_KEY when administration uses
// its own role, else the data path's PULSAR_API_KEY.
func adminToken(pc Config) string {
	if pc.AdminAPIKey != "" {
		return pc.AdminAPIKey
	}
	return pc.APIKey
}

// DeleteSubscription implements backends.SubscriptionDeleter with the admin call
// (pulsaradmin Subscriptions().Delete): the subscription and its cursor go. A missing topic or
// subscription (404) is success. Unique (fan-out) subscriptions have generated names and are
// not addressed by this name.
func (b *Backend) DeleteSubscription(ctx context.Context, topic, subscription string) error {
	if err := b.checkOpen("delete subscription"); err != nil {
		return err
	}
	r, err := b.resolve(topic)
	if err != nil {
		return err
	}
	if subscription == "" {
		return fmt.Errorf("%w: pulsar: empty subscription name", backends.ErrInvalidConfig)
	}
	if err := b.admin.deleteSubscription(ctx, r, subscription); err != nil {
		return fmt.Errorf("pulsar: delete subscription %s of %s: %w", subscription, r.fullName(), err)
	}
	b.forgetAcks(r, subscription)
	return nil
}
