package bench_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/redis-variants/redis-variants/bench"
	"github.com/redis-variants/redis-variants/builder"
	"github.com/redis-variants/redis-variants/dockerfiles"
	"github.com/redis-variants/redis-variants/engine/enginetest"
	"github.com/redis-variants/redis-variants/rank"
	"github.com/redis-variants/redis-variants/results"
	"github.com/redis-variants/redis-variants/variants"
)

// methodPlan is two real builds that differ only in -O level.
const methodPlan = `
sources:
  redis-7.0.15:
    url: https://download.redis.io/releases/redis-7.0.15.tar.gz
    sha256: 98066f5363504b26c34dd20fbcc3c957990d764cdf42576c836fc021073f4341
    fallbacks:
      - {url: "debian:pool/main/r/redis/redis_7.0.15.orig.tar.gz", sha256: 4b1dc4ee6d622a09fff9c6777191209750fb5e5a725ef78ea012d6eef4c22982}
defaults: {redis: 7.0.15, compiler: gcc-12, allocator: libc}
variants:
  - {name: method-o2, opt: O2}
  - {name: method-o0, opt: O0}
`

// TestMethodOnRealBuilds is the proof that the method works on real images
// and real load: the same -O2 image under two names (A/A) must come out
// tied, and a -O0 build of the same source must come out slower than -O2,
// on LRANGE_100 (the server does real work per request), with the server
// pinned to CPU 0 and the generator (this tool's own binary) to CPU 1.
func TestMethodOnRealBuilds(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: needs buildkitd, Docker Engine and the source cache")
	}
	root := enginetest.RepoRoot(t)
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Minute)
	defer cancel()
	plan, err := variants.Parse("method.yaml", []byte(methodPlan))
	if err != nil {
		t.Fatal(err)
	}
	eng := enginetest.Client(t)
	run, err := results.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ropt, err := dockerfiles.HostOptions(filepath.Join(root, ".state", "cache", "sources"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := builder.New(ctx, builder.Options{Run: run, Engine: eng, Recipe: ropt, Jobs: 2})
	if err != nil {
		t.Fatalf("%v (run: make setup)", err)
	}
	defer b.Close()
	res, err := b.Build(ctx, plan.Variants)
	if err != nil {
		t.Fatalf("building -O2 and -O0: %v", err)
	}
	refs := map[string]string{}
	for _, r := range res {
		refs[r.Variant.Name] = r.Image
	}

	bin := filepath.Join(t.TempDir(), "redis-variants")
	if out, err := exec.Command("go", "build", "-o", bin, filepath.Join(root, "cmd", "redis-variants")).CombinedOutput(); err != nil {
		t.Fatalf("building the generator: %v\n%s", err, out)
	}
	o := bench.Options{
		Run:    run,
		Engine: eng,
		Images: []bench.Image{
			{Name: "o2-a", Ref: refs["method-o2"], Reference: true, Verified: "passed"},
			{Name: "o2-b", Ref: refs["method-o2"], Verified: "passed"},
			{Name: "o0", Ref: refs["method-o0"], Verified: "passed"},
		},
		Runtimes: []variants.Runtime{{Name: "host", Network: "host", Seccomp: "default", ServerCPUs: "0", ClientCPUs: "1"}},
		Profile: variants.Profile{Name: "method", Tests: []string{"LRANGE_100"}, Clients: 50, Pipelines: []int{16},
			DataSize: 3, Duration: 2 * time.Second, Warmup: 500 * time.Millisecond, Trials: 6, MaxTrials: 6},
		Budget:    -1,
		Generator: bench.ExecGenerator{Binary: bin},
		Seed:      11,
		Labels:    enginetest.Session(t),
	}
	if _, err := bench.Run(ctx, o); err != nil {
		t.Fatalf("bench: %v", err)
	}
	trials, err := bench.LoadTrials(run)
	if err != nil {
		t.Fatal(err)
	}
	th := rank.DefaultThresholds()
	th.Alpha = 0.01 // an A/A false positive must be rare enough for CI: 6 vs 6 trials still reach p = 0.004
	th.Primary = "o2-a"
	r := rank.Rank(trials, th)
	lr := rank.Bench{Test: "LRANGE_100", Pipeline: 16}
	aa, ok1 := r.Comparison("host", lr, "o2-b", "o2-a")
	o0, ok2 := r.Comparison("host", lr, "o0", "o2-a")
	if !ok1 || !ok2 {
		t.Fatalf("comparisons missing from the ranking: %+v", r.Comparisons)
	}
	t.Logf("A/A: ratio %.3f [%.3f, %.3f] p_adj %.4f -> %s", aa.Ratio, aa.Lo, aa.Hi, aa.PAdj, aa.Verdict)
	t.Logf("-O0/-O2: ratio %.3f [%.3f, %.3f] p_adj %.4f -> %s", o0.Ratio, o0.Lo, o0.Hi, o0.PAdj, o0.Verdict)
	for _, c := range r.Cells {
		t.Logf("%s: median %.0f ops/s, server CPU %.0f ns/op, generator CPU share %.2f", c.Image, c.Ops.Center, c.CPUNsPerOp.Center, c.ClientCPUShare)
	}
	if aa.Verdict != rank.Tie {
		t.Errorf("A/A (one image under two names) came out %q, want tie", aa.Verdict)
	}
	if o0.Verdict != rank.Slower || o0.Ratio >= 0.95 {
		t.Errorf("-O0 vs -O2 came out %q with ratio %.3f, want slower", o0.Verdict, o0.Ratio)
	}
}
