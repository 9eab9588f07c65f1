package rank

// Scores: bootstrap geometric-mean scores over the benchmarks, the
// standings they give, and the effects of the runtime axes.

import (
	"math"
	"sort"
)

// bootstrap draws th.Bootstrap bootstrap medians of ops/s for every cell.
func (d *dataset) bootstrap() map[Cell][]float64 {
	out := make(map[Cell][]float64, len(d.cells))
	for c, cd := range d.cells {
		out[c] = bootMedians(cd.ops, d.th.Bootstrap, d.th.Seed, cellKey(c))
	}
	return out
}

// scoreOf is the geometric mean over the shared benchmarks of the ratio of
// x's median to y's under rt, with its bootstrap interval and the van
// Elteren p-value.
func (d *dataset) scoreOf(x, y, rt string, boot map[Cell][]float64, conf float64) (score, lo, hi, p float64, n int) {
	var strata []stratum
	var logs []float64
	var bx, by [][]float64
	for _, b := range d.benches {
		cx, cy := d.get(x, rt, b), d.get(y, rt, b)
		if cx == nil || cy == nil {
			continue
		}
		logs = append(logs, math.Log(quantileSorted(cx.ops, 0.5)/quantileSorted(cy.ops, 0.5)))
		strata = append(strata, stratum{cx.ops, cy.ops})
		bx = append(bx, boot[cx.Cell])
		by = append(by, boot[cy.Cell])
	}
	n = len(logs)
	if n == 0 {
		return math.NaN(), math.NaN(), math.NaN(), math.NaN(), 0
	}
	score = math.Exp(mean(logs))
	if x == y {
		return 1, 1, 1, math.NaN(), n
	}
	B := d.th.Bootstrap
	dist := make([]float64, B)
	for i := 0; i < B; i++ {
		s := 0.0
		for j := range bx {
			s += math.Log(bx[j][i] / by[j][i])
		}
		dist[i] = math.Exp(s / float64(n))
	}
	lo, hi = percentileInterval(dist, conf)
	for _, b := range d.benches {
		cx, cy := d.get(x, rt, b), d.get(y, rt, b)
		if cx != nil && cy != nil && min(len(cx.ops), len(cy.ops)) < minBootTrials {
			// a bootstrap of the median of so few trials is too narrow
			lo, hi = math.NaN(), math.NaN()
		}
	}
	return score, lo, hi, vanElteren(strata), n
}

// minBootTrials is the fewest trials per cell for which a bootstrap
// interval of a score is given (with fewer, the bootstrap distribution of
// a median is too narrow to trust).
const minBootTrials = 5

func mean(xs []float64) float64 {
	t := 0.0
	for _, x := range xs {
		t += x
	}
	return t / float64(len(xs))
}

// standings scores every image against every reference under every
// runtime and forms the rank groups.
//
// Rank rule: entries are sorted by score against the primary reference
// (highest first). An entry shares the rank of the entry just above it
// unless the two are separated, which needs both (a) their score
// intervals do not overlap and (b) the van Elteren stratified rank test
// between the two images over the benchmarks, Holm-corrected over all
// adjacent pairs in the ranking, gives p < Alpha. Ranks are competition
// ranks (1, 1, 3): an entry's rank is one plus the number of entries in
// the groups above it.
func (d *dataset) standings(boot map[Cell][]float64) []Standings {
	prim := d.primary()
	out := []Standings{}
	// Score intervals are simultaneous over every score comparison.
	m := 0
	for _, rt := range d.runtimes {
		for _, im := range d.images {
			for _, ref := range d.refs {
				if im != ref && d.shared(im, ref, rt) > 0 {
					m++
				}
			}
		}
	}
	conf := simultaneous(d.th.Confidence, m)
	for _, rt := range d.runtimes {
		st := Standings{Runtime: rt, Primary: prim, Method: MethodStandalone, Entries: []Entry{}}
		for _, im := range d.images {
			has := false
			for _, b := range d.benches {
				if d.get(im, rt, b) != nil {
					has = true
				}
			}
			if !has {
				continue
			}
			e := Entry{Image: im, Runtime: rt, Reference: contains(d.refs, im), Score: nan, Lo: nan, Hi: nan, SepP: nan, Versus: []Score{}}
			for _, ref := range d.refs {
				sc, lo, hi, p, n := d.scoreOf(im, ref, rt, boot, conf)
				s := Score{Reference: ref, Score: Num(sc), Lo: Num(lo), Hi: Num(hi), P: Num(p), PAdj: nan, Benches: n}
				if im == ref {
					s.Verdict = Self
				} else if n == 0 {
					s.Verdict = NotTested
				}
				if ref == prim {
					e.Score, e.Lo, e.Hi = Num(sc), Num(lo), Num(hi)
				}
				e.Versus = append(e.Versus, s)
			}
			st.Entries = append(st.Entries, e)
		}
		sort.SliceStable(st.Entries, func(i, j int) bool {
			a, b := float64(st.Entries[i].Score), float64(st.Entries[j].Score)
			if math.IsNaN(a) != math.IsNaN(b) {
				return !math.IsNaN(a)
			}
			return a > b
		})
		out = append(out, st)
	}
	// Verdicts of scores, Holm over every score comparison.
	type sk struct{ rt, im, ref string }
	var keys []sk
	var ps []float64
	for _, st := range out {
		for _, e := range st.Entries {
			for _, s := range e.Versus {
				if s.Verdict == "" {
					keys = append(keys, sk{st.Runtime, e.Image, s.Reference})
					ps = append(ps, float64(s.P))
				}
			}
		}
	}
	adj := Holm(ps)
	adjOf := map[sk]float64{}
	for i, k := range keys {
		adjOf[k] = adj[i]
	}
	// Separation tests between adjacent entries.
	type pair struct{ si, ei int }
	var pairs []pair
	var sepP []float64
	for si := range out {
		st := &out[si]
		for ei := range st.Entries {
			e := &st.Entries[ei]
			for vi := range e.Versus {
				s := &e.Versus[vi]
				if s.Verdict != "" {
					continue
				}
				s.PAdj = Num(adjOf[sk{st.Runtime, e.Image, s.Reference}])
				s.Verdict = verdict(float64(s.Lo), float64(s.Hi))
			}
			if ei > 0 {
				pairs = append(pairs, pair{si, ei})
				sepP = append(sepP, d.pairP(st.Entries[ei-1].Image, e.Image, st.Runtime))
			}
		}
	}
	sepAdj := Holm(sepP)
	for i, pr := range pairs {
		out[pr.si].Entries[pr.ei].SepP = Num(sepAdj[i])
	}
	for si := range out {
		assignRanks(out[si].Entries, func(up, e Entry) bool {
			overlap := !(e.Hi < up.Lo) || e.Hi.IsNaN() || up.Lo.IsNaN()
			return !overlap && !e.SepP.IsNaN() && float64(e.SepP) < d.th.Alpha
		})
	}
	return out
}

