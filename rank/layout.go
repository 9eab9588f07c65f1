package rank

import (
	"math"
	"sort"

	"github.com/redis-variants/redis-variants/results"
)

type (
	LayoutSpread = results.LayoutSpread // how much layout moves an image's score (results.LayoutSpread)
	DrawScore    = results.DrawScore    // one layout draw's own score
)

// anova is the one-way random-effects analysis of a pair's replicate
// values by layout draw, after the slot effect.
type anova struct {
	draws    int     // distinct draws (0: the values are of one binary)
	se, df   float64 // the nested SE of the mean and its df, where the draws differ measurably
	nested   bool    // se, df are the nested ones (MS between > MS within)
	msb, msw float64
	dfb, dfw int
	sigmaL2  float64         // between-draw variance, truncated at 0
	n, n0, c float64         // replicates; the effective replicates a draw; sum(n_i^2)/n^2
	ids      []int           // the draws, in order
	means    map[int]float64 // each draw's mean (slot effect removed)
	counts   map[int]int
}

// layoutANOVA analyses values v (replicate i on draw draws[i], swapped
// when its image was in slot B) whose crossover mean is m with slot effect
// side (removed when balanced). With two draws or more, the mean's
// variance is sigma_L^2 * sum(n_i^2)/n^2 + sigma_e^2/n (draws random);
// where MS between exceeds MS within, se and df are that (method of
// moments, Satterthwaite's df); where it does not, no between-draw
// variance is measurable and the crossover SE stands (nested false).
func layoutANOVA(v []float64, swapped []bool, draws []int, m, side float64, bal bool) anova {
	a := anova{means: map[int]float64{}, counts: map[int]int{}}
	if len(draws) != len(v) || len(v) < 3 {
		return a
	}
	sums := map[int]float64{}
	x := make([]float64, len(v))
	for i, val := range v {
		if draws[i] == 0 {
			return anova{}
		}
		x[i] = val
		if bal {
			if swapped[i] {
				x[i] += side
			} else {
				x[i] -= side
			}
		}
		sums[draws[i]] += x[i]
		a.counts[draws[i]]++
	}
	for d := range sums {
		a.ids = append(a.ids, d)
		a.means[d] = sums[d] / float64(a.counts[d])
	}
	sort.Ints(a.ids)
	a.draws = len(a.ids)
	if a.draws < 2 {
		a.draws = 0
		return a
	}
	n := float64(len(v))
	ssb, ssw, sumN2 := 0.0, 0.0, 0.0
	for _, d := range a.ids {
		ni := float64(a.counts[d])
		ssb += ni * (a.means[d] - m) * (a.means[d] - m)
		sumN2 += ni * ni
	}
	for i := range x {
		r := x[i] - a.means[draws[i]]
		ssw += r * r
	}
	a.dfb = a.draws - 1
	a.dfw = len(v) - a.draws
	if bal {
		a.dfw-- // the slot effect
	}
	a.msb = ssb / float64(a.dfb)
	if a.dfw < 1 {
		a.msw = math.NaN()
		return a
	}
	a.msw = ssw / float64(a.dfw)
	n0 := (n - sumN2/n) / float64(a.dfb)
	c := sumN2 / (n * n)
	a.n, a.n0, a.c = n, n0, c
	if !(a.msb > a.msw) || n0 <= 0 {
		return a
	}
	a.sigmaL2 = (a.msb - a.msw) / n0
	cb, cw := c/n0, 1/n-c/n0
	se2 := cb*a.msb + cw*a.msw
	if !(se2 > 0) {
		return a
	}
	a.se = math.Sqrt(se2)
	tb, tw := cb*a.msb, cw*a.msw
	a.df = se2 * se2 / (tb*tb/float64(a.dfb) + tw*tw/float64(a.dfw))
	a.nested = true
	return a
}

// fP is the upper tail of the F distribution with d1, d2 df at f.
func fP(f float64, d1, d2 int) float64 {
	if math.IsNaN(f) || d1 < 1 || d2 < 1 {
		return math.NaN()
	}
	if f <= 0 {
		return 1
	}
	return betaInc(float64(d2)/2, float64(d1)/2, float64(d2)/(float64(d2)+float64(d1)*f))
}

