package verify

import (
	"fmt"
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
	return readELF(t, out)
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
	// a spec of the compiler's default -march, and a binary built for another
	tuned := &BinaryInfo{CommandLines: []string{strings.Replace(realRecord[0], "-march=x86-64", "-march=znver3", 1)}}
	if c := checkByName(FlagChecks(tuned, v), "binary -march"); c.OK || !strings.Contains(c.Detail, "znver3") {
		t.Fatal(c)
	}
	v.Opt = "O2" // lua's -O2 must not satisfy a spec of -O2 for Redis itself
	if c := checkByName(FlagChecks(info, v), "binary -O level"); c.OK {
		t.Fatal(c)
	}
}

// readELF reads the binary at path as verify does.
func readELF(t *testing.T, path string) *BinaryInfo {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	info, err := ReadBinary(b)
	if err != nil {
		t.Fatal(err)
	}
	return info
}

// link compiles one C file per flag set (each with -frecord-gcc-switches)
// and links them into one ELF: Redis's own object beside a dependency's.
func link(t *testing.T, flagSets ...[]string) *BinaryInfo {
	t.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Fatal("these tests compile a real ELF: gcc is missing (apt-get install gcc)")
	}
	dir := t.TempDir()
	var objs []string
	for i, flags := range flagSets {
		src := filepath.Join(dir, fmt.Sprintf("u%d.c", i))
		body := fmt.Sprintf("int f%d(int x) { return x * %d; }\n", i, i+2)
		if i == 0 {
			body += "int main(void) { return 0; }\n"
		}
		os.WriteFile(src, []byte(body), 0o644)
		obj := src + ".o"
		args := append(append([]string{"-frecord-gcc-switches"}, flags...), "-c", src, "-o", obj)
		if b, err := exec.Command("gcc", args...).CombinedOutput(); err != nil {
			t.Fatalf("gcc %v: %v: %s", args, err, b)
		}
		objs = append(objs, obj)
	}
	out := filepath.Join(dir, "t")
	args := append(append([]string{}, objs...), "-o", out)
	for _, f := range flagSets[0] {
		if strings.HasPrefix(f, "-flto") || strings.HasPrefix(f, "-O") {
			args = append(args, f)
		}
	}
	if b, err := exec.Command("gcc", args...).CombinedOutput(); err != nil {
		t.Fatalf("gcc link: %v: %s", err, b)
	}
	return readELF(t, out)
}

func TestObjectsOptCheck(t *testing.T) {
	own := []string{"-O3", "-std=gnu11", "-g", "-ggdb", "-march=x86-64-v2"}
	v := variants.Variant{Kind: variants.KindVariant, Opt: "O3", March: "x86-64-v2", LTO: "off"}
	// A dependency compiled with the user's flags alone (no -O): caught,
	// though Redis's own sources pass the -O level check.
	broken := link(t, own, []string{"-march=x86-64-v2"})
	if c := checkByName(FlagChecks(broken, v), "binary -O level"); !c.OK {
		t.Fatal(c)
	}
	c := checkByName(FlagChecks(broken, v), "binary objects -O")
	if c.OK || !strings.Contains(c.Detail, "MISMATCH") || !strings.Contains(c.Detail, "1 recorded command line") {
		t.Fatal(c)
	}
	// The dependency at its own level (-Os, jemalloc's -O3 -funroll-loops): fine.
	fixed := link(t, own, []string{"-Os", "-march=x86-64-v2"}, []string{"-O3", "-funroll-loops", "-std=gnu11", "-g3"})
	if c := checkByName(FlagChecks(fixed, v), "binary objects -O"); !c.OK || !strings.Contains(c.Detail, "-Os ×1") {
		t.Fatal(c)
	}
	// A spec of -O0 accepts whatever the dependencies chose: nothing to
	// hold them to, so the check is not applicable (neither pass nor fail).
	v.Opt = "O0"
	if c := checkByName(FlagChecks(broken, v), "binary objects -O"); !c.NotApplicable || c.Failed() {
		t.Fatal(c)
	}
	// gcc LTO: the link-time (GIMPLE) records carry the level too.
	v = variants.Variant{Kind: variants.KindVariant, Opt: "O2", LTO: "full"}
	lto := link(t, []string{"-O2", "-std=gnu11", "-g", "-ggdb", "-flto"}, []string{"-O2", "-flto"})
	if c := checkByName(FlagChecks(lto, v), "binary objects -O"); !c.OK {
		t.Fatal(c, lto.CommandLines)
	}
}

// What Redis 8.0.2's redis-server recorded when built by gcc 14 with
// `make CFLAGS="-frecord-gcc-switches -march=x86-64-v3" OPTIMIZATION=-O3`:
// the last line is the bundled jemalloc, whose configured CFLAGS the
// command-line CFLAGS replaced. Redis's own sources are -std=gnu11 -ggdb.
var redis8OverriddenRecord = []string{
	"GNU C11 14.2.0 -march=x86-64-v3 -g -ggdb -O3 -std=gnu11 -fasynchronous-unwind-tables",
	"GNU C99 14.2.0 -march=x86-64-v3 -g -ggdb -O3 -std=c99 -fPIC -fasynchronous-unwind-tables",
	"GNU C17 14.2.0 -march=x86-64-v3 -O2 -fasynchronous-unwind-tables",
	"GNU C99 14.2.0 -march=x86-64-v3 -g -Os -std=c99 -fasynchronous-unwind-tables",
	"GNU C17 14.2.0 -march=x86-64-v3 -g -Os -fasynchronous-unwind-tables",
	"GNU C17 14.2.0 -march=x86-64-v3 -fasynchronous-unwind-tables",
}

func TestRedis8Record(t *testing.T) {
	info := &BinaryInfo{CommandLines: redis8OverriddenRecord}
	if fl, own := info.RedisFlags(); !own || len(fl) != 1 || fl[0].Opt != "O3" {
		t.Fatalf("%v %+v", own, fl)
	}
	v := variants.Variant{Opt: "O3", March: "x86-64-v3", LTO: "off"}
	c := checkByName(FlagChecks(info, v), "binary objects -O")
	if c.OK || !strings.Contains(c.Detail, "GNU C17 14.2.0 -march=x86-64-v3 -fasynchronous-unwind-tables") {
		t.Fatal(c)
	}
	// Built with CFLAGS in the environment: jemalloc keeps its -O3.
	fixed := append(append([]string{}, redis8OverriddenRecord[:5]...),
		"GNU C11 14.2.0 -march=x86-64-v3 -g3 -O3 -std=gnu11 -fvisibility=hidden -funroll-loops -fasynchronous-unwind-tables")
	info = &BinaryInfo{CommandLines: fixed}
	if fl, own := info.RedisFlags(); !own || len(fl) != 1 {
		t.Fatalf("jemalloc's gnu11 line is not Redis's own: %+v", fl)
	}
	for _, c := range FlagChecks(info, v) {
		if !c.OK {
			t.Fatal(c)
		}
	}
}
