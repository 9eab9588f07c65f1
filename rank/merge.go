package rank

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"

	"github.com/redis-variants/redis-variants/results"
)

// RunEffect is the between-run variance of a machine kind (results.RunEffect).
type RunEffect = results.RunEffect

// RunScores is one run's ranking, named by its run folder.
type RunScores struct {
	Name    string
	Ranking Ranking
}

// runEstimate is one image's primary estimate in one run.
type runEstimate struct {
	run     int
	y, v    float64 // log ratio and its within-run variance (SE² less the layout part)
	layout  float64 // the layout draws' part of SE² (Estimate.LayoutVar)
	df      float64
	benches int
}

// primaryScores is rk's primary family under rt, by image, and its
// primary reference.
func primaryScores(rk Ranking, rt string) (map[string]PairResult, string) {
	m := map[string]PairResult{}
	prim := ""
	for _, p := range rk.Pairs {
		if p.Family == FamilyPrimary && p.Runtime == rt && p.Test == "" {
			m[p.Image] = p
			prim = p.Base
		}
	}
	return m, prim
}

// collect gathers, per image, its estimates in the runs that measured it
// against the same primary reference (an image with no standard error in
// a run is left out of that run).
func collect(runs []RunScores, rt string) (byImage map[string][]runEstimate, prim string, err error) {
	byImage = map[string][]runEstimate{}
	for i, r := range runs {
		m, p := primaryScores(r.Ranking, rt)
		if len(m) == 0 {
			continue
		}
		if prim == "" {
			prim = p
		} else if p != prim {
			return nil, "", fmt.Errorf("run %s ranks against %s under %s, run %s against %s: runs with different primary references cannot be merged", runs[0].Name, prim, rt, r.Name, p)
		}
		for im, pr := range m {
			se := float64(pr.SE)
			if pr.LogMean.IsNaN() || !(se > 0) || !(pr.DF > 0) {
				continue
			}
			lay := 0.0
			if l := float64(pr.LayoutVar); l > 0 && l < se*se {
				lay = l
			}
			byImage[im] = append(byImage[im], runEstimate{run: i, y: float64(pr.LogMean), v: se*se - lay, layout: lay, df: float64(pr.DF), benches: pr.Benchmarks})
		}
	}
	return byImage, prim, nil
}

// MeasureRunEffect measures the run effect under rt from the images that
// two or more of runs measured against the same primary reference:
// Cochran's Q of each image's per-run estimates (fixed-effect weights
// 1/SE²), summed over the images, and the DerSimonian–Laird moment
// estimate of one between-run variance τ² for all of them. nil when no
// image was measured in two runs.
func MeasureRunEffect(runs []RunScores, rt string) (*RunEffect, error) {
	byImage, _, err := collect(runs, rt)
	if err != nil {
		return nil, err
	}
	re, _ := runEffect(byImage)
	if re == nil {
		return nil, nil
	}
	re.Runtime = rt
	for _, r := range runs {
		re.Runs = append(re.Runs, r.Name)
	}
	return re, nil
}

// runEffect is the pooled DerSimonian–Laird estimate over byImage, and
// τ² itself (0 when Q is at or under its degrees of freedom).
func runEffect(byImage map[string][]runEstimate) (*RunEffect, float64) {
	var q, denom float64
	df, images := 0, 0
	var ses []float64
	for _, im := range slices.Sorted(maps.Keys(byImage)) {
		es := byImage[im]
		if len(es) < 2 {
			continue
		}
		images++
		var sw, sw2, swy float64
		for _, e := range es {
			w := 1 / e.v
			sw += w
			sw2 += w * w
			swy += w * e.y
			ses = append(ses, math.Sqrt(e.v))
		}
		mu := swy / sw
		for _, e := range es {
			q += (e.y - mu) * (e.y - mu) / e.v
		}
		df += len(es) - 1
		denom += sw - sw2/sw
	}
	if images == 0 {
		return nil, 0
	}
	tau2 := math.Max(0, (q-float64(df))/denom)
	sort.Float64s(ses)
	mse := quantileSorted(ses, 0.5)
	re := &RunEffect{Images: images, Q: Num(q), DF: df, P: Num(1 - chi2CDF(q, float64(df))),
		QLo: Num(chi2Quantile(0.025, float64(df))), QHi: Num(chi2Quantile(0.975, float64(df))),
		Tau: Num(math.Sqrt(tau2)), MedianSE: Num(mse), Allowance: Num(math.Sqrt(1 + tau2/(mse*mse)))}
	return re, tau2
}

// Merged is the ranking of several runs of the same images on one
// machine kind, merged with a random run effect.
type Merged struct {
	Runtime   string        `json:"runtime"`
	Primary   string        `json:"primary"`
	Runs      []string      `json:"runs"`
	RunEffect *RunEffect    `json:"run_effect"`
	Images    []MergedImage `json:"images"`
	Standings Standings     `json:"standings"`
}

// MergedImage is one image's score against the primary reference in
// each run (null where a run did not measure it) and merged.
type MergedImage struct {
	Image    string   `json:"image"`
	PerRun   []Num    `json:"per_run"`
	Estimate Estimate `json:"estimate"`
}

