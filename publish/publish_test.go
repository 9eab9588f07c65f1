package publish

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/redis-variants/redis-variants/builder"
	"github.com/redis-variants/redis-variants/rank"
	"github.com/redis-variants/redis-variants/results"
	"github.com/redis-variants/redis-variants/variants"
	"github.com/redis-variants/redis-variants/verify"
)

// fixtureVariant is one image in a fixture run.
type fixtureVariant struct {
	name   string
	ref    bool    // a reference
	march  string  // -march
	level  string  // label io.redis-variants.isa.level ("" = no label)
	score  float64 // against stock-debian
	rank   int
	build  string // build status ("" = ok)
	verify string // verify status ("" = passed, "none" = no report)
	// verifiedAs is the image ID the verification names ("" = the build's
	// config digest): another one is a record of an image built before.
	verifiedAs string
	platform   string // "" = linux/amd64
	unranked   bool   // not in the ranking (an arm64 twin: not benchmarked here)
}

// standardFixture: gcc-o3-native is fastest, separated from gcc-o3-v3; a
// v2 build failed verification (tied with clang-o2, which is no rival for
// it), a zig build was never verified, gcc-o1 did not build.
var standardFixture = []fixtureVariant{
	{name: "gcc-o3-native", march: "native", level: "native", score: 1.20, rank: 1},
	{name: "gcc-o3-v3", march: "x86-64-v3", level: "v3", score: 1.15, rank: 2},
	{name: "gcc-o2-v2", march: "x86-64-v2", level: "v2", score: 1.12, rank: 3, verify: verify.StatusFailed},
	{name: "clang-o2", score: 1.10, rank: 3}, // no label: level from -march (none → v1)
	{name: "zig-o2", march: "x86-64", level: "v1", score: 1.05, rank: 5, verify: "none"},
	{name: "stock-debian", ref: true, score: 1.0, rank: 6},
	{name: "gcc-o1", level: "v1", score: 0.95, rank: 7, build: builder.StatusFailed},
}

// writeFixture writes plan.json, builds/, verify/, ranking.json and the
// report files of a run folder; configs maps a variant name to the config
// digest its build recorded.
func writeFixture(t *testing.T, vs []fixtureVariant, configs map[string]string) *results.Run {
	t.Helper()
	run, err := results.Open(t.TempDir() + "/20261129-223300")
	if err != nil {
		t.Fatal(err)
	}
	var plan variants.Plan
	st := rank.Standings{Runtime: "host", Primary: "stock-debian"}
	for _, f := range vs {
		v := variants.Variant{Name: f.name, Kind: variants.KindVariant, ID: "0123456789ab", Redis: "7.0.15",
			Compiler: variants.Compiler{Family: "gcc", Version: "12"}, Opt: "O2", March: f.march, LTO: "off", Allocator: variants.AllocJemalloc, Platform: f.platform}
		if f.ref {
			v.Kind = variants.KindDistro
			plan.References = append(plan.References, v)
		} else {
			plan.Variants = append(plan.Variants, v)
		}
		labels := map[string]string{KeyOCICreated: "2026-11-29T22:00:00Z"}
		if f.level != "" {
			labels[KeyISALevel] = f.level
		}
		b := builder.Result{Variant: v, Image: "redis-variants/" + f.name + ":" + v.ID, ConfigDigest: configs[f.name], Status: builder.StatusOK, Labels: labels}
		if f.build != "" {
			b.Status = f.build
		}
		if err := run.WriteJSON("builds/"+f.name+".json", b); err != nil {
			t.Fatal(err)
		}
		if f.verify != "none" {
			r := verify.Report{Variant: f.name, ID: v.ID, ImageID: configs[f.name], Status: verify.StatusPassed, Profile: "quick",
				Suite:  verify.Suite{Ran: true, Passed: 120, Known: 1},
				Checks: []verify.Check{{Name: "ping", OK: true}, {Name: "allocator", OK: true}}}
			if f.verifiedAs != "" {
				r.ImageID = f.verifiedAs
			}
			if f.verify != "" {
				r.Status = f.verify
				r.Problems = []string{"2 test(s) failed: \"SET and GET\" (unit/basic)"}
			}
			if err := verify.Write(run, r); err != nil {
				t.Fatal(err)
			}
		}
		if f.unranked {
			continue
		}
		e := rank.Entry{Image: f.name, Runtime: "host", Reference: f.ref, Rank: f.rank,
			Score: rank.Num(f.score), Lo: rank.Num(f.score - 0.03), Hi: rank.Num(f.score + 0.03), SepP: rank.Num(math.NaN()),
			Versus: []rank.Score{{Reference: "stock-debian", Score: rank.Num(f.score), Lo: rank.Num(f.score - 0.03), Hi: rank.Num(f.score + 0.03), Verdict: rank.Faster}}}
		st.Entries = append(st.Entries, e)
	}
	rk := rank.Ranking{References: []string{"stock-debian"}, Runtimes: []string{"bridge", "host"},
		Standings: []rank.Standings{st, {Runtime: "bridge", Primary: "stock-debian"}}, CPUModels: []string{"Test CPU @ 2.0GHz"}}
	for _, w := range []struct {
		rel string
		v   any
	}{{"plan.json", plan}, {"ranking.json", rk}} {
		if err := run.WriteJSON(w.rel, w.v); err != nil {
			t.Fatal(err)
		}
	}
	if err := results.WriteFile(run.Path("report.md"), []byte("# report\n")); err != nil {
		t.Fatal(err)
	}
	return run
}

