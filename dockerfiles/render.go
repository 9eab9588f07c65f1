// Package dockerfiles holds the build recipe, embedded in the binary: one
// parameterised Dockerfile for every tuned variant (toolchain, source, build
// and runtime stages) and the references (stock, official), and Render,
// which turns a variant into that Dockerfile, the stage to build and the
// value of every build argument.
package dockerfiles

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/redis-variants/redis-variants/machine"
	"github.com/redis-variants/redis-variants/variants"
)

//go:embed Dockerfile *.Dockerfile
var files embed.FS

// MainRecipe is the embedded file every recipe starts with; the embedded
// *.Dockerfile fragments follow it, sorted by name.
const MainRecipe = "Dockerfile"

// SourcesContext is the named build context holding the source cache.
const SourcesContext = "sources"

// LoadgenContext is the named context of a PGO build's training: a folder
// holding the static redis-loadgen binary (LoadgenBinary).
const LoadgenContext = "loadgen"

// LoadgenBinary is the load generator's file name in LoadgenContext.
const LoadgenBinary = "redis-loadgen"

// ProfileContext is the named context of a PGO build with a stored
// profile (UseStoredProfile): a folder as the training exports it.
const ProfileContext = "profile"

// TargetPGOExport is the stage holding a PGO build's profile, its sha256
// (profile.sha256) and the training's figures (training.csv).
const TargetPGOExport = "pgo-export"

// Targets.
const (
	TargetRuntime  = "runtime"
	TargetStock    = "stock"
	TargetOfficial = "official"
	// TargetOfficialAlpine is the official Alpine recipe rebuilt on musl.
	TargetOfficialAlpine = "official-alpine"
)

// BuildInfoPath is where every image keeps the build's own record of its
// compiler version, flags and build machine (JSON).
const BuildInfoPath = "/usr/local/share/redis-variants/build-info.json"

// Recipe is everything BuildKit needs to build one variant's image.
type Recipe struct {
	Dockerfile []byte            // the full Dockerfile (main recipe + fragments)
	Target     string            // stage to build for this variant's image ("runtime", "stock", "official")
	Platform   string            // the image's platform when it is not the builder's (BuildKit's platform attribute), else ""
	BuildArgs  map[string]string // every ARG value for this variant
	Contexts   map[string]string // named local contexts (name -> host folder), e.g. "sources" -> .state/cache/sources
}

// Options are the facts about the build that are not in the variant.
type Options struct {
	SourcesDir string    // the source cache, e.g. .state/cache/sources
	BuildCPU   string    // CPU model of the build machine (label build.cpu)
	BuildLevel string    // x86-64 level of the build machine, v1..v4 (label build.x86-64-level)
	BuildFlags string    // the build machine's CPU flags, space separated (label isa.flags for -march=native)
	MakeJobs   int       // make -j for Redis (0 = 2)
	LoadgenDir string    // folder holding the static redis-loadgen a PGO build trains with
	Created    time.Time // org.opencontainers.image.created (zero = the Unix epoch, for reproducible output)
}

// Dockerfile returns the full embedded Dockerfile: the main recipe, then
// every *.Dockerfile fragment sorted by name.
func Dockerfile() ([]byte, error) {
	main, err := files.ReadFile(MainRecipe)
	if err != nil {
		return nil, fmt.Errorf("reading embedded recipe: %w", err)
	}
	frags, err := fs.Glob(files, "*.Dockerfile")
	if err != nil {
		return nil, err
	}
	sort.Strings(frags)
	out := append([]byte(nil), main...)
	for _, f := range frags {
		b, err := files.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("reading embedded fragment %s: %w", f, err)
		}
		if len(out) > 0 && out[len(out)-1] != '\n' {
			out = append(out, '\n')
		}
		out = append(out, fmt.Sprintf("\n# ---- %s ----\n", f)...)
		out = append(out, b...)
	}
	return out, nil
}

// Fragments lists the embedded fragment names, sorted.
func Fragments() []string {
	frags, _ := fs.Glob(files, "*.Dockerfile")
	sort.Strings(frags)
	return frags
}

