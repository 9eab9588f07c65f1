// Package rank turns benchmark trials into a ranking that survives a
// skeptical reader: medians with distribution-free intervals, ratios to the
// references with Hodges–Lehmann/Moses intervals, Mann–Whitney tests
// corrected for multiple comparisons with Holm's method, and an overall
// score per image with a bootstrap interval. When the data cannot separate
// two images the verdict is "tie" and they share a rank.
//
// The method is pure: trials in, statistics out (Record, in stage.go,
// is the one wrapper that writes). It is shaped like
// benchstat's benchmath: Sample, Summary, warnings returned as data and
// thresholds in a struct started from DefaultThresholds.
package rank

import (
	"fmt"
	"math"
	"slices"
	"sort"
)

// Rank ranks the co-scheduled replicates and the standalone trials. The
// standings of a runtime with image pairs come from the pairs; a runtime
// with standalone trials only is ranked from them, with a warning. See
// the package documentation and README for the method; every threshold
// left zero takes its default.
func Rank(trials []Trial, reps []Replicate, th Thresholds) Ranking {
	th = withDefaults(th)
	d := group(trials, th)
	r := Ranking{
		Thresholds: th,
		References: nonNil(d.refs),
		Images:     nonNil(d.images),
		Runtimes:   nonNil(d.runtimes),
		Benches:    d.benches,
		Trials:     d.total,
		Excluded:   len(d.excluded),
		CPUModels:  d.cpus,
		Warnings:   []Warning{},
	}
	if r.Benches == nil {
		r.Benches = []Bench{}
	}
	r.Cells = d.summaries()
	r.Warnings = append(r.Warnings, d.warnings(r.Cells)...)
	r.Comparisons = d.comparisons()
	boot := d.bootstrap()
	r.Standings = d.standings(boot)
	r.Axes = d.axisEffects(boot)
	r.Warnings = append(r.Warnings, d.powerWarnings(r.Comparisons)...)
	r.Method, r.Trustworthy, r.Replicates = MethodStandalone, true, len(reps)
	for _, rep := range reps {
		if len(rep.Windows) > 0 {
			r.Measured++
		}
		if rep.CPUModel != "" && !slices.Contains(r.CPUModels, rep.CPUModel) {
			r.CPUModels = append(r.CPUModels, rep.CPUModel)
			slices.Sort(r.CPUModels)
		}
		if rep.Replaces != nil {
			r.StandIns++
		}
		if rep.Added {
			r.Added++
		}
	}
	r.Answer = Answer{Given: len(r.Standings) > 0}
	if !r.Answer.Given {
		r.Answer.Why = []string{"nothing was ranked"}
	}
	r.Pairs, r.Controls = []PairResult{}, []Control{}
	r.Resolution = Resolution{Median: nan, Max: nan}
	r.SplitHalfMaxZ = nan
	pa := analysePairs(reps, th)
	if len(pa.results) == 0 {
		if len(r.Standings) > 0 {
			r.Warnings = append(r.Warnings, Warning{Kind: WarnStandaloneOnly, Subject: "", Message: "no co-scheduled pairs: the ranking rests on standalone trials, whose run-to-run spread on a shared machine is 10-30%"})
		}
		return r
	}
	r.Method = MethodPairs
	r.Pairs, r.Controls, r.Resolution = pa.results, nonNilControls(pa.controls), pa.resolution
	r.Layouts = pa.layouts
	r.Contrasts = contrasts(&pa, th.Contrasts, th.Confidence)
	r.Warnings = collapseStandalone(r.Warnings)
	r.Warnings = append(r.Warnings, pa.warnings...)
	r.Warnings = append(r.Warnings, disagreements(&pa, r.Comparisons)...)
	for _, c := range pa.controls {
		if c.Significant {
			r.Trustworthy = false
		}
	}
	maxZ := math.NaN()
	for _, p := range pa.results {
		if p.Test == "" && (p.Family == FamilyPrimary || p.Family == FamilyControl) && !p.SplitZ.IsNaN() {
			if z := math.Abs(float64(p.SplitZ)); math.IsNaN(maxZ) || z > maxZ {
				maxZ = z
			}
		}
	}
	r.SplitHalfMaxZ = Num(maxZ)
	failed := 0
	for _, rep := range reps {
		if rep.Failed != "" {
			failed++
		}
	}
	if failed > 0 {
		r.Warnings = append(r.Warnings, Warning{Kind: WarnPairFailures, Subject: "", Message: fmt.Sprintf("%d replicate(s) were given up (their servers would not start); their images are ranked on the replicates that finished", failed)})
	}
	r.Warnings = append(r.Warnings, biasWarnings(reps)...)
	refs := d.refs
	for _, rep := range reps {
		if rep.ImageReference && !contains(refs, rep.Image) {
			refs = append(refs, rep.Image)
		}
		if !contains(refs, rep.Base) {
			refs = append(refs, rep.Base)
		}
	}
	tuned := map[string]bool{}
	for _, im := range imagesOf(reps) {
		if !contains(refs, im) {
			tuned[im] = true
		}
	}
	look := 0
	for _, rep := range reps {
		look = max(look, rep.Look)
	}
	r.Decisions = decide(pa.family, tuned, th, look)
	r.Answer = answer(&r, &pa, reps, th)
	// Runtimes ranked by pairs replace their standalone standings.
	ps := pairStandings(&pa, refs, th)
	byRT := map[string]Standings{}
	for _, s := range ps {
		byRT[s.Runtime] = s
	}
	var merged []Standings
	seen := map[string]bool{}
	for _, s := range r.Standings {
		seen[s.Runtime] = true
		if p, ok := byRT[s.Runtime]; ok {
			merged = append(merged, p)
		} else if len(s.Entries) > 1 {
			// a runtime measured standalone only (the primary
			// reference alone, for the axes) has nothing to rank
			merged = append(merged, s)
		}
	}
	for _, s := range ps {
		if !seen[s.Runtime] {
			merged = append(merged, s)
			r.Runtimes = append(r.Runtimes, s.Runtime)
		}
	}
	sort.Strings(r.Runtimes)
	sort.SliceStable(merged, func(i, j int) bool { return merged[i].Runtime < merged[j].Runtime })
	r.Standings = merged
	for _, im := range append(append([]string{}, refs...), imagesOf(reps)...) {
		if !contains(r.Images, im) {
			r.Images = append(r.Images, im)
		}
	}
	for _, ref := range refs {
		if !contains(r.References, ref) {
			r.References = append(r.References, ref)
		}
	}
	return r
}

