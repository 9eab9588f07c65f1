// Package engine drives the Docker Engine through its API
// (github.com/moby/moby/client): loading and inspecting images, and
// starting, probing and removing the Redis server containers the verify
// and bench stages run. Every container it starts carries ManagedLabel, so
// Sweep can remove whatever an interrupted run left behind.
package engine

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"
	"github.com/redis/go-redis/v9"
)

// ManagedLabel marks every container the tool starts (value "true").
const ManagedLabel = "io.redis-variants.managed"

// SocketMount is where ServerSpec.SocketDir is mounted inside the container.
const SocketMount = "/run/redis-sock"

// Client is a Docker Engine client.
type Client struct {
	api *client.Client
}

// New connects to the Docker Engine named by the environment (DOCKER_HOST,
// default unix:///var/run/docker.sock), negotiates the API version and
// checks that the daemon answers.
func New(ctx context.Context) (*Client, error) {
	api, err := client.New(client.FromEnv, client.WithAPIVersionNegotiation())
	if err != nil {
		return nil, fmt.Errorf("creating Docker Engine client: %w", err)
	}
	pctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if _, err := api.Ping(pctx, client.PingOptions{NegotiateAPIVersion: true}); err != nil {
		api.Close()
		return nil, fmt.Errorf("connecting to the Docker Engine at %s: %w (is dockerd running? start it, e.g. with scripts/setup.sh or `dockerd &`, or point DOCKER_HOST at it)", api.DaemonHost(), err)
	}
	return &Client{api: api}, nil
}

// Close releases the client's connections.
func (c *Client) Close() error { return c.api.Close() }

// API returns the underlying moby client, for calls this package does not wrap.
func (c *Client) API() *client.Client { return c.api }

// Ping asks the daemon whether it answers.
func (c *Client) Ping(ctx context.Context) error {
	if _, err := c.api.Ping(ctx, client.PingOptions{}); err != nil {
		return fmt.Errorf("Docker Engine at %s does not answer: %w", c.api.DaemonHost(), err)
	}
	return nil
}

// Version returns the daemon's version and the API version in use.
func (c *Client) Version(ctx context.Context) (server, api string, err error) {
	v, err := c.api.ServerVersion(ctx, client.ServerVersionOptions{})
	if err != nil {
		return "", "", fmt.Errorf("asking the Docker Engine for its version: %w", err)
	}
	return v.Version, c.api.ClientVersion(), nil
}

// streamMessage is one line of the daemon's JSON progress stream. Older
// daemons report errors in "error", newer ones in "errorDetail"; both are read.
type streamMessage struct {
	Status      string `json:"status,omitempty"`
	Stream      string `json:"stream,omitempty"`
	Error       string `json:"error,omitempty"`
	ErrorDetail *struct {
		Message string `json:"message"`
	} `json:"errorDetail,omitempty"`
}

// drainStream reads a JSON message stream to its end and returns the first
// error reported inside it, and the last status/stream lines for context.
func drainStream(r io.Reader) (last []string, err error) {
	dec := json.NewDecoder(r)
	var firstErr error
	for {
		var m streamMessage
		if derr := dec.Decode(&m); derr != nil {
			if derr == io.EOF {
				break
			}
			// Not JSON: keep the rest as text, it may be the message.
			rest, _ := io.ReadAll(io.MultiReader(dec.Buffered(), r))
			if firstErr == nil {
				firstErr = fmt.Errorf("reading daemon's response stream: %w (%s)", derr, strings.TrimSpace(string(rest)))
			}
			break
		}
		msg := ""
		if m.ErrorDetail != nil && m.ErrorDetail.Message != "" {
			msg = m.ErrorDetail.Message
		} else if m.Error != "" {
			msg = m.Error
		}
		if msg != "" && firstErr == nil {
			firstErr = errors.New(msg)
		}
		if line := strings.TrimSpace(m.Status + m.Stream); line != "" {
			last = append(last, line)
			if len(last) > 10 {
				last = last[1:]
			}
		}
	}
	return last, firstErr
}

