package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis-variants/redis-variants/engine/enginetest"
	"github.com/redis-variants/redis-variants/machine"
	"github.com/redis-variants/redis-variants/progress"
	"github.com/redis-variants/redis-variants/publish"
	"github.com/redis-variants/redis-variants/results"
	"github.com/redis-variants/redis-variants/sbom"
	"github.com/redis-variants/redis-variants/solve"
	"github.com/redis-variants/redis-variants/verify"
)

// releaseFile builds one variant per allocator, cheaply: the SBOM's
// allocator is what is under test. rel-libc is builder's gcc-o1-libc spec,
// so BuildKit's cache serves its compile within a test run.
const releaseFile = `variants:
  - {name: rel-jemalloc, redis: 7.0.15, compiler: gcc-12, opt: O0, allocator: jemalloc}
  - {name: rel-mimalloc, redis: 7.0.15, compiler: gcc-12, opt: O0, allocator: mimalloc}
  - {name: rel-libc, redis: 7.0.15, compiler: gcc-12, opt: O1, allocator: libc}
references: [{name: stock-debian, kind: distro-package}]
`

// TestReleaseGradeImages builds three variants with build --push --attest
// on the real daemons, reads back what the registry holds for each (the
// way imagetools inspect does) and checks it: BuildKit's SLSA provenance
// naming the source archive, an SBOM of the image whose redis-server links
// the allocator that verify's checks find running and the spec asks for,
// an SBOM of the build stage with the Redis tree and its bundled
// dependencies and the compiler; then signs each index and verifies it.
func TestReleaseGradeImages(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: needs Docker Engine, buildkitd and the local registry")
	}
	needRegistry(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	ec := enginetest.Client(t)
	bin := filepath.Join(enginetest.RepoRoot(t), ".state", "bin", "redis-variants-sbom")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("the SBOM generator, which scripts/setup.sh builds: %v", err)
	}
	t.Setenv(sbom.BinaryEnv, bin)
	root := t.TempDir()
	file := filepath.Join(root, "release.yaml")
	if err := os.WriteFile(file, []byte(releaseFile), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errw bytes.Buffer
	dir := filepath.Join(root, "runs", "20261207-000000")
	c := Config{File: file, Runs: filepath.Join(root, "runs"), RunDir: dir, State: filepath.Join(enginetest.RepoRoot(t), ".state"),
		Registry: localRegistry, BuildKit: solve.Address(), Progress: progress.Plain, Out: &out, Err: &errw}
	if err := Build(ctx, c, BuildOptions{Only: []string{"rel-*"}, Jobs: 1, Push: localRegistry, Attest: true}); err != nil {
		t.Fatalf("build --push --attest: %v\n%s", err, errw.String())
	}
	builds, _, err := results.LoadBuilds(&results.Run{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(publish.PasswordEnv, "release")
	keys := filepath.Join(root, "cosign")
	if err := Keygen(Config{Out: io.Discard}, keys); err != nil {
		t.Fatal(err)
	}
	plan, err := c.Plan()
	if err != nil {
		t.Fatal(err)
	}
	// the checks start servers: not beside another process's benchmark
	unlock, err := machine.Lock(ctx, machine.LockFile(c.State), "TestReleaseGradeImages", &errw)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	for _, name := range []string{"rel-jemalloc", "rel-mimalloc", "rel-libc"} {
		b := builds[name]
		if b.Status != "ok" || !b.Attested || !strings.HasPrefix(b.PushedDigest, "sha256:") {
			t.Errorf("%s: build %s attested %v pushed %s@%s: %s", name, b.Status, b.Attested, b.Pushed, b.PushedDigest, b.Error)
			continue
		}
		v, _ := plan.Lookup(name)
		ref, err := publish.Reference(b.Pushed[:strings.LastIndex(b.Pushed, ":")]+"@"+b.PushedDigest, false)
		if err != nil {
			t.Fatal(err)
		}
		att, err := sbom.Read(ctx, ref, "linux/amd64", publish.ReadOptions(ctx)...)
		if err != nil {
			t.Errorf("%s: reading the attestations of %s: %v", name, ref, err)
			continue
		}
		// provenance: BuildKit's own, naming the source archive and the flags
		prov := string(att.Provenance)
		if att.ProvType != sbom.PredicateSLSA1 || !strings.Contains(prov, `"build-arg:REDIS_SHA256"`) || !strings.Contains(prov, `"build-arg:OPTIMIZATION"`) {
			t.Errorf("%s: provenance %s (%d bytes) does not name the build args", name, att.ProvType, len(prov))
		}
		// the image's SBOM: the allocator the server links
		img, ok := att.SBOMs[sbom.CoreName]
		if !ok {
			t.Errorf("%s: no SBOM of the image (have %d)", name, len(att.SBOMs))
			continue
		}
		srv := img.Servers()
		if len(srv) != 1 || srv[0].Fact(sbom.FactPath) != "/usr/local/bin/redis-server" {
			t.Errorf("%s: servers in the SBOM %+v", name, srv)
			continue
		}
		inSBOM := srv[0].Fact(sbom.FactAllocator)
		_, found := verify.ImageChecks(ctx, ec, v, verify.Target{Image: b.Image})
		if inSBOM != v.Allocator || found == nil || found.Allocator != inSBOM {
			t.Errorf("%s: the SBOM says %q, verify finds %+v running, the spec asks %q: want all three the same", name, inSBOM, found, v.Allocator)
		}
		t.Logf("%s: %s; SBOM allocator %s, verify %s (%s); %d packages in the image", name, att.Image, inSBOM, found.Allocator, found.Evidence, len(img.Packages))
		switch v.Allocator {
		case "jemalloc":
			if l := img.Related(srv[0], "STATIC_LINK"); len(l) != 1 || l[0].Name != "jemalloc" || l[0].VersionInfo != "5.2.1" {
				t.Errorf("%s: static links %+v, want the bundled jemalloc 5.2.1", name, l)
			}
		case "mimalloc":
			var names []string
			for _, p := range img.Related(srv[0], "DYNAMIC_LINK") {
				names = append(names, p.Name)
			}
			if !strings.Contains(strings.Join(names, " "), "libmimalloc") {
				t.Errorf("%s: dynamic links %v, want Debian's libmimalloc package", name, names)
			}
		}
		// the build stage's SBOM: the tree, its bundled dependencies, the compiler
		stage, ok := att.SBOMs["sbom-bolted"]
		if !ok {
			var have []string
			for k := range att.SBOMs {
				have = append(have, k)
			}
			t.Errorf("%s: no SBOM of the build stage (have %v)", name, have)
			continue
		}
		// the archive the build used (the catalogue's, or its Debian repack
		// when that is what the source cache holds), named by the
		// provenance too, and where it came from
		src := stage.Find("redis")
		if len(src) != 1 || src[0].VersionInfo != "7.0.15" || len(src[0].Checksums) != 1 {
			t.Errorf("%s: source in the stage SBOM %+v, want redis 7.0.15 with its sha256", name, src)
		} else if sha := src[0].Checksums[0].Value; v.Source.Location(sha) == "" || src[0].DownloadLocation != v.Source.Location(sha) || !strings.Contains(prov, sha) {
			t.Errorf("%s: source sha256 %s from %s: want an archive of the catalogue's source, its location, and the provenance naming it", name, sha, src[0].DownloadLocation)
		}
		deps := map[string]string{}
		if len(src) == 1 {
			for _, p := range stage.Related(src[0], "CONTAINS") {
				deps[p.Name] = p.VersionInfo
			}
		}
		if deps["lua"] != "5.1.5" || deps["hiredis"] != "1.0.3" || deps["jemalloc"] != "5.2.1" {
			t.Errorf("%s: bundled dependencies %v", name, deps)
		}
		if len(stage.Find("gcc-12")) != 1 {
			t.Errorf("%s: the build stage's SBOM lists no gcc-12 package", name)
		}
		// what `redis-variants attestations` prints of it
		var shown bytes.Buffer
		if err := ShowAttestations(ctx, Config{Out: &shown}, ref.String(), "linux/amd64", false, false); err != nil {
			t.Errorf("%s: attestations: %v", name, err)
		} else if got := shown.String(); !strings.Contains(got, "/usr/local/bin/redis-server 7.0.15: allocator "+v.Allocator+",") || !strings.Contains(got, "bundled: jemalloc 5.2.1, lua 5.1.5, hiredis 1.0.3") || !strings.Contains(got, sbom.PredicateSLSA1) {
			t.Errorf("%s: attestations printed:\n%s", name, got)
		}
		// signed by digest, and verified by it
		var sout bytes.Buffer
		if err := SignImages(ctx, Config{Out: &sout}, keys+".key", []string{ref.String()}, false); err != nil {
			t.Errorf("%s: sign: %v", name, err)
		}
		var vout bytes.Buffer
		if err := VerifySignatures(ctx, Config{Out: &vout}, keys+".pub", []string{ref.String()}, false, true); err != nil {
			t.Errorf("%s: verify-signature: %v", name, err)
		}
		var verified publish.Verified
		if err := json.Unmarshal(vout.Bytes(), &verified); err != nil || verified.Digest != b.PushedDigest {
			t.Errorf("%s: verified %q (%v), want the index digest %s", name, vout.String(), err, b.PushedDigest)
		}
	}
}
