// Command catalogue generates reports/catalogue.md from the catalogue table
// (specs/catalogue), or with -check verifies the table, that every entry has exactly one spec
// in the specs directory and every spec an entry, and that the committed file is current
// (this runs in make test).
//
//	go run ./reports/cmd/catalogue [-specs specs] [-out reports/catalogue.md] [-check]
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/pubsub-conformance/harness/reports"
	"github.com/pubsub-conformance/harness/specs/catalogue"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("catalogue", flag.ContinueOnError)
	fs.SetOutput(stderr)
	specs := fs.String("specs", "specs", "directory holding the spec files (*.go)")
	out := fs.String("out", "reports/catalogue.md", "catalogue file to write or check")
	check := fs.Bool("check", false, "do not write: fail when an entry has no spec or two, a spec has no entry, or the file is stale")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "catalogue: unexpected arguments %q: use -specs DIR and -out FILE\n", fs.Args())
		return 2
	}
	if *check {
		if err := reports.CheckCatalogue(catalogue.Behaviours, *specs, *out); err != nil {
			for _, l := range strings.Split(err.Error(), "\n") {
				fmt.Fprintln(stderr, "catalogue:", l)
			}
			return 1
		}
		fmt.Fprintf(stdout, "catalogue: %s is current\n", *out)
		return 0
	}
	md, problems, err := reports.GenerateCatalogue(catalogue.Behaviours, *specs)
	if err != nil {
		fmt.Fprintln(stderr, "catalogue:", err)
		return 2
	}
	if err := os.WriteFile(*out, md, 0o644); err != nil {
		fmt.Fprintln(stderr, "catalogue: write:", err)
		return 2
	}
	fmt.Fprintf(stdout, "catalogue: wrote %s (%d behaviours)\n", *out, len(catalogue.Behaviours))
	for _, p := range problems {
		fmt.Fprintln(stderr, "catalogue:", p)
	}
	if len(problems) > 0 {
		return 1
	}
	return 0
}