// Load loads a docker-save (or OCI) tarball into the daemon. The daemon
// answers 200 even when the tarball is broken and reports the failure
// inside its JSON stream, so the stream is always read to its end.
func (c *Client) Load(ctx context.Context, tarball io.Reader) error {
	res, err := c.api.ImageLoad(ctx, tarball, client.ImageLoadWithQuiet(true))
	if err != nil {
		return fmt.Errorf("loading image: %w", err)
	}
	defer res.Close()
	if _, err := drainStream(res); err != nil {
		return fmt.Errorf("loading image: %w", err)
	}
	return nil
}

// PullImage pulls ref and reads the pull's progress stream to its end.
func (c *Client) PullImage(ctx context.Context, ref string) error {
	res, err := c.api.ImagePull(ctx, ref, client.ImagePullOptions{})
	if err != nil {
		return fmt.Errorf("pulling %s: %w", ref, err)
	}
	defer res.Close()
	if _, err := drainStream(res); err != nil {
		return fmt.Errorf("pulling %s: %w", ref, err)
	}
	return nil
}

// ImageLabels returns the labels of image ref.
func (c *Client) ImageLabels(ctx context.Context, ref string) (map[string]string, error) {
	ins, err := c.api.ImageInspect(ctx, ref)
	if err != nil {
		return nil, fmt.Errorf("inspecting image %s: %w", ref, err)
	}
	if ins.Config == nil {
		return map[string]string{}, nil
	}
	out := make(map[string]string, len(ins.Config.Labels))
	for k, v := range ins.Config.Labels {
		out[k] = v
	}
	return out, nil
}

// ContainerState says whether the container is running and whether the
// kernel's OOM killer stopped it.
func (c *Client) ContainerState(ctx context.Context, id string) (running, oomKilled bool, err error) {
	ins, err := c.api.ContainerInspect(ctx, id, client.ContainerInspectOptions{})
	if err != nil {
		return false, false, fmt.Errorf("inspecting container %s: %w", id, err)
	}
	st := ins.Container.State
	if st == nil {
		return false, false, nil
	}
	return st.Running, st.OOMKilled, nil
}

// ImageSize returns the size of image ref in bytes, as Docker Engine
// reports it (every layer, uncompressed).
func (c *Client) ImageSize(ctx context.Context, ref string) (int64, error) {
	ins, err := c.api.ImageInspect(ctx, ref)
	if err != nil {
		return 0, fmt.Errorf("inspecting image %s: %w", ref, err)
	}
	return ins.Size, nil
}

// ImageID returns the image ID ("sha256:...", the config digest) of ref.
func (c *Client) ImageID(ctx context.Context, ref string) (string, error) {
	ins, err := c.api.ImageInspect(ctx, ref)
	if err != nil {
		return "", fmt.Errorf("inspecting image %s: %w", ref, err)
	}
	return ins.ID, nil
}

// ImageExists reports whether the daemon has image ref.
func (c *Client) ImageExists(ctx context.Context, ref string) (bool, error) {
	_, err := c.api.ImageInspect(ctx, ref)
	if err == nil {
		return true, nil
	}
	if cerrdefs.IsNotFound(err) {
		return false, nil
	}
	return false, fmt.Errorf("inspecting image %s: %w", ref, err)
}

// SaveImage returns ref as a docker-save tarball. The caller closes it.
func (c *Client) SaveImage(ctx context.Context, ref string) (io.ReadCloser, error) {
	rc, err := c.api.ImageSave(ctx, []string{ref})
	if err != nil {
		return nil, fmt.Errorf("saving image %s: %w", ref, err)
	}
	return rc, nil
}

// ServerSpec describes a Redis server container.
type ServerSpec struct {
	Image     string
	Name      string            // container name ("" = generated)
	Network   string            // "host", "bridge" (port published on 127.0.0.1), "none" (unix socket only), "pod" (own namespace: PodPort on its loopback for sidecars, the unix socket for the host)
	Seccomp   string            // "default" (or "") or "unconfined"
	CPUs      string            // cpuset for the server, e.g. "0" ("" = any)
	CPULimit  float64           // CPU quota in CPUs (Docker's --cpus; 0 = none)
	Memory    int64             // memory limit in bytes (0 = none); swap is limited to the same, so the OOM killer acts at the limit
	Port      int               // TCP port redis listens on (host network) or the published host port (bridge); 0 = pick a free one
	SocketDir string            // host folder bind-mounted at /run/redis-sock; redis listens on /run/redis-sock/redis.sock (required for "none", optional otherwise)
	Args      []string          // extra redis-server arguments
	Cmd       []string          // full command override (e.g. {"sleep","infinity"}); when set Args is ignored
	User      string            // "" = image default
	Labels    map[string]string // added to ManagedLabel
}

