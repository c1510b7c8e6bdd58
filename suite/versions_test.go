package suite

import (
	"strings"
	"testing"

	"github.com/pubsub-conformance/harness/backends"
	"github.com/pubsub-conformance/harness/fixtures"
)

func TestBrokerTooOldSkipsABackendOnAnOlderRelease(t *testing.T) {
	// Not registered: this test is linked into the suite binary, whose registry users see.
	d := backends.Descriptor{Name: "versions-test-needs-4", Broker: string(fixtures.Kafka), MinBroker: "4.0.0", MinBrokerWhy: "it needs KIP-848"}
	sh := &Shared{Brokers: map[fixtures.Kind]fixtures.Endpoints{fixtures.Kafka: {Kind: fixtures.Kafka, Version: "3.9.1"}}}
	why := brokerTooOld(d, sh)
	if !strings.Contains(why, "needs kafka 4.0.0 or later, this run's broker is 3.9.1: it needs KIP-848") {
		t.Errorf("3.9.1: %q", why)
	}
	for _, v := range []string{"4.0.0", "4.4.0", ""} {
		sh.Brokers[fixtures.Kafka] = fixtures.Endpoints{Kind: fixtures.Kafka, Version: v}
		if why := brokerTooOld(d, sh); why != "" {
			t.Errorf("%q: %s", v, why)
		}
	}
}
