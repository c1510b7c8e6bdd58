package reports

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
)

// Meta is the sidecar a suite run writes next to its JUnit file (reports/out/meta-<backend>.json):
// the one type both sides use, the suite writing it (suite.NewMeta) once per backend run and this
// package reading it.
type Meta struct {
	Backend       string             `json:"backend"`
	Reference     bool               `json:"reference,omitempty"`   // the in-process reference backend: never a conformance result
	Description   string             `json:"description,omitempty"` // what the backend is (e.g. a known-bad variant)
	Source        string             `json:"source,omitempty"`      // the code under test when not the shipped one: a working copy's path, git commit, dirty state
	Provider      string             `json:"provider"`              // local, container, external
	ProviderWhy   string             `json:"providerWhy,omitempty"` // why auto chose that provider
	BrokerVersion string             `json:"brokerVersion"`         // e.g. "4.1.1"
	BrokerStartup map[string]float64 `json:"brokerStartup"`         // seconds until ready, per broker (older files: one number)
	Settings      map[string]any     `json:"settings"`              // the non-secret settings, under their environment names
	StartedAt     string             `json:"startedAt"`             // RFC 3339
	SuiteSeconds  float64            `json:"suiteSeconds"`
	// Selected lists every backend the run selected (its PUBSUB_BACKENDS), this one included:
	// the gate reads a baseline backend none of the runs selected as not selected, not missing.
	Selected []string `json:"selected,omitempty"`
	// Isolated: the run prepared the topics of the specs outside the lifecycle area through the
	// broker's admin (PUBSUB_ISOLATE=topics, docs/isolation.md); a diagnostic column, not gated.
	Isolated bool `json:"isolated,omitempty"`
}

// UnmarshalJSON accepts brokerStartup as an object of seconds per broker or as one number.
func (m *Meta) UnmarshalJSON(b []byte) error {
	type plain Meta
	aux := struct {
		*plain
		BrokerStartup json.RawMessage `json:"brokerStartup"`
	}{plain: (*plain)(m)}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	if len(aux.BrokerStartup) == 0 || string(aux.BrokerStartup) == "null" {
		return nil
	}
	var one float64
	if err := json.Unmarshal(aux.BrokerStartup, &one); err == nil {
		m.BrokerStartup = map[string]float64{"broker": one}
		return nil
	}
	if err := json.Unmarshal(aux.BrokerStartup, &m.BrokerStartup); err != nil {
		return fmt.Errorf("brokerStartup: want seconds per broker ({\"kafka\": 4.2}): %w", err)
	}
	return nil
}

// ReadMeta reads a meta sidecar. A missing file returns an error wrapping os.ErrNotExist.
func ReadMeta(path string) (*Meta, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read meta: %w", err)
	}
	var m Meta
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%s: malformed meta JSON: %w", path, err)
	}
	return &m, nil
}

var secretKey = regexp.MustCompile(`(?i)pass|secret|token|credential|key$`)

// SettingsList renders the settings sorted by key as "key=value", with anything that looks
// like a secret masked: reports end up as CI artifacts.
func (m *Meta) SettingsList() []string {
	if m == nil {
		return nil
	}
	keys := make([]string, 0, len(m.Settings))
	for k := range m.Settings {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		v := m.Settings[k]
		var s string
		switch t := v.(type) {
		case string:
			s = t
		default:
			b, _ := json.Marshal(t)
			s = string(b)
		}
		if secretKey.MatchString(k) && s != "" {
			s = "***"
		}
		out = append(out, k+"="+s)
	}
	return out
}

// StartupList renders broker startup times sorted by broker, e.g. "kafka 4.2s".
func (m *Meta) StartupList() string {
	if m == nil || len(m.BrokerStartup) == 0 {
		return ""
	}
	keys := make([]string, 0, len(m.BrokerStartup))
	for k := range m.BrokerStartup {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %.1fs", k, m.BrokerStartup[k]))
	}
	return strings.Join(parts, ", ")
}
