package rank

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/redis-variants/redis-variants/results"
)

// drawReps are 12 replicates of one image against the primary reference
// on 4 layout draws in turn, swapped in the second of each round of
// draws (each draw two on one side, one on the other):
// draw d's true log ratio is base + effect[d-1], each replicate's noise sd.
func drawReps(base float64, effect []float64, sd float64, seed int64) []Replicate {
	rng := rand.New(rand.NewSource(seed))
	var reps []Replicate
	for r := 0; r < 12; r++ {
		d := r%len(effect) + 1
		k := PairKey{Image: "img", Runtime: "host", Base: "ref", BaseRuntime: "host"}
		x := base + effect[d-1] + sd*rng.NormFloat64()
		reps = append(reps, Replicate{PairKey: k, Rep: r, Swapped: (r/len(effect))%2 == 1, Draw: d, DrawImage: map[bool]string{true: "img", false: "img.l" + string(rune('0'+d))}[d == 1],
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
	// no layout effect: the interval is still the draw means' (df 3), and
	// says it covers 4 draws
	flat := drawReps(0.05, []float64{0, 0, 0, 0}, 0.003, 2)
	g = groupReplicates(flat)[0]
	v, sw, ws, wsd, dr = pairValues(g, g.benches(), -1)
	e = makeEstimate(v, sw, dr, ws, wsd, th.Confidence)
	if e.Draws != 4 || e.DF != 3 {
		t.Errorf("no layout effect: SE %.5f df %.1f draws %d, want the draw means' on 3 df", float64(e.SE), float64(e.DF), e.Draws)
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

// TestDrawLevelEstimate: a spec's estimate is the mean of its draws'
// means (slot effect removed), its SE their sd over √L, on L − 1 df,
// checked by hand; with a draw that lost a replicate (unequal counts,
// and its sides no longer like the others'), the intercept of the draw
// means regressed on their share of slot A, on L − 2 df.
func TestDrawLevelEstimate(t *testing.T) {
	th := withDefaults(DefaultThresholds())
	full := drawReps(0.03, []float64{0.004, -0.002, 0, 0.001}, 0.006, 7)
	for _, lose := range []bool{false, true} {
		reps := append([]Replicate(nil), full...)
		if lose {
			reps = append(reps[:5], reps[6:]...) // draw 2 loses its swapped replicate
		}
		g := groupReplicates(reps)[0]
		v, sw, ws, wsd, dr := pairValues(g, g.benches(), -1)
		e := makeEstimate(v, sw, dr, ws, wsd, th.Confidence)
		_, _, _, side, bal := estimate(v, sw)
		raw, share, counts := map[int]float64{}, map[int]float64{}, map[int]int{}
		for i, x := range v {
			raw[dr[i]] += x
			counts[dr[i]]++
			if sw[i] {
				share[dr[i]]--
			} else {
				share[dr[i]]++
			}
		}
		var dm, gs []float64
		for d := 1; d <= 4; d++ {
			n := float64(counts[d])
			gi := share[d] / n
			gs = append(gs, gi)
			y := raw[d] / n
			if bal {
				y -= side * gi // the slot effect removed
			}
			dm = append(dm, y)
		}
		m := mean(dm)
		ss := 0.0
		for _, y := range dm {
			ss += (y - m) * (y - m)
		}
		se, df := math.Sqrt(ss/3/4), 3.0
		if lose {
			// least squares of the measured draw means on their share
			var r []float64
			for i := range dm {
				r = append(r, raw[i+1]/float64(counts[i+1]))
			}
			gb, rb := mean(gs), mean(r)
			sxx, sxy := 0.0, 0.0
			for i := range gs {
				sxx += (gs[i] - gb) * (gs[i] - gb)
				sxy += (gs[i] - gb) * (r[i] - rb)
			}
			b := sxy / sxx
			rss := 0.0
			for i := range gs {
				e := r[i] - rb - b*(gs[i]-gb)
				rss += e * e
			}
			m, se, df = rb-b*gb, math.Sqrt(rss/2*(0.25+gb*gb/sxx)), 2
		}
		if math.Abs(float64(e.LogMean)-m) > 1e-12 || math.Abs(float64(e.SE)-se) > 1e-12 || float64(e.DF) != df || e.Draws != 4 {
			t.Errorf("lost %v: estimate %.6f SE %.6f df %.1f draws %d, by hand %.6f SE %.6f df %.0f", lose, float64(e.LogMean), float64(e.SE), float64(e.DF), e.Draws, m, se, df)
		}
		if !(float64(e.LayoutVar) >= 0) || float64(e.LayoutVar) > se*se {
			t.Errorf("lost %v: layout part %.3g of SE² %.3g", lose, float64(e.LayoutVar), se*se)
		}
	}
}

// spec is a simulated build spec of a heterogeneous run: its own noise,
// its own layout spread, replicates lost at its own rate.
type spec struct {
	name           string
	truth          float64 // log ratio to the primary reference
	noise, layout  float64 // sd of a replicate, of a draw (log)
	draws, perDraw int
	loss           float64 // chance a replicate is lost
}

// specReps are s's replicates against "ref": draws in turn, sides
// balanced within each draw, each draw's own effect and each replicate's
// noise drawn from rng (its draw effects scaled by layoutScale).
func specReps(s spec, rng *rand.Rand, layoutScale float64) []Replicate {
	eff := make([]float64, s.draws)
	for i := range eff {
		eff[i] = layoutScale * s.layout * rng.NormFloat64()
	}
	var reps []Replicate
	for r := 0; r < s.draws*s.perDraw; r++ {
		d := r%s.draws + 1
		x := s.truth + eff[d-1] + s.noise*rng.NormFloat64()
		if rng.Float64() < s.loss {
			continue
		}
		k := PairKey{Image: s.name, Runtime: "host", Base: "ref", BaseRuntime: "host"}
		reps = append(reps, Replicate{PairKey: k, Rep: r, Swapped: (r/s.draws)%2 == 1, Draw: d, DrawImage: fmt.Sprintf("%s.l%d", s.name, d),
			Windows: []results.Window{{Test: "SET", Pipeline: 64, LogRatio: x}, {Test: "GET", Pipeline: 64, LogRatio: x + 0.002*rng.NormFloat64()}}})
	}
	return reps
}

// scoreOf is the primary score of image in pa (its 95% estimate, before
// the family's level).
func scoreOf(t *testing.T, reps []Replicate, image string) Estimate {
	t.Helper()
	th := withDefaults(DefaultThresholds())
	for _, g := range groupReplicates(reps) {
		if g.key.Image == image {
			v, sw, ws, wsd, dr := pairValues(g, g.benches(), -1)
			return makeEstimate(v, sw, dr, ws, wsd, th.Confidence)
		}
	}
	t.Fatalf("no pair of %s", image)
	return Estimate{}
}

// pooledSatterthwaite is the interval this project gave a spec before
// issue 52 (rank/layout.go's poolLayouts, kept here as the case it
// failed on): one layout variance pooled over the specs' mean squares,
// each spec's variance c·σ²_L + MSW/n with Satterthwaite's df over
// coefficients of which some are negative.
func pooledSatterthwaite(as []anova, i int) (se, df float64) {
	num, den := 0.0, 0.0
	for _, a := range as {
		num += float64(a.dfb) * (a.msb - a.msw)
		den += float64(a.dfb) * a.n0
	}
	if !(num/den > 0) {
		return math.NaN(), math.NaN()
	}
	v, q := 0.0, 0.0
	for j, o := range as {
		k := as[i].c * float64(o.dfb) / den
		cw := -k
		if j == i {
			cw += 1 / as[i].n
		}
		v += k*o.msb + cw*o.msw
		q += (k*o.msb)*(k*o.msb)/float64(o.dfb) + (cw*o.msw)*(cw*o.msw)/float64(o.dfw)
	}
	return math.Sqrt(v), v * v / q
}

// TestIssue52Case rebuilds the shape of run 20261207-142326: a quiet
// spec whose 16 replicates lie within 3% and whose four draws' means
// agree within 1.1%, ranked beside noisier specs (noise up to 3x its
// own) whose layout spread is near zero. The pooled analysis gave the
// quiet spec a df below 1 (an interval of [0.717, 1.698] in the run);
// the draw-level one gives it 3 df and an interval a few tenths of a
// percent wide.
func TestIssue52Case(t *testing.T) {
	// gcc-o3-native: draw means 1.0935, 1.1020, 1.1050, 1.0990 (within 1.1%)
	means := []float64{math.Log(1.0935), math.Log(1.1020), math.Log(1.1050), math.Log(1.0990)}
	off := [][]float64{{-0.004, 0.003, 0.002, -0.001}, {0.006, -0.005, 0.001, -0.002}, {-0.003, 0.004, -0.002, 0.001}, {0.005, -0.001, -0.006, 0.002}}
	var reps []Replicate
	k := PairKey{Image: "gcc-o3-native", Runtime: "host", Base: "stock-debian", BaseRuntime: "host"}
	for r := range 16 {
		d := r % 4
		x := means[d] + off[d][r/4]
		reps = append(reps, Replicate{PairKey: k, Rep: r, Swapped: (r/4)%2 == 1, Draw: d + 1, DrawImage: fmt.Sprintf("gcc-o3-native.l%d", d+1),
			Windows: []results.Window{{Test: "SET", Pipeline: 64, LogRatio: x}}})
	}
	// three noisier specs (replicate sd 0.9-1.5%), no layout spread to speak of
	rng := rand.New(rand.NewSource(52))
	for i, sd := range []float64{0.009, 0.012, 0.015} {
		for _, r := range specReps(spec{name: fmt.Sprintf("noisy-%d", i), truth: 0.05, noise: sd, layout: 0.0005, draws: 4, perDraw: 4}, rng, 1) {
			r.Base, r.BaseRuntime = "stock-debian", "host"
			r.Windows = r.Windows[:1]
			reps = append(reps, r)
		}
	}
	var as []anova
	for _, g := range groupReplicates(reps) {
		v, sw, _, _, dr := pairValues(g, g.benches(), -1)
		m, _, _, side, bal := estimate(v, sw)
		as = append(as, layoutANOVA(v, sw, dr, m, side, bal))
	}
	// find a scale of the noisy specs' draws at which the pool sits just
	// above σ̂²_L = 0, where the old df fell below 1
	oldSE, oldDF := pooledSatterthwaite(as, 0)
	e := scoreOf(t, reps, "gcc-o3-native")
	lo, hi := Interval(e, 0.95)
	t.Logf("gcc-o3-native: pooled Satterthwaite SE %.4f on %.2f df; draw-level %.4f [%.4f, %.4f] SE %.4f on %.0f df",
		oldSE, oldDF, float64(e.Ratio), lo, hi, float64(e.SE), float64(e.DF))
	if !(oldDF < 1) {
		t.Errorf("the pooled analysis gave %.2f df here; the case is built to reproduce its collapse below 1", oldDF)
	}
	if e.DF != 3 || !(hi/lo < 1.02) || !(lo > 1.09) || !(hi < 1.11) {
		t.Errorf("draw-level: %.4f [%.4f, %.4f] on %.1f df, want 3 df and within [1.09, 1.11]", float64(e.Ratio), lo, hi, float64(e.DF))
	}
}

// TestNoCollapse: over random heterogeneous runs (specs whose replicate
// noise differs up to 3x, layout spread zero for some and not others,
// replicates lost at each spec's own rate, 3-8 draws), through the real
// analysis: no estimate with an interval has df below 1, a spec's df is
// never below its draws less one (less two where its draws' sides are
// unbalanced), no primary half-width (at the family's
// level) is over 50%, and each spec's 95% interval is its own nested one
// whatever the other specs do.
func TestNoCollapse(t *testing.T) {
	th := withDefaults(DefaultThresholds())
	rng := rand.New(rand.NewSource(5252))
	for trial := range 300 {
		var reps []Replicate
		var specs []spec
		for i := range 2 + rng.Intn(4) {
			s := spec{name: fmt.Sprintf("s%d", i), truth: 0.1 * (rng.Float64() - 0.3), noise: 0.003 + 0.012*rng.Float64(),
				draws: 3 + rng.Intn(6), perDraw: 2 + rng.Intn(3), loss: 0.15 * rng.Float64()}
			if rng.Intn(2) == 0 {
				s.layout = 0.015 * rng.Float64()
			}
			specs = append(specs, s)
			reps = append(reps, specReps(s, rng, 1)...)
		}
		ctl := specReps(spec{name: "ref", noise: 0.006, draws: 1, perDraw: 12}, rng, 0)
		for i := range ctl {
			ctl[i].Draw, ctl[i].DrawImage = 0, ""
		}
		reps = append(reps, ctl...)
		pa := analysePairs(reps, th)
		for _, r := range pa.results {
			if r.Lo.IsNaN() {
				continue
			}
			if !(float64(r.DF) >= 1) {
				t.Fatalf("trial %d: %s %s: df %.3f", trial, r.Image, r.Test, float64(r.DF))
			}
			// draws less one, or less two where losses left a draw's
			// sides unbalanced (the slot effect then takes one)
			if r.Draws >= 2 && float64(r.DF) < float64(r.Draws-2) {
				t.Fatalf("trial %d: %s %s: df %.2f below its %d draws less two", trial, r.Image, r.Test, float64(r.DF), r.Draws)
			}
			// a spec left with 1 df (two draws, or three unbalanced,
			// the rest lost): its width is honest, not bounded
			if r.Family == FamilyPrimary && float64(r.DF) >= 2 && r.HalfWidth() > 0.5 {
				t.Fatalf("trial %d: %s: half-width ±%.1f%% on %.2f df", trial, r.Image, 100*r.HalfWidth(), float64(r.DF))
			}
		}
		// each spec's 95% interval alone, and with the others' noise
		// and layout tripled (their pooled σ̂²_L moved across zero)
		for _, s := range specs {
			own := specReps(s, rand.New(rand.NewSource(int64(trial))), 1)
			if len(own) < 3 {
				continue
			}
			alone := scoreOf(t, own, s.name)
			with := own
			for _, o := range specs {
				if o.name != s.name {
					o.noise *= 3
					with = append(with, specReps(o, rng, 3)...)
				}
			}
			pw := analysePairs(with, th)
			for _, r := range pw.results {
				if r.Image != s.name || r.Test != "" {
					continue
				}
				l0, h0 := Interval(alone, 0.95)
				l1, h1 := Interval(r.Estimate, 0.95)
				if w0, w1 := math.Log(h0/l0), math.Log(h1/l1); !math.IsNaN(w0) && math.Abs(w1-w0) > 0.1*w0 {
					t.Fatalf("trial %d: %s's 95%% width %.4f alone, %.4f beside other specs", trial, s.name, w0, w1)
				}
			}
		}
	}
}

// TestIntervalContinuous: a spec's interval moves continuously as its
// layout spread goes to zero and past where its draws' means vary less
// than their replicates explain (where the pooled analysis switched
// method): over a fine grid of the layout scale, no step changes the
// width by more than 10%.
func TestIntervalContinuous(t *testing.T) {
	s := spec{name: "s", truth: 0.04, noise: 0.006, layout: 0.006, draws: 4, perDraw: 3}
	prev := math.NaN()
	for step := 0; step <= 400; step++ {
		scale := 1 - float64(step)/400
		e := scoreOf(t, specReps(s, rand.New(rand.NewSource(9)), scale), "s")
		lo, hi := Interval(e, 0.95)
		w := math.Log(hi / lo)
		if !(w > 0) || !(e.DF == 3) {
			t.Fatalf("scale %.4f: width %.5f df %.1f", scale, w, float64(e.DF))
		}
		if !math.IsNaN(prev) && math.Abs(w-prev) > 0.1*prev {
			t.Fatalf("scale %.4f: width jumps from %.5f to %.5f", scale, prev, w)
		}
		prev = w
	}
}