func tagsOf(sel *Selection) map[string][]string {
	out := map[string][]string{}
	for _, s := range sel.Images {
		out[s.Variant.Name] = s.Tags
	}
	return out
}

func refusedOf(sel *Selection) map[string]string {
	out := map[string]string{}
	for _, r := range sel.Refused {
		out[r.Variant] = r.Reason
	}
	return out
}

func TestSelectAllTagsAndRefusals(t *testing.T) {
	run := writeFixture(t, standardFixture, nil)
	sel, err := Select(run, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"gcc-o3-native": {"7.0.15-gcc-o3-native", "7.0.15-best"},
		"gcc-o3-v3":     {"7.0.15-gcc-o3-v3", "7.0.15-best-v3"},
		"clang-o2":      {"7.0.15-clang-o2", "7.0.15-best-v1"},
	}
	if got := tagsOf(sel); !reflect.DeepEqual(got, want) {
		t.Errorf("tags = %v, want %v", got, want)
	}
	var order []string
	for _, s := range sel.Images {
		order = append(order, s.Variant.Name)
	}
	if !slices.Equal(order, []string{"gcc-o3-native", "gcc-o3-v3", "clang-o2"}) {
		t.Errorf("order %v, want ranking order", order)
	}
	ref := refusedOf(sel)
	for name, why := range map[string]string{
		"gcc-o2-v2": "failed verification: 2 test(s) failed",
		"zig-o2":    "has not been verified",
		"gcc-o1":    "did not build",
	} {
		if !strings.Contains(ref[name], why) {
			t.Errorf("refusal of %s = %q, want it to say %q", name, ref[name], why)
		}
	}
	if _, ok := ref["stock-debian"]; ok || len(ref) != 3 {
		t.Errorf("refusals %v: want exactly the three unpublishable variants (a reference not asked for is silently left out)", ref)
	}
	if got, ok := sel.Images[0].Meta[KeyBestTiedWith]; ok {
		t.Errorf("best tied-with = %q on a separated best", got)
	}
}