// Server is a started server container.
type Server struct {
	ID, Name string
	Addr     string // "127.0.0.1:PORT" for TCP from the host ("" for networks none and pod)
	Socket   string // host path of the unix socket ("" when no SocketDir)
	PodAddr  string // for network pod: its address on its own loopback, for the sidecars that join it
}

// FreePort returns a TCP port on 127.0.0.1 that nothing listens on now.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// ServerArgs is the redis-server command line every server of the bench
// runs, in a container or not: no persistence, no protected mode, port
// (0 = no TCP), bound to loopback when bind is set, a unix socket at
// socket when it is not "", then extra.
func ServerArgs(port int, bind bool, socket string, extra []string) []string {
	cmd := []string{"redis-server", "--save", "", "--appendonly", "no", "--protected-mode", "no",
		"--port", strconv.Itoa(port)}
	if bind {
		cmd = append(cmd, "--bind", "127.0.0.1")
	}
	if socket != "" {
		cmd = append(cmd, "--unixsocket", socket, "--unixsocketperm", "777")
	}
	return append(cmd, extra...)
}

// serverCommand returns the container command for s and the port redis
// listens on inside the container (0 for none).
func serverCommand(s ServerSpec) (cmd []string, port int, err error) {
	switch s.Network {
	case "host":
		port = s.Port
		if port == 0 {
			if port, err = FreePort(); err != nil {
				return nil, 0, err
			}
		}
	case "bridge":
		port = 6379
	case "none":
		if s.SocketDir == "" {
			return nil, 0, errors.New(`network "none" needs a SocketDir for the unix socket`)
		}
	case "pod":
		if s.SocketDir == "" {
			return nil, 0, errors.New(`network "pod" needs a SocketDir: the host reaches the server by its unix socket, its sidecars on loopback`)
		}
		port = PodPort
	default:
		return nil, 0, fmt.Errorf("unknown network %q (want host, bridge, none or pod)", s.Network)
	}
	if len(s.Cmd) > 0 {
		return append([]string(nil), s.Cmd...), port, nil
	}
	sock := ""
	if s.SocketDir != "" {
		sock = SocketMount + "/redis.sock"
	}
	return ServerArgs(port, s.Network == "host" || s.Network == "pod", sock, s.Args), port, nil
}

// hostConfig builds the container's host configuration for s.
func hostConfig(s ServerSpec, port int) (*container.HostConfig, error) {
	hc := &container.HostConfig{}
	hc.CpusetCpus = s.CPUs
	hc.NanoCPUs = int64(s.CPULimit * 1e9)
	if s.Memory > 0 {
		hc.Memory, hc.MemorySwap = s.Memory, s.Memory
	}
	switch s.Seccomp {
	case "", "default":
	case "unconfined":
		hc.SecurityOpt = []string{"seccomp=unconfined"}
	default:
		return nil, fmt.Errorf("unknown seccomp setting %q (want default or unconfined)", s.Seccomp)
	}
	hc.NetworkMode = container.NetworkMode(s.Network)
	if s.Network == "pod" {
		hc.NetworkMode = "none" // its own namespace, loopback only: the sidecars join it
		hc.IpcMode = "shareable"
	}
	if s.Network == "bridge" {
		p, err := network.ParsePort(strconv.Itoa(port) + "/tcp")
		if err != nil {
			return nil, err
		}
		hostPort := ""
		if s.Port != 0 {
			hostPort = strconv.Itoa(s.Port)
		}
		hc.PortBindings = network.PortMap{p: {{HostIP: netip.MustParseAddr("127.0.0.1"), HostPort: hostPort}}}
	}
	if s.SocketDir != "" {
		abs, err := filepath.Abs(s.SocketDir)
		if err != nil {
			return nil, err
		}
		hc.Binds = []string{abs + ":" + SocketMount}
	}
	return hc, nil
}

