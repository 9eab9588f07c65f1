package publish

import (
	"context"
	"fmt"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// PlatformIndex writes at ref one multi-platform index of the pushed
// images members (references with a digest, each the build of one spec for
// one platform): a plain image is entered under the platform its
// configuration names; an index (an attested push) gives its image and its
// attestation manifests, which keep naming their image by digest. Two
// members for one platform are an error. It returns the index's digest.
func PlatformIndex(ctx context.Context, ref string, members []string, opts ...remote.Option) (v1.Hash, error) {
	r, err := Reference(ref, false)
	if err != nil {
		return v1.Hash{}, err
	}
	opts = append([]remote.Option{remote.WithContext(ctx)}, opts...)
	var adds []mutate.IndexAddendum
	seen := map[string]string{}
	add := func(member string, img v1.Image, desc v1.Descriptor) error {
		if desc.Platform != nil && desc.Platform.OS != "unknown" {
			p := desc.Platform.String()
			if other, dup := seen[p]; dup {
				return fmt.Errorf("platform index %s: %s and %s are both %s", ref, other, member, p)
			}
			seen[p] = member
		}
		adds = append(adds, mutate.IndexAddendum{Add: img, Descriptor: desc})
		return nil
	}
	for _, m := range members {
		mr, err := Reference(m, false)
		if err != nil {
			return v1.Hash{}, err
		}
		d, err := remote.Get(mr, opts...)
		if err != nil {
			return v1.Hash{}, fmt.Errorf("platform index: reading %s: %w", m, err)
		}
		if d.MediaType.IsIndex() {
			idx, err := d.ImageIndex()
			if err != nil {
				return v1.Hash{}, fmt.Errorf("platform index: reading %s: %w", m, err)
			}
			im, err := idx.IndexManifest()
			if err != nil {
				return v1.Hash{}, fmt.Errorf("platform index: reading %s: %w", m, err)
			}
			for _, desc := range im.Manifests {
				img, err := idx.Image(desc.Digest)
				if err != nil {
					return v1.Hash{}, fmt.Errorf("platform index: reading %s's %s: %w", m, desc.Digest, err)
				}
				if err := add(m, img, v1.Descriptor{Platform: desc.Platform, Annotations: desc.Annotations}); err != nil {
					return v1.Hash{}, err
				}
			}
			continue
		}
		img, err := d.Image()
		if err != nil {
			return v1.Hash{}, fmt.Errorf("platform index: reading %s: %w", m, err)
		}
		cf, err := img.ConfigFile()
		if err != nil {
			return v1.Hash{}, fmt.Errorf("platform index: reading %s's configuration: %w", m, err)
		}
		if err := add(m, img, v1.Descriptor{Platform: cf.Platform()}); err != nil {
			return v1.Hash{}, err
		}
	}
	if len(seen) < 2 {
		return v1.Hash{}, fmt.Errorf("platform index %s: %d platform(s) among %v: an index of one platform is just its image", ref, len(seen), members)
	}
	idx := mutate.AppendManifests(mutate.IndexMediaType(empty.Index, types.OCIImageIndex), adds...)
	if err := remote.WriteIndex(r, idx, opts...); err != nil {
		return v1.Hash{}, fmt.Errorf("pushing the platform index %s: %w", ref, err)
	}
	return idx.Digest()
}
