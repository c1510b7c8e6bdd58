package remote

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fakeSdist writes a trustgraph_base-<version>.tar.gz laid out as the published sdist (one top
// directory with pyproject.toml and trustgraph/base/) and returns its path and SHA-256.
func fakeSdist(t *testing.T, dir, version string, extra map[string]string) (string, string) {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	top := "trustgraph_base-" + version + "/"
	files := map[string]string{
		"pyproject.toml":              "[project]\nname = \"trustgraph-base\"\n",
		"trustgraph/base/__init__.py": "",
		"trustgraph/base/backend.py":  "one\ntwo\nthree\n",
	}
	for k, v := range extra {
		files[k] = v
	}
	if err := tw.WriteHeader(&tar.Header{Name: top, Typeflag: tar.TypeDir, Mode: 0o755}); err != nil {
		t.Fatal(err)
	}
	for name, body := range files {
		if err := tw.WriteHeader(&tar.Header{Name: top + name, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(body))}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "trustgraph_base-"+version+".tar.gz")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(buf.Bytes())
	return path, hex.EncodeToString(sum[:])
}

const fakePatch = `From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001
Subject: [PATCH] backend: two becomes 2

Spec turned green: X1.
---
diff --git a/trustgraph-base/trustgraph/base/backend.py b/trustgraph-base/trustgraph/base/backend.py
--- a/trustgraph-base/trustgraph/base/backend.py
+++ b/trustgraph-base/trustgraph/base/backend.py
@@ -1,3 +1,3 @@
 one
-two
+2
 three
`

// TestPatchedRelease: the sdist in the cache is unpacked as a checkout's trustgraph-base/ and
// the patch applied with patch -p1 there, once per patch content; TrustGraphSource takes the
// tree as a checkout. A patch that does not apply and a sdist whose SHA-256 is not the pinned
// one are errors, and no tree is left ready.
func TestPatchedRelease(t *testing.T) {
	if _, err := exec.LookPath("patch"); err != nil {
		t.Skip("patch not on PATH")
	}
	cache := t.TempDir()
	t.Setenv("PUBSUB_CACHE", cache)
	if err := os.MkdirAll(filepath.Join(cache, "sdist"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, sum := fakeSdist(t, filepath.Join(cache, "sdist"), "9.9.9", nil)
	rel := Release{Version: "9.9.9", SHA256: sum}
	patches := t.TempDir()
	good := filepath.Join(patches, "good.patch")
	if err := os.WriteFile(good, []byte(fakePatch), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	dir, err := PatchedRelease(ctx, rel, good)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "trustgraph-base", "trustgraph", "base", "backend.py"))
	if err != nil || string(b) != "one\n2\nthree\n" {
		t.Fatalf("patched file: %q, %v", b, err)
	}
	base, _, err := TrustGraphSource(dir)
	if err != nil || base != filepath.Join(dir, "trustgraph-base") {
		t.Fatalf("TrustGraphSource(%s) = %s, %v", dir, base, err)
	}
	// Made once: the same patch again is the same tree, not patched twice.
	again, err := PatchedRelease(ctx, rel, good)
	if err != nil || again != dir {
		t.Fatalf("again: %s, %v (first %s)", again, err, dir)
	}
	// Another patch content is another tree (and so another virtualenv).
	other := filepath.Join(patches, "other.patch")
	if err := os.WriteFile(other, []byte(strings.Replace(fakePatch, "Spec turned green: X1.", "Spec turned green: X2.", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if d, err := PatchedRelease(ctx, rel, other); err != nil || d == dir {
		t.Fatalf("another patch: %s, %v (first %s)", d, err, dir)
	}
	bad := filepath.Join(patches, "bad.patch")
	if err := os.WriteFile(bad, []byte(strings.Replace(fakePatch, "-two\n", "-zwei\n", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if d, err := PatchedRelease(ctx, rel, bad); err == nil || !strings.Contains(err.Error(), "does not apply") {
		t.Fatalf("a patch that does not apply: %s, %v", d, err)
	}
	wrong := Release{Version: "9.9.9", SHA256: strings.Repeat("0", 64)}
	if d, err := PatchedRelease(ctx, wrong, good); err == nil || !strings.Contains(err.Error(), "SHA-256") {
		t.Fatalf("a sdist with another SHA-256: %s, %v", d, err)
	}
}

// TestUnpackSdistStaysInside: an entry that climbs out of the archive's directory is refused.
func TestUnpackSdistStaysInside(t *testing.T) {
	dir := t.TempDir()
	path, _ := fakeSdist(t, dir, "1.0", map[string]string{"../../escape.txt": "x"})
	if err := unpackSdist(path, filepath.Join(dir, "out")); err == nil || !strings.Contains(err.Error(), "leaves") {
		t.Fatalf("unpack of an escaping entry: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "escape.txt")); err == nil {
		t.Fatal("the escaping entry was written")
	}
}

// TestPatchedAdapters: every shipped adapter with a patch names a file of PatchDir that exists,
// and none of them is switched by TRUSTGRAPH_SOURCE (they test the release plus the patch).
func TestPatchedAdapters(t *testing.T) {
	n := 0
	for _, ad := range declared {
		if ad.Patch == "" {
			continue
		}
		n++
		if !strings.HasPrefix(ad.Patch, PatchDir+"/") {
			t.Errorf("%s: patch %s is not in %s", ad.Name, ad.Patch, PatchDir)
		}
		if _, err := os.Stat(filepath.Join(RepoRoot(), ad.Patch)); err != nil {
			t.Errorf("%s: %v", ad.Name, err)
		}
		if !strings.HasSuffix(ad.Name, "-patched") {
			t.Errorf("%s: a patched column's name ends in -patched", ad.Name)
		}
		for _, s := range sourceAdapters {
			if s == ad.Name {
				t.Errorf("%s: switched by %s", ad.Name, SourceEnv)
			}
		}
	}
	if n == 0 {
		t.Fatal("no patched adapter declared")
	}
}