// TestSelectRefusesAnotherImagesVerification: the file was edited and
// gcc-o3-native rebuilt after it was verified: its "passed" describes the
// image built before, so publish refuses the new one and names both.
func TestSelectRefusesAnotherImagesVerification(t *testing.T) {
	vs := append([]fixtureVariant(nil), standardFixture...)
	vs[0].verifiedAs = "sha256:0123456789ab0123456789ab"
	configs := map[string]string{}
	for _, f := range vs {
		configs[f.name] = "sha256:" + strings.Repeat(f.name[:1], 24)
	}
	run := writeFixture(t, vs, configs)
	sel, err := Select(run, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sel.Images {
		if s.Variant.Name == "gcc-o3-native" {
			t.Fatalf("published gcc-o3-native under another image's verification")
		}
	}
	why := refusedOf(sel)["gcc-o3-native"]
	if !strings.Contains(why, "sha256:0123456789ab, not sha256:gggggggggggg") || !strings.Contains(why, "verify again") {
		t.Fatalf("refusal %q", why)
	}
	if _, ok := refusedOf(sel)["gcc-o3-v3"]; ok {
		t.Fatalf("gcc-o3-v3, verified as the image it is, was refused: %v", refusedOf(sel))
	}
}

// TestSelectTiedBestGetsNoTag: the verdict decides the tag. When the best
// variant shares its rank with another publishable image (or a
// reference), no -best tag is given; its labels name the tied images.
func TestSelectTiedBestGetsNoTag(t *testing.T) {
	vs := append([]fixtureVariant(nil), standardFixture...)
	vs[1].rank = 1 // gcc-o3-v3 tied with gcc-o3-native
	run := writeFixture(t, vs, nil)
	sel, err := Select(run, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"gcc-o3-native": {"7.0.15-gcc-o3-native"},
		"gcc-o3-v3":     {"7.0.15-gcc-o3-v3", "7.0.15-best-v3"}, // native is no rival on a v3 CPU
		"clang-o2":      {"7.0.15-clang-o2", "7.0.15-best-v1"},
	}
	if got := tagsOf(sel); !reflect.DeepEqual(got, want) {
		t.Errorf("tags = %v, want %v", got, want)
	}
	if got := sel.Images[0].Meta[KeyBestTiedWith]; got != "gcc-o3-v3" {
		t.Errorf("tied-with = %q, want gcc-o3-v3", got)
	}
	if w := strings.Join(sel.Warnings, "\n"); !strings.Contains(w, "7.0.15-best not given") || !strings.Contains(w, "tied with gcc-o3-v3") {
		t.Errorf("warnings %q", sel.Warnings)
	}
}

func TestSelectMeta(t *testing.T) {
	run := writeFixture(t, standardFixture, nil)
	sel, err := Select(run, Options{Top: 1})
	if err != nil {
		t.Fatal(err)
	}
	m := sel.Images[0].Meta
	var spec variants.Variant
	if err := json.Unmarshal([]byte(m[KeySpec]), &spec); err != nil || spec.Name != "gcc-o3-native" || spec.March != "native" {
		t.Errorf("spec annotation %q does not decode to the variant: %v", m[KeySpec], err)
	}
	checks := map[string]string{
		KeyName: "gcc-o3-native", KeyID: "0123456789ab", KeyRun: "20261129-223300", KeyRuntime: "host",
		KeyCPU: "Test CPU @ 2.0GHz", KeyRank: "1", KeyScore: "1.2000", KeyScoreRef: "stock-debian",
		KeyScoreInterval: "1.1700,1.2300", KeyVerifyStatus: "passed", KeyISALevel: "native",
		KeyVersusPrefix + "stock-debian": "1.2000 [1.1700, 1.2300] faster",
		KeyOCIVersion:                    "7.0.15", KeyOCICreated: "2026-11-29T22:00:00Z",
		// report.json is absent and so not claimed
		KeyReportMD: fmt.Sprintf("sha256:%x", sha256.Sum256([]byte("# report\n"))),
	}
	for k, want := range checks {
		if m[k] != want {
			t.Errorf("%s = %q, want %q", k, m[k], want)
		}
	}
	if _, ok := m[KeyReportJSON]; ok {
		t.Errorf("report.json digest present though the run has no report.json")
	}
	if !strings.Contains(m[KeyVerify], "suite 120 ok, 0 failed, 1 known") || !strings.Contains(m[KeyVerify], "checks 2 of 2 passed") {
		t.Errorf("verify summary %q", m[KeyVerify])
	}
	var scores []map[string]any
	if err := json.Unmarshal([]byte(m[KeyScores]), &scores); err != nil || len(scores) != 1 || scores[0]["reference"] != "stock-debian" {
		t.Errorf("scores annotation %q: %v", m[KeyScores], err)
	}
	// With --top 1 the best-v3 image is not published: the tag is not
	// moved to anything else, and that is said.
	if !reflect.DeepEqual(tagsOf(sel), map[string][]string{"gcc-o3-native": {"7.0.15-gcc-o3-native", "7.0.15-best"}}) {
		t.Errorf("tags %v", tagsOf(sel))
	}
	if len(sel.Warnings) != 2 || !strings.Contains(strings.Join(sel.Warnings, "\n"), "7.0.15-best-v3 not moved") {
		t.Errorf("warnings %q: want best-v1 and best-v3 not moved", sel.Warnings)
	}
}

func TestSelectOnlyRefusesReferencesAndUnverified(t *testing.T) {
	run := writeFixture(t, standardFixture, nil)
	sel, err := Select(run, Options{Only: []string{"stock-debian", "gcc-o2-v2", "clang-o2", "no-such"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := tagsOf(sel); !reflect.DeepEqual(got, map[string][]string{"clang-o2": {"7.0.15-clang-o2", "7.0.15-best-v1"}}) {
		t.Errorf("tags %v: want only clang-o2, with best-v1 (it is the best v1 image) but not best", got)
	}
	ref := refusedOf(sel)
	if !strings.Contains(ref["stock-debian"], "references are never published") ||
		!strings.Contains(ref["gcc-o2-v2"], "failed verification") ||
		!strings.Contains(ref["no-such"], "not ranked under runtime host") || len(ref) != 3 {
		t.Errorf("refusals %v", ref)
	}
}

func TestSelectErrors(t *testing.T) {
	run := writeFixture(t, standardFixture, nil)
	if _, err := Select(run, Options{Runtime: "unix"}); err == nil || !strings.Contains(err.Error(), `no standings for runtime "unix"`) || !strings.Contains(err.Error(), "bridge, host") {
		t.Errorf("unknown runtime: %v", err)
	}
	empty, _ := results.Open(t.TempDir())
	if _, err := Select(empty, Options{}); err == nil || !strings.Contains(err.Error(), "no ranking.json") {
		t.Errorf("no ranking: %v", err)
	}
}

func TestTagNameAndLevel(t *testing.T) {
	for in, want := range map[string]string{
		"7.0.15-gcc-o3-native": TagName("7.0.15", "gcc-o3-native"),
		"7.0.15-a-b-c":         TagName("7.0.15", "a/b+c"),
		"x":                    TagName("..", "x"),
		"7.0.15-best-v3":       BestTag("7.0.15", "v3"),
		"7.0.15-best":          BestTag("7.0.15", ""),
	} {
		if in != want {
			t.Errorf("got %q, want %q", want, in)
		}
	}
	if got := TagName(strings.Repeat("a", 200)); len(got) != 128 {
		t.Errorf("long tag has %d characters, want 128", len(got))
	}
	for _, c := range []struct {
		march, label, want string
	}{{"", "", "v1"}, {"x86-64-v2", "", "v2"}, {"native", "", "native"}, {"haswell", "", ""}, {"native", "x86-64-v4", "v4"}, {"", "v3", "v3"}} {
		var labels map[string]string
		if c.label != "" {
			labels = map[string]string{KeyISALevel: c.label}
		}
		if got := Level(variants.Variant{March: c.march}, labels); got != c.want {
			t.Errorf("Level(march %q, label %q) = %q, want %q", c.march, c.label, got, c.want)
		}
	}
}

func TestRepoName(t *testing.T) {
	for in, scheme := range map[string]string{
		"127.0.0.1:5000": "http", "localhost:5000": "http", "http://reg.example:5000": "http", "ghcr.io": "https",
		"127.0.0.1:5000/ci": "http", "ghcr.io/acme": "https",
	} {
		r, err := RepoName(in, "redis-variants", false)
		if err != nil {
			t.Fatal(err)
		}
		if r.Scheme() != scheme || !strings.HasSuffix(r.String(), "/redis-variants") || strings.Contains(r.String(), "://") {
			t.Errorf("%s: %s scheme %s, want %s", in, r, r.Scheme(), scheme)
		}
	}
}

// fakeSource serves in-memory images.
type fakeSource map[string]v1.Image

func (f fakeSource) Image(_ context.Context, ref string) (v1.Image, func(), error) {
	img, ok := f[ref]
	if !ok {
		return nil, nil, errors.New("no such image " + ref)
	}
	return img, func() {}, nil
}

// sourceFor makes a random two-layer image per fixture variant (as Docker
// Engine would hand it over: Docker media types) and the config digests.
func sourceFor(t *testing.T, vs []fixtureVariant) (fakeSource, map[string]string) {
	src, cfgs := fakeSource{}, map[string]string{}
	for _, f := range vs {
		img, err := random.Image(256, 2)
		if err != nil {
			t.Fatal(err)
		}
		cn, _ := img.ConfigName()
		src["redis-variants/"+f.name+":0123456789ab"] = img
		cfgs[f.name] = cn.String()
	}
	return src, cfgs
}

func quietRegistry(h http.Handler) *httptest.Server {
	if h == nil {
		h = registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	}
	return httptest.NewServer(h)
}

func testOptions(reg string, src Source) Options {
	return Options{Registry: reg, Source: src, Keychain: authn.NewMultiKeychain(),
		Backoff: remote.Backoff{Duration: time.Millisecond, Factor: 1, Steps: 2}, Attempts: 2}
}

func TestPublishInProcessRegistry(t *testing.T) {
	src, cfgs := sourceFor(t, standardFixture)
	run := writeFixture(t, standardFixture, cfgs)
	srv := quietRegistry(nil)
	defer srv.Close()
	reg := strings.TrimPrefix(srv.URL, "http://")
	ctx := context.Background()

	pub, err := Publish(ctx, run, testOptions(reg, src))
	if err != nil {
		t.Fatal(err)
	}
	if len(pub.Images) != 3 || len(pub.Refused) != 3 {
		t.Fatalf("published %d images, refused %d: want 3 and 3", len(pub.Images), len(pub.Refused))
	}
	repo, _ := name.NewRepository(reg + "/redis-variants")
	tags, err := remote.List(repo)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(tags)
	// One referrers fallback tag per image: the results attached to it.
	var wantFallback []string
	for _, im := range pub.Images {
		wantFallback = append(wantFallback, strings.Replace(im.Digest, ":", "-", 1))
	}
	slices.Sort(wantFallback)
	fallback := slices.DeleteFunc(slices.Clone(tags), func(t string) bool { return !strings.HasPrefix(t, "sha256-") })
	tags = slices.DeleteFunc(tags, func(t string) bool { return strings.HasPrefix(t, "sha256-") })
	wantTags := []string{"7.0.15-best", "7.0.15-best-v1", "7.0.15-best-v3", "7.0.15-clang-o2", "7.0.15-gcc-o3-native", "7.0.15-gcc-o3-v3"}
	if !slices.Equal(tags, wantTags) {
		t.Errorf("registry tags %v, want %v", tags, wantTags)
	}
	if !slices.Equal(fallback, wantFallback) {
		t.Errorf("referrers fallback tags %v, want one per image %v", fallback, wantFallback)
	}
	for _, im := range pub.Images {
		if im.Error != "" || len(im.Pushed) != len(im.Tags) || !strings.HasPrefix(im.Ref, reg+"/redis-variants@sha256:") || !strings.HasPrefix(im.Results, reg+"/redis-variants@sha256:") {
			t.Errorf("%s: %+v", im.Variant, im)
		}
		for _, tag := range im.Tags {
			ref, _ := name.ParseReference(tag)
			img, err := remote.Image(ref)
			if err != nil {
				t.Fatal(err)
			}
			d, _ := img.Digest()
			if d.String() != im.Digest {
				t.Errorf("%s has digest %s, published.json says %s", tag, d, im.Digest)
			}
			m, _ := img.Manifest()
			cf, _ := img.ConfigFile()
			mt, _ := img.MediaType()
			if mt != types.OCIManifestSchema1 || m.Config.MediaType != types.OCIConfigJSON {
				t.Errorf("%s: media types %s / %s, want OCI", tag, mt, m.Config.MediaType)
			}
			for k, v := range im.Annotations {
				if m.Annotations[k] != v || cf.Config.Labels[k] != v {
					t.Errorf("%s: %s annotation %q label %q, want %q", tag, k, m.Annotations[k], cf.Config.Labels[k], v)
				}
			}
			if m.Annotations[KeyName] != im.Variant || m.Annotations[KeyVerifyStatus] != "passed" {
				t.Errorf("%s carries name %q verify %q", tag, m.Annotations[KeyName], m.Annotations[KeyVerifyStatus])
			}
			// Layers untouched: same diff IDs and same compressed blobs.
			orig := src["redis-variants/"+im.Variant+":0123456789ab"]
			od, _ := orig.Manifest()
			ocf, _ := orig.ConfigFile()
			if !reflect.DeepEqual(cf.RootFS.DiffIDs, ocf.RootFS.DiffIDs) || len(m.Layers) != len(od.Layers) {
				t.Fatalf("%s: layers changed", tag)
			}
			for i := range m.Layers {
				if m.Layers[i].Digest != od.Layers[i].Digest || m.Layers[i].MediaType != types.OCILayer {
					t.Errorf("%s layer %d: %s %s, source %s", tag, i, m.Layers[i].Digest, m.Layers[i].MediaType, od.Layers[i].Digest)
				}
			}
		}
	}
	recs, err := Load(run)
	if err != nil || len(recs) != 1 || !reflect.DeepEqual(recs[0].Images, pub.Images) {
		t.Fatalf("published.json: %v %+v", err, recs)
	}

	// Publishing again appends a record; the digests are the same (the
	// labels depend only on the run), so nothing new lands.
	pub2, err := Publish(ctx, run, testOptions(reg, src))
	if err != nil {
		t.Fatal(err)
	}
	if pub2.Images[0].Digest != pub.Images[0].Digest {
		t.Errorf("republishing changed the digest: %s then %s", pub.Images[0].Digest, pub2.Images[0].Digest)
	}
	if recs, _ := Load(run); len(recs) != 2 {
		t.Errorf("published.json has %d records after two publications", len(recs))
	}
}

// A registry that answers 500 to every manifest PUT: the push fails, is
// retried, and leaves no tag.
func TestPublishFailingRegistryLeavesNoTag(t *testing.T) {
	src, cfgs := sourceFor(t, standardFixture)
	run := writeFixture(t, standardFixture, cfgs)
	inner := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	var puts atomic.Int32
	srv := quietRegistry(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/manifests/") {
			puts.Add(1)
			http.Error(w, `{"errors":[{"code":"UNKNOWN","message":"injected failure"}]}`, http.StatusInternalServerError)
			return
		}
		inner.ServeHTTP(w, r)
	}))
	defer srv.Close()
	reg := strings.TrimPrefix(srv.URL, "http://")
	pub, err := Publish(context.Background(), run, testOptions(reg, src))
	if err == nil || !strings.Contains(err.Error(), "500") {
		t.Fatalf("publishing to a failing registry: %v, want an error naming the 500", err)
	}
	if n := puts.Load(); n < 2*3 {
		t.Errorf("%d manifest PUTs for 3 images: the 500 was not retried", n)
	}
	for _, im := range pub.Images {
		if im.Error == "" || len(im.Pushed) != 0 || im.Ref != "" {
			t.Errorf("%s: %+v, want an error and nothing pushed", im.Variant, im)
		}
	}
	assertNoTags(t, reg+"/redis-variants")
	if recs, _ := Load(run); len(recs) != 1 || recs[0].Images[0].Error == "" {
		t.Errorf("published.json does not record the failure: %+v", recs)
	}
}

func assertNoTags(t *testing.T, repoName string) {
	t.Helper()
	repo, _ := name.NewRepository(repoName)
	if tags, err := remote.List(repo); err == nil && len(tags) > 0 {
		t.Errorf("registry has tags %v, want none", tags)
	}
	for _, tag := range []string{"7.0.15-best", "7.0.15-gcc-o3-native", "7.0.15-gcc-o2-v2"} {
		if _, err := remote.Head(repo.Tag(tag)); err == nil {
			t.Errorf("tag %s exists", tag)
		}
	}
}

func TestPublishRefusedAndDryRunPushNothing(t *testing.T) {
	src, cfgs := sourceFor(t, standardFixture)
	run := writeFixture(t, standardFixture, cfgs)
	srv := quietRegistry(nil)
	defer srv.Close()
	reg := strings.TrimPrefix(srv.URL, "http://")

	opts := testOptions(reg, src)
	opts.Only = []string{"gcc-o2-v2", "stock-debian"}
	pub, err := Publish(context.Background(), run, opts)
	if err == nil || !strings.Contains(err.Error(), "nothing to publish") || !strings.Contains(err.Error(), "failed verification") || !strings.Contains(err.Error(), "references are never published") {
		t.Fatalf("publishing only refused variants: %v", err)
	}
	if len(pub.Images) != 0 {
		t.Errorf("images %+v", pub.Images)
	}

	opts = testOptions(reg, src)
	opts.DryRun = true
	pub, err = Publish(context.Background(), run, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !pub.DryRun || len(pub.Images) != 3 || pub.Images[0].Tags[1] != reg+"/redis-variants:7.0.15-best" || pub.Images[0].Annotations[KeyScore] != "1.2000" {
		t.Errorf("dry run %+v", pub)
	}
	assertNoTags(t, reg+"/redis-variants")
	if _, err := os.Stat(run.Path(PublishedFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("published.json written by a refused or dry-run publication: %v", err)
	}
}

// An image in Docker Engine that is not the one built and measured (the
// tag was rebuilt since) is not published.
func TestPublishRefusesChangedImage(t *testing.T) {
	src, cfgs := sourceFor(t, standardFixture)
	cfgs["gcc-o3-native"] = "sha256:" + strings.Repeat("0", 64)
	run := writeFixture(t, standardFixture, cfgs)
	srv := quietRegistry(nil)
	defer srv.Close()
	reg := strings.TrimPrefix(srv.URL, "http://")
	pub, err := Publish(context.Background(), run, testOptions(reg, src))
	if err == nil || !strings.Contains(err.Error(), "not sha256:0000") {
		t.Fatalf("want an error about the changed image, got %v", err)
	}
	repo, _ := name.NewRepository(reg + "/redis-variants")
	if _, err := remote.Head(repo.Tag("7.0.15-best")); err == nil {
		t.Error("7.0.15-best was pushed though its image is not the measured one")
	}
	if _, err := remote.Head(repo.Tag("7.0.15-gcc-o3-v3")); err != nil {
		t.Errorf("the other images were not published: %v", err)
	}
	if pub.Images[0].Error == "" || pub.Images[1].Error != "" {
		t.Errorf("errors: %q %q", pub.Images[0].Error, pub.Images[1].Error)
	}
}

// A registry that drops the connection on the first manifest PUTs, more
// times than ggcr's own retries allow: the push still succeeds.
func TestPublishRetriesConnectionResets(t *testing.T) {
	vs := standardFixture[:1]
	src, cfgs := sourceFor(t, vs)
	run := writeFixture(t, vs, cfgs)
	inner := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	var drops atomic.Int32
	srv := quietRegistry(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/manifests/") && drops.Add(1) <= 3 {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
			return
		}
		inner.ServeHTTP(w, r)
	}))
	defer srv.Close()
	reg := strings.TrimPrefix(srv.URL, "http://")
	opts := testOptions(reg, src)
	opts.Attempts = 3
	pub, err := Publish(context.Background(), run, opts)
	if err != nil {
		t.Fatalf("publishing through dropped connections: %v", err)
	}
	if drops.Load() < 4 || len(pub.Images[0].Pushed) != 2 {
		t.Errorf("%d manifest PUTs, pushed %v", drops.Load(), pub.Images[0].Pushed)
	}
}

