// Package machine describes the machine the tool runs on: CPU model, the
// x86-64 micro-architecture level its flags reach, kernel, cgroup version
// and free disk. Builds record it in image labels; benchmarks in trials.
package machine

import (
	"fmt"
	"os"
	"runtime"
	"sort"
	"strings"
	"syscall"
)

// Info is what the tool records about a machine.
type Info struct {
	CPUModel string   `json:"cpu_model"`
	CPUs     int      `json:"cpus"`
	Level    string   `json:"x86_64_level"` // v1..v4
	Flags    []string `json:"flags,omitempty"`
	Kernel   string   `json:"kernel"`
	Cgroup   string   `json:"cgroup"` // v1, v2, hybrid
}

// Levels lists the CPU flags (as /proc/cpuinfo names them) each x86-64
// micro-architecture level adds to the previous one (psABI).
var Levels = []struct {
	Name  string
	Flags []string
}{
	{"v2", []string{"cx16", "lahf_lm", "popcnt", "pni", "sse4_1", "sse4_2", "ssse3"}},
	// v3 also needs LZCNT ("abm"), but hypervisors often hide that flag from
	// /proc/cpuinfo while CPUID has it (seen here: glibc's ld.so reports
	// x86-64-v4 supported on a CPU whose cpuinfo lacks "abm"); it is not
	// required here so that such machines are not misjudged.
	{"v3", []string{"avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "movbe", "xsave"}},
	{"v4", []string{"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"}},
}

// Level returns the highest x86-64 level the flags reach.
func Level(flags []string) string {
	have := map[string]bool{}
	for _, f := range flags {
		have[f] = true
	}
	level := "v1"
	for _, l := range Levels {
		for _, f := range l.Flags {
			if !have[f] {
				return level
			}
		}
		level = l.Name
	}
	return level
}

// Missing returns the flags that level needs and flags lack, sorted.
func Missing(level string, flags []string) []string {
	have := map[string]bool{}
	for _, f := range flags {
		have[f] = true
	}
	var miss []string
	for _, l := range Levels {
		for _, f := range l.Flags {
			if !have[f] {
				miss = append(miss, f)
			}
		}
		if l.Name == level {
			break
		}
	}
	sort.Strings(miss)
	return miss
}

// ParseCPUInfo reads the first processor's model name and flags.
func ParseCPUInfo(text string) (model string, flags []string) {
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
		case "flags":
			if flags == nil {
				flags = strings.Fields(v)
			}
		}
	}
	return model, flags
}

// Read describes this machine.
func Read() (Info, error) {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return Info{}, fmt.Errorf("reading /proc/cpuinfo: %w", err)
	}
	model, flags := ParseCPUInfo(string(b))
	in := Info{CPUModel: model, CPUs: runtime.NumCPU(), Flags: flags, Level: Level(flags), Cgroup: CgroupVersion()}
	var u syscall.Utsname
	if syscall.Uname(&u) == nil {
		in.Kernel = utsString(u.Release[:])
	}
	return in, nil
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
