// Command cost runs a command (the conformance suite) and writes what its whole process tree
// cost in CPU and wall time, split by the kinds the run's processes recorded (internal/cost):
//
//	cost -records reports/out/cost.tsv -out reports/out/cost.json -- go tool ginkgo ...
//	cost -print reports/out/cost.json     # the one line make conformance ends with
//
// The command gets PUBSUB_COST_FILE=<records> (emptied first); cost exits with its exit code.
// The tree's CPU is the kernel's rusage of the reaped command, which includes every descendant
// reaped below it (the Ginkgo processes, the brokers they started and stopped).
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/pubsub-conformance/harness/internal/cost"
)

func main() {
	records := flag.String("records", "", "file the run's processes append their CPU to (emptied first)")
	out := flag.String("out", "", "where to write the run's cost as JSON")
	print := flag.String("print", "", "print the cost line of this JSON file and exit")
	flag.Parse()
	if *print != "" {
		s, err := cost.Read(*print)
		if err != nil {
			fmt.Fprintf(os.Stderr, "cost: %v\n", err)
			os.Exit(2)
		}
		fmt.Println(s.Line())
		return
	}
	if flag.NArg() == 0 || *records == "" || *out == "" {
		fmt.Fprintln(os.Stderr, "usage: cost -records FILE -out FILE.json -- COMMAND [ARG...] | cost -print FILE.json")
		os.Exit(2)
	}
	os.Exit(run(*records, *out, flag.Args()))
}

func run(records, out string, argv []string) int {
	// Absolute: Ginkgo runs the suite's processes in the binary's directory.
	records, err := filepath.Abs(records)
	if err != nil {
		fmt.Fprintf(os.Stderr, "cost: %v\n", err)
		return 2
	}
	if err := os.WriteFile(records, nil, 0o644); err != nil {
		fmt.Fprintf(os.Stderr, "cost: %v\n", err)
		return 2
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), cost.FileEnv+"="+records)
	// Ctrl-C reaches the whole foreground group: the command handles it (Ginkgo reports what
	// ran); cost only waits for it. Notify, not Ignore: an ignored signal stays ignored in the
	// command.
	signal.Notify(make(chan os.Signal, 1), os.Interrupt, syscall.SIGTERM)
	start := time.Now()
	err = cmd.Run()
	wall := time.Since(start)
	code := 0
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
		if code < 0 {
			code = 2 // killed by a signal
		}
	case err != nil:
		fmt.Fprintf(os.Stderr, "cost: %v\n", err)
		return 2
	}
	s, serr := cost.Summarize(records, start, wall, cmd.ProcessState.UserTime(), cmd.ProcessState.SystemTime())
	if serr == nil {
		serr = s.Write(out)
	}
	if serr != nil {
		fmt.Fprintf(os.Stderr, "cost: %v\n", serr)
	}
	return code
}
