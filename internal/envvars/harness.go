package envvars

// Harness are the variables the harness itself reads (the backends' are in their packages'
// settings.go). Specific names come before the families that would also match them.
var Harness = Table{
	// What a run tests and where.
	{Name: "PUBSUB_BACKENDS", Meaning: "backends to test (comma-separated); `memory` for the reference self-test; `make conformance BACKENDS=...` sets it", Default: "the suite: `memory`; make: every registered conformance backend"},
	{Name: "PUBSUB_BROKERS", Meaning: "broker provider: `auto`, `local`, `container`, `external` (`fixtures/README.md`); in the backends' go tests, unset means a local broker unless `KAFKA_BOOTSTRAP_SERVERS` / `PULSAR_HOST` name one", Default: "auto"},
	{Name: "PUBSUB_REPORT_DIR", Meaning: "where report files go (a relative path is taken from the module root)", Default: "reports/out"},
	{Name: "PUBSUB_CACHE", Meaning: "cache root: the local provider's jars and class-data archives (see `fixtures/`), the adapters' virtualenvs and built binaries, RabbitMQ releases", Default: "$XDG_CACHE_HOME/pubsub-conformance, else ~/.cache/pubsub-conformance"},
	{Name: "PUBSUB_ISOLATE", Meaning: "`topics`: the harness creates each spec's topics through the broker's admin outside the lifecycle area, columns `<backend>+isolated`, never gated ([findings-and-isolation.md](findings-and-isolation.md))"},
	{Name: "PUBSUB_RETENTION_<CLASS>", Meaning: "a class's retention (`PUBSUB_RETENTION_FLOW=168h`: a positive Go duration) instead of the class default; recorded in `meta-<backend>.json`"},
	// Checks.
	{Name: "PUBSUB_HISTORY_CHECKS", Meaning: "`off`: the specs that check their history of contract calls skip the checkers (a report entry says so; [workload.md](workload.md))"},
	{Name: "PUBSUB_HISTORY_LIMIT", Meaning: "how many contract calls a spec's history keeps; the specs whose history overflows report `unknown`, not pass ([results.md](results.md#unknown-the-checkers-could-not-vouch)); a value that is not a whole number of at least 1 is refused before the run: by make's targets (one line, exit 2), and by a direct `ginkgo`/`go test` run of the suite before any spec", Default: "200000"},
	{Name: "PUBSUB_WORKLOAD_BUDGET", Meaning: "W1: how long to keep starting programs, the corpus's included; the whole corpus and at least one fresh program always run (`make soak DURATION=`)", Default: "25s"},
	{Name: "PUBSUB_WORKLOAD_SEED", Meaning: "W1: the first fresh program's seed; program i has seed+i, the same on every backend of the run", Default: "Ginkgo's random seed"},
	{Name: "PUBSUB_WORKLOAD_SHRINK", Meaning: "W1: how long a failure may spend shrinking its program", Default: "2m"},
	{Name: "PUBSUB_WORKLOAD_CORPUS", Meaning: "W1: the corpus entries to replay: `all`, `none`, or entry names or seeds, comma-separated", Default: "all"},
	{Name: "PUBSUB_NEMESIS", Meaning: "set (any value): run W2, the workload under a nemesis schedule (`make soak NEMESIS=1`; [nemesis.md](nemesis.md))"},
	{Name: "PUBSUB_NEMESIS_SHORT", Meaning: "W2: a short fault (within every client's session)", Default: "2s"},
	{Name: "PUBSUB_NEMESIS_LONG", Meaning: "W2: a long fault (longer than the Kafka backend's 6 s session)", Default: "9s"},
	// Brokers.
	{Name: "PUBSUB_CDS", Meaning: "`off`: local broker JVMs start without the class-data archive that otherwise cuts their start's CPU by 35-40% (see `fixtures/README.md`)"},
	{Name: "PUBSUB_KAFKA_VERSION", Meaning: "another Kafka release than the pinned one (3.3 or later, KRaft; [versions.md](versions.md))", Default: "4.1.1", Built: "VersionEnv"},
	{Name: "PUBSUB_PULSAR_VERSION", Meaning: "another Pulsar release than the pinned one (3.0 or later; [versions.md](versions.md))", Default: "4.2.4", Built: "VersionEnv"},
	{Name: "PUBSUB_RABBITMQ_VERSION", Meaning: "a RabbitMQ release installed from Debian's packages into the cache instead of the system's rabbitmq-server ([versions.md](versions.md#rabbitmq-pubsub_rabbitmq_version))", Default: "the system's package"},
	{Name: "PUBSUB_RABBITMQ_DEBIAN_SUITES", Meaning: "the Debian suites searched for `PUBSUB_RABBITMQ_VERSION`'s packages (space-separated)", Default: "trixie sid"},
	{Name: "PUBSUB_DEBIAN_MIRROR", Meaning: "the Debian archive `PUBSUB_RABBITMQ_VERSION`'s packages come from", Default: "the archive the system's apt uses"},
	{Name: "PUBSUB_RABBITMQ_SERVER", Meaning: "the local RabbitMQ's start script", Default: "/usr/lib/rabbitmq/bin/rabbitmq-server"},
	{Name: "PUBSUB_KAFKA_IMAGE", Meaning: "the container provider's Kafka image (one that reads `KAFKA_*` as Apache Kafka's does)", Default: "apache/kafka:<release>"},
	{Name: "PUBSUB_PULSAR_IMAGE", Meaning: "the container provider's Pulsar image", Default: "apachepulsar/pulsar:<release>"},
	{Name: "PUBSUB_RABBITMQ_IMAGE", Meaning: "the container provider's RabbitMQ image", Default: "rabbitmq:3.10.8-management, or the release `PUBSUB_RABBITMQ_VERSION` names"},
	// Adapters.
	{Name: "TRUSTGRAPH_SOURCE", Meaning: "a TrustGraph working copy that the `trustgraph-*` columns test instead of the release ([trustgraph.md](trustgraph.md))"},
	{Name: "PUBSUB_ADAPTER_LISTEN", Meaning: "where an adapter process listens (`unix:<socket>`)", Internal: true},
	{Name: "PUBSUB_ADAPTER_INSTANCE", Meaning: "a setting, not a variable: names a private instance of a reference port (its own adapter process)", Internal: true},
	{Name: "PUBSUB_ADAPTER_<NAME>", Meaning: "declares an out-of-process adapter without Go edits: the command; `_BROKER`, `_DIR`, `_REQUIREMENTS`, `_PIP`, `_EXTENDS`, `_DESCRIPTION` beside it ([adapters.md](adapters.md))"},
	{Name: "PUBSUB_REPO_ROOT", Meaning: "the module root that `{repo}` in an adapter's command stands for", Default: "the directory of go.mod"},
	// Child processes of the harness.
	{Name: "PUBSUB_SUITE_BIN", Meaning: "a suite test binary built beforehand, for the tests that run the suite (`make selftest`, `make mutants`)", Internal: true},
	{Name: "PUBSUB_CRASH_CHILD", Meaning: "turns the suite's test binary into the child process a consumer-crash spec kills", Internal: true},
	{Name: "PUBSUB_COST_FILE", Meaning: "the file the run's processes append their CPU cost to (`reports/out/cost.json`'s source)", Internal: true},
	// Not the harness's names, read by it.
	{Name: "JAVA_HOME", Meaning: "the Java the local brokers run on", Default: "java on PATH"},
	{Name: "XDG_CACHE_HOME", Meaning: "the cache's parent when `PUBSUB_CACHE` is unset (the cache is its `pubsub-conformance`)", Default: "~/.cache"},
	{Name: "NO_COLOR", Meaning: "set: the matrix on a terminal has no colours"},
}
