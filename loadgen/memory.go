package loadgen

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// The memory workload measures what an allocator does with a dataset
// rather than how fast the server answers: it fills the server to a target
// dataset size with values of a declared mix of sizes, overwrites a share
// of the keys with values of other sizes, deletes a random share, and
// reads the server's own memory figures (INFO memory) after each phase;
// then, where the build supports it, it runs active defragmentation for a
// bounded time and reads them again, with the CPU the server spent.

// Memory is the memory workload's configuration.
type Memory struct {
	// Target is the dataset size to fill to: the sum of the values' bytes.
	Target int64 `json:"target"`
	// Sizes is the mix of value sizes (see ParseSizes), e.g.
	// "uniform:64-16384" or "64:50,1024:30,16384:20".
	Sizes string `json:"sizes"`
	// Overwrite is the share of the keys overwritten, each with a value
	// drawn again from the mix (so mostly of another size).
	Overwrite float64 `json:"overwrite"`
	// Delete is the share of the keys deleted, at random.
	Delete float64 `json:"delete"`
	// Defrag bounds active defragmentation (0 = not run).
	Defrag time.Duration `json:"defrag,omitempty"`
	// Batch is how many commands go in one pipeline (default 64).
	Batch int `json:"batch,omitempty"`
	// Seed seeds the sizes, the overwritten and the deleted keys (0 = 1:
	// the same workload on every server).
	Seed int64 `json:"seed,omitempty"`
}

// MemoryKeyName is key i of the memory workload (its own prefix, so it
// never meets the speed tests' keys).
func MemoryKeyName(i int) string { return "mem:" + strconv.Itoa(i) }

// MemStats is what INFO memory says at one moment.
type MemStats struct {
	UsedMemory         int64   `json:"used_memory"`         // bytes the allocator handed out
	UsedMemoryRSS      int64   `json:"used_memory_rss"`     // resident set size as the server reads it
	UsedMemoryDataset  int64   `json:"used_memory_dataset"` // used_memory minus the overhead
	FragRatio          float64 `json:"mem_fragmentation_ratio"`
	AllocatorFragRatio float64 `json:"allocator_frag_ratio,omitempty"` // jemalloc only (0: not reported)
	AllocatorFragBytes int64   `json:"allocator_frag_bytes,omitempty"`
	Allocator          string  `json:"mem_allocator"`
	Keys               int64   `json:"keys"` // DBSIZE
}

// MemoryPhase is one phase's figures: what it wrote and the server's
// memory after it.
type MemoryPhase struct {
	Name      string        `json:"name"` // fill, overwrite, delete, defrag
	Commands  int64         `json:"commands"`
	Bytes     int64         `json:"bytes"` // value bytes written (fill, overwrite) or removed (delete)
	Elapsed   time.Duration `json:"elapsed"`
	OpsPerSec float64       `json:"ops_per_sec"`
	After     MemStats      `json:"after"`
}

// MemoryResult is the memory workload's measurement.
type MemoryResult struct {
	Config Memory `json:"config"`
	// Dataset is the live dataset at the end, as the workload knows it:
	// keys and the sum of their values' bytes.
	Keys    int64         `json:"keys"`
	Dataset int64         `json:"dataset_bytes"`
	Phases  []MemoryPhase `json:"phases"`
	// Defrag says whether active defragmentation ran and, when it did not,
	// why (the build does not support it: not jemalloc).
	Defrag       bool          `json:"defrag"`
	DefragNote   string        `json:"defrag_note,omitempty"`
	DefragCPU    time.Duration `json:"defrag_cpu,omitempty"`    // server CPU during the defrag phase
	DefragHits   int64         `json:"defrag_hits,omitempty"`   // allocations moved
	DefragMisses int64         `json:"defrag_misses,omitempty"` // allocations looked at and left
}

// Phase returns the named phase.
func (r MemoryResult) Phase(name string) (MemoryPhase, bool) {
	for _, p := range r.Phases {
		if p.Name == name {
			return p, true
		}
	}
	return MemoryPhase{}, false
}

// SizeClass is one entry of a value-size mix: sizes in [Min, Max]
// (uniform), drawn with weight Weight.
type SizeClass struct {
	Min, Max int
	Weight   float64
}

