package rank

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// scoresRun is a ranking that holds only primary scores: image → (log
// ratio, SE), each on df degrees of freedom, against "stock" under host.
func scoresRun(name string, df float64, scores map[string][2]float64) RunScores {
	rk := Ranking{References: []string{"stock"}}
	for im, s := range scores {
		rk.Pairs = append(rk.Pairs, PairResult{PairKey: PairKey{Image: im, Runtime: "host", Base: "stock", BaseRuntime: "host"},
			Kind: KindImage, Family: FamilyPrimary, Benchmarks: 3,
			Estimate: Estimate{LogMean: Num(s[0]), SE: Num(s[1]), DF: Num(df), Ratio: Num(math.Exp(s[0]))}})
	}
	return RunScores{Name: name, Ranking: rk}
}

func TestChiSquare(t *testing.T) {
	for _, c := range []struct{ p, k, want float64 }{
		{0.975, 5, 12.8325}, {0.025, 5, 0.8312}, {0.95, 1, 3.8415}, {0.5, 10, 9.3418}, {0.975, 40, 59.3417},
	} {
		if got := chi2Quantile(c.p, c.k); math.Abs(got-c.want) > 1e-3 {
			t.Errorf("χ²(%g) quantile %g = %.4f, want %.4f", c.k, c.p, got, c.want)
		}
	}
}

// TestRunEffectOfIssue11: the two runs of issue 11 gave per-image z of
// +1.32, −0.08, −2.16, −1.33 and −2.15: Σz² = 12.8 on 5 df, at the top
// of χ²(5)'s 95% band, and a between-run variance 1.56× the within-run
// SE², so one run's intervals are √2.56 = 1.6× too narrow for a claim
// that outlives the run.
func TestRunEffectOfIssue11(t *testing.T) {
	const se = 0.004
	a, b := map[string][2]float64{}, map[string][2]float64{}
	for i, z := range []float64{1.32, -0.08, -2.16, -1.33, -2.15} {
		im := fmt.Sprintf("img%d", i)
		base := 0.05 + 0.01*float64(i)
		a[im] = [2]float64{base + z*se*math.Sqrt2, se}
		b[im] = [2]float64{base, se}
	}
	re, err := MeasureRunEffect([]RunScores{scoresRun("A", 10, a), scoresRun("B", 10, b)}, "host")
	if err != nil || re == nil {
		t.Fatalf("run effect %v, %v", re, err)
	}
	if math.Abs(float64(re.Q)-12.806) > 0.001 || re.DF != 5 || re.Images != 5 {
		t.Errorf("Q %.3f on %d df over %d images, want 12.806 on 5 over 5", float64(re.Q), re.DF, re.Images)
	}
	if p := float64(re.P); math.Abs(p-0.0254) > 0.001 {
		t.Errorf("p %.4f, want 0.0254", p)
	}
	if al := float64(re.Allowance); math.Abs(al-math.Sqrt(1+(12.806-5)/5)) > 0.01 {
		t.Errorf("allowance %.3f, want %.3f", al, math.Sqrt(1+(12.806-5)/5))
	}
}

// TestMergeCoversTheRunEffect: runs of six images where each run moves
// each image by a run effect as large as its within-run SE. One run's
// intervals miss the truth far more often than their 95%; the merged
// interval over three runs covers it near its level, an identical image
// stays tied, and the standings come from one family over the merged
// estimates.
func TestMergeCoversTheRunEffect(t *testing.T) {
	r := rand.New(rand.NewPCG(27, 2))
	truth := map[string]float64{"twin": 0, "a": 0.02, "b": 0.035, "c": -0.03, "d": 0.06, "e": 0.01}
	const se, tau = 0.004, 0.004
	const df = 10
	single, singleN, merged, mergedN, twinTie, campaigns := 0, 0, 0, 0, 0, 300
	for range campaigns {
		var runs []RunScores
		for k := range 3 {
			sc := map[string][2]float64{}
			for _, im := range slices.Sorted(maps.Keys(truth)) {
				tr := truth[im]
				// the run's own SE estimate is itself noisy (χ² on df)
				s := se * math.Sqrt(chiSq(r, df)/df)
				sc[im] = [2]float64{tr + tau*r.NormFloat64() + se*r.NormFloat64(), s}
			}
			runs = append(runs, scoresRun(fmt.Sprint(k), df, sc))
			for im, s := range sc {
				lo, hi := Interval(Estimate{LogMean: Num(s[0]), SE: Num(s[1]), DF: df}, 0.95)
				singleN++
				if lo <= math.Exp(truth[im]) && math.Exp(truth[im]) <= hi {
					single++
				}
			}
		}
		m, err := Merge(runs, "host", DefaultThresholds())
		if err != nil {
			t.Fatal(err)
		}
		for _, mi := range m.Images {
			lo, hi := Interval(mi.Estimate, 0.95)
			mergedN++
			if lo <= math.Exp(truth[mi.Image]) && math.Exp(truth[mi.Image]) <= hi {
				merged++
			}
		}
		if !m.Standings.Separated("twin", "stock") {
			twinTie++
		}
		if len(m.Standings.Pairs) != 21 {
			t.Fatalf("%d pairs in the merged family, want 21", len(m.Standings.Pairs))
		}
	}
	sc, mc := float64(single)/float64(singleN), float64(merged)/float64(mergedN)
	t.Logf("coverage: one run %.1f%%, merged over three runs %.1f%%; identical image tied in %d of %d", 100*sc, 100*mc, twinTie, campaigns)
	if sc > 0.90 {
		t.Errorf("one run's intervals covered %.1f%% despite a run effect as large as their SE: the simulation has no run effect", 100*sc)
	}
	if mc < 0.93 {
		t.Errorf("merged intervals covered %.1f%%, want ≥ 93%% (nominal 95%%)", 100*mc)
	}
	if float64(twinTie) < 0.92*float64(campaigns) { // its one true null is tested near α by Holm: 95% ± 2.5% over 300
		t.Errorf("identical image tied in %d of %d merges", twinTie, campaigns)
	}
}

