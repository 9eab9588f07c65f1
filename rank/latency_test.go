package rank

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/redis-variants/redis-variants/results"
)

// latencyTrials draws n trials of a cell whose percentiles are base times
// scale, each trial's log off by sd.
func latencyTrials(r *rand.Rand, image, runtime string, n int, scale, sd float64) []LatencyTrial {
	var out []LatencyTrial
	for i := range n {
		f := scale * math.Exp(sd*r.NormFloat64())
		out = append(out, LatencyTrial{LatencyCell: results.LatencyCell{Image: image, Runtime: runtime}, Rep: i, Rate: 1000,
			P50Us: 20 * f, P95Us: 30 * f, P99Us: 50 * f, P999Us: 90 * f, SendLagP50Us: 5, SendLagP99Us: 12})
	}
	return out
}

func TestLatency(t *testing.T) {
	plan := results.LatencyPlan{Test: "GET", Rate: 1000, Cells: []results.LatencyCell{
		{Image: "stock", Runtime: "host"}, {Image: "stock", Runtime: "bridge"}, {Image: "stock", Runtime: "native"}}}
	r := rand.New(rand.NewPCG(1, 2))
	var trials []LatencyTrial
	trials = append(trials, latencyTrials(r, "stock", "host", 8, 1, 0.02)...)
	trials = append(trials, latencyTrials(r, "stock", "bridge", 8, 1.3, 0.02)...)
	trials = append(trials, latencyTrials(r, "stock", "native", 8, 1, 0.02)...)
	behind := latencyTrials(r, "stock", "native", 1, 10, 0)[0]
	behind.Behind = "the generator sent 500 of 1000 requests/s"
	trials = append(trials, behind)
	l := Latency(plan, trials, 0.95)
	if l == nil || len(l.Cells) != 3 || l.NotCounted != 1 {
		t.Fatalf("latency ranking %+v", l)
	}
	for _, c := range l.Cells {
		if c.N != 8 || len(c.Percentiles) != 4 {
			t.Fatalf("cell %+v", c)
		}
		p := c.Percentiles[0]
		if !(p.Lo < p.Us && p.Us < p.Hi) {
			t.Errorf("%s p50 %v not inside [%v, %v]", c.Runtime, p.Us, p.Lo, p.Hi)
		}
	}
	if len(l.Comparisons) != 8 {
		t.Fatalf("%d comparisons, want 2 runtimes x 4 percentiles", len(l.Comparisons))
	}
	for _, c := range l.Comparisons {
		want := map[string]string{"bridge": "higher", "native": "tie"}[c.Runtime]
		if c.Base != "host" || c.Verdict != want {
			t.Errorf("%s %s vs %s: %v [%v, %v] %s, want %s", c.Runtime, c.Q, c.Base, c.Ratio, c.Lo, c.Hi, c.Verdict, want)
		}
		if c.Runtime == "bridge" && !(c.Lo < 1.3 && 1.3 < c.Hi) {
			t.Errorf("bridge %s interval [%v, %v] misses the true 1.3", c.Q, c.Lo, c.Hi)
		}
	}
	if c := l.Cells[0]; c.SendLagP50Us != 5 || c.SendLagP99Us != 12 || c.GeneratorBound {
		t.Errorf("send lag %v / %v, generator-bound %v: want 5 / 12, not bound", c.SendLagP50Us, c.SendLagP99Us, c.GeneratorBound)
	}
	slow := latencyTrials(r, "stock", "host", 3, 1, 0.02)
	for i := range slow {
		slow[i].SendLagP50Us = 15 // 75% of the 20 µs median
	}
	if b := Latency(plan, slow, 0.95); !b.Cells[0].GeneratorBound {
		t.Error("a cell whose send lag is 75% of its median latency is not marked generator-bound")
	}
	if Latency(plan, nil, 0.95) != nil {
		t.Error("a ranking without trials")
	}
}

// Under identical cells the family's verdicts are wrong (a tie called
// higher or lower) in at most about 5% of simulated runs.
func TestLatencyFamilyError(t *testing.T) {
	plan := results.LatencyPlan{Test: "GET", Rate: 1000, Cells: []results.LatencyCell{
		{Image: "a", Runtime: "host"}, {Image: "a", Runtime: "x"}, {Image: "a", Runtime: "y"}}}
	r := rand.New(rand.NewPCG(7, 7))
	wrong, n := 0, 2000
	for range n {
		var trials []LatencyTrial
		for _, c := range plan.Cells {
			trials = append(trials, latencyTrials(r, c.Image, c.Runtime, 6, 1, 0.05)...)
		}
		for _, c := range Latency(plan, trials, 0.95).Comparisons {
			if c.Verdict != Tie {
				wrong++
				break
			}
		}
	}
	// the four percentiles move together here, so Bonferroni over them is
	// conservative: well under 5%
	if got := float64(wrong) / float64(n); got > 0.05+0.015 {
		t.Errorf("a family of identical cells got a verdict in %.1f%% of %d runs, want ≤ 5%%", 100*got, n)
	}
}
