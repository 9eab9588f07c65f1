package pipeline

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bk "github.com/moby/buildkit/client"

	"github.com/redis-variants/redis-variants/bench"
	"github.com/redis-variants/redis-variants/engine/enginetest"
	"github.com/redis-variants/redis-variants/progress"
	"github.com/redis-variants/redis-variants/publish"
	"github.com/redis-variants/redis-variants/results"
	"github.com/redis-variants/redis-variants/solve"
	"github.com/redis-variants/redis-variants/variants"
	"github.com/redis-variants/redis-variants/verify"
)

// outsideDockerfile is an image this tool did not make: Debian's own
// redis-server package on the Debian base, under the package's redis user
// (whatever uid Debian gives it), with no label, no REDIS_VERSION and no
// build record of ours.
const outsideDockerfile = `FROM debian:bookworm-slim
RUN set -eux; \
	printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d; chmod 755 /usr/sbin/policy-rc.d; \
	apt-get update; \
	apt-get install -y --no-install-recommends redis-server; \
	rm -rf /var/lib/apt/lists/* /usr/sbin/policy-rc.d
WORKDIR /var/lib/redis
USER redis
CMD ["redis-server", "--protected-mode", "no"]
`

// outsideFile ranks that image, pulled by tag, against the official image
// pulled by tag: entries of kind image only, and no sources:.
const outsideFile = `references: [{name: official, kind: image, image: ` + localRegistry + `/library/redis:7.0.15}]
variants: [{name: outside, image: ` + localRegistry + `/outside/redis:bookworm}]
runtimes: [{name: host, network: host}]
profiles:
  quick:
    tests: [GET]
    pipelines: [64]
    keyspace: 1000
    duration: 1s
    warmup: 1s
    replicates: 4
    looks: 1
    max_replicates: 4 # no extension rounds: the round trip of a pulled image is under test, not the precision
    resolution: 25%
    windows: 1
    axis_replicates: 0
    trials: 1
    budget: 5m
`

