// Package machine describes the machine the tool runs on: CPU model, the
// x86-64 micro-architecture level its flags reach, kernel, cgroup version
// and free disk. Builds record it in image labels; benchmarks in trials.
package machine

import (
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
)

// Info is what the tool records about a machine.
type Info struct {
	CPUModel string   `json:"cpu_model"`
	CPUs     int      `json:"cpus"`
	Level    string   `json:"x86_64_level"` // v1..v4 ("" on arm64)
	Arch     string   `json:"arch,omitempty"`
	Flags    []string `json:"flags,omitempty"`
	Kernel   string   `json:"kernel"`
	Cgroup   string   `json:"cgroup"` // v1, v2, hybrid
	// SeccompBPF says how this kernel runs a seccomp filter (SeccompBPF()):
	// what Docker's default profile costs each system call depends on it.
	SeccompBPF string `json:"seccomp_bpf,omitempty"`
}

// readConfig reads a kernel's build configuration, gzipped
// (/proc/config.gz) or not (/boot/config-*).
func readConfig(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		zr, err := gzip.NewReader(f)
		if err != nil {
			return "", fmt.Errorf("reading %s: %w", path, err)
		}
		r = zr
	}
	b, err := io.ReadAll(io.LimitReader(r, 16<<20))
	return string(b), err
}

// String is the machine in one line, for reports.
func (in Info) String() string {
	isa := "x86-64-" + in.Level
	if in.Level == "" && in.Arch != "" {
		isa = in.Arch
	}
	s := fmt.Sprintf("%s, %d CPUs (%s), kernel %s, cgroup %s", in.CPUModel, in.CPUs, isa, in.Kernel, in.Cgroup)
	if in.SeccompBPF != "" {
		s += ", seccomp filters " + in.SeccompBPF
	}
	return s
}

// SeccompBPF describes how the kernel runs BPF programs, seccomp filters
// among them: JIT-compiled or interpreted (net.core.bpf_jit_enable), and
// whether the interpreter is built at all (CONFIG_BPF_JIT_ALWAYS_ON, from
// the kernel's config where /boot or /proc has it). An old kernel that
// interpreted them paid for every system call under Docker's default
// profile; a JIT-always kernel cannot show that cost.
func SeccompBPF(procSys string, kernelConfigs ...string) string {
	b, err := os.ReadFile(filepath.Join(procSys, "net/core/bpf_jit_enable"))
	if err != nil {
		return ""
	}
	v := strings.TrimSpace(string(b))
	desc := map[string]string{"0": "interpreted", "1": "JIT-compiled", "2": "JIT-compiled (debug)"}[v]
	if desc == "" {
		desc = "bpf_jit_enable " + v
	}
	desc += " (net.core.bpf_jit_enable=" + v
	for _, path := range kernelConfigs {
		cfg, err := readConfig(path)
		if err != nil {
			continue
		}
		if strings.Contains("\n"+cfg, "\nCONFIG_BPF_JIT_ALWAYS_ON=y") {
			desc += "; CONFIG_BPF_JIT_ALWAYS_ON: no interpreter is built, so the interpreted filter's cost cannot be shown here"
		}
		break
	}
	return desc + ")"
}

