package rank

import (
	"fmt"
	"math"
	"sort"

	"github.com/redis-variants/redis-variants/results"
)

// Families of a pair result.
const (
	FamilyPrimary   = "primary"   // score of an image vs the primary reference: Holm-corrected, decides the ranking
	FamilySecondary = "secondary" // per-benchmark results and derived comparisons: uncorrected 95% intervals
	FamilyControl   = "control"   // the A/A control: uncorrected, a significant one flags the run
	FamilyAxis      = "axis"      // runtime axes: the same image under two runtimes
)

// Estimate is a mean log ratio over replicates with its interval (results.Estimate).
type Estimate = results.Estimate

// estimate is the crossover estimate of the values v (one per replicate)
// whose image side was in slot B where swapped is true.
func estimate(v []float64, swapped []bool) (m, se, df, side float64, balanced bool) {
	n := len(v)
	if n == 0 {
		return math.NaN(), math.NaN(), 0, 0, false
	}
	var a, b []float64
	for i, x := range v {
		if swapped[i] {
			b = append(b, x)
		} else {
			a = append(a, x)
		}
	}
	if len(a) >= 2 && len(b) >= 2 {
		ma, mb := mean(a), mean(b)
		ss := 0.0
		for _, x := range a {
			ss += (x - ma) * (x - ma)
		}
		for _, x := range b {
			ss += (x - mb) * (x - mb)
		}
		df = float64(n - 2)
		s2 := ss / df
		se = math.Sqrt(s2 / 4 * (1/float64(len(a)) + 1/float64(len(b))))
		return (ma + mb) / 2, se, df, (ma - mb) / 2, true
	}
	m = mean(v)
	if n < 2 {
		return m, math.NaN(), 0, 0, false
	}
	ss := 0.0
	for _, x := range v {
		ss += (x - m) * (x - m)
	}
	df = float64(n - 1)
	return m, math.Sqrt(ss / df / float64(n)), df, 0, false
}

// makeEstimate fills an Estimate from replicate values at confidence
// conf. The signed-rank cross-check runs on the replicate values, the
// independent units (a replicate's windows share its pair of servers).
//
// Replicates of an image whose build spec ran as several layout draws
// (draws: each value's draw, 0 for one binary) get the draw-level
// estimate (layoutANOVA): the interval then covers the spec's draws, not
// one binary, on draws − 1 df.
func makeEstimate(v []float64, swapped []bool, draws []int, windows []float64, wsd float64, conf float64) Estimate {
	m, se, df, side, bal := estimate(v, swapped)
	nd, lay := 0, 0.0
	if a := layoutANOVA(v, swapped, draws, m, side, bal); a.nested {
		nd, m, se, df, lay = a.draws, a.mean, a.se, a.df, a.layout
	}
	e := Estimate{LogMean: Num(m), SE: Num(se), DF: Num(df), Replicates: len(v), Windows: len(windows),
		Balanced: bal, SideEffect: Num(side), WindowSD: Num(wsd), Confidence: conf, Draws: nd, LayoutVar: Num(lay),
		Ratio: Num(math.Exp(m)), Lo: nan, Hi: nan, P: nan, SignRankP: Num(SignedRankP(v))}
	setInterval(&e, conf)
	return e
}

// setInterval sets e's t interval and p-value at confidence conf (none
// without a positive standard error).
func setInterval(e *Estimate, conf float64) {
	e.Confidence = conf
	lm, se, df := float64(e.LogMean), float64(e.SE), float64(e.DF)
	if !(se >= 0) || !(df > 0) || math.IsNaN(lm) {
		e.Lo, e.Hi, e.P = nan, nan, nan
		return
	}
	if se == 0 {
		// No spread measured: no error estimate, so no interval and no
		// test (never a verdict).
		e.Lo, e.Hi, e.P = nan, nan, nan
		return
	}
	t := studentQuantile(1-(1-conf)/2, df)
	e.Lo, e.Hi = Num(math.Exp(lm-t*se)), Num(math.Exp(lm+t*se))
	e.P = Num(studentP(lm/se, df))
}

