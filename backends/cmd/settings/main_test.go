package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/pubsub-conformance/harness/backends"
	"github.com/pubsub-conformance/harness/internal/envvars"
	"github.com/pubsub-conformance/harness/internal/modroot"
)

// docs/settings.md is what the tables give (as make catalogue checks with -check).
func TestDocIsGenerated(t *testing.T) {
	root, err := modroot.Find()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(root, DocPath))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != Render() {
		t.Errorf("%s is stale: run go run ./backends/cmd/settings", DocPath)
	}
}

// The variable names the scan holds to the tables: the harness's and the broker kinds'.
var nameRe = regexp.MustCompile(`^(PUBSUB|KAFKA|PULSAR|RABBITMQ)_[A-Z0-9_]*$`)

// kindPrefixes are the bare prefixes the sources may spell without naming a variable: a kind's
// EnvPrefix (fixtures), the image's KAFKA_ translation (fixtures/container), a scan of them.
var kindPrefixes = []string{"PUBSUB_", "KAFKA_", "PULSAR_", "RABBITMQ_"}

// use is a string literal of the sources that names a variable (or a prefix of some).
type use struct{ name, at string }

// scan returns the string literals of the module's Go sources (test code aside) that look like
// a variable's name, outside the tables themselves (a composite literal of envvars.Table or
// envvars.Var), and the names of the functions the sources declare.
func scan(t *testing.T) (uses []use, funcs map[string]bool) {
	t.Helper()
	root, err := modroot.Find()
	if err != nil {
		t.Fatal(err)
	}
	funcs = map[string]bool{}
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (strings.HasPrefix(n, ".") || n == "testdata" || n == "out" || n == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncDecl:
				funcs[n.Name.Name] = true
			case *ast.CompositeLit:
				if isTable(n.Type) {
					return false
				}
			case *ast.BasicLit:
				if n.Kind == token.STRING {
					if s, err := strconv.Unquote(n.Value); err == nil && nameRe.MatchString(s) {
						rel, _ := filepath.Rel(root, fset.Position(n.Pos()).Filename)
						uses = append(uses, use{s, rel + ":" + strconv.Itoa(fset.Position(n.Pos()).Line)})
					}
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(uses) < 50 {
		t.Fatalf("the scan found %d names in the sources: not the module's sources?", len(uses))
	}
	return uses, funcs
}

// isTable reports whether a composite literal's type is envvars.Table or envvars.Var (or, in
// package envvars, Table or Var).
func isTable(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.SelectorExpr:
		x, ok := e.X.(*ast.Ident)
		return ok && x.Name == "envvars" && (e.Sel.Name == "Table" || e.Sel.Name == "Var")
	case *ast.Ident:
		return e.Name == "Table" || e.Name == "Var"
	}
	return false
}

func listed(name string) bool {
	for _, tb := range Tables() {
		for _, v := range tb {
			if strings.HasSuffix(name, "_") {
				// A prefix the code builds names from: some listed name starts with it.
				if strings.HasPrefix(v.Name, name) {
					return true
				}
			} else if v.Matches(name) {
				return true
			}
		}
	}
	return slices.Contains(kindPrefixes, name)
}

// Every name the code reads (spells) is in a table, so docs/settings.md lists it.
func TestEveryVariableTheCodeReadsIsListed(t *testing.T) {
	uses, _ := scan(t)
	seen := map[string]bool{}
	for _, u := range uses {
		if !listed(u.name) && !seen[u.name] {
			seen[u.name] = true
			t.Errorf("%s: %s is in no table of environment variables: add it to its backend's Vars (settings.go) or to internal/envvars.Harness, then go run ./backends/cmd/settings", u.at, u.name)
		}
	}
}

// Every name a table lists is read by the code: a backend's by its own package, the
// harness's anywhere; a family by its prefix, a name the code builds by the function the row
// names.
func TestEveryListedVariableIsRead(t *testing.T) {
	uses, funcs := scan(t)
	spelledIn := map[string][]string{} // name -> files
	for _, u := range uses {
		spelledIn[u.name] = append(spelledIn[u.name], u.at)
	}
	check := func(tb envvars.Table, pkg string) {
		for _, v := range tb {
			if !nameRe.MatchString(strings.TrimSuffix(v.Name, familyTail(v))) {
				continue // JAVA_HOME and the like: outside the scan's prefixes
			}
			want := v.Name
			if p, ok := v.Family(); ok {
				want = p
			}
			read := slices.ContainsFunc(spelledIn[want], func(at string) bool { return strings.HasPrefix(at, pkg) })
			if !read && !(v.Built != "" && funcs[v.Built]) {
				t.Errorf("%s is listed but no source of %s outside the tables spells %q (a row of a variable nothing reads; Built names a function that builds it)", v.Name, pkg+"...", want)
			}
		}
	}
	check(envvars.Harness, "")
	for _, s := range Sections() {
		check(s.Vars, s.Package+"/")
	}
}

// familyTail is the placeholder of a family's name ("<KEY>"), "" for a single variable.
func familyTail(v envvars.Var) string {
	if p, ok := v.Family(); ok {
		return v.Name[len(p):]
	}
	return ""
}

// Every row has a name and a meaning, and no table lists a name twice.
func TestTablesAreWellFormed(t *testing.T) {
	for _, tb := range Tables() {
		seen := map[string]bool{}
		for _, v := range tb {
			if v.Name == "" || v.Meaning == "" {
				t.Errorf("%+v: a row needs a name and a meaning", v)
			}
			if seen[v.Name] {
				t.Errorf("%s twice in one table", v.Name)
			}
			seen[v.Name] = true
			for _, p := range v.SecretIf {
				if _, ok := v.Family(); !ok {
					t.Errorf("%s: SecretIf %s on a single variable (mark it Secret)", v.Name, p)
				}
			}
		}
	}
	if len(Sections()) < 4 {
		t.Errorf("sections %v: want kafka, pulsar, rabbitmq and rabbitmq-streams at least", Sections())
	}
}

// Report metadata never shows a secret: for every registered backend with a table, Public
// keeps each set variable of the table but the secret ones (passwords, tokens, API keys,
// credentials in a passthrough family), and EnvSettings reads exactly the table's names.
func TestPublicLeavesOutEverySecret(t *testing.T) {
	for _, d := range backends.Descriptors(true) {
		if len(d.Vars) == 0 {
			continue
		}
		settings := map[string]string{}
		var environ []string
		for _, v := range d.Vars {
			names := []string{v.Name}
			if p, ok := v.Family(); ok {
				names = []string{p + "FETCH_WAIT_MAX_MS", p + "SASL_PASSWORD", p + "SASL_OAUTHBEARER_CLIENT_SECRET", p + "X_TOKEN"}
			}
			for _, n := range names {
				settings[n] = "value-of-" + n
				environ = append(environ, n+"=value-of-"+n)
			}
		}
		environ = append(environ, "UNLISTED_PASSWORD=x", "PUBSUB_BACKENDS=y")
		if got := d.EnvSettings(environ); len(got) != len(settings) {
			t.Errorf("%s: EnvSettings read %d variables, want the table's %d: %v", d.Name, len(got), len(settings), got)
		}
		public := d.Public(settings)
		for n := range settings {
			v, _ := d.Vars.Lookup(n)
			secret := v.Secret || strings.Contains(n, "PASSWORD") || strings.Contains(n, "SECRET") || strings.Contains(n, "TOKEN")
			if _, shown := public[n]; shown == secret {
				t.Errorf("%s: %s shown in metadata = %v, want %v", d.Name, n, shown, !secret)
			}
		}
	}
}

// The secrets of the tables are the ones the backends had before the tables, and more: the
// rabbitmq backend's management password was recorded in its metadata.
func TestKnownSecrets(t *testing.T) {
	for _, c := range []struct {
		backend string
		secrets []string
	}{
		{"kafka", []string{"KAFKA_SASL_PASSWORD", "KAFKA_CONFIG_SASL_PASSWORD", "KAFKA_ADMIN_CONFIG_SASL_PASSWORD", "KAFKA_CONFIG_SASL_OAUTHBEARER_CLIENT_SECRET"}},
		{"pulsar", []string{"PULSAR_API_KEY", "PULSAR_ADMIN_API_KEY"}},
		{"pulsar-persistent", []string{"PULSAR_API_KEY", "PULSAR_ADMIN_API_KEY"}},
		{"rabbitmq", []string{"RABBITMQ_PASSWORD", "RABBITMQ_MANAGEMENT_PASSWORD"}},
		{"rabbitmq-streams", []string{"RABBITMQ_PASSWORD", "RABBITMQ_MANAGEMENT_PASSWORD"}},
	} {
		d, err := backends.Lookup(c.backend)
		if err != nil {
			t.Fatal(err)
		}
		in := map[string]string{}
		for _, s := range c.secrets {
			in[s] = "secret"
		}
		if p := d.Public(in); len(p) != 0 {
			t.Errorf("%s: Public shows %v", c.backend, p)
		}
	}
	if envvars.Harness.IsSecret("PUBSUB_BACKENDS") {
		t.Error("PUBSUB_BACKENDS secret")
	}
}
