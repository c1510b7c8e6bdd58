# Pub/sub conformance harness.
#
#   make test          vet, unit tests, memory self-tests (Go, and Python through the adapter
#                      protocol), then conformance against real brokers
#   make conformance   the spec suite against real brokers, then the matrix; the gate on that run
#                      is the exit status (0: every failure accepted by ci/baseline.yaml)
#   make failover      what conformance leaves out for its cost: F5 on a three-node Kafka cluster
#   make flakes        RUNS=20 randomized conformance runs; lists what failed in any (flakes.md)
#   make soak          DURATION=10m of the generative workload (W1) per backend (reports/out/soak)
#   make mutants       detection power: known-bad variants must each fail a spec (reports/out/mutants.md)
#   make mutants-harness  gremlins over the harness's own code, unit tests only (docs/mutants.md)
#   make setup         install what a fresh Debian/Ubuntu machine lacks (test and conformance do it)
#   make bench         throughput and latency per backend, beside the raw client on the same broker
#   make warm          keep the brokers of BACKENDS running for focused WARM=1 runs (the fix loop)
#   make against       the last run of BACKENDS beside ci/baseline.yaml: improved, regressed, still failing
#   make versions      the matrix over broker releases: BROKER_VERSIONS="kafka=3.9.1,4.1.1 pulsar=4.0.7"
#
# Select backends with BACKENDS="kafka pulsar" (or PUBSUB_BACKENDS=kafka,pulsar), brokers with
# PUBSUB_BROKERS=auto|local|container|external, specs with SPECS=D2,A1 (catalogue IDs) or
# GINKGO_FLAGS="--label-filter='!slow'". A TrustGraph working copy: TRUSTGRAPH_SOURCE=<dir>;
# the fix loop (make warm, WARM=1, make against) is in docs/trustgraph.md.

GO       ?= go
# -trimpath: the Go build cache keys a package built without it by its directory, so a fresh
# clone at a new path recompiled every package of this module (measured: building all test
# binaries took 45 s in a fresh clone without it, 17 s with it once the cache had it; the
# first build with it recompiles the dependencies once, about 3.5 min with the cgo Kafka client).
# Stack traces and failure locations then name files by import path.
export GOFLAGS := $(strip $(GOFLAGS) -trimpath)
# GNU make 4.3 exports nothing to $(shell): the go commands make runs while reading this file
# get the flags this way (without them a fresh clone compiled and linked `go run
# ./backends/cmd/backends` again, 4.7 CPU-s of each make conformance there).
GO_SHELL  = GOFLAGS='$(GOFLAGS)' $(GO)
GINKGO   ?= $(GO) tool ginkgo
comma    := ,
space    := $(subst ,, )
# Default: every registered backend that is neither the reference nor a known-bad variant, as
# backends/all registers them; asked once, and only by the targets that use BACKENDS.
BACKENDS ?= $(if $(PUBSUB_BACKENDS),$(subst $(comma), ,$(PUBSUB_BACKENDS)),$(REGISTERED_BACKENDS))
REGISTERED_BACKENDS = $(eval REGISTERED_BACKENDS := $$(or $$(shell $(GO_SHELL) run ./backends/cmd/backends -conformance),$$(error cannot list the registered backends: go run ./backends/cmd/backends -conformance failed)))$(REGISTERED_BACKENDS)
# BACKENDS=kafka,pulsar means the same as BACKENDS="kafka pulsar" (a comma-separated list
# would otherwise name one report file, ginkgo-kafka,pulsar.json).
ifneq ($(filter command line environment,$(origin BACKENDS)),)
override BACKENDS := $(subst $(comma), ,$(BACKENDS))
endif
# Parallel Ginkgo processes of the self-test: every spec uses its own topics and subscriptions.
PROCS        ?= 2
# Parallel Ginkgo processes of the conformance run (all backends in one run): specs mostly wait
# on the brokers, so more processes than cores shorten the run; --randomize-all lets the longest
# waiters (SpecPriority in specs/) start first. Measured on 4 Dec, the default backends on 2
# quiet cores: 6 processes 220 s of suite, 10 processes 126-132 s at ~150 CPU-s (the CPU 59 %
# busy), 14 processes 110 s at the same CPU (docs/performance.md).
CONFORMANCE_PROCS ?= 14
GINKGO_FLAGS ?=
# The conformance run (all backends) never takes longer than this (Ginkgo's suite timeout).
SUITE_TIMEOUT ?= 45m
REPORTS      := reports/out
# The suite's test binary, one for every run (self-tests, conformance, soak, ...), linked only
# when a Go source changed (its rule is below): `ginkgo ./suite` compiles into suite/suite.test
# and deletes it after the run, so two of them side by side would trip on each other's binary.
# The go tests that run it (suite/selftest, suite/cmd/mutants) take it as PUBSUB_SUITE_BIN.
CONFORMANCE_BIN := $(REPORTS)/bin/suite-conformance.test
SUITE_BIN       := $(CONFORMANCE_BIN)
# Unit tests: everything but the suite packages that have their own targets (the suite itself,
# suite/selftest and suite/cmd/mutants: selftest); suite/cmd/preflight is a unit. The packages
# whose tests wait longest on JVMs come first: go test starts test binaries in this order, and
# fixtures/local (a private Kafka and Pulsar, each restarted and killed: about a minute) alone
# sets the stage's length when it starts first instead of last.
UNIT_FIRST = ./fixtures/local ./fixtures/rabbitmq ./backends/pulsar ./backends/kafka ./fixtures/maven ./backends/remote
UNIT_PKGS  = $(shell $(GO_SHELL) list $(UNIT_FIRST) ./... | awk '!seen[$$0]++' | grep -v -e '/suite$$' -e '/suite/selftest$$' -e '/suite/cmd/mutants$$')
# -count=1: several of these tests start real JVM brokers; Go's test cache cannot see a changed
# java, jar cache or broker, so a cached pass would prove nothing. No -short: under -short the
# tests that need a broker skip (a quick edit loop), and `make unit` fails on such a skip.
# -p: test binaries run in parallel; the broker packages mostly wait on their JVMs, so more than
# go's default (one per core) shortens the stage.
# -timeout: a test binary's bound (go test's default is 10m). fixtures/local waits for its
# class-data dump, which runs at nice 19 and so on a loaded machine after everything else.
UNIT_PARALLEL ?= 4
UNIT_FLAGS ?= -count=1 -p=$(UNIT_PARALLEL) -timeout=20m
GOTESTSUM  ?= $(GO) tool gotestsum

