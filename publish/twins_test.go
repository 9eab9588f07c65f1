package publish

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/redis-variants/redis-variants/artifact"
	"github.com/redis-variants/redis-variants/variants"
)

// TestPublishTwins: a published image whose spec was also built for arm64
// and verified gets the twin pushed beside it and its tags on an index of
// both, with the results attached to the index too; an unverified twin is
// left out with a warning.
func TestPublishTwins(t *testing.T) {
	fixture := append(append([]fixtureVariant{}, standardFixture...),
		fixtureVariant{name: "clang-o2-arm64", platform: variants.PlatformARM64, unranked: true},
		fixtureVariant{name: "gcc-o3-native-arm64", march: "native", platform: variants.PlatformARM64, unranked: true, verify: "none"})
	src, cfgs := sourceFor(t, fixture)
	run := writeFixture(t, fixture, cfgs)
	srv := quietRegistry(nil)
	defer srv.Close()
	reg := strings.TrimPrefix(srv.URL, "http://")
	ctx := context.Background()

	pub, err := Publish(ctx, run, testOptions(reg, src))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(pub.Warnings, "\n"), "gcc-o3-native-arm64, the linux/arm64 build of gcc-o3-native's spec, is not published beside it: it was not verified") {
		t.Errorf("warnings %q: want the unverified twin's", pub.Warnings)
	}
	var clang, native *Image
	for i := range pub.Images {
		switch pub.Images[i].Variant {
		case "clang-o2":
			clang = &pub.Images[i]
		case "gcc-o3-native":
			native = &pub.Images[i]
		}
	}
	if clang == nil || native == nil {
		t.Fatalf("published %+v", pub.Images)
	}
	if native.Index != "" || len(native.Platforms) != 0 {
		t.Errorf("gcc-o3-native has no verified twin, yet index %q platforms %+v", native.Index, native.Platforms)
	}
	if len(clang.Platforms) != 1 || clang.Platforms[0].Variant != "clang-o2-arm64" || clang.Platforms[0].Digest == "" || clang.Index == "" || clang.IndexResults == "" {
		t.Fatalf("clang-o2: platforms %+v, index %q, index results %q", clang.Platforms, clang.Index, clang.IndexResults)
	}
	// every tag names the index; the index names both images under their platforms
	_, idxDigest, _ := strings.Cut(clang.Index, "@")
	for _, tag := range clang.Pushed {
		r, _ := name.ParseReference(tag)
		d, err := remote.Head(r)
		if err != nil || d.Digest.String() != idxDigest {
			t.Errorf("%s: %v, %v; want the index %s", tag, d, err, idxDigest)
		}
	}
	ir, _ := name.ParseReference(clang.Index)
	idx, err := remote.Index(ir)
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, m := range im.Manifests {
		got[m.Platform.String()] = m.Digest.String()
	}
	if len(got) != 2 || got["linux/amd64"] != clang.Digest || got["linux/arm64"] != clang.Platforms[0].Digest {
		t.Errorf("index %v, want linux/amd64 %s and linux/arm64 %s", got, clang.Digest, clang.Platforms[0].Digest)
	}
	twin, err := idx.Image(mustHash(t, clang.Platforms[0].Digest))
	if err != nil {
		t.Fatal(err)
	}
	cf, err := twin.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if l := cf.Config.Labels; l[KeyTwinOf] != "clang-o2" || l[KeyName] != "clang-o2-arm64" || l[KeyScore] != "" || !strings.Contains(l[KeyOCIDescription], "not benchmarked") {
		t.Errorf("twin labels: twin-of %q name %q score %q description %q", l[KeyTwinOf], l[KeyName], l[KeyScore], l[KeyOCIDescription])
	}
	// a reader resolving the tag finds the results on the index
	found, err := artifact.Find(ctx, ir.Context().Digest(idxDigest))
	if err != nil || len(found) != 1 {
		t.Errorf("results attached to the index: %v, %v", found, err)
	}
}

func mustHash(t *testing.T, s string) v1.Hash {
	t.Helper()
	h, err := v1.NewHash(s)
	if err != nil {
		t.Fatal(err)
	}
	return h
}
