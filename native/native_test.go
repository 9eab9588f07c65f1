package native

import (
	"archive/tar"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-variants/redis-variants/engine"
	"github.com/redis-variants/redis-variants/engine/enginetest"
)

func tarOf(t *testing.T, entries ...tar.Header) *bytes.Buffer {
	t.Helper()
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for _, h := range entries {
		body := ""
		if h.Typeflag == tar.TypeReg {
			body = "content of " + h.Name
			h.Size = int64(len(body))
		}
		if err := tw.WriteHeader(&h); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(body))
	}
	tw.Close()
	return &b
}

func TestUntar(t *testing.T) {
	dir := t.TempDir()
	err := Untar(tarOf(t,
		tar.Header{Name: "usr/", Typeflag: tar.TypeDir, Mode: 0o755},
		tar.Header{Name: "usr/bin/redis-server", Typeflag: tar.TypeReg, Mode: 0o755},
		tar.Header{Name: "usr/bin/redis-check-rdb", Typeflag: tar.TypeSymlink, Linkname: "redis-server"},
		tar.Header{Name: "usr/bin/hard", Typeflag: tar.TypeLink, Linkname: "usr/bin/redis-server"},
		tar.Header{Name: "bin", Typeflag: tar.TypeSymlink, Linkname: "usr/bin"},
	), dir)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(filepath.Join(dir, "usr/bin/redis-server"))
	if err != nil || st.Mode().Perm() != 0o755 {
		t.Fatalf("redis-server: %v %v", st, err)
	}
	if l, err := os.Readlink(filepath.Join(dir, "usr/bin/redis-check-rdb")); err != nil || l != "redis-server" {
		t.Errorf("symlink: %q %v", l, err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "usr/bin/hard")); err != nil || string(b) != "content of usr/bin/redis-server" {
		t.Errorf("hard link: %q %v", b, err)
	}

	// nothing may land outside the root: not by a name that climbs, not
	// through a symbolic link the archive made itself
	outside := t.TempDir()
	for name, entries := range map[string][]tar.Header{
		"a name that climbs is kept inside": {{Name: "../../escaped", Typeflag: tar.TypeReg, Mode: 0o644}},
		"through a link": {
			{Name: "evil", Typeflag: tar.TypeSymlink, Linkname: outside},
			{Name: "evil/escaped", Typeflag: tar.TypeReg, Mode: 0o644},
		},
	} {
		root := t.TempDir()
		err := Untar(tarOf(t, entries...), root)
		if _, serr := os.Stat(filepath.Join(outside, "escaped")); serr == nil {
			t.Fatalf("%s: a file was written outside the root", name)
		}
		if strings.HasPrefix(name, "through") && err == nil {
			t.Errorf("%s: no error", name)
		}
		if strings.HasPrefix(name, "a name") {
			if _, serr := os.Stat(filepath.Join(root, "escaped")); err != nil || serr != nil {
				t.Errorf("%s: %v %v", name, err, serr)
			}
		}
	}
}

