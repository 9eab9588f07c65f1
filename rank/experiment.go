package rank

import (
	"fmt"

	"github.com/redis-variants/redis-variants/results"
	"github.com/redis-variants/redis-variants/variants"
)

// ClaimResult is this run's answer to one published claim (results.ClaimResult).
type ClaimResult = results.ClaimResult

// AnswerClaims finds each claim of the ranking's experiment in the
// ranking: the comparison it names, its interval, what that covers, and
// whether the published direction holds. Nothing is measured again: a
// claim is answered by a comparison the ranking already made, at that
// comparison's coverage, or said to be missing.
func AnswerClaims(rk *Ranking) []ClaimResult {
	e := rk.Thresholds.Experiment
	if e == nil {
		return nil
	}
	out := make([]ClaimResult, 0, len(e.Claims))
	for _, cl := range e.Claims {
		r := ClaimResult{Claim: cl, Ratio: nan, Lo: nan, Hi: nan}
		switch {
		case cl.Measure != variants.MeasureThroughput:
			latencyClaim(rk, &r)
		case cl.Runtimes:
			runtimeClaim(rk, &r)
		default:
			imageClaim(rk, &r)
		}
		if r.Found && cl.Ratio > 0 {
			r.Direction = direction(cl.Ratio, float64(r.Lo), float64(r.Hi))
			r.Within = float64(r.Lo) <= cl.Ratio && cl.Ratio <= float64(r.Hi)
		}
		out = append(out, r)
	}
	return out
}

// direction compares a published ratio with an interval of this run's.
func direction(published, lo, hi float64) string {
	switch {
	case lo <= 1 && hi >= 1 || published == 1:
		return results.DirectionTie
	case (published > 1) == (lo > 1):
		return results.DirectionHolds
	}
	return results.DirectionOpposite
}

func primaryImage(rk *Ranking) string {
	if rk.Thresholds.Primary != "" {
		return rk.Thresholds.Primary
	}
	if len(rk.References) > 0 {
		return rk.References[0]
	}
	return ""
}

func benchWords(test string, pipeline int) string {
	if test == "" {
		return "over all benchmarks"
	}
	return "on " + Bench{Test: test, Pipeline: pipeline}.String()
}

// set fills r from a ratio and its interval, inverted when the ranking
// holds B over A.
func set(r *ClaimResult, ratio, lo, hi Num, conf float64, invert bool, covers string) {
	if invert {
		ratio, lo, hi = 1/ratio, 1/hi, 1/lo
	}
	r.Found, r.Ratio, r.Lo, r.Hi, r.Confidence, r.Covers = true, ratio, lo, hi, conf, covers
}

// matchBench says whether a row's benchmark is the claim's: the score
// over all benchmarks (test "") or one benchmark, any pipeline unless
// the claim names one.
func matchBench(cl variants.Claim, test string, pipeline int) bool {
	if cl.Test == "" || test == "" {
		return cl.Test == test
	}
	return cl.Test == test && (cl.Pipeline == 0 || cl.Pipeline == pipeline)
}

// runtimeClaim: two runtimes, one image. Co-scheduled axis pairs answer
// first (the server's own CPU per operation, both servers on one CPU),
// then the standalone axis effects (end-to-end ops/s).
func runtimeClaim(rk *Ranking, r *ClaimResult) {
	img := r.Image
	if img == "" {
		img = primaryImage(rk)
	}
	r.Image = img
	for _, p := range rk.Pairs {
		if p.Kind != KindAxis || p.Image != img || !matchBench(r.Claim, p.Test, p.Pipeline) {
			continue
		}
		fwd := p.Runtime == r.A && p.BaseRuntime == r.B
		if fwd || p.Runtime == r.B && p.BaseRuntime == r.A {
			set(r, p.Ratio, p.Lo, p.Hi, p.Confidence, !fwd, fmt.Sprintf("co-scheduled on one CPU, the server's own CPU per operation %s; %d replicates of one binary in this run", benchWords(p.Test, p.Pipeline), p.Replicates))
			return
		}
	}
	// both against the same base runtime (axis pairs are against the
	// first): A over B derived from the two, as independent estimates
	var ra, rb *PairResult
	for i := range rk.Pairs {
		p := &rk.Pairs[i]
		if p.Kind != KindAxis || p.Image != img || !matchBench(r.Claim, p.Test, p.Pipeline) {
			continue
		}
		if p.Runtime == r.A {
			ra = p
		}
		if p.Runtime == r.B {
			rb = p
		}
	}
	if ra != nil && rb != nil && ra.BaseRuntime == rb.BaseRuntime {
		conf := rk.Thresholds.Confidence
		d := derive(ra.Estimate, rb.Estimate, conf)
		set(r, d.Ratio, d.Lo, d.Hi, conf, false, fmt.Sprintf("derived from two co-scheduled axes against `%s` (the server's own CPU per operation %s); %d and %d replicates of one binary in this run", ra.BaseRuntime, benchWords(ra.Test, ra.Pipeline), ra.Replicates, rb.Replicates))
		return
	}
	for _, a := range rk.Axes {
		if a.Image != img || !matchBench(r.Claim, a.Test, a.Pipeline) {
			continue
		}
		fwd := a.Other == r.A && a.Base == r.B
		if fwd || a.Other == r.B && a.Base == r.A {
			n := 0
			for _, c := range rk.Cells {
				if c.Image == img && c.Runtime == r.A && (r.Test == "" || matchBench(r.Claim, c.Test, c.Pipeline)) {
					n = max(n, c.N)
				}
			}
			set(r, Num(a.Ratio), Num(a.Lo), Num(a.Hi), a.Confidence, !fwd, fmt.Sprintf("standalone trials (one server alone), end-to-end ops/s %s; %s of one binary in this run", benchWords(a.Test, a.Pipeline), trialsWords(n)))
			return
		}
	}
	r.Why = fmt.Sprintf("the ranking has no comparison of `%s` under `%s` and `%s` %s: both runtimes must have run it (co-scheduled with axis_replicates, or standalone trials under an axis)", img, r.A, r.B, benchWords(r.Test, r.Pipeline))
}

