package rank

import (
	"math"
	"strings"
	"testing"

	"github.com/redis-variants/redis-variants/results"
	"github.com/redis-variants/redis-variants/variants"
)

func TestAnswerClaims(t *testing.T) {
	est := func(ratio, lo, hi float64, reps int) Estimate {
		return Estimate{Ratio: Num(ratio), Lo: Num(lo), Hi: Num(hi), Confidence: 0.95, LogMean: Num(math.Log(ratio)),
			SE: Num((math.Log(hi) - math.Log(lo)) / 4), DF: 15, Replicates: reps}
	}
	rk := Ranking{
		Thresholds: Thresholds{Confidence: 0.95, Primary: "stock"},
		References: []string{"stock"},
		Standings:  []Standings{{Runtime: "host", Pairs: []Separation{{Higher: "fast", Lower: "slow", Ratio: 1.05, Lo: 1.01, Hi: 1.09}}}},
		Pairs: []PairResult{
			{PairKey: PairKey{Image: "stock", Runtime: "native", Base: "stock", BaseRuntime: "host"}, Kind: KindAxis, Estimate: est(1.001, 0.996, 1.005, 16)},
			{PairKey: PairKey{Image: "stock", Runtime: "pod", Base: "stock", BaseRuntime: "host"}, Kind: KindAxis, Estimate: est(0.90, 0.88, 0.92, 16)},
			{PairKey: PairKey{Image: "stock", Runtime: "native", Base: "stock", BaseRuntime: "host"}, Kind: KindAxis, Test: "GET", Pipeline: 64, Estimate: est(1.2, 1.1, 1.3, 16)},
			{PairKey: PairKey{Image: "fast", Runtime: "host", Base: "stock", BaseRuntime: "host"}, Kind: KindImage, Estimate: est(0.8, 0.75, 0.85, 12)},
		},
		Axes: []AxisEffect{{Axis: "network", Base: "host", Other: "bridge", Image: "stock", Ratio: 0.4, Lo: 0.35, Hi: 0.45, Confidence: 0.95}},
		Latency: &results.LatencyRanking{Plan: results.LatencyPlan{Test: "GET", Rate: 20000}, FamilyLvl: 0.99,
			Cells:       []results.LatencyCellSummary{{LatencyCell: results.LatencyCell{Image: "stock", Runtime: "native"}, N: 8}, {LatencyCell: results.LatencyCell{Image: "stock", Runtime: "bridge"}, N: 7}},
			Comparisons: []results.LatencyComparison{{Image: "stock", Runtime: "bridge", Base: "native", Q: "p50", Ratio: 3, Lo: 2, Hi: 4}}},
	}
	claim := func(a, b string, runtimes bool, ratio float64, measure, test string) variants.Claim {
		return variants.Claim{Label: a + "/" + b, A: a, B: b, Runtimes: runtimes, Ratio: ratio, Measure: measure, Test: test}
	}
	tp := variants.MeasureThroughput
	rk.Thresholds.Experiment = &variants.Experiment{Title: "t", Claims: []variants.Claim{
		claim("native", "host", true, 1.1, tp, ""),    // a co-scheduled axis: tie
		claim("host", "native", true, 0.8, tp, "GET"), // the same axis inverted, one benchmark
		claim("host", "bridge", true, 2, tp, ""),      // standalone axis, inverted: 2.5 [2.22, 2.86]
		claim("native", "pod", true, 0, tp, ""),       // derived through host
		claim("stock", "fast", false, 2.42, tp, ""),   // image pair inverted: 1.25 [1.18, 1.33]
		claim("slow", "fast", false, 1.5, tp, ""),     // separation inverted: opposite
		claim("bridge", "native", true, 1.07, "p50", ""),
		claim("host", "native", true, 1.05, "p50", ""), // no such latency comparison
		claim("stock", "nobody", false, 1, tp, ""),
	}}
	got := AnswerClaims(&rk)
	if len(got) != 9 {
		t.Fatalf("%d results", len(got))
	}
	near := func(x Num, want float64) bool { return math.Abs(float64(x)-want) < 1e-3 }
	check := func(i int, ratio, lo, hi float64, dir string, within bool, covers string) {
		t.Helper()
		g := got[i]
		if !g.Found || !near(g.Ratio, ratio) || !near(g.Lo, lo) || !near(g.Hi, hi) || g.Direction != dir || g.Within != within || !strings.Contains(g.Covers, covers) {
			t.Errorf("claim %d (%s): got found %v %.4f [%.4f, %.4f] %q within %v covers %q (%s); want %.4f [%.4f, %.4f] %q within %v covers %q",
				i, g.Label, g.Found, float64(g.Ratio), float64(g.Lo), float64(g.Hi), g.Direction, g.Within, g.Covers, g.Why, ratio, lo, hi, dir, within, covers)
		}
	}
	check(0, 1.001, 0.996, 1.005, results.DirectionTie, false, "co-scheduled on one CPU")
	check(1, 1/1.2, 1/1.3, 1/1.1, results.DirectionHolds, true, "on GET P64")
	check(2, 2.5, 1/0.45, 1/0.35, results.DirectionHolds, false, "standalone trials")
	if g := got[3]; !g.Found || !near(g.Ratio, 1.001/0.90) || !(g.Lo > 1 && g.Hi > g.Ratio) || g.Direction != "" || !strings.Contains(g.Covers, "derived from two co-scheduled axes against `host`") {
		t.Errorf("derived claim: %+v", g)
	}
	check(4, 1.25, 1/0.85, 1/0.75, results.DirectionHolds, false, "co-scheduled against each other")
	check(5, 1/1.05, 1/1.09, 1/1.01, results.DirectionOpposite, false, "score ratio")
	check(6, 3, 2, 4, results.DirectionHolds, false, "p50 latency at 20000 GET req/s")
	if g := got[7]; g.Found || !strings.Contains(g.Why, "compares each runtime with the first (`native`)") {
		t.Errorf("missing latency claim: %+v", g)
	}
	if g := got[8]; g.Found || g.Direction != "" || !strings.Contains(g.Why, "no comparison of `stock` with `nobody` under `host`") {
		t.Errorf("missing image claim: %+v", g)
	}
}