// Levels lists the CPU flags (as /proc/cpuinfo names them) each x86-64
// micro-architecture level adds to the previous one: the psABI's lists,
// "pni" being SSE3, "abm" LZCNT and "xsave" what OSXSAVE needs. This is the
// one table of levels: the build labels, the ISA gate and the machine
// record all read it.
var Levels = []struct {
	Name  string
	Flags []string
}{
	{"v2", []string{"cx16", "lahf_lm", "popcnt", "pni", "sse4_1", "sse4_2", "ssse3"}},
	{"v3", []string{"abm", "avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "movbe", "xsave"}},
	{"v4", []string{"avx512bw", "avx512cd", "avx512dq", "avx512f", "avx512vl"}},
}

// LevelFlags returns every CPU flag x86-64 level ("v1".."v4", or
// "x86-64-v3") requires, the lower levels' included; v1 (the baseline
// every x86-64 has) needs none.
func LevelFlags(level string) ([]string, error) {
	level = strings.TrimPrefix(level, "x86-64-")
	switch level {
	case "", "v1", "x86-64":
		return nil, nil
	}
	var out []string
	for _, l := range Levels {
		out = append(out, l.Flags...)
		if l.Name == level {
			return out, nil
		}
	}
	return nil, fmt.Errorf("unknown x86-64 level %q (want v1, v2, v3, v4 or native)", level)
}

// Level returns the highest x86-64 level the flags reach.
func Level(flags []string) string {
	level := "v1"
	for _, l := range Levels {
		if len(Missing(l.Name, flags)) > 0 {
			return level
		}
		level = l.Name
	}
	return level
}

// Missing returns the flags that level needs and flags lack, sorted.
func Missing(level string, flags []string) []string {
	need, err := LevelFlags(level)
	if err != nil {
		return []string{err.Error()}
	}
	var miss []string
	for _, f := range need {
		if !slices.Contains(flags, f) {
			miss = append(miss, f)
		}
	}
	sort.Strings(miss)
	return miss
}

// ParseCPUInfo reads the first processor's model name and flags.
func ParseCPUInfo(text string) (model string, flags []string) {
	var implementer, part string
	for _, line := range strings.Split(text, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		switch strings.TrimSpace(k) {
		case "model name":
			if model == "" {
				model = strings.TrimSpace(v)
			}
		case "flags", "Features": // x86's, arm64's
			if flags == nil {
				flags = strings.Fields(v)
			}
		case "CPU implementer":
			if implementer == "" {
				implementer = strings.TrimSpace(v)
			}
		case "CPU part":
			if part == "" {
				part = strings.TrimSpace(v)
			}
		}
	}
	if model == "" && implementer != "" {
		// arm64 names no model: its implementer and part do
		model = armCores[implementer+"/"+part]
		if model == "" {
			model = "arm64 CPU implementer " + implementer + " part " + part
		}
	}
	return model, flags
}

// armCores names the arm64 cores of the clouds' instances by their
// /proc/cpuinfo implementer and part (Linux's arch/arm64 cputype.h).
var armCores = map[string]string{
	"0x41/0xd0c": "Arm Neoverse-N1 (e.g. AWS Graviton2)",
	"0x41/0xd40": "Arm Neoverse-V1 (e.g. AWS Graviton3)",
	"0x41/0xd49": "Arm Neoverse-N2",
	"0x41/0xd4f": "Arm Neoverse-V2 (e.g. AWS Graviton4, Google Axion)",
	"0x41/0xd8e": "Arm Neoverse-N3",
	"0x41/0xd0b": "Arm Cortex-A76",
	"0x41/0xd08": "Arm Cortex-A72",
	"0xc0/0xac3": "Ampere-1",
	"0xc0/0xac4": "Ampere-1a",
}

// MergeCPUID adds to cpuinfo's flags the level flags CPUID itself reports:
// some hypervisors' kernels leave e.g. "abm" out of /proc/cpuinfo on CPUs
// that do have LZCNT (seen here: glibc's ld.so reports x86-64-v4 supported
// on a CPU whose cpuinfo lacks "abm"), and the instruction is what a
// binary needs.
func MergeCPUID(flags, cpuid []string) []string {
	out := slices.Clone(flags)
	for _, f := range cpuid {
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}

var host struct {
	once sync.Once
	info Info
	err  error
}

// Read describes this machine. /proc/cpuinfo and CPUID are read once per
// process; every stage sees the same facts.
func Read() (Info, error) {
	host.once.Do(func() {
		b, err := os.ReadFile("/proc/cpuinfo")
		if err != nil {
			host.err = fmt.Errorf("reading /proc/cpuinfo: %w", err)
			return
		}
		model, flags := ParseCPUInfo(string(b))
		if flags == nil {
			host.err = fmt.Errorf("reading CPU flags: /proc/cpuinfo has no flags (x86) or Features (arm64) line")
			return
		}
		flags = MergeCPUID(flags, cpuidFlags())
		in := Info{CPUModel: model, CPUs: runtime.NumCPU(), Flags: flags, Cgroup: CgroupVersion(), Arch: runtime.GOARCH}
		if runtime.GOARCH == "amd64" {
			in.Level = Level(flags)
		}
		var u syscall.Utsname
		if syscall.Uname(&u) == nil {
			in.Kernel = utsString(u.Release[:])
			in.SeccompBPF = SeccompBPF("/proc/sys", "/proc/config.gz", "/boot/config-"+in.Kernel)
		}
		host.info = in
	})
	in := host.info
	in.Flags = slices.Clone(in.Flags)
	return in, host.err
}

func utsString(b []int8) string {
	var sb strings.Builder
	for _, c := range b {
		if c == 0 {
			break
		}
		sb.WriteByte(byte(c))
	}
	return sb.String()
}

// CgroupVersion is "v2" (unified), "hybrid" (v1 controllers with a unified
// hierarchy beside them) or "v1".
func CgroupVersion() string {
	if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err == nil {
		return "v2"
	}
	if _, err := os.Stat("/sys/fs/cgroup/unified"); err == nil {
		return "hybrid"
	}
	return "v1"
}

// FreeDiskMB is the free space of the file system holding path.
func FreeDiskMB(path string) (uint64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		return 0, fmt.Errorf("statfs %s: %w", path, err)
	}
	return st.Bavail * uint64(st.Bsize) / (1 << 20), nil
}
