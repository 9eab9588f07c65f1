package results

import (
	"os"
	"path/filepath"
	"testing"
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