// fakePublisher is an Interface that pushes nothing: it returns pub and err.
type fakePublisher struct {
	pub Published
	err error
}

func (f fakePublisher) Publish(ctx context.Context, sel *Selection) (Published, error) {
	return f.pub, f.err
}

// Record appends every publication that pushed (or tried to push)
// something, with its failures, and never a dry run or an empty one.
func TestRecordAppendsPublications(t *testing.T) {
	run, err := results.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	sel := &Selection{Run: run.Dir, Runtime: "host"}
	steps := []fakePublisher{
		{pub: Published{Runtime: "host", DryRun: true, Images: []Image{{Variant: "dry"}}}},
		{pub: Published{Runtime: "host"}, err: errors.New("nothing to publish")},
		{pub: Published{Runtime: "host", Images: []Image{{Variant: "a", Pushed: []string{"r/x:a"}}}}},
		{pub: Published{Runtime: "host", Images: []Image{{Variant: "b", Error: "refused"}}}, err: errors.New("publishing: 1 failure(s)")},
	}
	for i, f := range steps {
		if _, err := Record(f, run).Publish(context.Background(), sel); (err != nil) != (f.err != nil) {
			t.Fatalf("step %d: error %v, want %v", i, err, f.err)
		}
	}
	pubs, err := Load(run)
	if err != nil {
		t.Fatal(err)
	}
	if len(pubs) != 2 || pubs[0].Images[0].Variant != "a" || pubs[1].Images[0].Error != "refused" {
		t.Fatalf("published.json holds %+v, want the push of a and the failed push of b", pubs)
	}
}

