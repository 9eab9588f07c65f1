package machine

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
)

func TestLevel(t *testing.T) {
	v2 := strings.Fields("fpu sse2 cx16 lahf_lm popcnt pni sse4_1 sse4_2 ssse3")
	v3 := append(append([]string{}, v2...), strings.Fields("abm avx avx2 bmi1 bmi2 f16c fma movbe xsave")...)
	v4 := append(append([]string{}, v3...), strings.Fields("avx512f avx512bw avx512cd avx512dq avx512vl")...)
	for _, tc := range []struct {
		flags []string
		want  string
	}{{[]string{"sse2"}, "v1"}, {v2, "v2"}, {v3, "v3"}, {v4, "v4"}, {v4[3:], "v1"}} {
		if got := Level(tc.flags); got != tc.want {
			t.Errorf("Level(%v) = %s, want %s", tc.flags, got, tc.want)
		}
	}
	if got, want := Missing("v3", v2), []string{"abm", "avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "movbe", "xsave"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Missing(v3, v2 flags) = %v, want %v", got, want)
	}
	if got := Missing("v2", v4); len(got) != 0 {
		t.Errorf("Missing(v2, v4 flags) = %v", got)
	}
	// The psABI's lists: SSE3 (pni) is v2, LZCNT (abm) is v3. The tables
	// that once disagreed on these two gave v3 to a CPU lacking SSE3 and
	// v3 to one lacking LZCNT.
	if got := Level(without(v3, "pni")); got != "v1" {
		t.Errorf("no pni: %s, want v1", got)
	}
	if got := Level(without(v3, "abm")); got != "v2" {
		t.Errorf("no abm: %s, want v2", got)
	}
	// CPUID's word for a flag cpuinfo hides counts.
	if got := Level(MergeCPUID(without(v3, "abm"), []string{"abm"})); got != "v3" {
		t.Errorf("abm from CPUID: %s, want v3", got)
	}
	all, err := LevelFlags("x86-64-v4")
	if err != nil || len(all) != 7+9+5 {
		t.Errorf("LevelFlags(x86-64-v4) = %v, %v", all, err)
	}
	if _, err := LevelFlags("v5"); err == nil {
		t.Error("v5 accepted")
	}
}

func without(fs []string, drop string) []string {
	var out []string
	for _, f := range fs {
		if f != drop {
			out = append(out, f)
		}
	}
	return out
}

func TestParseCPUInfo(t *testing.T) {
	text := "processor\t: 0\nmodel name\t: AMD EPYC 9B14\nflags\t\t: fpu sse2 avx2\n\nprocessor\t: 1\nmodel name\t: other\nflags\t: x\n"
	m, f := ParseCPUInfo(text)
	if m != "AMD EPYC 9B14" || !reflect.DeepEqual(f, []string{"fpu", "sse2", "avx2"}) {
		t.Fatalf("got %q %v", m, f)
	}
}

func TestReadThisMachine(t *testing.T) {
	in, err := Read()
	if err != nil {
		t.Fatal(err)
	}
	if in.CPUModel == "" || in.Level == "" || in.Kernel == "" || in.CPUs < 1 {
		t.Fatalf("incomplete: %+v", in)
	}
	// Go's own toolchain needs SSE2 on amd64; the flags must say so.
	if runtime.GOARCH == "amd64" && !slices.Contains(in.Flags, "sse2") {
		t.Fatalf("no sse2 in %v", in.Flags)
	}
	in.Flags[0] = "changed"
	if again, _ := Read(); again.Flags[0] == "changed" {
		t.Fatal("Read hands out its cached flags")
	}
}

func TestSeccompBPF(t *testing.T) {
	dir := t.TempDir()
	sys := filepath.Join(dir, "sys")
	if err := os.MkdirAll(filepath.Join(sys, "net/core"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "config")
	if got := SeccompBPF(sys, cfg); got != "" {
		t.Errorf("no sysctl: %q", got)
	}
	for _, c := range []struct{ jit, cfg, want string }{
		{"1\n", "CONFIG_BPF_JIT=y\nCONFIG_BPF_JIT_ALWAYS_ON=y\n", "JIT-compiled (net.core.bpf_jit_enable=1; CONFIG_BPF_JIT_ALWAYS_ON: no interpreter"},
		{"0\n", "CONFIG_BPF_JIT=y\n# CONFIG_BPF_JIT_ALWAYS_ON is not set\n", "interpreted (net.core.bpf_jit_enable=0)"},
		{"1\n", "", "JIT-compiled (net.core.bpf_jit_enable=1)"},
	} {
		if err := os.WriteFile(filepath.Join(sys, "net/core/bpf_jit_enable"), []byte(c.jit), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(cfg, []byte(c.cfg), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := SeccompBPF(sys, filepath.Join(dir, "absent"), cfg); !strings.HasPrefix(got, c.want) {
			t.Errorf("jit %q config %q: %q, want it to start %q", c.jit, c.cfg, got, c.want)
		}
		// the same configuration gzipped, as /proc/config.gz has it
		var gz bytes.Buffer
		zw := gzip.NewWriter(&gz)
		zw.Write([]byte(c.cfg))
		zw.Close()
		if err := os.WriteFile(cfg+".gz", gz.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := SeccompBPF(sys, cfg+".gz"); !strings.HasPrefix(got, c.want) {
			t.Errorf("jit %q config.gz %q: %q, want it to start %q", c.jit, c.cfg, got, c.want)
		}
	}
	if in, err := Read(); err == nil && in.SeccompBPF == "" {
		t.Errorf("this machine's seccomp BPF mode is not read: %+v", in)
	}
}

// An arm64 machine's /proc/cpuinfo names its features "Features" and no
// model: the core comes from its implementer and part.
func TestParseCPUInfoArm64(t *testing.T) {
	text := "processor\t: 0\nBogoMIPS\t: 243.75\nFeatures\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm lrcpc dcpop asimddp ssbs\n" +
		"CPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x3\nCPU part\t: 0xd0c\nCPU revision\t: 1\n\nprocessor\t: 1\nFeatures\t: fp\nCPU implementer\t: 0x41\nCPU part\t: 0xd0c\n"
	m, f := ParseCPUInfo(text)
	if m != "Arm Neoverse-N1 (e.g. AWS Graviton2)" || len(f) != 17 || f[0] != "fp" || f[16] != "ssbs" {
		t.Fatalf("got %q %v", m, f)
	}
	m, _ = ParseCPUInfo("Features\t: fp\nCPU implementer\t: 0x61\nCPU part\t: 0x022\n")
	if m != "arm64 CPU implementer 0x61 part 0x022" {
		t.Errorf("an unlisted core: %q", m)
	}
	if s := (Info{CPUModel: m, CPUs: 64, Arch: "arm64", Kernel: "6.1", Cgroup: "v2"}).String(); !strings.Contains(s, "64 CPUs (arm64)") {
		t.Errorf("Info.String() = %q", s)
	}
}
