// Command memory-adapter serves the Go reference backend (backends/memory) over the adapter
// protocol: declared as "go-memory", it measures what the protocol itself costs (the same
// backend in process, "memory", vs through the protocol) and self-tests the Go side of it.
package main

import (
	"fmt"
	"os"

	"github.com/pubsub-conformance/harness/backends/memory"
	"github.com/pubsub-conformance/harness/backends/remote/serve"
)

func main() {
	if err := serve.Serve("go-memory", "backends/memory via backends/remote/serve", memory.New, memory.ProcessBroker().Restart); err != nil {
		fmt.Fprintln(os.Stderr, "memory-adapter:", err)
		os.Exit(1)
	}
}
