package verify

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redis-variants/redis-variants/variants"
)

var v2CPU = strings.Fields("fpu sse sse2 pni ssse3 cx16 sse4_1 sse4_2 popcnt lahf_lm hypervisor")

func TestISAGate(t *testing.T) {
	err := ISAGate(map[string]string{LabelISALevel: "v3"}, v2CPU)
	if err == nil {
		t.Fatal("a v3 image on a v2 CPU must be refused")
	}
	for _, f := range []string{"avx2", "bmi1", "bmi2", "fma", "f16c", "movbe", "abm (lzcnt)", "xsave", "x86-64-v3"} {
		if !strings.Contains(err.Error(), f) {
			t.Errorf("message lacks %q: %v", f, err)
		}
	}
	if err := ISAGate(map[string]string{LabelISALevel: "v2"}, v2CPU); err != nil {
		t.Fatal(err)
	}
	if err := ISAGate(map[string]string{}, nil); err != nil {
		t.Fatal("no label: baseline", err)
	}
	v3 := append(append([]string{}, v2CPU...), strings.Fields("avx avx2 bmi1 bmi2 f16c fma abm movbe xsave")...)
	if err := ISAGate(map[string]string{LabelISALevel: "v4"}, v3); err == nil || !strings.Contains(err.Error(), "avx512f") {
		t.Fatal(err)
	}
	if HostLevel(v3) != "v3" || HostLevel(v2CPU) != "v2" || HostLevel(nil) != "v1" {
		t.Fatal(HostLevel(v3), HostLevel(v2CPU))
	}
	// native: only instruction flags count, not e.g. "hypervisor" or "constant_tsc".
	native := map[string]string{LabelISALevel: "native", LabelISAFlags: "sse4_2 avx512f constant_tsc hypervisor sha_ni"}
	err = ISAGate(native, append(append([]string{}, v3...), "sha_ni"))
	if err == nil || !strings.Contains(err.Error(), "avx512f") || strings.Contains(err.Error(), "constant_tsc") {
		t.Fatal(err)
	}
	if err := ISAGate(map[string]string{LabelISALevel: "native"}, v3); err == nil {
		t.Fatal("native without flags must be refused")
	}
	if err := ISAGate(map[string]string{LabelISALevel: "v9"}, v3); err == nil {
		t.Fatal("unknown level")
	}
}

func TestHostCPUFlags(t *testing.T) {
	flags, err := HostCPUFlags()
	if err != nil {
		t.Fatal(err)
	}
	// Go's own toolchain needs SSE2 on amd64; the flags must say so.
	found := false
	for _, f := range flags {
		found = found || f == "sse2"
	}
	if !found {
		t.Fatalf("no sse2 in %v", flags)
	}
	r := strings.NewReader("processor\t: 0\nflags\t\t: fpu sse sse2 avx\nbugs\t: x\n")
	if fs, err := ParseCPUInfoFlags(r); err != nil || len(fs) != 4 {
		t.Fatal(fs, err)
	}
}

// compile builds a tiny ELF with gcc recording its switches.
func compile(t *testing.T, args ...string) *BinaryInfo {
	t.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Fatal("these tests compile a real ELF: gcc is missing (apt-get install gcc)")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "t.c")
	os.WriteFile(src, []byte("#include <stdlib.h>\nint main(void){ void *p = malloc(16); free(p); return 0; }\n"), 0o644)
	out := filepath.Join(dir, "t")
	cmd := exec.Command("gcc", append(append([]string{"-frecord-gcc-switches"}, args...), src, "-o", out)...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v: %s", err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	info, err := ReadBinary(b)
	if err != nil {
		t.Fatal(err)
	}
	return info
}

func checkByName(cs []Check, name string) Check {
	for _, c := range cs {
		if c.Name == name {
			return c
		}
	}
	return Check{Name: name, Detail: "missing"}
}

