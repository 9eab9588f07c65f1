package doctor

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	bk "github.com/moby/buildkit/client"

	"github.com/redis-variants/redis-variants/engine"
	"github.com/redis-variants/redis-variants/solve"
)

// SmokeResult is what the end-to-end smoke test saw.
type SmokeResult struct {
	Image   string        // name in Docker Engine
	Output  string        // what the container printed
	Pushed  string        // repo@digest in the registry
	Elapsed time.Duration // whole smoke test
}

const smokeDockerfile = `FROM debian:bookworm-slim
RUN echo "redis-variants smoke $(cat /etc/debian_version)" > /smoke
CMD ["cat", "/smoke"]
`

// Smoke proves the real parts work together: BuildKit builds a tiny
// Dockerfile FROM debian:bookworm-slim (through the registry mirror when
// Docker Hub is unreachable), exports it as a docker tarball that Docker
// Engine loads and runs, and go-containerregistry pushes it to the registry
// and reads its digest back.
func Smoke(ctx context.Context, buildkit, registry string) (SmokeResult, error) {
	start := time.Now()
	res := SmokeResult{Image: "redis-variants/smoke:latest"}
	bc, err := solve.Connect(ctx, buildkit)
	if err != nil {
		return res, err
	}
	defer bc.Close()
	ec, err := engine.New(ctx)
	if err != nil {
		return res, err
	}
	defer ec.Close()

	if _, err := solve.Run(ctx, bc, solve.Request{
		Dockerfile: []byte(smokeDockerfile),
		Tarballs: []solve.Tarball{{
			Type:  bk.ExporterDocker,
			Attrs: map[string]string{"name": res.Image},
			Read:  ec.Load,
		}},
	}); err != nil {
		return res, fmt.Errorf("building the smoke image: %w", err)
	}

	srv, err := ec.StartServer(ctx, engine.ServerSpec{Image: res.Image, Network: "bridge", Cmd: []string{"cat", "/smoke"}})
	if err != nil {
		return res, fmt.Errorf("running the smoke image: %w", err)
	}
	defer ec.Remove(context.WithoutCancel(ctx), srv.ID)
	code, err := ec.Wait(ctx, srv.ID)
	if err != nil {
		return res, err
	}
	out, err := ec.Logs(ctx, srv.ID)
	if err != nil {
		return res, err
	}
	res.Output = strings.TrimSpace(out)
	if code != 0 || !strings.HasPrefix(res.Output, "redis-variants smoke ") {
		return res, fmt.Errorf("smoke container exited %d and printed %q", code, res.Output)
	}

	img, err := tarball.Image(func() (io.ReadCloser, error) { return ec.SaveImage(ctx, res.Image) }, nil)
	if err != nil {
		return res, fmt.Errorf("reading the smoke image from Docker Engine: %w", err)
	}
	ref, err := name.ParseReference(registry+"/redis-variants/smoke:latest", name.Insecure)
	if err != nil {
		return res, err
	}
	if err := remote.Write(ref, img, remote.WithContext(ctx)); err != nil {
		return res, fmt.Errorf("pushing %s: %w", ref, err)
	}
	var want v1.Hash
	if want, err = img.Digest(); err != nil {
		return res, err
	}
	desc, err := remote.Head(ref, remote.WithContext(ctx))
	if err != nil {
		return res, fmt.Errorf("reading back %s: %w", ref, err)
	}
	if desc.Digest != want {
		return res, fmt.Errorf("pushed %s, registry answers %s", want, desc.Digest)
	}
	res.Pushed = ref.Context().String() + "@" + desc.Digest.String()
	res.Elapsed = time.Since(start)
	return res, nil
}
