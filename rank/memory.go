package rank

import (
	"fmt"
	"math"
	"sort"

	"github.com/redis-variants/redis-variants/results"
)

type (
	MemoryRanking = results.MemoryRanking
	MemoryEntry   = results.MemoryEntry
	MemoryTrial   = results.MemoryTrial
	Stat          = results.Stat
)

// Memory verdicts.
const (
	Less = results.MemoryLess
	More = results.MemoryMore
)

// Memory ranks the memory workload's trials: per image the mean of each
// figure over its servers with a 95% t interval, and the RSS after the
// churn against the primary reference's as a Welch interval on the log
// scale, Bonferroni-adjusted over the images (the A/A control included),
// so an interval that excludes 1 is a verdict. Images are listed by mean
// RSS; their ranks are rank intervals (rankBounds) from one family: the
// Welch test on log RSS of every pair of ranked images, Holm over all
// of them at α. A comparison whose two sides have no spread at all has
// no error estimate: it is "no spread measured", never a verdict, and
// such a pair is never separated. It returns nil without trials.
func Memory(trials []MemoryTrial, primary string) *MemoryRanking {
	const alpha = 0.05 // DefaultThresholds().Alpha: the memory ranking has no thresholds of its own
	return memoryRanking(trials, primary, alpha)
}

func memoryRanking(trials []MemoryTrial, primary string, alpha float64) *MemoryRanking {
	if len(trials) == 0 {
		return nil
	}
	by := map[string][]MemoryTrial{}
	var names []string
	for _, t := range trials {
		n := t.Name()
		if _, ok := by[n]; !ok {
			names = append(names, n)
		}
		by[n] = append(by[n], t)
	}
	sort.Strings(names)
	mr := &MemoryRanking{Primary: primary}
	var datasets []float64
	logRSS := map[string][]float64{}
	entries := map[string]*MemoryEntry{}
	var cvs []float64
	for _, n := range names {
		e := memoryEntry(by[n], logRSS, n, &datasets)
		entries[n] = e
		if e.N >= 2 && !e.RSS.Mean.IsNaN() {
			cvs = append(cvs, (float64(e.RSS.Hi)-float64(e.RSS.Mean))/float64(e.RSS.Mean))
		}
	}
	mr.Dataset = stat(datasets)
	if len(cvs) > 0 {
		mr.Spread = results.Num(NewSample(cvs).Median())
	}
	k := len(names) - 1 // comparisons with the primary reference
	if k < 1 {
		k = 1
	}
	mr.Confidence = 1 - alpha/float64(k)
	base := logRSS[primary]
	for _, n := range names {
		e := entries[n]
		if n == primary {
			e.Ratio, e.Lo, e.Hi, e.Verdict = 1, 1, 1, Self
			continue
		}
		e.Ratio, e.Lo, e.Hi, e.Verdict = results.Num(math.NaN()), results.Num(math.NaN()), results.Num(math.NaN()), NotTested
		if d, lo, hi, ok := welchLog(logRSS[n], base, mr.Confidence); ok {
			e.Ratio, e.Lo, e.Hi = results.Num(math.Exp(d)), results.Num(math.Exp(lo)), results.Num(math.Exp(hi))
			e.Verdict = Tie
			switch {
			case math.IsNaN(lo):
				e.Verdict = results.MemoryNoSpread
			case hi < 0:
				e.Verdict = Less
			case lo > 0:
				e.Verdict = More
			}
		}
	}
	if _, ok := by[primary]; !ok {
		mr.Notes = append(mr.Notes, fmt.Sprintf("the primary reference %s has no memory figures: no ratio can be computed", primary))
	}
	var ranked []*MemoryEntry
	for _, n := range names {
		e := entries[n]
		if by[n][0].Control {
			mr.Control = e
			continue
		}
		ranked = append(ranked, e)
	}
	sort.SliceStable(ranked, func(i, j int) bool {
		a, b := float64(ranked[i].RSS.Mean), float64(ranked[j].RSS.Mean)
		if math.IsNaN(a) != math.IsNaN(b) {
			return !math.IsNaN(a)
		}
		return a < b
	})
	// Every pair: Welch on log RSS, Holm over them all.
	type pair struct{ i, j int }
	var pairs []pair
	var ps []float64
	for i := range ranked {
		for j := i + 1; j < len(ranked); j++ {
			pairs = append(pairs, pair{i, j})
			ps = append(ps, welchP(logRSS[ranked[i].Image], logRSS[ranked[j].Image]))
		}
	}
	adj := Holm(ps)
	sep := map[pair]bool{}
	for k, p := range pairs {
		sep[p] = !math.IsNaN(adj[k]) && adj[k] < alpha
	}
	lo, hi := rankBounds(len(ranked), func(i, j int) bool { return sep[pair{i, j}] })
	for i, e := range ranked {
		e.Rank, e.RankHi = lo[i], hi[i]
		mr.Entries = append(mr.Entries, *e)
	}
	return mr
}

