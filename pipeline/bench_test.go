package pipeline

import (
	"slices"
	"strings"
	"testing"

	"github.com/redis-variants/redis-variants/bench"
	"github.com/redis-variants/redis-variants/results"
	"github.com/redis-variants/redis-variants/variants"
)

func TestImagesFromRun(t *testing.T) {
	run, _ := results.Open(t.TempDir())
	write := func(rel string, v any) {
		if err := run.WriteJSON(rel, v); err != nil {
			t.Fatal(err)
		}
	}
	write("builds/gcc.json", map[string]any{"variant": variants.Variant{Name: "gcc", ID: "111", Kind: variants.KindVariant}, "image": "redis-variants/gcc:111", "config_digest": "sha256:g2", "status": "ok"})
	write("builds/stock.json", map[string]any{"variant": variants.Variant{Name: "stock", ID: "222", Kind: variants.KindDistro}, "image": "redis-variants/stock:222", "config_digest": "sha256:s1", "status": "ok"})
	write("builds/clang.json", map[string]any{"variant": variants.Variant{Name: "clang", ID: "333", Kind: variants.KindVariant}, "image": "redis-variants/clang:333", "config_digest": "sha256:c1", "status": "ok"})
	write("builds/zig.json", map[string]any{"variant": variants.Variant{Name: "zig", Kind: variants.KindVariant}, "status": "failed", "error": "zig: boom"})
	write("verify/gcc.json", map[string]any{"variant": "gcc", "image_id": "sha256:g1", "status": "passed"}) // of the image built before
	write("verify/stock.json", map[string]any{"variant": "stock", "image_id": "sha256:s1", "status": "failed"})
	write("verify/clang.json", map[string]any{"variant": "clang", "image_id": "sha256:c1", "status": "passed"})
	imgs, warns, err := benchImages(run, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []bench.Image{
		{Name: "clang", ID: "333", ImageID: "sha256:c1", Ref: "redis-variants/clang:333", Verified: "passed"},
		{Name: "gcc", ID: "111", ImageID: "sha256:g2", Ref: "redis-variants/gcc:111"}, // its "passed" is another image's
		{Name: "stock", ID: "222", ImageID: "sha256:s1", Ref: "redis-variants/stock:222", Reference: true, Verified: "failed"},
	}
	if !slices.Equal(imgs, want) {
		t.Fatalf("Images = %+v, want %+v", imgs, want)
	}
	if len(warns) != 2 || !strings.Contains(warns[0], "gcc") || !strings.Contains(warns[0], "sha256:g1") || !strings.Contains(warns[1], "zig") || !strings.Contains(warns[1], "boom") {
		t.Fatalf("warnings %q", warns)
	}
	if imgs, _, _ := benchImages(run, []string{"stock"}); len(imgs) != 1 || imgs[0].Name != "stock" {
		t.Fatalf("--only stock: %+v", imgs)
	}
	if _, _, err := benchImages(run, []string{"nope"}); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Fatalf("--only nope: %v", err)
	}
	empty, _ := results.Open(t.TempDir())
	if _, _, err := benchImages(empty, nil); err == nil || !strings.Contains(err.Error(), "build") {
		t.Fatalf("no builds: %v", err)
	}
}
