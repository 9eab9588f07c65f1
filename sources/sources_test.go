package sources

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/redis-variants/redis-variants/variants"
)

func sum(b []byte) string { h := sha256.Sum256(b); return hex.EncodeToString(h[:]) }

func TestFetchFallsBackAndChecksEverySum(t *testing.T) {
	upstream := []byte("upstream tarball")
	repack := []byte("debian repacked tarball")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/releases/redis.tar.gz":
			w.Write([]byte("a corrupted download")) // sha256 will not match
		case "/debian/pool/main/r/redis/redis.orig.tar.gz":
			w.Write(repack)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	c := New(t.TempDir())
	c.DebianMirror = srv.URL + "/debian"
	src := variants.Source{Name: "redis-x", URL: srv.URL + "/releases/redis.tar.gz", SHA256: sum(upstream),
		Fallbacks: []variants.Fallback{
			{URL: srv.URL + "/missing.tar.gz", SHA256: sum(repack)},
			{URL: "debian:pool/main/r/redis/redis.orig.tar.gz", SHA256: sum(repack)},
		}}
	e, err := c.Fetch(context.Background(), src)
	if err != nil {
		t.Fatal(err)
	}
	if e.SHA256 != sum(repack) || !strings.HasPrefix(e.From, "debian:") {
		t.Fatalf("entry = %+v, want the debian fallback", e)
	}
	got, err := os.ReadFile(c.Path(e.SHA256))
	if err != nil || string(got) != string(repack) {
		t.Fatalf("cached file = %q, %v", got, err)
	}
	if s, err := c.Resolve(src); err != nil || s != sum(repack) {
		t.Fatalf("Resolve = %s, %v", s, err)
	}
	// A second fetch is answered from the cache.
	e2, err := c.Fetch(context.Background(), src)
	if err != nil || !strings.HasSuffix(e2.From, "(cached)") {
		t.Fatalf("second fetch = %+v, %v", e2, err)
	}
}

func TestFetchFailsWithEveryReason(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("x")) }))
	defer srv.Close()
	c := New(t.TempDir())
	_, err := c.Fetch(context.Background(), variants.Source{Name: "s", URL: srv.URL + "/a", SHA256: strings.Repeat("0", 64),
		Fallbacks: []variants.Fallback{{URL: srv.URL + "/b", SHA256: "nothex"}}})
	if err == nil {
		t.Fatal("want an error")
	}
	for _, want := range []string{`source "s"`, "sha256 mismatch", "malformed sha256"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if ents, _ := os.ReadDir(c.Dir + "/sha256"); len(ents) != 0 {
		t.Errorf("a failed fetch left files: %v", ents)
	}
}

func TestNPMResolves(t *testing.T) {
	tgz := []byte("npm tarball")
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.EscapedPath() {
		case "/@scope%2fpkg/1.0.0":
			w.Write([]byte(`{"dist":{"tarball":"` + srv.URL + `/t.tgz"}}`))
		case "/t.tgz":
			w.Write(tgz)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	c := New(t.TempDir())
	c.NPMRegistry = srv.URL
	e, err := c.Fetch(context.Background(), variants.Source{Name: "z", URL: "npm:@scope/pkg@1.0.0", SHA256: sum(tgz)})
	if err != nil || e.SHA256 != sum(tgz) {
		t.Fatalf("Fetch = %+v, %v", e, err)
	}
}
