package rank

import (
	"math"
	"math/rand"
	"testing"

	"github.com/redis-variants/redis-variants/results"
)

// drawReps are 12 replicates of one image against the primary reference
// on 4 layout draws in turn, swapped in every other pair of replicates:
// draw d's true log ratio is base + effect[d-1], each replicate's noise sd.
func drawReps(base float64, effect []float64, sd float64, seed int64) []Replicate {
	rng := rand.New(rand.NewSource(seed))
	var reps []Replicate
	for r := 0; r < 12; r++ {
		d := r%len(effect) + 1
		k := PairKey{Image: "img", Runtime: "host", Base: "ref", BaseRuntime: "host"}
		x := base + effect[d-1] + sd*rng.NormFloat64()
		reps = append(reps, Replicate{PairKey: k, Rep: r, Swapped: (r/2)%2 == 1, Draw: d, DrawImage: map[bool]string{true: "img", false: "img.l" + string(rune('0'+d))}[d == 1],
			ImageID: "sha256:" + string(rune('a'+d)), Windows: []results.Window{{Test: "SET", Pipeline: 64, Index: 0, LogRatio: x}}})
	}
	return reps
}

func TestLayoutSpreadInTheInterval(t *testing.T) {
	th := withDefaults(DefaultThresholds())
	// layout moves the draws by ±2%, replicates differ by 0.3%: the
	// nested SE is the draw means' (df 3): with 3 replicates a draw, about
	// sqrt(3) times the SE that takes the 12 replicates as independent
	big := drawReps(0.05, []float64{0.02, -0.02, 0.01, -0.01}, 0.003, 1)
	g := groupReplicates(big)[0]
	v, sw, ws, wsd, dr := pairValues(g, g.benches(), -1)
	e := makeEstimate(v, sw, dr, ws, wsd, th.Confidence)
	one := makeEstimate(v, sw, nil, ws, wsd, th.Confidence)
	if e.Draws != 4 || !(float64(e.DF) < 3.5) || !(float64(e.SE) > 1.4*float64(one.SE)) {
		t.Errorf("layout effect: SE %.4f df %.1f draws %d (one binary's SE %.4f): want the draw means' SE, df about 3", float64(e.SE), float64(e.DF), e.Draws, float64(one.SE))
	}
	ls, ok := layoutSpread(g, g.benches(), th.Confidence)
	if !ok || len(ls.Draws) != 4 || ls.Fastest != 1 || ls.Slowest != 2 || !(float64(ls.P) < 0.001) || !(float64(ls.Share) > 0.9) {
		t.Fatalf("layout spread %+v", ls)
	}
	if r := float64(ls.Range.Ratio); math.Abs(r-math.Exp(0.04)) > 0.01 || ls.Draws[1].Name != "img.l2" {
		t.Errorf("range %.4f, want about %.4f; draws %+v", r, math.Exp(0.04), ls.Draws)
	}
	// no layout effect: nothing between draws is measurable, so the
	// crossover SE stands and the interval says it covers 4 draws
	flat := drawReps(0.05, []float64{0, 0, 0, 0}, 0.003, 2)
	g = groupReplicates(flat)[0]
	v, sw, ws, wsd, dr = pairValues(g, g.benches(), -1)
	e, one = makeEstimate(v, sw, dr, ws, wsd, th.Confidence), makeEstimate(v, sw, nil, ws, wsd, th.Confidence)
	ls, _ = layoutSpread(g, g.benches(), th.Confidence)
	if e.Draws != 4 || (float64(ls.F) <= 1 && (e.SE != one.SE || e.DF != one.DF)) || float64(e.SE) < float64(one.SE) {
		t.Errorf("no layout effect: SE %.5f df %.1f (crossover %.5f df %.1f), F %.2f", float64(e.SE), float64(e.DF), float64(one.SE), float64(one.DF), float64(ls.F))
	}
	// one binary: no draws, no layout record
	for i := range flat {
		flat[i].Draw, flat[i].DrawImage = 0, ""
	}
	g = groupReplicates(flat)[0]
	if _, ok := layoutSpread(g, g.benches(), th.Confidence); ok {
		t.Errorf("a layout record for one binary")
	}
}

