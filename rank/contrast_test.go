package rank

import (
	"math/rand/v2"
	"testing"
)

// A contrast recovers the known ratio of two images measured only against
// the primary reference, per benchmark and on the score, and two images
// of the same speed are a tie about as often as the interval's level says.
func TestContrastsKnownRatio(t *testing.T) {
	d := design{tests: []string{"SET", "GET"}, pipeline: 16, replicates: 8, windows: 3}
	truth := map[string]float64{"stock": 1, "plain": 1.08, "pgo": 1.20, "twin": 1.08}
	th := DefaultThresholds()
	th.Contrasts = []Contrast{{Image: "pgo", Versus: "plain", Label: "PGO"}, {Image: "twin", Versus: "plain"}, {Image: "pgo", Versus: "absent"}}
	const seeds = 40
	falsePos, twinRows := 0, 0
	covered, faster, pgoRows := 0, 0, 0
	want := 1.20 / 1.08
	for seed := uint64(1); seed <= seeds; seed++ {
		reps := campaign(rand.New(rand.NewPCG(seed, 2)), measuredNoise(), d, truth, []string{"plain", "pgo", "twin"})
		rk := Rank(nil, reps, th)
		var pgo, twin int
		for _, c := range rk.Contrasts {
			if c.Family != FamilyContrast || c.Runtime != "host" {
				t.Errorf("seed %d: contrast row %+v", seed, c.PairKey)
			}
			switch c.Image {
			case "pgo":
				pgo++
				pgoRows++
				if c.Base != "plain" {
					t.Errorf("seed %d: pgo contrasted with %q", seed, c.Base)
				}
				if float64(c.Lo) <= want && want <= float64(c.Hi) {
					covered++
				}
				if c.Verdict == Faster {
					faster++
				}
			case "twin":
				twin++
				twinRows++
				if c.Verdict != Tie {
					falsePos++
				}
				if (c.Verdict == Tie) != (float64(c.Lo) <= 1 && float64(c.Hi) >= 1) {
					t.Errorf("seed %d: twin %q verdict %s does not follow its interval [%.4f, %.4f]", seed, c.Test, c.Verdict, float64(c.Lo), float64(c.Hi))
				}
			}
		}
		// Two benchmarks and the score each; nothing for an image not measured.
		if pgo != 3 || twin != 3 || len(rk.Contrasts) != 6 {
			t.Fatalf("seed %d: %d pgo rows, %d twin rows, %d in all; want 3, 3, 6", seed, pgo, twin, len(rk.Contrasts))
		}
	}
	// The interval covers the true ratio about as often as its level says,
	// and an 11% difference is found nearly always.
	if rate := float64(covered) / float64(pgoRows); rate < 0.85 {
		t.Errorf("the interval covered the true %.4f in %d of %d rows (%.0f%%)", want, covered, pgoRows, 100*rate)
	}
	if rate := float64(faster) / float64(pgoRows); rate < 0.9 {
		t.Errorf("pgo found faster in %d of %d rows", faster, pgoRows)
	}
	t.Logf("true ratio covered in %d of %d rows, found faster in %d", covered, pgoRows, faster)
	// Uncorrected 95% intervals: about 5% of equal pairs are called
	// different; 15% of 120 rows would be far beyond that.
	if rate := float64(falsePos) / float64(twinRows); rate > 0.15 {
		t.Errorf("equal images called different in %d of %d rows (%.0f%%)", falsePos, twinRows, 100*rate)
	} else {
		t.Logf("equal images called different in %d of %d rows (%.1f%%)", falsePos, twinRows, 100*rate)
	}
}