// memoryEntry summarises one image's (or the A/A control's) servers.
func memoryEntry(ts []MemoryTrial, logRSS map[string][]float64, name string, datasets *[]float64) *MemoryEntry {
	e := &MemoryEntry{Image: name, Reference: ts[0].Reference}
	var rss, used, frag, afrag, peak, fill, rssD, rec, cpu []float64
	for _, t := range ts {
		if t.OOM {
			e.OOM++
		}
		ch, ok := t.Churned()
		if !ok {
			e.Failed++
			continue
		}
		if e.Allocator == "" {
			e.Allocator = t.Allocator
		}
		e.N++
		*datasets = append(*datasets, float64(t.Result.Dataset))
		rss = append(rss, float64(ch.UsedMemoryRSS))
		logRSS[name] = append(logRSS[name], math.Log(float64(ch.UsedMemoryRSS)))
		used = append(used, float64(ch.UsedMemory))
		frag = append(frag, ch.FragRatio)
		if ch.AllocatorFragRatio > 0 {
			afrag = append(afrag, ch.AllocatorFragRatio)
		}
		if t.PeakBytes > 0 {
			peak = append(peak, float64(t.PeakBytes))
		}
		if p, ok := t.Result.Phase("fill"); ok {
			fill = append(fill, p.OpsPerSec)
		}
		if d, ok := t.Result.Phase("defrag"); ok && t.Result.Defrag {
			e.Defrag = true
			rssD = append(rssD, float64(d.After.UsedMemoryRSS))
			rec = append(rec, 1-float64(d.After.UsedMemoryRSS)/float64(ch.UsedMemoryRSS))
			cpu = append(cpu, t.Result.DefragCPU.Seconds())
		}
	}
	e.RSS, e.Used, e.Frag, e.AllocatorFrag, e.Peak, e.FillOps = stat(rss), stat(used), stat(frag), stat(afrag), stat(peak), stat(fill)
	e.RSSDefrag, e.DefragRecovered, e.DefragCPU = stat(rssD), stat(rec), stat(cpu)
	return e
}

// stat is the mean of xs with its 95% t interval (no interval for one
// value; NaN for none).
func stat(xs []float64) Stat {
	nan := results.Num(math.NaN())
	s := Stat{Mean: nan, Lo: nan, Hi: nan, N: len(xs)}
	if len(xs) == 0 {
		return s
	}
	m, sd := meanSD(xs)
	s.Mean = results.Num(m)
	if len(xs) >= 2 {
		h := studentQuantile(0.975, float64(len(xs)-1)) * sd / math.Sqrt(float64(len(xs)))
		s.Lo, s.Hi = results.Num(m-h), results.Num(m+h)
	}
	return s
}

func meanSD(xs []float64) (mean, sd float64) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	if len(xs) < 2 {
		return mean, math.NaN()
	}
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(ss / float64(len(xs)-1))
}

// welchLog is the difference of means of a and b (logs) with its Welch
// interval at confidence; ok is false with fewer than two values a side.
// Two sides without any spread (identical figures) have no error
// estimate: the difference with a NaN interval.
func welchLog(a, b []float64, confidence float64) (d, lo, hi float64, ok bool) {
	if len(a) < 2 || len(b) < 2 {
		return 0, 0, 0, false
	}
	ma, sa := meanSD(a)
	mb, sb := meanSD(b)
	d = ma - mb
	va, vb := sa*sa/float64(len(a)), sb*sb/float64(len(b))
	se := math.Sqrt(va + vb)
	if se == 0 {
		return d, math.NaN(), math.NaN(), true
	}
	df := (va + vb) * (va + vb) / (va*va/float64(len(a)-1) + vb*vb/float64(len(b)-1))
	h := studentQuantile(1-(1-confidence)/2, df) * se
	return d, d - h, d + h, true
}

// welchP is the two-sided p-value of Welch's test that a and b have the
// same mean (NaN when it cannot be computed: fewer than two values a
// side, or no spread on either).
func welchP(a, b []float64) float64 {
	if len(a) < 2 || len(b) < 2 {
		return math.NaN()
	}
	ma, sa := meanSD(a)
	mb, sb := meanSD(b)
	va, vb := sa*sa/float64(len(a)), sb*sb/float64(len(b))
	se := math.Sqrt(va + vb)
	if se == 0 {
		return math.NaN()
	}
	df := (va + vb) * (va + vb) / (va*va/float64(len(a)-1) + vb*vb/float64(len(b)-1))
	return studentP((ma-mb)/se, df)
}