.PHONY: all setup test build vet unit catalogue selftest selftest-memory selftest-variants adapter-selftest suite-bin proto conformance warm against failover flakes soak mutants mutants-harness bench brokers report gate clean help versions

# What `make test` and `make conformance` need on the machine, one <check>=<packages> per entry:
# <check> is a command (alternatives separated by ':', any one on PATH will do), an absolute
# path that must exist, or `python3-venv`: the python3 on PATH makes a virtualenv and has the
# ensurepip module that puts pip into it (Debian and Ubuntu ship both in the python3-venv
# package, apart from python3; without it `python3 -m venv` fails). <packages> are the
# Debian/Ubuntu packages that provide it, separated by ','. Extend it (SETUP_NEEDS += jq=jq);
# SETUP_NEEDS= skips the step.
#   java, mvn: the local brokers (JVMs from Maven jars); gcc, libc headers: the Kafka client's
#   cgo build; chromium: the reports test renders the HTML matrix in a real headless browser;
#   python3 with venv: the Python adapters of backends/remote (their virtualenv, in the cache);
#   rabbitmq-server: the local RabbitMQ (an Erlang child process, fixtures/rabbitmq); patch: the
#   trustgraph-*-patched columns apply patches/trustgraph-base-*/ to the released sdist;
#   patchelf: PUBSUB_RABBITMQ_VERSION's release runs a newer Debian suite's Erlang against that
#   suite's glibc, unpacked in the cache (fixtures/rabbitmq/release.go).
SETUP_NEEDS ?= java=openjdk-17-jre-headless mvn=maven gcc=gcc /usr/include/stdio.h=libc6-dev \
               chromium:chromium-browser:google-chrome=chromium python3=python3 python3-venv=python3-venv \
               /usr/lib/rabbitmq/bin/rabbitmq-server=rabbitmq-server patch=patch patchelf=patchelf

all: test

help:
	@sed -n '2,16p' Makefile | sed 's/^# \{0,1\}//'

