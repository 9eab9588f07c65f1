package rank

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/redis-variants/redis-variants/results"
)

// Answer is whether a ranking answers its question (results.Answer).
type Answer = results.Answer

// MinControlReplicates is the fewest replicates, with every benchmark
// measured, the A/A control needs before its spread can be judged.
const MinControlReplicates = 4

// MaxLostShare is the largest share of the planned replicates that may
// end short (not complete, and no complete stand-in replaced it) before
// the run gives no answer.
const MaxLostShare = 0.10

// WarnBiasRisk: a pair lost measurements more often than the A/A control
// did; losses that depend on the image can bias its estimate.
const WarnBiasRisk = "bias-risk"

// losses counts, per pair, the benchmark measurements its replicates
// planned and lost (a benchmark lost from a replicate, or every
// benchmark a given-up replicate did not finish; stand-ins and the
// extension's replicates count as measurements planned too), and the
// planned replicates (neither stand-ins nor added by the extension) that
// neither came out complete nor have a complete stand-in (short).
type losses struct {
	planned, lost int
	reps, short   int // planned replicates (not stand-ins), and those short
}

func countLosses(reps []Replicate) (map[PairKey]losses, int) {
	seen := map[Bench]bool{}
	var benches []Bench
	add := func(b Bench) {
		if !seen[b] {
			seen[b] = true
			benches = append(benches, b)
		}
	}
	for _, r := range reps {
		for _, w := range r.Windows {
			add(w.Bench())
		}
		for _, l := range r.Lost {
			add(l.Bench())
		}
	}
	nb := len(benches)
	out := map[PairKey]losses{}
	complete := map[PairKey]int{}
	for _, r := range reps {
		l := out[r.PairKey]
		l.planned += nb
		if r.Failed != "" {
			have := map[Bench]bool{}
			for _, w := range r.Windows {
				have[w.Bench()] = true
			}
			l.lost += nb - len(have)
		} else {
			l.lost += len(r.Lost)
		}
		if r.Replaces == nil && !r.Added {
			l.reps++
		}
		// an added replicate was never planned: complete, it makes up
		// for no planned one
		if r.Complete(benches) && !r.Added {
			complete[r.PairKey]++
		}
		out[r.PairKey] = l
	}
	for k, l := range out {
		l.short = max(0, l.reps-complete[k])
		out[k] = l
	}
	return out, nb
}

// biasWarnings names the image pairs that lost measurements at a higher
// rate than their runtime's A/A control.
func biasWarnings(reps []Replicate) []Warning {
	by, _ := countLosses(reps)
	ctrl := map[string]losses{}
	for k, l := range by {
		if k.Kind() == KindControl {
			ctrl[k.Runtime] = l
		}
	}
	var keys []PairKey
	for k := range by {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return pairKeyLess(keys[i], keys[j]) })
	var out []Warning
	for _, k := range keys {
		l := by[k]
		if k.Kind() != KindImage || l.lost < 2 || l.planned == 0 {
			continue
		}
		c := ctrl[k.Runtime]
		rate := float64(l.lost) / float64(l.planned)
		crate := 0.0
		if c.planned > 0 {
			crate = float64(c.lost) / float64(c.planned)
		}
		if rate > 2*crate {
			out = append(out, Warning{Kind: WarnBiasRisk, Subject: k.String(), Message: fmt.Sprintf("%s lost %d of its %d benchmark measurements, the A/A control %d of %d: losses that depend on the image can bias its estimate (bench.json lost_tests says why)",
				k.Image, l.lost, l.planned, c.lost, c.planned)})
		}
	}
	return out
}

// answer decides whether a co-scheduled ranking answers its question.
func answer(r *Ranking, pa *pairAnalysis, reps []Replicate, th Thresholds) Answer {
	var a Answer
	why := func(w, change string) {
		a.Why = append(a.Why, w)
		if change != "" {
			a.Change = append(a.Change, change)
		}
	}
	// A significant A/A control is not a reason here: at its uncorrected
	// 5% it comes out so in one run in twenty by chance, and the report
	// flags the run as not to be trusted (Trustworthy) instead.
	prim := 0
	for _, p := range pa.results {
		if p.Family == FamilyPrimary {
			prim++
		}
	}
	if prim == 0 {
		why("no image was compared with the primary reference", "benchmark at least one image besides the primary reference")
	}
	for _, c := range pa.controls {
		if c.Replicates < MinControlReplicates {
			why(fmt.Sprintf("the A/A control under %s has %d replicate(s) with every benchmark measured (need %d)", c.Runtime, c.Replicates, MinControlReplicates),
				"see why its replicates were lost (bench.json lost_tests and failed_replicates, calibration.json)")
		}
	}
	if len(pa.controls) == 0 && prim > 0 {
		why("the run has no A/A control, so its spread cannot be judged", "benchmark the primary reference against itself (the bench does when it plans the pairs)")
	}
	by, nb := countLosses(reps)
	planned, short, lost, measured := 0, 0, 0, 0
	for _, l := range by {
		planned += l.reps
		short += l.short
		lost += l.lost
		measured += l.planned
	}
	if planned > 0 && float64(short) > MaxLostShare*float64(planned) {
		why(fmt.Sprintf("%d of the %d planned replicates have no complete stand-in (%d of the %d benchmark measurements made, %d benchmarks a replicate, were lost)", short, planned, lost, measured, nb),
			"see why in bench.json (lost_tests, failed_replicates); more than 10% short leaves the estimates to the replicates that happened to work")
	}
	// The precision asked of the run is the decision's (decide), not the
	// full ranking's, whose family of every pair is wider by design. A
	// settled decision is an answer however wide its bounds (every one
	// is above 1). An unsettled one is an answer when its shortfall, the
	// most the leader may be slower than a rival it could not separate
	// (by the leader's one-sided bound against it), is within the
	// profile's resolution: "ship the leader" then costs at most that
	// against whichever entry is truly fastest, and the headline names
	// the rivals it could not separate (a rival it did separate needs
	// no precision: its bound is above 1).
	if th.Resolution > 0 && prim > 0 {
		if len(r.Decisions) == 0 {
			why(fmt.Sprintf("no entry could be compared with the others (too few replicates), so the decision's precision cannot reach the profile's ±%.2f%%", 100*th.Resolution),
				"more replicates (replicates: in the profile)")
		}
		for _, d := range r.Decisions {
			if d.Settled {
				continue
			}
			w := d.Shortfall()
			switch {
			case math.IsNaN(w):
				why(fmt.Sprintf("under %s the leader %s has no bound against %s (too few replicates), so the decision's precision cannot reach the profile's ±%.2f%%", d.Runtime, d.Leader, strings.Join(d.Tied(), ", "), 100*th.Resolution),
					"more replicates (replicates: in the profile)")
			case w > th.Resolution:
				why(fmt.Sprintf("under %s the leader %s is tied with %s and may be up to %.2f%% slower than one of them, more than the profile's stated ±%.2f%%: the data cannot say whether they differ", d.Runtime, d.Leader, strings.Join(d.Tied(), ", "), 100*w, 100*th.Resolution),
					"more layout draws a spec (layouts:; a spec's interval stands on its draws less one df), more replicates or looks, or a profile with a wider resolution")
			}
		}
	}
	a.Given = len(a.Why) == 0
	return a
}