// TestOutsideImagePulledVerifiedRanked: an image built outside the tool,
// pushed to a registry and named by tag, is pulled, verified (its Redis
// version and allocator discovered, Redis's suite run against it with the
// tests of the version it turned out to be) and ranked. Before, every such
// image failed verification ("unknown allocator \"\" in the spec", "no source
// for Redis 7.0.15").
func TestOutsideImagePulledVerifiedRanked(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: needs Docker Engine, buildkitd and the local registry")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	enginetest.Client(t)
	c, err := solve.Connect(ctx, solve.Address())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := solve.Run(ctx, c, solve.Request{Dockerfile: []byte(outsideDockerfile), Exports: []bk.ExportEntry{{
		Type:  bk.ExporterImage,
		Attrs: map[string]string{"name": localRegistry + "/outside/redis:bookworm", "push": "true", "registry.insecure": "true"},
	}}}); err != nil {
		t.Fatalf("building the outside image: %v", err)
	}

	root := t.TempDir()
	file := filepath.Join(root, "outside.yaml")
	if err := os.WriteFile(file, []byte(outsideFile), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errw bytes.Buffer
	dir := filepath.Join(root, "runs", "20261203-000000")
	cfg := Config{File: file, Runs: filepath.Join(root, "runs"), RunDir: dir, State: filepath.Join(enginetest.RepoRoot(t), ".state"),
		Registry: localRegistry, BuildKit: solve.Address(), Progress: progress.Plain, Out: &out, Err: &errw}
	if err := Run(ctx, cfg, RunOptions{BenchProfile: "quick", Jobs: 1, VerifyAgain: true, Generator: bench.ExecGenerator{Binary: enginetest.ToolBinary(t)}}); err != nil {
		t.Fatalf("run: %v\nstderr:\n%s\nstdout:\n%s", err, errw.String(), out.String())
	}
	run := &results.Run{Dir: dir}
	vs, _, err := results.LoadVerifications(run)
	if err != nil {
		t.Fatal(err)
	}
	o := vs["outside"]
	for _, c := range o.Checks {
		t.Logf("outside: check %-18s %-4s %s", c.Name, c.Outcome(), c.Detail)
	}
	if o.Status != verify.StatusPassed || o.External == nil || !o.External.Ran || o.External.Passed < 20 {
		t.Fatalf("the outside image did not pass, or no suite ran against it: %s; %v", o.Summary(), o.Problems)
	}
	if d := o.Discovered; d == nil || d.Redis != "7.0.15" || d.Allocator != variants.AllocJemallocSystem || d.Libc != variants.LibcGlibc {
		t.Errorf("discovered %+v, want Redis 7.0.15 on Debian's system jemalloc, glibc", o.Discovered)
	}
	for name, want := range map[string]string{"allocator": "n/a", "binary compiler": "n/a", "pulled": "n/a", "redis version": "n/a", "user": "pass", "ping": "pass"} {
		if c := checkNamed(o.Checks, name); c == nil || c.Outcome() != want {
			t.Errorf("check %s: %+v, want %s", name, c, want)
		}
	}
	if n := results.CountChecks(o.Checks); n.NotApplicable < 4 || n.Fail != 0 {
		t.Errorf("checks counted %+v", n)
	}
	if ok, why := verify.Passed(run, "outside", o.ImageID); !ok || o.ImageID == "" {
		t.Errorf("bench would not count the outside image as verified: %s", why)
	}
	rk, err := run.Ranking()
	if err != nil {
		t.Fatal(err)
	}
	st, ok := rk.Standing("host")
	if !ok || st.Primary != "official" || len(st.Entries) != 2 {
		t.Fatalf("standings %+v", rk.Standings)
	}
	for _, e := range st.Entries {
		if e.Image == "outside" && (e.Score.IsNaN() || e.Lo.IsNaN() || e.Hi.IsNaN()) {
			t.Errorf("outside has no score with an interval: %+v", e)
		}
	}
	reps, _, err := results.LoadReplicates(run)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range reps {
		if r.Image == "outside" && len(r.Windows) > 0 && r.ImageID == o.ImageID {
			n++
		}
	}
	if n != 4 {
		t.Errorf("%d replicates of the outside image (its verified ID %s), want 4", n, o.ImageID)
	}
	md, _ := os.ReadFile(run.Path("report.md"))
	if !strings.Contains(string(md), "jemalloc-system (found)") {
		t.Errorf("report.md does not say what the outside image was found to run:\n%s", md)
	}

	editedBetweenBuildAndPublish(ctx, t, c, cfg, o.ImageID)
}

// editedBetweenBuildAndPublish goes on from a run that built, verified,
// benched and ranked the outside image: the file is edited so that the
// entry names another image, and the run is built again. The old image's
// verification does not pass the new one (bench and publish ask
// verify.Passed), and says which image each is; bench run again sets the
// old image's measurements aside and measures the new one; verified
// again, the new image is ranked on its own measurements.
func editedBetweenBuildAndPublish(ctx context.Context, t *testing.T, c *bk.Client, cfg Config, oldID string) {
	t.Helper()
	edited := localRegistry + "/outside/redis:edited"
	if _, err := solve.Run(ctx, c, solve.Request{Dockerfile: []byte(outsideDockerfile + "LABEL io.redis-variants.test.edited=1\n"), Exports: []bk.ExportEntry{{
		Type:  bk.ExporterImage,
		Attrs: map[string]string{"name": edited, "push": "true", "registry.insecure": "true"},
	}}}); err != nil {
		t.Fatalf("building the edited image: %v", err)
	}
	file := strings.Replace(outsideFile, localRegistry+"/outside/redis:bookworm", edited, 1)
	if err := os.WriteFile(cfg.File, []byte(file), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Build(ctx, cfg, BuildOptions{Jobs: 1}); err != nil {
		t.Fatalf("building the edited file into the run: %v", err)
	}
	run := &results.Run{Dir: cfg.RunDir}
	builds, _, _ := results.LoadBuilds(run)
	newID := builds["outside"].ConfigDigest
	if newID == "" || newID == oldID {
		t.Fatalf("the edited entry's build is image %q, want one other than %s", newID, oldID)
	}
	// What bench and publish ask before they take an image as verified.
	if ok, why := verify.Passed(run, "outside", newID); ok || !strings.Contains(why, oldID[:19]) || !strings.Contains(why, newID[:19]) || !strings.Contains(why, "verify again") {
		t.Errorf("after the edit: outside verified %v (%q), want it not, naming the verified image %s and the built one %s", ok, why, oldID, newID)
	}
	// Pulled images are never published; the refusal says so, not "passed".
	sel, err := publish.Select(run, publish.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sel.Images {
		if s.Variant.Name == "outside" {
			t.Errorf("publish selected the pulled image outside")
		}
	}

	var out bytes.Buffer
	cfg.Out, cfg.Err = &out, &out
	if err := Verify(ctx, cfg, VerifyOptions{Profile: "quick", Again: true}); err != nil {
		t.Fatalf("verifying the edited image: %v\n%s", err, out.String())
	}
	if err := Bench(ctx, cfg, BenchOptions{Profile: "quick", Generator: bench.ExecGenerator{Binary: enginetest.ToolBinary(t)}}); err != nil {
		t.Fatalf("bench after the edit: %v\n%s", err, out.String())
	}
	var sum bench.Summary
	if err := run.ReadJSON(results.BenchFile, &sum); err != nil || sum.Stale == 0 {
		t.Errorf("bench after the edit set aside %d records of the old image (%v), want some", sum.Stale, err)
	}
	reps, _, _ := results.LoadReplicates(run)
	for _, r := range reps {
		if r.Image == "outside" && r.ImageID != newID {
			t.Errorf("replicate %s #%d of outside is of image %s, want only %s", r.PairKey, r.Rep, r.ImageID, newID)
		}
	}
	if ok, why := verify.Passed(run, "outside", newID); !ok {
		t.Errorf("after verifying again: %s", why)
	}
	if err := Rank(ctx, cfg, ""); err != nil {
		t.Fatalf("rank after the edit: %v\n%s", err, out.String())
	}
	rk, err := run.Ranking()
	if err != nil {
		t.Fatal(err)
	}
	if st, ok := rk.Standing("host"); !ok || len(st.Entries) != 2 {
		t.Errorf("standings after the edit: %+v", rk.Standings)
	}
}

func checkNamed(cs []results.Check, name string) *results.Check {
	for i := range cs {
		if cs[i].Name == name {
			return &cs[i]
		}
	}
	return nil
}