## setup: install the missing SETUP_NEEDS with apt-get (sudo when not root). A no-op when all
## is present; where installing is impossible, one line naming the packages, and exit 1. After
## installing, everything is checked again (a python3 on PATH that is not the system's gets no
## venv from the package).
setup:
	@missing() { out=""; for need in $(SETUP_NEEDS); do \
	    found=""; for c in $$(echo "$${need%%=*}" | tr ':' ' '); do \
	      case "$$c" in \
	        /*) [ -e "$$c" ] && found=1 ;; \
	        python3-venv) d=$$(mktemp -d) && python3 -m venv --without-pip "$$d/v" >/dev/null 2>&1 \
	          && python3 -c 'import ensurepip; ensurepip.version()' >/dev/null 2>&1 && found=1; rm -rf "$$d" ;; \
	        *) command -v "$$c" >/dev/null 2>&1 && found=1 ;; \
	      esac; \
	    done; \
	    [ -n "$$found" ] || out="$$out $$(echo "$${need#*=}" | tr ',' ' ')"; \
	  done; echo $$out; }; \
	missing=$$(missing); \
	[ -n "$$missing" ] || exit 0; \
	sudo=""; \
	if [ "$$(id -u)" -ne 0 ]; then \
	  if command -v sudo >/dev/null 2>&1 && { [ -t 0 ] || sudo -n true 2>/dev/null; }; then sudo=sudo; \
	  else echo "setup: missing $$missing; cannot install them here (not root, no usable sudo): install them (apt-get install $$missing) and retry, or run with SETUP_NEEDS= to skip this check" >&2; exit 1; fi; \
	fi; \
	if ! command -v apt-get >/dev/null 2>&1; then \
	  echo "setup: missing $$missing; cannot install them here (no apt-get): install the equivalent packages and retry, or run with SETUP_NEEDS= to skip this check" >&2; exit 1; \
	fi; \
	echo "setup: installing $$missing with apt-get"; \
	$$sudo apt-get update -q && DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -q --no-install-recommends $$missing \
	  || { echo "setup: apt-get could not install $$missing (see above): install them and retry" >&2; exit 1; }; \
	still=$$(missing); \
	[ -z "$$still" ] || { hint=""; case " $$still " in *" python3-venv "*) hint=" (python3 on PATH is $$(command -v python3); a python3 that is not the system's gets no venv from that package)" ;; esac; \
	  echo "setup: still missing after apt-get install $$missing: $$still$$hint" >&2; exit 1; }

## test: the whole check, as CI runs it: vet, unit, catalogue, selftest and adapter-selftest
## side by side (the self-tests take little CPU: they mostly wait out spec bounds, which unit's
## JVM starts do not shorten), each stage's output printed whole when it ends; then, when all
## passed, conformance, whose exit status is the gate at GATE_LEVEL on that run's own results
## (so ci/baseline.yaml cannot go stale unnoticed): a backend's failure accepted in the baseline
## for its column (rabbitmq's missing replay) is a result, not a broken build; anything worse
## than the baseline, a missing report or an interrupted run fails it. TEST_JOBS=1 runs them one
## after the other.
TEST_JOBS ?= 6
test: setup
	@echo "== build: the suite binary and every package, once, before the stages that use them"
	@$(MAKE) --no-print-directory SETUP_NEEDS= build
	@echo "== vet, unit, catalogue, selftest, adapter-selftest side by side (TEST_JOBS=$(TEST_JOBS)); each stage's output appears when it ends"
	@$(MAKE) --no-print-directory -j$(TEST_JOBS) --output-sync=target SETUP_NEEDS= vet unit catalogue selftest adapter-selftest
	@$(MAKE) --no-print-directory SETUP_NEEDS= conformance

## build: every package and the suite binary. make test runs it alone before its parallel
## stages: on a fresh machine the first cgo build of the Kafka client takes minutes, and no
## stage may compile it inside a test's timeout while the others compile beside it.
build: setup $(SUITE_BIN)
	$(GO) build ./...

vet: setup
	$(GO) vet ./...
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$unformatted" ]; then echo "gofmt: these files need gofmt -w: $$unformatted" >&2; exit 1; fi

## unit: every package's go tests (the backends' integration tests and fixtures start real
## brokers), one line per package; then every skipped test with its reason, failing the stage if
## a test skipped for lack of a broker. Test events: reports/out/unit-tests.json. The jars are
## fetched first, once, so that parallel test packages never run mvn at the same time.
unit: setup brokers
	@mkdir -p $(REPORTS)
	@status=0; \
	$(GOTESTSUM) --format=pkgname-and-test-fails --format-icons=text --hide-summary=skipped \
	  --jsonfile=$(REPORTS)/unit-tests.json -- $(UNIT_FLAGS) $(UNIT_PKGS) || status=1; \
	$(GO) run ./fixtures/cmd/skips $(REPORTS)/unit-tests.json || status=1; \
	exit $$status

# The committed catalogue (reports/catalogue.md) must be the one generated from specs/catalogue,
# and every catalogue entry must have exactly one spec.
# Every marked sentence of the contract (backends/backend.go, topic.go) must be asserted by a
# spec or carry a reasoned not-testable entry (reports/contract.md, specs/catalogue/contract.go).
# docs/settings.md must be the one generated from the tables of environment variables
# (internal/envvars, each backend's settings.go; backends/cmd/settings).
catalogue:
	@if [ -d reports/cmd/catalogue ]; then $(GO) run ./reports/cmd/catalogue -check; fi
	@if [ -d reports/cmd/contract ]; then $(GO) run ./reports/cmd/contract -check; fi
	@$(GO) run ./backends/cmd/settings -check

## selftest: the catalogue on the in-process reference backend (must pass) and on its known-bad
## variants (the matching specs must fail). No broker; about 90 s. Its reports go to
## reports/out/selftest/ so the reference never shows up in the conformance matrix.
## With make -j its two parts run side by side: selftest-memory (the catalogue on the reference)
## and selftest-variants (the go tests of suite/selftest and suite/cmd/mutants, which run the
## suite binary on the variants; 80-90 s, most of it memory~restart-strands-consumers waiting
## out R6's one-minute bound).
selftest: selftest-memory selftest-variants
selftest-memory: setup $(SUITE_BIN)
	PUBSUB_BACKENDS=memory PUBSUB_REPORT_DIR=$(CURDIR)/$(REPORTS)/selftest $(GINKGO) --procs=$(PROCS) --timeout=10m $(GINKGO_FLAGS) $(SUITE_BIN)
selftest-variants: setup $(SUITE_BIN)
	PUBSUB_SUITE_BIN=$(abspath $(SUITE_BIN)) $(GO) test -count=1 ./suite/selftest ./suite/cmd/mutants

## adapter-selftest: the catalogue on the memory reference ported to Python (python-memory),
## through the adapter protocol (backends/remote): proves the protocol path transparent. No
## broker; makes the SDK's virtualenv in the cache on its first run.
adapter-selftest: setup $(SUITE_BIN)
	PUBSUB_BACKENDS=python-memory PUBSUB_REPORT_DIR=$(CURDIR)/$(REPORTS)/selftest $(GINKGO) --procs=$(PROCS) --timeout=10m $(GINKGO_FLAGS) $(SUITE_BIN)

suite-bin: setup $(SUITE_BIN)

## proto: regenerate the Go code of proto/pubsub/v1/adapter.proto (checked by go test ./proto/...)
proto:
	sh proto/gen.sh

# TRUSTGRAPH_SOURCE=<dir>: the async TrustGraph adapters (trustgraph-kafka, -pulsar, -rabbitmq) test that
# working copy (a trustgraph checkout or a trustgraph-base source tree,
# installed editable over the pinned release in a virtualenv of its own) instead of the pinned
# trustgraph-base; made absolute here, so a relative path is from the directory make runs in.
ifneq ($(strip $(TRUSTGRAPH_SOURCE)),)
override TRUSTGRAPH_SOURCE := $(abspath $(TRUSTGRAPH_SOURCE))
export TRUSTGRAPH_SOURCE
endif

# SPECS=D2,A1: only these catalogue IDs (Ginkgo labels id:D2 || id:A1), in place of
# CONFORMANCE_FILTER; the gate reads the others as not selected.
SPECS ?=
SPECS_FILTER = $(subst $(space), || ,$(foreach s,$(subst $(comma), ,$(SPECS)),id:$(s)))

# WARM=1: a focused run on the brokers `make warm` keeps running (their settings in
# $(WARM_DIR)/<kind>.env, PUBSUB_BROKERS=external) with the suite binary built only when a Go
# file changed, one Ginkgo process (WARM_PROCS) and no compare step (make against reads the
# result). Adapter processes start fresh each run, so a working copy's edit is always what runs;
# their virtualenvs are kept in the cache.
WARM       ?=
WARM_DIR   := $(REPORTS)/warm
WARM_PROCS ?= 1
# The suite binary of the conformance runs (conformance, warm, failover, flakes, soak) is linked
# only when a Go file (tracked or not), its directory (a file added or deleted), go.mod or go.sum
# changed: linking the cgo binary was 8-14 s of every run's wall time on the shared 2 cores
# (docs/performance.md). `make -B conformance` or deleting it forces a new link.
GO_FILES    = $(wildcard $(shell git ls-files -co --exclude-standard '*.go' 2>/dev/null || find . -name '*.go' -not -path './reports/out/*'))
# What the binaries embed (go:embed) counts too: a corpus entry added or edited must reach the
# next run (the directory's mtime catches an added or removed file).
EMBEDDED    = $(wildcard internal/workload/testdata/corpus/*.txt fixtures/maven/*/pom.xml) internal/workload/testdata/corpus
GO_SOURCES  = $(GO_FILES) $(sort $(dir $(GO_FILES))) $(EMBEDDED) go.mod go.sum
WARM_BIN   := $(CONFORMANCE_BIN)
# Linked binaries (the suite binary, preflight, compare, cost) are also kept in BIN_CACHE under
# a key of what they are made of: the Go toolchain and build settings and the content (not the
# mtime or path) of every file of GO_SOURCES. Go's build cache keeps the compiled packages
# across clones (-trimpath) but never a `go build -o` or `go test -c` output, so a fresh clone
# linked all four again: 7-14 s of wall before the first broker starts. The three newest
# binaries of each name are kept.
BIN_CACHE  ?= $(or $(PUBSUB_CACHE),$(or $(XDG_CACHE_HOME),$(HOME)/.cache)/pubsub-conformance)/linked
SOURCE_KEY  = $(eval SOURCE_KEY := $$(shell { $(GO_SHELL) version; $(GO_SHELL) env GOOS GOARCH GOAMD64 GOFLAGS GOEXPERIMENT CGO_ENABLED CC CXX CGO_CFLAGS CGO_CPPFLAGS CGO_CXXFLAGS CGO_LDFLAGS; \
	  sha256sum $(sort $(filter-out %/ internal/workload/testdata/corpus,$(GO_SOURCES))); } | sha256sum | cut -c1-32))$(SOURCE_KEY)
