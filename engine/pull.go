package engine

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/moby/moby/client"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/redis-variants/redis-variants/results"
)

// Pulled is what Docker Engine has after a pull (results.Pulled: the
// build record keeps it).
type Pulled = results.Pulled

// HostPlatform is the platform images must have to run here.
func HostPlatform() string { return "linux/" + runtime.GOARCH }

// Pull pulls ref for this machine's platform through Docker Engine (which
// applies its registry mirrors: a Docker Hub name resolves through the
// daemon's registry-mirrors), with the credentials the Docker config
// ($DOCKER_CONFIG/config.json and its credential helpers) holds for ref's
// registry, and returns what it pulled. It fails, naming ref, when the
// registry refuses or has no such image, when the digest pulled is not the
// one ref pins, and when the image is for another platform.
func (c *Client) Pull(ctx context.Context, ref string) (Pulled, error) {
	r, err := name.ParseReference(ref)
	if err != nil {
		return Pulled{}, fmt.Errorf("pulling %s: not a valid image reference: %w", ref, err)
	}
	p := Pulled{Ref: ref, Resolved: r.Name()}
	auth, err := registryAuth(r.Context().Registry)
	if err != nil {
		return p, fmt.Errorf("pulling %s: credentials for %s: %w", ref, r.Context().RegistryStr(), err)
	}
	plat := ocispec.Platform{OS: "linux", Architecture: runtime.GOARCH}
	res, err := c.api.ImagePull(ctx, ref, client.ImagePullOptions{RegistryAuth: auth, Platforms: []ocispec.Platform{plat}})
	if err != nil {
		return p, fmt.Errorf("pulling %s: %w", ref, err)
	}
	_, err = drainStream(res)
	res.Close()
	if err != nil {
		return p, fmt.Errorf("pulling %s: %w", ref, err)
	}
	ins, err := c.api.ImageInspect(ctx, ref)
	if err != nil {
		return p, fmt.Errorf("pulling %s: inspecting what was pulled: %w", ref, err)
	}
	p.ID = ins.ID
	p.Platform = ins.Os + "/" + ins.Architecture
	if ins.Variant != "" {
		p.Platform += "/" + ins.Variant
	}
	if ins.Config != nil {
		p.Env = ins.Config.Env
		p.Labels = ins.Config.Labels
	}
	p.Digest = repoDigest(ins.RepoDigests, r.Context())
	if d, ok := r.(name.Digest); ok {
		if p.Digest != "" && p.Digest != d.DigestStr() {
			return p, fmt.Errorf("pulling %s: digest mismatch: the registry served %s", ref, p.Digest)
		}
		p.Digest = d.DigestStr()
	}
	if p.Digest == "" {
		return p, fmt.Errorf("pulling %s: Docker Engine recorded no digest for %s (repo digests %v)", ref, r.Context().Name(), ins.RepoDigests)
	}
	if want := HostPlatform(); !strings.HasPrefix(p.Platform+"/", want+"/") {
		// Docker Engine 20.10 pulls a single-platform image of another
		// platform regardless: nothing here can run it, so it goes.
		c.api.ImageRemove(context.WithoutCancel(ctx), ref, client.ImageRemoveOptions{PruneChildren: true})
		return p, fmt.Errorf("pulling %s: the image is for %s, this machine runs %s", ref, p.Platform, want)
	}
	return p, nil
}

// repoDigest picks the digest Docker Engine recorded for repo among an
// image's repo digests ("docker.io/library/redis@sha256:…" or, for Docker
// Hub, "redis@sha256:…").
func repoDigest(digests []string, repo name.Repository) string {
	for _, rd := range digests {
		at := strings.LastIndex(rd, "@")
		if at < 0 {
			continue
		}
		other, err := name.NewRepository(rd[:at])
		if err == nil && other.Name() == repo.Name() {
			return rd[at+1:]
		}
	}
	return ""
}

// registryAuth is the X-Registry-Auth header for reg from the Docker
// config, "" when it holds none (anonymous pulls).
func registryAuth(reg name.Registry) (string, error) {
	a, err := authn.DefaultKeychain.Resolve(reg)
	if err != nil {
		return "", err
	}
	if a == authn.Anonymous {
		return "", nil
	}
	cfg, err := a.Authorization()
	if err != nil {
		return "", err
	}
	b, err := json.Marshal(map[string]string{
		"username": cfg.Username, "password": cfg.Password, "auth": cfg.Auth,
		"identitytoken": cfg.IdentityToken, "registrytoken": cfg.RegistryToken,
		"serveraddress": reg.RegistryStr(),
	})
	if err != nil {
		return "", err
	}
	return base64.URLEncoding.EncodeToString(b), nil
}

// Tag gives image src the name dst as well.
func (c *Client) Tag(ctx context.Context, src, dst string) error {
	if _, err := c.api.ImageTag(ctx, client.ImageTagOptions{Source: src, Target: dst}); err != nil {
		return fmt.Errorf("tagging %s as %s: %w", src, dst, err)
	}
	return nil
}
