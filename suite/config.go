package suite

import (
	"fmt"
	"os"

	"github.com/pubsub-conformance/harness/backends"
)

// BaseConfig is the Config every client of backend name starts from: its settings are the
// environment's (the variables its Descriptor reads: KAFKA_DEBUG, KAFKA_CONFIG_<KEY>, ...), then
// broker (a broker's endpoint settings, fixtures.Endpoints.Settings; nil for none), then the
// Descriptor's fixed Settings; retention overrides come from PUBSUB_RETENTION_<CLASS>.
func BaseConfig(name string, broker map[string]string) (backends.Config, error) {
	d, err := backends.Lookup(name)
	if err != nil {
		return backends.Config{}, err
	}
	ret, err := backends.RetentionFromEnv(os.Getenv)
	if err != nil {
		return backends.Config{}, fmt.Errorf("configuration from env: %w", err)
	}
	return backends.Config{
		Backend:   name,
		Settings:  backends.Layer(d.EnvSettings(os.Environ()), broker, d.Settings),
		Retention: ret,
	}, nil
}

// Settings returns the non-secret settings of cfg for report metadata.
func Settings(cfg backends.Config) map[string]any {
	s := map[string]any{"backend": cfg.Backend}
	d, err := backends.Lookup(cfg.Backend)
	if err != nil {
		return s
	}
	for k, v := range d.Public(cfg.Settings) {
		s[k] = v
	}
	if len(cfg.Retention) > 0 {
		r := map[string]string{}
		for c, d := range cfg.Retention {
			r[string(c)] = d.String()
		}
		s["retention"] = r
	}
	return s
}
