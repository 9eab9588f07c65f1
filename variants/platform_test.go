package variants

import (
	"errors"
	"strings"
	"testing"
)

func TestPlatformIdentity(t *testing.T) {
	amd := variantID(t, `{name: a, compiler: clang-16, opt: O3}`)
	for _, s := range []string{`{name: b, compiler: clang-16, opt: O3, platform: linux/amd64}`, `{name: c, compiler: clang-16, opt: O3, platform: x86_64}`} {
		if id := variantID(t, s); id != amd {
			t.Errorf("%s: ID %s, want %s: naming the build machine's platform is the same build (and older IDs stay)", s, id, amd)
		}
	}
	arm := variantID(t, `{name: d, compiler: clang-16, opt: O3, platform: linux/arm64}`)
	if arm == amd {
		t.Error("an arm64 build has the amd64 build's ID")
	}
	for _, s := range []string{`{name: e, compiler: clang-16, opt: O3, platform: arm64}`, `{name: f, compiler: clang-16, opt: O3, platform: AArch64}`} {
		if id := variantID(t, s); id != arm {
			t.Errorf("%s: ID %s, want %s", s, id, arm)
		}
	}
	if variantID(t, `{name: g, compiler: clang-16, opt: O3, platform: arm64, mcpu: neoverse-n1}`) == arm {
		t.Error("-mcpu did not change the ID")
	}
	if variantID(t, `{name: g, compiler: clang-16, opt: O3, platform: arm64, mcpu: graviton2}`) != variantID(t, `{name: g, compiler: clang-16, opt: O3, platform: arm64, mcpu: neoverse-n1}`) {
		t.Error("graviton2 is not the same build as neoverse-n1")
	}
}

func TestTwinKey(t *testing.T) {
	p := mustParse(t, srcs+`variants:
  - {name: x, compiler: clang-16, opt: O3, lto: full}
  - {name: x-arm64, compiler: clang-16, opt: O3, lto: full, platform: linux/arm64}
  - {name: x-graviton3, compiler: clang-16, opt: O3, lto: full, platform: linux/arm64, mcpu: graviton3}
  - {name: y-arm64, compiler: clang-16, opt: O2, lto: full, platform: linux/arm64}
`)
	k := func(i int) string { return TwinKey(p.Variants[i]) }
	if k(0) != p.Variants[0].ID || k(1) != k(0) || k(2) != k(0) {
		t.Errorf("twin keys %s %s %s, want all %s (the amd64 build's ID)", k(0), k(1), k(2), p.Variants[0].ID)
	}
	if k(3) == k(0) {
		t.Error("a build with other flags is a twin")
	}
	v := p.Variants[2]
	if v.Mcpu != "neoverse-v1" || v.Arch() != "arm64" || v.PlatformOf() != PlatformARM64 {
		t.Errorf("graviton3 variant: mcpu %q arch %q platform %q", v.Mcpu, v.Arch(), v.PlatformOf())
	}
	if a := p.Variants[0]; a.Platform != "" || a.Arch() != "amd64" {
		t.Errorf("amd64 variant: platform field %q, arch %q", a.Platform, a.Arch())
	}
}

// TestPlatformErrors: what cannot be cross-built here is refused at the
// field that asks for it, with file:line:column.
func TestPlatformErrors(t *testing.T) {
	for _, tc := range []struct{ spec, want string }{
		{`{name: a, platform: linux/riscv64}`, `test.yaml:14:25: variants[0].platform: unknown platform "linux/riscv64" (accepted: linux/amd64, linux/arm64)`},
		{`{name: a, platform: arm64, march: native}`, `-march=native names the build machine's CPU`},
		{`{name: a, platform: arm64, march: haswell}`, `-march=haswell is not an arm64 architecture version`},
		{`{name: a, platform: arm64, mtune: native}`, `-mtune=native names the build machine's CPU`},
		{`{name: a, platform: arm64, mcpu: neoverse-v9}`, `variants[0].mcpu: unknown arm64 CPU "neoverse-v9"`},
		{`{name: a, platform: arm64, mcpu: graviton4}`, `variants[0].mcpu: gcc 12 does not know neoverse-v2 (it needs gcc 13 or later)`},
		{`{name: a, mcpu: neoverse-n1}`, `mcpu: only with platform linux/arm64`},
		{`{name: a, platform: arm64, compiler: zig-0.11.0}`, `not with zig cc here`},
		{`{name: a, platform: arm64, libc: musl}`, `not with libc musl`},
		{`{name: a, platform: arm64, bolt: true}`, `no BOLT here`},
	} {
		_, err := Parse("test.yaml", []byte(srcs+"variants:\n  - "+tc.spec+"\n"))
		var e *Error
		if !errors.As(err, &e) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error containing %q", tc.spec, err, tc.want)
			continue
		}
		if !strings.HasPrefix(err.Error(), "test.yaml:14:") {
			t.Errorf("%s: %q does not give the line of the entry", tc.spec, err)
		}
	}
	// clang 16 knows neoverse-v2: Graviton4 builds with it
	p := mustParse(t, srcs+"variants:\n  - {name: a, platform: arm64, compiler: clang-16, mcpu: graviton4, mtune: graviton3}\n")
	if v := p.Variants[0]; v.Mcpu != "neoverse-v2" || v.Mtune != "neoverse-v1" {
		t.Errorf("clang-16 graviton4: mcpu %q mtune %q", v.Mcpu, v.Mtune)
	}
}
