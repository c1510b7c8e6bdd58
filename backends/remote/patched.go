package remote

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/pubsub-conformance/harness/internal/cache"
)

// A patched TrustGraph column runs a released trustgraph-base sdist with one of our patches
// (patches/trustgraph-base-<version>/*.patch, unified diffs a maintainer applies with
// `patch -p1` in a checkout of TrustGraph's release branch) applied, installed the way
// TRUSTGRAPH_SOURCE installs a working copy: the pinned requirements, then `pip install -e`
// of the patched tree. So the column tests exactly what the patch would ship.

// Release is a trustgraph-base sdist as published, pinned by its SHA-256.
type Release struct {
	Version string
	SHA256  string
}

// TrustGraphRelease is the release the patches are made against: trustgraph-base 2.11.1, the
// newest (its sdist's SHA-256 as the package index lists it).
var TrustGraphRelease = Release{
	Version: "2.11.1",
	SHA256:  "5af4a53f1dbdfc20f9fbcc0c5b9819d32e86413228ee43193c198dc488d8098a",
}

// PatchDir holds the patches against TrustGraphRelease, relative to the repository root.
const PatchDir = "patches/trustgraph-base-2.11.1"

// pipArgs are ad's pip arguments, with the patched release tree of ad.Patch (made first when
// missing, see PatchedRelease) as an editable install when it has one.
func pipArgs(ctx context.Context, ad Adapter) ([]string, error) {
	if ad.Patch == "" {
		return ad.Pip, nil
	}
	dir, err := PatchedRelease(ctx, TrustGraphRelease, ad.Patch)
	if err != nil {
		return nil, fmt.Errorf("adapter %s: %w", ad.Name, err)
	}
	base, _, err := TrustGraphSource(dir)
	if err != nil {
		return nil, fmt.Errorf("adapter %s: %w", ad.Name, err)
	}
	return append(append([]string(nil), ad.Pip...), "-e", base), nil
}

// PatchedRelease returns a directory laid out as a TrustGraph checkout (trustgraph-base/ in
// it) holding rel's sdist with patch (a path relative to the repository root, or absolute)
// applied by `patch -p1`, as a maintainer applies it in their checkout. It is made once in
// the cache directory, under a name that hashes the sdist's pinned SHA-256 and the patch's
// content (so an edited patch is a new tree, and with it a new virtualenv): the sdist is
// fetched with `pip download` (the package index is needed once; its SHA-256 must match) and
// unpacked. A patch that does not apply is an error naming patch's own output.
func PatchedRelease(ctx context.Context, rel Release, patch string) (string, error) {
	patchPath := repoPath(RepoRoot(), patch)
	content, err := os.ReadFile(patchPath)
	if err != nil {
		return "", fmt.Errorf("patch: %w", err)
	}
	cache, err := cache.Root()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(cache, "trustgraph-patched", rel.Version+"-"+patchKey(rel, content))
	ready := filepath.Join(dir, ".ready")
	if _, err := os.Stat(ready); err == nil {
		return dir, nil
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return "", err
	}
	lock, err := os.OpenFile(dir+".lock", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return "", fmt.Errorf("lock %s: %w", lock.Name(), err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	if _, err := os.Stat(ready); err == nil {
		return dir, nil // another process made it while we waited
	}
	os.RemoveAll(dir) // an interrupted earlier attempt
	sdist, err := releaseSdist(ctx, cache, rel)
	if err != nil {
		return "", err
	}
	if err := unpackSdist(sdist, filepath.Join(dir, "trustgraph-base")); err != nil {
		return "", fmt.Errorf("unpack %s: %w", sdist, err)
	}
	if err := applyPatch(ctx, dir, patchPath, rel); err != nil {
		return "", err
	}
	if err := os.WriteFile(ready, []byte(patch+"\n"), 0o644); err != nil {
		return "", err
	}
	return dir, nil
}

// patchKey names a patched tree: the sdist's SHA-256 and the patch's content.
func patchKey(rel Release, patch []byte) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00", rel.Version, rel.SHA256)
	h.Write(patch)
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// releaseSdist is the path of rel's sdist in the cache directory, fetched with pip when
// absent and checked against its pinned SHA-256 either way.
func releaseSdist(ctx context.Context, cache string, rel Release) (string, error) {
	dir := filepath.Join(cache, "sdist")
	path := filepath.Join(dir, "trustgraph_base-"+rel.Version+".tar.gz")
	if _, err := os.Stat(path); err != nil {
		py, err := exec.LookPath("python3")
		if err != nil {
			return "", errors.New("python3 not found on PATH: fetching the trustgraph-base sdist needs pip")
		}
		tmp, err := os.MkdirTemp(filepath.Dir(dir), ".sdist-")
		if err != nil {
			return "", err
		}
		defer os.RemoveAll(tmp)
		cmd := exec.CommandContext(ctx, py, "-m", "pip", "download", "--disable-pip-version-check", "--no-input",
			"-q", "--no-deps", "--no-binary", ":all:", "-d", tmp, "trustgraph-base=="+rel.Version)
		if b, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("pip download trustgraph-base==%s (the sdist): %w\n%s", rel.Version, err, indent(lastLines(string(b), 15)))
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", err
		}
		if err := os.Rename(filepath.Join(tmp, filepath.Base(path)), path); err != nil {
			return "", fmt.Errorf("pip download trustgraph-base==%s left no %s: %w", rel.Version, filepath.Base(path), err)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != rel.SHA256 {
		return "", fmt.Errorf("%s: SHA-256 %s, not the release's %s (remove it to fetch it again)", path, hex.EncodeToString(sum[:]), rel.SHA256)
	}
	return path, nil
}

// unpackSdist extracts the sdist's single top directory (trustgraph_base-<version>/) into
// dest. Only regular files and directories below it are written.
func unpackSdist(sdist, dest string) error {
	f, err := os.Open(sdist)
	if err != nil {
		return err
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return err
	}
	tr := tar.NewReader(gz)
	files := 0
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		name := path.Clean(h.Name)
		if name == ".." || strings.HasPrefix(name, "../") || path.IsAbs(name) {
			return fmt.Errorf("entry %q leaves the archive's directory", h.Name)
		}
		_, rest, ok := strings.Cut(name, "/")
		if !ok || rest == "" {
			continue // the top directory itself
		}
		out := filepath.Join(dest, filepath.FromSlash(rest))
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(out, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
				return err
			}
			w, err := os.OpenFile(out, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
			if err != nil {
				return err
			}
			_, err = io.Copy(w, tr)
			if cerr := w.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
			files++
		}
	}
	if files == 0 {
		return errors.New("no files in the archive")
	}
	return nil
}

// applyPatch runs `patch -p1` in dir with the patch file, as a maintainer does in a checkout.
func applyPatch(ctx context.Context, dir, patch string, rel Release) error {
	bin, err := exec.LookPath("patch")
	if err != nil {
		return errors.New("patch not found on PATH: applying the TrustGraph patches needs it (apt-get install patch)")
	}
	cmd := exec.CommandContext(ctx, bin, "-p1", "--batch", "--forward", "--no-backup-if-mismatch", "-i", patch)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("patch -p1 < %s does not apply to trustgraph-base %s: %w\n%s", patch, rel.Version, err, indent(lastLines(out.String(), 15)))
	}
	return nil
}