// StartServer creates and starts a Redis server container. On failure it
// removes what it created.
func (c *Client) StartServer(ctx context.Context, s ServerSpec) (*Server, error) {
	what := "starting server from " + s.Image
	if s.Image == "" {
		return nil, errors.New("starting server: no image given")
	}
	cmd, port, err := serverCommand(s)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	hc, err := hostConfig(s, port)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if s.SocketDir != "" {
		// The server may run as an unprivileged user (redis, uid 999).
		if err := os.MkdirAll(s.SocketDir, 0o777); err != nil {
			return nil, fmt.Errorf("%s: socket folder: %w", what, err)
		}
		if err := os.Chmod(s.SocketDir, 0o777); err != nil {
			return nil, fmt.Errorf("%s: socket folder: %w", what, err)
		}
		os.Remove(filepath.Join(s.SocketDir, "redis.sock"))
	}
	labels := map[string]string{ManagedLabel: "true"}
	for k, v := range s.Labels {
		labels[k] = v
	}
	cfg := &container.Config{
		Image:  s.Image,
		Cmd:    cmd,
		User:   s.User,
		Labels: labels,
	}
	if s.Network == "bridge" {
		p, _ := network.ParsePort(strconv.Itoa(port) + "/tcp")
		cfg.ExposedPorts = network.PortSet{p: {}}
	}
	created, err := c.api.ContainerCreate(ctx, client.ContainerCreateOptions{Config: cfg, HostConfig: hc, Name: s.Name})
	if err != nil {
		return nil, fmt.Errorf("%s: creating container: %w", what, err)
	}
	srv := &Server{ID: created.ID, Name: s.Name}
	ok := false
	defer func() {
		if !ok {
			c.Remove(context.WithoutCancel(ctx), created.ID)
		}
	}()
	if _, err := c.api.ContainerStart(ctx, created.ID, client.ContainerStartOptions{}); err != nil {
		return nil, fmt.Errorf("%s: starting container: %w", what, err)
	}
	ins, err := c.api.ContainerInspect(ctx, created.ID, client.ContainerInspectOptions{})
	if err != nil {
		return nil, fmt.Errorf("%s: inspecting container: %w", what, err)
	}
	srv.Name = strings.TrimPrefix(ins.Container.Name, "/")
	switch s.Network {
	case "host":
		srv.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	case "bridge":
		// The published port can show up in the inspection a moment after
		// the start answers (seen once in CI): look again for up to 3 s,
		// and say so if the container stopped meanwhile.
		hp, err := publishedPort(ins.Container, port)
		if err != nil && len(s.Cmd) > 0 {
			// not a server (a one-shot command, e.g. the smoke test's
			// cat): it may have exited already, ports and all
			break
		}
		for i := 0; err != nil && i < 30; i++ {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(100 * time.Millisecond):
			}
			again, ierr := c.api.ContainerInspect(ctx, created.ID, client.ContainerInspectOptions{})
			if ierr != nil {
				return nil, fmt.Errorf("%s: inspecting container: %w", what, ierr)
			}
			if st := again.Container.State; st != nil && !st.Running {
				return nil, fmt.Errorf("%s: the container stopped (exit code %d) before its port was published", what, st.ExitCode)
			}
			hp, err = publishedPort(again.Container, port)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		srv.Addr = net.JoinHostPort("127.0.0.1", hp)
	}
	if s.Network == "pod" {
		srv.PodAddr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	}
	if s.SocketDir != "" {
		srv.Socket = filepath.Join(s.SocketDir, "redis.sock")
	}
	ok = true
	return srv, nil
}

func publishedPort(ins container.InspectResponse, port int) (string, error) {
	if ins.NetworkSettings != nil {
		p, _ := network.ParsePort(strconv.Itoa(port) + "/tcp")
		for _, b := range ins.NetworkSettings.Ports[p] {
			if b.HostPort != "" {
				return b.HostPort, nil
			}
		}
	}
	return "", fmt.Errorf("container port %d/tcp is not published", port)
}