// imageClaim: two images, one runtime. The co-scheduled pairs answer
// (direct, then derived through the primary reference), then the
// standalone comparisons.
func imageClaim(rk *Ranking, r *ClaimResult) {
	rt := r.Runtime
	if rt == "" && len(rk.Standings) > 0 {
		rt = rk.Standings[0].Runtime
	}
	r.Runtime = rt
	covers := func(how string, reps int) string {
		what := "one binary each"
		for _, l := range rk.Layouts {
			if l.Runtime == rt && (l.Image == r.A || l.Image == r.B) {
				what = "a build spec's layout draws"
			}
		}
		return fmt.Sprintf("%s %s; %d replicates, %s, in this run", how, benchWords(r.Test, r.Pipeline), reps, what)
	}
	for _, rows := range []struct {
		rows []PairResult
		how  string
	}{{rk.Pairs, "co-scheduled against each other on one CPU, server CPU per operation"},
		{rk.Contrasts, "derived through the primary reference both were co-scheduled with, server CPU per operation"}} {
		for _, p := range rows.rows {
			if p.Kind == KindControl || p.Kind == KindAxis || p.Runtime != rt || p.BaseRuntime != rt || !matchBench(r.Claim, p.Test, p.Pipeline) {
				continue
			}
			fwd := p.Image == r.A && p.Base == r.B
			if fwd || p.Image == r.B && p.Base == r.A {
				set(r, p.Ratio, p.Lo, p.Hi, p.Confidence, !fwd, covers(rows.how, p.Replicates))
				return
			}
		}
	}
	if r.Test == "" {
		for _, st := range rk.Standings {
			if st.Runtime != rt {
				continue
			}
			for _, s := range st.Pairs {
				fwd := s.Higher == r.A && s.Lower == r.B
				if fwd || s.Higher == r.B && s.Lower == r.A {
					set(r, s.Ratio, s.Lo, s.Hi, rk.Thresholds.Confidence, !fwd, covers("derived through the primary reference (score ratio)", rk.Measured))
					return
				}
			}
		}
	}
	for _, c := range rk.Comparisons {
		if c.Runtime != rt || !matchBench(r.Claim, c.Test, c.Pipeline) {
			continue
		}
		fwd := c.Image == r.A && c.Reference == r.B
		if fwd || c.Image == r.B && c.Reference == r.A {
			set(r, Num(c.Ratio), Num(c.Lo), Num(c.Hi), c.Confidence, !fwd, fmt.Sprintf("standalone trials, end-to-end ops/s %s; %d and %d trials of one binary each in this run", benchWords(c.Test, c.Pipeline), c.N, c.M))
			return
		}
	}
	r.Why = fmt.Sprintf("the ranking has no comparison of `%s` with `%s` under `%s` %s", r.A, r.B, rt, benchWords(r.Test, r.Pipeline))
}

// latencyClaim: a percentile of the fixed-rate measure, two runtimes.
func latencyClaim(rk *Ranking, r *ClaimResult) {
	img := r.Image
	if img == "" {
		img = primaryImage(rk)
	}
	r.Image = img
	lr := rk.Latency
	if lr == nil {
		r.Why = "the run has no fixed-rate latency measure (a profile's latency: section)"
		return
	}
	n := 0
	for _, c := range lr.Cells {
		if c.Image == img && (c.Runtime == r.A || c.Runtime == r.B) {
			if n == 0 || c.N < n {
				n = c.N
			}
		}
	}
	for _, c := range lr.Comparisons {
		if c.Image != img || c.Q != r.Measure {
			continue
		}
		fwd := c.Runtime == r.A && c.Base == r.B
		if fwd || c.Runtime == r.B && c.Base == r.A {
			set(r, c.Ratio, c.Lo, c.Hi, lr.FamilyLvl, !fwd, fmt.Sprintf("%s latency at %.0f %s req/s (open loop, from each request's intended send time); at least %d trials a runtime of one binary in this run", r.Measure, lr.Plan.Rate, lr.Plan.Test, n))
			return
		}
	}
	base := ""
	if len(lr.Comparisons) > 0 {
		base = lr.Comparisons[0].Base
	}
	r.Why = fmt.Sprintf("the latency measure compares each runtime with the first (`%s`), and has no %s of `%s` against `%s` for `%s`", base, r.Measure, r.A, r.B, img)
}

func trialsWords(n int) string {
	if n == 0 {
		return "trials"
	}
	return fmt.Sprintf("up to %d trials a cell", n)
}
