// Package modroot finds the harness module's root directory, so that tools and suites run from
// any directory of the module (go test runs a package in its own directory) agree on paths such
// as reports/out.
package modroot

import (
	"fmt"
	"os"
	"path/filepath"
)

// Find walks up from the working directory to the first directory holding a go.mod.
func Find() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("module root: %w", err)
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.mod above %s: run from the harness module", dir)
		}
	}
}
