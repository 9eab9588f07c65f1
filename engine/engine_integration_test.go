package engine_test

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/moby/moby/client"
	"github.com/redis/go-redis/v9"

	"github.com/redis-variants/redis-variants/engine"
	"github.com/redis-variants/redis-variants/engine/enginetest"
)

func integration(t *testing.T) (*engine.Client, string, map[string]string) {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test: needs a Docker Engine")
	}
	c := enginetest.Client(t)
	img := enginetest.Image(t)
	session := enginetest.Session(t)
	t.Cleanup(func() {
		n, err := c.SweepMatching(context.Background(), session)
		if err != nil || n != 0 {
			t.Errorf("after the test, %d managed containers were left behind (%v)", n, err)
		}
	})
	return c, img, session
}

func TestLoadBrokenTarballFails(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: needs a Docker Engine")
	}
	c := enginetest.Client(t)
	ctx := context.Background()
	// A tarball with a manifest naming a config and a layer it lacks.
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	manifest := []byte(`[{"Config":"missing.json","RepoTags":["rv-broken:test"],"Layers":["nolayer/layer.tar"]}]`)
	tw.WriteHeader(&tar.Header{Name: "manifest.json", Typeflag: tar.TypeReg, Size: int64(len(manifest)), Mode: 0o644})
	tw.Write(manifest)
	tw.Close()
	err := c.Load(ctx, &buf)
	if err == nil {
		t.Fatal("loading a broken tarball succeeded")
	}
	if !strings.Contains(err.Error(), "missing.json") && !strings.Contains(strings.ToLower(err.Error()), "no such file") {
		t.Fatalf("error does not carry the daemon's message: %v", err)
	}
	t.Logf("daemon said: %v", err)
}

func ping(t *testing.T, network, addr string) {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Network: network, Addr: addr, Protocol: 2, DisableIdentity: true})
	defer rdb.Close()
	if got, err := rdb.Ping(context.Background()).Result(); err != nil || got != "PONG" {
		t.Fatalf("PING %s %s: %q %v", network, addr, got, err)
	}
}

func TestStartServerModes(t *testing.T) {
	c, img, session := integration(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		spec    engine.ServerSpec
		network string
	}{
		{"host", engine.ServerSpec{Network: "host", Seccomp: "unconfined", CPUs: "0"}, "tcp"},
		{"bridge", engine.ServerSpec{Network: "bridge"}, "tcp"},
		{"none-unix", engine.ServerSpec{Network: "none", SocketDir: t.TempDir() + "/sock"}, "unix"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := tc.spec
			spec.Image, spec.Labels = img, session
			srv, err := c.StartServer(ctx, spec)
			if err != nil {
				t.Fatal(err)
			}
			removed := false
			defer func() {
				if !removed {
					c.Remove(ctx, srv.ID)
				}
			}()
			if err := c.WaitReady(ctx, srv, 20*time.Second); err != nil {
				t.Fatal(err)
			}
			addr := srv.Addr
			if tc.network == "unix" {
				if srv.Addr != "" {
					t.Errorf("network none has a TCP address %q", srv.Addr)
				}
				addr = srv.Socket
			}
			ping(t, tc.network, addr)
			if err := c.Remove(ctx, srv.ID); err != nil {
				t.Fatal(err)
			}
			removed = true
			ids, err := c.Managed(ctx, session)
			if err != nil {
				t.Fatal(err)
			}
			for _, id := range ids {
				if id == srv.ID {
					t.Fatalf("container %s still there after Remove", srv.ID)
				}
			}
		})
	}
}

func TestStartServerFailureCleansUp(t *testing.T) {
	c, img, session := integration(t)
	ctx := context.Background()
	_, err := c.StartServer(ctx, engine.ServerSpec{Image: img, Network: "bridge", CPUs: "999", Labels: session})
	if err == nil {
		t.Fatal("starting on cpuset 999 succeeded")
	}
	ids, _ := c.Managed(ctx, session)
	if len(ids) != 0 {
		t.Fatalf("a failed start left %d containers", len(ids))
	}
	// A server that exits at once is reported with its logs.
	srv, err := c.StartServer(ctx, engine.ServerSpec{Image: img, Network: "bridge", Args: []string{"--no-such-option", "1"}, Labels: session})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Remove(ctx, srv.ID)
	err = c.WaitReady(ctx, srv, 20*time.Second)
	if err == nil || !strings.Contains(err.Error(), "no-such-option") {
		t.Fatalf("WaitReady on a crashing server: %v, want the server's complaint", err)
	}
}

