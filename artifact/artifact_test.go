package artifact

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/redis-variants/redis-variants/results"
)

// localRegistry is the Distribution registry (2.8, no referrers API)
// scripts/setup.sh starts: the tag-schema fallback is what it exercises.
const localRegistry = "127.0.0.1:5000"

func needRegistry(t *testing.T) {
	t.Helper()
	resp, err := http.Get("http://" + localRegistry + "/v2/")
	if err != nil {
		t.Fatalf("this test needs the Distribution registry at %s (scripts/setup.sh starts it): %v", localRegistry, err)
	}
	resp.Body.Close()
}

func testRepo(t *testing.T) name.Repository {
	b := make([]byte, 4)
	rand.Read(b)
	r, err := name.NewRepository(localRegistry+"/artifact-test-"+hex.EncodeToString(b), name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// fixtureRun writes a ranked run folder with every kind of file a run
// has, including those the artifact leaves out.
func fixtureRun(t testing.TB, id, cpu string) *results.Run {
	t.Helper()
	run, err := results.Open(filepath.Join(t.TempDir(), id))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		results.RankingFile:                    `{"standings":[]}`,
		results.MachineFile:                    `{"cpu_model":"` + cpu + `","cpus":2,"x86_64_level":"v4","kernel":"6.1","cgroup":"v2"}`,
		results.PlanFile:                       `{"variants":[]}`,
		"report.md":                            "# Report\n",
		"report.html":                          "<html></html>",
		"report.csv":                           "a,b\n",
		results.BuildRel("gcc-o2"):             `{"name":"gcc-o2"}`,
		results.VerificationRel("gcc-o2"):      `{"variant":"gcc-o2"}`,
		"trials/host/gcc-o2/r1.json":           `{"seq":1}`,
		"trials/host/gcc-o2/r2.json":           `{"seq":2}`,
		"logs/gcc-o2.log":                      "a long build log",
		results.PublishedFile:                  `{"publications":[]}`,
		"trials/host/gcc-o2/.r3.json.tmp-1234": "half-written",
	}
	for rel, content := range files {
		if err := results.WriteFile(run.Path(rel), []byte(content)); err != nil {
			t.Fatal(err)
		}
	}
	return run
}

// pushSubject pushes a random image to repo and returns its descriptor.
func pushSubject(t *testing.T, repo name.Repository, tag string) v1.Descriptor {
	t.Helper()
	img, err := random.Image(256, 1)
	if err != nil {
		t.Fatal(err)
	}
	img = mutate.MediaType(img, types.OCIManifestSchema1)
	if err := remote.Write(repo.Tag(tag), img); err != nil {
		t.Fatalf("pushing the subject: %v", err)
	}
	d, err := remote.Head(repo.Tag(tag))
	if err != nil {
		t.Fatal(err)
	}
	return *d
}

// TestPushFindPullRoundTrip attaches a run's results to an image in the
// local Distribution registry, finds them through the referrers tag
// fallback (sha256-<digest>), resolves them from the image's tag and pulls
// them back as a run folder with the same records; logs, published.json
// and temporary files stay behind. A second run attached to the same
// image is listed first and leaves the first in place.
func TestPushFindPullRoundTrip(t *testing.T) {
	needRegistry(t)
	ctx := context.Background()
	repo := testRepo(t)
	subject := pushSubject(t, repo, "7.0.15-gcc-o2")

	run := fixtureRun(t, "20261201-100000", "AMD EPYC 9B14")
	b, err := Pack(run)
	if err != nil {
		t.Fatal(err)
	}
	var titles []string
	for _, d := range b.Descriptors {
		titles = append(titles, d.Annotations[AnnotationTitle])
	}
	want := "builds/ machine.json plan.json ranking.json report.csv report.html report.md trials/ verify/"
	if got := strings.Join(titles, " "); got != want {
		t.Errorf("packed %q, want %q", got, want)
	}
	ref, err := Push(ctx, b, repo, subject)
	if err != nil {
		t.Fatal(err)
	}
	// The fallback tag exists and is an index listing the artifact.
	fb := repo.Tag(strings.Replace(subject.Digest.String(), ":", "-", 1))
	idx, err := remote.Index(fb)
	if err != nil {
		t.Fatalf("the referrers fallback tag %s: %v", fb, err)
	}
	im, _ := idx.IndexManifest()
	if len(im.Manifests) != 1 || im.Manifests[0].Digest.String() != ref.DigestStr() || im.Manifests[0].ArtifactType != ArtifactType {
		t.Fatalf("fallback index %+v, want the one artifact %s", im.Manifests, ref)
	}

	later := fixtureRun(t, "20261201-110000", "Intel Xeon Platinum 8481C")
	b2, err := Pack(later)
	if err != nil {
		t.Fatal(err)
	}
	b2.Annotations[AnnotationCreated] = "2099-01-01T00:00:00Z" // sorts after the first
	ref2, err := Push(ctx, b2, repo, subject)
	if err != nil {
		t.Fatal(err)
	}
	found, err := Find(ctx, repo.Digest(subject.Digest.String()))
	if err != nil {
		t.Fatal(err)
	}
	if len(found) != 2 || found[0].Digest.String() != ref2.DigestStr() || found[1].Digest.String() != ref.DigestStr() {
		t.Fatalf("found %+v, want %s then %s", found, ref2, ref)
	}

	a, err := Resolve(ctx, repo.Tag("7.0.15-gcc-o2"))
	if err != nil {
		t.Fatal(err)
	}
	if a.Ref.DigestStr() != ref2.DigestStr() || a.Run() != "20261201-110000" || a.Manifest.Annotations[AnnotationCPU] != "Intel Xeon Platinum 8481C" {
		t.Errorf("resolved %s (run %s), want the newest %s", a.Ref, a.Run(), ref2)
	}
	a, err = Resolve(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), a.Run())
	pulled, err := a.Pull(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, rel := range []string{results.RankingFile, results.MachineFile, "report.md", results.BuildRel("gcc-o2"), results.VerificationRel("gcc-o2"), "trials/host/gcc-o2/r1.json", "trials/host/gcc-o2/r2.json"} {
		got, err := os.ReadFile(pulled.Path(rel))
		wantB, _ := os.ReadFile(run.Path(rel))
		if err != nil || string(got) != string(wantB) {
			t.Errorf("%s: pulled %q (%v), want %q", rel, got, err, wantB)
		}
	}
	for _, rel := range []string{"logs", results.PublishedFile, "trials/host/gcc-o2/.r3.json.tmp-1234"} {
		if pulled.Exists(rel) {
			t.Errorf("%s was carried, and should not be", rel)
		}
	}
	if m, err := pulled.Machine(); err != nil || m.CPUModel != "AMD EPYC 9B14" {
		t.Errorf("pulled machine %+v %v", m, err)
	}
	if _, err := a.Pull(ctx, dir); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("pulling over an existing run folder: %v, want a refusal", err)
	}
	if ok, err := a.SubjectExists(ctx); !ok || err != nil {
		t.Errorf("subject exists: %v %v", ok, err)
	}
}