func TestBinaryFlags(t *testing.T) {
	v := variants.Variant{Kind: variants.KindVariant, Opt: "O3", LTO: "off", Allocator: "libc", Compiler: variants.Compiler{Family: "gcc", Version: "12"}}
	// labels saying O3 while the binary records O1: caught.
	o1 := compile(t, "-O1", "-std=c11", "-march=x86-64-v2")
	c := checkByName(FlagChecks(o1, v), "binary -O level")
	if c.OK || !strings.Contains(c.Detail, "MISMATCH") || !strings.Contains(c.Detail, "-O1") {
		t.Fatal(c)
	}
	v.Opt = "O1"
	v.March = "x86-64-v2"
	for _, c := range FlagChecks(o1, v) {
		if !c.OK {
			t.Fatal(c)
		}
	}
	v.March = "x86-64-v3"
	if c := checkByName(FlagChecks(o1, v), "binary -march"); c.OK {
		t.Fatal(c)
	}
	// LTO: gcc records the link-time (GIMPLE) command line.
	lto := compile(t, "-O2", "-flto")
	v = variants.Variant{Kind: variants.KindVariant, Opt: "O2", LTO: "full"}
	if c := checkByName(FlagChecks(lto, v), "binary LTO"); !c.OK {
		t.Fatal(c)
	}
	v.LTO = "off"
	if c := checkByName(FlagChecks(lto, v), "binary LTO"); c.OK {
		t.Fatal("LTO binary with spec lto=off must fail", c)
	}
	// compiler identity
	if c := CompilerCheck(o1, variants.Compiler{Family: "gcc", Version: "12"}); !c.OK {
		t.Fatal(c)
	}
	if c := CompilerCheck(o1, variants.Compiler{Family: "clang", Version: "16"}); c.OK || !strings.Contains(c.Detail, "GCC") {
		t.Fatal(c)
	}
	if c := CompilerCheck(o1, variants.Compiler{Family: "gcc", Version: "13"}); c.OK {
		t.Fatal("gcc 12 binary with spec gcc-13 must fail", c)
	}
	// no record at all: flags cannot be confirmed, which fails.
	plain := compile(t, "-O2")
	plain.CommandLines = nil
	if c := checkByName(FlagChecks(plain, v), "binary -O level"); c.OK {
		t.Fatal(c)
	}
	// a binary linked with libc malloc is libc, not mimalloc.
	if a := AllocatorFromBinary(o1); a != variants.AllocLibc {
		t.Fatal(a)
	}
	if c := AllocatorCheck(variants.AllocMimalloc, "libc", "", o1); c.OK {
		t.Fatal("spec mimalloc on a libc binary must fail", c)
	}
}

func TestParseFlagsZig(t *testing.T) {
	// what zig 0.11's `zig cc -O3` was seen to record: clang at -O2.
	f := ParseFlags("/opt/zig/zig clang -fno-caret-diagnostics -O2 -march=x86-64 -std=c11 -pedantic -c server.c")
	if f.Opt != "O2" || f.March != "x86-64" || f.LTO {
		t.Fatalf("%+v", f)
	}
	info := &BinaryInfo{CommandLines: []string{f.Line}}
	c := checkByName(FlagChecks(info, variants.Variant{Compiler: variants.Compiler{Family: "zig"}, Opt: "O3"}), "binary -O level")
	if c.OK || !strings.Contains(c.Detail, "zig cc") {
		t.Fatal(c)
	}
}

// What the gcc -O1 libc image's redis-server recorded (Redis 7.0.15): Redis
// (-std=c11), hiredis (c99, OPTIMIZATION), lua (-O2), and a -Os dependency.
var realRecord = []string{
	"GNU C11 12.2.0 -mtune=generic -march=x86-64 -g -ggdb -O1 -std=c11 -fasynchronous-unwind-tables",
	"GNU C99 12.2.0 -mtune=generic -march=x86-64 -g -ggdb -O1 -std=c99 -fPIC -fasynchronous-unwind-tables",
	"GNU C17 12.2.0 -mtune=generic -march=x86-64 -O2 -fasynchronous-unwind-tables",
	"GNU C99 12.2.0 -mtune=generic -march=x86-64 -g -Os -std=c99 -fasynchronous-unwind-tables",
}

func TestRealRedisRecord(t *testing.T) {
	info := &BinaryInfo{CommandLines: realRecord}
	if fl, own := info.RedisFlags(); !own || len(fl) != 1 || fl[0].Opt != "O1" {
		t.Fatalf("%v %+v", own, fl)
	}
	v := variants.Variant{Opt: "O1", LTO: "off"}
	for _, c := range FlagChecks(info, v) {
		if !c.OK {
			t.Fatal(c)
		}
	}
	v.Opt = "O2" // lua's -O2 must not satisfy a spec of -O2 for Redis itself
	if c := checkByName(FlagChecks(info, v), "binary -O level"); c.OK {
		t.Fatal(c)
	}
}