// derive is the difference a − b of two independent estimates (log),
// with Welch–Satterthwaite degrees of freedom, at confidence conf.
func derive(a, b Estimate, conf float64) Estimate {
	e := Estimate{LogMean: a.LogMean - b.LogMean, Replicates: min(a.Replicates, b.Replicates),
		Windows: min(a.Windows, b.Windows), Balanced: a.Balanced && b.Balanced, SignRankP: nan}
	va, vb := float64(a.SE*a.SE), float64(b.SE*b.SE)
	e.SE = Num(math.Sqrt(va + vb))
	switch {
	case va == 0 && vb == 0:
		e.DF = Num(math.Max(float64(a.DF), float64(b.DF)))
	case va == 0:
		e.DF = b.DF
	case vb == 0:
		e.DF = a.DF
	default:
		e.DF = Num((va + vb) * (va + vb) / (va*va/float64(a.DF) + vb*vb/float64(b.DF)))
	}
	e.Ratio = Num(math.Exp(float64(e.LogMean)))
	setInterval(&e, conf)
	return e
}

type (
	PairResult = results.PairResult // one pair on one benchmark, or its score
	Resolution = results.Resolution // the precision achieved on the primary family
	Control    = results.Control    // the A/A contrast of a runtime
)

type pairGroup struct {
	key  PairKey
	reps []Replicate
}

// pairValues is one pair's per-replicate values for one benchmark set:
// benches == nil → the score (mean over the pair's benchmarks);
// parity -1 all windows, 0 even, 1 odd.
func pairValues(g pairGroup, benches []Bench, parity int) (v []float64, swapped []bool, windows []float64, wsd float64, draws []int) {
	ss, nres := 0.0, 0
	for _, r := range g.reps {
		per := map[Bench][]float64{}
		for _, w := range r.Windows {
			if parity >= 0 && w.Index%2 != parity {
				continue
			}
			if math.IsNaN(w.LogRatio) || math.IsInf(w.LogRatio, 0) {
				continue
			}
			per[w.Bench()] = append(per[w.Bench()], w.LogRatio)
		}
		var ms []float64
		complete := true
		for _, b := range benches {
			ws := per[b]
			if len(ws) == 0 {
				complete = false
				break
			}
			m := robustCentre(ws)
			ms = append(ms, m)
			for _, x := range ws {
				windows = append(windows, x)
				ss += (x - m) * (x - m)
				nres++
			}
			nres-- // one degree of freedom per mean
		}
		if !complete || len(ms) == 0 {
			continue
		}
		v = append(v, mean(ms))
		swapped = append(swapped, r.Swapped)
		draws = append(draws, r.Draw)
	}
	if nres > 0 {
		wsd = math.Sqrt(ss / float64(nres))
	}
	return v, swapped, windows, wsd, draws
}