// Merge merges runs under rt: each image's estimate is the
// random-effects mean of its per-run estimates (weights 1/(SE² + τ²),
// τ² the run effect measured over all of them), with a t interval on the
// run effect's degrees of freedom (the runs' own when there is no run
// effect); the standings come from the ranking family (family.go) over
// the merged estimates, so merged verdicts and ranks are one family too.
// The intervals cover the runs' conditions as well as each run's servers:
// a claim about these binaries on this machine kind, and, where the runs'
// scores took the layout draws' error (Estimate.LayoutVar), about their
// build specs: that error is kept whole, not divided among the runs,
// since runs of the same draws share it (runs that built other draws
// would shrink it; taking it whole is the cautious side).
func Merge(runs []RunScores, rt string, th Thresholds) (Merged, error) {
	th = withDefaults(th)
	if len(runs) < 2 {
		return Merged{}, fmt.Errorf("merging needs two runs or more, got %d", len(runs))
	}
	byImage, prim, err := collect(runs, rt)
	if err != nil {
		return Merged{}, err
	}
	if prim == "" {
		return Merged{}, fmt.Errorf("no run has co-scheduled scores under %s", rt)
	}
	re, tau2 := runEffect(byImage)
	m := Merged{Runtime: rt, Primary: prim, RunEffect: re}
	for _, r := range runs {
		m.Runs = append(m.Runs, r.Name)
	}
	if re != nil {
		re.Runtime, re.Runs = rt, m.Runs
	}
	refs := map[string]bool{}
	for _, r := range runs {
		for _, n := range r.Ranking.References {
			refs[n] = true
		}
	}
	var names []string
	for n := range byImage {
		names = append(names, n)
	}
	sort.Strings(names)
	members := map[string][]familyMember{rt: {primaryMember(prim)}}
	pa := pairAnalysis{runtimes: []string{rt}}
	for _, n := range names {
		es := byImage[n]
		mi := MergedImage{Image: n, PerRun: make([]Num, len(runs))}
		for i := range mi.PerRun {
			mi.PerRun[i] = nan
		}
		var sw, swy, sdf, lay float64
		mindf := math.Inf(1)
		nb := 0
		for _, e := range es {
			mi.PerRun[e.run] = Num(math.Exp(e.y))
			w := 1 / (e.v + tau2)
			sw += w
			swy += w * e.y
			sdf += e.df
			mindf = math.Min(mindf, e.df)
			nb = max(nb, e.benches)
			lay += e.layout / float64(len(es))
		}
		mu, v := swy/sw, 1/sw
		df := sdf
		if tau2 > 0 && re != nil {
			df = float64(re.DF)
		}
		// The layout draws' error is the same in every run of the same
		// draws (the same binaries): merging runs does not shrink it, so
		// it is added whole, on the runs' fewest df (Satterthwaite). The
		// merged interval then covers the build spec, as each run's did.
		if lay > 0 {
			df = (v + lay) * (v + lay) / (v*v/df + lay*lay/mindf)
			v += lay
		}
		se := math.Sqrt(v)
		est := Estimate{LogMean: Num(mu), SE: Num(se), DF: Num(df), Replicates: len(es), Ratio: Num(math.Exp(mu)), LayoutVar: Num(lay),
			Lo: nan, Hi: nan, P: nan, SignRankP: nan, SideEffect: nan, WindowSD: nan}
		setInterval(&est, th.Confidence)
		mi.Estimate = est
		m.Images = append(m.Images, mi)
		members[rt] = append(members[rt], familyMember{image: n, e: est})
		pa.results = append(pa.results, PairResult{PairKey: PairKey{Image: n, Runtime: rt, Base: prim, BaseRuntime: rt},
			Kind: KindImage, Family: FamilyPrimary, Benchmarks: nb, Estimate: est})
	}
	pa.family = newFamily(members, th)
	var refList []string
	for n := range refs {
		refList = append(refList, n)
	}
	if sts := pairStandings(&pa, refList, th); len(sts) == 1 {
		m.Standings = sts[0]
	}
	return m, nil
}

// chi2CDF is P(X ≤ x) for X ~ χ²(k).
func chi2CDF(x, k float64) float64 {
	if !(x > 0) {
		return 0
	}
	return gammaP(k/2, x/2)
}

// chi2Quantile is the p quantile of χ²(k), by bisection.
func chi2Quantile(p, k float64) float64 {
	if !(k > 0) || !(p > 0 && p < 1) {
		return math.NaN()
	}
	return invertCDF(func(x float64) float64 { return chi2CDF(x, k) }, p, k+10*math.Sqrt(2*k)+10)
}

// gammaP is the regularized lower incomplete gamma function P(a, x):
// its series below a + 1, Lentz's continued fraction for the upper tail
// above (Numerical Recipes, 6.2).
func gammaP(a, x float64) float64 {
	if x <= 0 {
		return 0
	}
	lg, _ := math.Lgamma(a)
	if x < a+1 {
		sum, del := 1/a, 1/a
		for n := 1; n < 1000; n++ {
			del *= x / (a + float64(n))
			sum += del
			if math.Abs(del) < math.Abs(sum)*1e-15 {
				break
			}
		}
		return sum * math.Exp(-x+a*math.Log(x)-lg)
	}
	const tiny = 1e-300
	b := x + 1 - a
	c, d := 1/tiny, 1/b
	h := d
	for i := 1; i < 1000; i++ {
		b += 2
		var del float64
		c, d, del = lentz(-float64(i)*(float64(i)-a), b, c, d)
		h *= del
		if math.Abs(del-1) < 1e-15 {
			break
		}
	}
	return 1 - math.Exp(-x+a*math.Log(x)-lg)*h
}
