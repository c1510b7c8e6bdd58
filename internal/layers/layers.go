// Package layers is the layer table of docs/architecture.md ("layers import downwards
// only") as data: which layer each package of the module is in and which layers it may import.
// Its test holds the module's imports to it (go list), and docs/architecture.md to its
// rendering (Markdown), so the table lives here once.
package layers

import (
	"fmt"
	"strings"
)

// Module is the module path the patterns are relative to.
const Module = "github.com/pubsub-conformance/harness"

// Layer is one row of the table.
type Layer struct {
	Name string
	// Packages are patterns relative to the module: "specs" is that package, "fixtures/..."
	// fixtures and every package under it. A package is in the layer of its longest
	// matching pattern, a package named exactly before one under a "/..." (so "backends", the
	// contract, is not in "backends/...", the implementations).
	Packages []string
	// What says in a few words what the layer is.
	What string
	// May are the layers its packages may import, its own included when they import each
	// other. Test code is not held to it (a backend's integration test starts its broker
	// through fixtures/brokertest).
	May []string
}

// Table is the module's layers, lowest first.
var Table = []Layer{
	{"base", []string{"internal/brief", "internal/cache", "internal/column", "internal/cost", "internal/envvars", "internal/evidence", "internal/modroot", "specs/catalogue", "proto/..."},
		"leaf helpers and data: log excerpts, the cache dir, report column names, timings, the tables of environment variables, the evidence specs attach to reports, the module root, the spec catalogue, the adapter protocol", nil},
	{"contract", []string{"backends"},
		"the backend contract and registry", []string{"base"}},
	{"kinds", []string{"fixtures"},
		"broker kinds, endpoints and their settings", []string{"base"}},
	{"history", []string{"internal/history", "internal/workload/..."},
		"contract-call histories, their checkers, the generative workload", []string{"history", "contract", "base"}},
	{"backend", []string{"backends/..."},
		"the backends: kafka, memory, pulsar, rabbitmq, remote (adapters)", []string{"backend", "history", "kinds", "contract", "base"}},
	{"brokers", []string{"fixtures/..."},
		"broker providers (local, container, external), jars, proxy, CA, probes", []string{"brokers", "kinds", "base"}},
	{"backend sets", []string{"backends/all", "backends/admin", "backends/mutants", "backends/cmd/..."},
		"what builds on the backends: the registry list, the isolation admin, the known-bad variants", []string{"backend sets", "backend", "history", "kinds", "contract", "base"}},
	{"specs", []string{"specs"},
		"the specs, calling only specs.Env", []string{"history", "contract", "base"}},
	{"reports", []string{"reports/..."},
		"results, matrix, gate", []string{"reports", "base"}},
	{"run", []string{"suite/run"},
		"what a run tests: backends resolved once into targets (descriptor, broker kind, column), base configs", []string{"kinds", "contract", "base"}},
	{"bench", []string{"bench/..."},
		"performance runs", []string{"bench", "run", "reports", "backend sets", "brokers", "backend", "kinds", "contract", "base"}},
	{"suite", []string{"suite/..."},
		"the one place that joins specs, backends and fixtures; its commands", []string{"suite", "run", "specs", "reports", "backend sets", "brokers", "backend", "history", "kinds", "contract", "base"}},
	{"tools", []string{"internal/cmd/...", "internal/layers", "internal/makefile"},
		"checks of the harness itself", []string{"base"}},
}

// Restricted are third-party import paths (and everything under them) that only some layers
// may import: the Ginkgo runner and Gomega belong to the specs and the suite, so that no
// command beside them links a test framework; Ginkgo's report types are also the report
// format reports reads. The longest matching path applies.
var Restricted = []struct {
	Path   string
	Layers []string
}{
	{"github.com/onsi/ginkgo/v2", []string{"specs", "suite"}},
	{"github.com/onsi/gomega", []string{"specs", "suite"}},
	{"github.com/onsi/ginkgo/v2/types", []string{"specs", "suite", "reports"}},
}

// Of returns the layer of the module package rel (a path relative to the module, "" for its
// root), and false when no pattern matches it.
func Of(rel string) (Layer, bool) {
	var best Layer
	n := -1
	for _, l := range Table {
		for _, p := range l.Packages {
			if m := match(p, rel); m > n {
				best, n = l, m
			}
		}
	}
	return best, n >= 0
}

// match says how specifically pattern names rel: -1 not at all, else longer for a longer
// pattern, and a pattern naming exactly rel over any "/..." one.
func match(pattern, rel string) int {
	if base, ok := strings.CutSuffix(pattern, "/..."); ok {
		if rel == base || strings.HasPrefix(rel, base+"/") {
			return len(base)
		}
		return -1
	}
	if rel == pattern {
		return 1 << 20
	}
	return -1
}

// Violation is one import against the table, or a package the table does not place.
type Violation struct{ From, To, Why string }

func (v Violation) String() string {
	if v.To == "" {
		return fmt.Sprintf("%s: %s", v.From, v.Why)
	}
	return fmt.Sprintf("%s imports %s: %s", v.From, v.To, v.Why)
}

// Check holds one package (its full import path) and its imports to the table.
func Check(pkg string, imports []string) []Violation {
	rel, ok := relative(pkg)
	if !ok {
		return nil
	}
	from, ok := Of(rel)
	if !ok {
		return []Violation{{From: rel, Why: "in no layer: add it to the table (internal/layers, docs/architecture.md)"}}
	}
	var out []Violation
	for _, imp := range imports {
		if r, ok := relative(imp); ok {
			to, ok := Of(r)
			if ok && !contains(from.May, to.Name) {
				out = append(out, Violation{rel, r, fmt.Sprintf("layer %s may not import layer %s (it may import %s)", from.Name, to.Name, strings.Join(from.May, ", "))})
			}
			continue
		}
		best, layers := "", []string(nil)
		for _, r := range Restricted {
			if (imp == r.Path || strings.HasPrefix(imp, r.Path+"/")) && len(r.Path) > len(best) {
				best, layers = r.Path, r.Layers
			}
		}
		if best != "" && !contains(layers, from.Name) {
			out = append(out, Violation{rel, imp, fmt.Sprintf("only layers %s may import %s", strings.Join(layers, ", "), best)})
		}
	}
	return out
}

func relative(pkg string) (string, bool) {
	if pkg == Module {
		return "", true
	}
	rel, ok := strings.CutPrefix(pkg, Module+"/")
	return rel, ok
}

func contains(s []string, x string) bool {
	for _, e := range s {
		if e == x {
			return true
		}
	}
	return false
}

// Markdown renders the table as docs/architecture.md carries it.
func Markdown() string {
	var b strings.Builder
	b.WriteString("| layer | packages | what | may import |\n|---|---|---|---|\n")
	for _, l := range Table {
		may := strings.Join(l.May, ", ")
		if may == "" {
			may = "nothing of the module"
		}
		fmt.Fprintf(&b, "| %s | `%s` | %s | %s |\n", l.Name, strings.Join(l.Packages, "`, `"), l.What, may)
	}
	b.WriteString("\nOnly these layers import these (and the paths under them): ")
	for i, r := range Restricted {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "`%s`: %s", r.Path, strings.Join(r.Layers, ", "))
	}
	b.WriteString(".\n")
	return b.String()
}
