package remote

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// TrustGraph's own pub/sub backends (trustgraph-base on PyPI), each behind the Python SDK in
// backends/remote/python/trustgraph_adapters. Every adapter has its own pinned requirements
// (installed after the SDK's), so the two trustgraph-base versions get separate virtualenvs.
// The adapters only translate contract calls to TrustGraph's classes (see the package doc of
// trustgraph_adapters); a failed spec is a result about TrustGraph's code.

const tgDir = SDKDir + "/trustgraph_adapters"

func init() {
	declared = append(declared,
		Adapter{
			Name: "trustgraph-kafka",
			Description: "TrustGraph's AsyncKafkaBackend (aiokafka), trustgraph-base 2.11.1, built by its " +
				"get_async_pubsub factory from the KAFKA_* settings",
			Broker:       "kafka",
			OptIn:        true, // TrustGraph's known failures are results, not make test failures
			Command:      []string{"{python}", "-m", "trustgraph_adapters.async_adapter", "kafka"},
			Requirements: []string{SDKRequirements, tgDir + "/requirements-trustgraph-2.11.1.txt"},
		},
		Adapter{
			Name: "trustgraph-kafka-patched",
			Description: "TrustGraph's AsyncKafkaBackend, trustgraph-base 2.11.1's sdist with " + PatchDir +
				"/async_kafka_backend.patch applied (docs/trustgraph.md), installed as TRUSTGRAPH_SOURCE installs a working copy",
			Broker:       "kafka",
			OptIn:        true, // the fixed column; run by name
			Command:      []string{"{python}", "-m", "trustgraph_adapters.async_adapter", "kafka"},
			Requirements: []string{SDKRequirements, tgDir + "/requirements-trustgraph-2.11.1.txt"},
			Patch:        PatchDir + "/async_kafka_backend.patch",
			Source:       "trustgraph-base 2.11.1 sdist + " + PatchDir + "/async_kafka_backend.patch",
		},
		Adapter{
			Name: "trustgraph-pulsar",
			Description: "TrustGraph's AsyncPulsarBackend (pulsar.asyncio), trustgraph-base 2.11.1, built by " +
				"its get_async_pubsub factory from the PULSAR_* settings",
			Broker:       "pulsar",
			OptIn:        true, // TrustGraph's known failures are results, not make test failures
			Command:      []string{"{python}", "-m", "trustgraph_adapters.async_adapter", "pulsar"},
			Requirements: []string{SDKRequirements, tgDir + "/requirements-trustgraph-2.11.1.txt"},
		},
		Adapter{
			Name: "trustgraph-pulsar-patched",
			Description: "TrustGraph's AsyncPulsarBackend, trustgraph-base 2.11.1's sdist with " + PatchDir +
				"/async_pulsar_backend.patch applied (docs/trustgraph.md), installed as TRUSTGRAPH_SOURCE installs a working copy",
			Broker:       "pulsar",
			OptIn:        true, // the fixed column; run by name
			Command:      []string{"{python}", "-m", "trustgraph_adapters.async_adapter", "pulsar"},
			Requirements: []string{SDKRequirements, tgDir + "/requirements-trustgraph-2.11.1.txt"},
			Patch:        PatchDir + "/async_pulsar_backend.patch",
			Source:       "trustgraph-base 2.11.1 sdist + " + PatchDir + "/async_pulsar_backend.patch",
		},
		Adapter{
			Name: "trustgraph-rabbitmq",
			Description: "TrustGraph's AsyncRabbitMQBackend (aio-pika), trustgraph-base 2.11.1, built by " +
				"its get_async_pubsub factory from the RABBITMQ_* settings",
			Broker:       "rabbitmq",
			OptIn:        true, // TrustGraph's known failures are results, not make test failures
			Command:      []string{"{python}", "-m", "trustgraph_adapters.async_adapter", "rabbitmq"},
			Requirements: []string{SDKRequirements, tgDir + "/requirements-trustgraph-2.11.1.txt"},
		},
		Adapter{
			Name: "trustgraph-rabbitmq-patched",
			Description: "TrustGraph's AsyncRabbitMQBackend, trustgraph-base 2.11.1's sdist with " + PatchDir +
				"/async_rabbitmq_backend.patch applied (docs/trustgraph.md), installed as TRUSTGRAPH_SOURCE installs a working copy",
			Broker:       "rabbitmq",
			OptIn:        true, // the fixed column; run by name
			Command:      []string{"{python}", "-m", "trustgraph_adapters.async_adapter", "rabbitmq"},
			Requirements: []string{SDKRequirements, tgDir + "/requirements-trustgraph-2.11.1.txt"},
			Patch:        PatchDir + "/async_rabbitmq_backend.patch",
			Source:       "trustgraph-base 2.11.1 sdist + " + PatchDir + "/async_rabbitmq_backend.patch",
		},
		Adapter{
			Name: "trustgraph-kafka-sync",
			Description: "legacy, code no current release ships: TrustGraph's synchronous KafkaBackend " +
				"(confluent-kafka) of trustgraph-base 2.8.1, deleted in 2.8.2 (current releases have only " +
				"AsyncKafkaBackend, the trustgraph-kafka column); built by its get_pubsub factory from the KAFKA_* settings",
			Broker:       "kafka",
			OptIn:        true, // legacy code: run by name only, in no default or recommended set
			Command:      []string{"{python}", "-m", "trustgraph_adapters.sync_adapter", "kafka"},
			Requirements: []string{SDKRequirements, tgDir + "/requirements-trustgraph-2.8.1.txt"},
		},
	)
}

