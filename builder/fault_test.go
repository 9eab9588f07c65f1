package builder

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis-variants/redis-variants/engine/enginetest"
	"github.com/redis-variants/redis-variants/results"
	"github.com/redis-variants/redis-variants/solve"
	"github.com/redis-variants/redis-variants/variants"
)

// descendants lists the processes whose parent is pid, and theirs.
func descendants(pid int) []int {
	ents, _ := os.ReadDir("/proc")
	parent := map[int]int{}
	for _, e := range ents {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so read after ")"
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(f) > 1 {
			parent[n], _ = strconv.Atoi(f[1])
		}
	}
	var out []int
	next := []int{pid}
	for len(next) > 0 {
		p := next[0]
		next = next[1:]
		for c, pp := range parent {
			if pp == p {
				out = append(out, c)
				next = append(next, c)
			}
		}
	}
	return out
}

// killMidBuild waits until the daemon runs a build step (a child process:
// runc for a RUN), then kills it with SIGKILL, as an OOM killer or a
// crash would, and returns when it is gone. The step's own processes,
// orphaned, are killed at the test's end.
func killMidBuild(t *testing.T, d buildkitd, done <-chan struct{}) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Minute)
	for len(descendants(d.pid)) == 0 {
		select {
		case <-done:
			t.Fatalf("the build on %s finished before it ran a step: nothing was killed mid-build", d.addr)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("buildkitd %s ran no step in 5 minutes", d.addr)
		}
		time.Sleep(50 * time.Millisecond)
	}
	orphans := descendants(d.pid)
	t.Cleanup(func() {
		for _, p := range orphans {
			syscall.Kill(p, syscall.SIGKILL)
		}
	})
	d.stop()
}