// collapseStandalone replaces the per-cell warnings about standalone
// trials (few trials, high spread, underpowered) with one line per kind:
// with pairs deciding the ranking they qualify only the absolute figures.
func collapseStandalone(ws []Warning) []Warning {
	count := map[string]int{}
	var out []Warning
	for _, w := range ws {
		switch w.Kind {
		case WarnFewTrials, WarnHighSpread, WarnUnderpowered:
			count[w.Kind]++
		default:
			out = append(out, w)
		}
	}
	msg := map[string]string{
		WarnFewTrials:    "%d standalone cell(s) have fewer trials than an interval of their median needs: their absolute figures are single measurements",
		WarnHighSpread:   "%d standalone cell(s) vary by more than the CV threshold: their absolute figures are noisy",
		WarnUnderpowered: "%d group(s) of standalone comparisons cannot reach significance with so few trials: none can come out faster or slower whatever the data, and those without an interval are not tested (the ranking comes from the pairs)",
	}
	for _, k := range []string{WarnFewTrials, WarnHighSpread, WarnUnderpowered} {
		if count[k] > 0 {
			out = append(out, Warning{Kind: k, Subject: "standalone", Message: fmt.Sprintf(msg[k], count[k])})
		}
	}
	return out
}

func nonNilControls(c []Control) []Control {
	if c == nil {
		return []Control{}
	}
	return c
}

func imagesOf(reps []Replicate) []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range reps {
		if !seen[r.Image] {
			seen[r.Image] = true
			out = append(out, r.Image)
		}
	}
	sort.Strings(out)
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func contains(s []string, x string) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}