// SourceEnv names a TrustGraph working copy to test instead of the pinned release:
// `make conformance BACKENDS=trustgraph-kafka TRUSTGRAPH_SOURCE=<dir>`.
const SourceEnv = "TRUSTGRAPH_SOURCE"

// sourceAdapters are the shipped adapters a working copy replaces the pinned trustgraph-base
// of: the async ones, one per family the patches fix (trustgraph-kafka-sync needs 2.8.1's
// KafkaBackend, which newer sources no longer have).
var sourceAdapters = []string{"trustgraph-kafka", "trustgraph-pulsar", "trustgraph-rabbitmq"}

// withTrustGraphSource switches the async TrustGraph adapters of ads to the working copy named
// by TRUSTGRAPH_SOURCE (see TrustGraphSource) when it is set: the pinned requirements, then
// `pip install -e <trustgraph-base>` over them in a virtualenv of its own, so an edit needs no
// reinstall. An invalid directory is one line; the adapters are then left as shipped.
func withTrustGraphSource(ads []Adapter, getenv func(string) string) ([]Adapter, error) {
	dir := getenv(SourceEnv)
	if dir == "" {
		return ads, nil
	}
	base, source, err := TrustGraphSource(dir)
	if err != nil {
		return ads, err
	}
	for i := range ads {
		for _, n := range sourceAdapters {
			if ads[i].Name == n {
				ads[i].Pip = append(append([]string(nil), ads[i].Pip...), "-e", base)
				ads[i].Source = source
				ads[i].Description += "; code under test: " + source
			}
		}
	}
	return ads, nil
}

// TrustGraphSource finds trustgraph-base in dir, a trustgraph checkout (trustgraph-base is its
// subdirectory) or a trustgraph-base source tree, and describes it: its path, git commit and
// whether the tree has uncommitted changes.
func TrustGraphSource(dir string) (base, source string, err error) {
	bad := func(why string) (string, string, error) {
		return "", "", fmt.Errorf("%s=%s: %s", SourceEnv, dir, why)
	}
	if !filepath.IsAbs(dir) {
		return bad("give an absolute path (make conformance makes a relative one absolute)")
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return bad("no such directory")
	}
	packaged := func(d string) bool {
		for _, f := range []string{"pyproject.toml", "setup.py"} {
			if _, err := os.Stat(filepath.Join(d, f)); err == nil {
				if _, err := os.Stat(filepath.Join(d, "trustgraph", "base")); err == nil {
					return true
				}
			}
		}
		return false
	}
	switch {
	case packaged(filepath.Join(dir, "trustgraph-base")):
		base = filepath.Join(dir, "trustgraph-base")
	case packaged(dir):
		base = dir
	default:
		return bad("neither a trustgraph checkout (no trustgraph-base/pyproject.toml with trustgraph/base/) " +
			"nor a trustgraph-base source tree (no pyproject.toml or setup.py beside trustgraph/base/)")
	}
	// A checkout's version is generated, not committed: pyproject.toml reads it from
	// trustgraph/base_version.py, which TrustGraph's Makefile writes (and .gitignore hides), so
	// pip's editable build of a fresh clone fails minutes later with ModuleNotFoundError.
	if b, err := os.ReadFile(filepath.Join(base, "pyproject.toml")); err == nil &&
		strings.Contains(string(b), "trustgraph.base_version") {
		if _, err := os.Stat(filepath.Join(base, "trustgraph", "base_version.py")); err != nil {
			return bad("trustgraph-base's version file trustgraph/base_version.py is missing (TrustGraph's " +
				"Makefile generates it): run `make update-package-versions VERSION=<version>` in the checkout first")
		}
	}
	return base, "trustgraph-base working copy " + base + " (" + gitState(base) + ")", nil
}

// gitState is "git <commit>, clean" or "git <commit>, dirty: N files changed" for the tree at
// dir (its own changes only, in a larger checkout), or why there is none.
func gitState(dir string) string {
	git := func(args ...string) (string, error) {
		out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).Output()
		return strings.TrimSpace(string(out)), err
	}
	commit, err := git("rev-parse", "--short=12", "HEAD")
	if err != nil {
		return "not a git checkout: commit unknown"
	}
	status, err := git("status", "--porcelain", "--untracked-files=normal", "--", ".")
	switch {
	case err != nil:
		return "git " + commit + ", dirty state unknown"
	case status == "":
		return "git " + commit + ", clean"
	default:
		return fmt.Sprintf("git %s, dirty: %d files changed", commit, len(strings.Split(status, "\n")))
	}
}
