package publish

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/moby/moby/client"
	"github.com/redis/go-redis/v9"

	"github.com/redis-variants/redis-variants/artifact"
	"github.com/redis-variants/redis-variants/engine"
	"github.com/redis-variants/redis-variants/engine/enginetest"
	"github.com/redis-variants/redis-variants/results"
)

// localRegistry is the Distribution registry scripts/setup.sh starts.
const localRegistry = "127.0.0.1:5000"

// dockerFixture is a run whose one variant, gcc-o2, is the enginetest
// redis-server image (Debian's redis-server on bookworm-slim).
func dockerFixture(t *testing.T, ec *engine.Client, img string) (*results.Run, Source) {
	t.Helper()
	id, err := ec.ImageID(context.Background(), img)
	if err != nil {
		t.Fatal(err)
	}
	vs := []fixtureVariant{
		{name: "gcc-o2", level: "v1", score: 1.10, rank: 1},
		{name: "gcc-o3", level: "v1", score: 1.05, rank: 2, verify: "failed"},
		{name: "stock-debian", ref: true, score: 1.0, rank: 3},
	}
	run := writeFixture(t, vs, map[string]string{"gcc-o2": id})
	// The fixture names images redis-variants/<name>:<id>; serve those
	// names from the one test image.
	return run, aliasSource{EngineSource(ec, t.TempDir()), img}
}

type aliasSource struct {
	Source
	img string
}

func (a aliasSource) Image(ctx context.Context, _ string) (v1.Image, func(), error) {
	return a.Source.Image(ctx, a.img)
}

// loadBack pulls ref with ggcr and loads it into Docker Engine under tag.
func loadBack(t *testing.T, ec *engine.Client, ref, tag string) {
	t.Helper()
	r, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	img, err := remote.Image(r)
	if err != nil {
		t.Fatalf("pulling %s back: %v", ref, err)
	}
	tg, _ := name.NewTag(tag)
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(tarball.Write(tg, img, pw)) }()
	if err := ec.Load(context.Background(), pr); err != nil {
		t.Fatalf("loading %s into Docker Engine: %v", ref, err)
	}
	t.Cleanup(func() {
		ec.API().ImageRemove(context.Background(), tag, client.ImageRemoveOptions{})
	})
}

// runPing starts img with engine.StartServer and PINGs it.
func runPing(t *testing.T, ec *engine.Client, img string, labels map[string]string) {
	t.Helper()
	ctx := context.Background()
	srv, err := ec.StartServer(ctx, engine.ServerSpec{Image: img, Network: "bridge", Labels: labels})
	if err != nil {
		t.Fatalf("starting %s: %v", img, err)
	}
	defer ec.Remove(ctx, srv.ID)
	if err := ec.WaitReady(ctx, srv, 30*time.Second); err != nil {
		t.Fatalf("%s not ready: %v", img, err)
	}
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, Protocol: 2, DisableIdentity: true})
	defer rdb.Close()
	if pong, err := rdb.Ping(ctx).Result(); err != nil || pong != "PONG" {
		t.Fatalf("PING %s: %q %v", img, pong, err)
	}
}

