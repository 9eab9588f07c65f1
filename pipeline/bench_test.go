package pipeline

import (
	"reflect"
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
	if !reflect.DeepEqual(imgs, want) {
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

	// layout draws: under their spec, in draw order; a failed one left out
	draw := func(k int, id, status string) {
		name := variants.DrawName("clang", k)
		write("builds/"+name+".json", map[string]any{"variant": variants.Variant{Name: name, ID: id, Kind: variants.KindVariant, Layout: k, Layouts: 4, DrawOf: "clang"},
			"image": "redis-variants/" + name + ":" + id, "config_digest": "sha256:" + id, "status": "ok"})
		write("verify/"+name+".json", map[string]any{"variant": name, "image_id": "sha256:" + id, "status": status})
	}
	draw(4, "c4", "passed")
	draw(2, "c2", "passed")
	draw(3, "c3", "failed")
	imgs, warns, err = benchImages(run, []string{"clang"})
	if err != nil {
		t.Fatal(err)
	}
	want = []bench.Image{{Name: "clang", ID: "333", ImageID: "sha256:c1", Ref: "redis-variants/clang:333", Verified: "passed", Draws: []bench.Image{
		{Name: "clang.l2", ID: "c2", ImageID: "sha256:c2", Ref: "redis-variants/clang.l2:c2", Verified: "passed"},
		{Name: "clang.l4", ID: "c4", ImageID: "sha256:c4", Ref: "redis-variants/clang.l4:c4", Verified: "passed"},
	}}}
	if !reflect.DeepEqual(imgs, want) {
		t.Fatalf("--only clang with draws: %+v, want %+v", imgs, want)
	}
	if len(warns) != 1 || !strings.Contains(warns[0], "clang.l3") {
		t.Fatalf("warnings %q, want clang.l3's failed verification", warns)
	}
	if im, d := imgs[0].Draw(4); im.Name != "clang.l2" || d != 2 {
		t.Errorf("replicate 4 of 3 draws runs %s (draw %d), want clang.l2 (draw 2)", im.Name, d)
	}
	empty, _ := results.Open(t.TempDir())
	if _, _, err := benchImages(empty, nil); err == nil || !strings.Contains(err.Error(), "build") {
		t.Fatalf("no builds: %v", err)
	}
}