func TestFTail(t *testing.T) {
	// F(3, 8) 95th percentile 4.066; F(1, 10) at 4.965
	for _, c := range []struct {
		f      float64
		d1, d2 int
		want   float64
	}{{4.066, 3, 8, 0.05}, {4.965, 1, 10, 0.05}, {1, 5, 5, 0.5}} {
		if got := fP(c.f, c.d1, c.d2); math.Abs(got-c.want) > 0.002 {
			t.Errorf("P(F(%d,%d) > %.3f) = %.4f, want %.3f", c.d1, c.d2, c.f, got, c.want)
		}
	}
}

// TestLayoutPool: the scores of several build specs share one layout
// variance. One spec alone gets its own nested interval back (df 3); four
// specs with the same layout spread get about four times the df for it,
// and each one's SE is c·σ²_L + MSW/n from the pooled σ²_L, checked here
// against the mean squares by hand; a pool with no measurable layout
// variance leaves every spec its crossover interval.
func TestLayoutPool(t *testing.T) {
	th := withDefaults(DefaultThresholds())
	effects := [][]float64{{0.01, -0.01, 0.005, -0.005}, {-0.008, 0.012, 0, -0.004}, {0.006, -0.006, -0.01, 0.01}, {0.002, 0.009, -0.011, 0}}
	var reps []Replicate
	for i, ef := range effects {
		for _, r := range drawReps(0.02*float64(i), ef, 0.003, int64(10+i)) {
			r.Image = string(rune('a' + i))
			reps = append(reps, r)
		}
	}
	one := analysePairs(reps[:12], th)
	s := one.results[len(one.results)-1]
	if len(one.layoutPools) != 1 || float64(s.DF) > 3.5 || s.Draws != 4 {
		t.Fatalf("one spec: df %.1f, pools %+v", float64(s.DF), one.layoutPools)
	}
	pa := analysePairs(reps, th)
	if len(pa.layoutPools) != 1 || pa.layoutPools[0].DFBetween != 12 || len(pa.layoutPools[0].Specs) != 4 || !(pa.layoutPools[0].SigmaLayout > 0.004) {
		t.Fatalf("pool %+v", pa.layoutPools)
	}
	// by hand, from each spec's one-way analysis
	var as []anova
	for _, g := range groupReplicates(reps) {
		v, sw, _, _, dr := pairValues(g, g.benches(), -1)
		m, _, _, side, bal := estimate(v, sw)
		as = append(as, layoutANOVA(v, sw, dr, m, side, bal))
	}
	num, den := 0.0, 0.0
	for _, a := range as {
		num += float64(a.dfb) * (a.msb - a.msw)
		den += float64(a.dfb) * a.n0
	}
	s2 := num / den
	if math.Abs(math.Sqrt(s2)-float64(pa.layoutPools[0].SigmaLayout)) > 1e-12 {
		t.Errorf("pooled sigma %.6f, by hand %.6f", float64(pa.layoutPools[0].SigmaLayout), math.Sqrt(s2))
	}
	n := 0
	for _, r := range pa.results {
		if r.Family != FamilyPrimary || r.Test != "" {
			continue
		}
		a := as[n]
		n++
		want := math.Sqrt(a.c*s2 + a.msw/a.n)
		if math.Abs(float64(r.SE)-want) > 1e-9 || !(float64(r.DF) > 6) {
			t.Errorf("%s: SE %.6f df %.1f, want SE %.6f on more than 6 df", r.Image, float64(r.SE), float64(r.DF), want)
		}
	}
	if n != 4 {
		t.Fatalf("%d scores", n)
	}
	// no layout variance anywhere: the crossover intervals stand
	var flat []Replicate
	for i := range 3 {
		for _, r := range drawReps(0.01*float64(i), []float64{0, 0, 0, 0}, 0.003, int64(20+i)) {
			r.Image = string(rune('a' + i))
			flat = append(flat, r)
		}
	}
	pf := analysePairs(flat, th)
	if len(pf.layoutPools) != 1 || pf.layoutPools[0].SigmaLayout != 0 {
		t.Fatalf("flat pool %+v: these seeds measure no layout variance", pf.layoutPools)
	}
	for i, g := range groupReplicates(flat) {
		v, sw, _, _, _ := pairValues(g, g.benches(), -1)
		_, se, df, _, _ := estimate(v, sw)
		var r PairResult
		for _, x := range pf.results {
			if x.Image == g.key.Image && x.Test == "" {
				r = x
			}
		}
		if float64(r.SE) != se || float64(r.DF) != df {
			t.Errorf("spec %d: SE %.6f df %.1f, want the crossover %.6f df %.1f", i, float64(r.SE), float64(r.DF), se, df)
		}
	}
}
