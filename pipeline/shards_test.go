package pipeline

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/redis-variants/redis-variants/results"
	"github.com/redis-variants/redis-variants/variants"
)

// TestHistoryMergesShards: three runs of a file in two shards (shard 1
// twice), and one unsharded run. history --merge takes the latest run of
// each shard, names each runner, and merges them into one ranking in
// which the reference both shards ran (official) is measured twice and
// each shard's variants once.
func TestHistoryMergesShards(t *testing.T) {
	root := t.TempDir()
	const se = 0.004
	write := func(name string, shard *variants.Shard, scores map[string]float64) string {
		dir := writeScores(t, root, name, "EPYC", se, scores)
		if err := (&results.Run{Dir: dir}).WritePlan(&variants.Plan{File: "/x/variants.yaml", Shard: shard}); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	s1, s2 := &variants.Shard{Index: 1, Count: 2}, &variants.Shard{Index: 2, Count: 2}
	write("20261207-010000", s1, map[string]float64{"official": math.Log(1.3), "stale": math.Log(2)})
	a := write("20261207-020000", s1, map[string]float64{"official": math.Log(1.05), "pgo": math.Log(1.7)})
	write("20261207-030000", s2, map[string]float64{"official": math.Log(1.045), "lto": math.Log(1.2)})
	whole := write("20261207-040000", nil, map[string]float64{"official": math.Log(0.5)})

	var out, errb bytes.Buffer
	c := Config{Out: &out, Err: &errb, Runs: root}
	if err := History(t.Context(), c, HistoryOptions{Merge: true, Runtime: "host"}, nil); err != nil {
		t.Fatalf("history --merge: %v\n%s", err, errb.String())
	}
	got := out.String()
	for _, want := range []string{"| 20261207-020000 | 1/2 | EPYC |", "| 20261207-030000 | 2/2 | EPYC |", "2 runs merged under host", "`pgo`", "`lto`", "run effect: Q = "} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	for _, stale := range []string{"`stale`", "20261207-010000", "20261207-040000"} {
		if strings.Contains(got, stale) {
			t.Errorf("output holds %s, from a run the merge leaves out:\n%s", stale, got)
		}
	}

	// a shard with no run is named, and one shard alone is not a merge
	out.Reset()
	errb.Reset()
	err := History(t.Context(), c, HistoryOptions{Merge: true, Runtime: "host", NoRuns: true}, []string{a})
	if err == nil || !strings.Contains(errb.String(), "shard 2/2 of variants.yaml has no run here") {
		t.Errorf("one shard of two: %v, stderr %q; want an error and a warning naming shard 2/2", err, errb.String())
	}
	if err := History(t.Context(), c, HistoryOptions{Merge: true, NoRuns: true}, []string{whole}); err == nil || !strings.Contains(err.Error(), "--shard i/n") {
		t.Errorf("no sharded run: %v, want an error saying how to shard", err)
	}
}
