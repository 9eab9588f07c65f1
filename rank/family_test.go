package rank

import (
	"math"
	"math/rand/v2"
	"testing"
)

// exactReplicates is n balanced replicates (n even) of image against
// stock on one benchmark, one window each, whose crossover estimate is
// exactly log(ratio) with standard error se: each side's values are
// log(ratio) plus a fixed zero-mean pattern of unit sample variance.
func exactReplicates(image string, ratio, se float64, n int) []Replicate {
	half := n / 2
	pattern := make([]float64, half)
	ss := 0.0
	for i := range pattern {
		pattern[i] = float64(i) - float64(half-1)/2
		ss += pattern[i] * pattern[i]
	}
	sd := math.Sqrt(ss / float64(half-1))
	// se² = s²/4·(1/half + 1/half) with s the pooled sd of the values.
	s := se * math.Sqrt(2*float64(half))
	key := PairKey{Image: image, Runtime: "host", Base: "stock", BaseRuntime: "host"}
	var reps []Replicate
	for i := range n {
		x := math.Log(ratio) + s*pattern[i%half]/sd
		reps = append(reps, Replicate{PairKey: key, Rep: i, Seq: i, Swapped: i >= half, ImageReference: image == "stock",
			Windows: []Window{{Test: "SET", Pipeline: 1, LogRatio: x,
				Image: SideStats{Requests: 1000, CPUNanos: 1000, CPUShare: 0.5}, Base: SideStats{Requests: 1000, CPUNanos: 1000, CPUShare: 0.5}}}})
	}
	return reps
}

// TestChainOfTiesGetsRankIntervals: four images at 1.100, 1.094, 1.088
// and 1.082 the primary reference, each with SE 0.3%. Every neighbour is
// too close to separate, but the ends are 4 SE apart. Adjacent-gap ranks
// put all four at rank 1; the family separates the ends, so the rank
// intervals say so, every image is separated from the reference, and the
// verdicts against the reference agree with the pairs they come from.
func TestChainOfTiesGetsRankIntervals(t *testing.T) {
	var reps []Replicate
	reps = append(reps, exactReplicates("stock", 1, 0.003, 12)...)
	for _, im := range []struct {
		name  string
		ratio float64
	}{{"a", 1.100}, {"b", 1.094}, {"c", 1.088}, {"d", 1.082}} {
		reps = append(reps, exactReplicates(im.name, im.ratio, 0.003, 12)...)
	}
	rk := Rank(nil, reps, DefaultThresholds())
	st, ok := rk.Standing("host")
	if !ok {
		t.Fatalf("no host standings: %+v", rk.Standings)
	}
	want := map[string][2]int{"a": {1, 3}, "b": {1, 4}, "c": {1, 4}, "d": {2, 4}, "stock": {5, 5}}
	for _, e := range st.Entries {
		if got := [2]int{e.Rank, e.RankHi}; got != want[e.Image] {
			t.Errorf("%s: rank %d–%d, want %d–%d", e.Image, e.Rank, e.RankHi, want[e.Image][0], want[e.Image][1])
		}
	}
	if len(st.Pairs) != 10 {
		t.Fatalf("%d pairs, want all 10 of 5 entries", len(st.Pairs))
	}
	for _, p := range [][2]string{{"a", "d"}, {"a", "stock"}, {"d", "stock"}} {
		if !st.Separated(p[0], p[1]) {
			t.Errorf("%s and %s not separated", p[0], p[1])
		}
	}
	for _, p := range [][2]string{{"a", "b"}, {"b", "c"}, {"c", "d"}, {"a", "c"}, {"b", "d"}} {
		if st.Separated(p[0], p[1]) {
			t.Errorf("%s and %s separated, though %.1f SE or less apart", p[0], p[1], 2.6)
		}
	}
	// One family: a verdict against the reference is its pair's decision,
	// and an interval that excludes 1 is always a separated pair.
	for _, e := range st.Entries {
		for _, s := range e.Versus {
			if s.Verdict == Self {
				continue
			}
			sep := st.Separated(e.Image, s.Reference)
			if (s.Verdict != Tie) != sep {
				t.Errorf("%s vs %s: verdict %s, family separated %v", e.Image, s.Reference, s.Verdict, sep)
			}
			if excl := s.Lo > 1 || s.Hi < 1; excl != sep {
				t.Errorf("%s vs %s: interval [%.4f, %.4f] but separated %v", e.Image, s.Reference, float64(s.Lo), float64(s.Hi), sep)
			}
		}
	}
	for _, p := range rk.Pairs {
		if p.Family == FamilyPrimary && p.Verdict != Tie && !st.Separated(p.Image, p.Base) {
			t.Errorf("%s: primary verdict %s but its pair is not separated", p.Image, p.Verdict)
		}
	}
}

