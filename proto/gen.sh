#!/bin/sh
# Regenerates the Go code of proto/pubsub/v1/adapter.proto (committed next to it).
#
#   proto/gen.sh [OUTDIR]      # default: the repository root (writes proto/pubsub/v1/*.pb.go)
#
# protoc is grpcio-tools' bundled one (python -m grpc_tools.protoc, from the adapter SDK's pinned
# virtualenv: PYTHON overrides); the Go plugins are the go.mod tools (pinned versions), so the
# output depends on the pins only. The Python stubs are not committed: the SDK's virtualenv
# generates them with the same grpcio-tools when it is created (backends/remote/venv.go).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root}
cd "$root"
PYTHON=${PYTHON:-$(go run ./backends/remote/cmd/adapter-venv)}
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/protoc-gen-go" google.golang.org/protobuf/cmd/protoc-gen-go
go build -o "$bin/protoc-gen-go-grpc" google.golang.org/grpc/cmd/protoc-gen-go-grpc
mkdir -p "$out"
PATH="$bin:$PATH" "$PYTHON" -m grpc_tools.protoc -I proto \
  --go_out="$out" --go_opt=module=github.com/pubsub-conformance/harness \
  --go-grpc_out="$out" --go-grpc_opt=module=github.com/pubsub-conformance/harness \
  pubsub/v1/adapter.proto
