package builder

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/redis-variants/redis-variants/engine"
	"github.com/redis-variants/redis-variants/engine/enginetest"
	"github.com/redis-variants/redis-variants/results"
	"github.com/redis-variants/redis-variants/solve"
	"github.com/redis-variants/redis-variants/variants"
)

// Image entries are pulled, not built: redis:7.0.15 resolves through the
// Docker Hub mirror set-up configures (the local registry, where set-up
// placed the rebuilt official image) and is tagged as the entry's own
// image; an image without redis-server and a name no registry has fail,
// naming the reference, and do not stop the entry that works.
func TestBuildPullsImageEntries(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: needs buildkitd, Docker Engine and the local registry")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	reg := enginetest.Registry()
	local, _ := name.ParseReference(reg+"/library/redis:7.0.15", name.Insecure)
	desc, err := remote.Head(local, remote.WithContext(ctx))
	if err != nil {
		t.Fatalf("the local registry has no library/redis:7.0.15 (set-up places it there: make setup): %v", err)
	}
	plan, err := variants.Parse("pull.yaml", []byte(`
references:
  - {name: hub-redis, image: "redis:7.0.15"}
variants:
  - {name: no-server, image: "debian:bookworm-slim"}
  - {name: nowhere, image: "`+reg+`/redis-variants-test/absent:none"}
`))
	if err != nil {
		t.Fatal(err)
	}
	eng, err := engine.New(ctx)
	if err != nil {
		t.Fatalf("Docker Engine is needed: %v", err)
	}
	defer eng.Close()
	runs := t.TempDir()
	run, err := results.Open(filepath.Join(runs, "r"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(ctx, Options{Host: solve.Address(), Run: run, RunsRoot: runs, Engine: eng, Progress: testPrinter(t)})
	if err != nil {
		t.Fatalf("buildkitd is needed: %v", err)
	}
	defer b.Close()
	res, err := b.BuildAll(ctx, plan.All())
	if fe, ok := err.(*FailedError); !ok || len(fe.Failed) != 2 {
		t.Fatalf("Build error = %v, want no-server and nowhere failed", err)
	}
	byName := map[string]Result{}
	for _, r := range res {
		byName[r.Variant.Name] = r
	}

	hub := byName["hub-redis"]
	if hub.Status != StatusOK || hub.Origin != OriginPulled || hub.Pulled == nil {
		t.Fatalf("hub-redis: status %s origin %s pulled %v: %s", hub.Status, hub.Origin, hub.Pulled, hub.Error)
	}
	if hub.Pulled.Digest != desc.Digest.String() {
		t.Errorf("hub-redis pulled digest %s, the registry serves %s", hub.Pulled.Digest, desc.Digest)
	}
	if hub.Server != "/usr/local/bin/redis-server" || PulledRedis(hub) != "7.0.15" {
		t.Errorf("hub-redis: server %q, redis %q", hub.Server, PulledRedis(hub))
	}
	if id, err := eng.ImageID(ctx, ImageRef(hub.Variant)); err != nil || id != hub.ConfigDigest {
		t.Errorf("%s is image %s (%v), want the pulled %s", ImageRef(hub.Variant), id, err, hub.ConfigDigest)
	}
	var saved Result
	if err := run.ReadJSON(filepath.Join("builds", "hub-redis.json"), &saved); err != nil || saved.Pulled == nil || saved.Pulled.Digest != hub.Pulled.Digest {
		t.Errorf("builds/hub-redis.json does not record the pull: %+v (%v)", saved.Pulled, err)
	}

	for entry, want := range map[string]string{"no-server": "has no redis-server", "nowhere": "not found"} {
		r := byName[entry]
		ref := r.Variant.Image
		if r.Status != StatusFailed || !strings.Contains(r.Error, ref) || !strings.Contains(r.Error, want) {
			t.Errorf("%s: status %s, error %q; want a failure naming %s and saying %q", entry, r.Status, r.Error, ref, want)
		}
	}
}

// An official reference no registry has is rebuilt from its recipe once:
// the next run finds that rebuild in Docker Engine, up to date (same
// variant ID, recipe digest and image ID as the newest earlier result),
// and does not rebuild it under a new image ID (the rebuild stamps its
// creation time), so its proof is reused and every record of both runs
// names the same image.
func TestOfficialRebuildIsKept(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: needs buildkitd, Docker Engine and the local registry")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	root := enginetest.RepoRoot(t)
	sources := filepath.Join(root, ".state", "cache", "sources")
	plan, err := variants.Parse("official.yaml", []byte(`
references:
  - {name: absent-official, kind: official, redis: 7.0.15, image: "`+enginetest.Registry()+`/redis-variants-test/absent-official:7.0.15", recipe: official}
`))
	if err != nil {
		t.Fatal(err)
	}
	env := newTestEnv(ctx, t, root, sources)
	b1, _ := env.builder("r1", env.recipe, false)
	res, err := b1.BuildAll(ctx, plan.All())
	if err != nil || len(res) != 1 {
		t.Fatalf("first build: %v %+v", err, res)
	}
	first := res[0]
	if first.Status != StatusOK || first.Origin != OriginRebuilt || first.PullError == "" {
		t.Fatalf("first build: status %s origin %s pull error %q: want rebuilt because no registry has it", first.Status, first.Origin, first.PullError)
	}
	b2, _ := env.builder("r2", env.recipe, false)
	res, err = b2.BuildAll(ctx, plan.All())
	if err != nil || len(res) != 1 {
		t.Fatalf("second build: %v %+v", err, res)
	}
	second := res[0]
	if !second.UpToDate || second.Origin != OriginRebuilt || second.ConfigDigest != first.ConfigDigest || second.PullError == "" {
		t.Errorf("second build: up to date %v, origin %s, image %s (first %s), pull error %q: want the first rebuild, kept",
			second.UpToDate, second.Origin, second.ConfigDigest, first.ConfigDigest, second.PullError)
	}
	// --force rebuilds it.
	b3, _ := env.builder("r3", env.recipe, true)
	res, err = b3.BuildAll(ctx, plan.All())
	if err != nil || len(res) != 1 || res[0].UpToDate || res[0].Status != StatusOK {
		t.Errorf("forced build: %v %+v, want solved again", err, res)
	}
}
