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

// fakeReleaseCache points PUBSUB_CACHE at a new directory holding fakeSdist's 9.9.9 as the
// release's sdist, and returns that release; without patch on PATH the test is skipped.
func fakeReleaseCache(t *testing.T) Release {
	t.Helper()
	if _, err := exec.LookPath("patch"); err != nil {
		t.Skip("patch not on PATH")
	}
	cache := t.TempDir()
	t.Setenv("PUBSUB_CACHE", cache)
	if err := os.MkdirAll(filepath.Join(cache, "sdist"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, sum := fakeSdist(t, filepath.Join(cache, "sdist"), "9.9.9", nil)
	return Release{Version: "9.9.9", SHA256: sum}
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
	rel := fakeReleaseCache(t)
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

// TestPatchedTreeKeyedByContent: a patched tree is named by the release and the patch's
// content, never by the patch's path or its file's metadata: the same patch under another name
// is the same tree, an edited patch under the same name a new one, another release another.
func TestPatchedTreeKeyedByContent(t *testing.T) {
	rel := fakeReleaseCache(t)
	patches := t.TempDir()
	write := func(name, content string) string {
		t.Helper()
		p := filepath.Join(patches, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ctx := context.Background()
	first, err := PatchedRelease(ctx, rel, write("a.patch", fakePatch))
	if err != nil {
		t.Fatal(err)
	}
	if same, err := PatchedRelease(ctx, rel, write("renamed.patch", fakePatch)); err != nil || same != first {
		t.Errorf("the same patch under another name: %s, %v; want the tree %s", same, err, first)
	}
	edited, err := PatchedRelease(ctx, rel, write("a.patch", strings.Replace(fakePatch, "+2\n", "+zwei\n", 1)))
	if err != nil || edited == first {
		t.Fatalf("an edited patch under its old name: %s, %v; want a new tree, not %s", edited, err, first)
	}
	if b, _ := os.ReadFile(filepath.Join(edited, "trustgraph-base", "trustgraph", "base", "backend.py")); string(b) != "one\nzwei\nthree\n" {
		t.Errorf("the edited patch's tree has %q", b)
	}
	if patchKey(rel, []byte(fakePatch)) == patchKey(Release{Version: "9.9.10", SHA256: rel.SHA256}, []byte(fakePatch)) ||
		patchKey(rel, []byte(fakePatch)) == patchKey(Release{Version: "9.9.9", SHA256: strings.Repeat("1", 64)}, []byte(fakePatch)) {
		t.Error("another release (version or sdist) with the same patch: the same tree")
	}
}

// TestPatchedAdapterPip: a patched adapter installs its patched tree editable after its own
// pip arguments, without changing the declaration; an adapter without a patch keeps its own.
func TestPatchedAdapterPip(t *testing.T) {
	saved := TrustGraphRelease
	TrustGraphRelease = fakeReleaseCache(t)
	t.Cleanup(func() { TrustGraphRelease = saved })
	patch := filepath.Join(t.TempDir(), "p.patch")
	if err := os.WriteFile(patch, []byte(fakePatch), 0o644); err != nil {
		t.Fatal(err)
	}
	ad := Adapter{Name: "x-patched", Pip: []string{"--no-deps"}, Patch: patch}
	pip, err := pipArgs(context.Background(), ad)
	if err != nil {
		t.Fatal(err)
	}
	dir, _ := PatchedRelease(context.Background(), TrustGraphRelease, patch)
	if want := []string{"--no-deps", "-e", filepath.Join(dir, "trustgraph-base")}; strings.Join(pip, " ") != strings.Join(want, " ") {
		t.Errorf("pip %q, want %q", pip, want)
	}
	if len(ad.Pip) != 1 {
		t.Errorf("the declaration's pip arguments changed: %q", ad.Pip)
	}
	if pip, err := pipArgs(context.Background(), Adapter{Pip: []string{"x==1"}}); err != nil || strings.Join(pip, " ") != "x==1" {
		t.Errorf("no patch: %q, %v", pip, err)
	}
	if _, err := pipArgs(context.Background(), Adapter{Name: "y", Patch: filepath.Join(t.TempDir(), "missing.patch")}); err == nil || !strings.Contains(err.Error(), "adapter y") {
		t.Errorf("a missing patch: %v; want an error naming the adapter", err)
	}
}

// tarball writes a gzipped tar of the given headers (regular files get body "x").
func tarball(t *testing.T, hs ...tar.Header) string {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, h := range hs {
		if h.Typeflag == tar.TypeReg {
			h.Size = 1
		}
		if err := tw.WriteHeader(&h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			if _, err := tw.Write([]byte("x")); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "s.tar.gz")
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestUnpackSdistWritesOnlyFilesBelowTop: only regular files and directories below the
// archive's top directory are written (a symlink is not: a later entry could write through
// it); an absolute entry is refused; an archive without a file is an error.
func TestUnpackSdistWritesOnlyFilesBelowTop(t *testing.T) {
	dest := filepath.Join(t.TempDir(), "out")
	outside := t.TempDir()
	p := tarball(t,
		tar.Header{Name: "top/", Typeflag: tar.TypeDir, Mode: 0o755},
		tar.Header{Name: "top/empty/", Typeflag: tar.TypeDir, Mode: 0o755},
		tar.Header{Name: "top/link", Typeflag: tar.TypeSymlink, Linkname: outside},
		tar.Header{Name: "top/a/b.py", Typeflag: tar.TypeReg, Mode: 0o644},
	)
	if err := unpackSdist(p, dest); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dest, "a", "b.py")); err != nil || string(b) != "x" {
		t.Errorf("top/a/b.py: %q, %v", b, err)
	}
	if st, err := os.Stat(filepath.Join(dest, "empty")); err != nil || !st.IsDir() {
		t.Errorf("top/empty/: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(dest, "link")); err == nil {
		t.Error("the symlink entry was written")
	}
	if err := unpackSdist(tarball(t, tar.Header{Name: "/etc/x", Typeflag: tar.TypeReg}), dest); err == nil || !strings.Contains(err.Error(), "leaves") {
		t.Errorf("an absolute entry: %v", err)
	}
	if err := unpackSdist(tarball(t, tar.Header{Name: "top/", Typeflag: tar.TypeDir, Mode: 0o755}, tar.Header{Name: "top/d/", Typeflag: tar.TypeDir, Mode: 0o755}), filepath.Join(t.TempDir(), "o")); err == nil || !strings.Contains(err.Error(), "no files") {
		t.Errorf("an archive without files: %v", err)
	}
}

// TestUnpackSdistFailsOnAFailedWrite: a file the unpack cannot write fails it (a full disk
// must not leave a truncated tree that is then marked ready). /dev/full stands in for the
// full disk: the file's path is a link to it.
func TestUnpackSdistFailsOnAFailedWrite(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full")
	}
	dest := t.TempDir()
	if err := os.Symlink("/dev/full", filepath.Join(dest, "b.py")); err != nil {
		t.Fatal(err)
	}
	p := tarball(t, tar.Header{Name: "top/", Typeflag: tar.TypeDir, Mode: 0o755}, tar.Header{Name: "top/b.py", Typeflag: tar.TypeReg, Mode: 0o644})
	if err := unpackSdist(p, dest); err == nil || !strings.Contains(err.Error(), "no space") {
		t.Errorf("a write that fails: %v", err)
	}
}
