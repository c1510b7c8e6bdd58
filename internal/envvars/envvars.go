// Package envvars holds the environment variables a run reads as data: each with its meaning,
// its default and whether its value is secret. Every backend has a Table (its package's
// settings.go: the Descriptor reads exactly the table's names from the environment, and keeps
// its secrets out of report metadata), the harness its own (Harness, below). docs/settings.md
// is generated from the tables (go run ./backends/cmd/settings), and its test fails when the
// Go sources read a PUBSUB_*, KAFKA_*, PULSAR_* or RABBITMQ_* name no table lists, or a table
// lists a name no source reads.
package envvars

import (
	"path"
	"slices"
	"strings"
)

// Var is one environment variable, or a family of them: a Name ending in a placeholder
// ("KAFKA_CONFIG_<KEY>": every variable with that prefix).
type Var struct {
	Name    string
	Meaning string // one paragraph of Markdown
	Default string // "" when there is none (unset is off, or the meaning says it)
	// Secret: the value never reaches a report (passwords, tokens, API keys).
	Secret bool
	// SecretIf, for a family, are the path.Match patterns of its members that are secret
	// ("KAFKA_CONFIG_*PASSWORD*": a passthrough key may carry a credential).
	SecretIf []string
	// Internal: set by the harness for a child process of its own (a test binary, an adapter),
	// not a user's setting; documented apart.
	Internal bool
	// Built names the Go function that builds the name when no source spells it out
	// (fixtures/maven.VersionEnv for PUBSUB_KAFKA_VERSION); the sources must name the function.
	Built string
}

// Family reports whether v names a family of variables, and its prefix.
func (v Var) Family() (prefix string, ok bool) {
	if i := strings.IndexByte(v.Name, '<'); i >= 0 && strings.HasSuffix(v.Name, ">") {
		return v.Name[:i], true
	}
	return "", false
}

// Pattern is v's name as a path.Match pattern: a family's prefix and "*".
func (v Var) Pattern() string {
	if p, ok := v.Family(); ok {
		return p + "*"
	}
	return v.Name
}

// Matches reports whether the variable name is v or one of v's family.
func (v Var) Matches(name string) bool {
	if p, ok := v.Family(); ok {
		return strings.HasPrefix(name, p) && len(name) > len(p)
	}
	return name == v.Name
}

// Table is a list of variables, in the order docs/settings.md shows them.
type Table []Var

// Names are the table's names as path.Match patterns (backends.Descriptor.Env).
func (t Table) Names() []string {
	out := make([]string, 0, len(t))
	for _, v := range t {
		out = append(out, v.Pattern())
	}
	return out
}

// Secrets are the path.Match patterns of the table's secret names (backends.Descriptor.Secret).
func (t Table) Secrets() []string {
	var out []string
	for _, v := range t {
		if v.Secret {
			out = append(out, v.Pattern())
		}
		out = append(out, v.SecretIf...)
	}
	return out
}

// Lookup returns the row whose name or family matches name.
func (t Table) Lookup(name string) (Var, bool) {
	i := slices.IndexFunc(t, func(v Var) bool { return v.Matches(name) })
	if i < 0 {
		return Var{}, false
	}
	return t[i], true
}

// IsSecret reports whether the value of the variable name is secret by t.
func (t Table) IsSecret(name string) bool {
	return slices.ContainsFunc(t.Secrets(), func(p string) bool {
		ok, err := path.Match(p, name)
		return ok && err == nil
	})
}

// Markdown renders t as a table: variable, meaning, default, secret.
func (t Table) Markdown() string {
	var b strings.Builder
	b.WriteString("| variable | meaning | default | secret |\n|---|---|---|---|\n")
	for _, v := range t {
		def := v.Default
		if def != "" && !strings.ContainsAny(def, " `") {
			def = "`" + def + "`" // a value; a sentence stays as written
		}
		secret := ""
		switch {
		case v.Secret:
			secret = "yes"
		case len(v.SecretIf) > 0:
			var ps []string
			for _, p := range v.SecretIf {
				ps = append(ps, "`"+p+"`")
			}
			secret = "when the name matches " + strings.Join(ps, ", ")
		}
		b.WriteString("| `" + v.Name + "` | " + cell(v.Meaning) + " | " + def + " | " + secret + " |\n")
	}
	return b.String()
}

func cell(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "\n", " "), "|", "\\|")
}