func TestSweepExecCPU(t *testing.T) {
	c, img, session := integration(t)
	ctx := context.Background()
	srv, err := c.StartServer(ctx, engine.ServerSpec{Image: img, Network: "host", Labels: session})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.WaitReady(ctx, srv, 20*time.Second); err != nil {
		t.Fatal(err)
	}
	out, errOut, code, err := c.Exec(ctx, srv.ID, []string{"sh", "-c", "echo out; echo err >&2; exit 3"}, "")
	if err != nil || out != "out\n" || errOut != "err\n" || code != 3 {
		t.Fatalf("Exec: out=%q err=%q code=%d %v", out, errOut, code, err)
	}
	out, _, code, err = c.Exec(ctx, srv.ID, []string{"redis-cli", "-u", "redis://" + srv.Addr, "PING"}, "")
	if err != nil || strings.TrimSpace(out) != "PONG" || code != 0 {
		t.Fatalf("Exec redis-cli: %q %d %v", out, code, err)
	}

	before, err := c.CPUUsageNanos(ctx, srv.ID)
	if err != nil {
		t.Fatal(err)
	}
	mem, err := c.MemoryUsage(ctx, srv.ID)
	if err != nil || mem == 0 {
		t.Fatalf("MemoryUsage = %d, %v", mem, err)
	}
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, Protocol: 2, DisableIdentity: true})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for i := 0; i < 3000; i++ {
				rdb.Set(ctx, "k", i, 0)
			}
		})
	}
	wg.Wait()
	rdb.Close()
	after, err := c.CPUUsageNanos(ctx, srv.ID)
	if err != nil {
		t.Fatal(err)
	}
	if after <= before {
		t.Fatalf("CPU usage did not grow under load: %d -> %d", before, after)
	}
	t.Logf("12000 SETs took %.0f ns of server CPU each", float64(after-before)/12000)

	// Another one, then sweep both.
	if _, err := c.StartServer(ctx, engine.ServerSpec{Image: img, Network: "bridge", Labels: session}); err != nil {
		t.Fatal(err)
	}
	n, err := c.SweepMatching(ctx, session)
	if err != nil || n != 2 {
		t.Fatalf("SweepMatching removed %d (%v), want 2", n, err)
	}
	if ids, _ := c.Managed(ctx, session); len(ids) != 0 {
		t.Fatalf("%d containers left after Sweep", len(ids))
	}
}

func TestImageFacts(t *testing.T) {
	c, img, _ := integration(t)
	ctx := context.Background()
	b, err := c.CopyFileFromImage(ctx, img, "/etc/os-release")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "bookworm") {
		t.Fatalf("/etc/os-release of %s does not name bookworm:\n%s", img, b)
	}
	if _, err := c.CopyFileFromImage(ctx, img, "/no/such/file"); err == nil {
		t.Fatal("copying a missing file succeeded")
	}
	id, err := c.ImageID(ctx, img)
	if err != nil || !strings.HasPrefix(id, "sha256:") {
		t.Fatalf("ImageID = %q, %v", id, err)
	}
	if _, err := c.ImageLabels(ctx, img); err != nil {
		t.Fatal(err)
	}
	server, api, err := c.Version(ctx)
	if err != nil || server == "" || api == "" {
		t.Fatalf("Version = %q %q %v", server, api, err)
	}
	t.Logf("Docker %s, API %s", server, api)
	rc, err := c.SaveImage(ctx, img)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	found := false
	for {
		h, err := tr.Next()
		if err != nil {
			break
		}
		if h.Name == "manifest.json" {
			m, _ := io.ReadAll(tr)
			found = strings.Contains(string(m), enginetest.TestImage)
		}
	}
	if !found {
		t.Fatalf("saved tarball has no manifest.json naming %s", enginetest.TestImage)
	}
}

// TestPodSidecar: a pod server (its own network namespace, loopback only)
// is reached from the host by its unix socket and from a sidecar that
// joins its network and IPC namespaces on 127.0.0.1:6379; the sidecar runs
// the static generator from the host, talked to over its standard
// streams, and Close removes it.
func TestPodSidecar(t *testing.T) {
	c, img, session := integration(t)
	ctx := context.Background()
	srv, err := c.StartServer(ctx, engine.ServerSpec{Image: img, Network: "pod", SocketDir: t.TempDir(), CPUs: "0", Labels: session})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Remove(ctx, srv.ID)
	if srv.Addr != "" || srv.Socket == "" || srv.PodAddr != "127.0.0.1:6379" {
		t.Fatalf("pod server: addr %q socket %q pod addr %q", srv.Addr, srv.Socket, srv.PodAddr)
	}
	if err := c.WaitReady(ctx, srv, 20*time.Second); err != nil {
		t.Fatal(err)
	}
	prog := filepath.Join(filepath.Dir(enginetest.ToolBinary(t)), "redis-loadgen")
	car, err := c.StartSidecar(ctx, engine.SidecarSpec{Of: srv.ID, Image: img, Program: prog, CPUs: "1", Labels: session,
		Args: []string{"--json", "--exact-tests", "-t", "SET", "--host", "127.0.0.1", "--port", "6379", "-c", "4", "-n", "20000"}})
	if err != nil {
		t.Fatal(err)
	}
	defer car.Close()
	ins, err := c.API().ContainerInspect(ctx, car.ID, client.ContainerInspectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if hc := ins.Container.HostConfig; string(hc.NetworkMode) != "container:"+srv.ID || string(hc.IpcMode) != "container:"+srv.ID || hc.CpusetCpus != "1" {
		t.Errorf("sidecar: network %q, ipc %q, cpus %q; want the server's namespaces and CPU 1", hc.NetworkMode, hc.IpcMode, hc.CpusetCpus)
	}
	car.Stdin.Close()
	out, err := io.ReadAll(car.Stdout)
	if err != nil && !errors.Is(err, io.EOF) {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), `"SET"`) {
		t.Fatalf("the sidecar's generator printed %q (stderr %q), want its SET result", out, car.Stderr())
	}
	// what it wrote went to the pod server, seen from the host's socket
	rdb := redis.NewClient(&redis.Options{Network: "unix", Addr: srv.Socket, Protocol: 2, DisableIdentity: true})
	defer rdb.Close()
	if n, err := rdb.DBSize(ctx).Result(); err != nil || n == 0 {
		t.Errorf("DBSIZE on the pod server after the sidecar's SETs: %d, %v", n, err)
	}
	if err := car.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.API().ContainerInspect(ctx, car.ID, client.ContainerInspectOptions{}); err == nil {
		t.Error("the sidecar is still there after Close")
	}
}
