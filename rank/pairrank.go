package rank

import (
	"fmt"
	"math"
	"sort"
)

// pairStandings ranks the images of each runtime that has image pairs.
//
// Every image's score is its co-scheduled comparison with the primary
// reference (the primary family: Holm verdicts, simultaneous intervals).
// Comparisons with the other references and between images are derived
// through the primary reference: the difference of two independent
// estimates, whose errors add (Welch–Satterthwaite df), at th.Confidence.
// Adjacent entries are separated when that derived difference is
// significant after Holm over every adjacent pair of the ranking; the
// primary reference itself has score 1 exactly (log 0, no error), so an
// image next to it is separated by its own comparison.
func pairStandings(pa *pairAnalysis, refs []string, th Thresholds) []Standings {
	var out []Standings
	type est struct {
		image string
		ref   bool
		e     Estimate
		r     PairResult
		prim  bool // the primary reference
	}
	type pairIx struct{ si, ei int }
	var adj []pairIx
	var adjP []float64
	for _, rt := range pa.runtimes {
		var prim string
		var es []est
		refSeen := map[string]bool{}
		for _, r := range pa.results {
			if r.Family != FamilyPrimary || r.Runtime != rt {
				continue
			}
			prim = r.Base
			isRef := contains(refs, r.Image)
			es = append(es, est{image: r.Image, ref: isRef, e: r.Estimate, r: r})
			refSeen[r.Image] = true
		}
		if prim == "" {
			continue
		}
		nb := 0
		for _, e := range es {
			nb = max(nb, e.r.Benchmarks)
		}
		es = append(es, est{image: prim, ref: true, prim: true, r: PairResult{Benchmarks: nb},
			e: Estimate{Ratio: 1, Lo: 1, Hi: 1, LogMean: 0, SE: 0, DF: Num(math.Inf(1)), P: nan, SignRankP: nan, Confidence: 1}})
		// Other references that have a pair: the columns of Versus.
		cols := []string{prim}
		for _, e := range es {
			if e.ref && !e.prim {
				cols = append(cols, e.image)
			}
		}
		sort.Strings(cols[1:])
		byImage := map[string]est{}
		for _, e := range es {
			byImage[e.image] = e
		}
		sort.SliceStable(es, func(i, j int) bool {
			a, b := es[i].e.LogMean, es[j].e.LogMean
			if a.IsNaN() != b.IsNaN() {
				return !a.IsNaN()
			}
			if a != b {
				return a > b
			}
			return es[i].image < es[j].image
		})
		st := Standings{Runtime: rt, Primary: prim, Method: MethodPairs, Entries: []Entry{}}
		for i, e := range es {
			en := Entry{Image: e.image, Runtime: rt, Reference: e.ref, Score: e.e.Ratio, Lo: e.e.Lo, Hi: e.e.Hi, SepP: nan, Versus: []Score{}}
			for _, col := range cols {
				s := Score{Reference: col, Benches: e.r.Benchmarks, P: nan, PAdj: nan}
				switch {
				case col == e.image:
					s.Score, s.Lo, s.Hi, s.Verdict = 1, 1, 1, Self
				case col == prim:
					s.Score, s.Lo, s.Hi, s.P, s.PAdj, s.Verdict = e.r.Ratio, e.r.Lo, e.r.Hi, e.r.P, e.r.PAdj, e.r.Verdict
				default:
					d := derive(e.e, byImage[col].e, th.Confidence)
					s.Score, s.Lo, s.Hi, s.P, s.Verdict = d.Ratio, d.Lo, d.Hi, d.P, intervalVerdict(d)
					s.Derived = true
				}
				en.Versus = append(en.Versus, s)
			}
			if i > 0 {
				up := es[i-1]
				var p float64
				switch {
				case up.prim:
					p = float64(e.r.P)
				case e.prim:
					p = float64(up.r.P)
				default:
					p = float64(derive(up.e, e.e, th.Confidence).P)
				}
				adj = append(adj, pairIx{len(out), i})
				adjP = append(adjP, p)
			}
			st.Entries = append(st.Entries, en)
		}
		out = append(out, st)
	}
	h := Holm(adjP)
	for i, ix := range adj {
		out[ix.si].Entries[ix.ei].SepP = Num(h[i])
	}
	for si := range out {
		assignRanks(out[si].Entries, func(_, e Entry) bool {
			return !e.SepP.IsNaN() && float64(e.SepP) < th.Alpha
		})
	}
	return out
}

// disagreements warns where a standalone verdict and a co-scheduled one
// on the same benchmark point in opposite directions.
func disagreements(pa *pairAnalysis, cs []Comparison) []Warning {
	var w []Warning
	for _, c := range cs {
		if c.Verdict == Tie {
			continue
		}
		b := Bench{Test: c.Test, Pipeline: c.Pipeline}
		for _, r := range pa.results {
			if r.Kind != KindImage || r.Runtime != c.Runtime || r.Image != c.Image || r.Base != c.Reference ||
				r.Test != b.Test || r.Pipeline != b.Pipeline || r.Verdict == Tie || r.Verdict == c.Verdict {
				continue
			}
			w = append(w, Warning{Kind: WarnDisagree, Subject: fmt.Sprintf("%s/%s/%s", c.Image, c.Runtime, b), Message: fmt.Sprintf("standalone trials say %s (%.3f) but the co-scheduled pairs say %s (%.3f): the standalone figure is the noisier one and does not decide the ranking",
				c.Verdict, c.Ratio, r.Verdict, float64(r.Ratio))})
		}
	}
	return w
}