// WaitReady waits until the server answers PING, the container stops, or
// timeout passes.
func (c *Client) WaitReady(ctx context.Context, s *Server, timeout time.Duration) error {
	opt := &redis.Options{
		Protocol:        2,
		DisableIdentity: true,
		DialTimeout:     time.Second,
		ReadTimeout:     time.Second,
		WriteTimeout:    time.Second,
		MaxRetries:      -1,
		PoolSize:        1,
	}
	if s.Socket != "" && s.Addr == "" {
		opt.Network, opt.Addr = "unix", s.Socket
	} else {
		opt.Network, opt.Addr = "tcp", s.Addr
	}
	if opt.Addr == "" {
		return fmt.Errorf("waiting for server %s: it has neither a TCP address nor a socket", s.Name)
	}
	rdb := redis.NewClient(opt)
	defer rdb.Close()
	deadline := time.Now().Add(timeout)
	var last error
	for {
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		err := rdb.Ping(pctx).Err()
		cancel()
		if err == nil {
			return nil
		}
		last = err
		if ctx.Err() != nil {
			return fmt.Errorf("waiting for server %s: %w", s.Name, ctx.Err())
		}
		ins, ierr := c.api.ContainerInspect(ctx, s.ID, client.ContainerInspectOptions{})
		if ierr == nil && ins.Container.State != nil && !ins.Container.State.Running {
			logs, _ := c.Logs(context.WithoutCancel(ctx), s.ID)
			return fmt.Errorf("waiting for server %s: container exited with code %d: %s", s.Name, ins.Container.State.ExitCode, tail(logs, 20))
		}
		if time.Now().After(deadline) {
			logs, _ := c.Logs(context.WithoutCancel(ctx), s.ID)
			return fmt.Errorf("waiting for server %s at %s: no answer to PING after %s: %v; logs: %s", s.Name, opt.Addr, timeout, last, tail(logs, 20))
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for server %s: %w", s.Name, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// Exec runs cmd in a running container and returns its output and exit code.
func (c *Client) Exec(ctx context.Context, containerID string, cmd []string, user string) (stdout, stderr string, exitCode int, err error) {
	what := fmt.Sprintf("running %q in container %.12s", strings.Join(cmd, " "), containerID)
	ex, err := c.api.ExecCreate(ctx, containerID, client.ExecCreateOptions{
		User: user, Cmd: cmd, AttachStdout: true, AttachStderr: true,
	})
	if err != nil {
		return "", "", -1, fmt.Errorf("%s: %w", what, err)
	}
	att, err := c.api.ExecAttach(ctx, ex.ID, client.ExecAttachOptions{})
	if err != nil {
		return "", "", -1, fmt.Errorf("%s: %w", what, err)
	}
	defer att.Close()
	var out, errb bytes.Buffer
	done := make(chan error, 1)
	go func() {
		_, err := stdcopy.StdCopy(&out, &errb, att.Reader)
		done <- err
	}()
	select {
	case err = <-done:
	case <-ctx.Done():
		att.Close()
		<-done
		return out.String(), errb.String(), -1, fmt.Errorf("%s: %w", what, ctx.Err())
	}
	if err != nil {
		return out.String(), errb.String(), -1, fmt.Errorf("%s: reading output: %w", what, err)
	}
	ins, err := c.api.ExecInspect(ctx, ex.ID, client.ExecInspectOptions{})
	if err != nil {
		return out.String(), errb.String(), -1, fmt.Errorf("%s: %w", what, err)
	}
	return out.String(), errb.String(), ins.ExitCode, nil
}

// Logs returns a container's stdout and stderr, interleaved by stream
// (stdout first).
func (c *Client) Logs(ctx context.Context, containerID string) (string, error) {
	rc, err := c.api.ContainerLogs(ctx, containerID, client.ContainerLogsOptions{ShowStdout: true, ShowStderr: true})
	if err != nil {
		return "", fmt.Errorf("reading logs of container %.12s: %w", containerID, err)
	}
	defer rc.Close()
	var out, errb bytes.Buffer
	if _, err := stdcopy.StdCopy(&out, &errb, rc); err != nil {
		return out.String() + errb.String(), fmt.Errorf("reading logs of container %.12s: %w", containerID, err)
	}
	return out.String() + errb.String(), nil
}

// Remove force-removes a container and its anonymous volumes. A container
// that is already gone is not an error.
func (c *Client) Remove(ctx context.Context, containerID string) error {
	_, err := c.api.ContainerRemove(ctx, containerID, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
	if err != nil && !cerrdefs.IsNotFound(err) {
		return fmt.Errorf("removing container %.12s: %w", containerID, err)
	}
	return nil
}

// Managed lists the IDs of every container carrying ManagedLabel and, when
// given, every label in match (key=value).
func (c *Client) Managed(ctx context.Context, match map[string]string) ([]string, error) {
	f := make(client.Filters).Add("label", ManagedLabel+"=true")
	for k, v := range match {
		f.Add("label", k+"="+v)
	}
	res, err := c.api.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f})
	if err != nil {
		return nil, fmt.Errorf("listing managed containers: %w", err)
	}
	ids := make([]string, 0, len(res.Items))
	for _, it := range res.Items {
		ids = append(ids, it.ID)
	}
	return ids, nil
}

// Sweep removes every container carrying ManagedLabel and returns how many
// it removed.
func (c *Client) Sweep(ctx context.Context) (int, error) { return c.SweepMatching(ctx, nil) }

// SweepMatching removes the managed containers that also carry every label
// in match, so one run (or test) can clean up after itself without touching
// another's containers.
func (c *Client) SweepMatching(ctx context.Context, match map[string]string) (int, error) {
	ids, err := c.Managed(ctx, match)
	if err != nil {
		return 0, err
	}
	n := 0
	var errs []error
	for _, id := range ids {
		if err := c.Remove(ctx, id); err != nil {
			errs = append(errs, err)
			continue
		}
		n++
	}
	return n, errors.Join(errs...)
}

// stats is the part of the stats API answer this package reads.
type stats struct {
	CPUStats struct {
		CPUUsage struct {
			TotalUsage uint64 `json:"total_usage"`
		} `json:"cpu_usage"`
	} `json:"cpu_stats"`
	MemoryStats struct {
		Usage uint64            `json:"usage"`
		Stats map[string]uint64 `json:"stats"`
	} `json:"memory_stats"`
}

func (c *Client) stats(ctx context.Context, containerID string) (stats, error) {
	res, err := c.api.ContainerStats(ctx, containerID, client.ContainerStatsOptions{Stream: false})
	if err != nil {
		return stats{}, err
	}
	defer res.Body.Close()
	var st stats
	if err := json.NewDecoder(res.Body).Decode(&st); err != nil {
		return stats{}, fmt.Errorf("decoding stats: %w", err)
	}
	return st, nil
}

// CPUUsageNanos returns the container's total CPU time (user + system) in
// nanoseconds, from its cgroup through the stats API.
func (c *Client) CPUUsageNanos(ctx context.Context, containerID string) (uint64, error) {
	st, err := c.stats(ctx, containerID)
	if err != nil {
		return 0, fmt.Errorf("reading CPU usage of container %.12s: %w", containerID, err)
	}
	return st.CPUStats.CPUUsage.TotalUsage, nil
}

// MemoryUsage returns the container's memory use less its inactive page
// cache, the figure `docker stats` shows.
func (c *Client) MemoryUsage(ctx context.Context, containerID string) (uint64, error) {
	st, err := c.stats(ctx, containerID)
	if err != nil {
		return 0, fmt.Errorf("reading memory usage of container %.12s: %w", containerID, err)
	}
	u := st.MemoryStats.Usage
	cache, ok := st.MemoryStats.Stats["total_inactive_file"] // cgroup v1
	if !ok {
		cache = st.MemoryStats.Stats["inactive_file"] // cgroup v2
	}
	if cache < u {
		u -= cache
	}
	return u, nil
}

// Commit commits a container's filesystem as image ref and returns the new
// image's ID. changes are Dockerfile instructions (CMD, ENV, ...).
func (c *Client) Commit(ctx context.Context, containerID, ref string, changes []string) (string, error) {
	res, err := c.api.ContainerCommit(ctx, containerID, client.ContainerCommitOptions{Reference: ref, Changes: changes})
	if err != nil {
		return "", fmt.Errorf("committing container %.12s as %s: %w", containerID, ref, err)
	}
	return res.ID, nil
}

// Wait waits for a container to stop and returns its exit code.
func (c *Client) Wait(ctx context.Context, containerID string) (int, error) {
	w := c.api.ContainerWait(ctx, containerID, client.ContainerWaitOptions{Condition: container.WaitConditionNotRunning})
	select {
	case r := <-w.Result:
		if r.Error != nil && r.Error.Message != "" {
			return int(r.StatusCode), fmt.Errorf("waiting for container %.12s: %s", containerID, r.Error.Message)
		}
		return int(r.StatusCode), nil
	case err := <-w.Error:
		return -1, fmt.Errorf("waiting for container %.12s: %w", containerID, err)
	}
}

// ImageRuntime is what an image's configuration says its processes run
// with: the environment (PATH, LD_PRELOAD, ...) and the working folder.
type ImageRuntime struct {
	Env        []string
	WorkingDir string
}

// ImageRuntime reads image's environment and working folder.
func (c *Client) ImageRuntime(ctx context.Context, image string) (ImageRuntime, error) {
	ins, err := c.api.ImageInspect(ctx, image)
	if err != nil {
		return ImageRuntime{}, fmt.Errorf("inspecting image %s: %w", image, err)
	}
	var rt ImageRuntime
	if ins.Config != nil {
		rt.Env, rt.WorkingDir = ins.Config.Env, ins.Config.WorkingDir
	}
	return rt, nil
}

// ExportImage returns image's flattened filesystem as a tar stream: a
// container is created (never started), exported and removed when the
// stream is closed.
func (c *Client) ExportImage(ctx context.Context, image string) (io.ReadCloser, error) {
	what := "exporting the filesystem of image " + image
	created, err := c.api.ContainerCreate(ctx, client.ContainerCreateOptions{
		Config: &container.Config{
			Image:      image,
			Entrypoint: []string{"/nonexistent"}, // never started
			Labels:     map[string]string{ManagedLabel: "true"},
		},
	})
	if err != nil {
		return nil, fmt.Errorf("%s: creating container: %w", what, err)
	}
	res, err := c.api.ContainerExport(ctx, created.ID, client.ContainerExportOptions{})
	if err != nil {
		c.Remove(context.WithoutCancel(ctx), created.ID)
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return &exported{ReadCloser: res, remove: func() { c.Remove(context.WithoutCancel(ctx), created.ID) }}, nil
}

type exported struct {
	io.ReadCloser
	remove func()
}

func (e *exported) Close() error {
	err := e.ReadCloser.Close()
	e.remove()
	return err
}

// CopyFileFromImage reads one file out of an image: it creates (without
// starting) a container, copies the file out and removes the container.
// Symbolic links are followed inside the image.
func (c *Client) CopyFileFromImage(ctx context.Context, image, p string) ([]byte, error) {
	what := fmt.Sprintf("reading %s from image %s", p, image)
	created, err := c.api.ContainerCreate(ctx, client.ContainerCreateOptions{
		Config: &container.Config{
			Image:      image,
			Entrypoint: []string{"/nonexistent"}, // never started
			Labels:     map[string]string{ManagedLabel: "true"},
		},
	})
	if err != nil {
		return nil, fmt.Errorf("%s: creating container: %w", what, err)
	}
	defer c.Remove(context.WithoutCancel(ctx), created.ID)
	cur := p
	for range 16 {
		res, err := c.api.CopyFromContainer(ctx, created.ID, client.CopyFromContainerOptions{SourcePath: cur})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		data, link, err := firstFile(res.Content)
		res.Content.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		if link == "" {
			return data, nil
		}
		if !path.IsAbs(link) {
			link = path.Join(path.Dir(cur), link)
		}
		cur = link
	}
	return nil, fmt.Errorf("%s: too many symbolic links", what)
}

// firstFile returns the contents of the first entry of a tar stream, or the
// target of that entry when it is a symbolic link.
func firstFile(r io.Reader) (data []byte, link string, err error) {
	tr := tar.NewReader(bufio.NewReader(r))
	h, err := tr.Next()
	if err != nil {
		return nil, "", fmt.Errorf("reading archive: %w", err)
	}
	switch h.Typeflag {
	case tar.TypeSymlink:
		return nil, h.Linkname, nil
	case tar.TypeReg:
		b, err := io.ReadAll(tr)
		return b, "", err
	default:
		return nil, "", fmt.Errorf("%s is not a regular file", h.Name)
	}
}
