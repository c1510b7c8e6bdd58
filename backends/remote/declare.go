package remote

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"

	"github.com/google/shlex"

	"github.com/pubsub-conformance/harness/fixtures"
)

// Adapter declares one out-of-process backend: what to start and what broker it needs.
type Adapter struct {
	// Name is the registry name (PUBSUB_BACKENDS=<Name>).
	Name        string
	Description string
	// Broker is the broker kind it needs (a fixtures.Kind: "kafka", "pulsar", "rabbitmq"); "" for
	// none (a reference port).
	Broker string
	// Reference marks an in-process reference port (never a conformance result).
	Reference bool
	// OptIn keeps it out of the default backend set of make conformance/mutants/bench
	// (Descriptor.OptIn): it runs when named in BACKENDS / PUBSUB_BACKENDS.
	OptIn bool
	// Command is the argv to start. "{python}" is replaced by the python of the virtualenv of
	// Requirements (see Venv), "{repo}" by the repository root, "{bin}" by the binary built
	// from GoMain.
	Command []string
	// GoMain is a main package of this module (./backends/remote/cmd/memory-adapter) that
	// Prepare builds into the cache directory for "{bin}".
	GoMain string
	// Dir is the working directory, relative to the repository root ("" = the root).
	Dir string
	// Env is added to the adapter's environment (after the harness's own and the settings).
	Env map[string]string
	// Requirements are pip requirements files (relative to the repository root, or absolute)
	// for the virtualenv {python} runs in. The SDK's own (SDKRequirements) must be among them
	// for an adapter on the Python SDK.
	Requirements []string
	// Pip are further `pip install` arguments, installed after Requirements into the same
	// virtualenv (keyed by them too, see VenvWith): "-e /src/trustgraph-base" tests a working
	// copy over the pinned release.
	Pip []string
	// Patch is a patch (relative to the repository root) applied to TrustGraphRelease's sdist,
	// whose patched tree is installed editable after Requirements and Pip, as TRUSTGRAPH_SOURCE
	// installs a working copy (patched.go).
	Patch string
	// Source describes the code under test when it is not the pinned release (a working copy:
	// its path, git commit and dirty state); the run's meta and each Backend's transcript
	// record it.
	Source string
	// Extends names a shipped adapter this one starts from (user declarations): its command,
	// broker, directory, requirements and pip arguments, with this declaration's added.
	Extends string
	// Settings are fixed by this declaration, over the run's settings (Descriptor.Settings).
	Settings map[string]string
	// SettingsEnv lists further environment variables (path.Match patterns) read into the
	// settings, beyond the broker's own (KAFKA_*, PULSAR_*).
	SettingsEnv []string
}

// SDKDir is the Python SDK's directory (relative to the repository root); adapters started
// with {python} get it on PYTHONPATH.
const SDKDir = "backends/remote/python"

// SDKRequirements is the SDK's pinned requirements file.
const SDKRequirements = SDKDir + "/requirements.txt"

// declared is THE list of adapters this repository ships. A user adds their own without Go
// edits through PUBSUB_ADAPTER_<NAME> (see FromEnviron).
var declared = []Adapter{
	{
		Name:         "python-memory",
		Description:  "the in-memory reference backend ported to Python, served through the adapter protocol (self-test of the protocol path; not a broker)",
		Reference:    true,
		OptIn:        true, // run by name: make adapter-selftest
		Command:      []string{"{python}", "-m", "pubsub_adapter.memory"},
		Requirements: []string{SDKRequirements},
	},
	{
		Name:        "go-memory",
		Description: "the Go in-memory reference backend served through the adapter protocol (measures the protocol's own cost; not a broker)",
		Reference:   true,
		OptIn:       true, // run by name: make adapter-selftest
		Command:     []string{"{bin}"},
		GoMain:      "./backends/remote/cmd/memory-adapter",
	},
}

// Declared returns the shipped adapters followed by the user's (FromEnviron of os.Environ()),
// a user adapter that extends a shipped one resolved against it, and the shipped TrustGraph
// adapters switched to a working copy when TRUSTGRAPH_SOURCE names one (trustgraph.go).
// An invalid user declaration is returned as an error; the shipped ones are still listed.
func Declared() ([]Adapter, error) {
	shipped, serr := withTrustGraphSource(append([]Adapter(nil), declared...), os.Getenv)
	user, err := FromEnviron(os.Environ())
	var errs []error
	for i, u := range user {
		if u.Extends == "" {
			continue
		}
		ext, xerr := extend(shipped, u)
		if xerr != nil {
			errs = append(errs, xerr)
		}
		user[i] = ext
	}
	return append(shipped, user...), errors.Join(append([]error{serr, err}, errs...)...)
}

// extend resolves u.Extends: the shipped adapter's declaration under u's name, with u's
// broker, directory and description when set, its requirements and pip arguments appended,
// and its command when it has one.
func extend(shipped []Adapter, u Adapter) (Adapter, error) {
	for _, base := range shipped {
		if base.Name != u.Extends {
			continue
		}
		out := base
		out.Name, out.OptIn, out.Reference, out.Extends = u.Name, true, base.Reference, u.Extends
		out.Requirements = append(append([]string(nil), base.Requirements...), u.Requirements...)
		out.Pip = append(append([]string(nil), base.Pip...), u.Pip...)
		if len(u.Command) > 0 {
			out.Command = u.Command
		}
		if u.Broker != "" {
			out.Broker = u.Broker
		}
		if u.Dir != "" {
			out.Dir = u.Dir
		}
		out.Description = u.Description
		if out.Description == "" {
			out.Description = base.Description
			if len(u.Pip) > 0 {
				out.Description += "; extended with pip install " + strings.Join(u.Pip, " ")
			}
		}
		return out, nil
	}
	names := make([]string, 0, len(shipped))
	for _, s := range shipped {
		names = append(names, s.Name)
	}
	return u, fmt.Errorf("adapter %s: PUBSUB_ADAPTER_%s_EXTENDS=%q is not a shipped adapter (shipped: %s)",
		u.Name, strings.ToUpper(strings.ReplaceAll(u.Name, "-", "_")), u.Extends, strings.Join(names, ", "))
}

