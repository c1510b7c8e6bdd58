package pubsubv1_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/pubsub-conformance/harness/backends/remote"
)

// TestGeneratedCodeIsCurrent regenerates the Go code of adapter.proto with the pinned tools
// (proto/gen.sh) and fails when the committed files differ: edit the schema, run
// `make proto`, commit both.
func TestGeneratedCodeIsCurrent(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	py, err := remote.Venv(ctx, []string{remote.SDKRequirements})
	if err != nil {
		t.Fatal(err)
	}
	root := remote.RepoRoot()
	out := t.TempDir()
	cmd := exec.CommandContext(ctx, "sh", filepath.Join(root, "proto", "gen.sh"), out)
	cmd.Env = append(os.Environ(), "PYTHON="+py)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("proto/gen.sh: %v\n%s", err, b)
	}
	for _, f := range []string{"adapter.pb.go", "adapter_grpc.pb.go"} {
		want, err := os.ReadFile(filepath.Join(out, "proto", "pubsub", "v1", f))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(root, "proto", "pubsub", "v1", f))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("proto/pubsub/v1/%s is not what adapter.proto generates: run `make proto` and commit it", f)
		}
	}
}
