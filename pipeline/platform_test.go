package pipeline

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/redis-variants/redis-variants/engine/enginetest"
	"github.com/redis-variants/redis-variants/progress"
	"github.com/redis-variants/redis-variants/publish"
	"github.com/redis-variants/redis-variants/results"
	"github.com/redis-variants/redis-variants/solve"
	"github.com/redis-variants/redis-variants/verify"
)

// platformFile is one cheap build spec (TestReleaseGradeImages's rel-libc,
// so BuildKit's cache serves the amd64 compile within a test run) and its
// arm64 twin for Graviton2.
const platformFile = `variants:
  - {name: rel-libc, redis: 7.0.15, compiler: gcc-12, opt: O1, allocator: libc}
  - {name: rel-libc-arm64, redis: 7.0.15, compiler: gcc-12, opt: O1, allocator: libc, platform: linux/arm64, mcpu: graviton2}
  - {name: rel-trixie-arm64, redis: 7.0.15, base: debian:trixie-slim, compiler: gcc-14, opt: O1, allocator: libc, platform: linux/arm64}
references: [{name: stock-debian, kind: distro-package}]
`

// TestArm64Twin cross-compiles an arm64 variant on the real daemons,
// pushes it with its amd64 twin and reads back their multi-platform index,
// verifies the arm64 image under emulation (the suite and every check),
// shows that without emulation the verification fails saying why, and
// that bench leaves the arm64 image out on this amd64 machine.
func TestArm64Twin(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: needs Docker Engine, buildkitd, the local registry and qemu-aarch64 in binfmt_misc")
	}
	needRegistry(t)
	if _, err := os.Stat(filepath.Join(verify.BinfmtDir, "qemu-aarch64")); err != nil {
		t.Fatalf("this test needs qemu-aarch64 registered with binfmt_misc (scripts/setup.sh registers it): %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	enginetest.Client(t)
	root := t.TempDir()
	file := filepath.Join(root, "platform.yaml")
	if err := os.WriteFile(file, []byte(platformFile), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errw bytes.Buffer
	dir := filepath.Join(root, "runs", "20261207-000000")
	c := Config{File: file, Runs: filepath.Join(root, "runs"), RunDir: dir, State: filepath.Join(enginetest.RepoRoot(t), ".state"),
		Registry: localRegistry, BuildKit: solve.Address(), Progress: progress.Plain, Out: &out, Err: &errw}
	if err := Build(ctx, c, BuildOptions{Only: []string{"rel-libc", "rel-libc-arm64"}, Jobs: 1, Push: localRegistry}); err != nil {
		t.Fatalf("build --push: %v\n%s", err, errw.String())
	}
	builds, _, err := results.LoadBuilds(&results.Run{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	amd, arm := builds["rel-libc"], builds["rel-libc-arm64"]
	if amd.PushedDigest == "" || arm.PushedDigest == "" {
		t.Fatalf("pushed digests: amd64 %q, arm64 %q", amd.PushedDigest, arm.PushedDigest)
	}

	// the index: both platforms, each the digest its build pushed
	ref := amd.Pushed + "-platforms"
	r, err := publish.Reference(ref, false)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := remote.Index(r, publish.ReadOptions(ctx)...)
	if err != nil {
		t.Fatalf("reading the platform index %s: %v\n%s", ref, err, errw.String())
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, m := range im.Manifests {
		got[m.Platform.OS+"/"+m.Platform.Architecture] = m.Digest.String()
	}
	if len(im.Manifests) != 2 || got["linux/amd64"] != amd.PushedDigest || got["linux/arm64"] != arm.PushedDigest {
		t.Errorf("index %s holds %v, want linux/amd64 %s and linux/arm64 %s", ref, got, amd.PushedDigest, arm.PushedDigest)
	}
	armImg, err := idx.Image(mustHash(t, arm.PushedDigest))
	if err != nil {
		t.Fatal(err)
	}
	cf, err := armImg.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.Architecture != "arm64" || cf.Config.Labels["io.redis-variants.mcpu"] != "neoverse-n1" || cf.Config.Labels["io.redis-variants.platform"] != "linux/arm64" {
		t.Errorf("arm64 image: architecture %q, labels mcpu %q platform %q", cf.Architecture, cf.Config.Labels["io.redis-variants.mcpu"], cf.Config.Labels["io.redis-variants.platform"])
	}

	// verify under emulation: the suite in the build and against the image, every check
	if err := Verify(ctx, c, VerifyOptions{Only: []string{"rel-libc", "rel-libc-arm64"}, Again: true, NoTable: true}); err != nil {
		t.Fatalf("verify: %v\n%s", err, errw.String())
	}
	rep := loadVerification(t, dir, "rel-libc-arm64")
	if rep.Status != "passed" || !strings.Contains(rep.Emulation, "qemu-aarch64") || rep.Suite.Passed < 500 || rep.External == nil || rep.External.Passed == 0 {
		t.Errorf("arm64 verification: status %s, emulation %q, suite %d passed, external %+v", rep.Status, rep.Emulation, rep.Suite.Passed, rep.External)
	}
	for name, want := range map[string]string{"platform": "qemu-aarch64", "binary architecture": "the binary is EM_AARCH64", "binary -mcpu": "neoverse-n1", "allocator": "libc"} {
		c := findCheck(rep.Checks, name)
		if c == nil || !c.OK || !strings.Contains(c.Detail, want) {
			t.Errorf("check %s: %+v, want passed naming %q", name, c, want)
		}
	}
	if c := findCheck(rep.Checks, "isa"); c == nil || !c.NotApplicable {
		t.Errorf("the x86-64 ISA gate on an arm64 image: %+v, want not applicable", c)
	}

	// publish from Docker Engine: a ranking naming rel-libc (written here:
	// what is under test is the publication, not a measurement) puts its
	// verified arm64 twin beside it, the tags naming an index of both
	run := &results.Run{Dir: dir}
	rk := results.Ranking{References: []string{"stock-debian"}, Runtimes: []string{"host"}, Standings: []results.Standings{{Runtime: "host", Primary: "stock-debian",
		Entries: []results.Entry{{Image: "rel-libc", Runtime: "host", Rank: 1, Score: 1.1, Lo: 1.05, Hi: 1.15,
			Versus: []results.Score{{Reference: "stock-debian", Score: 1.1, Lo: 1.05, Hi: 1.15, Verdict: "faster"}}}}}}}
	if err := run.WriteJSON(results.RankingFile, rk); err != nil {
		t.Fatal(err)
	}
	pub, err := publish.Publish(ctx, run, publish.Options{Registry: localRegistry, Repo: "redis-variants-twins", Only: []string{"rel-libc"}})
	if err != nil {
		t.Fatalf("publish: %v", err)
	}
	if len(pub.Images) != 1 || len(pub.Images[0].Platforms) != 1 || pub.Images[0].Index == "" || len(pub.Images[0].Pushed) == 0 {
		t.Fatalf("published %+v", pub.Images)
	}
	pi := pub.Images[0]
	tr, err := publish.Reference(pi.Pushed[0], false)
	if err != nil {
		t.Fatal(err)
	}
	tidx, err := remote.Index(tr, publish.ReadOptions(ctx)...)
	if err != nil {
		t.Fatalf("the tag %s is not an index: %v", pi.Pushed[0], err)
	}
	tim, err := tidx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	got = map[string]string{}
	for _, m := range tim.Manifests {
		got[m.Platform.OS+"/"+m.Platform.Architecture] = m.Digest.String()
	}
	if len(got) != 2 || got["linux/amd64"] != pi.Digest || got["linux/arm64"] != pi.Platforms[0].Digest {
		t.Errorf("tag %s names %v, want linux/amd64 %s and linux/arm64 %s", pi.Pushed[0], got, pi.Digest, pi.Platforms[0].Digest)
	}
	twin, err := tidx.Image(mustHash(t, pi.Platforms[0].Digest))
	if err != nil {
		t.Fatal(err)
	}
	tcf, err := twin.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if tcf.Architecture != "arm64" || tcf.Config.Labels[publish.KeyTwinOf] != "rel-libc" || tcf.Config.Labels[publish.KeyVerifyStatus] != "passed" {
		t.Errorf("published twin: architecture %q, twin-of %q, verify %q", tcf.Architecture, tcf.Config.Labels[publish.KeyTwinOf], tcf.Config.Labels[publish.KeyVerifyStatus])
	}

	// without emulation the image cannot run here: verify says so and fails
	verify.BinfmtDir = t.TempDir()
	defer func() { verify.BinfmtDir = "/proc/sys/fs/binfmt_misc" }()
	if err := Verify(ctx, c, VerifyOptions{Only: []string{"rel-libc-arm64"}, Again: true, NoTable: true}); err == nil {
		t.Error("verify without emulation succeeded")
	}
	rep = loadVerification(t, dir, "rel-libc-arm64")
	if c := findCheck(rep.Checks, "platform"); rep.Status != "failed" || c == nil || c.OK || !strings.Contains(c.Detail, "no qemu-aarch64 entry") || rep.Suite.Ran {
		t.Errorf("without emulation: status %s, platform check %+v, suite ran %v", rep.Status, c, rep.Suite.Ran)
	}

	// a base whose tag holds no arm64 image (set-up seeds arm64 for
	// bookworm only) stops the build saying so, instead of BuildKit's
	// warning and an amd64 runtime under an arm64 label
	err = Build(ctx, c, BuildOptions{Only: []string{"rel-trixie-arm64"}, Jobs: 1})
	tb, _, lerr := results.LoadBuilds(&results.Run{Dir: dir})
	if lerr != nil {
		t.Fatal(lerr)
	}
	if b := tb["rel-trixie-arm64"]; err == nil || b.Status != "failed" || !strings.Contains(strings.Join(b.LogTail, "\n"), "the base image is amd64, not arm64: its tag holds no arm64 image") {
		t.Errorf("arm64 build on an amd64-only base: err %v, status %q, log tail %q", err, b.Status, b.LogTail)
	}

	// bench measures amd64 images only on this machine
	imgs, warnings, err := benchImages(&results.Run{Dir: dir}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, im := range imgs {
		if im.Name == "rel-libc-arm64" {
			t.Error("bench would measure the arm64 image under emulation")
		}
	}
	if !strings.Contains(strings.Join(warnings, "\n"), "skipping rel-libc-arm64: a linux/arm64 image is benchmarked only on a matching CPU") {
		t.Errorf("bench's warnings do not say why the arm64 image is left out: %q", warnings)
	}
}

func loadVerification(t *testing.T, dir, name string) results.Verification {
	t.Helper()
	reports, _, err := results.LoadVerifications(&results.Run{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	rep, ok := reports[name]
	if !ok {
		t.Fatalf("no verification of %s in %s", name, dir)
	}
	return rep
}

func findCheck(cs []results.Check, name string) *results.Check {
	for i := range cs {
		if cs[i].Name == name {
			return &cs[i]
		}
	}
	return nil
}

func mustHash(t *testing.T, s string) v1.Hash {
	t.Helper()
	h, err := v1.NewHash(s)
	if err != nil {
		t.Fatal(err)
	}
	return h
}
