package pipeline

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/redis-variants/redis-variants/artifact"
	"github.com/redis-variants/redis-variants/bench"
	"github.com/redis-variants/redis-variants/engine/enginetest"
	"github.com/redis-variants/redis-variants/publish"
	"github.com/redis-variants/redis-variants/rank"
	"github.com/redis-variants/redis-variants/results"
	"github.com/redis-variants/redis-variants/solve"
	"github.com/redis-variants/redis-variants/variants"
	"github.com/redis-variants/redis-variants/verify"
)

const localRegistry = "127.0.0.1:5000"

// publishedFixture writes run A, "measured on another machine" (CPU model
// "Fixture CPU A"): one verified variant, gcc-o2, whose image is the
// Docker Engine image img, ranked 1.25× its reference stock.
func publishedFixture(t *testing.T, dir, imgID, engineRef string) *results.Run {
	t.Helper()
	run, err := results.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	v := variants.Variant{Name: "gcc-o2", Kind: variants.KindVariant, ID: "0123456789ab", Redis: "7.0.15",
		Compiler: variants.Compiler{Family: "gcc", Version: "12"}, Opt: "O2", LTO: "off", Allocator: variants.AllocJemalloc}
	ref := variants.Variant{Name: "stock", Kind: variants.KindDistro, ID: "ba9876543210", Redis: "7.0.15", Reference: true}
	b := results.Build{Variant: v, Image: engineRef, ConfigDigest: imgID, Status: "ok", Origin: "built"}
	score := func(x float64) rank.Score {
		return rank.Score{Reference: "stock", Score: rank.Num(x), Lo: rank.Num(x - 0.02), Hi: rank.Num(x + 0.02), Verdict: rank.Faster}
	}
	rk := rank.Ranking{References: []string{"stock"}, Runtimes: []string{"host"}, CPUModels: []string{"Fixture CPU A"},
		Standings: []rank.Standings{{Runtime: "host", Primary: "stock", Entries: []rank.Entry{
			{Image: "gcc-o2", Runtime: "host", Rank: 1, Score: 1.25, Lo: 1.23, Hi: 1.27, SepP: rank.Num(math.NaN()), Versus: []rank.Score{score(1.25)}},
			{Image: "stock", Runtime: "host", Reference: true, Rank: 2, Score: 1, Lo: 0.98, Hi: 1.02, SepP: rank.Num(math.NaN()), Versus: []rank.Score{score(1)}},
		}}}}
	for _, err := range []error{
		run.WritePlan(&variants.Plan{Variants: []variants.Variant{v}, References: []variants.Variant{ref}}),
		run.WriteJSON(results.BuildRel("gcc-o2"), b),
		verify.Write(run, verify.Report{Variant: "gcc-o2", ID: v.ID, ImageID: b.ConfigDigest, Status: verify.StatusPassed, Profile: "quick",
			Suite: verify.Suite{Ran: true, Passed: 100}, Checks: []verify.Check{{Name: "ping", OK: true}}}),
		run.WriteRanking(&rk),
		run.WriteMachine(results.Machine{CPUModel: "Fixture CPU A", CPUs: 64, Level: "v4", Kernel: "6.1", Cgroup: "v2"}),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	return run
}

const roundTripFile = `references:
  - name: stock
    kind: image
    image: %s
runtimes:
  - {name: host, network: host}
profiles:
  tiny:
    tests: [GET]
    clients: 50
    pipelines: [64]   # the generators' headroom (see minimalFile)
    data_size: 3
    keyspace: 1000
    duration: 1s
    warmup: 1s        # after 100-300 ms, first windows fell to 75-88% busy here
    replicates: 4
    looks: 1          # one look: the round trip is under test
    windows: 2
    axis_replicates: 2
    runtimes: first
    trials: 1
    budget: 5m
    resolution: 25%   # the round trip is under test, not the precision (4 replicates of GET gave ±7.05% in CI on 2026-12-02)
`

// TestPublishedImagesRoundTrip is the multi-machine path on real parts:
// run A (a fixture standing for another machine) is published to the local
// Distribution registry with its results attached; bench --images pulls the
// published image by digest into run B on this machine and measures it
// against the file's reference with the real bench and rank; publishing
// run B attaches its results to the same image without changing it; and
// history --from the registry alone shows both machines' rows.
func TestPublishedImagesRoundTrip(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: needs Docker Engine, buildkitd and the local registry")
	}
	needRegistry(t)
	ctx := context.Background()
	ec := enginetest.Client(t)
	img := enginetest.Image(t)
	id, err := ec.ImageID(ctx, img)
	if err != nil {
		t.Fatal(err)
	}
	rnd := make([]byte, 4)
	rand.Read(rnd)
	repoName := "roundtrip-" + hex.EncodeToString(rnd)

	// The reference: the same test image, in the registry under its own name.
	src := publish.EngineSource(ec, t.TempDir())
	refImg, release, err := src.Image(ctx, img)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	stockRef := localRegistry + "/" + repoName + "-stock:1"
	if err := remote.Write(mustTag(t, stockRef), refImg); err != nil {
		t.Fatal(err)
	}

	root := t.TempDir()
	engineRef := "redis-variants/gcc-o2:0123456789ab"
	if err := ec.Tag(ctx, id, engineRef); err != nil {
		t.Fatal(err)
	}
	runA := publishedFixture(t, filepath.Join(root, "a", "20261201-100000"), id, engineRef)
	// signed with a key keygen writes, as publish --sign does
	t.Setenv(publish.PasswordEnv, "test password")
	keys := filepath.Join(root, "cosign")
	if err := Keygen(Config{Out: io.Discard}, keys); err != nil {
		t.Fatal(err)
	}
	signer, err := publish.LoadSigner(keys + ".key")
	if err != nil {
		t.Fatal(err)
	}
	pubA, err := publish.Publish(ctx, runA, publish.Options{Registry: localRegistry, Repo: repoName, Signer: signer})
	if err != nil {
		t.Fatal(err)
	}
	digest := pubA.Images[0].Digest
	// the image and its results artifact are signed, and verify-signature
	// checks both by tag and by digest on the real registry
	if len(pubA.Images[0].Signatures) != 2 {
		t.Errorf("signatures %v, want the image's and the results artifact's", pubA.Images[0].Signatures)
	}
	var vout bytes.Buffer
	refs := append([]string{pubA.Images[0].Ref, pubA.Images[0].Results}, pubA.Images[0].Pushed...)
	if err := VerifySignatures(ctx, Config{Out: &vout}, keys+".pub", refs, false, false); err != nil || strings.Count(vout.String(), "ok   ") != len(refs) {
		t.Errorf("verify-signature %v: %v\n%s", refs, err, vout.String())
	}
	tagsBefore, _ := remote.List(mustRepo(t, repoName))

	file := filepath.Join(root, "variants.yaml")
	if err := os.WriteFile(file, []byte(strings.Replace(roundTripFile, "%s", stockRef, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errw bytes.Buffer
	dirB := filepath.Join(root, "b", "20261201-110000")
	c := Config{File: file, Runs: filepath.Join(root, "b"), RunDir: dirB, State: filepath.Join(root, "state"),
		Registry: localRegistry, BuildKit: solve.Address(), Out: &out, Err: &errw}
	if err := BenchImages(ctx, c, BenchOptions{Profile: "tiny", Seed: 1, Generator: bench.ExecGenerator{Binary: enginetest.ToolBinary(t)}}, ImagesOptions{Images: []string{localRegistry + "/" + repoName}}); err != nil {
		t.Fatalf("bench --images: %v\n%s", err, errw.String())
	}
	runB := &results.Run{Dir: dirB}
	builds, _, err := results.LoadBuilds(runB)
	if err != nil {
		t.Fatal(err)
	}
	b := builds["gcc-o2"]
	if b.Status != "ok" || b.Origin != "pulled" || b.Pulled == nil || b.Pulled.Digest != digest || !strings.HasPrefix(b.Variant.Image, localRegistry+"/"+repoName+"@"+digest) {
		t.Fatalf("run B's gcc-o2 build record %+v (pulled %+v): want pulled from %s at %s", b, b.Pulled, repoName, digest)
	}
	if b.Variant.Compiler.Family != "gcc" || b.Variant.Opt != "O2" || b.Variant.ID != "0123456789ab" {
		t.Errorf("build facts from the labels: %+v", b.Variant)
	}
	rk, err := runB.Ranking()
	if err != nil {
		t.Fatal(err)
	}
	st, ok := rk.Standing("host")
	if !ok || len(st.Entries) != 2 {
		t.Fatalf("run B's standings %+v", rk.Standings)
	}

	// Publishing run B attaches its results to the image it pulled, and
	// changes no tag.
	c.Out, c.Err = &out, &errw
	if err := Publish(ctx, c, PublishOptions{Repo: repoName, Runtime: "host"}); err != nil {
		t.Fatalf("publishing run B: %v\n%s", err, errw.String())
	}
	tagsAfter, _ := remote.List(mustRepo(t, repoName))
	if strings.Join(tagsBefore, ",") != strings.Join(tagsAfter, ",") {
		t.Errorf("tags before %v, after attaching run B %v", tagsBefore, tagsAfter)
	}
	found, err := artifact.Find(ctx, mustRepo(t, repoName).Digest(digest))
	if err != nil || len(found) != 2 {
		t.Fatalf("results attached to %s: %+v %v, want runs A and B", digest, found, err)
	}

	// history from the registry alone: one row per machine.
	var hist bytes.Buffer
	hc := Config{Runs: filepath.Join(root, "none"), Out: &hist, Err: &errw}
	if err := History(ctx, hc, HistoryOptions{From: []string{localRegistry + "/" + repoName}, NoRuns: true, By: "variant", CSV: "-"}, nil); err != nil {
		t.Fatalf("history --from: %v\n%s", err, errw.String())
	}
	csv := hist.String()
	if !strings.Contains(csv, "Fixture CPU A") || strings.Count(csv, "\n") != 3 {
		t.Errorf("history --from %s:\n%s\nwant a header and a row per machine (Fixture CPU A, this one)", repoName, csv)
	}
	if strings.Contains(csv, "Fixture CPU A") && !strings.Contains(csv, "1.25") {
		t.Errorf("run A's row lost its score:\n%s", csv)
	}
}

func mustTag(t *testing.T, s string) name.Tag {
	tg, err := name.NewTag(s, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

func mustRepo(t *testing.T, repo string) name.Repository {
	r, err := name.NewRepository(localRegistry+"/"+repo, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
