// Command backends lists the registered backends (backends/all): name, broker kind and
// description, one per line; with -conformance only the names whose results are conformance
// results (neither the reference nor a known-bad variant), space-separated, which is the
// Makefile's default BACKENDS.
//
//	go run ./backends/cmd/backends
//	go run ./backends/cmd/backends -conformance
//	go run ./backends/cmd/backends -brokers "kafka trustgraph-pulsar"   # the brokers they need
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/pubsub-conformance/harness/backends"
	_ "github.com/pubsub-conformance/harness/backends/all"
)

func main() {
	conformance := flag.Bool("conformance", false, "print only the conformance backends' names, space-separated")
	brokers := flag.String("brokers", "", "print the distinct broker kinds these backends (space- or comma-separated) need, one per line")
	kind := flag.String("kind", "", "print, space-separated, those of the backends named as arguments that need this broker kind (make versions)")
	flag.Parse()
	if *kind != "" {
		var out []string
		for _, n := range strings.FieldsFunc(strings.Join(flag.Args(), " "), func(r rune) bool { return r == ' ' || r == ',' }) {
			d, err := backends.Lookup(n)
			if err != nil {
				fmt.Fprintln(os.Stderr, "backends:", err)
				os.Exit(1)
			}
			if d.Broker == *kind {
				out = append(out, n)
			}
		}
		fmt.Println(strings.Join(out, " "))
		return
	}
	if *brokers != "" {
		seen := map[string]bool{}
		for _, n := range strings.FieldsFunc(*brokers, func(r rune) bool { return r == ' ' || r == ',' }) {
			d, err := backends.Lookup(n)
			if err != nil {
				fmt.Fprintln(os.Stderr, "backends:", err)
				os.Exit(1)
			}
			if d.Broker != "" && !seen[d.Broker] {
				seen[d.Broker] = true
				fmt.Println(d.Broker)
			}
		}
		return
	}
	if *conformance {
		fmt.Println(strings.Join(backends.ConformanceNames(), " "))
		return
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "BACKEND\tBROKER\tDESCRIPTION")
	for _, d := range backends.Descriptors(false) {
		broker := d.Broker
		if broker == "" {
			broker = "(in-process)"
		}
		desc := d.Description
		if d.Reference {
			desc += " [reference: never a conformance result]"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\n", d.Name, broker, desc)
	}
	_ = w.Flush()
}
