package modroot

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFind(t *testing.T) {
	root, err := Find()
	if err != nil {
		t.Fatal(err)
	}
	wd, _ := os.Getwd()
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil || !strings.HasPrefix(wd, root) {
		t.Errorf("root %s (from %s): %v", root, wd, err)
	}
	t.Chdir(t.TempDir())
	if _, err := Find(); err == nil {
		t.Error("outside the module: want an error")
	}
}