# $(call cached_link,<command that writes $@>): copy $@ from BIN_CACHE, else run the command and
# keep its output there.
define cached_link
	@mkdir -p $(dir $@) $(BIN_CACHE)
	@c=$(BIN_CACHE)/$(notdir $@)-$(SOURCE_KEY); \
	if [ -x "$$c" ]; then cp "$$c" $@.tmp && mv $@.tmp $@; \
	else echo '$(1)' && $(1) && cp $@ "$$c.$$$$" && mv "$$c.$$$$" "$$c" && \
	  { ls -t $(BIN_CACHE)/$(notdir $@)-* | tail -n +4 | xargs -r rm -f; }; fi
endef

# The conformance run leaves out the specs labelled cluster (F5, leader failover on a private
# three-node Kafka cluster: three more JVMs and ~40 s, which do not fit the 2-minute verdict on
# 2 cores): the matrix shows them as not selected by the filter, `make failover` runs them and
# CONFORMANCE_FILTER= runs everything. A --label-filter in GINKGO_FLAGS comes later and wins.
CONFORMANCE_FILTER ?= !cluster
# One conformance suite run of every backend in BACKENDS (conformance, flakes, failover).
CONFORMANCE_LABELS = $(if $(SPECS),$(SPECS_FILTER),$(CONFORMANCE_FILTER))
CONFORMANCE_RUN = PUBSUB_BACKENDS=$(subst $(space),$(comma),$(strip $(BACKENDS))) $(COST_WRAP) $(GINKGO) --procs=$(if $(WARM),$(WARM_PROCS),$(CONFORMANCE_PROCS)) \
	  --randomize-all --timeout=$(SUITE_TIMEOUT) $(if $(CONFORMANCE_LABELS),--label-filter='$(CONFORMANCE_LABELS)') $(GINKGO_FLAGS) $(CONFORMANCE_BIN)

