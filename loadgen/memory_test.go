package loadgen

import (
	"context"
	"fmt"
	"math/rand"
	"sort"
	"strings"
	"testing"
	"time"
)

func TestParseSizes(t *testing.T) {
	for in, want := range map[string]string{
		"uniform:64-16K":         "[{64 16384 1}]",
		"64:50,1024:30,16384:20": "[{64 64 50} {1024 1024 30} {16384 16384 20}]",
		"64-512:3, 4K-16K:1":     "[{64 512 3} {4096 16384 1}]",
	} {
		got, err := ParseSizes(in)
		if err != nil || fmtClasses(got) != want {
			t.Errorf("ParseSizes(%q) = %v, %v; want %s", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "uniform:512-64", "uniform:0-8", "64", "64:0", "x:1", "1G:1"} {
		if _, err := ParseSizes(bad); err == nil {
			t.Errorf("ParseSizes(%q) accepted", bad)
		}
	}
	if m := MeanSize([]SizeClass{{64, 64, 1}, {1024, 1024, 1}}); m != 544 {
		t.Errorf("MeanSize = %v", m)
	}
}

func fmtClasses(cs []SizeClass) string { return fmt.Sprint(cs) }

// TestMemoryGroundTruth runs the memory workload against a real
// redis-server and checks what it reports against the server itself: its
// live keys are exactly DBSIZE, its dataset size is exactly the sum of
// STRLEN over every key, MEMORY USAGE (exact, per key) summed over every
// key lies between the dataset (values cannot take less than their bytes)
// and 1.35× it (key, object and allocator size-class overhead: up to 25%
// for a 16 KiB value that the SDS header pushes into jemalloc's 20 KiB
// class) and below used_memory, and 400 keys sampled at random and scaled
// to DBSIZE come within ±15% of that sum.
func TestMemoryGroundTruth(t *testing.T) {
	s := startRedis(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg := Config{Addr: s.Addr}
	m := Memory{Target: 8 << 20, Sizes: "64:50,1024:30,16384:20", Overwrite: 0.5, Delete: 0.3}
	res, err := RunMemory(ctx, cfg, m)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Phases) != 3 {
		t.Fatalf("phases %+v, want fill, overwrite, delete", res.Phases)
	}
	fill, _ := res.Phase("fill")
	if fill.Bytes < m.Target || fill.Bytes > m.Target+16384 || fill.OpsPerSec <= 0 {
		t.Errorf("fill wrote %d bytes (target %d) at %.0f ops/s", fill.Bytes, m.Target, fill.OpsPerSec)
	}
	if del, _ := res.Phase("delete"); del.Commands != int64(0.3*float64(fill.Commands)) {
		t.Errorf("deleted %d of %d keys, want 30%%", del.Commands, fill.Commands)
	}
	ctl := cfg.control()
	defer ctl.Close()
	if err := cfg.setDefaults(); err != nil {
		t.Fatal(err)
	}
	dbsize, err := ctl.DBSize(ctx).Result()
	if err != nil || dbsize != res.Keys {
		t.Fatalf("DBSIZE %d (%v), the workload says %d keys", dbsize, err, res.Keys)
	}
	keys, err := ctl.Keys(ctx, "mem:*").Result()
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(keys) // KEYS answers in hash order, which a server seeds at random
	var strlen int64
	pipe := ctl.Pipeline()
	for _, k := range keys {
		pipe.StrLen(ctx, k)
	}
	cmds, err := pipe.Exec(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cmds {
		strlen += c.(interface{ Val() int64 }).Val()
	}
	if strlen != res.Dataset {
		t.Errorf("Σ STRLEN = %d bytes, the workload reports a dataset of %d", strlen, res.Dataset)
	}
	// MEMORY USAGE (exact per key) over every key, and as 400 sampled
	// keys scaled to DBSIZE.
	usage := map[string]int64{}
	var total int64
	for _, k := range keys {
		n, err := ctl.MemoryUsage(ctx, k, 0).Result()
		if err != nil {
			t.Fatal(err)
		}
		usage[k] = n
		total += n
	}
	r := rand.New(rand.NewSource(7))
	var sampled int64
	const samples = 400
	for i := 0; i < samples; i++ {
		sampled += usage[keys[r.Intn(len(keys))]]
	}
	est := float64(sampled) / samples * float64(dbsize)
	ratio := float64(total) / float64(res.Dataset)
	last := res.Phases[len(res.Phases)-1].After
	t.Logf("%d keys, dataset %d bytes; MEMORY USAGE over every key %d (%.3f× the dataset), 400 sampled and scaled %.0f (%.3f× the whole); used_memory %d, rss %d, frag %.2f, allocator %s",
		res.Keys, res.Dataset, total, ratio, est, est/float64(total), last.UsedMemory, last.UsedMemoryRSS, last.FragRatio, last.Allocator)
	if ratio < 1 || ratio > 1.35 {
		t.Errorf("MEMORY USAGE puts the dataset at %.3f× what the workload reports, want within [1, 1.35]", ratio)
	}
	if d := est/float64(total) - 1; d < -0.15 || d > 0.15 {
		t.Errorf("400 sampled keys scaled to DBSIZE give %.0f, %.1f%% off the sum over every key %d (tolerance ±15%%)", est, 100*d, total)
	}
	if float64(total) > 1.05*float64(last.UsedMemory) {
		t.Errorf("MEMORY USAGE's sum %d exceeds used_memory %d", total, last.UsedMemory)
	}
	if last.Keys != dbsize || last.UsedMemory <= res.Dataset || last.FragRatio <= 0 || last.Allocator == "" {
		t.Errorf("memory figures after the workload: %+v", last)
	}
}

// TestMemoryRefusals: bad configurations are refused before anything is
// written.
func TestMemoryRefusals(t *testing.T) {
	for _, m := range []Memory{
		{Target: 0, Sizes: "64:1"},
		{Target: 1 << 20, Sizes: "64"},
		{Target: 1 << 20, Sizes: "64:1", Delete: 1},
		{Target: 1 << 20, Sizes: "64:1", Overwrite: 1.5},
	} {
		if _, err := RunMemory(context.Background(), Config{Addr: "127.0.0.1:1"}, m); err == nil || strings.Contains(err.Error(), "127.0.0.1:1") {
			t.Errorf("%+v: %v, want a refusal before connecting", m, err)
		}
	}
}

func TestParseInfo(t *testing.T) {
	m := ParseInfo("# Memory\r\nused_memory:100\r\nused_memory_rss:8839168\r\nmem_fragmentation_ratio:9.52\r\n")
	if m["used_memory_rss"] != "8839168" || m["mem_fragmentation_ratio"] != "9.52" {
		t.Fatalf("%v", m)
	}
}
