// Package baseimage turns a Debian root file system (from debootstrap) into
// an OCI image and pushes it, so that a local registry can stand in for
// Docker Hub's debian:<suite>-slim on machines that cannot reach it.
package baseimage

import (
	"context"
	"fmt"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Image builds a one-layer image from a tar of a root file system, with the
// configuration Docker Hub's Debian images carry (PATH, CMD bash).
func Image(rootfsTar, suite, arch string) (v1.Image, error) {
	if arch == "" {
		arch = "amd64"
	}
	layer, err := tarball.LayerFromFile(rootfsTar, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, fmt.Errorf("reading root file system %s: %w", rootfsTar, err)
	}
	img, err := mutate.AppendLayers(mutate.MediaType(empty.Image, types.OCIManifestSchema1), layer)
	if err != nil {
		return nil, fmt.Errorf("adding layer: %w", err)
	}
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", arch
	if arch == "arm64" {
		cf.Variant = "v8"
	}
	cf.Created = v1.Time{Time: time.Now().UTC().Truncate(time.Second)}
	cf.Config.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
	cf.Config.Cmd = []string{"bash"}
	cf.Config.Labels = map[string]string{
		"io.redis-variants.base":         "debian:" + suite + "-slim stand-in (debootstrap --variant=minbase, slimmed)",
		"org.opencontainers.image.title": "debian",
	}
	return mutate.ConfigFile(img, cf)
}

// Push writes img to ref (plain HTTP for a local registry) and returns the
// digest the registry reports back.
func Push(ctx context.Context, img v1.Image, ref string) (v1.Hash, error) {
	r, err := name.ParseReference(ref, name.Insecure)
	if err != nil {
		return v1.Hash{}, fmt.Errorf("parsing %s: %w", ref, err)
	}
	if err := remote.Write(r, img, remote.WithContext(ctx)); err != nil {
		return v1.Hash{}, fmt.Errorf("pushing %s: %w", ref, err)
	}
	desc, err := remote.Head(r, remote.WithContext(ctx))
	if err != nil {
		return v1.Hash{}, fmt.Errorf("reading back %s: %w", ref, err)
	}
	want, err := img.Digest()
	if err != nil {
		return v1.Hash{}, err
	}
	if desc.Digest != want {
		return v1.Hash{}, fmt.Errorf("pushed %s but the registry answers %s", want, desc.Digest)
	}
	return desc.Digest, nil
}

// AddToIndex pushes img and makes ref a multi-platform index holding it
// beside what ref held for other platforms (an index's other entries, or
// a single image of another platform), as Docker Hub's debian images are.
// It returns the index's digest.
func AddToIndex(ctx context.Context, img v1.Image, ref string) (v1.Hash, error) {
	r, err := name.ParseReference(ref, name.Insecure)
	if err != nil {
		return v1.Hash{}, fmt.Errorf("parsing %s: %w", ref, err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return v1.Hash{}, err
	}
	plat := cf.Platform()
	opts := []remote.Option{remote.WithContext(ctx)}
	var adds []mutate.IndexAddendum
	if desc, err := remote.Get(r, opts...); err == nil {
		switch {
		case desc.MediaType.IsIndex():
			idx, err := desc.ImageIndex()
			if err != nil {
				return v1.Hash{}, fmt.Errorf("reading %s: %w", ref, err)
			}
			im, err := idx.IndexManifest()
			if err != nil {
				return v1.Hash{}, fmt.Errorf("reading %s: %w", ref, err)
			}
			for _, m := range im.Manifests {
				if m.Platform == nil || m.Platform.Architecture == plat.Architecture {
					continue
				}
				other, err := idx.Image(m.Digest)
				if err != nil {
					return v1.Hash{}, fmt.Errorf("reading %s's %s image: %w", ref, m.Platform, err)
				}
				adds = append(adds, mutate.IndexAddendum{Add: other, Descriptor: v1.Descriptor{Platform: m.Platform}})
			}
		default:
			other, err := desc.Image()
			if err != nil {
				return v1.Hash{}, fmt.Errorf("reading %s: %w", ref, err)
			}
			ocf, err := other.ConfigFile()
			if err != nil {
				return v1.Hash{}, fmt.Errorf("reading %s's configuration: %w", ref, err)
			}
			if op := ocf.Platform(); op.Architecture != plat.Architecture {
				adds = append(adds, mutate.IndexAddendum{Add: other, Descriptor: v1.Descriptor{Platform: op}})
			}
		}
	}
	adds = append(adds, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: plat}})
	idx := mutate.AppendManifests(mutate.IndexMediaType(empty.Index, types.OCIImageIndex), adds...)
	if err := remote.WriteIndex(r, idx, opts...); err != nil {
		return v1.Hash{}, fmt.Errorf("pushing %s: %w", ref, err)
	}
	return idx.Digest()
}
