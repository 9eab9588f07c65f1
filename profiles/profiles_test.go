package profiles

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/redis-variants/redis-variants/engine/enginetest"
)

// profileDir writes a profile folder as a PGO training exports it.
func profileDir(t *testing.T, file string, data []byte) string {
	t.Helper()
	dir := t.TempDir()
	sum := sha256.Sum256(data)
	for f, b := range map[string][]byte{
		file:         data,
		SHA256File:   []byte(hex.EncodeToString(sum[:]) + "\n"),
		TrainingFile: []byte("\"test\",\"rps\"\n\"SET\",\"100000.00\"\n"),
	} {
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// The key is the sha256 of all its parts: any part changed is another
// key, another tag.
func TestKey(t *testing.T) {
	k := Key{Kind: "pgo", Spec: `{"kind":"variant"}`, Recipe: "sha256:aa", Loadgen: "bb"}
	seen := map[string]string{k.Tag(): "base"}
	for name, o := range map[string]Key{
		"spec":    {Kind: "pgo", Spec: `{"kind":"variant","opt":"O3"}`, Recipe: "sha256:aa", Loadgen: "bb"},
		"recipe":  {Kind: "pgo", Spec: `{"kind":"variant"}`, Recipe: "sha256:ab", Loadgen: "bb"},
		"loadgen": {Kind: "pgo", Spec: `{"kind":"variant"}`, Recipe: "sha256:aa", Loadgen: "bc"},
		"kind":    {Kind: "bolt", Spec: `{"kind":"variant"}`, Recipe: "sha256:aa", Loadgen: "bb"},
	} {
		if prev, dup := seen[o.Tag()]; dup {
			t.Errorf("changing the %s gives the tag of %s: %s", name, prev, o.Tag())
		}
		seen[o.Tag()] = name
	}
	if k.Tag() != (Key{Kind: "pgo", Spec: `{"kind":"variant"}`, Recipe: "sha256:aa", Loadgen: "bb"}).Tag() {
		t.Error("the same key gives two tags")
	}
}

// Against the project's registry (the Distribution registry set-up
// starts): a profile pushed under its key is found by that key only,
// pulled back byte for byte, listed; a folder whose profile does not
// match its sha256 is refused before anything is pushed.
func TestPushLookupPull(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: needs the local registry")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	id := make([]byte, 6)
	rand.Read(id)
	repo, err := name.NewRepository(fmt.Sprintf("%s/test-profiles-%x", enginetest.Registry(), id), name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	data := make([]byte, 64<<10)
	rand.Read(data)
	dir := profileDir(t, "redis.profdata", data)
	k := Key{Kind: "pgo", Spec: `{"kind":"variant","compiler":{"family":"clang","version":"16"}}`, Recipe: "sha256:" + strings.Repeat("1", 64), Loadgen: strings.Repeat("2", 64)}

	if _, ok, err := Lookup(ctx, repo, k); err != nil || ok {
		t.Fatalf("before any push: found %t, %v; want nothing", ok, err)
	}
	s, err := Push(ctx, repo, k, dir, "clang16-o3-lto-pgo", "Test CPU")
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	if s.SHA256 != hex.EncodeToString(sum[:]) || s.File != "redis.profdata" || s.Bytes != int64(len(data)) || s.CPU != "Test CPU" || s.Variant != "clang16-o3-lto-pgo" {
		t.Errorf("pushed: %+v", s)
	}
	got, ok, err := Lookup(ctx, repo, k)
	if err != nil || !ok || got.Ref != s.Ref {
		t.Fatalf("lookup: %+v %t %v, want %s", got, ok, err, s.Ref)
	}
	other := k
	other.Loadgen = strings.Repeat("3", 64)
	if _, ok, err := Lookup(ctx, repo, other); err != nil || ok {
		t.Errorf("another load generator's key: found %t, %v; want nothing", ok, err)
	}

	out := filepath.Join(t.TempDir(), "pgo", "clang16-o3-lto-pgo")
	if err := Pull(ctx, got, out); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"redis.profdata", SHA256File, TrainingFile} {
		a, _ := os.ReadFile(filepath.Join(dir, f))
		b, err := os.ReadFile(filepath.Join(out, f))
		if err != nil || !bytes.Equal(a, b) {
			t.Errorf("%s pulled: %d bytes, %v; pushed %d bytes", f, len(b), err, len(a))
		}
	}

	list, err := List(ctx, repo)
	if err != nil || len(list) != 1 || list[0].Ref != s.Ref {
		t.Errorf("list: %+v, %v; want the one pushed", list, err)
	}

	bad := profileDir(t, "redis.gcda.tar", []byte("tar"))
	os.WriteFile(filepath.Join(bad, SHA256File), []byte(strings.Repeat("0", 64)), 0o644)
	if _, err := Push(ctx, repo, other, bad, "gcc-pgo", "Test CPU"); err == nil || !strings.Contains(err.Error(), "sha256") {
		t.Errorf("a profile that does not match its sha256: %v, want refused", err)
	}
	if _, ok, _ := Lookup(ctx, repo, other); ok {
		t.Error("the refused profile is in the registry")
	}
}
