package verify

import (
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
		got, err := vf.testTarball(v)
		if err != nil || got != filepath.Join(dir, "sha256", repack) {
			t.Errorf("%s: testTarball = %q, %v", v.Name, got, err)
		}
	}
	if _, err := vf.testTarball(variants.Variant{Name: "stock8", Kind: variants.KindDistro, Redis: "8.0.2"}); err == nil ||
		!strings.Contains(err.Error(), "redis-8.0.2") {
		t.Errorf("a version without a source: %v", err)
	}
}
