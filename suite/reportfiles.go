package suite

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/pubsub-conformance/harness/internal/modroot"
	"github.com/pubsub-conformance/harness/reports"
	"github.com/pubsub-conformance/harness/suite/run"
)

// ReportDir is where report files go: PUBSUB_REPORT_DIR (a relative path is taken from the
// module root), else reports/out at the module root. The root is found by walking up to go.mod,
// so `go test ./suite` and `ginkgo ./suite` (which run in suite/) agree with `make`.
func ReportDir() (string, error) {
	root, err := modroot.Find()
	d := os.Getenv("PUBSUB_REPORT_DIR")
	switch {
	case d != "" && filepath.IsAbs(d):
	case err != nil:
		return "", fmt.Errorf("report dir: %w; set PUBSUB_REPORT_DIR to an absolute path", err)
	case d != "":
		d = filepath.Join(root, d)
	default:
		d = filepath.Join(root, "reports", "out")
	}
	if err := os.MkdirAll(d, 0o755); err != nil {
		return "", fmt.Errorf("report dir: %w", err)
	}
	return d, nil
}

// NewMeta describes the run of target t: the sidecar reports/out/meta-<column>.json, named
// by t's column (InRun: another broker release, isolation mode).
func NewMeta(t run.Target, sh *Shared, suiteTime time.Duration) reports.Meta {
	d := t.Descriptor
	m := reports.Meta{
		Backend:       t.Column.String(),
		Isolated:      t.Column.Isolated,
		Reference:     d.Reference,
		Description:   d.Description,
		Source:        d.Source,
		Provider:      sh.Provider,
		ProviderWhy:   sh.ProviderWhy,
		BrokerStartup: map[string]float64{},
		StartedAt:     sh.StartedAt.Format(time.RFC3339Nano),
		SuiteSeconds:  suiteTime.Seconds(),
	}
	var broker map[string]string
	if t.NeedsBroker() {
		ep := sh.Brokers[t.Kind]
		m.BrokerVersion = ep.Version
		m.BrokerStartup[string(t.Kind)] = ep.StartupTime.Seconds()
		broker = ep.Settings()
	} else {
		m.Provider = "none (in-process reference)"
	}
	if cfg, err := t.BaseConfig(broker); err == nil {
		m.Settings = t.Settings(cfg)
	}
	return m
}
