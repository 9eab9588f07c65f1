package rank

import (
	"math"
	"sort"

	"github.com/redis-variants/redis-variants/results"
)

type (
	Decision     = results.Decision     // which entry to ship, per runtime
	DecisionPair = results.DecisionPair // the leader against one other entry
)

// decide answers the quick profile's question from the family's members
// (each runtime's entries with their estimates against the primary
// reference, the primary reference itself at 1): the leader is the entry
// with the best estimate; it is compared with every other entry by the
// difference of their estimates (derive; an entry's own co-scheduled
// estimate against the primary reference), one-sided, each at 1 − α/(k−1)
// for k entries. This is Hsu's multiple comparisons with the best with
// Bonferroni's bound in place of Dunnett's: whichever entry is truly the
// fastest (μ*), the event that every other entry's estimate less μ*'s
// stays below its bound has probability at least 1 − α, and on that event
// no entry that is not the fastest can have every lower bound above 1.
// The leader is chosen after the fact, and that is covered: the claim
// "ship X" is wrong in at most α of runs, X tied with the fastest
// included. It needs k − 1 one-sided comparisons where the ranking's
// family holds all k(k−1)/2 two-sided ones, so its bounds are much
// closer (on 5 df: t 3.53 against 5.67 for 7 entries).
//
// A sequential bench (th.Looks > 1) looks at the decision after each
// round and stops at the first that settles it; look m of M spends
// LookAlpha(α, m, M) in place of α. Whatever the rounds give to whom,
// the chance that some look's bounds miss is at most the sum of what the
// looks spent, α (Bonferroni over the looks), so "ship X" stays wrong in
// at most α of campaigns however early or late it stops.
func decide(f *family, images map[string]bool, th Thresholds, look int) []Decision {
	look = max(look, 1)
	looks := max(th.Looks, look, 1)
	alpha := LookAlpha(th.Alpha, look, looks)
	var out []Decision
	var rts []string
	for rt := range f.members {
		rts = append(rts, rt)
	}
	sort.Strings(rts)
	for _, rt := range rts {
		ms := f.members[rt] // best first
		if len(ms) < 2 || ms[0].e.LogMean.IsNaN() {
			continue
		}
		lead := ms[0]
		k := len(ms)
		d := Decision{Runtime: rt, Leader: lead.image, Alpha: th.Alpha, Look: look, Looks: looks, LookAlpha: alpha, Level: 1 - alpha/float64(k-1), Settled: true}
		var hws []float64
		for _, m := range ms[1:] {
			var e Estimate
			switch {
			case m.prim:
				e = lead.e
			case lead.prim:
				e = flip(m.e)
			default:
				e = derive(lead.e, m.e, th.Confidence)
			}
			p := DecisionPair{Image: m.image, Reference: !images[m.image], Ratio: Num(math.Exp(float64(e.LogMean))), Lo: nan, HalfWidth: nan, DF: e.DF}
			se, df := float64(e.SE), float64(e.DF)
			if se > 0 && df > 0 && !e.LogMean.IsNaN() {
				t := studentQuantile(d.Level, df)
				p.Lo = Num(math.Exp(float64(e.LogMean) - t*se))
				p.HalfWidth = Num(math.Exp(t*se) - 1)
				p.Separated = p.Lo > 1
				hws = append(hws, float64(p.HalfWidth))
			}
			if !p.Separated {
				d.Settled = false
			}
			d.Rivals = append(d.Rivals, p)
		}
		sort.Float64s(hws)
		d.Median = nan
		if len(hws) > 0 {
			d.Median = Num(quantileSorted(hws, 0.5))
		}
		out = append(out, d)
	}
	return out
}

// LookAlpha is the share of alpha that look m of M spends: the power
// family α·t² of Kim and DeMets at t = m/M, less what the looks before
// it spent. Early looks spend little (α/9, 3α/9, 5α/9 for three), so a
// decision that needs every look loses little to the early ones, and a
// wide lead still settles at the first. One look spends α.
func LookAlpha(alpha float64, m, looks int) float64 {
	if looks <= 1 {
		return alpha
	}
	m = min(max(m, 1), looks)
	t0, t1 := float64(m-1)/float64(looks), float64(m)/float64(looks)
	return alpha * (t1*t1 - t0*t0)
}
