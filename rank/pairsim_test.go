package rank

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/redis-variants/redis-variants/variants"
)

// noise is the model of the machine the simulations run the method on,
// built from what was measured on this project's 2-vCPU VMs (shared/world.md,
// issue "Ranking truth"): the vCPU runs fast and slow in waves (CV 16% over
// 2 s windows), which both co-scheduled servers see; what they do not share
// is a small part of the wave (they sample it at different instants), their
// own heavy-tailed jitter, steal bursts that land on one of them, a fixed
// bias of the slot a server runs in (two identical servers gave 0.991 and
// 1.005 with the sides fixed) and the layout of each fresh process.
type noise struct {
	wave       float64 // sd of the common log wave per window (0.16)
	unshared   float64 // share of the wave one side sees alone (0.03)
	jitter     float64 // scale of each side's t(3) jitter, log (0.003)
	burstP     float64 // chance per window that a steal burst lands on one side (0.05)
	burst      float64 // size of a burst, log (0.04)
	slotBias   float64 // slot A's bias is drawn in ±slotBias each campaign, log (0.01)
	replicateS float64 // sd of a fresh server's own speed on one test, log (0.006)
	outlierP   float64 // chance that a fresh server is an outlier on a test (0.03)
	outlier    float64 // scale of such an outlier, log, times |t(3)| (0.05)
}

// measuredNoise is the model fitted to the first co-scheduled run of the
// default file here (runs/20261201-111847, 72 replicates): windows of one
// replicate agree within 0.5-0.8% (sd), fresh servers of the same image
// differ by about 1% per test, and one replicate in ~30 had a test 15-20%
// off (LRANGE_100 1.49 against 1.27 in the other nine).
func measuredNoise() noise {
	return noise{wave: 0.16, unshared: 0.03, jitter: 0.003, burstP: 0.05, burst: 0.04, slotBias: 0.01,
		replicateS: 0.006, outlierP: 0.03, outlier: 0.05}
}

// design is a campaign's shape, taken from a profile.
type design struct {
	tests      []string
	pipeline   int
	replicates int
	windows    int
}

func quickDesign(t testing.TB) design {
	t.Helper()
	p, err := variants.Load("../variants.yaml")
	if err != nil {
		t.Fatal(err)
	}
	q := p.Profiles["quick"]
	// the most replicates a pair gets: every look's round (a pair the
	// decision waits on to the end)
	return design{tests: q.Tests, pipeline: q.Pipelines[0], replicates: q.Replicates * max(q.Looks, 1), windows: q.Windows}
}

func studentT3(r *rand.Rand) float64 {
	// t(3) = N / sqrt(chi2(3)/3)
	z := r.NormFloat64()
	c := 0.0
	for i := 0; i < 3; i++ {
		x := r.NormFloat64()
		c += x * x
	}
	return z / math.Sqrt(c/3)
}

// campaign simulates one bench run for the estimator's unit tests below
// (the whole-campaign simulations run the bench's own design and the rank
// stage instead: bench/sim_test.go): every image in truth (name → true
// speed ratio to the primary reference "stock") paired with stock, plus
// the A/A control, under the design, and returns the replicates in a
// shuffled order as the bench stage would write them.
func campaign(r *rand.Rand, nz noise, d design, truth map[string]float64, names []string) []Replicate {
	slot := (2*r.Float64() - 1) * nz.slotBias // slot A's extra log ns/op
	var reps []Replicate
	seq := 0
	pairs := append([]string{"stock"}, names...)
	for _, im := range pairs {
		key := PairKey{Image: im, Runtime: "host", Base: "stock", BaseRuntime: "host"}
		swaps := make([]bool, d.replicates)
		for i := d.replicates / 2; i < d.replicates; i++ {
			swaps[i] = true
		}
		r.Shuffle(len(swaps), func(i, j int) { swaps[i], swaps[j] = swaps[j], swaps[i] })
		for rep := 0; rep < d.replicates; rep++ {
			ru := Replicate{PairKey: key, Rep: rep, Seq: seq, Swapped: swaps[rep], ImageReference: im == "stock"}
			seq++
			wave := nz.wave * r.NormFloat64()
			for _, test := range d.tests {
				// each fresh server's own speed on this test
				layout := func() float64 {
					l := nz.replicateS * r.NormFloat64()
					if r.Float64() < nz.outlierP {
						l += nz.outlier * studentT3(r)
					}
					return l
				}
				layoutX, layoutB := layout(), layout()
				for w := 0; w < d.windows; w++ {
					var win Window
					for {
						wave = 0.7*wave + math.Sqrt(1-0.49)*nz.wave*r.NormFloat64() // AR(1) waves
						side := func(trueLog, layout float64, inSlotA bool) float64 {
							l := -trueLog + wave + nz.unshared*nz.wave*r.NormFloat64() + nz.jitter*studentT3(r) + layout
							if inSlotA {
								l += slot
							}
							return l
						}
						lx := side(math.Log(truth[im]), layoutX, !ru.Swapped)
						lb := side(0, layoutB, ru.Swapped)
						steal := 0.0
						if r.Float64() < nz.burstP {
							b := nz.burst * math.Abs(studentT3(r))
							steal = b / 2 // a burst that costs the side b shows as about b/2 of both servers' time stolen
							if r.IntN(2) == 0 {
								lx += b
							} else {
								lb += b
							}
						}
						// 1 s windows at ~500k ops/s per side, ns/op ≈ 1 µs·e^l
						nx, nb := 1000*math.Exp(lx), 1000*math.Exp(lb)
						win = Window{Test: test, Pipeline: d.pipeline, Index: w, Steal: steal,
							Image:    SideStats{Requests: 500000, CPUNanos: uint64(nx * 500000), CPUShare: 0.5},
							Base:     SideStats{Requests: 500000, CPUNanos: uint64(nb * 500000), CPUShare: 0.5},
							LogRatio: math.Log(nb / nx)}
						if win.Steal <= MaxSteal { // the bench stage measures such a window again
							break
						}
					}
					ru.Windows = append(ru.Windows, win)
				}
			}
			reps = append(reps, ru)
		}
	}
	r.Shuffle(len(reps), func(i, j int) { reps[i], reps[j] = reps[j], reps[i] })
	return reps
}