// A run's record names the images it pulled; attaching results to them
// must speak to the registry as the user's repository allows, never over
// plain HTTP to a remote registry because of how the record was parsed.
func TestAttachSubjectsKeepTheRepositorysScheme(t *testing.T) {
	const dg = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	builds := map[string]results.Build{
		"remote": {Variant: variants.Variant{Name: "remote", Image: "registry.example.com/team/redis@" + dg}, Pulled: &results.Pulled{Digest: dg}},
		"local":  {Variant: variants.Variant{Name: "local", Image: "127.0.0.1:5000/team/redis@" + dg}, Pulled: &results.Pulled{Digest: dg}},
		"built":  {Variant: variants.Variant{Name: "built", Image: "registry.example.com/team/redis@" + dg}},
	}
	for _, c := range []struct {
		reg      string
		insecure bool
		want     string // the subject's variant
		scheme   string
	}{
		{"registry.example.com", false, "remote", "https"},
		{"registry.example.com", true, "remote", "http"},
		{"http://registry.example.com", false, "remote", "http"},
		{"127.0.0.1:5000", false, "local", "http"},
	} {
		repo, err := RepoName(c.reg, "team/redis", c.insecure)
		if err != nil {
			t.Fatal(err)
		}
		subjects, images := attachSubjects(builds, repo)
		if len(subjects) != 1 || images[0].Variant != c.want {
			t.Errorf("%s: subjects %v (%v), want the one of %s", c.reg, subjects, images, c.want)
			continue
		}
		if got := subjects[0].Context().Scheme(); got != c.scheme {
			t.Errorf("%s (insecure %v): the subject %s is spoken to over %s, want %s", c.reg, c.insecure, subjects[0], got, c.scheme)
		}
		if subjects[0].DigestStr() != dg {
			t.Errorf("%s: subject digest %s, want %s", c.reg, subjects[0].DigestStr(), dg)
		}
	}
}