// layoutSpread is the layout record of one primary pair's score whose
// replicates ran on several draws; ok is false for one binary.
func layoutSpread(g pairGroup, benches []Bench, conf float64) (LayoutSpread, bool) {
	v, sw, _, _, dr := pairValues(g, benches, -1)
	m, _, _, side, bal := estimate(v, sw)
	a := layoutANOVA(v, sw, dr, m, side, bal)
	if a.draws < 2 || math.IsNaN(a.msw) {
		return LayoutSpread{}, false
	}
	ls := LayoutSpread{Image: g.key.Image, Runtime: g.key.Runtime, DFBetween: a.dfb, DFWithin: a.dfw,
		SigmaLayout: Num(math.Sqrt(a.sigmaL2)), SigmaWithin: Num(math.Sqrt(a.msw)), F: nan, P: nan, Share: nan}
	if a.msw > 0 {
		ls.F = Num(a.msb / a.msw)
		ls.P = Num(fP(a.msb/a.msw, a.dfb, a.dfw))
	}
	if tot := a.sigmaL2 + a.msw; tot > 0 {
		ls.Share = Num(a.sigmaL2 / tot)
	}
	names, ids := map[int]string{}, map[int]string{}
	for _, r := range g.reps {
		if r.Draw > 0 {
			names[r.Draw], ids[r.Draw] = r.ImageName(), r.ImageID
		}
	}
	est := func(lm, se2 float64, reps int) Estimate {
		e := Estimate{LogMean: Num(lm), SE: Num(math.Sqrt(se2)), DF: Num(a.dfw), Replicates: reps, Balanced: bal,
			Ratio: Num(math.Exp(lm)), SignRankP: nan, SideEffect: Num(side), WindowSD: nan}
		setInterval(&e, conf)
		return e
	}
	for _, d := range a.ids {
		ls.Draws = append(ls.Draws, DrawScore{Draw: d, Name: names[d], ImageID: ids[d],
			Estimate: est(a.means[d], a.msw/float64(a.counts[d]), a.counts[d])})
	}
	hi, lo := a.ids[0], a.ids[0]
	for _, d := range a.ids {
		if a.means[d] > a.means[hi] {
			hi = d
		}
		if a.means[d] < a.means[lo] {
			lo = d
		}
	}
	ls.Fastest, ls.Slowest = hi, lo
	ls.Range = est(a.means[hi]-a.means[lo], a.msw*(1/float64(a.counts[hi])+1/float64(a.counts[lo])), a.counts[hi]+a.counts[lo])
	return ls, true
}

// LayoutPool is the one layout variance of a runtime's build specs (results.LayoutPool).
type LayoutPool = results.LayoutPool

// poolSpec is one build spec's score in the pool: its result in the
// analysis and the one-way analysis of its replicates by draw.
type poolSpec struct {
	ix        int // index of its score in pairAnalysis.results
	a         anova
	crossSE   float64 // the crossover SE and df, where no layout variance is measured
	crossDF   float64
	image, rt string
	bench     string // "" for the score; a benchmark's results pool with that benchmark's
}

// poolLayouts gives the scores of a runtime's build specs one layout
// variance (and each benchmark's results theirs, recorded in the results
// only): sigma_L^2 estimated from all their draws together (method
// of moments over the specs' mean squares, sum of dfb (MSB - MSW) over
// sum of dfb n0), as one run effect serves every image. Each spec's
// variance of the mean is then c sigma_L^2 + MSW/n with Satterthwaite's
// df over every mean square it is made of. One spec with 4 draws has 3
// df for its layout variance, and a t quantile on 3 df makes its interval
// twice as wide as the same precision on 12 df; four specs' draws
// together have 12. It assumes layout moves the specs alike; the report's
// per-spec F tests and layout sd say where that is in doubt. Where the
// pooled sigma_L^2 is not above 0, no layout variance is measurable and
// each spec keeps its crossover SE.
func poolLayouts(pa *pairAnalysis, specs []poolSpec, conf float64) {
	type poolKey struct{ rt, bench string }
	byRT := map[poolKey][]poolSpec{}
	var keys []poolKey
	for _, sp := range specs {
		if sp.a.draws < 2 || math.IsNaN(sp.a.msw) || sp.a.dfw < 1 || sp.a.n0 <= 0 {
			continue
		}
		k := poolKey{sp.rt, sp.bench}
		if _, ok := byRT[k]; !ok {
			keys = append(keys, k)
		}
		byRT[k] = append(byRT[k], sp)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].rt != keys[j].rt {
			return keys[i].rt < keys[j].rt
		}
		return keys[i].bench < keys[j].bench
	})
	for _, key := range keys {
		ss, rt := byRT[key], key.rt
		num, den, dfb := 0.0, 0.0, 0
		pool := LayoutPool{Runtime: rt, SigmaLayout: 0}
		for _, sp := range ss {
			num += float64(sp.a.dfb) * (sp.a.msb - sp.a.msw)
			den += float64(sp.a.dfb) * sp.a.n0
			dfb += sp.a.dfb
			pool.Specs = append(pool.Specs, sp.image)
		}
		pool.DFBetween = dfb
		s2 := num / den
		for _, sp := range ss {
			r := &pa.results[sp.ix]
			e := &r.Estimate
			if !(s2 > 0) {
				e.SE, e.DF = Num(sp.crossSE), Num(sp.crossDF)
				setInterval(e, conf)
				continue
			}
			// V = sum_j cb_j MSB_j + sum_j cw_j MSW_j + MSW_i / n_i
			v, q := 0.0, 0.0
			for _, o := range ss {
				k := sp.a.c * float64(o.a.dfb) / den
				cw := -k
				if o.ix == sp.ix {
					cw += 1 / sp.a.n
				}
				v += k*o.a.msb + cw*o.a.msw
				q += (k*o.a.msb)*(k*o.a.msb)/float64(o.a.dfb) + (cw*o.a.msw)*(cw*o.a.msw)/float64(o.a.dfw)
			}
			if !(v > 0) || !(q > 0) {
				continue
			}
			e.SE, e.DF, e.LayoutVar = Num(math.Sqrt(v)), Num(v*v/q), Num(sp.a.c*s2)
			setInterval(e, conf)
		}
		for _, sp := range ss {
			if r := &pa.results[sp.ix]; r.Test != "" {
				r.Verdict = intervalVerdict(r.Estimate) // a benchmark's verdict is its interval's
			}
		}
		if s2 > 0 {
			pool.SigmaLayout = Num(math.Sqrt(s2))
		}
		if key.bench == "" {
			pa.layoutPools = append(pa.layoutPools, pool)
		}
	}
}
