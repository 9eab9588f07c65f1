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

// anova is the analysis of a pair's replicate values by layout draw,
// after the slot effect: the draw-level estimate the intervals use, and
// the one-way random-effects analysis the Layout draws section reports.
type anova struct {
	draws    int     // distinct draws (0: the values are of one binary)
	mean     float64 // the mean of the draws' means (each draw weighs alike)
	se, df   float64 // the draw-level SE of mean and its df (draws - 1)
	nested   bool    // mean, se, df are the draw-level ones (two draws or more)
	layout   float64 // the layout draws' part of se² (Estimate.LayoutVar)
	msb, msw float64
	dfb, dfw int
	sigmaL2  float64         // between-draw variance, truncated at 0 (reported only)
	n, n0, c float64         // replicates; the effective replicates a draw; sum(n_i^2)/n^2
	ids      []int           // the draws, in order
	means    map[int]float64 // each draw's mean (slot effect removed)
	counts   map[int]int
}

// layoutANOVA analyses values v (replicate i on draw draws[i], swapped
// when its image was in slot B) whose crossover mean is m with slot effect
// side (removed when balanced).
//
// With two draws or more the estimate is taken at the highest random
// level, the draw: each draw's mean (slot effect removed) is one value,
// the estimate is their mean, its SE their sd over the square root of
// their number, on draws − 1 df. Draw means vary by the layout's variance
// plus their own replicates' noise over their number, whatever either is,
// so this is exact under normality with equal replicates a draw and
// needs no subtraction of mean squares: its df never falls below what
// the design gives (L − 1), it is a continuous function of the data, and
// it is this pair's own, so another spec's noise cannot move it (issue
// 52: a layout variance pooled across specs whose noise differed 3x gave
// the quietest spec Satterthwaite df below 1 near a zero estimate).
// The mean squares are kept for the report's F test and layout sd.
func layoutANOVA(v []float64, swapped []bool, draws []int, m, side float64, bal bool) anova {
	a := anova{means: map[int]float64{}, counts: map[int]int{}}
	if len(draws) != len(v) || len(v) < 2 {
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
	L := float64(a.draws)
	dm := make([]float64, 0, a.draws)
	inv := 0.0 // sum over the draws of 1/n_i
	for _, d := range a.ids {
		dm = append(dm, a.means[d])
		inv += 1 / float64(a.counts[d])
	}
	a.mean = mean(dm)
	ssd := 0.0
	for _, y := range dm {
		ssd += (y - a.mean) * (y - a.mean)
	}
	se2 := ssd / (L - 1) / L
	a.se, a.df, a.nested = math.Sqrt(se2), L-1, true
	// Where the draws' sides are not balanced within each draw (one
	// replicate a draw, as a sequential bench's first look runs them),
	// the slot effect removed above was estimated from these same
	// values across the draws, and the draw means' spread would be short
	// of one df. Then the draw means are regressed on their share of
	// slot A (ḡ, +1 all unswapped, −1 all swapped): the estimate is the
	// intercept at ḡ = 0 on draws − 2 df, exact under normality with
	// equal replicates a draw. Which replicate ran on which side is the
	// design's, never the data's, so this does not switch with the data.
	if bal && a.draws >= 3 {
		g, r := make([]float64, 0, a.draws), make([]float64, 0, a.draws)
		gs := map[int]float64{}
		for i := range v {
			if swapped[i] {
				gs[draws[i]]--
			} else {
				gs[draws[i]]++
			}
		}
		for _, d := range a.ids {
			gi := gs[d] / float64(a.counts[d])
			g = append(g, gi)
			r = append(r, a.means[d]+side*gi) // the draw's mean of the values as measured
		}
		gbar, rbar := mean(g), mean(r)
		sxx, sxy := 0.0, 0.0
		for i := range g {
			sxx += (g[i] - gbar) * (g[i] - gbar)
			sxy += (g[i] - gbar) * (r[i] - rbar)
		}
		if sxx > 1e-9 {
			b := sxy / sxx
			rss := 0.0
			for i := range g {
				e := r[i] - rbar - b*(g[i]-gbar)
				rss += e * e
			}
			se2 = rss / (L - 2) * (1/L + gbar*gbar/sxx)
			a.mean, a.se, a.df = rbar-b*gbar, math.Sqrt(se2), L-2
		}
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
		// One replicate a draw: the replicates' own noise cannot be told
		// from the layout's, so all of se² counts as the layout's, which
		// runs of the same draws share (Merge then does not shrink it
		// with more runs: cautious, never short).
		a.msw = math.NaN()
		a.layout = se2
		return a
	}
	a.msw = ssw / float64(a.dfw)
	// The layout's part of se²: what is left of it after the replicates'
	// own noise (MSW times the mean of 1/n_i, over L), at least 0. Runs
	// of the same draws share it (Merge keeps it whole); it does not
	// change this run's interval.
	a.layout = min(se2, max(0, se2-a.msw*inv/(L*L)))
	a.n, a.n0, a.c = n, (n-sumN2/n)/float64(a.dfb), sumN2/(n*n)
	if a.msb > a.msw && a.n0 > 0 {
		a.sigmaL2 = (a.msb - a.msw) / a.n0
	}
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