// TestSideSwapCancelsSlotBias: with a 1% slot bias and no other noise
// source but jitter, the balanced design's estimate of an A/A pair is
// centred on 1 and the slot effect is estimated; with every replicate on
// the same side the bias would be the whole answer.
func TestSideSwapCancelsSlotBias(t *testing.T) {
	d := design{tests: []string{"SET"}, pipeline: 16, replicates: 8, windows: 3}
	nz := noise{jitter: 0.002}
	r := rand.New(rand.NewPCG(3, 3))
	reps := campaign(r, nz, d, map[string]float64{"stock": 1}, nil)
	// A pure slot bias: the server in slot A is 1% slower. With the image
	// in slot A (not swapped) the image looks 1% slower, else 1% faster.
	for i := range reps {
		for j := range reps[i].Windows {
			if reps[i].Swapped {
				reps[i].Windows[j].LogRatio += 0.01
			} else {
				reps[i].Windows[j].LogRatio -= 0.01
			}
		}
	}
	rk := Rank(nil, reps, DefaultThresholds())
	if len(rk.Controls) != 1 {
		t.Fatalf("controls %+v", rk.Controls)
	}
	c := rk.Controls[0]
	if !c.Balanced || math.Abs(float64(c.LogMean)) > 0.002 || math.Abs(float64(c.SideEffect)+0.01) > 0.002 {
		t.Errorf("balanced A/A with slot bias: mean %.4f side %.4f balanced %v", c.LogMean, c.SideEffect, c.Balanced)
	}
	if c.Significant {
		t.Errorf("a pure slot bias made the A/A significant: %+v", c)
	}
}

func TestPairStandingsAndDerived(t *testing.T) {
	d := design{tests: []string{"SET", "GET"}, pipeline: 16, replicates: 8, windows: 3}
	r := rand.New(rand.NewPCG(9, 9))
	truth := map[string]float64{"stock": 1, "fast": 1.20, "official": 1.10, "slow": 0.5}
	reps := campaign(r, measuredNoise(), d, truth, []string{"fast", "official", "slow"})
	for i := range reps {
		if reps[i].Image == "official" {
			reps[i].ImageReference = true
		}
	}
	rk := Rank(nil, reps, DefaultThresholds())
	if rk.Method != MethodPairs || !rk.Trustworthy {
		t.Fatalf("method %q trustworthy %v warnings %+v", rk.Method, rk.Trustworthy, rk.Warnings)
	}
	st, ok := rk.Standing("host")
	if !ok {
		t.Fatal("no host standings")
	}
	var order []string
	for _, e := range st.Entries {
		order = append(order, fmt.Sprintf("%s:%d", e.Image, e.Rank))
	}
	if got := fmt.Sprint(order); got != "[fast:1 official:2 stock:3 slow:4]" {
		t.Errorf("standings %s", got)
	}
	fast := st.Entries[0]
	if len(fast.Versus) != 2 || fast.Versus[1].Reference != "official" || !fast.Versus[1].Derived {
		t.Fatalf("fast versus %+v", fast.Versus)
	}
	if v := float64(fast.Versus[1].Score); math.Abs(v-1.2/1.1) > 0.01 || fast.Versus[1].Verdict != Faster {
		t.Errorf("fast vs official derived %.4f %s, want ≈ %.4f faster", v, fast.Versus[1].Verdict, 1.2/1.1)
	}
	if rk.Resolution.Max.IsNaN() || float64(rk.Resolution.Max) > 0.02 {
		t.Errorf("resolution %+v", rk.Resolution)
	}
}

func TestStudentT(t *testing.T) {
	for _, c := range []struct{ p, df, want float64 }{
		{0.975, 5, 2.570582}, {0.975, 10, 2.228139}, {0.995, 6, 3.707428}, {0.975, 1, 12.706205}, {0.9, 30, 1.310415}, {0.975, 1000, 1.962339},
	} {
		if got := studentQuantile(c.p, c.df); math.Abs(got-c.want) > 1e-5 {
			t.Errorf("t(%v, %v) = %.6f, want %.6f", c.p, c.df, got, c.want)
		}
	}
	if p := studentP(2.228139, 10); math.Abs(p-0.05) > 1e-6 {
		t.Errorf("studentP = %v", p)
	}
}

func TestSignedRank(t *testing.T) {
	// R: wilcox.test(x - y) for the paired example of ?wilcox.test
	x := []float64{1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.30}
	y := []float64{0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.14, 1.29}
	d := make([]float64, len(x))
	for i := range x {
		d[i] = x[i] - y[i]
	}
	if p := SignedRankP(d); math.Abs(p-0.03906) > 1e-4 {
		t.Errorf("signed-rank p = %.5f, want 0.03906", p)
	}
	if p := SignedRankP([]float64{1, -1}); p != 1 {
		t.Errorf("symmetric p = %v", p)
	}
}
