package builder

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/redis-variants/redis-variants/dockerfiles"
	"github.com/redis-variants/redis-variants/variants"
)

// pull pulls v.Image through Docker Engine and gives it v's own name
// (ImageRef), so every later stage runs it like a built image. It fails,
// naming the reference, when the pull fails (no such image, refused
// credentials, a pinned digest the registry does not serve, another
// platform) or when the image has no redis-server where images keep one.
func (b *Builder) pull(ctx context.Context, v variants.Variant, r Result) (Result, error) {
	b.task(v.Name).Update("pulling %s", v.Image)
	p, err := b.opt.Engine.Pull(ctx, v.Image)
	if err != nil {
		return r, err
	}
	server := ""
	for _, path := range ServerPaths {
		if _, err := b.opt.Engine.CopyFileFromImage(ctx, p.ID, path); err == nil {
			server = path
			break
		}
	}
	if server == "" {
		return r, fmt.Errorf("pulled %s@%s, but it has no redis-server (looked in %s)", v.Image, p.Digest, strings.Join(ServerPaths, ", "))
	}
	if err := b.opt.Engine.Tag(ctx, p.ID, r.Image); err != nil {
		return r, fmt.Errorf("pulled %s: %w", v.Image, err)
	}
	writeLog(r.Log, fmt.Sprintf("pulled %s as %s\n  digest   %s\n  platform %s\n  image ID %s\n  redis-server at %s\n",
		v.Image, p.Resolved, p.Digest, p.Platform, p.ID, server))
	r.Status, r.Origin, r.Pulled, r.Server = StatusOK, OriginPulled, &p, server
	r.ConfigDigest, r.Labels, r.PullError = p.ID, p.Labels, ""
	r.Size, _ = b.opt.Engine.ImageSize(ctx, p.ID)
	if info, err := b.opt.Engine.CopyFileFromImage(ctx, p.ID, dockerfiles.BuildInfoPath); err == nil && json.Valid(info) {
		r.BuildInfo = json.RawMessage(info)
	}
	return r, nil
}

// serverPath is where the recipe's target keeps redis-server.
func serverPath(target string) string {
	if target == dockerfiles.TargetStock {
		return "/usr/bin/redis-server"
	}
	return "/usr/local/bin/redis-server"
}

// PulledRedis is the Redis version a pulled image declares: the official
// images' REDIS_VERSION environment variable, else this tool's label.
func PulledRedis(r Result) string {
	if r.Pulled == nil {
		return ""
	}
	for _, e := range r.Pulled.Env {
		if v, ok := strings.CutPrefix(e, "REDIS_VERSION="); ok {
			return v
		}
	}
	return r.Pulled.Labels["io.redis-variants.redis.version"]
}
