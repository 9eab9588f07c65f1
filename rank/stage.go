package rank

import (
	"context"

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
	return &rk, nil
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
