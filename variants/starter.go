package variants

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// StarterMachine is what a starter file is written for: the CPU that will
// build and benchmark, and the base image the variants build on.
type StarterMachine struct {
	CPUModel string // e.g. "AMD EPYC 9B14"
	Level    string // x86-64 level the CPU reaches: v1..v4
	Base     string // default DefaultBase
}

// Starter returns a commented variants file for m: the newest Redis
// release the catalogue has for the base's line of releases, the
// compilers the base offers, variants at the CPU's x86-64 level (portable
// to any CPU of that level) and at -march=native (this CPU only), the
// distribution's package and the official image as references. Every
// line it writes parses (TestStarterParses).
func Starter(m StarterMachine) ([]byte, error) {
	if m.Base == "" {
		m.Base = DefaultBase
	}
	base, ok := Bases[m.Base]
	if !ok {
		return nil, fmt.Errorf("unknown base image %q (known: %s)", m.Base, strings.Join(slices.Sorted(maps.Keys(Bases)), ", "))
	}
	level := m.Level
	if level == "" {
		level = "v1"
	}
	march := "x86-64"
	if level != "v1" {
		march = "x86-64-" + level
	}
	redis := base.RedisPkg
	if _, ok := CatalogueSource("redis-" + redis); !ok {
		return nil, fmt.Errorf("the catalogue has no redis %s (the version %s ships)", redis, m.Base)
	}
	gcc, clang := "gcc-"+base.GCC[0], "clang-"+base.Clang[0]
	newest := 0
	for _, v := range base.Clang { // the newest clang: its LTO is the one to try
		if n, _ := strconv.Atoi(v); n > newest {
			newest, clang = n, "clang-"+v
		}
	}
	cpu := m.CPUModel
	if cpu == "" {
		cpu = "this machine's CPU"
	}
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	w("# variants.yaml: a starter file written by `redis-variants init` for %s", cpu)
	w("# (x86-64-%s). Check it with `redis-variants plan`, run it with `redis-variants run`.", level)
	w("#")
	w("# Redis sources come from the built-in catalogue of Redis releases (upstream")
	w("# tarballs with Redis's published sha256; Debian's pool where it has the")
	w("# version): set `redis:` to any release, or add a `sources:` section to use")
	w("# your own tarball. Every field is documented in the README.")
	w("")
	w("defaults:")
	w("  redis: %s               # the release %s ships, so the comparison is like for like", redis, m.Base)
	w("  base: %s", m.Base)
	w("  # compilers this base offers: %s; %s; zig-0.11.0 (zig cc, fetched)",
		strings.Join(prefixed("gcc-", base.GCC), ", "), strings.Join(prefixed("clang-", base.Clang), ", "))
	w("  compiler: %s", gcc)
	w("")
	w("# What each variant is ranked against: the distribution's own package first")
	w("# (the primary reference, also paired with itself as the A/A control), then")
	w("# the official image (pulled; rebuilt from its recipe when no registry has it).")
	w("references:")
	w("  - {name: stock-debian, kind: distro-package}")
	w("  - {name: official, kind: official, recipe: official}")
	w("")
	w("variants:")
	w("  # Portable: runs on any x86-64-%s CPU, as a published image must.", level)
	w("  - {name: gcc-o3-%s, opt: O3, march: %s}", march, march)
	w("  # Fastest here, but tied to CPUs like this one (-march=native).")
	w("  - {name: gcc-o3-native, opt: O3, march: native, mtune: native}")
	w("  # Another compiler with link-time optimisation.")
	w("  - {name: %s-o3-lto, compiler: %s, opt: O3, lto: full, march: %s}", strings.ReplaceAll(clang, "-", ""), clang, march)
	w("  # Another allocator (jemalloc is Redis's default): mimalloc, tcmalloc or libc.")
	w("  - {name: gcc-o3-mimalloc, opt: O3, march: %s, allocator: mimalloc}", march)
	w("  # Profile-guided (trained inside the build by the project's load generator):")
	w("  # - {name: gcc-o3-pgo, opt: O3, march: %s, pgo: true}", march)
	w("")
	w("# Runtime configurations; images are ranked under the first, the others are")
	w("# compared as runtime axes (network: host | bridge | unix | native (no container) | pod (generator in a sidecar); seccomp: default | unconfined).")
	w("runtimes:")
	w("  - {name: host, network: host}")
	w("")
	w("# Benchmark profiles: quick (the default) and full exist built in; override fields here.")
	w("# profiles:")
	w("#   quick: {replicates: 16}")
	return []byte(b.String()), nil
}