# The preflight (suite/cmd/preflight): the run's settings - BACKENDS, SPECS, CONFORMANCE_PROCS,
# GATE_LEVEL, DURATION, CONFORMANCE_STRICT as the target passes them, PUBSUB_BROKERS and the
# suite's other settings from the environment - checked before the suite is built, a broker
# starts or Ginkgo runs: a bad one is one line naming it and what is allowed, and exit 2. Built
# like the suite binary, relinked only when a Go file changed (about 0.1 s a run when it was not).
PREFLIGHT_BIN := $(REPORTS)/bin/preflight
$(PREFLIGHT_BIN): $(GO_SOURCES) | setup
	$(call cached_link,$(GO) build -o $@ ./suite/cmd/preflight)
PREFLIGHT_ARGS = 'BACKENDS=$(BACKENDS)' 'SPECS=$(SPECS)' 'CONFORMANCE_PROCS=$(if $(WARM),$(WARM_PROCS),$(CONFORMANCE_PROCS))'
# The matrix and gate command, built: `go run` turns the exit status 2 of the program it runs
# into 1 and prints "exit status 2", and conformance and gate exit with compare's status.
COMPARE_BIN := $(REPORTS)/bin/compare
$(COMPARE_BIN): $(GO_SOURCES)
	$(call cached_link,$(GO) build -o $@ ./reports/cmd/compare)
# The run's cost (suite/cmd/cost): make conformance runs the suite under it, which writes the
# CPU of the whole process tree, split by the kinds the brokers and adapters record
# (internal/cost), to $(REPORTS)/cost.json; its last line prints it.
COST_BIN := $(REPORTS)/bin/cost
$(COST_BIN): $(GO_SOURCES)
	$(call cached_link,$(GO) build -o $@ ./suite/cmd/cost)
COST_WRAP =
conformance: COST_WRAP = $(COST_BIN) -records $(REPORTS)/cost.tsv -out $(REPORTS)/cost.json --
# The suite binary (and compare), after the preflight: a recursive make, so that bad input is
# answered before a link of the cgo binary; silent when they are up to date.
SUITE_BIN_AFTER_PREFLIGHT = { $(MAKE) --no-print-directory -q SETUP_NEEDS= $(CONFORMANCE_BIN) $(COMPARE_BIN) $(COST_BIN) || \
	  $(MAKE) --no-print-directory SETUP_NEEDS= $(CONFORMANCE_BIN) $(COMPARE_BIN) $(COST_BIN) || exit 2; }

# CONFORMANCE_STRICT=1: make conformance exits 1 on any failure, also one ci/baseline.yaml
# accepts for its column.
CONFORMANCE_STRICT ?=

