package builder

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis-variants/redis-variants/engine/enginetest"
	"github.com/redis-variants/redis-variants/solve"
	"github.com/redis-variants/redis-variants/variants"
)

func TestParseEndpoint(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Endpoint
		err  string
	}{
		{"unix:///run/a.sock", Endpoint{"unix:///run/a.sock", 2}, ""},
		{"tcp://10.0.0.2:1234,jobs=4", Endpoint{"tcp://10.0.0.2:1234", 4}, ""},
		{"tcp://h:1,jobs=0", Endpoint{}, "jobs=N (N ≥ 1)"},
		{"tcp://h:1,gpus=2", Endpoint{}, "want ADDR or ADDR,jobs=N"},
		{",jobs=2", Endpoint{}, "no address"},
	} {
		got, err := ParseEndpoint(c.in, 2)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: %v, want an error with %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%q: %+v %v, want %+v", c.in, got, err, c.want)
		}
	}
}

// secondBuildkitd starts another buildkitd on its own socket and state
// folder (empty cache), with the registry configuration set-up wrote, and
// returns its address and a function that kills it.
func secondBuildkitd(t *testing.T, root string) (string, func()) {
	d := startBuildkitd(t, root)
	return d.addr, d.stop
}

// buildkitd is a daemon a test started: its address, its process, and
// stop, which kills it (once).
type buildkitd struct {
	addr string
	pid  int
	stop func()
}

func startBuildkitd(t *testing.T, root string) buildkitd {
	t.Helper()
	bin := filepath.Join(root, ".state", "bin", "buildkitd")
	cfg, err := os.ReadFile(filepath.Join(root, ".state", "buildkit", "buildkitd.toml"))
	if err != nil {
		t.Fatalf("this test needs set-up's buildkitd and its configuration: %v", err)
	}
	// Keep the registry sections; root and address are this daemon's own.
	var keep []string
	skip := false
	for _, l := range strings.Split(string(cfg), "\n") {
		switch {
		case strings.HasPrefix(l, "root"):
			continue
		case strings.HasPrefix(l, "[grpc]"):
			skip = true
			continue
		case strings.HasPrefix(l, "["):
			skip = false
		}
		if !skip {
			keep = append(keep, l)
		}
	}
	dir, err := os.MkdirTemp("", "redis-variants-bk2-*")
	if err != nil {
		t.Fatal(err)
	}
	toml := filepath.Join(dir, "buildkitd.toml")
	if err := os.WriteFile(toml, []byte(strings.Join(keep, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := "unix://" + filepath.Join(dir, "buildkitd.sock")
	log, _ := os.Create(filepath.Join(dir, "buildkitd.log"))
	cmd := exec.Command(bin, "--config", toml, "--root", filepath.Join(dir, "root"), "--addr", addr)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			cmd.Process.Kill()
			cmd.Wait()
		}
	}
	t.Cleanup(func() {
		stop()
		log.Close()
		// a killed buildkitd leaves its snapshots' overlay mounts
		// behind: detach them, deepest first, before removing its root
		unmountUnder(t, dir)
		if err := os.RemoveAll(dir); err != nil {
			t.Errorf("removing the second buildkitd's folder: %v", err)
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		c, err := solve.Connect(ctx, addr)
		cancel()
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(filepath.Join(dir, "buildkitd.log"))
			t.Fatalf("the second buildkitd did not answer at %s: %v\n%s", addr, err, b)
		}
		time.Sleep(300 * time.Millisecond)
	}
	return buildkitd{addr: addr, pid: cmd.Process.Pid, stop: stop}
}

// TestPoolTwoBuildkitds spreads two builds over two real buildkitd
// daemons (the second started here with an empty cache), one job each: one
// build lands on each. Then the second daemon is killed: the build that
// draws its slot fails there, the pool finds it gone and builds it on the
// first, and records the retry. A builder that does not answer at start is
// an error naming its address.
func TestPoolTwoBuildkitds(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: needs buildkitd and Docker Engine")
	}
	ctx := context.Background()
	root := enginetest.RepoRoot(t)
	sources := filepath.Join(root, ".state", "cache", "sources")
	env := newTestEnv(ctx, t, root, sources)
	plan, err := variants.Parse("pool.yaml", []byte("references:\n  - {name: stock-a, kind: distro-package}\n  - {name: stock-b, kind: distro-package}\n"))
	if err != nil {
		t.Fatal(err)
	}
	vs := plan.All()
	addr2, stop2 := secondBuildkitd(t, root)

	_, run := env.builder("pool-1", env.recipe, true)
	opt := Options{Run: run, RunsRoot: env.runs, Engine: env.eng, Recipe: env.recipe, Force: true, Progress: testPrinter(t)}
	if _, err := NewPool(ctx, opt, []Endpoint{{solve.Address(), 1}, {"unix:///nonexistent/buildkitd.sock", 1}}); err == nil || !strings.Contains(err.Error(), "unix:///nonexistent/buildkitd.sock") {
		t.Errorf("a builder that does not answer at start: %v, want an error naming it", err)
	}

	pool, err := NewPool(ctx, opt, []Endpoint{{solve.Address(), 1}, {addr2, 1}})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	res, err := pool.BuildAll(ctx, vs)
	if err != nil {
		t.Fatalf("two builders: %v", err)
	}
	var used []string
	for _, r := range res {
		used = append(used, r.Builder)
	}
	slices.Sort(used)
	want := []string{solve.Address(), addr2}
	slices.Sort(want)
	if !slices.Equal(used, want) {
		t.Errorf("builds landed on %v, want one on each of %v", used, want)
	}

	stop2()
	// The pool still holds the dead daemon's slot.
	res, err = pool.BuildAll(ctx, vs)
	if err != nil {
		t.Fatalf("after the second builder went away: %v", err)
	}
	retried := 0
	for _, r := range res {
		if r.Status != StatusOK || r.Builder != solve.Address() {
			t.Errorf("%s: %s on %s (%s), want ok on %s", r.Variant.Name, r.Status, r.Builder, r.Error, solve.Address())
		}
		if len(r.Retried) > 0 {
			retried++
			if r.Retried[0] != addr2 {
				t.Errorf("%s retried after %v, want %s", r.Variant.Name, r.Retried, addr2)
			}
		}
	}
	if retried != 1 {
		t.Errorf("%d builds retried, want exactly the one that drew the dead builder's slot: %s", retried, fmt.Sprint(res))
	}
}

// unmountUnder detaches every mount below dir (from /proc/self/mountinfo),
// the deepest first.
func unmountUnder(t *testing.T, dir string) {
	t.Helper()
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Errorf("reading the mounts: %v", err)
		return
	}
	var under []string
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) > 4 && strings.HasPrefix(f[4], dir+"/") {
			under = append(under, f[4])
		}
	}
	sort.Sort(sort.Reverse(sort.StringSlice(under)))
	for _, m := range under {
		if err := syscall.Unmount(m, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmounting %s: %v", m, err)
		}
	}
}
