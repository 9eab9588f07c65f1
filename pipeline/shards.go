package pipeline

import (
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"

	"github.com/redis-variants/redis-variants/rank"
	"github.com/redis-variants/redis-variants/results"
	"github.com/redis-variants/redis-variants/variants"
)

// shardRun is one run folder with the part of its file it ran.
type shardRun struct {
	dir   string
	file  string // the variants file's base name
	shard variants.Shard
}

// pickShards returns, from dirs, the latest run (by run ID, the folder's
// name) of each shard of the file and shard count the latest sharded run
// names, in shard order, and a warning for each shard that has no run.
// Runs of other files or counts, and unsharded runs, are left out.
func pickShards(dirs []string) ([]string, []string, error) {
	var runs []shardRun
	for _, d := range dirs {
		p, err := (&results.Run{Dir: d}).Plan()
		if err != nil || p.Shard == nil {
			continue
		}
		runs = append(runs, shardRun{dir: d, file: filepath.Base(p.File), shard: *p.Shard})
	}
	if len(runs) == 0 {
		return nil, nil, fmt.Errorf("history --merge: none of the %d runs read ran a shard (run with --shard i/n)", len(dirs))
	}
	sort.SliceStable(runs, func(i, j int) bool { return filepath.Base(runs[i].dir) < filepath.Base(runs[j].dir) })
	last := runs[len(runs)-1]
	latest := map[int]string{}
	for _, r := range runs {
		if r.file == last.file && r.shard.Count == last.shard.Count {
			latest[r.shard.Index] = r.dir // later runs overwrite earlier ones
		}
	}
	var out, warnings []string
	for i := 1; i <= last.shard.Count; i++ {
		if d, ok := latest[i]; ok {
			out = append(out, d)
		} else {
			warnings = append(warnings, fmt.Sprintf("shard %d/%d of %s has no run here: the merge leaves its variants out", i, last.shard.Count, last.file))
		}
	}
	return out, warnings, nil
}

// writeRunners prints one line per run: its shard, the CPU it ran on, its
// A/A control and the primary reference's own median throughput per
// benchmark, so a reader sees how far the runners differed before the
// ratios are merged.
func writeRunners(out io.Writer, dirs []string, runs []rank.RunScores, rt string) {
	fmt.Fprintf(out, "Runners, under %s:\n\n", rt)
	fmt.Fprintln(out, "| run | shard | CPU | A/A control [95%] | primary reference, median ops/s |")
	fmt.Fprintln(out, "|---|---|---|---|---|")
	for i, r := range runs {
		run := &results.Run{Dir: dirs[i]}
		shard := "-"
		if p, err := run.Plan(); err == nil && p.Shard != nil {
			shard = p.Shard.String()
		}
		cpu := strings.Join(r.Ranking.CPUModels, ", ")
		if m, err := run.Machine(); err == nil && m.CPUModel != "" {
			cpu = m.CPUModel
		}
		aa := "-"
		for _, c := range r.Ranking.Controls {
			if c.Runtime == rt {
				aa = fmt.Sprintf("%s [%s, %s]", f4(float64(c.Ratio)), f4(float64(c.Lo)), f4(float64(c.Hi)))
				if c.Significant {
					aa += " significant"
				}
			}
		}
		prim := ""
		if len(r.Ranking.References) > 0 {
			prim = r.Ranking.References[0]
		}
		var ops []string
		for _, cs := range r.Ranking.Cells {
			if cs.Image == prim && cs.Runtime == rt {
				ops = append(ops, fmt.Sprintf("%s %.0fk", results.Bench{Test: cs.Test, Pipeline: cs.Pipeline}, cs.Ops.Center/1000))
			}
		}
		fmt.Fprintf(out, "| %s | %s | %s | %s | `%s` %s |\n", r.Name, shard, dash(cpu), aa, prim, strings.Join(ops, ", "))
	}
	fmt.Fprintln(out)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