// ParseSizes reads a value-size mix: "uniform:MIN-MAX" (sizes uniform in
// the range), "SIZE:WEIGHT,SIZE:WEIGHT,..." (fixed sizes with weights) or
// "MIN-MAX:WEIGHT,..." (ranges with weights). Sizes are bytes, with an
// optional K suffix (1024).
func ParseSizes(s string) ([]SizeClass, error) {
	s = strings.TrimSpace(s)
	if r, ok := strings.CutPrefix(s, "uniform:"); ok {
		lo, hi, err := sizeRange(r)
		if err != nil {
			return nil, fmt.Errorf("value sizes %q: %w", s, err)
		}
		return []SizeClass{{lo, hi, 1}}, nil
	}
	var out []SizeClass
	for _, part := range strings.Split(s, ",") {
		size, w, ok := strings.Cut(strings.TrimSpace(part), ":")
		if !ok {
			return nil, fmt.Errorf("value sizes %q: %q is not SIZE:WEIGHT (or use uniform:MIN-MAX)", s, part)
		}
		lo, hi, err := sizeRange(size)
		if err != nil {
			return nil, fmt.Errorf("value sizes %q: %w", s, err)
		}
		weight, err := strconv.ParseFloat(w, 64)
		if err != nil || weight <= 0 || math.IsInf(weight, 0) {
			return nil, fmt.Errorf("value sizes %q: weight %q is not a positive number", s, w)
		}
		out = append(out, SizeClass{lo, hi, weight})
	}
	return out, nil
}

func sizeRange(s string) (int, int, error) {
	a, b, isRange := strings.Cut(s, "-")
	lo, err := sizeBytes(a)
	if err != nil {
		return 0, 0, err
	}
	hi := lo
	if isRange {
		if hi, err = sizeBytes(b); err != nil {
			return 0, 0, err
		}
	}
	if lo < 1 || hi < lo || hi > 512<<20 {
		return 0, 0, fmt.Errorf("size range %q: want 1 ≤ MIN ≤ MAX ≤ 512M", s)
	}
	return lo, hi, nil
}

func sizeBytes(s string) (int, error) {
	s = strings.TrimSpace(s)
	mult := 1
	switch {
	case strings.HasSuffix(s, "K"), strings.HasSuffix(s, "k"):
		mult, s = 1024, s[:len(s)-1]
	case strings.HasSuffix(s, "M"):
		mult, s = 1<<20, s[:len(s)-1]
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("size %q is not a number of bytes", s)
	}
	return n * mult, nil
}

// MeanSize is the mix's mean value size.
func MeanSize(classes []SizeClass) float64 {
	var sum, w float64
	for _, c := range classes {
		sum += c.Weight * float64(c.Min+c.Max) / 2
		w += c.Weight
	}
	return sum / w
}

type sizer struct {
	classes []SizeClass
	cum     []float64
	r       *rand.Rand
}

func newSizer(classes []SizeClass, r *rand.Rand) *sizer {
	s := &sizer{classes: classes, r: r}
	t := 0.0
	for _, c := range classes {
		t += c.Weight
		s.cum = append(s.cum, t)
	}
	return s
}

func (s *sizer) next() int {
	x := s.r.Float64() * s.cum[len(s.cum)-1]
	for i, c := range s.cum {
		if x < c {
			cl := s.classes[i]
			return cl.Min + s.r.Intn(cl.Max-cl.Min+1)
		}
	}
	last := s.classes[len(s.classes)-1]
	return last.Max
}

// validate checks m and fills its defaults.
func (m *Memory) validate() ([]SizeClass, error) {
	if m.Batch == 0 {
		m.Batch = 64
	}
	if m.Seed == 0 {
		m.Seed = 1
	}
	switch {
	case m.Target <= 0:
		return nil, fmt.Errorf("memory workload: target dataset size must be positive, got %d", m.Target)
	case m.Overwrite < 0 || m.Overwrite > 1 || m.Delete < 0 || m.Delete >= 1:
		return nil, fmt.Errorf("memory workload: overwrite must be in [0, 1] and delete in [0, 1), got %v and %v", m.Overwrite, m.Delete)
	case m.Defrag < 0 || m.Batch < 0:
		return nil, errors.New("memory workload: defrag time and batch must not be negative")
	}
	return ParseSizes(m.Sizes)
}

