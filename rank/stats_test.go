package rank

import (
	"math"
	"math/rand/v2"
	"testing"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

// The example of R's ?wilcox.test (Hollander & Wolfe, depression scale):
// wilcox.test(x, y, alternative = "g") prints W = 35, p-value = 0.1272, so
// the two-sided exact p is 0.2544 (checked by enumerating all 3003 ways to
// pick x's ranks, below).
func TestMannWhitneyExactKnown(t *testing.T) {
	x := []float64{0.80, 0.83, 1.89, 1.04, 1.45, 1.38, 1.91, 1.64, 0.73, 1.46}
	y := []float64{1.15, 0.88, 0.90, 0.74, 1.21}
	mw := MannWhitneyU(x, y)
	if !mw.Exact || mw.U != 35 || !near(mw.P, 0.2544, 5e-5) {
		t.Fatalf("got %+v, want exact U=35 p=0.2544", mw)
	}
	// Brute force: all C(15,10) rank sets for x. U = 35 is above the null
	// mean 25, so the upper tail is the smaller one.
	count, ge := 0, 0
	var rec func(start, left, sum int)
	rec = func(start, left, sum int) {
		if left == 0 {
			count++
			if sum-55 >= 35 {
				ge++
			}
			return
		}
		for r := start; r <= 15-left+1; r++ {
			rec(r+1, left-1, sum+r)
		}
	}
	rec(1, 10, 0)
	if count != 3003 {
		t.Fatalf("enumerated %d rank sets, want 3003", count)
	}
	if want := 2 * float64(ge) / float64(count); !near(mw.P, want, 1e-12) {
		t.Errorf("p = %v, enumeration gives %v", mw.P, want)
	}

	// Complete separation, 3 vs 3: P(U=0) = 1/20, two-sided 0.1.
	mw = MannWhitneyU([]float64{1, 2, 3}, []float64{4, 5, 6})
	if mw.U != 0 || !near(mw.P, 0.1, 1e-12) {
		t.Errorf("3v3 separated: %+v, want U=0 p=0.1", mw)
	}
	if got := MinP(3, 3); !near(got, 0.1, 1e-12) {
		t.Errorf("MinP(3,3) = %v, want 0.1", got)
	}
	if got := MinP(5, 5); !near(got, 2.0/252, 1e-12) {
		t.Errorf("MinP(5,5) = %v, want 2/252", got)
	}
}

// With ties R falls back to the normal approximation with tie and
// continuity correction. By hand for x = 1 2 2 3 4, y = 2 3 5 6 7 8:
// midranks of x: 1, 3, 3, 5.5, 7 → W = 19.5 - 15 = 4.5; tie groups {2,2,2}
// and {3,3}: Σ(t³-t) = 24 + 6 = 30; σ = sqrt(30/12 · (12 - 30/110)) =
// 5.41463; z = (4.5 - 15 + 0.5)/σ = -1.84685; p = 2Φ(z) = 0.064769.
func TestMannWhitneyTiesNormal(t *testing.T) {
	mw := MannWhitneyU([]float64{1, 2, 2, 3, 4}, []float64{2, 3, 5, 6, 7, 8})
	if mw.Exact || mw.U != 4.5 || !near(mw.P, 0.0647690, 1e-6) {
		t.Fatalf("got %+v, want normal U=4.5 p=0.064769", mw)
	}
}

func TestUDist(t *testing.T) {
	for _, nm := range [][2]int{{1, 1}, {3, 3}, {4, 7}, {10, 5}, {20, 20}} {
		n, m := nm[0], nm[1]
		d := uDist(n, m)
		total := 0.0
		for i, c := range d {
			total += c
			if c < 0 || c != d[len(d)-1-i] {
				t.Fatalf("uDist(%d,%d) not a symmetric distribution at %d: %v", n, m, i, d)
			}
		}
		if want := math.Exp(lchoose(n+m, n)); !near(total, want, want*1e-9) {
			t.Errorf("uDist(%d,%d) sums to %v, want C(%d,%d) = %v", n, m, total, n+m, n, want)
		}
	}
	// [5 choose 2]_q = 1 + q + 2q² + 2q³ + 2q⁴ + q⁵ + q⁶
	want := []float64{1, 1, 2, 2, 2, 1, 1}
	got := uDist(2, 3)
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("uDist(2,3) = %v, want %v", got, want)
		}
	}
}

// R: p.adjust(c(0.01, 0.04, 0.03, 0.005), "holm") = 0.03 0.06 0.06 0.02
func TestHolm(t *testing.T) {
	got := Holm([]float64{0.01, 0.04, 0.03, 0.005})
	want := []float64{0.03, 0.06, 0.06, 0.02}
	for i := range want {
		if !near(got[i], want[i], 1e-12) {
			t.Fatalf("Holm = %v, want %v", got, want)
		}
	}
	got = Holm([]float64{0.5, math.NaN(), 0.9})
	if !near(got[0], 1, 1e-12) || !math.IsNaN(got[1]) || !near(got[2], 1, 1e-12) {
		t.Errorf("Holm with NaN = %v, want [1 NaN 1] (capped at 1, NaN outside the family)", got)
	}
}

func TestMedianCI(t *testing.T) {
	cases := []struct {
		n      int
		lo, hi int
		conf   float64
	}{
		{3, 0, 2, 0.75},                // too few: [min, max], 1 - 2/8
		{5, 0, 4, 1 - 2.0/32},          // still too few
		{6, 0, 5, 1 - 2.0/64},          // first n reaching 95%
		{10, 1, 8, 1 - 2*11.0/1024},    // k = 2: P(B ≤ 1) = 11/1024
		{20, 5, 14, 1 - 2*0.020694732}, // k = 6: P(B ≤ 5) for n = 20
	}
	for _, c := range cases {
		lo, hi, conf := medianCI(c.n, 0.95)
		if lo != c.lo || hi != c.hi || !near(conf, c.conf, 1e-6) {
			t.Errorf("medianCI(%d) = %d %d %v, want %d %d %v", c.n, lo, hi, conf, c.lo, c.hi, c.conf)
		}
	}
}

// Coverage sanity: the median interval covers the true median at least as
// often as it claims; the Moses interval of the shift likewise.
func TestIntervalCoverage(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const sims = 2000
	covered := 0
	for i := 0; i < sims; i++ {
		xs := make([]float64, 10)
		for j := range xs {
			xs[j] = 100 + 5*r.NormFloat64()
		}
		s := NewSample(xs).Summary(0.95)
		if s.Lo <= 100 && 100 <= s.Hi {
			covered++
		}
	}
	if got := float64(covered) / sims; got < 0.96 || got > 0.995 {
		t.Errorf("median interval coverage %.3f, want about 0.979", got)
	}
	covered = 0
	for i := 0; i < sims; i++ {
		x, y := make([]float64, 8), make([]float64, 8)
		for j := range x {
			x[j] = 3 + r.NormFloat64()
			y[j] = r.NormFloat64()
		}
		hl := HodgesLehmann(x, y, 0.95)
		if hl.Confidence < 0.95 {
			t.Fatalf("8v8 Moses interval achieves %.3f < 0.95", hl.Confidence)
		}
		if hl.Lo <= 3 && 3 <= hl.Hi {
			covered++
		}
	}
	if got := float64(covered) / sims; got < 0.93 {
		t.Errorf("shift interval coverage %.3f, want ≥ 0.95 (less sampling noise)", got)
	}
}
