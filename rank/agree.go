package rank

import (
	"math"
	"sort"

	"github.com/redis-variants/redis-variants/results"
)

// ImageAgreement is one image's primary score in two runs and the z of
// their difference.
type ImageAgreement struct {
	Image string  `json:"image"`
	A     Num     `json:"a"` // ratio vs the primary reference in run A
	B     Num     `json:"b"`
	Z     Num     `json:"z"` // (log A − log B) / sqrt(se_A² + se_B²)
	SEA   float64 `json:"se_a"`
	SEB   float64 `json:"se_b"`
}

// Agreement compares two runs' primary families under one runtime.
type Agreement struct {
	Runtime string           `json:"runtime"`
	Images  []ImageAgreement `json:"images"`
	MaxAbsZ Num              `json:"max_abs_z"`
	// SumZ2 is Σz² over the images: χ² on len(Images) df when the runs
	// differ only by their within-run errors.
	SumZ2 Num `json:"sum_z2"`
	// Tau is Kendall's τ between the two runs' orders over the pairs of
	// images both runs separate (their ranking family's decision; for a
	// ranking without pairs, 95% intervals disjoint); TauAll is over every
	// pair of images.
	Tau      Num `json:"tau"`
	TauPairs int `json:"tau_pairs"`
	TauAll   Num `json:"tau_all"`
}