// TestRefusals: an artifact of another type, a results artifact of a newer
// schema, an unsafe file title, an image with nothing attached, an
// unranked run and a registry that refuses pushes each give an error that
// names the reference, and a refused push leaves what was attached before.
func TestRefusals(t *testing.T) {
	needRegistry(t)
	ctx := context.Background()
	repo := testRepo(t)
	subject := pushSubject(t, repo, "plain")

	if _, err := Resolve(ctx, repo.Tag("plain")); err == nil || !strings.Contains(err.Error(), "has no results artifact attached") || !strings.Contains(err.Error(), repo.Tag("plain").String()) {
		t.Errorf("an image with nothing attached: %v", err)
	}
	if _, err := Pack(&results.Run{Dir: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "rank the run first") {
		t.Errorf("an unranked run: %v", err)
	}

	b, err := Pack(fixtureRun(t, "20261201-100000", "AMD EPYC 9B14"))
	if err != nil {
		t.Fatal(err)
	}
	good, err := Push(ctx, b, repo, subject)
	if err != nil {
		t.Fatal(err)
	}

	// A manifest of another artifact type (an SBOM, say) attached to the
	// same image: Find does not list it, Get refuses it by name.
	other := mutate.ConfigMediaType(mutate.MediaType(mustAppend(t, "{}"), types.OCIManifestSchema1), "application/vnd.example.sbom.v1+json")
	otherImg := mutate.Subject(other, subject).(v1.Image)
	od, _ := otherImg.Digest()
	if err := remote.Write(repo.Digest(od.String()), otherImg, remote.WithReferrersTagFallback(true)); err != nil {
		t.Fatal(err)
	}
	if found, err := Find(ctx, repo.Digest(subject.Digest.String())); err != nil || len(found) != 1 || found[0].Digest.String() != good.DigestStr() {
		t.Errorf("find with a foreign referrer: %+v %v, want only %s", found, err, good)
	}
	if _, err := Get(ctx, repo.Digest(od.String())); err == nil || !strings.Contains(err.Error(), "application/vnd.example.sbom.v1+json") || !strings.Contains(err.Error(), od.String()) {
		t.Errorf("a foreign artifact: %v", err)
	}

	// A newer schema, and a title that would escape the run folder.
	for _, c := range []struct {
		name, want string
		change     func(*Bundle)
	}{
		{"schema", `schema version "2"`, func(b *Bundle) { b.Annotations[AnnotationSchema] = "2" }},
		{"title", "unsafe or missing title", func(b *Bundle) { b.Descriptors[0].Annotations[AnnotationTitle] = "../../etc/passwd" }},
		{"media type", "does not hold", func(b *Bundle) { b.Descriptors[0].MediaType = "application/x-unknown" }},
	} {
		bb, _ := Pack(fixtureRun(t, "20261201-120000", "x"))
		c.change(bb)
		ref, err := Push(ctx, bb, repo, subject)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if _, err := Get(ctx, ref); err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), ref.DigestStr()) {
			t.Errorf("%s: %v, want %q naming %s", c.name, err, c.want, ref)
		}
	}

	// A registry that refuses every write: the error names the
	// repository, and the artifact attached before is still listed.
	refusing := remote.WithTransport(refuseWrites{http.DefaultTransport})
	b3, _ := Pack(fixtureRun(t, "20261201-130000", "y"))
	_, err = Push(ctx, b3, repo, subject, refusing)
	if err == nil || !strings.Contains(err.Error(), repo.String()) || !strings.Contains(err.Error(), "HTTP 403") {
		t.Errorf("a refusing registry: %v", err)
	}
	found, err := Find(ctx, repo.Digest(subject.Digest.String()))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, d := range found {
		if d.Digest.String() == good.DigestStr() {
			n++
		}
	}
	if n != 1 || len(found) != 4 {
		t.Errorf("after a refused push the referrers are %+v; want the 4 pushed before, %s among them", found, good)
	}
	// A registry that refuses reads.
	if _, err := Resolve(ctx, repo.Tag("plain"), remote.WithTransport(refuseAll{})); err == nil || !strings.Contains(err.Error(), repo.Tag("plain").String()) {
		t.Errorf("a registry refusing reads: %v", err)
	}
}