## conformance: ONE suite run for all BACKENDS (both brokers start concurrently; pulsar and
## pulsar-persistent share one broker); JUnit, Ginkgo JSON and meta per backend into reports/out,
## the matrix, then the gate on this run (GATE_LEVEL), whose verdict is the exit status: 0 when
## every failure is one ci/baseline.yaml accepts for that column, 1 when anything else failed,
## 2 when the harness could not run (bad input, a broker that could not start, a missing report,
## an interrupted run); the last line says which, and reports/out/conformance.status holds the
## number (make itself exits 2 on any failed recipe). Each backend's report files of the last run
## are removed first, so a run that writes none is never judged by an older run's. WARM=1: no
## matrix and no gate (make against reads the result); the exit status is the suite's.
conformance: setup $(PREFLIGHT_BIN)
	@mkdir -p $(REPORTS)
	@rm -f $(REPORTS)/conformance.status $(REPORTS)/cost.json; \
	files=$$($(PREFLIGHT_BIN) -report-dir $(REPORTS) $(PREFLIGHT_ARGS) 'GATE_LEVEL=$(GATE_LEVEL)' 'CONFORMANCE_STRICT=$(CONFORMANCE_STRICT)') || { echo 2 > $(REPORTS)/conformance.status; exit 2; }; \
	$(SUITE_BIN_AFTER_PREFLIGHT); \
	for f in $$files; do l=$${f##*/ginkgo-}; l=$${l%.json}; rm -f $$f $(REPORTS)/junit-$$l.xml $(REPORTS)/meta-$$l.json; done; \
	status=0; echo "== conformance: $(BACKENDS)$(if $(SPECS), (specs $(SPECS)))$(if $(TRUSTGRAPH_SOURCE), (TrustGraph working copy $(TRUSTGRAPH_SOURCE)))$(if $(WARM), (warm))"; \
	$(if $(WARM),envs=$$(ls $(WARM_DIR)/*.env 2>/dev/null); \
	  [ -n "$$envs" ] || { echo "conformance: WARM=1 but no warm brokers ($(WARM_DIR)/*.env): run make warm in another terminal first" >&2; exit 2; }; \
	  set -a; for f in $$envs; do . ./$$f; done; set +a;) \
	$(CONFORMANCE_RUN) || status=1; \
	$(if $(WARM),exit $$status;) \
	verdict=0; $(COMPARE_BIN) -gate ci/baseline.yaml -gate-level=$(GATE_LEVEL) -run-verdict $(if $(filter 1,$(CONFORMANCE_STRICT)),-strict) $$files || verdict=$$?; \
	[ ! -f $(REPORTS)/cost.json ] || $(COST_BIN) -print $(REPORTS)/cost.json; \
	echo $$verdict > $(REPORTS)/conformance.status; exit $$verdict

## warm: start the brokers BACKENDS need and keep them running (Ctrl-C stops them); meanwhile
## make conformance WARM=1 SPECS=<ids> runs on them without a broker start (docs/trustgraph.md).
$(CONFORMANCE_BIN): $(GO_SOURCES)
	$(call cached_link,$(GO) test -c -o $@ ./suite)
warm: setup
	@mkdir -p $(WARM_DIR)
	@kinds=$$($(GO) run ./backends/cmd/backends -brokers "$(BACKENDS)") || exit 1; \
	[ -n "$$kinds" ] || { echo "warm: no broker needed by $(BACKENDS)" >&2; exit 2; }; \
	$(GO) build -o $(REPORTS)/bin/brokers ./fixtures/cmd/brokers || exit 1; \
	echo "== warm: $$kinds for $(BACKENDS); Ctrl-C stops them"; \
	trap 'kill $$pids 2>/dev/null; wait' INT TERM; pids=""; \
	for k in $$kinds; do $(REPORTS)/bin/brokers run $$k -env $(WARM_DIR)/$$k.env & pids="$$pids $$!"; done; \
	wait

## against: the last run of BACKENDS beside an accepted column of ci/baseline.yaml: what
## improved and what regressed (the gate's own comparison; exit 1 on a regression at
## GATE_LEVEL). AGAINST=<baseline column> (default: each backend's own), e.g.
## make against BACKENDS=trustgraph-kafka-patched AGAINST=trustgraph-kafka.
AGAINST ?=
against:
	$(GO) run ./reports/cmd/compare -quiet -md "" -html "" -bench "" -still-failing -gate ci/baseline.yaml -gate-level=$(GATE_LEVEL) \
	  -backend $(subst $(space),$(comma),$(strip $(BACKENDS))) $(if $(AGAINST),$(foreach b,$(BACKENDS),-baseline-of $(b)=$(AGAINST))) \
	  $(foreach b,$(BACKENDS),$(REPORTS)/ginkgo-$(b).json)

## failover: the specs conformance leaves out for their cost (label cluster: F5, leader failover
## on a private three-node Kafka cluster) for BACKENDS; reports and matrix in reports/out/failover
## (backends without a cluster skip F5 with the reason).
failover: CONFORMANCE_FILTER = cluster
failover: setup $(PREFLIGHT_BIN)
	@mkdir -p $(REPORTS)/failover
	@$(PREFLIGHT_BIN) $(PREFLIGHT_ARGS) >/dev/null || exit 2; $(SUITE_BIN_AFTER_PREFLIGHT); \
	status=0; echo "== failover: $(BACKENDS)"; \
	PUBSUB_REPORT_DIR=$(CURDIR)/$(REPORTS)/failover $(CONFORMANCE_RUN) || status=1; \
	$(GO) run ./reports/cmd/compare -md $(REPORTS)/failover/compare.md -html $(REPORTS)/failover/compare.html \
	  -bench "" $(foreach b,$(BACKENDS),$(REPORTS)/failover/ginkgo-$(b).json) || status=1; \
	exit $$status

## flakes: RUNS complete conformance runs of BACKENDS, each in a new random order (a fresh
## --randomize-all seed), each run's reports and log in reports/out/flakes/run-<i>, then
## reports/out/flakes/flakes.md: every behaviour that failed or did not run in any run, how
## often, and why. Fails if any did: the suite takes no retries, so a flake is a bug to find.
## RUNS=20 takes about 40 minutes on 2 cores.
RUNS ?= 20
flakes: setup $(PREFLIGHT_BIN)
	@$(PREFLIGHT_BIN) $(PREFLIGHT_ARGS) >/dev/null || exit 2; $(SUITE_BIN_AFTER_PREFLIGHT); \
	rm -rf $(REPORTS)/flakes && mkdir -p $(REPORTS)/flakes; \
	for i in $$(seq -w 1 $(RUNS)); do \
	  dir=$(REPORTS)/flakes/run-$$i; mkdir -p $$dir; start=$$(date +%s); \
	  PUBSUB_REPORT_DIR=$(CURDIR)/$$dir $(CONFORMANCE_RUN) >$$dir/run.log 2>&1 && r=passed || r="FAILED (see $$dir/run.log)"; \
	  echo "== flakes: run $$i of $(RUNS): $$r in $$(( $$(date +%s) - start ))s"; \
	done; \
	$(GO) run ./reports/cmd/flakes -md $(REPORTS)/flakes/flakes.md $(REPORTS)/flakes/run-*

## soak: the generative workload (W1, specs/workload.go) alone on BACKENDS for DURATION each
## (programs are started until it passes), one suite run, with the conformance reports (JUnit,
## Ginkgo JSON, meta per backend) and the matrix in reports/out/soak. A failure prints its seed
## and shrunk program. docs/workload.md. NEMESIS=1: W2 instead, the programs under a nemesis
## schedule on a private broker behind the fault proxy (docs/nemesis.md).
DURATION ?= 10m
NEMESIS  ?=
soak: CONFORMANCE_FILTER = $(if $(NEMESIS),id:W2,id:W1)
soak: setup $(PREFLIGHT_BIN)
	@mkdir -p $(REPORTS)/soak
	@$(PREFLIGHT_BIN) $(PREFLIGHT_ARGS) 'DURATION=$(DURATION)' >/dev/null || exit 2; $(SUITE_BIN_AFTER_PREFLIGHT); \
	status=0; echo "== soak: $(if $(NEMESIS),W2,W1) for $(DURATION) on $(BACKENDS)"; \
	$(if $(NEMESIS),PUBSUB_NEMESIS=1) PUBSUB_WORKLOAD_BUDGET=$(DURATION) PUBSUB_REPORT_DIR=$(CURDIR)/$(REPORTS)/soak $(CONFORMANCE_RUN) || status=1; \
	$(GO) run ./reports/cmd/compare -md $(REPORTS)/soak/compare.md -html $(REPORTS)/soak/compare.html \
	  -bench "" $(foreach b,$(BACKENDS),$(REPORTS)/soak/ginkgo-$(b).json) || status=1; \
	exit $$status

## mutants: one suite run per base (the unmodified base and all its known-bad variants in it,
## each variant on the specs its record names); fails if a variant survives or the base fails
## anything. MUTANT_BASES=kafka, MUTANT_VARIANTS=a,b, MUTANT_BUDGET=20m per base run;
## NEMESIS=1 also scores the variants only W2 kills (reconnect-drops-queued: docs/nemesis.md).
MUTANT_BASES    ?= # empty: every registered conformance backend
MUTANT_VARIANTS ?=
MUTANT_BUDGET   ?= 20m
# Most variant specs fail by waiting out their bound: more processes wait in parallel.
MUTANT_PROCS    ?= 4
mutants:
	$(if $(NEMESIS),PUBSUB_NEMESIS=1) $(GO) run ./suite/cmd/mutants -bases=$(MUTANT_BASES) -procs=$(MUTANT_PROCS) -timeout=$(MUTANT_BUDGET) $(if $(MUTANT_VARIANTS),-variants=$(MUTANT_VARIANTS))

## mutants-harness: mutation testing of the harness's own code (make mutants is the backends')
## with gremlins (a tool of go.mod): reports, internal/evidence, internal/column,
## internal/history, internal/workload, specs/catalogue, backends/remote and the fixtures package, each by its unit tests (no broker;
## the test flags per package are in internal/cmd/mutants-harness/targets.go). Writes
## reports/out/mutants-harness/summary.md; fails when a package's efficacy (killed / (killed +
## lived)) is below MUTANTS_HARNESS_THRESHOLD or a survivor is neither killed nor listed as
## equivalent in docs/mutants.md. MUTANTS_HARNESS_TARGETS=reports,specs/catalogue picks some.
MUTANTS_HARNESS_TARGETS   ?=
MUTANTS_HARNESS_THRESHOLD ?= 90
mutants-harness:
	$(GO) run ./internal/cmd/mutants-harness -threshold=$(MUTANTS_HARNESS_THRESHOLD) $(if $(MUTANTS_HARNESS_TARGETS),-targets=$(MUTANTS_HARNESS_TARGETS))

## bench: per backend, on brokers it starts: confirmed-send throughput (50,000 x 1 KiB, 1 and 8
## senders), end-to-end latency at 1,000 msg/s for 20 s (HdrHistogram, from the intended send time),
## receive-and-ack (20,000 x 1 KiB, 1 and 8 consumers) and Consumer() subscribe-to-live time, each
## beside the raw client on the same broker (the ratio is the robust figure on a shared machine).
## reports/out/bench-<backend>.json, bench.md and bench.html; the Performance section of
## compare.md/.html when conformance results are there too. BENCH_FLAGS=-smoke: seconds.
BENCH_FLAGS ?=
bench:
	$(GO) run ./bench/cmd/bench -backends $(shell echo $(BACKENDS) | tr ' ' ',') $(BENCH_FLAGS)
	@if ls $(REPORTS)/junit-*.xml >/dev/null 2>&1; then $(GO) run ./reports/cmd/compare -quiet && echo "wrote $(REPORTS)/compare.md and .html with the Performance section"; \
	else echo "no conformance results in $(REPORTS): the Performance section is in $(REPORTS)/bench.md and .html; make conformance, then make report, puts it beside the matrix"; fi

## versions: the conformance matrix over broker releases (docs/versions.md). For each
## kind=release,... of BROKER_VERSIONS, one suite run per release of the VERSION_BACKENDS that
## need that kind (PUBSUB_<KIND>_VERSION=<release>: its jars through the Maven cache, RabbitMQ's
## Debian packages into the cache), reports in
## reports/out/versions as <backend>@<release> (the pinned release keeps <backend>; the names are
## the suite's own, printed by its preflight, so PUBSUB_ISOLATE's +isolated is kept), then one
## matrix of them all and the gate, which is the verdict (baseline keys <backend>@<release>,
## else the backend's own).
BROKER_VERSIONS  ?= kafka=3.7.2,3.9.1,4.1.1,4.4.0 pulsar=4.0.7,4.2.4 rabbitmq=4.3.6
VERSION_BACKENDS ?= kafka trustgraph-kafka pulsar trustgraph-pulsar rabbitmq trustgraph-rabbitmq
VERSIONS_DIR     := $(REPORTS)/versions
versions: setup $(PREFLIGHT_BIN)
	@mkdir -p $(VERSIONS_DIR); files=""; \
	for kv in $(BROKER_VERSIONS); do \
	  kind=$${kv%%=*}; rels=$$(echo "$${kv#*=}" | tr ',' ' '); \
	  case "$$kv" in *=?*) ;; *) echo "versions: BROKER_VERSIONS entry '$$kv': want kind=release,release (e.g. kafka=3.9.1,4.1.1)" >&2; exit 2 ;; esac; \
	  bs=$$($(GO) run ./backends/cmd/backends -kind "$$kind" $(VERSION_BACKENDS)) || exit 2; \
	  [ -n "$$bs" ] || { echo "versions: none of VERSION_BACKENDS ($(VERSION_BACKENDS)) needs a $$kind broker" >&2; exit 2; }; \
	  var=PUBSUB_$$(echo "$$kind" | tr 'a-z' 'A-Z')_VERSION; \
	  for v in $$rels; do \
	    echo "== versions: $$kind $$v ($$var=$$v): $$bs"; \
	    vfiles=$$(env $$var=$$v $(PREFLIGHT_BIN) -report-dir $(VERSIONS_DIR) "BACKENDS=$$bs") || exit 2; \
	    rm -f $$vfiles; \
	    env $$var=$$v PUBSUB_REPORT_DIR=$(abspath $(VERSIONS_DIR)) PUBSUB_BACKENDS=$$(echo $$bs | tr ' ' ',') \
	      $(GINKGO) --procs=$(CONFORMANCE_PROCS) --randomize-all --timeout=$(SUITE_TIMEOUT) \
	      $(if $(CONFORMANCE_LABELS),--label-filter='$(CONFORMANCE_LABELS)') $(GINKGO_FLAGS) ./suite \
	      || echo "== versions: $$kind $$v: the suite reported failures; the gate below decides"; \
	    files="$$files $$vfiles"; \
	  done; \
	done; \
	$(GO) run ./reports/cmd/compare -md $(VERSIONS_DIR)/compare.md -html $(VERSIONS_DIR)/compare.html -bench "" $$files || true; \
	echo "== gate: the releases' columns against ci/baseline.yaml (the verdict)"; \
	$(GO) run ./reports/cmd/compare -quiet -md "" -html "" -bench "" -gate ci/baseline.yaml -gate-level=$(GATE_LEVEL) $$files

## brokers: pre-fetch the broker jars into the cache (so a run does not resolve them)
brokers:
	$(GO) run ./fixtures/cmd/brokers fetch

## report: the behaviour x backend matrix (terminal, reports/out/compare.md and .html)
report:
	$(GO) run ./reports/cmd/compare

## gate: fail on anything worse than the accepted baseline in ci/baseline.yaml. What the run
## did not select (a spec its filter left out, a backend not in its BACKENDS) is reported, not
## a regression. GATE_LEVEL=must blocks only on regressions of MUST behaviours (SHOULD ones are
## reported); GATE_FILES: the report files (default: reports/out/ginkgo-*.json); GATE_FLAGS:
## more compare flags (-all-backends: every baseline backend must have reports, as in CI).
GATE_LEVEL ?= should
GATE_FILES ?=
GATE_FLAGS ?=
gate: $(COMPARE_BIN)
	@$(COMPARE_BIN) -gate ci/baseline.yaml -gate-level=$(GATE_LEVEL) $(GATE_FLAGS) $(GATE_FILES)

clean:
	rm -rf $(REPORTS)
