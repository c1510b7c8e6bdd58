package pulsar

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsaradmin/pkg/utils"

	"github.com/pubsub-conformance/harness/backends"
)

// A Producer or Consumer on a topic this Backend created or found asks the admin API to
// create it once: each ask of a topic that exists is a 409 the broker's web threads pay for
// (about 2,200 a Pulsar conformance run, most of the admin API's 9 CPU-s). After its own
// DeleteTopic it asks again. And when another client deleted the topic meanwhile, in a
// namespace whose topics the broker does not auto-create, Producer and Consumer still get the
// topic (C-PROD-1, C-SUB-1): the "topic not found" answer sends them through the create.
func TestIntegrationKnownTopicsAreCreatedOnce(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cfg := brokerConfig(t, false)
	target, err := url.Parse(cfg.Settings["PULSAR_ADMIN_URL"])
	if err != nil || target.Host == "" {
		t.Fatalf("admin URL %q: %v", cfg.Settings["PULSAR_ADMIN_URL"], err)
	}
	var creates atomic.Int32 // PUTs of a topic
	proxy := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut && (strings.HasPrefix(r.URL.Path, "/admin/v2/persistent/") || strings.HasPrefix(r.URL.Path, "/admin/v2/non-persistent/")) {
			creates.Add(1)
		}
		proxy.ServeHTTP(w, r)
	}))
	defer srv.Close()
	counted, err := New(ctx, cfg.WithSettings(map[string]string{"PULSAR_ADMIN_URL": srv.URL}))
	if err != nil {
		t.Fatalf("new: %v", err)
	}
	defer counted.Close(context.Background())
	b := counted.(*Backend)
	other := open(t, false)

	topic := uniqueTopic("flow")
	use := func(what string) {
		t.Helper()
		p, err := b.Producer(ctx, topic)
		if err != nil {
			t.Fatalf("%s: producer: %v", what, err)
		}
		if err := p.Send(ctx, backends.Message{Payload: []byte(what)}); err != nil {
			t.Fatalf("%s: send: %v", what, err)
		}
		_ = p.Close(ctx)
		c, err := b.Consumer(ctx, topic, "s")
		if err != nil {
			t.Fatalf("%s: consumer: %v", what, err)
		}
		_ = c.Close(ctx)
	}
	use("first")
	use("second")
	if n := creates.Load(); n != 1 {
		t.Errorf("two producers and two consumers of one topic asked to create it %d times, want 1", n)
	}
	if err := b.DeleteTopic(ctx, topic); err != nil {
		t.Fatal(err)
	}
	use("after its own delete")
	if n := creates.Load(); n != 2 {
		t.Errorf("after the backend's own DeleteTopic: %d creates in all, want 2", n)
	}

	// The broker may not auto-create the namespace's topics; another client deletes the topic.
	r, err := b.resolve(topic)
	if err != nil {
		t.Fatal(err)
	}
	ns, err := utils.GetNameSpaceName(r.tenant, r.namespace)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.admin.client.Namespaces().SetTopicAutoCreation(*ns, utils.TopicAutoCreationConfig{Allow: false, Type: utils.NonPartitioned}); err != nil {
		t.Fatalf("disable auto-creation in %s: %v", ns, err)
	}
	for _, open := range []string{"producer", "consumer"} {
		if err := other.DeleteTopic(ctx, topic); err != nil {
			t.Fatal(err)
		}
		var err error
		if open == "producer" {
			var p backends.Producer
			if p, err = b.Producer(ctx, topic); err == nil {
				_ = p.Close(ctx)
			}
		} else {
			var c backends.Consumer
			if c, err = b.Consumer(ctx, topic, "s"); err == nil {
				_ = c.Close(ctx)
			}
		}
		if err != nil {
			t.Fatalf("%s on a topic another client deleted, no auto-creation: %v", open, err)
		}
		if ok, err := b.TopicExists(ctx, topic); err != nil || !ok {
			t.Fatalf("after the %s: topic exists %v, %v", open, ok, err)
		}
	}
	// Each went through the create on "topic not found", not through an auto-creation.
	if n := creates.Load(); n != 4 {
		t.Errorf("after the opens of a topic another client deleted: %d creates in all, want 4", n)
	}
}