// RunMemory runs the memory workload against cfg's server (its address,
// socket and password; the speed tests' settings are not used) and
// returns what the server's memory looked like after each phase. It
// expects an empty server: it flushes nothing, and counts only its own
// keys.
func RunMemory(ctx context.Context, cfg Config, m Memory) (MemoryResult, error) {
	res := MemoryResult{Config: m}
	classes, err := m.validate()
	if err != nil {
		return res, err
	}
	res.Config = m
	if err := cfg.setDefaults(); err != nil {
		return res, fmt.Errorf("loadgen: %w", err)
	}
	ctl := cfg.control()
	defer ctl.Close()
	r := rand.New(rand.NewSource(m.Seed))
	sz := newSizer(classes, r)

	// Fill: new keys until the values add up to the target.
	var sizes []int
	var dataset int64
	phase := func(name string, f func(pipe redis.Pipeliner, add func()) (int64, error)) error {
		start := time.Now()
		var n int64
		pipe := ctl.Pipeline()
		flush := func() error {
			if pipe.Len() == 0 {
				return nil
			}
			_, err := pipe.Exec(ctx)
			return err
		}
		add := func() { n++ }
		bytes, err := f(pipe, add)
		if err == nil {
			err = flush()
		}
		if err != nil {
			return fmt.Errorf("memory workload: %s on %s: %w", name, cfg.target(), err)
		}
		el := time.Since(start)
		st, err := settledStats(ctx, ctl)
		if err != nil {
			return err
		}
		res.Phases = append(res.Phases, MemoryPhase{Name: name, Commands: n, Bytes: bytes, Elapsed: el, OpsPerSec: float64(n) / el.Seconds(), After: st})
		return nil
	}
	value := func(n int) string { return strings.Repeat("v", n) }
	batch := func(pipe redis.Pipeliner) error {
		if pipe.Len() >= m.Batch {
			_, err := pipe.Exec(ctx)
			return err
		}
		return nil
	}
	if err := phase("fill", func(pipe redis.Pipeliner, add func()) (int64, error) {
		for dataset < m.Target {
			if err := ctx.Err(); err != nil {
				return 0, err
			}
			n := sz.next()
			pipe.Set(ctx, MemoryKeyName(len(sizes)), value(n), 0)
			sizes = append(sizes, n)
			dataset += int64(n)
			add()
			if err := batch(pipe); err != nil {
				return 0, err
			}
		}
		return dataset, nil
	}); err != nil {
		return res, err
	}
	// Overwrite: a share of the keys, each with a newly drawn size.
	if err := phase("overwrite", func(pipe redis.Pipeliner, add func()) (int64, error) {
		var written int64
		for _, i := range r.Perm(len(sizes))[:int(m.Overwrite*float64(len(sizes)))] {
			n := sz.next()
			pipe.Set(ctx, MemoryKeyName(i), value(n), 0)
			dataset += int64(n - sizes[i])
			sizes[i] = n
			written += int64(n)
			add()
			if err := batch(pipe); err != nil {
				return 0, err
			}
		}
		return written, nil
	}); err != nil {
		return res, err
	}
	// Delete: a random share.
	if err := phase("delete", func(pipe redis.Pipeliner, add func()) (int64, error) {
		var removed int64
		for _, i := range r.Perm(len(sizes))[:int(m.Delete*float64(len(sizes)))] {
			pipe.Del(ctx, MemoryKeyName(i))
			dataset -= int64(sizes[i])
			removed += int64(sizes[i])
			sizes[i] = -1
			add()
			if err := batch(pipe); err != nil {
				return 0, err
			}
		}
		return removed, nil
	}); err != nil {
		return res, err
	}
	for _, s := range sizes {
		if s >= 0 {
			res.Keys++
		}
	}
	res.Dataset = dataset
	if m.Defrag > 0 {
		if err := defrag(ctx, ctl, m.Defrag, &res); err != nil {
			return res, err
		}
	}
	return res, nil
}

// defrag turns active defragmentation on with thresholds that make it
// start at once, waits until it has run for the bounded time (or stops by
// itself), turns it off and records the figures after it. A server that
// refuses (not built with jemalloc) is recorded as not supporting it.
func defrag(ctx context.Context, ctl *redis.Client, limit time.Duration, res *MemoryResult) error {
	beforeText, err := ctl.Info(ctx, "stats", "cpu").Result()
	if err != nil {
		return fmt.Errorf("memory workload: reading stats before defrag: %w", err)
	}
	before := ParseInfo(beforeText)
	on := []string{"active-defrag-ignore-bytes", "1", "active-defrag-threshold-lower", "1", "active-defrag-cycle-min", "25", "activedefrag", "yes"}
	for i := 0; i < len(on); i += 2 {
		if err := ctl.ConfigSet(ctx, on[i], on[i+1]).Err(); err != nil {
			if on[i] == "activedefrag" {
				res.DefragNote = "not supported by this build: " + err.Error()
				return nil
			}
			return fmt.Errorf("memory workload: CONFIG SET %s: %w", on[i], err)
		}
	}
	start := time.Now()
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	ran := false
	for time.Since(start) < limit {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
		info, err := ctl.Info(ctx, "memory").Result()
		if err != nil {
			return fmt.Errorf("memory workload: reading memory during defrag: %w", err)
		}
		running := ParseInfo(info)["active_defrag_running"]
		active := running != "" && running != "0"
		if active {
			ran = true
		} else if ran || time.Since(start) > time.Second {
			break // it ran and stopped, or had nothing to do
		}
	}
	el := time.Since(start)
	if err := ctl.ConfigSet(ctx, "activedefrag", "no").Err(); err != nil {
		return fmt.Errorf("memory workload: turning active defrag off: %w", err)
	}
	afterText, err := ctl.Info(ctx, "stats", "cpu").Result()
	if err != nil {
		return fmt.Errorf("memory workload: reading stats after defrag: %w", err)
	}
	after := ParseInfo(afterText)
	cpu := infoFloat(after, "used_cpu_sys") + infoFloat(after, "used_cpu_user") - infoFloat(before, "used_cpu_sys") - infoFloat(before, "used_cpu_user")
	res.Defrag = true
	res.DefragCPU = time.Duration(cpu * float64(time.Second))
	res.DefragHits = infoInt(after, "active_defrag_hits") - infoInt(before, "active_defrag_hits")
	res.DefragMisses = infoInt(after, "active_defrag_misses") - infoInt(before, "active_defrag_misses")
	st, err := settledStats(ctx, ctl)
	if err != nil {
		return err
	}
	res.Phases = append(res.Phases, MemoryPhase{Name: "defrag", Elapsed: el, After: st})
	return nil
}