func mustAppend(t *testing.T, content string) v1.Image {
	img, err := mutate.AppendLayers(empty.Image, static.NewLayer([]byte(content), "application/vnd.example.sbom.layer"))
	if err != nil {
		t.Fatal(err)
	}
	return img
}

type refuseWrites struct{ next http.RoundTripper }

func (r refuseWrites) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodGet || req.Method == http.MethodHead {
		return r.next.RoundTrip(req)
	}
	return &http.Response{StatusCode: http.StatusForbidden, Status: "403 Forbidden", Body: http.NoBody, Header: http.Header{}, Request: req}, nil
}

type refuseAll struct{}

func (refuseAll) RoundTrip(req *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: http.StatusForbidden, Status: "403 Forbidden", Body: http.NoBody, Header: http.Header{}, Request: req}, nil
}

// An artifact comes from a registry anyone with push rights may write:
// one that declares a layer past the limits is refused before a byte of
// it is read, and a folder layer that unpacks to more than what is left
// of the budget (a small gzip can hold gigabytes of zeros) is refused
// before that entry is written.
func TestLimits(t *testing.T) {
	digest := v1.Hash{Algorithm: "sha256", Hex: strings.Repeat("ab", 32)}
	ref, _ := name.NewDigest("registry.example.com/r@" + digest.String())
	layer := func(size int64) v1.Descriptor {
		return v1.Descriptor{MediaType: MediaTypeJSON, Size: size, Digest: digest, Annotations: map[string]string{AnnotationTitle: "ranking.json"}}
	}
	manifest := func(layers ...v1.Descriptor) *Artifact {
		return &Artifact{Ref: ref, Manifest: &v1.Manifest{ArtifactType: ArtifactType, Layers: layers,
			Annotations: map[string]string{AnnotationSchema: Schema, AnnotationRun: "20261201-100000"}}}
	}
	if err := manifest(layer(1 << 20)).check(); err != nil {
		t.Errorf("a 1 MiB layer: %v", err)
	}
	for _, c := range []struct {
		name string
		a    *Artifact
		want string
	}{
		{"one layer too large", manifest(layer(MaxBlob + 1)), "holds at most"},
		{"a negative size", manifest(layer(-1)), "holds at most"},
		{"too many layers", manifest(slices.Repeat([]v1.Descriptor{layer(1)}, MaxLayers+1)...), "more than the"},
		{"too much in all", manifest(slices.Repeat([]v1.Descriptor{layer(MaxBlob)}, MaxUnpacked/MaxBlob+1)...), "more than the"},
	} {
		err := c.a.check()
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), ref.String()) {
			t.Errorf("%s: %v, want %q naming %s", c.name, err, c.want, ref)
		}
		// Pull checks before it reads: with no registry behind the
		// reference, a refusal here came from the check.
		if _, err := c.a.Pull(context.Background(), filepath.Join(t.TempDir(), "run")); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: pull: %v, want %q", c.name, err, c.want)
		}
	}

	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, e := range []struct {
		name string
		size int
	}{{"trials/small.json", 100}, {"trials/bomb.json", 10 << 20}} {
		tw.WriteHeader(&tar.Header{Name: e.name, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(e.size)})
		tw.Write(make([]byte, e.size))
	}
	tw.Close()
	zw.Close()
	root := t.TempDir()
	budget := int64(1 << 20)
	err := untarGz(buf.Bytes(), root, "trials", &budget)
	if err == nil || !strings.Contains(err.Error(), `"trials/bomb.json"`) {
		t.Errorf("a folder layer of %d bytes unpacking to 10 MiB with 1 MiB left: %v, want a refusal naming the entry", buf.Len(), err)
	}
	if budget != 1<<20-100 {
		t.Errorf("budget after the small entry: %d, want %d", budget, 1<<20-100)
	}
	if _, err := os.Stat(filepath.Join(root, "trials", "bomb.json")); err == nil {
		t.Error("the refused entry was written")
	}
}
