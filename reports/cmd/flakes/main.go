// Command flakes reads the reports of several complete runs of the same suite (make flakes
// writes one directory per run) and says which (backend, behaviour) pairs failed or did not run
// in any of them, how often, and the first failure's cause.
//
//	go run ./reports/cmd/flakes [-md reports/out/flakes/flakes.md] RUN-DIR...
//
// Exit status: 0 every pair passed (or skipped with its reason) in every run, 1 some pair
// failed or did not run in some run, 2 bad usage or unreadable input.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/pubsub-conformance/harness/reports"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("flakes", flag.ContinueOnError)
	fs.SetOutput(stderr)
	mdOut := fs.String("md", "reports/out/flakes/flakes.md", "write the census here (\"\" to skip)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: flakes [-md FILE] RUN-DIR...   (each RUN-DIR holds one run's ginkgo-*.json)")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	c, err := reports.TakeCensus(fs.Args())
	if err != nil {
		fmt.Fprintln(stderr, "flakes:", err)
		return 2
	}
	md := c.Markdown()
	fmt.Fprint(stdout, md)
	if *mdOut != "" {
		if err := os.MkdirAll(filepath.Dir(*mdOut), 0o755); err != nil {
			fmt.Fprintln(stderr, "flakes:", err)
			return 2
		}
		if err := os.WriteFile(*mdOut, []byte(md), 0o644); err != nil {
			fmt.Fprintln(stderr, "flakes:", err)
			return 2
		}
	}
	if c.Flaky() {
		return 1
	}
	return 0
}