// TestSplitZPairsTheWindowsOfAReplicate: replicates whose windows share a
// large replicate effect (fresh servers differ by 2%), with even windows
// 0.2% above odd ones. Treating the halves as independent estimates
// drowns that in the replicate effect; the paired even − odd difference
// of each replicate finds it, and finds nothing where there is nothing.
func TestSplitZPairsTheWindowsOfAReplicate(t *testing.T) {
	build := func(drift float64) []Replicate {
		r := rand.New(rand.NewPCG(4, 4))
		var reps []Replicate
		for _, im := range []string{"stock", "x"} {
			key := PairKey{Image: im, Runtime: "host", Base: "stock", BaseRuntime: "host"}
			for i := range 12 {
				ru := Replicate{PairKey: key, Rep: i, Seq: i, Swapped: i%2 == 1, ImageReference: im == "stock"}
				rep := 0.02 * r.NormFloat64()
				for w := range 4 {
					x := rep + 0.0005*r.NormFloat64()
					if w%2 == 0 {
						x += drift
					}
					ru.Windows = append(ru.Windows, Window{Test: "SET", Pipeline: 1, Index: w, LogRatio: x,
						Image: SideStats{Requests: 1000, CPUNanos: 1000, CPUShare: 0.5}, Base: SideStats{Requests: 1000, CPUNanos: 1000, CPUShare: 0.5}})
				}
				reps = append(reps, ru)
			}
		}
		return reps
	}
	z := func(reps []Replicate) float64 {
		for _, p := range Rank(nil, reps, DefaultThresholds()).Pairs {
			if p.Image == "x" && p.Test == "" {
				return float64(p.SplitZ)
			}
		}
		t.Fatal("no score for x")
		return 0
	}
	if got := z(build(0.002)); !(got > 5) {
		t.Errorf("a 0.2%% drift between even and odd windows: split-half z %.2f, want > 5", got)
	}
	if got := z(build(0)); !(math.Abs(got) < 3) {
		t.Errorf("no drift: split-half z %.2f, want |z| < 3", got)
	}
}

// TestSignedRankOnReplicates: the cross-check counts replicates, not
// windows: twelve replicates of four windows each give the p-value of
// twelve values.
func TestSignedRankOnReplicates(t *testing.T) {
	reps := exactReplicates("stock", 1, 0.003, 12)
	var values, windows []float64
	for _, r := range exactReplicates("x", 1.05, 0.003, 12) {
		w := r.Windows[0]
		values = append(values, w.LogRatio)
		r.Windows = nil
		for i := range 4 {
			w.Index = i
			r.Windows = append(r.Windows, w)
			windows = append(windows, w.LogRatio)
		}
		reps = append(reps, r)
	}
	want, pooled := SignedRankP(values), SignedRankP(windows)
	if want == pooled {
		t.Fatalf("the test cannot tell replicates from windows: both give p %g", want)
	}
	for _, p := range Rank(nil, reps, DefaultThresholds()).Pairs {
		if p.Image == "x" && p.Test == "" {
			if float64(p.SignRankP) != want {
				t.Errorf("signed-rank p %g, want %g from the twelve replicates (the 48 windows pooled give %g)", float64(p.SignRankP), want, pooled)
			}
			return
		}
	}
	t.Fatal("no score for x")
}

// TestOneAlpha: the method has one level; Confidence follows Alpha.
func TestOneAlpha(t *testing.T) {
	if th := withDefaults(Thresholds{Alpha: 0.01, Confidence: 0.95}); th.Confidence != 0.99 {
		t.Errorf("alpha 0.01: confidence %g, want 0.99", th.Confidence)
	}
	if th := withDefaults(Thresholds{Confidence: 0.9}); math.Abs(th.Alpha-0.1) > 1e-12 || th.Confidence != 1-th.Alpha {
		t.Errorf("confidence 0.9 alone: alpha %g confidence %g", th.Alpha, th.Confidence)
	}
	if th := withDefaults(Thresholds{}); th.Alpha != 0.05 || th.Confidence != 0.95 {
		t.Errorf("defaults: alpha %g confidence %g", th.Alpha, th.Confidence)
	}
}

// TestMemoryNoSpreadIsNoVerdict: two images whose servers all held
// exactly the same RSS as the reference's, and one with exactly 10%
// more, all without spread: no interval, no verdict, no separation.
func TestMemoryNoSpreadIsNoVerdict(t *testing.T) {
	var ts []MemoryTrial
	for rep := range 3 {
		ts = append(ts, memTrial("stock", false, rep, "jemalloc-5.3.0", 100e6),
			memTrial("same", false, rep, "jemalloc-5.3.0", 100e6), memTrial("more", false, rep, "libc", 110e6))
	}
	mr := Memory(ts, "stock")
	for _, e := range mr.Entries {
		if e.Image == "stock" {
			continue
		}
		if e.Verdict != "no spread measured" || !e.Lo.IsNaN() || !e.Hi.IsNaN() {
			t.Errorf("%s: verdict %q [%v, %v], want no spread measured and no interval", e.Image, e.Verdict, e.Lo, e.Hi)
		}
		if e.Rank != 1 || e.RankHi != 3 {
			t.Errorf("%s: rank %d–%d, want 1–3 (nothing separated)", e.Image, e.Rank, e.RankHi)
		}
	}
}
