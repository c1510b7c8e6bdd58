// Command contract generates reports/contract.md, the contract coverage table: every marked
// sentence of the contract's doc comments (backends/backend.go, backends/topic.go) with the
// behaviours asserting it or the reason none can. With -check (make catalogue) it fails when a
// sentence has neither, a table names something that does not exist, normative contract text
// carries no marker, or the committed file is stale.
//
//	go run ./reports/cmd/contract [-root .] [-out reports/contract.md] [-check]
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/pubsub-conformance/harness/reports"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("contract", flag.ContinueOnError)
	fs.SetOutput(stderr)
	root := fs.String("root", ".", "repository root (the contract files are read relative to it)")
	out := fs.String("out", "reports/contract.md", "coverage table to write or check")
	check := fs.Bool("check", false, "do not write: fail when a sentence is uncovered or the file is stale")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "contract: unexpected arguments %q\n", fs.Args())
		return 2
	}
	if *check {
		if err := reports.CheckContract(*root, *out); err != nil {
			for _, l := range strings.Split(err.Error(), "\n") {
				fmt.Fprintln(stderr, "contract:", l)
			}
			return 1
		}
		fmt.Fprintf(stdout, "contract: %s is current, every sentence covered\n", *out)
		return 0
	}
	cov, problems, err := reports.BuildContract(*root)
	if err != nil {
		fmt.Fprintln(stderr, "contract:", err)
		return 2
	}
	if err := os.WriteFile(filepath.Clean(*out), reports.ContractMarkdown(cov), 0o644); err != nil {
		fmt.Fprintln(stderr, "contract: write:", err)
		return 2
	}
	fmt.Fprintf(stdout, "contract: wrote %s (%d sentences)\n", *out, len(cov))
	for _, p := range problems {
		fmt.Fprintln(stderr, "contract:", p)
	}
	if len(problems) > 0 {
		return 1
	}
	return 0
}
