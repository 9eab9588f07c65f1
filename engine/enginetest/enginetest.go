// Package enginetest gives integration tests a real Docker Engine and a
// real redis-server image: Debian bookworm-slim from the local registry
// with Debian's redis-server package installed, built once by committing a
// container and cached under TestImage.
package enginetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/redis-variants/redis-variants/engine"
)

// TestImage is the cached test image: Debian's redis-server on bookworm-slim.
const TestImage = "redis-variants-test/redis-server:bookworm"

// BaseImage is the base the test image is built from, served by the local
// registry that scripts/setup.sh starts (dockerd treats it as insecure).
var BaseImage = envOr("RV_TEST_BASE_IMAGE", "127.0.0.1:5000/library/debian:bookworm-slim")

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// installScript installs redis-server without starting it.
const installScript = `set -e
printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends redis-server redis-tools procps
rm -rf /var/lib/apt/lists/* /usr/sbin/policy-rc.d
mkdir -p /data && chmod 777 /data
redis-server --version
`

// Client connects to the Docker Engine or fails t saying what is missing.
func Client(t testing.TB) *engine.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := engine.New(ctx)
	if err != nil {
		t.Fatalf("this integration test needs a Docker Engine (run scripts/setup.sh; or go test -short to skip): %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// Image returns TestImage, building it first when the daemon lacks it, or
// fails t.
func Image(t testing.TB) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	ref, err := EnsureTestImage(ctx)
	if err != nil {
		t.Fatalf("building the redis-server test image: %v", err)
	}
	return ref
}

// Session returns a label unique to this test, to put on containers and
// pass to engine.Client.SweepMatching, so tests running at the same time
// do not remove each other's containers.
func Session(t testing.TB) map[string]string {
	b := make([]byte, 6)
	rand.Read(b)
	return map[string]string{"io.redis-variants.test-session": hex.EncodeToString(b)}
}

// EnsureTestImage returns TestImage, building it when the daemon does not
// have it: pull BaseImage, install Debian's redis-server in a container on
// the host network, commit it. A file lock keeps concurrent test binaries
// from building it twice.
func EnsureTestImage(ctx context.Context) (string, error) {
	c, err := engine.New(ctx)
	if err != nil {
		return "", err
	}
	defer c.Close()
	if ok, err := c.ImageExists(ctx, TestImage); err != nil || ok {
		return TestImage, err
	}
	unlock, err := lock(ctx, filepath.Join(os.TempDir(), "redis-variants-test-image.lock"))
	if err != nil {
		return "", err
	}
	defer unlock()
	if ok, err := c.ImageExists(ctx, TestImage); err != nil || ok {
		return TestImage, err
	}
	if ok, _ := c.ImageExists(ctx, BaseImage); !ok {
		if err := c.PullImage(ctx, BaseImage); err != nil {
			return "", fmt.Errorf("building %s: %w (is the local registry on 127.0.0.1:5000 up, and dockerd started with --insecure-registry 127.0.0.1:5000?)", TestImage, err)
		}
	}
	api := c.API()
	created, err := api.ContainerCreate(ctx, client.ContainerCreateOptions{
		Config: &container.Config{
			Image:  BaseImage,
			Cmd:    []string{"sh", "-c", installScript},
			Labels: map[string]string{"io.redis-variants.test-image-build": "true"},
		},
		HostConfig: &container.HostConfig{NetworkMode: "host"},
	})
	if err != nil {
		return "", fmt.Errorf("building %s: creating container: %w", TestImage, err)
	}
	defer c.Remove(context.WithoutCancel(ctx), created.ID)
	if _, err := api.ContainerStart(ctx, created.ID, client.ContainerStartOptions{}); err != nil {
		return "", fmt.Errorf("building %s: starting container: %w", TestImage, err)
	}
	code, err := c.Wait(ctx, created.ID)
	if err != nil {
		return "", fmt.Errorf("building %s: %w", TestImage, err)
	}
	if code != 0 {
		logs, _ := c.Logs(ctx, created.ID)
		return "", fmt.Errorf("building %s: installing redis-server exited with %d:\n%s", TestImage, code, logs)
	}
	if _, err := c.Commit(ctx, created.ID, TestImage, []string{
		`CMD ["redis-server", "--protected-mode", "no"]`,
		`WORKDIR /data`,
		`EXPOSE 6379`,
	}); err != nil {
		return "", fmt.Errorf("building %s: %w", TestImage, err)
	}
	return TestImage, nil
}

func lock(ctx context.Context, name string) (func(), error) {
	f, err := os.OpenFile(name, os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		return nil, fmt.Errorf("locking %s: %w", name, err)
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("locking %s: %w", name, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// RepoRoot walks up from the test's folder to go.mod: integration tests
// find the source cache (.state/cache/sources) under it.
func RepoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test folder")
		}
		dir = parent
	}
}

// Registry is the local registry set-up starts (RV_REGISTRY, default
// 127.0.0.1:5000), Docker Engine's and BuildKit's mirror for Docker Hub
// names on machines that reach no registry.
func Registry() string { return envOr("RV_REGISTRY", "127.0.0.1:5000") }

// ToolBinary is the tool's own binary, which scripts/setup.sh builds: the
// generator of the integration tests, pinned to the client CPU as in a
// real run (in a test binary under -race the in-process generator cannot
// saturate the two servers of a pair: 233% of the client CPU, seen here).
func ToolBinary(t testing.TB) string {
	t.Helper()
	rv := filepath.Join(RepoRoot(t), ".state", "bin", "redis-variants")
	if _, err := os.Stat(rv); err != nil {
		t.Fatalf("this test runs the generator from %s, which scripts/setup.sh builds: %v", rv, err)
	}
	return rv
}