// envPrefix starts a user declaration: PUBSUB_ADAPTER_<NAME>='command args...'.
const envPrefix = "PUBSUB_ADAPTER_"

// attribute suffixes of a user declaration: PUBSUB_ADAPTER_<NAME>_BROKER=kafka, ...
var envAttrs = []string{"_BROKER", "_DIR", "_REQUIREMENTS", "_PIP", "_DESCRIPTION", "_EXTENDS"}

// FromEnviron reads user-declared adapters from environ ("K=V" strings):
//
//	PUBSUB_ADAPTER_<NAME>='command args...'   the command (shell-like quoting, no shell)
//	PUBSUB_ADAPTER_<NAME>_BROKER=kafka|pulsar|rabbitmq  the broker it needs (default: none)
//	PUBSUB_ADAPTER_<NAME>_DIR=path             working directory (relative to the repository, or absolute)
//	PUBSUB_ADAPTER_<NAME>_REQUIREMENTS='a.txt b.txt'  pip requirements for {python} (idem)
//	PUBSUB_ADAPTER_<NAME>_PIP='-e /src/pkg'    further pip install arguments (shell-like quoting)
//	PUBSUB_ADAPTER_<NAME>_EXTENDS=<shipped adapter>  start from that adapter (the command is
//	                                           then optional; requirements and pip are added)
//	PUBSUB_ADAPTER_<NAME>_DESCRIPTION=text
//
// The registry name is <NAME> lowercased with '_' as '-': PUBSUB_ADAPTER_MY_KAFKA -> my-kafka.
// Extends is resolved by Declared, against the shipped adapters.
func FromEnviron(environ []string) ([]Adapter, error) {
	vars := map[string]string{}
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if ok && strings.HasPrefix(k, envPrefix) && k != ListenEnv {
			vars[k] = v
		}
	}
	// A declaration is PUBSUB_ADAPTER_<NAME> (its command) or PUBSUB_ADAPTER_<NAME>_EXTENDS.
	decls := map[string]bool{}
	for k := range vars {
		if base, ok := strings.CutSuffix(k, "_EXTENDS"); ok && len(base) > len(envPrefix) {
			decls[base] = true
		}
	}
	for k := range vars {
		attr := false
		for _, s := range envAttrs {
			if strings.HasSuffix(k, s) {
				base := strings.TrimSuffix(k, s)
				if _, ok := vars[base]; ok || decls[base] || s == "_EXTENDS" {
					attr = true
				}
			}
		}
		if !attr && len(k) > len(envPrefix) {
			decls[k] = true
		}
	}
	var out []Adapter
	var errs []string
	for k := range decls {
		v, hasCommand := vars[k]
		name := strings.ToLower(strings.ReplaceAll(strings.TrimPrefix(k, envPrefix), "_", "-"))
		var argv []string
		if hasCommand || vars[k+"_EXTENDS"] == "" {
			var err error
			argv, err = shlex.Split(v)
			if err != nil || len(argv) == 0 {
				errs = append(errs, fmt.Sprintf("%s=%q is not a command line", k, v))
				continue
			}
		}
		// OptIn: declaring an adapter does not change what a plain make test runs; it is
		// tested when named (PUBSUB_BACKENDS=<name>, BACKENDS="<name> ...").
		a := Adapter{Name: name, Command: argv, Broker: vars[k+"_BROKER"], Dir: vars[k+"_DIR"],
			Description: vars[k+"_DESCRIPTION"], OptIn: true, Extends: vars[k+"_EXTENDS"]}
		if a.Description == "" && a.Extends == "" {
			a.Description = "user-declared adapter: " + v
		}
		if p := vars[k+"_PIP"]; p != "" {
			pip, err := shlex.Split(p)
			if err != nil {
				errs = append(errs, fmt.Sprintf("%s_PIP=%q: %v", k, p, err))
				continue
			}
			a.Pip = pip
		}
		if _, known := fixtures.LookupKind(fixtures.Kind(a.Broker)); a.Broker != "" && !known {
			errs = append(errs, fmt.Sprintf("%s_BROKER=%q: want one of %s, or empty", k, a.Broker, fixtures.KindNames()))
			continue
		}
		if r := vars[k+"_REQUIREMENTS"]; r != "" {
			a.Requirements = strings.Fields(r)
		}
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	if len(errs) > 0 {
		sort.Strings(errs)
		return out, fmt.Errorf("invalid adapter declaration: %s", strings.Join(errs, "; "))
	}
	return out, nil
}

// RepoRoot is the repository root (the directory of go.mod), found from this source file
// (PUBSUB_REPO_ROOT overrides).
func RepoRoot() string {
	if r := os.Getenv("PUBSUB_REPO_ROOT"); r != "" {
		return r
	}
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
	if _, err := os.Stat(filepath.Join(root, SDKRequirements)); err == nil {
		return root
	}
	// Built with -trimpath (no source path): the go.mod above the working directory.
	if wd, err := os.Getwd(); err == nil {
		for d := wd; ; d = filepath.Dir(d) {
			if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
				return d
			}
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	return root
}
