package verify

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redis-variants/redis-variants/variants"
)

// The tests are taken from whichever candidate of the source is cached
// (an upstream URL that could not be had falls back to Debian's tarball),
// and a reference without a source takes them from redis-<version>.
func TestTestTarballFollowsTheCache(t *testing.T) {
	dir := t.TempDir()
	data := []byte("debian repack")
	h := sha256.Sum256(data)
	repack := hex.EncodeToString(h[:])
	os.MkdirAll(filepath.Join(dir, "sha256"), 0o755)
	if err := os.WriteFile(filepath.Join(dir, "sha256", repack), data, 0o644); err != nil {
		t.Fatal(err)
	}
	src := variants.Source{Name: "redis-7.0.15", SHA256: strings.Repeat("a", 64),
		Fallbacks: []variants.Fallback{{URL: "debian:x", SHA256: repack}}}
	vf := &Verifier{Opt: Options{SourcesDir: dir, Sources: map[string]variants.Source{"redis-7.0.15": src}}}
	for _, v := range []variants.Variant{
		{Name: "built", Redis: "7.0.15", Source: src},
		{Name: "stock", Kind: variants.KindDistro, Redis: "7.0.15"},
	} {
		got, err := vf.testTarball(context.Background(), v)
		if err != nil || got != filepath.Join(dir, "sha256", repack) {
			t.Errorf("%s: testTarball = %q, %v", v.Name, got, err)
		}
	}
	// a pulled image's version the file has no source for: the built-in
	// catalogue's, found in the cache by its Debian fallback's sha256
	deb := variants.Source{Name: "redis-7.0.15"}
	if s, ok := variants.CatalogueSource("redis-7.0.15"); ok && len(s.Fallbacks) > 0 {
		deb = s
	} else {
		t.Fatal("the catalogue has no redis-7.0.15 with a Debian fallback")
	}
	if err := os.WriteFile(filepath.Join(dir, "sha256", deb.Fallbacks[0].SHA256), data, 0o644); err != nil {
		t.Fatal(err)
	}
	vf.Opt.Sources = nil
	got, err := vf.testTarball(context.Background(), variants.Variant{Name: "pulled", Kind: variants.KindImage, Redis: "7.0.15"})
	if err != nil || got != filepath.Join(dir, "sha256", deb.Fallbacks[0].SHA256) {
		t.Errorf("a pulled image of a catalogued version: testTarball = %q, %v", got, err)
	}
	if _, err := vf.testTarball(context.Background(), variants.Variant{Name: "odd", Kind: variants.KindImage, Redis: "7.0.99"}); err == nil ||
		!strings.Contains(err.Error(), "neither under sources: nor in the built-in catalogue") {
		t.Errorf("a version without a source: %v", err)
	}
}
