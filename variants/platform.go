package variants

import (
	"fmt"
	"path"
	"slices"
	"strings"
)

// Platforms a tuned variant may be built for (platform: in the file). The
// build machine is linux/amd64; linux/arm64 is cross-compiled by Debian's
// aarch64 toolchains (gcc) or clang --target, its binaries run under
// user-mode emulation (qemu through binfmt_misc) where the build and the
// verification need them to, and it is benchmarked only on an arm64 host.
const (
	PlatformAMD64 = "linux/amd64"
	PlatformARM64 = "linux/arm64"
)

var platforms = []string{PlatformAMD64, PlatformARM64}

// Cross is what a build for a platform needs from a Debian amd64 builder.
type Cross struct {
	Arch    string // Debian's architecture name (dpkg --add-architecture)
	Triple  string // GNU triplet: the cross compilers' prefix, jemalloc's --host
	UnameM  string // what uname -m says on the target (Redis's Makefile reads it)
	Loader  string // the target's dynamic loader (it lists a binary's libraries, as ldd does)
	ELF     string // the ELF machine the target's binaries carry (debug/elf's name)
	Qemu    string // the binfmt_misc entry that runs its binaries here
	CPUFlag string // the compiler flag that picks a CPU: -mcpu
}

var crosses = map[string]Cross{
	PlatformARM64: {Arch: "arm64", Triple: "aarch64-linux-gnu", UnameM: "aarch64", Loader: "/lib/ld-linux-aarch64.so.1",
		ELF: "EM_AARCH64", Qemu: "qemu-aarch64", CPUFlag: "-mcpu"},
}

// CrossFor returns what building for platform p on this (amd64) builder
// needs, and false for the builder's own platform.
func CrossFor(p string) (Cross, bool) {
	c, ok := crosses[p]
	return c, ok
}

// NormPlatform accepts linux/arm64, arm64, aarch64, linux/arm64/v8 (and the
// amd64 spellings) and returns the platform's canonical name.
func NormPlatform(s string) (string, bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	s = strings.TrimPrefix(s, "linux/")
	switch s {
	case "amd64", "x86_64", "x86-64":
		return PlatformAMD64, true
	case "arm64", "aarch64", "arm64/v8":
		return PlatformARM64, true
	}
	return "", false
}

// PlatformOf is the platform v's image is for: its platform field, or
// linux/amd64 when the file names none.
func (v Variant) PlatformOf() string {
	if v.Platform == "" {
		return PlatformAMD64
	}
	return v.Platform
}

// Arch is the architecture of v's image as OCI names it (amd64, arm64).
func (v Variant) Arch() string { return path.Base(v.PlatformOf()) }

// Arm64 CPUs a variant may target with mcpu (and mtune): Arm's Neoverse
// cores and the cloud generations built on them. The Graviton names are
// this tool's aliases, turned into the core's name before the compiler
// sees them: Graviton2 is Neoverse N1, Graviton3 V1, Graviton4 V2 (as AWS
// documents them).
var (
	arm64CPUs = map[string]int{ // name: the first gcc major that knows it
		"generic": 12, "cortex-a72": 12, "cortex-a76": 12, "neoverse-n1": 12, "neoverse-n2": 12,
		"neoverse-v1": 12, "neoverse-512tvb": 12, "neoverse-v2": 13, "ampere1": 12, "a64fx": 12,
	}
	arm64CPUClang = map[string]int{ // the first LLVM major that knows it
		"generic": 14, "cortex-a72": 14, "cortex-a76": 14, "neoverse-n1": 14, "neoverse-n2": 14,
		"neoverse-v1": 14, "neoverse-512tvb": 14, "neoverse-v2": 16, "ampere1": 15, "a64fx": 14,
	}
	gravitons = map[string]string{"graviton2": "neoverse-n1", "graviton3": "neoverse-v1", "graviton4": "neoverse-v2"}
	// -march on arm64 names an architecture version.
	arm64Arches = []string{"armv8-a", "armv8.1-a", "armv8.2-a", "armv8.3-a", "armv8.4-a", "armv8.5-a", "armv8.6-a", "armv9-a"}
)

// Arm64CPU resolves an mcpu value (a Graviton alias or a core) to the name
// the compiler takes, and whether c knows it.
func Arm64CPU(c Compiler, cpu string) (string, error) {
	name := cpu
	if g, ok := gravitons[cpu]; ok {
		name = g
	}
	table := arm64CPUs
	if c.Family == FamilyClang {
		table = arm64CPUClang
	}
	first, known := table[name]
	if !known {
		return "", fmt.Errorf("unknown arm64 CPU %q%s", cpu, accepted(arm64CPUNames()))
	}
	if major := atoiPrefix(c.Version); major < first {
		return "", fmt.Errorf("%s %s does not know %s (it needs %s %d or later)", c.Family, c.Version, name, c.Family, first)
	}
	return name, nil
}

func arm64CPUNames() []string {
	var names []string
	for n := range arm64CPUs {
		names = append(names, n)
	}
	for g := range gravitons {
		names = append(names, g)
	}
	slices.Sort(names)
	return names
}

// TwinKey names v's build spec apart from its platform and CPU target:
// the twins of a spec for amd64 and arm64 share it, and are published as
// one multi-platform index.
func TwinKey(v Variant) string {
	v.Platform, v.Mcpu = "", ""
	return ID(v)
}
