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
	if err := Build(ctx, c, BuildOptions{Only: []string{"rel-*"}, Jobs: 1, Push: localRegistry}); err != nil {
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
	if err := Verify(ctx, c, VerifyOptions{Only: []string{"rel-libc-arm64"}, Again: true, NoTable: true}); err != nil {
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
