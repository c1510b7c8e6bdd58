package remote

import "github.com/pubsub-conformance/harness/backends"

// configSettings is cfg's settings under TrustGraph's names. TEMPORARY until backends.Config
// carries Settings (issue #10's "one record per backend"): then it is cfg.Settings.
func configSettings(cfg backends.Config) map[string]string { return nil }
