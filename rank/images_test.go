package rank

import (
	"context"
	"strings"
	"testing"
)

// TestRankRefusesTwoImagesUnderOneName: b was rebuilt between two benches
// of one run, and one replicate of the old image is still among the
// records; the ranking refuses rather than average the two builds.
func TestRankRefusesTwoImagesUnderOneName(t *testing.T) {
	rep := func(id string, n int) Replicate {
		r := Replicate{Rep: n, ImageID: id, BaseID: "sha256:a1"}
		r.Image, r.Base, r.Runtime, r.BaseRuntime = "b", "a", "host", "host"
		return r
	}
	r := &Ranker{}
	if _, err := r.Rank(context.Background(), nil, []Replicate{rep("sha256:b1", 0), rep("sha256:b1", 1)}); err != nil {
		t.Fatalf("one image each: %v", err)
	}
	_, err := r.Rank(context.Background(), nil, []Replicate{rep("sha256:b1", 0), rep("sha256:b2", 1)})
	if err == nil || !strings.Contains(err.Error(), `"b": sha256:b1 (replicate`) || !strings.Contains(err.Error(), "sha256:b2") {
		t.Fatalf("two images under b: %v", err)
	}
	// a memory server of another image of a, beside replicates of sha256:a1
	r.Memory = []MemoryTrial{{Image: "a", ImageID: "sha256:a0"}}
	if _, err := r.Rank(context.Background(), nil, []Replicate{rep("sha256:b1", 0)}); err == nil || !strings.Contains(err.Error(), "memory server a #0") {
		t.Fatalf("a memory server of another image: %v", err)
	}
}
