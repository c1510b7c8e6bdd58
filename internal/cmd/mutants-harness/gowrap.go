package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"syscall"
)

// wrapGo is the command when it runs as `go` (first on the PATH of a gremlins run). Every go
// command but a mutant's test run is the real go, exec'd. A mutant's test run (gremlins passes
// -failfast, its coverage run does not) runs the real go test and maps its outcome onto the
// exit codes gremlins reads: 0 lived, 1 killed, 2 not viable. Gremlins itself counts every
// exit 1 as killed, and go test exits 1 on a build failure too: a + between strings made a -,
// an operator go vet refuses (go test runs vet first) would be kills no test made.
func wrapGo(args []string) int {
	real := os.Getenv(realGoEnv)
	if real == "" {
		fmt.Fprintf(os.Stderr, "mutants-harness: run as go without $%s (the go command to run)\n", realGoEnv)
		return 2
	}
	if !mutantTestRun(args) {
		err := syscall.Exec(real, append([]string{"go"}, args...), os.Environ())
		fmt.Fprintf(os.Stderr, "mutants-harness: exec %s: %v\n", real, err)
		return 2
	}
	cmd := exec.Command(real, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	// Gremlins kills this process when the mutant's time is up; go test goes with it (its
	// test binary ends at the -timeout gremlins gives it).
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	code := mutantExit(cmd.Run(), out.Bytes())
	if tally := os.Getenv(tallyEnv); tally != "" {
		if f, err := os.OpenFile(tally, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644); err == nil {
			fmt.Fprintln(f, code)
			f.Close()
		}
	}
	return code
}

// tallyEnv names the file the wrapper appends each mutant's exit code to.
const tallyEnv = "MUTANTS_HARNESS_TALLY"

// mutantTestRun: the go test of one mutant, as gremlins v0.6.0 starts it
// (go test [-tags t] -timeout d -failfast <package>).
func mutantTestRun(args []string) bool {
	if len(args) == 0 || args[0] != "test" {
		return false
	}
	for _, a := range args[1:] {
		if a == "-failfast" || a == "--failfast" {
			return true
		}
	}
	return false
}

// testBinaryRan matches go test's line for a test binary that ran: "FAIL\t<pkg>\t0.123s" (or ok);
// a package that did not build ends in "FAIL\t<pkg> [build failed]" and has no such line.
var testBinaryRan = regexp.MustCompile(`(?m)^(FAIL|ok)\s+\S+\s+[0-9.]+s`)

// mutantExit is the exit code for gremlins of a mutant's go test that ended with err and wrote
// out: 0 passed (lived), 1 a test binary ran and failed (killed: a test failed, panicked or
// timed out), 2 no test ran (not viable: the mutant does not build or vet refuses it).
func mutantExit(err error, out []byte) int {
	if err == nil {
		return 0
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) && testBinaryRan.Match(out) {
		return 1
	}
	return 2
}