// buildkitd killed in the middle of a build, against real daemons. Alone,
// the build fails naming the daemon, its record says so, and a re-run on a
// daemon that answers builds it (the run resumes). In a pool, the build on
// the killed daemon is built again on the other and the other's own build
// is unaffected.
func TestBuildkitdKilledMidBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: needs buildkitd and Docker Engine")
	}
	ctx := context.Background()
	root := enginetest.RepoRoot(t)
	env := newTestEnv(ctx, t, root, filepath.Join(root, ".state", "cache", "sources"))
	plan, err := variants.Parse("fault.yaml", []byte("references:\n  - {name: stock-a, kind: distro-package}\n  - {name: stock-b, kind: distro-package}\n"))
	if err != nil {
		t.Fatal(err)
	}
	vs := plan.All()

	// Alone: the only builder dies.
	d := startBuildkitd(t, root)
	if n := descendants(d.pid); len(n) != 0 {
		t.Fatalf("buildkitd has child processes %v before any build: a child cannot mark a build step", n)
	}
	_, run := env.builder("alone", env.recipe, true)
	alone, err := New(ctx, Options{Host: d.addr, Jobs: 2, Run: run, RunsRoot: env.runs, Engine: env.eng, Recipe: env.recipe, Force: true, Progress: testPrinter(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer alone.Close()
	done := make(chan struct{})
	var res []Result
	go func() {
		defer close(done)
		res, _ = alone.BuildAll(ctx, vs)
	}()
	killMidBuild(t, d, done)
	<-done
	builds, _, err := results.LoadBuilds(run)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		b, ok := builds[v.Name]
		if !ok || b.Status != StatusFailed || !strings.Contains(b.Error, "buildkitd "+d.addr+" stopped answering") {
			t.Errorf("%s after its only builder was killed: %+v, want a failure naming buildkitd %s", v.Name, b, d.addr)
		}
	}
	t.Logf("alone: %s", res[0].Error)

	// The re-run, on a daemon that answers, builds what failed.
	again, _ := env.builder("alone", env.recipe, false)
	res, err = again.BuildAll(ctx, vs)
	if err != nil {
		t.Fatal(err)
	}
	builds, _, _ = results.LoadBuilds(run)
	for _, v := range vs {
		if b := builds[v.Name]; b.Status == StatusFailed {
			t.Errorf("%s after the re-run: %s %s", v.Name, b.Status, b.Error)
		}
	}

	// A pool: one daemon dies mid-build, the other carries on.
	d2 := startBuildkitd(t, root)
	_, prun := env.builder("pool", env.recipe, true)
	pool, err := NewPool(ctx, Options{Run: prun, RunsRoot: env.runs, Engine: env.eng, Recipe: env.recipe, Force: true, Progress: testPrinter(t)},
		[]Endpoint{{solve.Address(), 1}, {d2.addr, 1}})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	done = make(chan struct{})
	go func() {
		defer close(done)
		res, err = pool.BuildAll(ctx, vs)
	}()
	killMidBuild(t, d2, done)
	<-done
	if err != nil {
		t.Fatal(err)
	}
	retried := 0
	for _, r := range res {
		if r.Status == StatusFailed || r.Builder != solve.Address() {
			t.Errorf("%s in the pool: %s on %s (%s), want built on %s", r.Variant.Name, r.Status, r.Builder, r.Error, solve.Address())
		}
		if len(r.Retried) > 0 {
			retried++
			if r.Retried[0] != d2.addr {
				t.Errorf("%s retried after %v, want %s", r.Variant.Name, r.Retried, d2.addr)
			}
		}
	}
	if retried != 1 {
		t.Errorf("%d builds retried, want the one the killed daemon had: %v", retried, res)
	}
}

// The disk filling during a build's export (an OCI layout, tens of MB,
// into a 2 MiB filesystem): the build fails saying so, nothing
// half-written is left where the layout was going, and the build done
// again with room exports the whole layout.
func TestBuildExportDiskFull(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: needs buildkitd and Docker Engine")
	}
	ctx := context.Background()
	root := enginetest.RepoRoot(t)
	env := newTestEnv(ctx, t, root, filepath.Join(root, ".state", "cache", "sources"))
	plan, err := variants.Parse("full.yaml", []byte("references:\n  - {name: stock-a, kind: distro-package}\n"))
	if err != nil {
		t.Fatal(err)
	}
	vs := plan.All()
	full := enginetest.TinyDisk(t, "2m")
	_, run := env.builder("full", env.recipe, true)
	b, err := New(ctx, Options{Host: solve.Address(), Jobs: 1, Run: run, RunsRoot: env.runs, Engine: env.eng, Recipe: env.recipe, Force: true, OCIDir: full, Progress: testPrinter(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	res, _ := b.BuildAll(ctx, vs)
	if len(res) != 1 || res[0].Status != StatusFailed || !strings.Contains(res[0].Error, "no space left on device") {
		t.Fatalf("a build whose export fills the disk: %+v, want a failure saying the disk is full", res)
	}
	t.Logf("disk full: %s", res[0].Error)
	if ents, _ := os.ReadDir(full); len(ents) != 0 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("the failed export left %v on the full disk", names)
	}
	if res[0].OCI != "" {
		t.Errorf("the failed build records an OCI layout at %s", res[0].OCI)
	}
	builds, _, _ := results.LoadBuilds(run)
	if rec := builds["stock-a"]; rec.Status != StatusFailed || !strings.Contains(rec.Error, "no space left on device") {
		t.Errorf("the build record: %s %q, want the failure", rec.Status, rec.Error)
	}

	room := t.TempDir()
	again, err := New(ctx, Options{Host: solve.Address(), Jobs: 1, Run: run, RunsRoot: env.runs, Engine: env.eng, Recipe: env.recipe, Force: true, OCIDir: room, Progress: testPrinter(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	res, _ = again.BuildAll(ctx, vs)
	if len(res) != 1 || res[0].Status != StatusOK || res[0].OCI != filepath.Join(room, "stock-a") {
		t.Fatalf("the build again with room: %+v", res)
	}
	if _, err := os.Stat(filepath.Join(room, "stock-a", "index.json")); err != nil {
		t.Errorf("no complete OCI layout: %v", err)
	}
}