func chiSq(r *rand.Rand, df int) float64 {
	s := 0.0
	for range df {
		x := r.NormFloat64()
		s += x * x
	}
	return s
}

// TestRankerMeasuresTheRunEffect: a run ranked with earlier runs of its
// machine kind carries their run effect; runs measured on another CPU
// model are not merged into it.
func TestRankerMeasuresTheRunEffect(t *testing.T) {
	run := func(cpu string, fast float64) []Replicate {
		reps := append(exactReplicates("stock", 1, 0.003, 12), exactReplicates("fast", fast, 0.003, 12)...)
		reps = append(reps, exactReplicates("slow", 0.95, 0.003, 12)...)
		for i := range reps {
			reps[i].CPUModel = cpu
		}
		return reps
	}
	old := Rank(nil, run("EPYC", 1.10), DefaultThresholds())
	other := Rank(nil, run("Xeon", 1.02), DefaultThresholds())
	r := &Ranker{Earlier: []RunScores{{Name: "old", Ranking: old}, {Name: "other", Ranking: other}}}
	rk, err := r.Rank(t.Context(), nil, run("EPYC", 1.05))
	if err != nil {
		t.Fatal(err)
	}
	re := rk.RunEffect
	if re == nil || len(re.Runs) != 2 || re.Runs[0] != "old" || re.CPUModel != "EPYC" || re.DF != 2 {
		t.Fatalf("run effect %+v, want one from run old and this one on 2 df, on EPYC", re)
	}
	if !(float64(re.Tau) > 0.01) {
		t.Errorf("fast at 1.10 and 1.05 in two runs with SE 0.3%%: τ %.4f, want > 1%%", float64(re.Tau))
	}
	r.Earlier = r.Earlier[1:]
	if rk, err := r.Rank(t.Context(), nil, run("EPYC", 1.05)); err != nil || rk.RunEffect != nil {
		t.Errorf("only a Xeon run earlier: run effect %+v (%v), want none", rk.RunEffect, err)
	}
}

// TestMergeKeepsTheLayoutError: two runs of the same layout draws share
// the draws' error, so the merged SE keeps it whole: with half of each
// run's SE² the layout part, two identical runs merge to 3/4 of one run's
// SE², not 1/2, and Q (on the within-run part) finds no run effect.
func TestMergeKeepsTheLayoutError(t *testing.T) {
	mk := func(name string) RunScores {
		e := Estimate{LogMean: 0.05, SE: 0.004, DF: 10, Replicates: 12, LayoutVar: 0.004 * 0.004 / 2}
		setInterval(&e, 0.95)
		return RunScores{Name: name, Ranking: Ranking{Pairs: []PairResult{{PairKey: PairKey{Image: "a", Runtime: "host", Base: "ref", BaseRuntime: "host"},
			Kind: KindImage, Family: FamilyPrimary, Benchmarks: 3, Estimate: e}}}}
	}
	m, err := Merge([]RunScores{mk("r1"), mk("r2")}, "host", DefaultThresholds())
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Images) != 1 {
		t.Fatalf("merged %+v", m)
	}
	got, want := float64(m.Images[0].Estimate.SE*m.Images[0].Estimate.SE), 0.75*0.004*0.004
	if math.Abs(got-want) > 1e-12 || m.RunEffect == nil || m.RunEffect.Tau != 0 {
		t.Errorf("merged SE² %.3g, want %.3g (the layout half whole, the rest halved); tau %v", got, want, m.RunEffect)
	}
}
