package bench

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"sort"
	"testing"
	"time"

	"github.com/redis-variants/redis-variants/rank"
	"github.com/redis-variants/redis-variants/results"
)

// cancelMeter cancels the bench when a replicate of a later round (look
// ≥ 2) is about to start for the after-th time, before it measures.
type cancelMeter struct {
	*simMeter
	cancel context.CancelFunc
	after  int
	seen   int
}

func (c *cancelMeter) open(ctx context.Context, rep *rank.Replicate) (pairRun, error) {
	if rep.Look >= 2 {
		c.seen++
		if c.seen == c.after {
			c.cancel()
			return nil, ctx.Err()
		}
	}
	return c.simMeter.open(ctx, rep)
}

// looksCampaign benches es through the real Bencher on the simulated
// meter under the quick profile of the default file (a sequential design:
// 6 replicates a pair, then rounds of 6 to the pairs still deciding, 3
// looks), in the run folder dir; cancelAfter > 0 interrupts it at that
// later-round replicate and resumes it.
func looksCampaign(t *testing.T, dir string, es []simEntry, seed uint64, cancelAfter int) (Summary, []rank.Replicate, *rank.Ranking) {
	t.Helper()
	prof := simProfile(t)
	if prof.Looks != 3 || prof.Replicates != 6 {
		t.Fatalf("the default file's quick profile: %d replicates, %d looks; this test reads 6 and 3", prof.Replicates, prof.Looks)
	}
	run, rt := simRunFolder(t, dir, prof)
	entries := map[string]simEntry{}
	for _, e := range es {
		entries[e.name] = e
	}
	nz := measuredSim()
	r := rand.New(rand.NewPCG(seed, 7))
	m := &simMeter{nz: nz, entries: entries, build: newSimBuild(r, nz, es), run: newSimRun(r, nz, es, seed),
		clock: &simClock{t: time.Date(2026, 12, 8, 0, 0, 0, 0, time.UTC)}}
	bench := func(ctx context.Context, meter pairMeter) (Summary, error) {
		return simBencher(t, run, rt, prof, int64(seed), m.clock, meter).Bench(ctx, simImages(es))
	}
	if cancelAfter > 0 {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		if _, err := bench(ctx, &cancelMeter{simMeter: m, cancel: cancel, after: cancelAfter}); !errors.Is(err, context.Canceled) {
			t.Fatalf("interrupted bench: %v, want context.Canceled", err)
		}
	}
	sum, err := bench(context.Background(), m)
	if err != nil {
		t.Fatal(err)
	}
	reps, skipped, err := results.LoadReplicates(run)
	if err != nil || len(skipped) > 0 {
		t.Fatalf("reading the run: %v %v", err, skipped)
	}
	th := rank.DefaultThresholds()
	th.Looks = prof.Looks
	rk := rank.Rank(nil, reps, th)
	return sum, reps, &rk
}

func looksEntries(top ...float64) []simEntry {
	es := simEntries()
	for i := range es {
		switch es[i].name {
		case "twin-a":
			es[i].truth = top[0]
		case "twin-b":
			es[i].truth = top[1]
		case "big":
			es[i].truth = top[2]
		}
	}
	return es
}

// TestLooksSettleEarly: a leader 15% ahead of every other entry is
// settled at the first look; nothing is measured after it, every
// replicate belongs to look 1, and the decision spends the first look's
// share of alpha (α/9 of three looks).
func TestLooksSettleEarly(t *testing.T) {
	sum, reps, rk := looksCampaign(t, t.TempDir(), looksEntries(1.05, 1.05, 1.25), 1, 0)
	q := sum.Sequential
	if q == nil || len(q.Taken) != 1 || q.Stopped != StopSettled || q.Added != 0 || q.Looks != 3 {
		t.Fatalf("sequential: %+v", q)
	}
	for _, r := range reps {
		if r.Look != 1 || r.Added {
			t.Fatalf("%s #%d: look %d, added %v", r.PairKey, r.Rep, r.Look, r.Added)
		}
	}
	d, ok := rk.Decision("host")
	if !ok || !d.Settled || d.Leader != "big" || d.Look != 1 || d.Looks != 3 || math.Abs(d.LookAlpha-0.05/9) > 1e-12 {
		t.Fatalf("decision: %+v", d)
	}
	if want := 1 - 0.05/9/float64(len(d.Rivals)); math.Abs(d.Level-want) > 1e-12 {
		t.Fatalf("level %.6f, want %.6f", d.Level, want)
	}
	if !rk.Answer.Given {
		t.Fatalf("no answer: %v", rk.Answer.Why)
	}
}