// TestAgreeLatency: two runs' percentiles, z from their own errors; a
// cell one run lacks, or a percentile without an error, is left out.
func TestAgreeLatency(t *testing.T) {
	cell := func(rt string, p50, se float64) results.LatencyCellSummary {
		return results.LatencyCellSummary{LatencyCell: results.LatencyCell{Image: "stock", Runtime: rt}, N: 8,
			Percentiles: []results.LatencyPercentile{{Q: "p50", Us: Num(p50), SELog: Num(se)}, {Q: "p99", Us: Num(2 * p50), SELog: nan}}}
	}
	a := &LatencyRanking{Plan: results.LatencyPlan{Rate: 20000}, Cells: []results.LatencyCellSummary{cell("native", 100, 0.03), cell("bridge", 300, 0.04), cell("host", 90, 0.02)}}
	b := &LatencyRanking{Plan: results.LatencyPlan{Rate: 18000}, Cells: []results.LatencyCellSummary{cell("native", 110, 0.04), cell("bridge", 300, 0.03)}}
	ag := AgreeLatency(a, b)
	if ag == nil || len(ag.Cells) != 2 || ag.Rates != [2]float64{20000, 18000} {
		t.Fatalf("agreement %+v", ag)
	}
	z := math.Log(100.0/110) / 0.05
	if math.Abs(float64(ag.Cells[0].Z)-z) > 1e-9 || ag.Cells[1].Z != 0 || math.Abs(float64(ag.SumZ2)-z*z) > 1e-9 || math.Abs(float64(ag.MaxAbsZ)-math.Abs(z)) > 1e-9 {
		t.Errorf("z %v, Σz² %v, max %v; want %v", ag.Cells, ag.SumZ2, ag.MaxAbsZ, z)
	}
	// χ² on 2 df: the central 95% is [0.051, 7.38]
	if math.Abs(ag.Band[0]-0.0506) > 1e-3 || math.Abs(ag.Band[1]-7.378) > 1e-2 {
		t.Errorf("band %v", ag.Band)
	}
	if AgreeLatency(a, nil) != nil {
		t.Error("a run without the measure compared")
	}
}
