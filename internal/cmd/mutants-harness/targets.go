package main

// A target is one package directory that the run mutation-tests, with what keeps its run
// broker-free and short. Gremlins runs per target: its coverage run is
// `go test -cover ./<Dir>/...` and every mutant re-runs `go test <package>` with -failfast; the
// test flags reach both through GOFLAGS, so the mutants are judged by the tests the coverage
// was measured with.
type target struct {
	Dir string
	// Exclude: gremlins -E regular expressions over paths relative to Dir (test files are
	// always left out).
	Exclude []string
	// TestFlags: go test flags of this target's runs (GOFLAGS), beside -count=1 and -trimpath.
	TestFlags []string
	// Workers: gremlins workers (mutants tested at once); 0: the run's -workers. More than
	// the CPUs where the tests mostly wait (the workload's programs wait out receive windows).
	Workers int
	// Coefficient: a mutant's test run times out after this many times the coverage run's
	// duration; 0: the run's -timeout-coefficient. Small where the coverage run is long.
	Coefficient int
	// Prepare: run the target's tests once, unmutated, in the module itself with the real
	// cache before the run, to make what they need there (the adapters' virtualenvs: the run's
	// private cache links them in, and no mutant may reach the package index).
	Prepare bool
	// Why TestFlags and Exclude are what they are, for the report.
	Why string
}

// mainPackages: gremlins v0.6.0 tests a mutant with `go test <package>`, the package found by
// walking up from the file's directory to one whose path ends in the package clause's name;
// for `package main` no directory does, and it tests the module's root package, which has no
// Go files: every mutant would count as killed. The commands stay out; their logic lives in
// the packages they call.
const mainPackages = `^cmd/`

var targets = []target{
	{
		Dir:       "reports",
		Exclude:   []string{mainPackages},
		TestFlags: []string{"-short", "-skip=InBrowser"},
		Why: "-skip=InBrowser: TestHTMLInBrowser and TestPerformanceInBrowser start a headless Chromium " +
			"(6 of the package's 7.5 s) to check how the page lays out and runs its script; what the " +
			"page says is the Go tests' (TestHTMLCells, TestLatencyChartGeometry)",
	},
	{
		// The typed evidence a spec attaches (failure records, anomalies, unknown) and the
		// reports read back: what a finding is grouped by and what makes a cell unknown.
		Dir:       "internal/evidence",
		TestFlags: []string{"-short"},
	},
	{
		// A column name formatted and parsed (backend, variant, release, isolated): what the
		// gate and the baseline match columns by.
		Dir:       "internal/column",
		TestFlags: []string{"-short"},
	},
	{
		Dir:       "internal/history",
		TestFlags: []string{"-short"},
	},
	{
		Dir:         "internal/workload",
		Exclude:     []string{mainPackages},
		TestFlags:   []string{"-short"},
		Workers:     4,
		Coefficient: 3,
		Why:         "-short: fewer rapid checks and three of the ten variant hunts (workload_test.go)",
	},
	{
		Dir:       "specs/catalogue",
		TestFlags: []string{"-short"},
	},
	{
		Dir: "backends/remote",
		// serve has no tests of its own (the Go adapter server, run by the adapter tests).
		Exclude:     []string{mainPackages, `^serve/`},
		TestFlags:   []string{"-short"},
		Workers:     3,
		Coefficient: 4,
		Prepare:     true,
		Why: "the adapters run as local processes (Python and Go), no broker; the Python ones " +
			"from the virtualenvs already in the cache, linked into a private cache with pip " +
			"offline, so no mutant reaches the package index or a shared virtualenv",
	},
	{
		Dir: "fixtures",
		// The subpackages start brokers (local, rabbitmq, container, maven, external),
		// or are a proxy, a CA, probes: the root package is the broker records and settings.
		Exclude:   []string{mainPackages, `^[a-z]+/`},
		TestFlags: []string{"-short"},
		Why: "the root package only (broker kinds, settings, versions, cluster and Pulsar " +
			"configuration): its subpackages start or reach brokers",
	},
}
