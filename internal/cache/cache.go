// Package cache names the harness's cache directory: broker jars (fixtures/maven), adapter
// binaries and virtualenvs (backends/remote), the test CA (fixtures/tlsca). It imports nothing
// of the harness, so a backend and a broker fixture can both find the cache without depending
// on each other.
package cache

import (
	"fmt"
	"os"
	"path/filepath"
)

// Root is $PUBSUB_CACHE, else $XDG_CACHE_HOME/pubsub-conformance, else
// ~/.cache/pubsub-conformance.
func Root() (string, error) {
	if d := os.Getenv("PUBSUB_CACHE"); d != "" {
		return d, nil
	}
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "pubsub-conformance"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("find cache dir (set PUBSUB_CACHE): %w", err)
	}
	return filepath.Join(home, ".cache", "pubsub-conformance"), nil
}
