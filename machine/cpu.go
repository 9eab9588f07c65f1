package machine

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// CgroupRoot is where the cgroup file systems are mounted.
var CgroupRoot = "/sys/fs/cgroup"

// ContainerCPUNanos reads a Docker container's total CPU time (user +
// system, ns) straight from its cgroup: cgroup v1's
// cpuacct/docker/<id>/cpuacct.usage, or cgroup v2's cpu.stat usage_usec
// under system.slice/docker-<id>.scope (systemd driver) or docker/<id>
// (cgroupfs driver). A read takes microseconds, so two containers can be
// read at (nearly) the same instant, which the Engine's stats API (about a
// second per call) cannot do. It fails when the cgroup is not on this
// machine (a remote Docker Engine) or not readable.
func ContainerCPUNanos(id string) (uint64, error) {
	if id == "" {
		return 0, errors.New("reading container CPU time: no container ID")
	}
	v1 := []string{
		filepath.Join(CgroupRoot, "cpuacct", "docker", id, "cpuacct.usage"),
		filepath.Join(CgroupRoot, "cpu,cpuacct", "docker", id, "cpuacct.usage"),
		filepath.Join(CgroupRoot, "cpuacct", "system.slice", "docker-"+id+".scope", "cpuacct.usage"),
	}
	for _, p := range v1 {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("reading %s: %w", p, err)
		}
		return v, nil
	}
	v2 := []string{
		filepath.Join(CgroupRoot, "system.slice", "docker-"+id+".scope", "cpu.stat"),
		filepath.Join(CgroupRoot, "docker", id, "cpu.stat"),
	}
	for _, p := range v2 {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, " "); ok && k == "usage_usec" {
				us, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
				if err != nil {
					return 0, fmt.Errorf("reading %s: %w", p, err)
				}
				return us * 1000, nil
			}
		}
	}
	return 0, fmt.Errorf("reading the CPU time of container %.12s: no cgroup file for it under %s (tried %s and %s): is the Docker Engine on another machine?",
		id, CgroupRoot, v1[0], v2[0])
}

// CPUTimes is one CPU's line of /proc/stat, in clock ticks.
type CPUTimes struct {
	User, Nice, System, Idle, IOWait, IRQ, SoftIRQ, Steal uint64
}

// Total is every tick counted (guest time is already inside user).
func (t CPUTimes) Total() uint64 {
	return t.User + t.Nice + t.System + t.Idle + t.IOWait + t.IRQ + t.SoftIRQ + t.Steal
}

// Busy is the ticks neither idle nor stolen.
func (t CPUTimes) Busy() uint64 { return t.User + t.Nice + t.System + t.IRQ + t.SoftIRQ }

// Sub is t − u.
func (t CPUTimes) Sub(u CPUTimes) CPUTimes {
	return CPUTimes{t.User - u.User, t.Nice - u.Nice, t.System - u.System, t.Idle - u.Idle,
		t.IOWait - u.IOWait, t.IRQ - u.IRQ, t.SoftIRQ - u.SoftIRQ, t.Steal - u.Steal}
}

// StatPath is the kernel's CPU accounting file.
var StatPath = "/proc/stat"

// ReadCPUTimes returns /proc/stat's per-CPU lines by CPU number, and the
// machine's total under key -1.
func ReadCPUTimes() (map[int]CPUTimes, error) {
	b, err := os.ReadFile(StatPath)
	if err != nil {
		return nil, fmt.Errorf("reading CPU times: %w", err)
	}
	return ParseCPUTimes(b)
}

// ParseCPUTimes parses the text of /proc/stat.
func ParseCPUTimes(b []byte) (map[int]CPUTimes, error) {
	out := map[int]CPUTimes{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 9 || !strings.HasPrefix(f[0], "cpu") {
			continue
		}
		n := -1
		if f[0] != "cpu" {
			v, err := strconv.Atoi(f[0][3:])
			if err != nil {
				continue
			}
			n = v
		}
		var v [8]uint64
		for i := range v {
			x, err := strconv.ParseUint(f[i+1], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("/proc/stat line %q: %w", sc.Text(), err)
			}
			v[i] = x
		}
		out[n] = CPUTimes{v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]}
	}
	if _, ok := out[-1]; !ok {
		return nil, errors.New("/proc/stat has no cpu line")
	}
	return out, nil
}

// StealShare is the share of the listed CPUs' ticks stolen between two
// readings (nil cpus = the whole machine).
func StealShare(before, after map[int]CPUTimes, cpus []int) float64 {
	if len(cpus) == 0 {
		cpus = []int{-1}
	}
	var steal, total uint64
	for _, c := range cpus {
		d := after[c].Sub(before[c])
		steal += d.Steal
		total += d.Total()
	}
	if total == 0 {
		return 0
	}
	return float64(steal) / float64(total)
}

