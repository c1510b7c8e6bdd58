package pulsar

import (
	"context"
	"fmt"
	"net/http"
	"net/url"

	"github.com/pubsub-conformance/harness/backends"
)

var _ backends.SubscriptionDeleter = (*Backend)(nil)

// adminToken is the token admin REST calls send: PULSAR_ADMIN_API_KEY when administration uses
// its own role, else the data path's PULSAR_API_KEY.
func adminToken(pc Config) string {
	if pc.AdminAPIKey != "" {
		return pc.AdminAPIKey
	}
	return pc.APIKey
}

// DeleteSubscription implements backends.SubscriptionDeleter with the admin REST call
// DELETE .../subscription/{name}: the subscription and its cursor go. A missing topic or
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
	err = b.admin.do(ctx, http.MethodDelete, topicPath(r)+"/subscription/"+url.PathEscape(subscription), nil, nil)
	if statusOf(err) == http.StatusNotFound {
		return nil
	}
	if err != nil {
		return fmt.Errorf("pulsar: delete subscription %s of %s: %w", subscription, r.fullName(), err)
	}
	return nil
}
