package verify

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis-variants/redis-variants/builder"
	"github.com/redis-variants/redis-variants/dockerfiles"
	"github.com/redis-variants/redis-variants/engine"
	"github.com/redis-variants/redis-variants/results"
	"github.com/redis-variants/redis-variants/solve"
	"github.com/redis-variants/redis-variants/variants"
)

const cheapVariants = `
sources:
  redis-7.0.15:
    url: "debian:pool/main/r/redis/redis_7.0.15.orig.tar.gz"
    sha256: 4b1dc4ee6d622a09fff9c6777191209750fb5e5a725ef78ea012d6eef4c22982
variants:
  - {name: gcc-o1-libc, compiler: gcc-12, opt: O1, allocator: libc}
runtimes:
  - {name: host, network: host}
`

// TestVerifyEndToEnd builds one cheap variant (gcc -O1, libc malloc) with
// the real buildkitd, loads it into the real Docker Engine and verifies it:
// the suite in the build (trimmed to one unit), the image checks and one
// unit against the running image. It then verifies the same image against
// a spec that disagrees with it (mimalloc, -O3) and expects both caught.
func TestVerifyEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("integration: needs buildkitd and dockerd")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 7*time.Minute)
	defer cancel()
	state := os.Getenv("RV_STATE")
	if state == "" {
		state = filepath.Join("..", ".state")
	}
	sources, _ := filepath.Abs(filepath.Join(state, "cache", "sources"))
	if _, err := os.Stat(filepath.Join(sources, "sha256", "4b1dc4ee6d622a09fff9c6777191209750fb5e5a725ef78ea012d6eef4c22982")); err != nil {
		t.Fatalf("the Redis 7.0.15 source is not in the cache %s (run `redis-variants fetch`): %v", sources, err)
	}
	plan, err := variants.Parse("verify-test.yaml", []byte(cheapVariants))
	if err != nil {
		t.Fatal(err)
	}
	v := plan.Variants[0]
	eng, err := engine.New(ctx)
	if err != nil {
		t.Fatalf("Docker Engine: %v", err)
	}
	defer eng.Close()
	bkc, err := solve.Connect(ctx, solve.Address())
	if err != nil {
		t.Fatalf("buildkitd: %v", err)
	}
	defer bkc.Close()
	run, err := results.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ropt, err := dockerfiles.HostOptions(sources)
	if err != nil {
		t.Fatal(err)
	}
	b, err := builder.New(ctx, builder.Options{Host: solve.Address(), Run: run, Engine: eng, Recipe: ropt})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	res, err := b.BuildAll(ctx, []variants.Variant{v})
	if err != nil || len(res) != 1 || res[0].Status != builder.StatusOK {
		t.Fatalf("building %s: %v %+v", v.Name, err, res)
	}
	image := res[0].Image

	var log bytes.Buffer
	vf := &Verifier{
		Engine: eng, BuildKit: bkc, Run: run,
		Render: func(v variants.Variant) (Recipe, error) {
			r, err := dockerfiles.Render(v, ropt)
			return Recipe{Dockerfile: r.Dockerfile, BuildArgs: r.BuildArgs, Contexts: r.Contexts}, err
		},
		Opt: Options{Profile: ProfileQuick, Units: []string{"unit/type/incr"}, ExternalUnits: []string{"unit/type/incr"},
			SourcesDir: sources, Log: &log},
	}
	start := time.Now()
	proofs := t.TempDir()
	target := Target{Image: image, ID: res[0].ConfigDigest, Recipe: res[0].Recipe}
	r := Record(run, Reuse(proofs, run, vf.Opt, vf)).Verify(ctx, v, target)
	t.Logf("verified %s in %s (suite %s: %s)\n%s", v.Name, time.Since(start).Round(time.Second), r.Suite.Duration.Round(time.Second), r.Suite.Note, log.String())
	for _, c := range r.Checks {
		t.Logf("check %-16s %v  %s", c.Name, c.OK, c.Detail)
	}
	if r.Status != StatusPassed {
		t.Fatalf("a correct cheap variant failed verification: %s", strings.Join(r.Problems, "\n"))
	}
	if r.Suite.Passed < 20 || len(r.Suite.Units) != 1 || r.Suite.Units[0].Name != "unit/type/incr" {
		t.Fatalf("suite: %+v", r.Suite)
	}
	if r.External == nil || r.External.Passed < 20 {
		t.Fatalf("external: %+v", r.External)
	}
	if ok, why := Passed(run, v.Name, target.ID); !ok {
		t.Fatal(why)
	}

	// Verified again in another run, unchanged: the kept proof answers, no
	// suite runs, and the new run's report says where it came from.
	run2, err := results.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	counted := &countingVerifier{next: vf}
	r2 := Record(run2, Reuse(proofs, run2, vf.Opt, counted)).Verify(ctx, v, target)
	if counted.n != 0 || r2.ReusedFrom != filepath.Base(run.Dir) || r2.Status != StatusPassed || r2.ProofKey == "" || r2.ProofKey != r.ProofKey {
		t.Fatalf("unchanged image verified again (%d runs) or not reused: %+v", counted.n, r2)
	}
	if ok, why := Passed(run2, v.Name, target.ID); !ok {
		t.Fatal(why)
	}

	// The same image against a spec that disagrees: mimalloc, -O3.
	bad := v
	bad.Allocator = variants.AllocMimalloc
	bad.Opt = "O3"
	checks, _ := ImageChecks(ctx, eng, bad, Target{Image: image})
	for _, name := range []string{"allocator", "binary -O level", "labels"} {
		c := checkByName(checks, name)
		if c.OK || !strings.Contains(c.Detail, "MISMATCH") {
			t.Errorf("spec/image disagreement not caught by %s: %+v", name, c)
		}
	}

	// The same image as if pulled (no build tree), with --no-external: no
	// test suite runs against it at all, and that is no pass.
	noExt := *vf
	noExt.Opt.NoExternal = true
	pulled := Target{Image: image, ID: target.ID, Server: "/usr/local/bin/redis-server",
		Pulled: &engine.Pulled{Resolved: image, Digest: target.ID, Platform: "linux/amd64"}}
	r3 := noExt.Verify(ctx, variants.Variant{Name: "as-pulled", Kind: variants.KindImage, Image: image}, pulled)
	if r3.Status != StatusFailed || !strings.Contains(strings.Join(r3.Problems, "\n"), "no test suite ran against this image") {
		t.Errorf("a pulled image verified with no suite: %s %v", r3.Status, r3.Problems)
	}
}

// countingVerifier counts the verifications that reach next.
type countingVerifier struct {
	next Interface
	n    int
}

func (c *countingVerifier) Verify(ctx context.Context, v variants.Variant, t Target) Report {
	c.n++
	return c.next.Verify(ctx, v, t)
}