// TestLooksGiveRoundsToTheOpenComparisons: with two identical leaders
// (the decision can never separate them) the bench takes every look; the
// later rounds measure only the leaders' pairs and the A/A control, 6
// replicates a round, each round on the next 6 of a spec's layout draws
// with each draw's sides balanced across the rounds; the other pairs
// keep their first 6. Interrupted in the second round and resumed, it
// runs exactly the replicates an uninterrupted bench runs.
func TestLooksGiveRoundsToTheOpenComparisons(t *testing.T) {
	es := looksEntries(1.10, 1.10, 0.95)
	sum, reps, rk := looksCampaign(t, t.TempDir(), es, 2, 0)
	q := sum.Sequential
	if q == nil || len(q.Taken) != 3 || q.Stopped != StopLastLook {
		t.Fatalf("sequential: %+v", q)
	}
	d, _ := rk.Decision("host")
	if d.Settled || d.Look != 3 || math.Abs(d.LookAlpha-0.05*5/9) > 1e-12 {
		t.Fatalf("decision: %+v", d)
	}
	open := map[string]bool{"twin-a": true, "twin-b": true, "stock": true} // stock: the A/A control
	byImage := map[string][]rank.Replicate{}
	for _, r := range reps {
		if r.Replaces == nil { // a stand-in for a first-round replicate that lost a test
			byImage[r.Image] = append(byImage[r.Image], r)
		}
	}
	for im, rs := range byImage {
		want := 6
		if open[im] {
			want = 18
		}
		if len(rs) != want {
			t.Errorf("%s: %d replicates, want %d", im, len(rs), want)
		}
		looks := map[int]int{}
		draws := map[int][2]int{} // per draw: unswapped, swapped
		for _, r := range rs {
			looks[r.Look]++
			c := draws[r.Draw]
			if r.Swapped {
				c[1]++
			} else {
				c[0]++
			}
			draws[r.Draw] = c
			if r.Added != (r.Look > 1) {
				t.Errorf("%s #%d: look %d, added %v", im, r.Rep, r.Look, r.Added)
			}
		}
		if looks[1] != 6 || open[im] && (looks[2] != 6 || looks[3] != 6) {
			t.Errorf("%s: replicates by look %v", im, looks)
		}
		if open[im] && im != "stock" {
			for dr, c := range draws {
				if dr < 1 || dr > simDraws || c[0]+c[1] != 18/simDraws || c[0] < c[1]-1 || c[1] < c[0]-1 {
					t.Errorf("%s: draw %d sides %v (unswapped, swapped)", im, dr, c)
				}
			}
		}
	}

	dir := t.TempDir()
	_, resumed, _ := looksCampaign(t, dir, es, 2, 3)
	key := func(rs []rank.Replicate) []string {
		var out []string
		for _, r := range rs {
			out = append(out, PairRel(r.PairKey, r.Rep)+map[bool]string{true: " B", false: " A"}[r.Swapped]+string(rune('0'+r.Look)))
		}
		sort.Strings(out)
		return out
	}
	a, b := key(reps), key(resumed)
	if len(a) != len(b) {
		t.Fatalf("resumed: %d replicates, uninterrupted %d", len(b), len(a))
	}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("resumed replicate %s, uninterrupted %s", b[i], a[i])
		}
	}
	if _, err := os.Stat(dir); err != nil {
		t.Fatal(err)
	}
}