// TestNativeServer runs the test image's own redis-server (Debian's,
// with Debian's jemalloc from the image) as a host process: it answers,
// runs from the image's root with the image's libraries, every thread is
// pinned to the CPU asked, it is in no container's cgroup, its CPU time
// grows under load, and removing it and closing the runner leave no
// process and no root behind.
func TestNativeServer(t *testing.T) {
	if testing.Short() {
		t.Skip("needs the Docker Engine (make test)")
	}
	if os.Geteuid() != 0 {
		t.Fatal("a native server is started chrooted into its image's root: this test needs root, as the bench does")
	}
	c := enginetest.Client(t)
	img := enginetest.Image(t)
	ctx := context.Background()
	r := &Runner{Images: c, Dir: t.TempDir()}
	defer r.Close()

	// what a container-only setting asks is refused, saying why
	for _, s := range []engine.ServerSpec{{Image: img, CPULimit: 0.5}, {Image: img, Memory: 1 << 30}, {Image: img, Seccomp: "unconfined"}} {
		if _, err := r.Start(ctx, s); err == nil || !strings.Contains(err.Error(), "native") {
			t.Errorf("%+v: want a refusal, got %v", s, err)
		}
	}

	srv, err := r.Start(ctx, engine.ServerSpec{Image: img, CPUs: "1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.WaitReady(ctx, srv, 20*time.Second); err != nil {
		t.Fatal(err)
	}
	pid := strings.TrimPrefix(srv.ID, IDPrefix)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, Protocol: 2, DisableIdentity: true})
	defer rdb.Close()
	if err := rdb.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if v, err := rdb.Get(ctx, "k").Result(); err != nil || v != "v" {
		t.Fatalf("GET k = %q, %v", v, err)
	}
	info, err := rdb.Info(ctx, "memory").Result()
	if err != nil || !strings.Contains(info, "mem_allocator:jemalloc") {
		t.Errorf("the image's redis-server runs Debian's jemalloc; INFO memory says otherwise (%v):\n%s", err, info)
	}
	if strings.Contains(info, "used_memory_rss:0\r") {
		t.Errorf("the server cannot read its RSS (no /proc in its root):\n%s", info)
	}
	// a root in use is not swept; a root nobody runs in, left mounted, is
	pattern := filepath.Join(r.Dir, "root-*")
	if n, err := Sweep(pattern); n != 0 || err != nil {
		t.Errorf("Sweep removed %d roots (%v) while their server runs", n, err)
	}
	stale := filepath.Join(r.Dir, "root-stale")
	if err := mountProc(stale); err != nil {
		t.Fatal(err)
	}
	if n, err := Sweep(pattern); n != 1 || err != nil {
		t.Errorf("Sweep removed %d roots (%v), want the stale one", n, err)
	}
	if _, err := os.Stat(stale); err == nil || mounted(filepath.Join(stale, "proc")) {
		t.Errorf("the stale root is still there (mounted: %v)", mounted(filepath.Join(stale, "proc")))
	}

	// the image's binary and libraries, from the root
	exe, err := os.Readlink("/proc/" + pid + "/exe")
	// (Debian's redis-server is a link to its redis-check-rdb)
	if err != nil || !strings.HasPrefix(exe, r.Dir) || !strings.Contains(exe, "/usr/bin/redis-") {
		t.Errorf("the process runs %q (%v), want the image's /usr/bin/redis-server under %s", exe, err, r.Dir)
	}
	maps, _ := os.ReadFile("/proc/" + pid + "/maps")
	for _, l := range strings.Split(string(maps), "\n") {
		if f := strings.Fields(l); len(f) == 6 && strings.Contains(f[5], ".so") && !strings.HasPrefix(f[5], r.Dir) {
			t.Errorf("library %s is the host's, not the image's", f[5])
		}
	}
	// no container's cgroup: its own, under redis-variants
	cg, _ := os.ReadFile("/proc/" + pid + "/cgroup")
	if strings.Contains(string(cg), "docker") || !strings.Contains(string(cg), "/redis-variants/"+srv.ID) {
		t.Errorf("the native server is not in its own cgroup (or is in a Docker one):\n%s", cg)
	}
	parent, _ := CgroupParent()
	// every thread pinned
	tasks, _ := filepath.Glob("/proc/" + pid + "/task/*/status")
	if len(tasks) < 2 {
		t.Errorf("redis-server has %d threads, want its main one and its background ones", len(tasks))
	}
	for _, ts := range tasks {
		b, _ := os.ReadFile(ts)
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "Cpus_allowed_list:"); ok && strings.TrimSpace(v) != "1" {
				t.Errorf("%s: Cpus_allowed_list %q, want 1", ts, strings.TrimSpace(v))
			}
		}
	}
	// its CPU time grows under load
	before, err := r.CPUUsageNanos(ctx, srv.ID)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20000 {
		rdb.Set(ctx, "k"+strconv.Itoa(i), "v", 0)
	}
	after, err := r.CPUUsageNanos(ctx, srv.ID)
	if err != nil || after <= before {
		t.Errorf("CPU time %d → %d (%v): want it to grow under 20,000 SETs", before, after, err)
	}
	if !r.Running(srv.ID) {
		t.Error("Running says the server is not")
	}
	if err := r.Remove(ctx, srv.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat("/proc/" + pid); err == nil {
		t.Errorf("process %s is still there after Remove", pid)
	}
	if r.Running(srv.ID) || r.Started() != 0 {
		t.Error("the runner still counts the removed server")
	}
	if _, err := os.Stat(filepath.Join(parent, srv.ID)); err == nil {
		t.Errorf("the server's cgroup %s is still there after Remove", filepath.Join(parent, srv.ID))
	}

	// a second server of the same image reuses the root; Close ends it
	// and removes the root
	srv2, err := r.Start(ctx, engine.ServerSpec{Image: img, CPUs: "0"})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.WaitReady(ctx, srv2, 20*time.Second); err != nil {
		t.Fatal(err)
	}
	roots, _ := filepath.Glob(filepath.Join(r.Dir, "root-*"))
	if len(roots) != 1 {
		t.Errorf("%d roots for one image, want 1", len(roots))
	}
	pid2 := strings.TrimPrefix(srv2.ID, IDPrefix)
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat("/proc/" + pid2); err == nil {
		t.Errorf("process %s is still there after Close", pid2)
	}
	if left, _ := os.ReadDir(r.Dir); len(left) != 0 {
		t.Errorf("Close left %d entries in %s", len(left), r.Dir)
	}
	for _, mp := range mountPoints() {
		if strings.HasPrefix(mp, r.Dir) {
			t.Errorf("Close left %s mounted", mp)
		}
	}
}

// A server that cannot start says so with its own output.
func TestNativeServerThatExits(t *testing.T) {
	if testing.Short() {
		t.Skip("needs the Docker Engine (make test)")
	}
	c := enginetest.Client(t)
	img := enginetest.Image(t)
	ctx := context.Background()
	r := &Runner{Images: c, Dir: t.TempDir()}
	defer r.Close()
	srv, err := r.Start(ctx, engine.ServerSpec{Image: img, Args: []string{"--no-such-option", "1"}})
	if err != nil {
		t.Fatal(err)
	}
	err = r.WaitReady(ctx, srv, 20*time.Second)
	if err == nil || !strings.Contains(err.Error(), "exited") || !strings.Contains(err.Error(), "no-such-option") {
		t.Fatalf("want an error saying it exited, with redis-server's complaint; got %v", err)
	}
}