var argRE = regexp.MustCompile(`(?m)^[ \t]*ARG[ \t]+([A-Za-z_][A-Za-z0-9_]*)(?:=(.*))?$`)

// DeclaredArgs returns the names of every ARG in dockerfile, sorted, once each.
func DeclaredArgs(dockerfile []byte) []string {
	defs := ArgDefaults(dockerfile)
	out := make([]string, 0, len(defs))
	for n := range defs {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// ArgDefaults returns every ARG in dockerfile with its first declared
// default value ("" when it has none). BuildKit's own settings
// (BUILDKIT_SBOM_SCAN_STAGE) are left out: declared in a stage they are
// that stage's, and as a build arg they would apply to every stage.
func ArgDefaults(dockerfile []byte) map[string]string {
	// (BuildKit's own, and its automatic platform ARGs: a build arg of
	// that name would replace the value BuildKit gives)
	out := map[string]string{}
	for _, m := range argRE.FindAllSubmatch(dockerfile, -1) {
		n, def := string(m[1]), strings.TrimSpace(string(m[2]))
		if strings.HasPrefix(n, "BUILDKIT_") || platformArgs[n] {
			continue
		}
		if len(def) >= 2 && (def[0] == '"' && def[len(def)-1] == '"' || def[0] == '\'' && def[len(def)-1] == '\'') {
			def = def[1 : len(def)-1]
		}
		if old, ok := out[n]; !ok || old == "" {
			out[n] = def
		}
	}
	return out
}

// platformArgs are the ARGs BuildKit sets from the build's platforms.
var platformArgs = map[string]bool{
	"TARGETPLATFORM": true, "TARGETOS": true, "TARGETARCH": true, "TARGETVARIANT": true,
	"BUILDPLATFORM": true, "BUILDOS": true, "BUILDARCH": true, "BUILDVARIANT": true,
}

// Render returns the recipe for v: the Dockerfile, the stage to build and
// the value of every ARG the Dockerfile declares.
func Render(v variants.Variant, opt Options) (Recipe, error) {
	df, err := Dockerfile()
	if err != nil {
		return Recipe{}, err
	}
	// The parser refuses such flags with their line; a plan read from
	// elsewhere (plan.json, history) is held to the same rule here, where
	// the flags are about to reach a shell and make.
	for _, f := range append(slices.Clone(v.CFlags), v.LDFlags...) {
		if why := variants.BadFlag(f); why != "" {
			return Recipe{}, fmt.Errorf("variant %q: flag %q: %s", v.Name, f, why)
		}
	}
	r := Recipe{Dockerfile: df, Contexts: map[string]string{}}
	if opt.SourcesDir != "" {
		r.Contexts[SourcesContext] = opt.SourcesDir
	}
	a := newArgs()
	base := v.Base
	if base == "" {
		base = variants.DefaultBase
	}
	a.set("BASE", base)
	jobs := opt.MakeJobs
	if jobs <= 0 {
		jobs = 2
	}
	a.set("MAKE_JOBS", fmt.Sprint(jobs))

	switch v.Kind {
	case variants.KindVariant:
		r.Target = TargetRuntime
		if c, ok := variants.CrossFor(v.PlatformOf()); ok {
			r.Platform = v.PlatformOf()
			cross(c, a)
		}
		if err := tuned(v, opt, a); err != nil {
			return Recipe{}, fmt.Errorf("rendering variant %q: %w", v.Name, err)
		}
		if v.Layout > 1 {
			// a layout draw: the same objects linked in the seed's order
			a.set("LAYOUT_SEED", v.LayoutSeed)
		}
		if v.PGO != nil {
			if err := pgo(v, opt, a, &r); err != nil {
				return Recipe{}, fmt.Errorf("rendering variant %q: %w", v.Name, err)
			}
		}
		if v.BOLT != nil {
			if err := bolt(v, opt, a, &r); err != nil {
				return Recipe{}, fmt.Errorf("rendering variant %q: %w", v.Name, err)
			}
		}
	case variants.KindDistro:
		r.Target = TargetStock
		a.set("TOOLCHAIN", "gcc") // the build stage is not built, but its FROM must name a stage
		a.set("COMPILER", "debian-package")
		a.set("COMPILER_VERSION", "redis-server "+v.Redis+" as packaged by "+base)
		a.set("ISA_LEVEL", "v1")
	case variants.KindOfficial:
		r.Target = TargetOfficial
		if v.Source.SHA256 == "" {
			return Recipe{}, fmt.Errorf("rendering reference %q: the official recipe needs a Redis source", v.Name)
		}
		a.set("TOOLCHAIN", "gcc")
		a.set("COMPILER", "gcc")
		a.set("COMPILER_VERSION", "gcc (Debian default on "+base+")")
		a.set("OPTIMIZATION", "-O2")
		a.set("MALLOC", "jemalloc")
		a.set("BUILD_TLS", "yes")
		a.set("ISA_LEVEL", "v1")
		if variants.NeedsCXX(v.Redis) {
			a.set("OFFICIAL_PACKAGES", "g++")
		}
		if v.Recipe == variants.RecipeOfficialAlpine {
			r.Target = TargetOfficialAlpine
			a.set("OFFICIAL_BUILD", "official-alpine-build")
			a.set("COMPILER_VERSION", "gcc on musl (Debian's default gcc with musl-gcc's specs, on "+base+")")
			a.set("BUILD_TLS", "no")
		}
	case variants.KindImage:
		return Recipe{}, fmt.Errorf("rendering %q: an image entry (%s) is pulled, not built: it has no recipe", v.Name, v.Image)
	default:
		return Recipe{}, fmt.Errorf("rendering %q: unknown kind %q", v.Name, v.Kind)
	}
	if v.Source.SHA256 != "" {
		a.set("REDIS_SHA256", pickCached(opt.SourcesDir, v.Source))
	}
	labels(v, opt, a)

	// Every declared ARG gets a value: unused ones their default (often
	// empty), so the build args say exactly what BuildKit will use.
	for n, def := range ArgDefaults(df) {
		if _, ok := a.m[n]; !ok {
			a.m[n] = def
		}
	}
	a.m["RECIPE_DIGEST"] = RecipeDigest(df, r.Target, r.Platform, a.m)
	r.BuildArgs = a.m
	return r, nil
}

// RecipeDigest identifies what BuildKit is asked to build: the Dockerfile,
// the target and the build args other than the creation time and the
// digest itself. Two recipes with the same digest build the same image.
func RecipeDigest(dockerfile []byte, target, platform string, args map[string]string) string {
	h := sha256.New()
	h.Write(dockerfile)
	fmt.Fprintf(h, "\x00target=%s\x00", target)
	if platform != "" {
		fmt.Fprintf(h, "platform=%s\x00", platform)
	}
	keys := make([]string, 0, len(args))
	for k := range args {
		if k != "CREATED" && k != "RECIPE_DIGEST" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(h, "%s=%s\x00", k, args[k])
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

type args struct{ m map[string]string }

func newArgs() *args                      { return &args{m: map[string]string{}} }
func (a *args) set(k, v string)           { a.m[k] = v }
func (a *args) list(k string, v []string) { a.m[k] = strings.Join(v, " ") }

// cross sets the build args of a cross-compiled variant: the target's
// Debian architecture and triplet, make's variables for it, and the loader
// that lists its binaries' libraries.
func cross(c variants.Cross, a *args) {
	a.set("CROSS_ARCH", c.Arch)
	a.set("CROSS_TRIPLE", c.Triple)
	a.set("CROSS_MAKE", fmt.Sprintf("uname_M=%s DEB_HOST_GNU_TYPE=%s AR=%s-ar RANLIB=%s-ranlib", c.UnameM, c.Triple, c.Triple, c.Triple))
	a.set("CROSS_LDD", c.Loader+" --list")
}

// tuned fills the build args of a from-source variant.
func tuned(v variants.Variant, opt Options, a *args) error {
	var cc, cxx string
	var cflags, ldflags, redisCFlags, redisLDFlags []string
	fam, ver := v.Compiler.Family, v.Compiler.Version
	prefix := "" // a cross compiler's: its triplet and a dash
	if c, ok := variants.CrossFor(v.PlatformOf()); ok {
		prefix = c.Triple + "-"
	}
	switch fam {
	case variants.FamilyGCC:
		cc, cxx = prefix+"gcc-"+ver, prefix+"g++-"+ver
		if v.IsMusl() {
			cc, cxx = "musl-gcc-"+ver, "" // the toolchain's wrapper: gcc with musl-gcc's specs; no C++ on musl here
		}
		a.set("GCC_VERSION", ver)
		cflags = append(cflags, "-frecord-gcc-switches")
	case variants.FamilyClang:
		if v.IsMusl() {
			return fmt.Errorf("clang has no musl sysroot here: build musl with gcc or zig")
		}
		cc, cxx = prefix+"clang-"+ver, prefix+"clang++-"+ver
		a.set("CLANG_VERSION", ver)
		cflags = append(cflags, "-frecord-command-line")
	case variants.FamilyZig:
		if v.Toolchain.SHA256 == "" {
			return fmt.Errorf("zig %s: no toolchain source (add a source named zig-%s)", ver, ver)
		}
		cc, cxx = "zigcc", "zigcxx"
		if v.IsMusl() {
			cc, cxx = "zigcc-musl", "zigcxx-musl" // zig cc/c++ -target x86_64-linux-musl
		}
		a.set("ZIG_SHA256", pickCached(opt.SourcesDir, v.Toolchain))
		// zig cc targets the build machine's CPU unless told otherwise,
		// and traps on undefined behaviour at -O0: make its defaults match
		// gcc's and clang's (baseline x86-64, no sanitizer).
		cflags = append(cflags, "-frecord-command-line", "-fno-sanitize=undefined")
	default:
		return fmt.Errorf("unknown compiler family %q", fam)
	}
	if ver == "" {
		return fmt.Errorf("compiler %s has no version", fam)
	}
	a.set("TOOLCHAIN", fam)
	a.set("CC", cc)
	a.set("CXX", cxx)
	a.set("COMPILER", v.Compiler.String())
	a.set("COMPILER_VERSION", compilerVersion(v.Compiler))
	if c, ok := variants.CrossFor(v.PlatformOf()); ok {
		a.set("COMPILER_VERSION", compilerVersion(v.Compiler)+", cross-compiling for "+c.Triple)
	}

	opt0 := v.Opt
	if opt0 == "" {
		opt0 = "O2"
	}
	optimization := "-" + opt0
	if fam == variants.FamilyZig {
		// zig cc would hand its clang -O2 for -O1/-O3/-Ofast: hand the
		// spec's level on after it (the last -O wins), see ZigClangOpt.
		if x := variants.ZigClangOpt(opt0); len(x) > 0 {
			optimization += " " + strings.Join(x, " ")
		}
	}
	a.set("OPTIMIZATION", optimization)

	switch {
	case fam == variants.FamilyZig && v.March == "":
		cflags = append(cflags, "-mcpu=baseline")
	case fam == variants.FamilyZig && v.March == "native":
		cflags = append(cflags, "-march=native")
	case fam == variants.FamilyZig:
		// zig names CPUs with underscores (x86_64_v3, skylake_avx512).
		cflags = append(cflags, "-march="+strings.ReplaceAll(v.March, "-", "_"))
	case v.March != "":
		cflags = append(cflags, "-march="+v.March)
	}
	if fam == variants.FamilyZig {
		if why := variants.ZigMtuneRefusal(v.March, v.Mtune); why != "" {
			return errors.New(why)
		}
	} else if v.Mtune != "" {
		cflags = append(cflags, "-mtune="+v.Mtune)
	}
	if v.Mcpu != "" {
		cflags = append(cflags, "-mcpu="+v.Mcpu)
	}
	cflags = append(cflags, v.CFlags...)
	ldflags = append(ldflags, v.LDFlags...)

	switch v.LTO {
	case "", "off":
	case "full":
		switch fam {
		case variants.FamilyGCC:
			redisCFlags = append(redisCFlags, "-flto=auto")
			redisLDFlags = append(redisLDFlags, "-flto=auto", "-frecord-gcc-switches")
		case variants.FamilyClang:
			redisCFlags = append(redisCFlags, "-flto")
			redisLDFlags = append(redisLDFlags, "-flto", "-fuse-ld=lld")
		case variants.FamilyZig:
			redisCFlags = append(redisCFlags, "-flto")
			redisLDFlags = append(redisLDFlags, "-flto")
		}
	case "thin":
		switch fam {
		case variants.FamilyGCC:
			return fmt.Errorf("gcc has no thin LTO (use lto: full)")
		case variants.FamilyClang:
			redisCFlags = append(redisCFlags, "-flto=thin")
			redisLDFlags = append(redisLDFlags, "-flto=thin", "-fuse-ld=lld")
		case variants.FamilyZig:
			redisCFlags = append(redisCFlags, "-flto=thin")
			redisLDFlags = append(redisLDFlags, "-flto=thin")
		}
	default:
		return fmt.Errorf("unknown lto %q (accepted: off, thin, full)", v.LTO)
	}

	malloc := "libc"
	switch v.Allocator {
	case "", variants.AllocJemalloc:
		malloc = "jemalloc"
	case variants.AllocJemallocSystem:
		// Redis 7.0 has no USE_SYSTEM_JEMALLOC: compile zmalloc against
		// Debian's jemalloc.h (its je_* names map to the unprefixed
		// symbols) and link libjemalloc, the way Debian's package does.
		redisCFlags = append(redisCFlags, "-DUSE_JEMALLOC")
		redisLDFlags = append(redisLDFlags, "-Wl,--no-as-needed", "-ljemalloc")
	case variants.AllocMimalloc:
		// A direct DT_NEEDED on libmimalloc ahead of libc interposes
		// malloc/free for the whole process.
		redisLDFlags = append(redisLDFlags, "-Wl,--no-as-needed", "-lmimalloc")
	case variants.AllocTcmalloc:
		malloc = "tcmalloc_minimal"
	case variants.AllocLibc:
	default:
		return fmt.Errorf("unknown allocator %q", v.Allocator)
	}
	a.set("MALLOC", malloc)
	a.set("BUILD_TLS", yesNo(v.TLS))
	a.list("CFLAGS", cflags)
	a.list("LDFLAGS", ldflags)
	a.list("REDIS_CFLAGS", redisCFlags)
	a.list("REDIS_LDFLAGS", redisLDFlags)

	a.set("LABEL_CFLAGS", strings.TrimSpace(strings.Join([]string{"-" + opt0, a.m["CFLAGS"], a.m["REDIS_CFLAGS"]}, " ")))
	a.set("LABEL_LDFLAGS", strings.TrimSpace(a.m["LDFLAGS"]+" "+a.m["REDIS_LDFLAGS"]))
	a.set("ISA_LEVEL", isaLevel(v.March))
	if v.PlatformOf() != variants.PlatformAMD64 {
		a.set("ISA_LEVEL", "") // x86-64 levels say nothing of another architecture's code
	}
	if v.March == "native" {
		a.set("ISA_FLAGS", opt.BuildFlags)
	}
	return nil
}

// pgo sets the build args of a profile-guided build: the instrumenting
// and the profile-using flags (Redis's own sources only), the training and
// the load generator's context.
func pgo(v variants.Variant, opt Options, a *args, r *Recipe) error {
	if opt.LoadgenDir == "" {
		return errors.New("pgo: the training needs the static load generator (" + LoadgenBinary + "; `make build` builds it next to redis-variants)")
	}
	var gen, use, useLD []string
	switch v.Compiler.Family {
	case variants.FamilyGCC:
		// Redis runs threads (bio, I/O): atomic counter updates where the
		// target has them. Partial training: code the training never ran
		// keeps its normal optimisation instead of being optimised for size.
		gen = []string{"-fprofile-generate=/pgo/raw", "-fprofile-update=prefer-atomic"}
		use = []string{"-fprofile-use=/pgo/gcda", "-fprofile-partial-training", "-Wmissing-profile"}
		useLD = []string{"-fprofile-use=/pgo/gcda", "-fprofile-partial-training"}
	case variants.FamilyClang:
		gen = []string{"-fprofile-instr-generate"}
		use = []string{"-fprofile-instr-use=/pgo/redis.profdata", "-Wprofile-instr-missing"}
		useLD = []string{"-fprofile-instr-use=/pgo/redis.profdata"}
	default:
		return fmt.Errorf("pgo: not with %s (accepted with gcc and clang)", v.Compiler.Family)
	}
	if v.IsMusl() {
		return errors.New("pgo: not with libc musl")
	}
	if err := training(a, "PGO_", v.PGO.Train); err != nil {
		return fmt.Errorf("pgo: %w", err)
	}
	r.Contexts[LoadgenContext] = opt.LoadgenDir
	a.set("PGO_STAGE", "pgo-train")
	a.set("PGO_TRAINED_ON", opt.BuildCPU)
	a.set("PGO", v.Compiler.Family)
	a.list("PGO_GEN_CFLAGS", gen)
	a.list("PGO_GEN_LDFLAGS", gen)
	a.list("PGO_USE_CFLAGS", use)
	a.list("PGO_USE_LDFLAGS", useLD)
	a.set("LABEL_CFLAGS", a.m["LABEL_CFLAGS"]+" "+strings.Join(use, " "))
	a.set("LABEL_LDFLAGS", strings.TrimSpace(a.m["LABEL_LDFLAGS"]+" "+strings.Join(useLD, " ")))
	return nil
}

// training sets the build args of a training (prefix PGO_ or BOLT_) that
// the recipe's train-redis runs: TRAINING (each test:pipeline), CLIENTS,
// DATA_SIZE, KEYSPACE, REQUESTS.
func training(a *args, prefix string, t variants.Training) error {
	if len(t.Tests) == 0 || t.Requests < 1 || t.Clients < 1 {
		return fmt.Errorf("the training needs tests, clients and requests (have %+v)", t)
	}
	var cells []string
	pipes := t.Pipelines
	if len(pipes) == 0 {
		pipes = []int{1}
	}
	for _, test := range t.Tests {
		for _, p := range pipes {
			cells = append(cells, fmt.Sprintf("%s:%d", test, p))
		}
	}
	a.list(prefix+"TRAINING", cells)
	a.set(prefix+"CLIENTS", fmt.Sprint(t.Clients))
	a.set(prefix+"DATA_SIZE", fmt.Sprint(max(t.DataSize, 1)))
	a.set(prefix+"KEYSPACE", fmt.Sprint(max(t.Keyspace, 1)))
	a.set(prefix+"REQUESTS", fmt.Sprint(t.Requests))
	return nil
}

// trainingEnd starts the first stage after a PGO build's training: what
// the training depends on is above it.
const trainingEnd = "\nFROM build-env AS pgo-none\n"

// TrainingDigest identifies what a PGO build's training depends on in rec:
// the recipe up to the end of the training stage and the build args
// declared there, but for the stage selectors and make's -j. Labels (the
// build machine's CPU among them) and everything after the training (the
// optimised build, BOLT, the runtime) are not in it, so it is the same on
// every machine that would train the same instrumented binary the same way.
func TrainingDigest(rec Recipe) (string, error) {
	end := bytes.Index(rec.Dockerfile, []byte(trainingEnd))
	if end < 0 {
		return "", fmt.Errorf("the recipe has no %q: cannot tell what its training depends on", strings.TrimSpace(trainingEnd))
	}
	prefix := rec.Dockerfile[:end]
	h := sha256.New()
	h.Write(prefix)
	names := slices.Sorted(maps.Keys(ArgDefaults(prefix)))
	for _, n := range names {
		if strings.HasSuffix(n, "_STAGE") || n == "MAKE_JOBS" {
			continue
		}
		fmt.Fprintf(h, "%s=%s\x00", n, rec.BuildArgs[n])
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// UseStoredProfile turns the recipe of a PGO build into one that builds
// with the profile in dir (as the training exports it) instead of
// training: the pgo-stored stage, dir as the named context "profile",
// trainedOn (the CPU it was trained on) for the label.
func UseStoredProfile(rec *Recipe, dir, trainedOn string) {
	rec.BuildArgs = maps.Clone(rec.BuildArgs)
	rec.Contexts = maps.Clone(rec.Contexts)
	rec.BuildArgs["PGO_STAGE"] = "pgo-stored"
	rec.BuildArgs["PGO_TRAINED_ON"] = trainedOn
	rec.BuildArgs["RECIPE_DIGEST"] = RecipeDigest(rec.Dockerfile, rec.Target, rec.Platform, rec.BuildArgs)
	rec.Contexts[ProfileContext] = dir
}

// BOLTVersion is the LLVM release whose BOLT (Debian's bolt-N) rewrites a
// BOLT build, whatever compiled it: the newest that bookworm carries, and
// the first with -reorder-functions=cdsort.
const BOLTVersion = "19"

// BOLTOptions are llvm-bolt's options for the optimised binary: blocks
// laid out by extended TSP, functions ordered by cache-directed sort, cold
// blocks of every function split out, identical functions folded, and
// dynamic statistics printed before and after (in the build log).
var BOLTOptions = []string{
	"-reorder-blocks=ext-tsp", "-reorder-functions=cdsort",
	"-split-functions", "-split-all-cold", "-split-eh", "-icf=1", "-dyno-stats",
}

// bolt sets the build args of a BOLT build: the stage, BOLT's version and
// options, the training and the load generator's context.
func bolt(v variants.Variant, opt Options, a *args, r *Recipe) error {
	if opt.LoadgenDir == "" {
		return errors.New("bolt: the training needs the static load generator (" + LoadgenBinary + "; `make build` builds it next to redis-variants)")
	}
	switch v.Compiler.Family {
	case variants.FamilyGCC, variants.FamilyClang:
	default:
		return fmt.Errorf("bolt: not with %s (accepted with gcc and clang)", v.Compiler.Family)
	}
	if v.IsMusl() {
		return errors.New("bolt: not with libc musl")
	}
	if err := training(a, "BOLT_", v.BOLT.Train); err != nil {
		return fmt.Errorf("bolt: %w", err)
	}
	r.Contexts[LoadgenContext] = opt.LoadgenDir
	a.set("BOLT_STAGE", "bolt-train")
	a.set("BOLT_VERSION", BOLTVersion)
	a.set("BOLT", "llvm-bolt-"+BOLTVersion)
	a.list("BOLT_OPTIONS", BOLTOptions)
	return nil
}

// compilerVersion is what Go knows about the compiler before the build:
// the package or archive it comes from. The build stage records the real
// `cc --version` in build-info.json.
func compilerVersion(c variants.Compiler) string {
	switch c.Family {
	case variants.FamilyGCC:
		return "gcc " + c.Version + " (Debian package gcc-" + c.Version + ")"
	case variants.FamilyClang:
		return "clang " + c.Version + " (Debian package clang-" + c.Version + ")"
	case variants.FamilyZig:
		return "zig " + c.Version + " cc"
	}
	return c.String()
}

// labels fills the label-only args.
func labels(v variants.Variant, opt Options, a *args) {
	spec := v
	spec.Pos = variants.Pos{}
	b, _ := json.Marshal(spec)
	created := opt.Created
	if created.IsZero() {
		created = time.Unix(0, 0)
	}
	a.set("CREATED", created.UTC().Format(time.RFC3339))
	a.set("VARIANT_NAME", v.Name)
	a.set("VARIANT_ID", v.ID)
	a.set("VARIANT_KIND", v.Kind)
	a.set("VARIANT_SPEC", string(b))
	a.set("REDIS_VERSION", v.Redis)
	// where the archive built from came from: the source's URL, or the
	// fallback (a repack) whose archive the source cache holds
	src := v.Source.Location(a.m["REDIS_SHA256"])
	if src == "" {
		src = v.Source.URL
	}
	if v.Kind == variants.KindDistro {
		src = "debian:redis-server"
	}
	a.set("SOURCE_URL", src)
	a.set("SOURCE_SHA256", a.m["REDIS_SHA256"])
	a.set("OPT", v.Opt)
	a.set("MARCH", v.March)
	a.set("MTUNE", v.Mtune)
	a.set("MCPU", v.Mcpu)
	a.set("PLATFORM", v.PlatformOf())
	a.set("LTO", v.LTO)
	a.set("ALLOCATOR", v.Allocator)
	a.set("TLS", yesNo(v.TLS))
	libc := v.Libc
	if libc == "" {
		libc = variants.LibcGlibc
	}
	a.set("LIBC", libc)
	a.set("BUILD_CPU", opt.BuildCPU)
	a.set("BUILD_LEVEL", opt.BuildLevel)
	if _, ok := a.m["ISA_LEVEL"]; !ok {
		a.set("ISA_LEVEL", "v1")
	}
}

// isaLevel is the x86-64 level a binary built with -march=m needs.
func isaLevel(m string) string {
	switch m {
	case "", "x86-64", "k8", "k8-sse3", "nocona", "core2", "penryn", "amdfam10", "barcelona", "bonnell", "atom":
		return "v1"
	case "x86-64-v2", "nehalem", "westmere", "sandybridge", "ivybridge", "silvermont", "slm", "goldmont",
		"goldmont-plus", "tremont", "btver1", "btver2", "bdver1", "bdver2", "bdver3", "bdver4":
		return "v2"
	case "x86-64-v3", "haswell", "broadwell", "skylake", "alderlake", "raptorlake", "meteorlake",
		"znver1", "znver2", "znver3", "arrowlake", "arrowlake-s", "lunarlake", "gracemont",
		"sierraforest", "grandridge", "clearwaterforest":
		return "v3"
	case "x86-64-v4", "skylake-avx512", "cascadelake", "cooperlake", "cannonlake", "icelake-client",
		"icelake-server", "tigerlake", "sapphirerapids", "rocketlake", "znver4", "znver5",
		"graniterapids", "graniterapids-d", "emeraldrapids", "knl", "knm", "pantherlake":
		return "v4"
	case "native":
		return "native"
	}
	return m
}

// pickCached returns the checksum of whichever of src's candidates is in
// the cache folder dir (by name only: the build checks the content with
// sha256sum), else src's own checksum.
func pickCached(dir string, src variants.Source) string {
	if dir == "" {
		return src.SHA256
	}
	cands := []string{src.SHA256}
	for _, f := range src.Fallbacks {
		cands = append(cands, f.SHA256)
	}
	for _, c := range cands {
		if c == "" {
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, "sha256", c)); err == nil {
			return c
		}
	}
	return src.SHA256
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// HostOptions returns Options filled with this machine's CPU facts.
func HostOptions(sourcesDir string) (Options, error) {
	in, err := machine.Read()
	if err != nil {
		return Options{SourcesDir: sourcesDir}, err
	}
	return Options{SourcesDir: sourcesDir, BuildCPU: in.CPUModel, BuildLevel: in.Level, BuildFlags: strings.Join(in.Flags, " "),
		LoadgenDir: loadgenNextToExecutable()}, nil
}

// loadgenNextToExecutable is the folder of the running executable when
// the static load generator is there (`make build` puts it there), else "".
func loadgenNextToExecutable() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	dir := filepath.Dir(exe)
	if st, err := os.Stat(filepath.Join(dir, LoadgenBinary)); err == nil && st.Mode().IsRegular() {
		return dir
	}
	return ""
}
