package rank

import (
	"math"
	"sort"
)

// The ranking family. Every verdict of a co-scheduled ranking about two
// entries of one runtime, and every rank, comes from one family: all
// pairs of the runtime's entries (the images, the references paired with
// the primary reference, and the primary reference itself), in every
// runtime, Holm-corrected together at th.Alpha. An entry against the
// primary reference is its own co-scheduled comparison; any other pair is
// the difference of the two entries' comparisons (derive). Holm is a
// closed-testing procedure, so the family-wise error over all of these
// decisions at once is at most α, and the ranks read from them (a rank
// interval per entry, rankBounds) hold jointly at that level.

// familyMember is one entry of a runtime in the family.
type familyMember struct {
	image string
	prim  bool // the primary reference: log 0, no error
	e     Estimate
}

// familyPair is one pair of a runtime's members, hi listed above lo.
type familyPair struct {
	runtime string
	hi, lo  int // indexes into the runtime's members
	d       Estimate
	derived bool
	pAdj    float64
}

// family is the decided family of a run.
type family struct {
	members map[string][]familyMember // by runtime, best first
	pairs   []familyPair
	alpha   float64
}

// primaryMember is the primary reference's member: a ratio of exactly 1.
func primaryMember(name string) familyMember {
	return familyMember{image: name, prim: true,
		e: Estimate{Ratio: 1, Lo: 1, Hi: 1, LogMean: 0, SE: 0, DF: Num(math.Inf(1)), P: nan, SignRankP: nan, Confidence: 1}}
}

// newFamily orders each runtime's members best first (by log ratio,
// then name), forms every pair, and Holm-corrects them all together. A
// pair without a p-value (no error estimate) is never separated.
func newFamily(members map[string][]familyMember, th Thresholds) *family {
	f := &family{members: map[string][]familyMember{}, alpha: th.Alpha}
	var rts []string
	for rt := range members {
		rts = append(rts, rt)
	}
	sort.Strings(rts)
	var ps []float64
	for _, rt := range rts {
		ms := append([]familyMember(nil), members[rt]...)
		sort.SliceStable(ms, func(i, j int) bool {
			a, b := ms[i].e.LogMean, ms[j].e.LogMean
			if a.IsNaN() != b.IsNaN() {
				return !a.IsNaN()
			}
			if a != b {
				return a > b
			}
			return ms[i].image < ms[j].image
		})
		f.members[rt] = ms
		for i := range ms {
			for j := i + 1; j < len(ms); j++ {
				p := familyPair{runtime: rt, hi: i, lo: j}
				switch {
				case ms[j].prim:
					p.d = ms[i].e
				case ms[i].prim:
					p.d = flip(ms[j].e)
				default:
					p.d = derive(ms[i].e, ms[j].e, th.Confidence)
					p.derived = true
				}
				setInterval(&p.d, th.Confidence)
				f.pairs = append(f.pairs, p)
				ps = append(ps, float64(p.d.P))
			}
		}
	}
	adj := Holm(ps)
	for i := range f.pairs {
		p := &f.pairs[i]
		p.pAdj = adj[i]
		// The interval at the level that matches the Holm decision
		// (1 − α·p/p_adj): it excludes 1 exactly when p_adj < α.
		raw := float64(p.d.P)
		conf := 1 - th.Alpha/float64(max(len(f.pairs), 1))
		if !math.IsNaN(p.pAdj) && p.pAdj > 0 && raw > 0 {
			conf = 1 - th.Alpha*raw/p.pAdj
		}
		setInterval(&p.d, conf)
		p.d.P = Num(raw)
	}
	return f
}

// size is the number of decisions in the family.
func (f *family) size() int { return len(f.pairs) }

// separated says whether pair p is separated.
func (f *family) separated(p familyPair) bool {
	return !math.IsNaN(p.pAdj) && p.pAdj < f.alpha
}

// verdict is pair p's verdict, d its estimate read from the side it is
// asked about: faster or slower when the family separates it, not tested
// without an interval, else a tie.
func (f *family) verdict(p familyPair, d Estimate) string {
	switch {
	case f.separated(p) && d.LogMean > 0:
		return Faster
	case f.separated(p):
		return Slower
	case d.Lo.IsNaN():
		return NotTested
	}
	return Tie
}

// pair finds the pair of a and b under rt (ok false when there is none);
// flipped says a is listed below b.
func (f *family) pair(rt, a, b string) (p familyPair, flipped, ok bool) {
	ms := f.members[rt]
	for _, q := range f.pairs {
		if q.runtime != rt {
			continue
		}
		h, l := ms[q.hi].image, ms[q.lo].image
		if h == a && l == b {
			return q, false, true
		}
		if h == b && l == a {
			return q, true, true
		}
	}
	return familyPair{}, false, false
}

// rankBounds returns the rank interval of each of n entries listed best
// first, where sep(i, j) (i < j) says the family separates entry i above
// entry j: an entry's best rank is 1 + the entries separated above it,
// its worst n − the entries separated below it.
func rankBounds(n int, sep func(i, j int) bool) (lo, hi []int) {
	lo, hi = make([]int, n), make([]int, n)
	for i := range n {
		lo[i], hi[i] = 1, n
	}
	for i := range n {
		for j := i + 1; j < n; j++ {
			if sep(i, j) {
				lo[j]++
				hi[i]--
			}
		}
	}
	return lo, hi
}
