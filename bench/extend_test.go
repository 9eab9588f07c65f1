package bench

import (
	"context"
	"errors"
	"math"
	"math/rand"
	"testing"
	"time"

	"github.com/redis-variants/redis-variants/rank"
	"github.com/redis-variants/redis-variants/results"
	"github.com/redis-variants/redis-variants/variants"
)

func TestPlanRound(t *testing.T) {
	key := func(img string) rank.PairKey {
		return rank.PairKey{Image: img, Runtime: "host", Base: "a", BaseRuntime: "host"}
	}
	ctl, b, c, d := key("a"), key("b"), key("c"), key("d")
	planned := map[rank.PairKey]int{ctl: 12, b: 12, c: 12, d: 12}
	p := variants.Profile{Replicates: 12, Target: 0.01, MaxReplicates: 36}
	complete := map[rank.PairKey]int{ctl: 12, b: 12, c: 12, d: 36}
	swapped := map[rank.PairKey]int{ctl: 6, b: 7, c: 6, d: 18}
	hw := map[rank.PairKey]float64{b: 0.03, c: 0.005, d: 0.012}

	r := planRound(hw, complete, swapped, planned, "a", p, 0)
	// b: 12·(3/1)² − 12 = 96 wanted, at most as many again as it has (12);
	// c is within the target; d has max_replicates; the control gets as
	// many as b.
	if r.add[b] != 12 || r.add[ctl] != 12 || r.add[c] != 0 || r.add[d] != 0 || r.size() != 24 {
		t.Fatalf("round: %v", r.add)
	}
	if r.a[b] != 5 || r.b[b] != 7 {
		t.Fatalf("b's sides so far: %d unswapped, %d swapped", r.a[b], r.b[b])
	}
	r = planRound(hw, complete, swapped, planned, "a", p, 2)
	if r.add[b] != 2 || r.add[ctl] != 2 || r.size() != 4 {
		t.Fatalf("the least round: %v", r.add)
	}
	// Within the room left: b at 34 of 36 gets 2, not 12.
	complete[b] = 34
	if r := planRound(hw, complete, swapped, planned, "a", p, 0); r.add[b] != 2 {
		t.Fatalf("b at 34 of 36: %v", r.add)
	}
	// Nearly there: 12·(1.1/1)² − 12 = 2.52 → 4 (even).
	complete[b] = 12
	hw[b] = 0.011
	if r := planRound(hw, complete, swapped, planned, "a", p, 0); r.add[b] != 4 || r.add[ctl] != 4 {
		t.Fatalf("b at ±1.1%%: %v", r.add)
	}
	// No interval yet (NaN): two more.
	hw[b] = math.NaN()
	if r := planRound(hw, complete, swapped, planned, "a", p, 0); r.add[b] != 2 {
		t.Fatalf("b without an interval: %v", r.add)
	}
	delete(hw, b)
	if r := planRound(hw, complete, swapped, planned, "a", p, 0); r.size() != 0 || r.stop != StopCapped {
		t.Fatalf("only d wide, at its cap: %v, stop %q", r.add, r.stop)
	}
	delete(hw, d)
	if r := planRound(hw, complete, swapped, planned, "a", p, 0); r.size() != 0 || r.stop != StopReached {
		t.Fatalf("none wide: %v, stop %q", r.add, r.stop)
	}
}

// TestNewSlotsBalanceSides: added replicates go to the side the pair has
// had fewer complete replicates on.
func TestNewSlotsBalanceSides(t *testing.T) {
	s := &session{primary: "a", byName: map[string]Image{"b": {Name: "b"}}}
	k := rank.PairKey{Image: "b", Runtime: "host", Base: "a", BaseRuntime: "host"}
	next := map[rank.PairKey]int{k: 24}
	sl := s.newSlots(k, 4, 5, 7, next) // 5 unswapped, 7 swapped so far
	sw := 0
	for i, x := range sl {
		if x.rep != 24+i || !x.extension || x.imageRef {
			t.Errorf("slot %d: %+v", i, x)
		}
		if x.swapped {
			sw++
		}
	}
	if sw != 1 || next[k] != 28 {
		t.Fatalf("%d of 4 swapped (want 1: 5+3 = 7+1), next %d", sw, next[k])
	}
}

