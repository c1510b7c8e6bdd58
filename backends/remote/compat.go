package remote

import (
	"strconv"
	"strings"

	"github.com/pubsub-conformance/harness/backends"
)

// configSettings is cfg's settings under TrustGraph's names. TEMPORARY until backends.Config
// carries Settings (issue #10's "one record per backend"): then it is cfg.Settings.
func configSettings(cfg backends.Config) map[string]string {
	s := map[string]string{}
	set := func(k, v string) {
		if v != "" {
			s[k] = v
		}
	}
	k, p := cfg.Kafka, cfg.Pulsar
	set("KAFKA_BOOTSTRAP_SERVERS", k.BootstrapServers)
	set("KAFKA_SECURITY_PROTOCOL", k.SecurityProtocol)
	set("KAFKA_SASL_MECHANISM", k.SASLMechanism)
	set("KAFKA_SASL_USERNAME", k.SASLUsername)
	set("KAFKA_SASL_PASSWORD", k.SASLPassword)
	set("KAFKA_SSL_CA_LOCATION", k.SSLCALocation)
	for key, v := range k.Extra {
		set("KAFKA_CONFIG_"+strings.ToUpper(strings.ReplaceAll(key, ".", "_")), v)
	}
	if k.ReplicationFactor > 0 {
		set("KAFKA_REPLICATION_FACTOR", strconv.Itoa(k.ReplicationFactor))
	}
	set("PULSAR_HOST", p.Host)
	set("PULSAR_ADMIN_URL", p.AdminURL)
	set("PULSAR_API_KEY", p.APIKey)
	if p.AllPersistent {
		set("PULSAR_ALL_PERSISTENT", "true")
	}
	return s
}