func hashes(hs []v1.Hash) []string {
	var out []string
	for _, h := range hs {
		out = append(out, h.String())
	}
	return out
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// TestPublishDockerImage publishes a real Docker Engine image to the
// in-process registry and to the local Distribution registry, pulls it
// back, compares labels and annotations, runs it and PINGs it; the
// variant that failed verification leaves no tag.
func TestPublishDockerImage(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: needs Docker Engine and the local registry")
	}
	ec := enginetest.Client(t)
	img := enginetest.Image(t)
	if resp, err := http.Get("http://" + localRegistry + "/v2/"); err != nil {
		t.Fatalf("this test needs the Distribution registry at %s (scripts/setup.sh starts it): %v", localRegistry, err)
	} else {
		resp.Body.Close()
	}
	session := enginetest.Session(t)
	run, src := dockerFixture(t, ec, img)
	ctx := context.Background()

	srv := quietRegistry(nil)
	defer srv.Close()
	inproc := strings.TrimPrefix(srv.URL, "http://")
	repoName := "redis-variants-test-" + randomHex(4)

	layers := t.TempDir() // shared: the second registry needs no compression
	start := time.Now()
	defer func() { t.Logf("total %v", time.Since(start)) }()
	for _, reg := range []string{inproc, localRegistry} {
		t.Logf("%v: publishing to %s", time.Since(start), reg)
		opts := testOptions(reg, src)
		opts.Repo = repoName
		opts.LayerCache = layers
		pub, err := Publish(ctx, run, opts)
		if err != nil {
			t.Fatalf("publishing to %s: %v", reg, err)
		}
		if len(pub.Images) != 1 || len(pub.Refused) != 1 || !strings.Contains(pub.Refused[0].Reason, "failed verification") {
			t.Fatalf("%s: images %+v refused %+v", reg, pub.Images, pub.Refused)
		}
		im := pub.Images[0]
		wantTags := []string{reg + "/" + repoName + ":7.0.15-gcc-o2", reg + "/" + repoName + ":7.0.15-best", reg + "/" + repoName + ":7.0.15-best-v1"}
		if strings.Join(im.Pushed, " ") != strings.Join(wantTags, " ") {
			t.Errorf("%s: pushed %v, want %v", reg, im.Pushed, wantTags)
		}
		repo, _ := name.NewRepository(reg + "/" + repoName)
		tags, err := remote.List(repo)
		tags = slices.DeleteFunc(tags, func(t string) bool { return strings.HasPrefix(t, "sha256-") }) // referrers fallback tags
		if err != nil || len(tags) != 3 {
			t.Errorf("%s: tags %v %v, want the three of gcc-o2 (none for the unverified gcc-o3)", reg, tags, err)
		}
		// The run's results are attached to the image, and come back as
		// the run folder they were packed from.
		a, err := artifact.Resolve(ctx, repo.Tag("7.0.15-best"))
		if err != nil {
			t.Fatalf("%s: the results attached to the best image: %v", reg, err)
		}
		if a.Ref.String() != im.Results || a.Run() != "20261129-223300" || a.Manifest.Subject.Digest.String() != im.Digest {
			t.Errorf("%s: resolved %s (run %s, subject %v), published %s on %s", reg, a.Ref, a.Run(), a.Manifest.Subject, im.Results, im.Digest)
		}
		back, err := a.Pull(ctx, filepath.Join(t.TempDir(), a.Run()))
		if err != nil {
			t.Fatal(err)
		}
		if rk, err := back.Ranking(); err != nil || rk.Standings[0].Entries[0].Image != "gcc-o2" || rk.Standings[0].Entries[0].Rank != 1 {
			t.Errorf("%s: the pulled ranking: %+v %v", reg, rk, err)
		}
		pulled, err := remote.Image(repo.Tag("7.0.15-best"))
		if err != nil {
			t.Fatal(err)
		}
		m, _ := pulled.Manifest()
		cf, _ := pulled.ConfigFile()
		d, _ := pulled.Digest()
		if d.String() != im.Digest {
			t.Errorf("%s: pulled digest %s, published %s", reg, d, im.Digest)
		}
		for k, v := range im.Annotations {
			if m.Annotations[k] != v || cf.Config.Labels[k] != v {
				t.Errorf("%s: %s: annotation %q label %q, want %q", reg, k, m.Annotations[k], cf.Config.Labels[k], v)
			}
		}
		if m.Annotations[KeyScore] != "1.1000" || m.Annotations[KeyVerifyStatus] != "passed" {
			t.Errorf("%s: score %q verify %q", reg, m.Annotations[KeyScore], m.Annotations[KeyVerifyStatus])
		}
		// The layers are the image's own.
		local, release, err := src.Image(ctx, img)
		if err != nil {
			t.Fatal(err)
		}
		defer release()
		lcf, _ := local.ConfigFile()
		if strings.Join(hashes(lcf.RootFS.DiffIDs), ",") != strings.Join(hashes(cf.RootFS.DiffIDs), ",") {
			t.Errorf("%s: diff IDs changed", reg)
		}
	}

	// Run what the local registry serves: pulled back through ggcr and
	// loaded into Docker Engine, and pulled by Docker Engine itself.
	t.Logf("%v: loading back", time.Since(start))
	back := "redis-variants-test/published:" + randomHex(4)
	loadBack(t, ec, localRegistry+"/"+repoName+":7.0.15-best", back)
	labels, err := ec.ImageLabels(ctx, back)
	if err != nil || labels[KeyName] != "gcc-o2" || labels[KeyRuntime] != "host" {
		t.Errorf("labels of the loaded image: %v %v", labels, err)
	}
	runPing(t, ec, back, session)

	t.Logf("%v: docker pull", time.Since(start))
	pullRef := localRegistry + "/" + repoName + ":7.0.15-gcc-o2"
	if err := ec.PullImage(ctx, pullRef); err != nil {
		t.Fatalf("Docker Engine pulling the published image: %v", err)
	}
	t.Cleanup(func() { ec.API().ImageRemove(context.Background(), pullRef, client.ImageRemoveOptions{}) })
	runPing(t, ec, pullRef, session)
}
