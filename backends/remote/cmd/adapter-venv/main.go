// Command adapter-venv makes (or finds) the virtualenv of the Python adapter SDK in the cache
// directory and prints its python: for proto/gen.sh, and for trying an adapter by hand:
//
//	PYTHONPATH=backends/remote/python:$(dirname $(dirname $(go run ./backends/remote/cmd/adapter-venv)))/gen \
//	  $(go run ./backends/remote/cmd/adapter-venv) -m pubsub_adapter.memory
//
// With -r it uses other requirements files (repeatable; relative to the repository root).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/pubsub-conformance/harness/backends/remote"
)

type list []string

func (l *list) String() string     { return strings.Join(*l, ",") }
func (l *list) Set(v string) error { *l = append(*l, v); return nil }

func main() {
	var reqs list
	flag.Var(&reqs, "r", "requirements file (repeatable; default: the SDK's)")
	flag.Parse()
	if len(reqs) == 0 {
		reqs = list{remote.SDKRequirements}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	py, err := remote.Venv(ctx, reqs)
	if err != nil {
		fmt.Fprintln(os.Stderr, "adapter-venv:", err)
		os.Exit(1)
	}
	fmt.Println(py)
}
