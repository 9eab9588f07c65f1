package rank

import "github.com/redis-variants/redis-variants/results"

// Contrasts are uncorrected, like the other derived comparisons.
const (
	KindContrast   = "contrast"
	FamilyContrast = "contrast"
)

// Contrast names two images compared directly (results.Contrast).
type Contrast = results.Contrast

// contrasts compares each contrast's two images on every benchmark and
// on their score, under every runtime both were paired with the same
// primary reference: the difference of the two co-scheduled estimates
// (independent replicates, Welch's degrees of freedom), an uncorrected
// interval at the run's confidence, like the other derived comparisons.
func contrasts(pa *pairAnalysis, cs []Contrast, conf float64) []PairResult {
	type key struct {
		image, rt, test string
		pipeline        int
	}
	by := map[key]PairResult{}
	for _, r := range pa.results {
		if r.Kind == KindImage {
			by[key{r.Image, r.Runtime, r.Test, r.Pipeline}] = r
		}
	}
	var out []PairResult
	for _, rt := range pa.runtimes {
		for _, c := range cs {
			for _, a := range pa.results {
				if a.Kind != KindImage || a.Runtime != rt || a.Image != c.Image {
					continue
				}
				b, ok := by[key{c.Versus, rt, a.Test, a.Pipeline}]
				if !ok || b.Base != a.Base || b.BaseRuntime != a.BaseRuntime {
					continue
				}
				d := derive(a.Estimate, b.Estimate, conf)
				out = append(out, PairResult{
					PairKey: PairKey{Image: c.Image, Runtime: rt, Base: c.Versus, BaseRuntime: rt},
					Kind:    KindContrast, Test: a.Test, Pipeline: a.Pipeline, Family: FamilyContrast,
					Benchmarks: a.Benchmarks, Estimate: d, PAdj: nan, SplitZ: nan, Verdict: intervalVerdict(d),
				})
			}
		}
	}
	return out
}
