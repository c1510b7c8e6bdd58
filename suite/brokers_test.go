package suite

import (
	"testing"

	"github.com/pubsub-conformance/harness/fixtures"
)

// A private broker is started auth-enabled exactly where the kind's shared broker has no
// authenticated listener (Pulsar): there the private-broker area's broker serves S1 and S2
// (specs.Env.AuthOnPrivateBroker) and every client of it needs good credentials. Kafka's and
// RabbitMQ's private brokers stay plain: their S1 and S2 run on the shared broker, and an
// auth-enabled private broker would only make their restart and fault specs pay for it.
func TestPrivateOptions(t *testing.T) {
	cases := []struct {
		kind      fixtures.Kind
		proxy     bool
		wantAuth  bool
		wantProxy bool
	}{
		{fixtures.Pulsar, false, true, false},
		{fixtures.Pulsar, true, true, true},
		{fixtures.Kafka, true, false, true},
		{fixtures.Kafka, false, false, false},
		{fixtures.RabbitMQ, true, false, true},
	}
	for _, tc := range cases {
		var extra []fixtures.Option
		if tc.proxy {
			extra = append(extra, fixtures.WithFaultProxy())
		}
		s := fixtures.Apply(privateOptions(tc.kind, func(string, ...any) {}, extra...)...)
		if s.Auth != tc.wantAuth || s.FaultProxy != tc.wantProxy || s.Progress == nil {
			t.Errorf("privateOptions(%s, proxy %v): Auth %v FaultProxy %v progress set %v; want Auth %v FaultProxy %v, progress set",
				tc.kind, tc.proxy, s.Auth, s.FaultProxy, s.Progress != nil, tc.wantAuth, tc.wantProxy)
		}
	}
}