// Agree compares the primary scores of two rankings under runtime rt.
func Agree(a, b Ranking, rt string) Agreement {
	ag := Agreement{Runtime: rt, MaxAbsZ: nan, Tau: nan, TauAll: nan}
	prim := func(r Ranking) map[string]PairResult {
		m := map[string]PairResult{}
		for _, p := range r.Pairs {
			if p.Family == FamilyPrimary && p.Runtime == rt {
				m[p.Image] = p
			}
		}
		return m
	}
	pa, pb := prim(a), prim(b)
	var names []string
	for n := range pa {
		if _, ok := pb[n]; ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	maxZ, sz2 := math.NaN(), 0.0
	for _, n := range names {
		x, y := pa[n], pb[n]
		va, vb := float64(x.SE*x.SE), float64(y.SE*y.SE)
		if sameDraws(a, b, rt, n) {
			// the same binaries in both runs: their layout error is the
			// same in both and cancels in the difference
			va -= min(float64(x.LayoutVar), va)
			vb -= min(float64(y.LayoutVar), vb)
		}
		z := float64(x.LogMean-y.LogMean) / math.Sqrt(va+vb)
		ag.Images = append(ag.Images, ImageAgreement{Image: n, A: x.Ratio, B: y.Ratio, Z: Num(z), SEA: float64(x.SE), SEB: float64(y.SE)})
		if !math.IsNaN(z) && (math.IsNaN(maxZ) || math.Abs(z) > maxZ) {
			maxZ = math.Abs(z)
		}
		sz2 += z * z
	}
	ag.MaxAbsZ, ag.SumZ2 = Num(maxZ), Num(sz2)
	if len(names) == 0 {
		ag.SumZ2 = nan
	}
	stA, okA := a.Standing(rt)
	stB, okB := b.Standing(rt)
	separates := func(st Standings, ok bool, x, y PairResult) bool {
		if ok && st.Pairs != nil {
			return st.Separated(x.Image, y.Image)
		}
		lx, hx := Interval(x.Estimate, 0.95)
		ly, hy := Interval(y.Estimate, 0.95)
		return hx < ly || hy < lx
	}
	var conc, disc, concAll, discAll int
	for i := range names {
		for j := i + 1; j < len(names); j++ {
			ai, aj, bi, bj := pa[names[i]], pa[names[j]], pb[names[i]], pb[names[j]]
			s := (ai.LogMean - aj.LogMean) * (bi.LogMean - bj.LogMean)
			if s > 0 {
				concAll++
			} else if s < 0 {
				discAll++
			}
			if separates(stA, okA, ai, aj) && separates(stB, okB, bi, bj) {
				if s > 0 {
					conc++
				} else if s < 0 {
					disc++
				}
			}
		}
	}
	if n := conc + disc; n > 0 {
		ag.Tau, ag.TauPairs = Num(float64(conc-disc)/float64(n)), n
	}
	if n := concAll + discAll; n > 0 {
		ag.TauAll = Num(float64(concAll-discAll) / float64(n))
	}
	return ag
}

// sameDraws says whether image's layout draws under rt are the same
// images in both rankings (the draws' image IDs, from their layout
// records): runs of one file with the builds cached.
func sameDraws(a, b Ranking, rt, image string) bool {
	ids := func(r Ranking) map[string]bool {
		m := map[string]bool{}
		for _, l := range r.Layouts {
			if l.Image == image && l.Runtime == rt {
				for _, d := range l.Draws {
					m[d.ImageID] = true
				}
			}
		}
		return m
	}
	x, y := ids(a), ids(b)
	if len(x) < 2 || len(x) != len(y) {
		return false
	}
	for id := range x {
		if id == "" || !y[id] {
			return false
		}
	}
	return true
}

// PercentileAgreement is one cell's percentile in two runs and the z of
// their difference on the log scale.
type PercentileAgreement struct {
	Image   string `json:"image"`
	Runtime string `json:"runtime"`
	Q       string `json:"q"`
	AUs     Num    `json:"a_us"`
	BUs     Num    `json:"b_us"`
	Z       Num    `json:"z"` // (log A − log B) / sqrt(se_A² + se_B²)
}

// LatencyAgreement compares two runs' fixed-rate latency percentiles:
// each cell both measured, each percentile, z from the two runs' own
// standard errors; Σz² is χ² on len(Cells) df when the runs differ only
// by their within-run errors (each run fixes its rate from its own
// capacities: Rates says how far apart they were).
type LatencyAgreement struct {
	Cells   []PercentileAgreement `json:"cells"`
	MaxAbsZ Num                   `json:"max_abs_z"`
	SumZ2   Num                   `json:"sum_z2"`
	Rates   [2]float64            `json:"rates"`
	// Band is χ²'s central 95% on len(Cells) df: Σz² outside it says the
	// runs differ by more (or less) than their own errors.
	Band [2]float64 `json:"band"`
}

// AgreeLatency compares the latency measures of two rankings (nil when
// either has none).
func AgreeLatency(a, b *LatencyRanking) *LatencyAgreement {
	if a == nil || b == nil {
		return nil
	}
	ag := &LatencyAgreement{MaxAbsZ: nan, SumZ2: nan, Rates: [2]float64{a.Plan.Rate, b.Plan.Rate}}
	type key struct{ image, rt, q string }
	pb := map[key]results.LatencyPercentile{}
	for _, c := range b.Cells {
		for _, p := range c.Percentiles {
			pb[key{c.Image, c.Runtime, p.Q}] = p
		}
	}
	maxZ, sz2, n := math.NaN(), 0.0, 0
	for _, c := range a.Cells {
		for _, x := range c.Percentiles {
			y, ok := pb[key{c.Image, c.Runtime, x.Q}]
			if !ok || x.SELog.IsNaN() || y.SELog.IsNaN() || x.Us.IsNaN() || y.Us.IsNaN() {
				continue
			}
			z := (math.Log(float64(x.Us)) - math.Log(float64(y.Us))) / math.Hypot(float64(x.SELog), float64(y.SELog))
			ag.Cells = append(ag.Cells, PercentileAgreement{Image: c.Image, Runtime: c.Runtime, Q: x.Q, AUs: x.Us, BUs: y.Us, Z: Num(z)})
			if math.IsNaN(maxZ) || math.Abs(z) > maxZ {
				maxZ = math.Abs(z)
			}
			sz2 += z * z
			n++
		}
	}
	if n > 0 {
		ag.MaxAbsZ, ag.SumZ2 = Num(maxZ), Num(sz2)
		ag.Band = [2]float64{chi2Quantile(0.025, float64(n)), chi2Quantile(0.975, float64(n))}
	}
	return ag
}
