package builder

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis-variants/redis-variants/dockerfiles"
	"github.com/redis-variants/redis-variants/engine/enginetest"
	"github.com/redis-variants/redis-variants/results"
	"github.com/redis-variants/redis-variants/variants"
	"github.com/redis-variants/redis-variants/verify"
)

// Profile-guided builds on the real daemons: gcc and clang, each trained
// by the real load generator inside BuildKit, next to the same spec
// without PGO; then a training whose generator fails.
const pgoYAML = `
sources:
  redis-7.0.15:
    url: "debian:pool/main/r/redis/redis_7.0.15.orig.tar.gz"
    sha256: 4b1dc4ee6d622a09fff9c6777191209750fb5e5a725ef78ea012d6eef4c22982
references: []  # none: this test builds variants only
variants:
  - {name: gcc-o2-libc, compiler: gcc-12, opt: O2, allocator: libc}
  - {name: gcc-o2-libc-pgo, compiler: gcc-12, opt: O2, allocator: libc,
     pgo: {train: {tests: [set, get, lrange_100], pipelines: [8], clients: 10, keyspace: 1000, requests: 20000}}}
  - {name: clang-o2-libc-pgo, compiler: clang-16, opt: O2, allocator: libc,
     pgo: {train: {tests: [set, get], pipelines: [8], clients: 10, keyspace: 1000, requests: 20000}}}
`

// staticLoadgen builds the static redis-loadgen into a folder of its own.
func staticLoadgen(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command("go", "build", "-o", filepath.Join(dir, dockerfiles.LoadgenBinary), "github.com/redis-variants/redis-variants/loadgen/cmd/redis-loadgen")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the static load generator: %v\n%s", err, out)
	}
	return dir
}

func TestPGOBuildIntegration(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: needs buildkitd and Docker Engine")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Minute)
	defer cancel()
	root := enginetest.RepoRoot(t)
	sources := filepath.Join(root, ".state", "cache", "sources")
	plan, err := variants.Parse("pgo.yaml", []byte(pgoYAML))
	if err != nil {
		t.Fatal(err)
	}
	vs := plan.All()
	env := newTestEnv(ctx, t, root, sources)
	eng := env.eng
	ropt := env.recipe
	ropt.LoadgenDir = staticLoadgen(t)
	newBuilder := func(run string, ro dockerfiles.Options) (*Builder, *results.Run) {
		return env.builder(run, ro, true)
	}

	b, run := newBuilder("r1", ropt)
	start := time.Now()
	res, err := b.BuildAll(ctx, vs)
	t.Logf("build: %s", time.Since(start))
	if err != nil {
		for _, r := range res {
			t.Logf("%s: %s %s\n%s", r.Variant.Name, r.Status, r.Error, strings.Join(r.LogTail, "\n"))
		}
		t.Fatal(err)
	}
	by := map[string]Result{}
	for _, r := range res {
		by[r.Variant.Name] = r
	}
	plainBin, err := eng.CopyFileFromImage(ctx, by["gcc-o2-libc"].Image, by["gcc-o2-libc"].Server)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"gcc-o2-libc-pgo", "clang-o2-libc-pgo"} {
		r := by[name]
		p := r.PGO
		if p == nil {
			t.Errorf("%s: no profile recorded", name)
			continue
		}
		data, err := os.ReadFile(p.File)
		if err != nil {
			t.Errorf("%s: the profile is not in the run folder: %v", name, err)
			continue
		}
		sum := sha256.Sum256(data)
		if hex.EncodeToString(sum[:]) != p.SHA256 || int64(len(data)) != p.Bytes || p.Bytes == 0 {
			t.Errorf("%s: profile %s is %d bytes with sha256 %x, recorded %d and %s", name, p.File, len(data), sum, p.Bytes, p.SHA256)
		}
		if !strings.HasPrefix(p.File, run.Path(results.PGORel(name))) {
			t.Errorf("%s: profile at %s, want under the run's %s", name, p.File, results.PGORel(name))
		}
		if csv, err := os.ReadFile(p.Training); err != nil || !strings.Contains(string(csv), `"SET"`) {
			t.Errorf("%s: the training's figures (%s) do not show its SET run: %v\n%s", name, p.Training, err, csv)
		}
		if got := r.Labels["io.redis-variants.pgo.profile"]; got != p.SHA256 {
			t.Errorf("%s: label io.redis-variants.pgo.profile=%q, profile %s", name, got, p.SHA256)
		}
		bin, err := eng.CopyFileFromImage(ctx, r.Image, r.Server)
		if err != nil {
			t.Fatal(err)
		}
		info, err := verify.ReadBinary(bin)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := eng.CopyFileFromImage(ctx, r.Image, verify.PGOReportPath)
		if err != nil {
			t.Fatalf("%s: no %s in the image: %v", name, verify.PGOReportPath, err)
		}
		for _, c := range verify.PGOChecks(info, verify.ParsePGOReport(rep), r.Labels, r.Variant) {
			if !c.OK {
				t.Errorf("%s: %s: %s\n%s", name, c.Name, c.Detail, rep)
			} else {
				t.Logf("%s: %s: %s", name, c.Name, c.Detail)
			}
		}
		if name == "gcc-o2-libc-pgo" && string(bin) == string(plainBin) {
			t.Errorf("%s: redis-server is the same binary as gcc-o2-libc's", name)
		}
	}

	// A training that fails (its generator exits 1) fails that variant,
	// naming the training step with its log's tail; the others build.
	bad := t.TempDir()
	if err := os.WriteFile(filepath.Join(bad, dockerfiles.LoadgenBinary), []byte("#!/bin/sh\necho 'fake generator: refusing' >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	ro := ropt
	ro.LoadgenDir = bad
	b, _ = newBuilder("r2", ro)
	res, err = b.BuildAll(ctx, []variants.Variant{vs[0], vs[1]})
	var fe *FailedError
	if !errors.As(err, &fe) || len(fe.Failed) != 1 || fe.Failed[0] != "gcc-o2-libc-pgo" {
		t.Fatalf("with a failing generator: %v, want exactly gcc-o2-libc-pgo failed", err)
	}
	for _, r := range res {
		switch r.Variant.Name {
		case "gcc-o2-libc":
			if r.Status != StatusOK {
				t.Errorf("gcc-o2-libc: %s beside a failing training: %s", r.Status, r.Error)
			}
		case "gcc-o2-libc-pgo":
			tail := strings.Join(r.LogTail, "\n")
			if !strings.Contains(r.Error, "pgo training") || !strings.Contains(tail, "redis-loadgen failed") {
				t.Errorf("gcc-o2-libc-pgo: error %q, tail:\n%s\nwant the training's failure", r.Error, tail)
			}
		}
	}
}
