package rank

import (
	"fmt"
	"math"
	"math/rand"
	"testing"
)

// decideOnce draws one family's estimates (entry i's true log ratio mu[i],
// its true SE se[i] on df[i] df: the estimate normal, the SE from a
// chi-square) and decides; entry 0 is the primary reference at exactly 1.
func decideOnce(rng *rand.Rand, mu, se, df []float64) Decision {
	ms := []familyMember{primaryMember("e0")}
	for i := 1; i < len(mu); i++ {
		c := 0.0
		for range int(df[i]) {
			z := rng.NormFloat64()
			c += z * z
		}
		e := Estimate{LogMean: Num(mu[i] + se[i]*rng.NormFloat64()), SE: Num(se[i] * math.Sqrt(c/df[i])), DF: Num(df[i])}
		setInterval(&e, 0.95)
		ms = append(ms, familyMember{image: fmt.Sprintf("e%d", i), e: e})
	}
	th := withDefaults(DefaultThresholds())
	f := newFamily(map[string][]familyMember{"host": ms}, th)
	ds := decide(f, map[string]bool{}, th, 0)
	return ds[0]
}

// TestDecideTiedLeaders: the decision's claim "ship X" is wrong (X not
// strictly the fastest: tied with it, or slower) in at most α of
// families, with two entries tied at the top, the others' SEs 3x apart
// and on 5 or 10 df (the draw-level and the crossover estimates), over
// 4000 families; and a clear leader is settled.
func TestDecideTiedLeaders(t *testing.T) {
	rng := rand.New(rand.NewSource(52))
	mu := []float64{0, 0.03, 0.06, 0.06, 0.02, 0.04, -0.15}
	se := []float64{0, 0.002, 0.0025, 0.0075, 0.004, 0.003, 0.006}
	df := []float64{0, 10, 5, 5, 5, 5, 10}
	const n = 4000
	wrong := 0
	for range n {
		d := decideOnce(rng, mu, se, df)
		if d.Settled {
			wrong++ // no entry is strictly the fastest: any "ship" is wrong
		}
		if d.Level != 1-0.05/6 || len(d.Rivals) != 6 {
			t.Fatalf("level %.4f over %d rivals", d.Level, len(d.Rivals))
		}
		for _, r := range d.Rivals {
			if !(float64(r.DF) >= 5) {
				t.Fatalf("rival %s on %.2f df", r.Image, float64(r.DF))
			}
		}
	}
	if got, band := float64(wrong)/n, 2.576*math.Sqrt(0.05*0.95/n); got > 0.05+band {
		t.Errorf("a wrong 'ship' in %.2f%% of %d families, want at most 5%% (+%.2f)", 100*got, n, 100*band)
	}
	mu[2] = 0.10 // a clear leader, 4% ahead
	settled := 0
	for range 500 {
		if d := decideOnce(rng, mu, se, df); d.Settled && d.Leader == "e2" {
			settled++
		}
	}
	if settled < 425 {
		t.Errorf("a leader 4%% ahead settled in %d of 500 families", settled)
	}
}

// TestLookAlpha: the looks' shares of alpha are positive, grow look by
// look, and sum to alpha over every look the bench may take; one look
// spends alpha; a look past the last spends the last's share.
func TestLookAlpha(t *testing.T) {
	for looks := 1; looks <= 6; looks++ {
		sum, prev := 0.0, 0.0
		for m := 1; m <= looks; m++ {
			a := LookAlpha(0.05, m, looks)
			if !(a > prev) {
				t.Fatalf("look %d of %d spends %g after %g", m, looks, a, prev)
			}
			sum, prev = sum+a, a
		}
		if math.Abs(sum-0.05) > 1e-12 {
			t.Fatalf("%d looks spend %g in all", looks, sum)
		}
		if LookAlpha(0.05, looks+1, looks) != LookAlpha(0.05, looks, looks) {
			t.Fatalf("a look past the last of %d", looks)
		}
	}
	if a := LookAlpha(0.05, 1, 3); math.Abs(a-0.05/9) > 1e-15 {
		t.Fatalf("the first of three looks spends %g, want α/9", a)
	}
}

// TestDecideAtALook: the decision at look m of M bounds each rival at
// 1 − LookAlpha/(k−1), and a lead the first look cannot settle at its
// small share, the last look does.
func TestDecideAtALook(t *testing.T) {
	ms := []familyMember{primaryMember("e0")}
	for i, mu := range []float64{0.02, 0.046} {
		e := Estimate{LogMean: Num(mu), SE: Num(0.006), DF: Num(5)}
		setInterval(&e, 0.95)
		ms = append(ms, familyMember{image: fmt.Sprintf("e%d", i+1), e: e})
	}
	th := withDefaults(DefaultThresholds())
	th.Looks = 3
	f := newFamily(map[string][]familyMember{"host": ms}, th)
	first := decide(f, map[string]bool{}, th, 1)[0]
	last := decide(f, map[string]bool{}, th, 3)[0]
	if first.Look != 1 || first.Looks != 3 || math.Abs(first.Level-(1-0.05/9/2)) > 1e-12 || math.Abs(last.Level-(1-0.05*5/9/2)) > 1e-12 {
		t.Fatalf("first %+v, last %+v", first, last)
	}
	if first.Settled || !last.Settled || first.Leader != "e2" {
		t.Fatalf("a 2.6%% lead on 5 df: settled at the first look %v, at the last %v", first.Settled, last.Settled)
	}
}
