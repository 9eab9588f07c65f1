package rank

import (
	"context"
	"slices"

	"github.com/redis-variants/redis-variants/results"
)

// Interface is the rank stage: standalone trials and co-scheduled
// replicates in, the ranking out. Ranker is the method of this package;
// Record (and report's Reports) wrap any Interface with what a run keeps
// of it, so the method itself stays pure.
type Interface interface {
	Rank(ctx context.Context, trials []Trial, reps []Replicate) (*Ranking, error)
}

var (
	_ Interface = (*Ranker)(nil)
	_ Interface = (*recorder)(nil)
)

// Ranker ranks with Rank at its thresholds.
type Ranker struct {
	Thresholds Thresholds
	// Memory is the run's memory-workload trials (none: no memory
	// ranking), ranked against the same primary reference.
	Memory []MemoryTrial
	// Earlier are rankings of earlier runs on the same machine kind: with
	// this run they measure the run effect (Ranking.RunEffect) under the
	// first ranked runtime.
	Earlier []RunScores
	// LatencyPlan and Latency are the run's fixed-rate latency measure
	// (nil plan: none).
	LatencyPlan *results.LatencyPlan
	Latency     []LatencyTrial
}

// Rank implements Interface.
func (r *Ranker) Rank(ctx context.Context, trials []Trial, reps []Replicate) (*Ranking, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := oneImageEach(trials, reps, r.Memory); err != nil {
		return nil, err
	}
	rk := Rank(trials, reps, r.Thresholds)
	if len(r.Memory) > 0 {
		primary := rk.Thresholds.Primary
		if primary == "" && len(rk.References) > 0 {
			primary = rk.References[0]
		}
		rk.Memory = Memory(r.Memory, primary)
	}
	if r.LatencyPlan != nil {
		rk.Latency = Latency(*r.LatencyPlan, r.Latency, rk.Thresholds.Confidence)
	}
	rk.Experiment = AnswerClaims(&rk)
	if len(r.Earlier) > 0 && len(rk.Standings) > 0 && rk.Method == MethodPairs {
		rt := rk.Standings[0].Runtime
		runs := append(append([]RunScores(nil), r.Earlier...), RunScores{Name: "this run", Ranking: rk})
		// a run against another primary reference is not merged: say so
		// and measure without it
		var same []RunScores
		_, prim := primaryScores(rk, rt)
		for _, e := range runs {
			if _, p := primaryScores(e.Ranking, rt); p == prim && sameMachineKind(e.Ranking, rk) {
				same = append(same, e)
			}
		}
		if re, err := MeasureRunEffect(same, rt); err == nil && re != nil && len(same) > 1 {
			if len(rk.CPUModels) > 0 {
				re.CPUModel = rk.CPUModels[0]
			}
			rk.RunEffect = re
		}
	}
	return &rk, nil
}

// sameMachineKind says whether a and b were measured on the same CPU
// models with the same co-scheduled benchmarks: runs whose scores can be
// merged with a run effect.
func sameMachineKind(a, b Ranking) bool {
	return len(a.CPUModels) > 0 && slices.Equal(a.CPUModels, b.CPUModels) && slices.Equal(pairBenches(a), pairBenches(b))
}

// pairBenches is the sorted set of benchmarks rk's primary family was
// measured on.
func pairBenches(rk Ranking) []string {
	var out []string
	for _, p := range rk.Pairs {
		if p.Family == FamilySecondary && p.Kind == KindImage {
			b := Bench{Test: p.Test, Pipeline: p.Pipeline}.String()
			if !slices.Contains(out, b) {
				out = append(out, b)
			}
		}
	}
	slices.Sort(out)
	return out
}

// Record writes next's ranking to run's ranking.json (results.RankingFile),
// atomically.
func Record(next Interface, run *results.Run) Interface { return &recorder{next: next, run: run} }

type recorder struct {
	next Interface
	run  *results.Run
}

func (r *recorder) Rank(ctx context.Context, trials []Trial, reps []Replicate) (*Ranking, error) {
	rk, err := r.next.Rank(ctx, trials, reps)
	if err != nil {
		return nil, err
	}
	if err := r.run.WriteRanking(rk); err != nil {
		return nil, err
	}
	return rk, nil
}
