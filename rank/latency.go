package rank

import (
	"math"
	"slices"

	"github.com/redis-variants/redis-variants/results"
)

// LatencyTrial is one fixed-rate latency trial (results.LatencyTrial).
type LatencyTrial = results.LatencyTrial

// LatencyRanking is the fixed-rate latency measure ranked.
type LatencyRanking = results.LatencyRanking

// latencyQuantiles are the percentiles the measure reports, in order.
var latencyQuantiles = []struct {
	name string
	of   func(t LatencyTrial) float64
}{
	{"p50", func(t LatencyTrial) float64 { return t.P50Us }},
	{"p95", func(t LatencyTrial) float64 { return t.P95Us }},
	{"p99", func(t LatencyTrial) float64 { return t.P99Us }},
	{"p99.9", func(t LatencyTrial) float64 { return t.P999Us }},
}

// Latency ranks a run's latency trials under plan at confidence: each
// cell's percentiles (the geometric mean over its counted trials, a t
// interval on the logs: the trials are independent fresh servers, in an
// interleaved order), and for every image each runtime against the first
// runtime of plan, percentile by percentile, with Welch's t on the logs
// at the Bonferroni level over every comparison, so that the family's
// verdicts hold together. A trial whose generator fell behind or that had
// CPU stolen is not counted. Nil when there is no trial.
func Latency(plan results.LatencyPlan, trials []LatencyTrial, confidence float64) *LatencyRanking {
	if len(trials) == 0 || len(plan.Cells) == 0 {
		return nil
	}
	if confidence <= 0 || confidence >= 1 {
		confidence = 0.95
	}
	lr := &LatencyRanking{Plan: plan, Level: confidence}
	type key struct{ image, runtime string }
	logs := map[key][][]float64{} // per cell, per quantile, the logs
	lag50, lag99 := map[key][]float64{}, map[key][]float64{}
	for _, t := range trials {
		if t.Behind != "" || t.Rate != plan.Rate {
			lr.NotCounted++
			continue
		}
		k := key{t.Image, t.Runtime}
		lag50[k] = append(lag50[k], t.SendLagP50Us)
		lag99[k] = append(lag99[k], t.SendLagP99Us)
		if logs[k] == nil {
			logs[k] = make([][]float64, len(latencyQuantiles))
		}
		for i, q := range latencyQuantiles {
			if v := q.of(t); v > 0 {
				logs[k][i] = append(logs[k][i], math.Log(v))
			}
		}
	}
	for _, c := range plan.Cells {
		ls := logs[key{c.Image, c.Runtime}]
		k := key{c.Image, c.Runtime}
		cs := results.LatencyCellSummary{LatencyCell: c, SendLagP50Us: Num(math.NaN()), SendLagP99Us: Num(math.NaN())}
		if len(lag50[k]) > 0 {
			cs.SendLagP50Us, cs.SendLagP99Us = Num(NewSample(lag50[k]).Median()), Num(NewSample(lag99[k]).Median())
		}
		for i, q := range latencyQuantiles {
			var xs []float64
			if ls != nil {
				xs = ls[i]
			}
			cs.N = max(cs.N, len(xs))
			m, se, df := meanSE(xs)
			p := results.LatencyPercentile{Q: q.name, Us: Num(math.Exp(m)), Lo: Num(math.NaN()), Hi: Num(math.NaN()), SELog: Num(math.NaN())}
			if len(xs) == 0 {
				p.Us = Num(math.NaN())
			} else if df > 0 {
				h := studentQuantile(1-(1-confidence)/2, df) * se
				p.Lo, p.Hi, p.SELog = Num(math.Exp(m-h)), Num(math.Exp(m+h)), Num(se)
			}
			cs.Percentiles = append(cs.Percentiles, p)
		}
		cs.GeneratorBound = float64(cs.SendLagP50Us) > GeneratorBoundShare*float64(cs.Percentiles[0].Us)
		cs.GeneratorBoundTail = float64(cs.SendLagP99Us) > GeneratorBoundShare*float64(cs.Percentiles[2].Us)
		lr.Cells = append(lr.Cells, cs)
	}
	// each image: every runtime against the first that has it
	var runtimes, images []string
	for _, c := range plan.Cells {
		if !slices.Contains(runtimes, c.Runtime) {
			runtimes = append(runtimes, c.Runtime)
		}
		if !slices.Contains(images, c.Image) {
			images = append(images, c.Image)
		}
	}
	type cmp struct {
		img, rt, base string
		q             int
	}
	var cmps []cmp
	for _, img := range images {
		for _, rt := range runtimes[min(1, len(runtimes)):] {
			for q := range latencyQuantiles {
				cmps = append(cmps, cmp{img, rt, runtimes[0], q})
			}
		}
	}
	m := max(len(cmps), 1)
	lr.FamilyLvl = confidence
	level := 1 - (1-confidence)/float64(m)
	for _, c := range cmps {
		a, b := logs[key{c.img, c.rt}], logs[key{c.img, c.base}]
		lc := results.LatencyComparison{Image: c.img, Runtime: c.rt, Base: c.base, Q: latencyQuantiles[c.q].name,
			Ratio: Num(math.NaN()), Lo: Num(math.NaN()), Hi: Num(math.NaN()), P: Num(math.NaN()), Verdict: NotTested}
		if a != nil && b != nil {
			ma, sa, da := meanSE(a[c.q])
			mb, sb, db := meanSE(b[c.q])
			if da > 0 && db > 0 {
				d := ma - mb
				se := math.Sqrt(sa*sa + sb*sb)
				df := math.Pow(sa*sa+sb*sb, 2) / (math.Pow(sa, 4)/da + math.Pow(sb, 4)/db)
				h := studentQuantile(1-(1-level)/2, df) * se
				lc.Ratio, lc.Lo, lc.Hi = Num(math.Exp(d)), Num(math.Exp(d-h)), Num(math.Exp(d+h))
				lc.Verdict = Tie
				if se > 0 {
					lc.P = Num(math.Min(1, float64(m)*studentP(d/se, df)))
				}
				switch {
				case d-h > 0:
					lc.Verdict = "higher"
				case d+h < 0:
					lc.Verdict = "lower"
				}
			}
		}
		lr.Comparisons = append(lr.Comparisons, lc)
	}
	return lr
}

// GeneratorBoundShare is the share of a cell's median latency above which
// the generator's own median send lag makes the cell generator-bound.
const GeneratorBoundShare = 0.5

// meanSE is the mean of xs, its standard error and degrees of freedom
// (df 0 with fewer than two values).
func meanSE(xs []float64) (mean, se, df float64) {
	if len(xs) == 0 {
		return math.NaN(), math.NaN(), 0
	}
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	if len(xs) < 2 {
		return mean, math.NaN(), 0
	}
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	n := float64(len(xs))
	return mean, math.Sqrt(ss / (n - 1) / n), n - 1
}
