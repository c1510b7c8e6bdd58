package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/pubsub-conformance/harness/backends"
	"github.com/pubsub-conformance/harness/internal/modroot"
	"github.com/pubsub-conformance/harness/specs/catalogue"
)

// asCommand makes this test binary the preflight command, for the make targets' test.
const asCommand = "PREFLIGHT_TEST_AS_COMMAND"

func TestMain(m *testing.M) {
	if os.Getenv(asCommand) == "1" {
		os.Exit(run(os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func preflight(args []string, e map[string]string) (int, string, string) {
	var o, errOut bytes.Buffer
	code := run(args, env(e), &o, &errOut)
	return code, o.String(), errOut.String()
}

// The known backends as the BACKENDS line lists them: every registered backend but the
// known-bad variants, which are counted.
var knownLine = `(known: ` + backends.Known() + `)`

func TestGoodSettingsPass(t *testing.T) {
	code, out, errOut := preflight([]string{"-report-dir", "reports/out", "BACKENDS=kafka pulsar,rabbitmq kafka~nack-noop", "SPECS=L1,D2 A1",
		"CONFORMANCE_PROCS=6", "GATE_LEVEL=must", "DURATION=10m", "CONFORMANCE_STRICT=1"},
		map[string]string{"PUBSUB_BROKERS": "local", "PUBSUB_WORKLOAD_SEED": "17", "PUBSUB_RETENTION_FLOW": "168h", "PUBSUB_HISTORY_LIMIT": "50"})
	want := "reports/out/ginkgo-kafka.json reports/out/ginkgo-pulsar.json reports/out/ginkgo-rabbitmq.json reports/out/ginkgo-kafka~nack-noop.json\n"
	if code != 0 || out != want || errOut != "" {
		t.Errorf("exit %d\nstdout %q\nwant   %q\nstderr %q", code, out, want, errOut)
	}
	// Without -report-dir nothing is printed; empty SPECS, GATE_LEVEL, CONFORMANCE_STRICT are
	// the defaults.
	if code, out, errOut := preflight([]string{"BACKENDS=memory", "SPECS=", "GATE_LEVEL=", "CONFORMANCE_STRICT="}, nil); code != 0 || out != "" || errOut != "" {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// The report files are the suite's names: isolation mode and another broker release show.
func TestReportFilesAreTheSuites(t *testing.T) {
	t.Setenv("PUBSUB_ISOLATE", "topics")
	t.Setenv("PUBSUB_KAFKA_VERSION", "3.9.1")
	var o, e bytes.Buffer
	code := run([]string{"-report-dir", "out", "BACKENDS=kafka,rabbitmq"}, os.Getenv, &o, &e)
	if want := "out/ginkgo-kafka@3.9.1+isolated.json out/ginkgo-rabbitmq+isolated.json\n"; code != 0 || o.String() != want {
		t.Errorf("exit %d: stdout %q, want %q; stderr %q", code, o.String(), want, e.String())
	}
}

// Every bad value is one line naming the setting, the value and what is allowed, and exit 2.
func TestEachBadValueIsOneLine(t *testing.T) {
	ranges := catalogue.IDRanges()
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"BACKENDS=nosuch"}, nil, `BACKENDS: unknown backend "nosuch" ` + knownLine},
		{[]string{"BACKENDS=kafka,nosuch"}, nil, `BACKENDS: unknown backend "nosuch" ` + knownLine},
		{[]string{"BACKENDS="}, nil, `BACKENDS is empty: name one or more backends ` + knownLine},
		{[]string{"BACKENDS=kafka", "SPECS=Z9"}, nil, `SPECS: unknown catalogue ID "Z9"; the catalogue has ` + ranges},
		{[]string{"SPECS=D2,d3"}, nil, `SPECS: unknown catalogue ID "d3" (IDs are upper case: D3); the catalogue has ` + ranges},
		{[]string{"BACKENDS=kafka"}, map[string]string{"PUBSUB_BROKERS": "bogus"}, `PUBSUB_BROKERS="bogus" is not valid; use one of: auto, local, container, external`},
		{[]string{"BACKENDS=kafka"}, map[string]string{"PUBSUB_BROKERS": "external"},
			`broker provider unavailable: PUBSUB_BROKERS=external needs one of KAFKA_BOOTSTRAP_SERVERS, PULSAR_HOST, RABBITMQ_HOST (PULSAR_HOST with PULSAR_ADMIN_URL)`},
		{[]string{"GATE_LEVEL=may"}, nil, `GATE_LEVEL="may": want must (only MUST regressions block) or should (every regression blocks)`},
		{[]string{"CONFORMANCE_PROCS=0"}, nil, `CONFORMANCE_PROCS="0": want a whole number of parallel Ginkgo processes, 1 or more`},
		{[]string{"CONFORMANCE_PROCS=six"}, nil, `CONFORMANCE_PROCS="six": want a whole number of parallel Ginkgo processes, 1 or more`},
		{[]string{"CONFORMANCE_PROCS="}, nil, `CONFORMANCE_PROCS="": want a whole number of parallel Ginkgo processes, 1 or more`},
		{[]string{"DURATION=10x"}, nil, `DURATION="10x": want a positive Go duration such as 30s or 10m`},
		{[]string{"DURATION=10"}, nil, `DURATION="10": want a positive Go duration such as 30s or 10m`},
		{[]string{"CONFORMANCE_STRICT=yes"}, nil, `CONFORMANCE_STRICT="yes": want 1 (any failure exits 1, accepted or not) or empty`},
		{nil, map[string]string{"PUBSUB_ISOLATE": "all"}, `PUBSUB_ISOLATE="all": want topics (the harness creates every spec's topics outside the lifecycle area) or empty`},
		{nil, map[string]string{"PUBSUB_RETENTION_FLOW": "a week"}, `invalid configuration: PUBSUB_RETENTION_FLOW="a week" is not a positive duration (e.g. 168h)`},
		{nil, map[string]string{"PUBSUB_WORKLOAD_BUDGET": "soon"}, `PUBSUB_WORKLOAD_BUDGET="soon": want a positive Go duration such as 30s or 10m`},
		{nil, map[string]string{"PUBSUB_WORKLOAD_SEED": "x"}, `PUBSUB_WORKLOAD_SEED="x": want an integer seed`},
		{nil, map[string]string{"PUBSUB_HISTORY_LIMIT": "0"}, `PUBSUB_HISTORY_LIMIT="0": want a number of calls, at least 1`},
		{[]string{"BACKENDS=kafka"}, map[string]string{"PUBSUB_HISTORY_LIMIT": "lots"}, `PUBSUB_HISTORY_LIMIT="lots": want a number of calls, at least 1`},
	} {
		args := tc.args
		if len(args) > 0 && strings.HasPrefix(args[0], "BACKENDS=") {
			args = append([]string{"-report-dir", "reports/out"}, args...) // and no file printed
		}
		code, out, errOut := preflight(args, tc.env)
		if code != 2 || out != "" || errOut != tc.want+"\n" {
			t.Errorf("%v %v: exit %d, stdout %q\n got %q\nwant %q", tc.args, tc.env, code, out, errOut, tc.want+"\n")
		}
	}
	// Two bad values: a line each.
	code, _, errOut := preflight([]string{"BACKENDS=nosuch", "SPECS=Z9"}, map[string]string{"PUBSUB_BROKERS": "bogus"})
	if lines := strings.Split(strings.TrimSuffix(errOut, "\n"), "\n"); code != 2 || len(lines) != 3 ||
		!strings.HasPrefix(lines[0], "BACKENDS:") || !strings.HasPrefix(lines[1], "SPECS:") || !strings.HasPrefix(lines[2], "PUBSUB_BROKERS=") {
		t.Errorf("exit %d:\n%s", code, errOut)
	}
}

func TestBadUsage(t *testing.T) {
	for _, args := range [][]string{{"FOO=1"}, {"BACKENDS"}, {"-report-dir", "out", "SPECS=D1"}, {"-nosuch"}} {
		if code, out, errOut := preflight(args, nil); code != 2 || out != "" || errOut == "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
	}
}

// The make targets answer bad input with the preflight's one line and exit 2, before anything
// is built or started. This test binary stands in for the preflight binary (TestMain), so no
// build runs here; nothing else may print before make's own "*** ... Error 2" line.
func TestMakeTargetsAnswerBadInputFirst(t *testing.T) {
	mk, err := exec.LookPath("make")
	if err != nil {
		t.Skip("no make on PATH: the Makefile is not what is tested here then")
	}
	root, err := modroot.Find()
	if err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// A script, not the test binary itself, as PREFLIGHT_BIN: if make ever decided to relink
	// it, it would overwrite the script. -o says never to.
	bin := filepath.Join(t.TempDir(), "preflight")
	script := "#!/bin/sh\n" + asCommand + "=1 exec '" + self + "' \"$@\"\n"
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	// The user's environment (or an outer make's) must not choose for these runs.
	var environ []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "MAKEFLAGS", "MFLAGS", "MAKELEVEL", "BACKENDS", "PUBSUB_BACKENDS", "SPECS", "PUBSUB_BROKERS", "GATE_LEVEL",
			"CONFORMANCE_PROCS", "DURATION", "CONFORMANCE_STRICT", "WARM", "PUBSUB_ISOLATE", "PUBSUB_HISTORY_LIMIT", asCommand:
			continue
		}
		environ = append(environ, kv)
	}
	makeError := regexp.MustCompile(`^make(\[\d+\])?: \*\*\* .*Error 2$`)
	for _, tc := range []struct {
		args []string
		want string // the one line
	}{
		{[]string{"conformance", "BACKENDS=nosuch"}, `BACKENDS: unknown backend "nosuch" ` + knownLine},
		{[]string{"conformance", "PUBSUB_BACKENDS=kafka,nosuch"}, `BACKENDS: unknown backend "nosuch" ` + knownLine},
		{[]string{"conformance", "BACKENDS=kafka", "SPECS=Z9"}, `SPECS: unknown catalogue ID "Z9"; the catalogue has ` + catalogue.IDRanges()},
		{[]string{"conformance", "BACKENDS=kafka", "PUBSUB_BROKERS=bogus"}, `PUBSUB_BROKERS="bogus" is not valid; use one of: auto, local, container, external`},
		{[]string{"conformance", "BACKENDS=kafka", "CONFORMANCE_PROCS=0"}, `CONFORMANCE_PROCS="0": want a whole number of parallel Ginkgo processes, 1 or more`},
		{[]string{"conformance", "BACKENDS=kafka", "GATE_LEVEL=may"}, `GATE_LEVEL="may": want must (only MUST regressions block) or should (every regression blocks)`},
		{[]string{"conformance", "BACKENDS=kafka", "CONFORMANCE_STRICT=yes"}, `CONFORMANCE_STRICT="yes": want 1 (any failure exits 1, accepted or not) or empty`},
		{[]string{"conformance", "BACKENDS=kafka", "PUBSUB_HISTORY_LIMIT=-1"}, `PUBSUB_HISTORY_LIMIT="-1": want a number of calls, at least 1`},
		{[]string{"soak", "BACKENDS=kafka", "DURATION=10x"}, `DURATION="10x": want a positive Go duration such as 30s or 10m`},
		{[]string{"failover", "BACKENDS=kafka", "SPECS=F9"}, `SPECS: unknown catalogue ID "F9"; the catalogue has ` + catalogue.IDRanges()},
		{[]string{"flakes", "BACKENDS=kafka", "CONFORMANCE_PROCS=many"}, `CONFORMANCE_PROCS="many": want a whole number of parallel Ginkgo processes, 1 or more`},
	} {
		args := append([]string{"-C", root, "--no-print-directory", "-o", bin, "PREFLIGHT_BIN=" + bin, "SETUP_NEEDS="}, tc.args...)
		cmd := exec.Command(mk, args...)
		cmd.Env = environ
		out, err := cmd.CombinedOutput()
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() != 2 {
			t.Errorf("make %v: %v, want exit 2\n%s", tc.args, err, out)
			continue
		}
		var lines, trailer []string
		for _, l := range strings.Split(strings.TrimSuffix(string(out), "\n"), "\n") {
			if makeError.MatchString(l) {
				trailer = append(trailer, l)
			} else {
				lines = append(lines, l)
			}
		}
		// make's own line says the recipe's status: Error 2, not the 1 of a failed run.
		if len(lines) != 1 || lines[0] != tc.want || len(trailer) != 1 {
			t.Errorf("make %v: want the one line and make's Error 2, got:\n%s\nwant:\n%s", tc.args, out, tc.want)
		}
	}
}
