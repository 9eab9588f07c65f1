package builder

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/redis-variants/redis-variants/dockerfiles"
	"github.com/redis-variants/redis-variants/engine"
	"github.com/redis-variants/redis-variants/engine/enginetest"
	"github.com/redis-variants/redis-variants/results"
	"github.com/redis-variants/redis-variants/variants"
	"github.com/redis-variants/redis-variants/verify"
)

// Profile-guided builds on the real daemons: gcc and clang, each trained
// by the real load generator inside BuildKit, and a BOLT build, next to
// the same spec without either; then a training whose generator fails.
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
  - {name: gcc-o2-libc-pgo-bolt, compiler: gcc-12, opt: O2, allocator: libc,
     pgo: {train: {tests: [set, get, lrange_100], pipelines: [8], clients: 10, keyspace: 1000, requests: 20000}},
     bolt: {train: {tests: [set, get, lrange_100], pipelines: [8], clients: 10, keyspace: 1000, requests: 20000}}}
`

// pgoSetup is where both PGO tests start: pgoYAML's entries, the test
// environment on the real daemons, its recipe options with the static
// load generator, and the repository's root.
func pgoSetup(ctx context.Context, t *testing.T) ([]variants.Variant, *testEnv, dockerfiles.Options, string) {
	t.Helper()
	root := enginetest.RepoRoot(t)
	plan, err := variants.Parse("pgo.yaml", []byte(pgoYAML))
	if err != nil {
		t.Fatal(err)
	}
	env := newTestEnv(ctx, t, root, filepath.Join(root, ".state", "cache", "sources"))
	ropt := env.recipe
	ropt.LoadgenDir = staticLoadgen(t)
	return plan.All(), env, ropt, root
}

// imageBinary reads the redis-server of r's image, its ELF facts and the
// record at report (a PGO or BOLT build's), failing the test without them.
func imageBinary(ctx context.Context, t *testing.T, eng *engine.Client, r Result, report string) ([]byte, *verify.BinaryInfo, []byte) {
	t.Helper()
	bin, err := eng.CopyFileFromImage(ctx, r.Image, r.Server)
	if err != nil {
		t.Fatal(err)
	}
	info, err := verify.ReadBinary(bin)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := eng.CopyFileFromImage(ctx, r.Image, report)
	if err != nil {
		t.Fatalf("%s: no %s in the image: %v", r.Variant.Name, report, err)
	}
	return bin, info, rep
}

// logChecks fails the test on each failed check of name, the record rep
// beside it, and logs the others.
func logChecks(t *testing.T, name string, checks []verify.Check, rep []byte) {
	t.Helper()
	for _, c := range checks {
		if !c.OK {
			t.Errorf("%s: %s: %s\n%s", name, c.Name, c.Detail, rep)
		} else {
			t.Logf("%s: %s: %s", name, c.Name, c.Detail)
		}
	}
}

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
	vs, env, ropt, _ := pgoSetup(ctx, t)
	eng := env.eng
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
		bin, info, rep := imageBinary(ctx, t, eng, r, verify.PGOReportPath)
		logChecks(t, name, verify.PGOChecks(info, verify.ParsePGOReport(rep), r.Labels, r.Variant), rep)
		if name == "gcc-o2-libc-pgo" && string(bin) == string(plainBin) {
			t.Errorf("%s: redis-server is the same binary as gcc-o2-libc's", name)
		}
	}

	// BOLT on top of PGO (the build stage is gcc-o2-libc-pgo's, from the
	// cache): the image's redis-server is the binary BOLT wrote (its
	// marker section, bolt.txt's sha256, functions moved), not the PGO
	// build's; linked again for BOLT, the code was make's own.
	r := by["gcc-o2-libc-pgo-bolt"]
	pgoBin, err := eng.CopyFileFromImage(ctx, by["gcc-o2-libc-pgo"].Image, by["gcc-o2-libc-pgo"].Server)
	if err != nil {
		t.Fatal(err)
	}
	bin, info, rep := imageBinary(ctx, t, eng, r, verify.BOLTReportPath)
	logChecks(t, "gcc-o2-libc-pgo-bolt", verify.BOLTChecks(bin, info, verify.ParseBOLTReport(rep), r.Labels), rep)
	if string(bin) == string(pgoBin) {
		t.Error("gcc-o2-libc-pgo-bolt: redis-server is the same binary as gcc-o2-libc-pgo's")
	}
	if b := verify.ParseBOLTReport(rep); b.RelinkedTextSame != "yes" {
		t.Errorf("gcc-o2-libc-pgo-bolt: linked again with --emit-relocs, the code is not make's own (relinked_text_same %q)", b.RelinkedTextSame)
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

// A profile that travels: the PGO build on this machine's buildkitd
// stores its trained profile in the local registry; a second buildkitd
// started with an empty cache (another machine, as far as BuildKit can
// tell) builds the same variant from the stored profile without training,
// and its redis-server is the same binary, byte for byte.
func TestStoredProfileOnFreshBuilder(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: needs buildkitd, Docker Engine and the local registry")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	vs, env, ropt, root := pgoSetup(ctx, t)
	var v variants.Variant
	for _, e := range vs {
		if e.Name == "gcc-o2-libc-pgo" {
			v = e
		}
	}
	id := make([]byte, 6)
	rand.Read(id)
	repo, err := name.NewRepository(fmt.Sprintf("%s/test-stored-profiles-%x", enginetest.Registry(), id), name.Insecure)
	if err != nil {
		t.Fatal(err)
	}

	b1, _ := env.builder("first", ropt, true)
	b1.opt.ProfilesTo = &repo
	first := b1.Build(ctx, v)
	if first.Status != StatusOK || first.PGO == nil || first.PGO.Stored == "" || first.PGO.From != "" {
		t.Fatalf("first build: %s %s, profile %+v; want built, trained here and stored\n%s", first.Status, first.Error, first.PGO, strings.Join(first.LogTail, "\n"))
	}
	firstBin, err := env.eng.CopyFileFromImage(ctx, first.Image, first.Server)
	if err != nil {
		t.Fatal(err)
	}

	d := startBuildkitd(t, root)
	defer d.stop()
	_, run2 := env.builder("second", ropt, true)
	b2, err := New(ctx, Options{Host: d.addr, Jobs: 1, Run: run2, RunsRoot: env.runs, Engine: env.eng, Recipe: ropt, Force: true,
		Progress: testPrinter(t), ProfilesFrom: []name.Repository{repo}})
	if err != nil {
		t.Fatal(err)
	}
	defer b2.Close()
	start := time.Now()
	second := b2.Build(ctx, v)
	t.Logf("the fresh builder: %s, %d of %d steps cached", time.Since(start).Round(time.Second), second.CachedSteps, second.TotalSteps)
	if second.Status != StatusOK || second.PGO == nil {
		t.Fatalf("second build: %s %s\n%s", second.Status, second.Error, strings.Join(second.LogTail, "\n"))
	}
	if second.PGO.From != first.PGO.Stored || second.PGO.SHA256 != first.PGO.SHA256 {
		t.Errorf("second build's profile %+v, want %s (sha256 %s) from the registry", second.PGO, first.PGO.Stored, first.PGO.SHA256)
	}
	log, _ := os.ReadFile(second.Log)
	if strings.Contains(string(log), "training: SET at pipeline") || strings.Contains(string(log), "pgo-instrumented") {
		t.Errorf("the second build trained (its log %s shows the training)", second.Log)
	}
	if !strings.Contains(string(log), "stored profile: redis.gcda.tar") {
		t.Errorf("the second build's log %s does not show the stored profile's stage", second.Log)
	}
	if got := second.Labels["io.redis-variants.pgo.trained-on"]; got != ropt.BuildCPU {
		t.Errorf("label pgo.trained-on %q, want the first machine's CPU %q", got, ropt.BuildCPU)
	}
	secondBin, err := env.eng.CopyFileFromImage(ctx, second.Image, second.Server)
	if err != nil {
		t.Fatal(err)
	}
	s1, s2 := sha256.Sum256(firstBin), sha256.Sum256(secondBin)
	if s1 != s2 {
		t.Errorf("the fresh builder's redis-server is %x (%d bytes), the first's %x (%d bytes): not the same binary", s2, len(secondBin), s1, len(firstBin))
	} else {
		t.Logf("both builders' redis-server: sha256 %x", s1)
	}
}