func (g pairGroup) benches() []Bench {
	seen := map[Bench]bool{}
	var out []Bench
	for _, r := range g.reps {
		for _, w := range r.Windows {
			if !seen[w.Bench()] {
				seen[w.Bench()] = true
				out = append(out, w.Bench())
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Test != out[j].Test {
			return out[i].Test < out[j].Test
		}
		return out[i].Pipeline < out[j].Pipeline
	})
	return out
}

func (g pairGroup) saturation(b *Bench) (sat, steal float64) {
	var s, st []float64
	for _, r := range g.reps {
		for _, w := range r.Windows {
			if b != nil && w.Bench() != *b {
				continue
			}
			s = append(s, w.Image.CPUShare+w.Base.CPUShare)
			st = append(st, w.Steal)
		}
	}
	return NewSample(s).Median(), NewSample(st).Median()
}

// pairAnalysis is the analysis of every replicate of a run.
type pairAnalysis struct {
	results    []PairResult
	controls   []Control
	resolution Resolution
	halfWidth  map[PairKey]float64 // each primary pair's simultaneous half-width over the family
	family     *family             // the ranking family (family.go)
	warnings   []Warning
	runtimes   []string       // runtimes with image pairs, sorted
	layouts    []LayoutSpread // primary pairs whose replicates ran on several layout draws
}

func groupReplicates(reps []Replicate) []pairGroup {
	by := map[PairKey]*pairGroup{}
	var keys []PairKey
	for _, r := range reps {
		if r.Failed != "" && len(r.Windows) == 0 {
			continue
		}
		g := by[r.PairKey]
		if g == nil {
			g = &pairGroup{key: r.PairKey}
			by[r.PairKey] = g
			keys = append(keys, r.PairKey)
		}
		g.reps = append(g.reps, r)
	}
	sort.Slice(keys, func(i, j int) bool { return pairKeyLess(keys[i], keys[j]) })
	out := make([]pairGroup, len(keys))
	for i, k := range keys {
		g := by[k]
		sort.Slice(g.reps, func(a, b int) bool { return g.reps[a].Rep < g.reps[b].Rep })
		out[i] = *g
	}
	return out
}

func pairKeyLess(a, b PairKey) bool {
	ka, kb := kindOrder(a.Kind()), kindOrder(b.Kind())
	if ka != kb {
		return ka < kb
	}
	if a.BaseRuntime != b.BaseRuntime {
		return a.BaseRuntime < b.BaseRuntime
	}
	if a.Runtime != b.Runtime {
		return a.Runtime < b.Runtime
	}
	if a.Base != b.Base {
		return a.Base < b.Base
	}
	return a.Image < b.Image
}

func kindOrder(k string) int {
	switch k {
	case KindControl:
		return 0
	case KindImage:
		return 1
	}
	return 2
}

// analysePairs turns replicates into results. Primary results (each
// image's score against the primary reference, per runtime) are
// Holm-corrected and printed with simultaneous (Bonferroni) intervals, so
// an interval that excludes 1 always comes with a verdict that is not a
// tie; every other result has an uncorrected interval at th.Confidence
// whose verdict is read from that interval.
func analysePairs(reps []Replicate, th Thresholds) pairAnalysis {
	var pa pairAnalysis
	groups := groupReplicates(reps)
	rts := map[string]bool{}
	var primIdx []int
	for _, g := range groups {
		kind := g.key.Kind()
		benches := g.benches()
		for i := range benches {
			b := benches[i]
			v, sw, ws, wsd, dr := pairValues(g, []Bench{b}, -1)
			sat, steal := g.saturation(&b)
			fam := FamilySecondary
			switch kind {
			case KindControl:
				fam = FamilyControl
			case KindAxis:
				fam = FamilyAxis
			}
			r := PairResult{PairKey: g.key, Kind: kind, Test: b.Test, Pipeline: b.Pipeline, Family: fam, Benchmarks: 1,
				Estimate: makeEstimate(v, sw, dr, ws, wsd, th.Confidence), PAdj: nan, SplitZ: nan, Saturation: sat, Steal: steal}
			r.Verdict = intervalVerdict(r.Estimate)
			pa.results = append(pa.results, r)
		}
		v, sw, ws, wsd, dr := pairValues(g, benches, -1)
		sat, steal := g.saturation(nil)
		r := PairResult{PairKey: g.key, Kind: kind, PAdj: nan, Saturation: sat, Steal: steal, Benchmarks: len(benches),
			Estimate: makeEstimate(v, sw, dr, ws, wsd, th.Confidence), SplitZ: Num(splitZ(g, benches))}
		switch kind {
		case KindControl:
			r.Family = FamilyControl
			r.Verdict = intervalVerdict(r.Estimate)
			c := Control{Runtime: g.key.Runtime, Estimate: r.Estimate, SplitZ: r.SplitZ,
				Significant: !r.P.IsNaN() && float64(r.P) < th.Alpha}
			pa.controls = append(pa.controls, c)
			if c.Significant {
				pa.warnings = append(pa.warnings, Warning{Kind: WarnControl, Subject: g.key.String(), Message: fmt.Sprintf("the A/A control (the primary reference against itself) came out %.4f [%.4f, %.4f], p = %.3g: two identical servers differ, so this run's verdicts are not to be trusted",
					float64(c.Ratio), float64(c.Lo), float64(c.Hi), float64(c.P))})
			}
			if c.Replicates < 2 {
				pa.warnings = append(pa.warnings, Warning{Kind: WarnControl, Subject: g.key.String(), Message: fmt.Sprintf("the A/A control has %d replicate(s): its spread cannot be judged", c.Replicates)})
			}
		case KindAxis:
			r.Family = FamilyAxis
			r.Verdict = intervalVerdict(r.Estimate)
		default:
			r.Family = FamilyPrimary
			rts[g.key.Runtime] = true
			primIdx = append(primIdx, len(pa.results))
			if ls, ok := layoutSpread(g, benches, th.Confidence); ok {
				pa.layouts = append(pa.layouts, ls)
			}
		}
		if !r.Balanced && r.Replicates >= 2 {
			pa.warnings = append(pa.warnings, Warning{Kind: WarnUnbalanced, Subject: g.key.String(), Message: fmt.Sprintf("sides not balanced (%d replicates): the slot bias is not removed from this estimate", r.Replicates)})
		}
		pa.results = append(pa.results, r)
	}
	// The family (family.go): every pair of a runtime's ranked entries,
	// Holm-corrected together. An entry's verdict against the primary
	// reference is its pair with the primary reference in that family,
	// printed with the interval at the level that matches the Holm
	// decision (1 − α·p/p_adj), so an interval that excludes 1 always
	// comes with a verdict and one that includes 1 never does. The
	// resolution is read from the simultaneous (Bonferroni) interval over
	// the whole family, the widest of these.
	members := map[string][]familyMember{}
	for _, ix := range primIdx {
		r := pa.results[ix]
		if _, ok := members[r.Runtime]; !ok {
			members[r.Runtime] = []familyMember{primaryMember(r.Base)}
		}
		members[r.Runtime] = append(members[r.Runtime], familyMember{image: r.Image, e: r.Estimate})
	}
	pa.family = newFamily(members, th)
	pa.halfWidth = map[PairKey]float64{}
	var hw []float64
	for _, ix := range primIdx {
		r := &pa.results[ix]
		h := bonferroniHalfWidth(r.Estimate, th.Confidence, pa.family.size())
		pa.halfWidth[r.PairKey] = h
		if !math.IsNaN(h) {
			hw = append(hw, h)
		}
		fp, flipped, _ := pa.family.pair(r.Runtime, r.Image, r.Base)
		d := fp.d
		if flipped {
			d = flip(d)
		}
		p := r.P
		r.Estimate = d
		r.P = p
		r.PAdj = Num(fp.pAdj)
		r.Verdict = pa.family.verdict(fp, d)
	}
	sort.Float64s(hw)
	pa.resolution = Resolution{Median: nan, Max: nan, N: len(hw)}
	if len(hw) > 0 {
		pa.resolution.Median = Num(quantileSorted(hw, 0.5))
		pa.resolution.Max = Num(hw[len(hw)-1])
	}
	for rt := range rts {
		pa.runtimes = append(pa.runtimes, rt)
	}
	sort.Strings(pa.runtimes)
	return pa
}

// flip is the estimate of b against a from that of a against b.
func flip(e Estimate) Estimate {
	f := e
	f.LogMean, f.SideEffect = -e.LogMean, -e.SideEffect
	f.Ratio, f.Lo, f.Hi = Num(math.Exp(float64(f.LogMean))), 1/e.Hi, 1/e.Lo
	return f
}

// bonferroniHalfWidth is the half-width of e's interval at the
// simultaneous level for m comparisons.
func bonferroniHalfWidth(e Estimate, conf float64, m int) float64 {
	c := e
	setInterval(&c, 1-(1-conf)/float64(max(m, 1)))
	return c.HalfWidth()
}

// intervalVerdict reads a verdict from an interval.
func intervalVerdict(e Estimate) string {
	switch {
	case e.Lo.IsNaN() || e.Hi.IsNaN():
		return NotTested
	case e.Lo > 1:
		return Faster
	case e.Hi < 1:
		return Slower
	}
	return Tie
}

// splitZ checks an estimate against itself. Where replicates have more
// than one window per benchmark, each replicate's score from its
// even-numbered windows less the one from its odd-numbered windows is a
// paired difference whose true mean is 0 (the two halves share the
// replicate's pair of servers, so they are not independent estimates),
// and z is their mean over its standard error. Where every replicate
// has one window per benchmark, the halves are the even- and
// odd-numbered replicates, independent pairs, and z is the difference
// of their two estimates over its standard error.
func splitZ(g pairGroup, benches []Bench) float64 {
	if multiWindow(g) {
		var d []float64
		for _, r := range g.reps {
			one := pairGroup{key: g.key, reps: []Replicate{r}}
			v0, _, _, _, _ := pairValues(one, benches, 0)
			v1, _, _, _, _ := pairValues(one, benches, 1)
			if len(v0) == 1 && len(v1) == 1 {
				d = append(d, v0[0]-v1[0])
			}
		}
		if len(d) < 2 {
			return math.NaN()
		}
		m, sd := meanSD(d)
		if sd == 0 {
			return math.NaN()
		}
		return m / (sd / math.Sqrt(float64(len(d))))
	}
	var h [2]pairGroup
	for _, r := range g.reps {
		h[r.Rep%2].reps = append(h[r.Rep%2].reps, r)
	}
	v0, s0, _, _, _ := pairValues(h[0], benches, -1)
	v1, s1, _, _, _ := pairValues(h[1], benches, -1)
	m0, se0, _, _, _ := estimate(v0, s0)
	m1, se1, _, _, _ := estimate(v1, s1)
	den := math.Sqrt(se0*se0 + se1*se1)
	if math.IsNaN(den) || den == 0 {
		return math.NaN()
	}
	return (m0 - m1) / den
}

// multiWindow says whether some replicate of g has more than one window
// of a benchmark.
func multiWindow(g pairGroup) bool {
	for _, r := range g.reps {
		for _, w := range r.Windows {
			if w.Index > 0 {
				return true
			}
		}
	}
	return false
}

// result finds a result of the analysis.
func (pa *pairAnalysis) result(k PairKey, b *Bench) (PairResult, bool) {
	for _, r := range pa.results {
		if r.PairKey != k {
			continue
		}
		if b == nil && r.Test == "" || b != nil && r.Test == b.Test && r.Pipeline == b.Pipeline {
			return r, true
		}
	}
	return PairResult{}, false
}

// robustCentre is the centre of one replicate's windows on one benchmark:
// the median, so that a single window hit by a steal burst or a stall does
// not move the replicate (the mean for two windows or fewer).
func robustCentre(ws []float64) float64 {
	if len(ws) <= 2 {
		return mean(ws)
	}
	s := append([]float64(nil), ws...)
	sort.Float64s(s)
	return quantileSorted(s, 0.5)
}

// Interval returns e's t interval of the ratio at confidence
// conf (NaN without an error estimate).
func Interval(e Estimate, conf float64) (lo, hi float64) {
	c := e
	setInterval(&c, conf)
	return float64(c.Lo), float64(c.Hi)
}

// Precision is, for each pair of the primary family in reps, the
// half-width of its score's simultaneous interval, the one the run's
// resolution is read from (NaN where there is none yet): what the bench
// reads to decide where more replicates are needed.
func Precision(reps []Replicate, th Thresholds) map[PairKey]float64 {
	return analysePairs(reps, withDefaults(th)).halfWidth
}
