package bench

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/redis-variants/redis-variants/engine"
	"github.com/redis-variants/redis-variants/loadgen"
)

// sidecars is what a pod runtime needs of the Docker Engine: a container
// that joins a server container's network and IPC namespaces
// (engine.Client).
type sidecars interface {
	StartSidecar(ctx context.Context, s engine.SidecarSpec) (*engine.Sidecar, error)
}

// podProgram is the static generator a pod runtime's sidecars run:
// Options.Sidecar, else redis-loadgen beside the generator's binary or
// this executable (make build and scripts/setup.sh put it there).
func (e *pairEnv) podProgram() (string, error) {
	if e.o.Sidecar != "" {
		return e.o.Sidecar, nil
	}
	bin := ""
	if g, ok := e.gen.(ExecGenerator); ok && g.Binary != "" {
		bin = g.Binary
	} else if exe, err := os.Executable(); err == nil {
		bin = exe
	}
	p := filepath.Join(filepath.Dir(bin), "redis-loadgen")
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("a pod runtime runs the static redis-loadgen in a sidecar of each server, and there is none beside %s (make build builds it): %w", bin, err)
	}
	return p, nil
}

// openSidecar starts side s's generator in a sidecar of its server: a
// container of the same image joined to the server's network and IPC
// namespaces, pinned to the runtime's client CPUs under its seccomp
// setting, reaching the server on its own loopback; it is driven over the
// sidecar's standard streams like a generator process (loadgen.Serve).
func (e *pairEnv) openSidecar(ctx context.Context, cfg loadgen.Config, s *side) (Session, error) {
	sc := e.pods
	if sc == nil {
		return nil, fmt.Errorf("runtime %s (pod) needs sidecar containers, and the bench's Engine cannot start them", s.rt.Name)
	}
	prog, err := e.podProgram()
	if err != nil {
		return nil, err
	}
	if s.srv.PodAddr == "" {
		return nil, fmt.Errorf("runtime %s (pod): server %s has no address in its namespace", s.rt.Name, s.srv.Name)
	}
	cfg.Addr, cfg.Socket = s.srv.PodAddr, ""
	args, err := Args(cfg)
	if err != nil {
		return nil, err
	}
	labels := map[string]string{"io.redis-variants.bench.role": "sidecar", "io.redis-variants.bench.runtime": s.rt.Name}
	for k, v := range e.o.Labels {
		labels[k] = v
	}
	car, err := sc.StartSidecar(ctx, engine.SidecarSpec{Of: s.srv.ID, Image: s.image.Ref, Program: prog,
		Args: append(args[1:], "--serve"), CPUs: s.rt.ClientCPUs, Seccomp: s.rt.Seccomp, Labels: labels})
	if err != nil {
		return nil, err
	}
	out := bufio.NewScanner(car.Stdout)
	out.Buffer(make([]byte, 1<<20), 64<<20)
	ss := &execSession{in: car.Stdin, out: out, stderr: car.Stderr,
		wait: func() error { car.Wait(); return car.Close() },
		kill: func() { car.Close() }}
	rep, err := ss.read(ctx)
	if err == nil && !rep.Ready {
		err = fmt.Errorf("generator sidecar %s: %s", strings.Join(args, " "), rep.Error)
	}
	if err != nil {
		ss.Close()
		return nil, err
	}
	return ss, nil
}
