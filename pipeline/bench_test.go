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
	write("builds/gcc.json", map[string]any{"variant": variants.Variant{Name: "gcc", ID: "111", Kind: variants.KindVariant}, "image": "redis-variants/gcc:111", "status": "ok"})
	write("builds/stock.json", map[string]any{"variant": variants.Variant{Name: "stock", ID: "222", Kind: variants.KindDistro}, "image": "redis-variants/stock:222", "status": "ok"})
	write("builds/zig.json", map[string]any{"variant": variants.Variant{Name: "zig", Kind: variants.KindVariant}, "status": "failed", "error": "zig: boom"})
	write("verify/gcc.json", map[string]any{"variant": "gcc", "status": "passed"})
	write("verify/stock.json", map[string]any{"variant": "stock", "status": "failed"})
	imgs, warns, err := benchImages(run, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []bench.Image{
		{Name: "gcc", ID: "111", Ref: "redis-variants/gcc:111", Verified: "passed"},
		{Name: "stock", ID: "222", Ref: "redis-variants/stock:222", Reference: true, Verified: "failed"},
	}
	if !slices.Equal(imgs, want) {
		t.Fatalf("Images = %+v, want %+v", imgs, want)
	}
	if len(warns) != 1 || !strings.Contains(warns[0], "zig") || !strings.Contains(warns[0], "boom") {
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
