package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/spf13/cobra/doc"
)

var update = flag.Bool("update", false, "rewrite the generated command reference in docs/commands")

// referenceDir is where the generated command reference lives.
var referenceDir = filepath.Join("..", "..", "docs", "commands")

// TestCommandReference: docs/commands holds one page for every command a
// user runs (hidden plumbing left out), generated from the command line
// itself by cobra's doc generator, as crane's docs are; a flag or command
// added, renamed or described anew without regenerating fails here.
// Regenerate: go test ./cmd/redis-variants -run TestCommandReference -update
func TestCommandReference(t *testing.T) {
	// the defaults the environment would change
	for _, k := range []string{"BUILDKIT_HOST", "RV_RUNS", "RV_STATE", "RV_REGISTRY", "RV_PROGRESS", "RV_BUILDERS", "RV_SHARD", "DOCKER_HOST"} {
		t.Setenv(k, "")
	}
	root := newRoot()
	root.DisableAutoGenTag = true
	dir := t.TempDir()
	if err := doc.GenMarkdownTree(root, dir); err != nil {
		t.Fatal(err)
	}
	got := readPages(t, dir)
	if *update {
		old, _ := filepath.Glob(filepath.Join(referenceDir, "*.md"))
		for _, f := range old {
			os.Remove(f)
		}
		os.MkdirAll(referenceDir, 0o755)
		for name, b := range got {
			if err := os.WriteFile(filepath.Join(referenceDir, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	want := readPages(t, referenceDir)
	var names []string
	for name := range got {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if w, ok := want[name]; !ok {
			t.Errorf("docs/commands/%s is missing (go test ./cmd/redis-variants -run TestCommandReference -update)", name)
		} else if !bytes.Equal(w, got[name]) {
			t.Errorf("docs/commands/%s is stale (go test ./cmd/redis-variants -run TestCommandReference -update)", name)
		}
	}
	for name := range want {
		if _, ok := got[name]; !ok {
			t.Errorf("docs/commands/%s documents no command the tool has (go test ./cmd/redis-variants -run TestCommandReference -update)", name)
		}
	}
	if len(got) < 20 {
		t.Errorf("%d pages generated, want one for each of the commands", len(got))
	}
}

func readPages(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(f)] = b
	}
	return out
}