// assignRanks gives sorted entries competition ranks (1, 1, 3): an entry
// shares the rank of the one above it unless separated says the two are
// told apart.
func assignRanks(es []Entry, separated func(up, e Entry) bool) {
	for i := range es {
		if i == 0 || separated(es[i-1], es[i]) {
			es[i].Rank = i + 1
		} else {
			es[i].Rank = es[i-1].Rank
		}
	}
}

// pairP is the van Elteren p-value between images a and b under rt.
func (d *dataset) pairP(a, b, rt string) float64 {
	var strata []stratum
	for _, bn := range d.benches {
		ca, cb := d.get(a, rt, bn), d.get(b, rt, bn)
		if ca != nil && cb != nil {
			strata = append(strata, stratum{ca.ops, cb.ops})
		}
	}
	return vanElteren(strata)
}

// axisEffects computes, for each axis whose two runtimes exist, each
// image's ratio Other/Base per benchmark and over all benchmarks.
func (d *dataset) axisEffects(boot map[Cell][]float64) []AxisEffect {
	out := []AxisEffect{}
	m := 0
	for _, ax := range d.th.Axes {
		if contains(d.runtimes, ax.Base) && contains(d.runtimes, ax.Other) {
			for _, im := range d.images {
				n := 0
				for _, b := range d.benches {
					if d.get(im, ax.Other, b) != nil && d.get(im, ax.Base, b) != nil {
						n++
					}
				}
				if n > 0 {
					m += n + 1
				}
			}
		}
	}
	conf := simultaneous(d.th.Confidence, m)
	for _, ax := range d.th.Axes {
		if !contains(d.runtimes, ax.Base) || !contains(d.runtimes, ax.Other) {
			continue
		}
		for _, im := range d.images {
			var strata []stratum
			var logs []float64
			var bo, bb [][]float64
			few := false // a cell with fewer trials than a bootstrap interval needs
			for _, b := range d.benches {
				co, cb := d.get(im, ax.Other, b), d.get(im, ax.Base, b)
				if co == nil || cb == nil {
					continue
				}
				few = few || min(len(co.ops), len(cb.ops)) < minBootTrials
				ratio, lo, hi, achieved, mw := compare(co, cb, conf)
				out = append(out, AxisEffect{Axis: ax.Name, Base: ax.Base, Other: ax.Other, Image: im,
					Test: b.Test, Pipeline: b.Pipeline, Ratio: ratio, Lo: lo, Hi: hi, Confidence: achieved, P: mw.P,
					Short: achieved < conf-1e-9})
				strata = append(strata, stratum{co.ops, cb.ops})
				logs = append(logs, math.Log(ratio))
				bo = append(bo, boot[co.Cell])
				bb = append(bb, boot[cb.Cell])
			}
			if len(logs) == 0 {
				continue
			}
			dist := make([]float64, d.th.Bootstrap)
			for i := range dist {
				s := 0.0
				for j := range bo {
					s += math.Log(bo[j][i] / bb[j][i])
				}
				dist[i] = math.Exp(s / float64(len(bo)))
			}
			lo, hi := percentileInterval(dist, conf)
			if few {
				// as for the scores: the bootstrap of so few trials is
				// too narrow (one trial a cell: an interval of zero
				// width), so the effect is not tested, never a verdict
				lo, hi = math.NaN(), math.NaN()
			}
			out = append(out, AxisEffect{Axis: ax.Name, Base: ax.Base, Other: ax.Other, Image: im,
				Ratio: math.Exp(mean(logs)), Lo: lo, Hi: hi, Confidence: conf, P: vanElteren(strata), Short: few})
		}
	}
	holmVerdicts(out, func(x *AxisEffect) (float64, bool, float64, float64, *float64, *string) {
		return x.P, x.Short, x.Lo, x.Hi, &x.PAdj, &x.Verdict
	})
	return out
}

// shared is how many benchmarks x and y both have under rt.
func (d *dataset) shared(x, y, rt string) int {
	n := 0
	for _, b := range d.benches {
		if d.get(x, rt, b) != nil && d.get(y, rt, b) != nil {
			n++
		}
	}
	return n
}