// Settle is how long the workload waits after a phase before reading the
// server's memory: Redis samples its RSS in serverCron (every 100 ms), so
// a read at once can show the RSS of before the phase.
const Settle = 300 * time.Millisecond

// settledStats reads the server's memory once it holds only what it must:
// after Settle, MEMORY PURGE (jemalloc hands back the dirty pages its
// background thread would release over the next seconds, so the figure
// does not depend on when it is read; other allocators ignore it, and
// keep what they keep), then Settle again.
func settledStats(ctx context.Context, ctl *redis.Client) (MemStats, error) {
	wait := func() error {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(Settle):
			return nil
		}
	}
	if err := wait(); err != nil {
		return MemStats{}, err
	}
	if err := ctl.Do(ctx, "MEMORY", "PURGE").Err(); err != nil {
		return MemStats{}, fmt.Errorf("MEMORY PURGE: %w", err)
	}
	if err := wait(); err != nil {
		return MemStats{}, err
	}
	return ReadMemStats(ctx, ctl)
}

// ReadMemStats reads INFO memory and DBSIZE.
func ReadMemStats(ctx context.Context, ctl *redis.Client) (MemStats, error) {
	text, err := ctl.Info(ctx, "memory").Result()
	if err != nil {
		return MemStats{}, fmt.Errorf("reading INFO memory: %w", err)
	}
	info := ParseInfo(text)
	keys, err := ctl.DBSize(ctx).Result()
	if err != nil {
		return MemStats{}, fmt.Errorf("reading DBSIZE: %w", err)
	}
	return MemStats{
		UsedMemory:         infoInt(info, "used_memory"),
		UsedMemoryRSS:      infoInt(info, "used_memory_rss"),
		UsedMemoryDataset:  infoInt(info, "used_memory_dataset"),
		FragRatio:          infoFloat(info, "mem_fragmentation_ratio"),
		AllocatorFragRatio: infoFloat(info, "allocator_frag_ratio"),
		AllocatorFragBytes: infoInt(info, "allocator_frag_bytes"),
		Allocator:          info["mem_allocator"],
		Keys:               keys,
	}, nil
}

// ParseInfo parses an INFO reply into key → value.
func ParseInfo(s string) map[string]string {
	out := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		if k, v, ok := strings.Cut(line, ":"); ok {
			out[k] = v
		}
	}
	return out
}

func infoInt(info map[string]string, name string) int64 {
	n, _ := strconv.ParseInt(info[name], 10, 64)
	return n
}

func infoFloat(info map[string]string, name string) float64 {
	f, _ := strconv.ParseFloat(info[name], 64)
	return f
}

// ParseBytes reads a size: a number with an optional unit (B, K/KB/KiB,
// M/MB/MiB, G/GB/GiB; all binary).
func ParseBytes(s string) (int64, error) {
	s = strings.TrimSpace(s)
	i := strings.IndexFunc(s, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	num, unit := s, ""
	if i >= 0 {
		num, unit = s[:i], strings.TrimSpace(s[i:])
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, fmt.Errorf("size %q: %w", s, err)
	}
	mult := map[string]float64{"": 1, "B": 1, "K": 1 << 10, "KB": 1 << 10, "KiB": 1 << 10, "M": 1 << 20, "MB": 1 << 20, "MiB": 1 << 20, "G": 1 << 30, "GB": 1 << 30, "GiB": 1 << 30}[unit]
	if mult == 0 {
		return 0, fmt.Errorf("size %q: unknown unit %q", s, unit)
	}
	return int64(v * mult), nil
}
