package publish

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// platformImage pushes a random image of arch to repo and returns
// repo@digest and the image's digest.
func platformImage(t *testing.T, repo, arch string) (string, v1.Hash) {
	t.Helper()
	img, err := random.Image(128, 1)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", arch
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		t.Fatal(err)
	}
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	ref := repo + "@" + d.String()
	r, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(r, img); err != nil {
		t.Fatal(err)
	}
	return ref, d
}

func TestPlatformIndex(t *testing.T) {
	srv := quietRegistry(nil)
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	ctx := context.Background()
	amd, amdDigest := platformImage(t, host+"/redis-variants/x", "amd64")
	arm, armDigest := platformImage(t, host+"/redis-variants/x-arm64", "arm64")

	// an attested push: an index with the image and an attestation manifest
	att, err := random.Image(64, 1)
	if err != nil {
		t.Fatal(err)
	}
	armImg, err := remote.Image(mustRef(t, arm))
	if err != nil {
		t.Fatal(err)
	}
	attested := mutate.AppendManifests(mutate.IndexMediaType(empty.Index, types.OCIImageIndex),
		mutate.IndexAddendum{Add: armImg, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: "arm64"}}},
		mutate.IndexAddendum{Add: att, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "unknown", Architecture: "unknown"},
			Annotations: map[string]string{"vnd.docker.reference.type": "attestation-manifest", "vnd.docker.reference.digest": armDigest.String()}}})
	ad, err := attested.Digest()
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.WriteIndex(mustRef(t, host+"/redis-variants/x-arm64:attested"), attested); err != nil {
		t.Fatal(err)
	}

	ref := host + "/redis-variants/x:abc-platforms"
	d, err := PlatformIndex(ctx, ref, []string{amd, host + "/redis-variants/x-arm64@" + ad.String()})
	if err != nil {
		t.Fatal(err)
	}
	idx, err := remote.Index(mustRef(t, ref))
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := idx.Digest(); got != d {
		t.Errorf("the registry holds %s, PlatformIndex said %s", got, d)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]v1.Hash{}
	for _, m := range im.Manifests {
		got[m.Platform.String()] = m.Digest
	}
	if got["linux/amd64"] != amdDigest || got["linux/arm64"] != armDigest || len(im.Manifests) != 3 {
		t.Errorf("index manifests %v, want linux/amd64 %s, linux/arm64 %s and the attestation manifest", got, amdDigest, armDigest)
	}
	for _, m := range im.Manifests {
		if m.Annotations["vnd.docker.reference.type"] == "attestation-manifest" && m.Annotations["vnd.docker.reference.digest"] != armDigest.String() {
			t.Errorf("the attestation manifest names %s, want the arm64 image %s", m.Annotations["vnd.docker.reference.digest"], armDigest)
		}
	}
	// the index's children are in its own repository, pullable by digest
	if _, err := remote.Image(mustRef(t, host+"/redis-variants/x@"+armDigest.String())); err != nil {
		t.Errorf("the arm64 image is not in the index's repository: %v", err)
	}

	// two builds for one platform, or one platform alone, are no index
	amd2, _ := platformImage(t, host+"/redis-variants/y", "amd64")
	if _, err := PlatformIndex(ctx, host+"/redis-variants/y:bad", []string{amd, amd2}); err == nil || !strings.Contains(err.Error(), "are both linux/amd64") {
		t.Errorf("two amd64 members: err = %v", err)
	}
	if _, err := PlatformIndex(ctx, host+"/redis-variants/y:one", []string{amd}); err == nil || !strings.Contains(err.Error(), "an index of one platform") {
		t.Errorf("one member: err = %v", err)
	}
}

func mustRef(t *testing.T, s string) name.Reference {
	t.Helper()
	r, err := name.ParseReference(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