// TestPairsExtendTowardTarget runs the extension on real servers: a target
// no pair can reach adds replicates up to max_replicates, as many to the
// A/A control, numbered after the stand-ins, sides balanced; interrupted
// in the extension, the bench resumes to the same design.
func TestPairsExtendTowardTarget(t *testing.T) {
	e := newProcEngine(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	o := testOptions(t, e, twoImages())
	o.Trials = -1
	o.Profile.Replicates, o.Profile.Windows, o.Profile.AxisReplicates = 2, 1, 0
	o.Profile.Runtimes = variants.RuntimesFirst
	o.Profile.Target, o.Profile.MaxReplicates, o.Profile.Extend = 1e-6, 4, time.Minute
	// Two counts a window run (one per generator), from the end of
	// calibration: the fixed design's 4 replicates 8, then the
	// extension's: cancelled in its second replicate.
	o.Generator = &countingGen{Sessions: InProcess{}, cancel: cancel, after: 11, from: calibrated(o)}
	if _, err := Run(ctx, o); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted run returned %v, want context.Canceled", err)
	}
	if e.live() != 0 {
		t.Fatalf("%d servers left after the interrupt", e.live())
	}
	o.Generator = InProcess{}
	sum, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	x := sum.Extension
	if x == nil || x.Stopped != StopCapped || x.Added != 4 || x.Target != 1e-6 {
		t.Fatalf("extension: %+v", x)
	}
	all, _, err := results.LoadReplicates(o.Run)
	if err != nil {
		t.Fatal(err)
	}
	byKey := map[rank.PairKey][]rank.Replicate{}
	for _, r := range all {
		byKey[r.PairKey] = append(byKey[r.PairKey], r)
	}
	if len(byKey) != 2 {
		t.Fatalf("pairs %v", byKey)
	}
	for k, reps := range byKey {
		if len(reps) != 4 {
			t.Fatalf("%s: %d replicates, want 4 (2 fixed, 2 added)", k, len(reps))
		}
		sw := 0
		for _, r := range reps {
			if !r.Complete(profileBenches(o.Profile)) || r.Failed != "" {
				t.Errorf("%s #%d incomplete: %+v", k, r.Rep, r)
			}
			if r.Swapped {
				sw++
			}
			if r.Rep >= 2 && r.Rep < 4 || r.Rep > 5 {
				t.Errorf("%s: replicate numbered %d: the added ones come after the stand-ins' 2 and 3", k, r.Rep)
			}
		}
		if sw != 2 {
			t.Errorf("%s: %d of 4 swapped", k, sw)
		}
	}
	var bj Summary
	if err := o.Run.ReadJSON("bench.json", &bj); err != nil || bj.Extension == nil || len(bj.Extension.Pairs) != 2 {
		t.Fatalf("bench.json extension: %+v %v", bj.Extension, err)
	}
	for _, p := range bj.Extension.Pairs {
		if p.Replicates != 4 || p.Added != 2 {
			t.Errorf("recorded %+v", p)
		}
	}

	// No time to extend: nothing is added, and the reason says so.
	o2 := testOptions(t, e, twoImages())
	o2.Trials = -1
	o2.Profile = o.Profile
	o2.Profile.Extend = time.Millisecond
	sum2, err := Run(context.Background(), o2)
	if err != nil {
		t.Fatal(err)
	}
	if x := sum2.Extension; x == nil || x.Stopped != StopTime || x.Added != 0 || sum2.Replicates != 4 {
		t.Fatalf("no time: %+v, %d replicates", x, sum2.Replicates)
	}
}

// TestBalancedSides: a pair's sides are swapped in exactly half of its
// replicates and, where its image is several layout draws, in half of
// each draw's (an odd draw's extra replicate alternating), whatever the
// seed.
func TestBalancedSides(t *testing.T) {
	for seed := int64(0); seed < 50; seed++ {
		rng := rand.New(rand.NewSource(seed))
		for _, c := range []struct{ n, L int }{{12, 6}, {12, 4}, {12, 1}, {10, 4}, {16, 6}, {8, 8}} {
			sw := balancedSides(c.n, c.L, rng)
			total := 0
			per := map[int][2]int{}
			for r, s := range sw {
				p := per[r%c.L]
				if s {
					total++
					p[1]++
				} else {
					p[0]++
				}
				per[r%c.L] = p
			}
			if total != c.n/2 {
				t.Fatalf("n %d L %d seed %d: %d swapped, want %d", c.n, c.L, seed, total, c.n/2)
			}
			for d, p := range per {
				if p[0]-p[1] > 1 || p[1]-p[0] > 1 {
					t.Fatalf("n %d L %d seed %d: draw %d has %d unswapped and %d swapped", c.n, c.L, seed, d, p[0], p[1])
				}
			}
		}
	}
}
