package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sync"

	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"
)

// PodPort is the port a pod server listens on inside its network
// namespace (Network "pod"), as a Kubernetes pod's redis container does.
const PodPort = 6379

// SidecarSpec describes a sidecar: a container that joins another
// container's network and IPC namespaces (Kubernetes's pod shape) and
// runs one program from the host, talked to over its standard input and
// output.
type SidecarSpec struct {
	Of      string            // the container whose namespaces it joins
	Image   string            // the image it runs in (its filesystem holds nothing the program needs)
	Program string            // a static binary on the host, mounted read-only and run
	Args    []string          // the program's arguments
	CPUs    string            // its cpuset ("" = any)
	Seccomp string            // "default" (or "") or "unconfined"
	Labels  map[string]string // added to ManagedLabel
}

// sidecarMount is where SidecarSpec.Program is mounted.
const sidecarMount = "/run/redis-variants/program"

// Sidecar is a started sidecar: write to Stdin, read Stdout; Stderr
// holds what it wrote there so far. Close ends it and removes it.
type Sidecar struct {
	ID     string
	Stdin  io.WriteCloser
	Stdout io.Reader

	c      *Client
	hij    client.HijackedResponse
	stderr *LockedBuffer
	copied chan struct{}
	once   sync.Once
}

// StartSidecar creates the sidecar, attaches to its standard streams and
// starts it. On failure it removes what it created.
func (c *Client) StartSidecar(ctx context.Context, s SidecarSpec) (*Sidecar, error) {
	what := "starting a sidecar of container " + shortID(s.Of)
	if s.Of == "" || s.Image == "" || s.Program == "" {
		return nil, fmt.Errorf("%s: the container to join, an image and a program are all needed", what)
	}
	prog, err := filepath.Abs(s.Program)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	hc := &container.HostConfig{
		NetworkMode: container.NetworkMode("container:" + s.Of),
		IpcMode:     container.IpcMode("container:" + s.Of),
		Binds:       []string{prog + ":" + sidecarMount + ":ro"},
	}
	hc.CpusetCpus = s.CPUs
	switch s.Seccomp {
	case "", "default":
	case "unconfined":
		hc.SecurityOpt = []string{"seccomp=unconfined"}
	default:
		return nil, fmt.Errorf("%s: unknown seccomp setting %q (want default or unconfined)", what, s.Seccomp)
	}
	labels := map[string]string{ManagedLabel: "true"}
	for k, v := range s.Labels {
		labels[k] = v
	}
	created, err := c.api.ContainerCreate(ctx, client.ContainerCreateOptions{
		Config: &container.Config{
			Image:        s.Image,
			Entrypoint:   []string{sidecarMount},
			Cmd:          s.Args,
			User:         "0",
			Labels:       labels,
			OpenStdin:    true,
			StdinOnce:    true,
			AttachStdin:  true,
			AttachStdout: true,
			AttachStderr: true,
		},
		HostConfig: hc,
	})
	if err != nil {
		return nil, fmt.Errorf("%s: creating container: %w", what, err)
	}
	ok := false
	defer func() {
		if !ok {
			c.Remove(context.WithoutCancel(ctx), created.ID)
		}
	}()
	att, err := c.api.ContainerAttach(ctx, created.ID, client.ContainerAttachOptions{Stream: true, Stdin: true, Stdout: true, Stderr: true})
	if err != nil {
		return nil, fmt.Errorf("%s: attaching: %w", what, err)
	}
	sc := &Sidecar{ID: created.ID, c: c, hij: att.HijackedResponse, stderr: &LockedBuffer{}, copied: make(chan struct{})}
	pr, pw := io.Pipe()
	sc.Stdout, sc.Stdin = pr, &closeWriter{hij: att.HijackedResponse}
	go func() {
		_, err := stdcopy.StdCopy(pw, sc.stderr, att.Reader)
		pw.CloseWithError(errors.Join(err, io.EOF))
		close(sc.copied)
	}()
	if _, err := c.api.ContainerStart(ctx, created.ID, client.ContainerStartOptions{}); err != nil {
		att.Close()
		return nil, fmt.Errorf("%s: starting container: %w", what, err)
	}
	ok = true
	return sc, nil
}

// Stderr is what the sidecar wrote to its standard error so far.
func (s *Sidecar) Stderr() string { return s.stderr.String() }

// Wait waits for the sidecar's output to end (the program exited or the
// sidecar was removed).
func (s *Sidecar) Wait() { <-s.copied }

// Close removes the sidecar (killing its program) and ends its streams.
func (s *Sidecar) Close() error {
	var err error
	s.once.Do(func() {
		err = s.c.Remove(context.Background(), s.ID)
		s.hij.Close()
		<-s.copied
	})
	return err
}

// closeWriter is a hijacked connection's write side: Close ends the
// sidecar's standard input, not the connection (its output still comes).
type closeWriter struct{ hij client.HijackedResponse }

func (w *closeWriter) Write(b []byte) (int, error) { return w.hij.Conn.Write(b) }
func (w *closeWriter) Close() error                { return w.hij.CloseWrite() }

// LockedBuffer is a buffer one goroutine writes (a process's or a
// container's output) while another may read it.
type LockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *LockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *LockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func shortID(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}
