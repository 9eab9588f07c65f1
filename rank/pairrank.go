package rank

import (
	"fmt"
	"sort"
)

// pairStandings ranks the images of each runtime that has image pairs,
// from the ranking family (family.go): entries are listed by their score
// against the primary reference; each gets the rank interval the
// family's separations allow (rankBounds), and every pair of entries is
// recorded in Standings.Pairs. Versus holds each entry's comparison with
// each reference that has a pair: the family's pair, so the verdict
// there is the one the ranks are read from.
func pairStandings(pa *pairAnalysis, refs []string, th Thresholds) []Standings {
	var out []Standings
	f := pa.family
	for _, rt := range pa.runtimes {
		ms := f.members[rt]
		if len(ms) == 0 {
			continue
		}
		var prim string
		nb := 0
		bench := map[string]int{}
		for _, r := range pa.results {
			if r.Family == FamilyPrimary && r.Runtime == rt {
				prim = r.Base
				bench[r.Image] = r.Benchmarks
				nb = max(nb, r.Benchmarks)
			}
		}
		bench[prim] = nb
		cols := []string{prim}
		for _, m := range ms {
			if !m.prim && contains(refs, m.image) {
				cols = append(cols, m.image)
			}
		}
		sort.Strings(cols[1:])
		sepAt := map[[2]int]bool{}
		st := Standings{Runtime: rt, Primary: prim, Method: MethodPairs, Entries: []Entry{}, Pairs: []Separation{}}
		for _, p := range f.pairs {
			if p.runtime != rt {
				continue
			}
			sep := f.separated(p)
			sepAt[[2]int{p.hi, p.lo}] = sep
			st.Pairs = append(st.Pairs, Separation{Higher: ms[p.hi].image, Lower: ms[p.lo].image,
				Ratio: p.d.Ratio, Lo: p.d.Lo, Hi: p.d.Hi, P: p.d.P, PAdj: Num(p.pAdj), Derived: p.derived, Separated: sep})
		}
		lo, hi := rankBounds(len(ms), func(i, j int) bool { return sepAt[[2]int{i, j}] })
		for i, m := range ms {
			en := Entry{Image: m.image, Runtime: rt, Reference: m.prim || contains(refs, m.image), Rank: lo[i], RankHi: hi[i],
				Score: m.e.Ratio, Lo: m.e.Lo, Hi: m.e.Hi, SepP: nan, Versus: []Score{}}
			if !m.prim {
				if fp, flipped, ok := f.pair(rt, m.image, prim); ok {
					d := fp.d
					if flipped {
						d = flip(d)
					}
					en.Lo, en.Hi = d.Lo, d.Hi
				}
			}
			for _, col := range cols {
				s := Score{Reference: col, Benches: bench[m.image], P: nan, PAdj: nan}
				if col == m.image {
					s.Score, s.Lo, s.Hi, s.Verdict = 1, 1, 1, Self
					en.Versus = append(en.Versus, s)
					continue
				}
				fp, flipped, ok := f.pair(rt, m.image, col)
				if !ok {
					continue
				}
				d := fp.d
				if flipped {
					d = flip(d)
				}
				s.Score, s.Lo, s.Hi, s.P, s.PAdj, s.Derived = d.Ratio, d.Lo, d.Hi, d.P, Num(fp.pAdj), fp.derived
				s.Verdict = f.verdict(fp, d)
				en.Versus = append(en.Versus, s)
			}
			if i > 0 {
				if fp, _, ok := f.pair(rt, ms[i-1].image, m.image); ok {
					en.SepP = Num(fp.pAdj)
				}
			}
			st.Entries = append(st.Entries, en)
		}
		out = append(out, st)
	}
	return out
}

// disagreements warns where a standalone verdict and a co-scheduled one
// on the same benchmark point in opposite directions.
func disagreements(pa *pairAnalysis, cs []Comparison) []Warning {
	var w []Warning
	for _, c := range cs {
		if !Decided(c.Verdict) {
			continue
		}
		b := Bench{Test: c.Test, Pipeline: c.Pipeline}
		for _, r := range pa.results {
			if r.Kind != KindImage || r.Runtime != c.Runtime || r.Image != c.Image || r.Base != c.Reference ||
				r.Test != b.Test || r.Pipeline != b.Pipeline || !Decided(r.Verdict) || r.Verdict == c.Verdict {
				continue
			}
			w = append(w, Warning{Kind: WarnDisagree, Subject: fmt.Sprintf("%s/%s/%s", c.Image, c.Runtime, b), Message: fmt.Sprintf("standalone trials say %s (%.3f) but the co-scheduled pairs say %s (%.3f): the standalone figure is the noisier one and does not decide the ranking",
				c.Verdict, c.Ratio, r.Verdict, float64(r.Ratio))})
		}
	}
	return w
}