// ParseCPUList parses a CPU list such as "0", "2-3" or "0,2-5" into CPU
// numbers; "" gives nil (every CPU).
func ParseCPUList(list string) ([]int, error) {
	if strings.TrimSpace(list) == "" {
		return nil, nil
	}
	var out []int
	for _, part := range strings.Split(list, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return nil, fmt.Errorf("CPU list %q: bad CPU %q", list, part)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return nil, fmt.Errorf("CPU list %q: bad range %q", list, part)
			}
		}
		for c := a; c <= b; c++ {
			out = append(out, c)
		}
	}
	return out, nil
}

// ProcessCPUNanos is the CPU time a process has used, every thread's:
// from /proc/<pid>/task/*/schedstat (nanoseconds on a CPU) where the
// kernel keeps it, else user + system from /proc/<pid>/stat (ticks of
// 10 ms, the kernel's usual 100 a second).
func ProcessCPUNanos(pid int) (uint64, error) {
	if v, err := schedstatNanos(pid); err == nil {
		return v, nil
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: no command field", pid)
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: short", pid)
	}
	ut, err1 := strconv.ParseUint(f[11], 10, 64)
	st, err2 := strconv.ParseUint(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: bad times", pid)
	}
	return (ut + st) * 1e7, nil
}

// ProcessesNamed returns the PIDs whose command name (/proc/<pid>/comm) is name.
func ProcessesNamed(name string) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "comm"))
		if err == nil && strings.TrimSpace(string(b)) == name {
			out = append(out, pid)
		}
	}
	return out
}

// ContainerPeakMemory returns the most memory the container's cgroup has
// charged since it started (cgroup v1 memory.max_usage_in_bytes, v2
// memory.peak): the peak RSS and page cache of a fresh server. Like
// ContainerCPUNanos it needs the cgroup on this machine.
func ContainerPeakMemory(id string) (int64, error) {
	if id == "" {
		return 0, errors.New("reading container memory: no container ID")
	}
	for _, p := range []string{
		filepath.Join(CgroupRoot, "memory", "docker", id, "memory.max_usage_in_bytes"),
		filepath.Join(CgroupRoot, "memory", "system.slice", "docker-"+id+".scope", "memory.max_usage_in_bytes"),
		filepath.Join(CgroupRoot, "system.slice", "docker-"+id+".scope", "memory.peak"),
		filepath.Join(CgroupRoot, "docker", id, "memory.peak"),
	} {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("reading %s: %w", p, err)
		}
		return v, nil
	}
	return 0, fmt.Errorf("no memory cgroup for container %s under %s", id, CgroupRoot)
}

// MemAvailable is the kernel's estimate of the memory available for new
// work without swapping (/proc/meminfo MemAvailable), in bytes.
func MemAvailable() (int64, error) {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "MemAvailable:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("reading MemAvailable: %w", err)
			}
			return kb << 10, nil
		}
	}
	return 0, errors.New("/proc/meminfo has no MemAvailable")
}

// CoreUse is what the listed CPUs did between two readings of /proc/stat.
type CoreUse struct {
	Busy    float64 `json:"busy"`    // share of the ticks not stolen that were not idle (user, system, irq, softirq)
	SoftIRQ float64 `json:"softirq"` // share of the ticks not stolen spent in softirq (the kernel's network work, charged to no cgroup)
	Steal   float64 `json:"steal"`   // share of all ticks stolen by the hypervisor
	Ticks   uint64  `json:"ticks"`   // ticks counted (USER_HZ, usually 100 a second per CPU)
}

// Use is what cpus (nil = the whole machine) did from before to after.
func Use(before, after map[int]CPUTimes, cpus []int) CoreUse {
	if len(cpus) == 0 {
		cpus = []int{-1}
	}
	var d CPUTimes
	for _, c := range cpus {
		x := after[c].Sub(before[c])
		d = CPUTimes{d.User + x.User, d.Nice + x.Nice, d.System + x.System, d.Idle + x.Idle, d.IOWait + x.IOWait,
			d.IRQ + x.IRQ, d.SoftIRQ + x.SoftIRQ, d.Steal + x.Steal}
	}
	u := CoreUse{Ticks: d.Total()}
	if u.Ticks == 0 {
		return u
	}
	u.Steal = float64(d.Steal) / float64(u.Ticks)
	if own := u.Ticks - d.Steal; own > 0 {
		u.Busy = float64(d.Busy()) / float64(own)
		u.SoftIRQ = float64(d.SoftIRQ) / float64(own)
	}
	return u
}

// schedstatNanos sums the first field of /proc/<pid>/task/*/schedstat: the
// time each thread has spent on a CPU. A thread that ends meanwhile is
// left out (its time with it).
func schedstatNanos(pid int) (uint64, error) {
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	if err != nil || len(tasks) == 0 {
		return 0, fmt.Errorf("no /proc/%d/task/*/schedstat", pid)
	}
	var sum uint64
	read := 0
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		f := strings.Fields(string(b))
		if len(f) < 1 {
			return 0, fmt.Errorf("%s holds %q", t, b)
		}
		n, err := strconv.ParseUint(f[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", t, err)
		}
		sum += n
		read++
	}
	if read == 0 {
		return 0, fmt.Errorf("process %d: no thread's schedstat could be read (has it exited?)", pid)
	}
	return sum, nil
}
