package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redis-variants/redis-variants/variants"
)

func runCmd(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	root := newRoot()
	var out, errb bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errb)
	root.SetArgs(args)
	err = root.Execute()
	return out.String(), errb.String(), err
}

func TestPlanTable(t *testing.T) {
	out, errs, err := runCmd(t, "plan", "-f", "../../variants.yaml")
	if err != nil {
		t.Fatalf("plan: %v\n%s", err, errs)
	}
	for _, want := range []string{"NAME", "stock-debian", "official", "gcc-o3-native-mimalloc", "clang16-o3-lto-pgo", "clang16-o3-lto", "official-alpine", "musl", "3 references, 4 variants (24 images with their layout draws)"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errs, "warning: variants[0].march: -march=native") {
		t.Errorf("warnings not on stderr: %q", errs)
	}
}

// planJSON runs plan --json on file and decodes what it prints.
func planJSON(t *testing.T, file string) variants.Plan {
	t.Helper()
	out, _, err := runCmd(t, "plan", "-f", file, "--json")
	if err != nil {
		t.Fatal(err)
	}
	var p variants.Plan
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	return p
}

func TestPlanJSON(t *testing.T) {
	// The default file: 4 specs of 6 layout draws each, draws after their spec.
	if p := planJSON(t, "../../variants.yaml"); len(p.Variants) != 24 || len(p.References) != 3 || p.Variants[0].ID == "" || p.Variants[0].Layouts != 6 || p.Variants[23].DrawOf != "clang16-o3-lto-pgo" || p.Variants[18].PGO == nil || p.Variants[12].PGO != nil {
		t.Errorf("plan = %+v", p)
	}
	// The PGO file's training defaults come from its quick profile.
	if p := planJSON(t, "../../examples/variants-pgo.yaml"); len(p.Variants) != 5 || p.Variants[1].PGO == nil || p.Variants[4].BOLT == nil || len(p.Variants[1].PGO.Train.Tests) == 0 {
		t.Errorf("plan = %+v", p)
	}
	// The layout file: 3 specs of 4 draws each, draws after their spec.
	if p := planJSON(t, "../../examples/variants-layout.yaml"); len(p.Variants) != 12 || p.Variants[1].DrawOf != p.Variants[0].Name || p.Variants[3].Layout != 4 || p.Variants[11].DrawOf != "zig-o3-native" {
		t.Errorf("plan = %+v", p)
	}
}

func TestPlanInvalid(t *testing.T) {
	f := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(f, []byte("variants:\n  - {name: a, allocator: mimaloc, opt: O9}\n"), 0o644)
	out, errs, err := runCmd(t, "plan", "-f", f)
	if err == nil {
		t.Fatalf("invalid file accepted:\n%s", out)
	}
	for _, want := range []string{f + ":2:26: variants[0].allocator: unknown value \"mimaloc\" (did you mean \"mimalloc\"?)", "variants[0].opt: unknown optimization level"} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}
}
