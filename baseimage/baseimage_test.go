package baseimage

import (
	"archive/tar"
	"context"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// rootfs writes a one-file root file system tar.
func rootfs(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "rootfs.tar")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	tw := tar.NewWriter(f)
	if err := tw.WriteHeader(&tar.Header{Name: "etc/os-release", Mode: 0o644, Size: int64(len(content))}); err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(tw, content); err != nil {
		t.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestAddToIndex: seeding amd64 then arm64 makes the tag a two-platform
// index holding the amd64 image unchanged; seeding arm64 again replaces
// only the arm64 entry.
func TestAddToIndex(t *testing.T) {
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	ref := strings.TrimPrefix(srv.URL, "http://") + "/library/debian:bookworm-slim"
	ctx := context.Background()

	amd, err := Image(rootfs(t, "amd64"), "bookworm", "")
	if err != nil {
		t.Fatal(err)
	}
	amdDigest, err := Push(ctx, amd, ref)
	if err != nil {
		t.Fatal(err)
	}
	platforms := func() map[string]string {
		t.Helper()
		r, _ := name.ParseReference(ref)
		idx, err := remote.Index(r)
		if err != nil {
			t.Fatal(err)
		}
		im, err := idx.IndexManifest()
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, m := range im.Manifests {
			out[m.Platform.String()] = m.Digest.String()
		}
		return out
	}
	for i, content := range []string{"arm64 first", "arm64 again"} {
		arm, err := Image(rootfs(t, content), "bookworm", "arm64")
		if err != nil {
			t.Fatal(err)
		}
		armDigest, _ := arm.Digest()
		if _, err := AddToIndex(ctx, arm, ref); err != nil {
			t.Fatal(err)
		}
		got := platforms()
		if len(got) != 2 || got["linux/amd64"] != amdDigest.String() || got["linux/arm64/v8"] != armDigest.String() {
			t.Errorf("seeding %d: index %v, want linux/amd64 %s and linux/arm64/v8 %s", i+1, got, amdDigest, armDigest)
		}
	}
}
