package results

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis-variants/redis-variants/variants"
)

func TestWriteJSONAtomicAndReadBack(t *testing.T) {
	r, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	in := map[string]int{"a": 1}
	if err := r.WriteJSON("sub/x.json", in); err != nil {
		t.Fatal(err)
	}
	var out map[string]int
	if err := r.ReadJSON("sub/x.json", &out); err != nil {
		t.Fatal(err)
	}
	if out["a"] != 1 {
		t.Fatalf("read back %v", out)
	}
	ents, _ := os.ReadDir(filepath.Join(r.Dir, "sub"))
	if len(ents) != 1 {
		t.Fatalf("temporary files left: %v", ents)
	}
}

func TestLatest(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"20261129-100000", "20261129-120000", ".hidden"} {
		os.MkdirAll(filepath.Join(root, d), 0o755)
	}
	got, err := Latest(root)
	if err != nil || filepath.Base(got) != "20261129-120000" {
		t.Fatalf("Latest = %q, %v", got, err)
	}
}

func TestFind(t *testing.T) {
	root := t.TempDir()
	if _, err := Find("", root, "build"); err == nil || !strings.Contains(err.Error(), "run `redis-variants build` first") {
		t.Fatalf("empty root: %v", err)
	}
	for _, id := range []string{"20261201-100000", "20261201-120000", ".20261201-130000"} {
		os.MkdirAll(filepath.Join(root, id), 0o755)
	}
	r, err := Find("", root, "build")
	if err != nil || filepath.Base(r.Dir) != "20261201-120000" {
		t.Fatalf("latest: %v %v", r, err)
	}
	given := filepath.Join(root, "20261201-100000")
	if r, err := Find(given, root, "build"); err != nil || r.Dir != given {
		t.Fatalf("--run: %v %v", r, err)
	}
	// A later stage never creates the run folder it is told to read.
	missing := filepath.Join(root, "nope")
	if _, err := Find(missing, root, "build"); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("missing --run: %v", err)
	}
	if _, err := os.Stat(missing); err == nil {
		t.Fatal("Find created the folder")
	}
}

func TestLoadDirLeavesOutBadFiles(t *testing.T) {
	r, _ := Open(t.TempDir())
	type rec struct {
		Name string `json:"name"`
	}
	r.WriteJSON("recs/b/two.json", rec{Name: "two"})
	r.WriteJSON("recs/a/one.json", rec{Name: "one"})
	r.WriteJSON("recs/nameless.json", rec{})
	os.WriteFile(r.Path("recs", "torn.json"), []byte(`{"name": "thr`), 0o644)
	os.WriteFile(r.Path("recs", ".tmp.json"), []byte(`junk`), 0o644)
	os.WriteFile(r.Path("recs", "notes.txt"), []byte(`junk`), 0o644)
	got, skipped, err := LoadDir(r, "recs", func(v *rec) error {
		if v.Name == "" {
			return errors.New("no name")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Name != "one" || got[1].Name != "two" {
		t.Fatalf("records %+v, want one and two in path order", got)
	}
	if len(skipped) != 2 || !strings.Contains(skipped[0].Error(), "nameless.json: no name") || !strings.Contains(skipped[1].Error(), "torn.json: decoding") {
		t.Fatalf("skipped %v", skipped)
	}
	none, skipped, err := LoadDir[rec](r, "missing", nil)
	if err != nil || len(none) != 0 || len(skipped) != 0 {
		t.Fatal(none, skipped, err)
	}
}

func TestLoadBuildsAndVerifications(t *testing.T) {
	r, _ := Open(t.TempDir())
	for _, n := range []string{"a", "b"} {
		b := Build{Variant: variants.Variant{Name: n, ID: "0123456789ab"}, Status: "ok", Image: "redis-variants/" + n + ":0123456789ab",
			Pulled: &Pulled{Ref: "redis:7.0.15", Digest: "sha256:00"}}
		if err := r.WriteJSON(BuildRel(n), b); err != nil {
			t.Fatal(err)
		}
		if err := r.WriteJSON(VerificationRel(n), Verification{Variant: n, Status: "passed"}); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(r.Path("builds", "torn.json"), []byte(`{"variant": {`), 0o644)
	builds, skipped, err := LoadBuilds(r)
	if err != nil || len(builds) != 2 || builds["b"].Image != "redis-variants/b:0123456789ab" || builds["a"].Pulled.Digest != "sha256:00" {
		t.Fatalf("LoadBuilds = %v, %v", builds, err)
	}
	if len(skipped) != 1 || !strings.Contains(skipped[0].Error(), "torn.json") {
		t.Fatalf("skipped %v", skipped)
	}
	vs, skipped, err := LoadVerifications(r)
	if err != nil || len(skipped) != 0 || vs["a"].Status != "passed" {
		t.Fatalf("LoadVerifications = %v, %v, %v", vs, skipped, err)
	}
}

// TestLoadString: the load as the log and the report say it.
func TestLoadString(t *testing.T) {
	for _, c := range []struct {
		l    Load
		want string
	}{
		{Load{Clients: 25}, "25 connections per server"},
		{Load{Clients: 1}, "1 connection per server"},
		{Load{Clients: 25, Threads: 3}, "25 connections per server on 3 goroutines"},
		{Load{Clients: 1, Window: 700 * time.Millisecond}, "1 connection per server, 700ms windows"},
	} {
		if got := c.l.String(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.l, got, c.want)
		}
	}
}
