package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/redis-variants/redis-variants/engine"
	"github.com/redis-variants/redis-variants/native"
	"github.com/redis-variants/redis-variants/variants"
)

// nativeEngine starts the servers of a native runtime as host processes
// (package native) and passes every other call to Engine.
type nativeEngine struct {
	Engine
	n *native.Runner
}

// withNative wraps e and cpu (a server's CPU time by its ID) when a
// runtime of the session runs natively: their servers' roots go under
// dir, and close removes every process and root.
func withNative(e Engine, cpu func(string) (uint64, error), dir string, needed bool) (Engine, func(string) (uint64, error), func(), error) {
	if !needed {
		return e, cpu, func() {}, nil
	}
	imgs, ok := e.(native.Images)
	if !ok {
		return nil, nil, nil, fmt.Errorf("a native runtime runs each image's own redis-server from an export of the image, and %T cannot export images", e)
	}
	// roots a killed bench left mounted (they are its sockets' folder's)
	if k, err := native.Sweep(filepath.Join(os.TempDir(), "redis-variants-bench-*", "root-*")); err != nil {
		return nil, nil, nil, fmt.Errorf("removing native roots left behind: %w", err)
	} else if k > 0 {
		fmt.Fprintf(os.Stderr, "removed %d native server root(s) left behind\n", k)
	}
	n := &native.Runner{Images: imgs, Dir: dir}
	ncpu := func(id string) (uint64, error) {
		if native.Is(id) {
			return n.CPUUsageNanos(context.Background(), id)
		}
		return cpu(id)
	}
	return &nativeEngine{Engine: e, n: n}, ncpu, func() { n.Close() }, nil
}

func (e *nativeEngine) StartServer(ctx context.Context, s engine.ServerSpec) (*engine.Server, error) {
	if s.Network == variants.NetworkNative {
		return e.n.Start(ctx, s)
	}
	return e.Engine.StartServer(ctx, s)
}

func (e *nativeEngine) WaitReady(ctx context.Context, s *engine.Server, timeout time.Duration) error {
	if native.Is(s.ID) {
		return e.n.WaitReady(ctx, s, timeout)
	}
	return e.Engine.WaitReady(ctx, s, timeout)
}

func (e *nativeEngine) Remove(ctx context.Context, id string) error {
	if native.Is(id) {
		return e.n.Remove(ctx, id)
	}
	return e.Engine.Remove(ctx, id)
}

func (e *nativeEngine) CPUUsageNanos(ctx context.Context, id string) (uint64, error) {
	if native.Is(id) {
		return e.n.CPUUsageNanos(ctx, id)
	}
	return e.Engine.CPUUsageNanos(ctx, id)
}

// ContainerState passes on to the Engine (StateEngine); a native server
// is running while its process is.
func (e *nativeEngine) ContainerState(ctx context.Context, id string) (running, oomKilled bool, err error) {
	if native.Is(id) {
		return e.n.Running(id), false, nil
	}
	se, ok := e.Engine.(StateEngine)
	if !ok {
		return false, false, errNoState
	}
	return se.ContainerState(ctx, id)
}

// Ping passes on to the Engine (pinger).
func (e *nativeEngine) Ping(ctx context.Context) error {
	if p, ok := e.Engine.(pinger); ok {
		return p.Ping(ctx)
	}
	return nil
}

// runsNative reports whether a runtime of the session runs natively.
func (s *session) runsNative() bool {
	for _, rt := range s.o.Runtimes {
		if rt.Network == variants.NetworkNative {
			return true
		}
	}
	return false
}
