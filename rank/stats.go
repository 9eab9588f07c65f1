package rank

import (
	"math"
	"math/rand/v2"
	"sort"

	"github.com/redis-variants/redis-variants/results"
)

// Sample is a set of observations of one quantity, sorted ascending.
type Sample struct {
	Values []float64
}

// NewSample copies xs, drops NaN and ±Inf, and sorts the rest.
func NewSample(xs []float64) Sample {
	v := make([]float64, 0, len(xs))
	for _, x := range xs {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			v = append(v, x)
		}
	}
	sort.Float64s(v)
	return Sample{Values: v}
}

// Summary is a center with a distribution-free confidence interval (results.Summary).
type Summary = results.Summary

// Median returns the sample median (NaN for an empty sample).
func (s Sample) Median() float64 { return quantileSorted(s.Values, 0.5) }

// Mean returns the arithmetic mean.
func (s Sample) Mean() float64 {
	if len(s.Values) == 0 {
		return math.NaN()
	}
	t := 0.0
	for _, x := range s.Values {
		t += x
	}
	return t / float64(len(s.Values))
}

// CV returns the coefficient of variation (sample standard deviation over
// the mean); 0 for fewer than two values.
func (s Sample) CV() float64 {
	n := len(s.Values)
	if n < 2 {
		return 0
	}
	m := s.Mean()
	if m == 0 {
		return 0
	}
	ss := 0.0
	for _, x := range s.Values {
		ss += (x - m) * (x - m)
	}
	return math.Sqrt(ss/float64(n-1)) / math.Abs(m)
}

// Summary returns the median with the distribution-free order-statistic
// confidence interval of the median, as benchstat does: the narrowest
// interval [x(k), x(n+1-k)] whose binomial coverage is at least confidence.
// When n is too small for that coverage the interval is [min, max] and
// Confidence says what it actually covers (1 - 2·0.5ⁿ).
func (s Sample) Summary(confidence float64) Summary {
	n := len(s.Values)
	if n == 0 {
		return Summary{} // N == 0: no data
	}
	sum := Summary{Center: s.Median(), N: n}
	lo, hi, conf := medianCI(n, confidence)
	sum.Lo, sum.Hi, sum.Confidence = s.Values[lo], s.Values[hi], conf
	return sum
}

// medianCI returns 0-based indexes of the order statistics bounding the
// median's interval and the coverage they achieve.
func medianCI(n int, confidence float64) (lo, hi int, conf float64) {
	if n == 1 {
		return 0, 0, 0
	}
	// Coverage of [x(k), x(n+1-k)] (1-based) is 1 - 2·P(B ≤ k-1), B ~ Binom(n, ½).
	best := 1
	cdf := 0.0 // P(B ≤ k-1)
	for k := 1; k <= n/2; k++ {
		cdf += binomPMF(n, k-1)
		if 1-2*cdf >= confidence {
			best = k
		} else {
			break
		}
	}
	cdf = 0
	for i := 0; i < best; i++ {
		cdf += binomPMF(n, i)
	}
	return best - 1, n - best, 1 - 2*cdf
}

func binomPMF(n, k int) float64 {
	lg := lchoose(n, k) - float64(n)*math.Ln2
	return math.Exp(lg)
}

func lchoose(n, k int) float64 {
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return a - b - c
}

// quantileSorted is the type-7 (linear interpolation) quantile of sorted xs.
func quantileSorted(xs []float64, q float64) float64 {
	n := len(xs)
	if n == 0 {
		return math.NaN()
	}
	if n == 1 {
		return xs[0]
	}
	h := q * float64(n-1)
	i := int(math.Floor(h))
	if i >= n-1 {
		return xs[n-1]
	}
	return xs[i] + (h-float64(i))*(xs[i+1]-xs[i])
}

// MannWhitney is the result of a two-sided Wilcoxon–Mann–Whitney rank-sum
// test of x against y.
type MannWhitney struct {
	U     float64 `json:"u"`     // rank sum of x minus n(n+1)/2 (R's W)
	P     float64 `json:"p"`     // two-sided p-value
	Exact bool    `json:"exact"` // exact distribution (no ties, small samples) rather than normal approximation
}

// ExactLimit is the largest sample size for which MannWhitneyU uses the
// exact null distribution (as R's wilcox.test, which uses it below 50).
const ExactLimit = 49

// MannWhitneyU runs the two-sided test the way R's wilcox.test(x, y) does:
// exact p-value when both samples have at most ExactLimit values and there
// are no ties; otherwise the normal approximation with tie correction and
// continuity correction.
func MannWhitneyU(x, y []float64) MannWhitney {
	n, m := len(x), len(y)
	if n == 0 || m == 0 {
		return MannWhitney{P: 1, U: math.NaN()}
	}
	ranks, ties := midranks(x, y)
	w := 0.0
	for i := 0; i < n; i++ {
		w += ranks[i]
	}
	u := w - float64(n*(n+1))/2
	if n <= ExactLimit && m <= ExactLimit && len(ties) == 0 {
		dist := uDist(n, m)
		k := int(math.Round(u))
		total := 0.0
		for _, c := range dist {
			total += c
		}
		le, ge := 0.0, 0.0
		for i, c := range dist {
			if i <= k {
				le += c
			}
			if i >= k {
				ge += c
			}
		}
		p := 2 * math.Min(le, ge) / total
		return MannWhitney{U: u, P: math.Min(1, p), Exact: true}
	}
	z := u - float64(n*m)/2
	N := float64(n + m)
	tc := 0.0
	for _, t := range ties {
		tc += float64(t*t*t - t)
	}
	sigma := math.Sqrt(float64(n*m) / 12 * ((N + 1) - tc/(N*(N-1))))
	if sigma == 0 {
		return MannWhitney{U: u, P: 1}
	}
	corr := 0.0
	if z > 0 {
		corr = 0.5
	} else if z < 0 {
		corr = -0.5
	}
	z = (z - corr) / sigma
	p := 2 * math.Min(normCDF(z), 1-normCDF(z))
	return MannWhitney{U: u, P: math.Min(1, p)}
}

// MinP is the smallest two-sided p-value an exact rank-sum test can give
// with samples of n and m values: 2 / C(n+m, n).
func MinP(n, m int) float64 {
	if n == 0 || m == 0 {
		return 1
	}
	return math.Min(1, 2*math.Exp(-lchoose(n+m, n)))
}

// midranks ranks the pooled x then y (1-based, ties get the mean rank) and
// returns the ranks in that order plus the sizes of tie groups.
func midranks(x, y []float64) ([]float64, []int) {
	type obs struct {
		v float64
		i int
	}
	all := make([]obs, 0, len(x)+len(y))
	for i, v := range x {
		all = append(all, obs{v, i})
	}
	for i, v := range y {
		all = append(all, obs{v, len(x) + i})
	}
	sort.Slice(all, func(a, b int) bool { return all[a].v < all[b].v })
	ranks := make([]float64, len(all))
	var ties []int
	for i := 0; i < len(all); {
		j := i
		for j+1 < len(all) && all[j+1].v == all[i].v {
			j++
		}
		r := float64(i+j)/2 + 1
		for k := i; k <= j; k++ {
			ranks[all[k].i] = r
		}
		if j > i {
			ties = append(ties, j-i+1)
		}
		i = j + 1
	}
	return ranks, ties
}

// uDist returns the counts of each value 0..n·m of the Mann–Whitney U
// statistic under the null hypothesis: the coefficients of the Gaussian
// binomial coefficient [n+m choose n]_q = Π_{i=1..n} (1-q^{m+i})/(1-q^i).
func uDist(n, m int) []float64 {
	size := n*m + 1
	c := make([]float64, size)
	c[0] = 1
	for i := 1; i <= n; i++ {
		// multiply by (1 - q^{m+i})
		s := m + i
		for k := size - 1; k >= s; k-- {
			c[k] -= c[k-s]
		}
		// divide by (1 - q^i): running sum with stride i
		for k := i; k < size; k++ {
			c[k] += c[k-i]
		}
	}
	return c
}

// uCritical returns the largest k ≥ 1 such that P(U ≤ k-1) ≤ alpha/2 under
// the null for sizes n, m (exact for small samples, normal approximation
// otherwise), and the coverage 1 - 2·P(U ≤ k-1) of the interval built from
// the k-th smallest and k-th largest pairwise differences. When even k = 1
// does not reach the level it returns 1 and the coverage k = 1 gives.
func uCritical(n, m int, alpha float64) (int, float64) {
	if n <= ExactLimit && m <= ExactLimit {
		dist := uDist(n, m)
		total := 0.0
		for _, c := range dist {
			total += c
		}
		k, cdf := 1, 0.0
		best := dist[0] / total
		for kk := 1; kk <= len(dist); kk++ {
			cdf += dist[kk-1] / total // P(U ≤ kk-1)
			if cdf <= alpha/2 {
				k, best = kk, cdf
			} else {
				break
			}
		}
		return k, 1 - 2*best
	}
	mn := float64(n * m)
	sd := math.Sqrt(mn * float64(n+m+1) / 12)
	z := normQuantile(1 - alpha/2)
	k := int(math.Floor(mn/2 - z*sd))
	if k < 1 {
		k = 1
	}
	// coverage from the normal approximation
	p := normCDF((float64(k-1) + 0.5 - mn/2) / sd)
	return k, 1 - 2*p
}

// ShiftInterval is the Hodges–Lehmann estimate of the shift of x over y
// (the median of all pairwise differences x_i - y_j) with the distribution-
// free Moses confidence interval built from the rank-sum distribution.
type ShiftInterval struct {
	Estimate, Lo, Hi, Confidence float64
}

// HodgesLehmann returns the shift interval of x over y at the requested
// confidence.
func HodgesLehmann(x, y []float64, confidence float64) ShiftInterval {
	n, m := len(x), len(y)
	if n == 0 || m == 0 {
		return ShiftInterval{math.NaN(), math.NaN(), math.NaN(), 0}
	}
	d := make([]float64, 0, n*m)
	for _, a := range x {
		for _, b := range y {
			d = append(d, a-b)
		}
	}
	sort.Float64s(d)
	k, conf := uCritical(n, m, 1-confidence)
	if k > len(d) {
		k = len(d)
	}
	return ShiftInterval{
		Estimate:   quantileSorted(d, 0.5),
		Lo:         d[k-1],
		Hi:         d[len(d)-k],
		Confidence: conf,
	}
}

// Holm adjusts p-values for multiple comparisons with the Holm–Bonferroni
// step-down method (as R's p.adjust(p, "holm")). NaN entries are left out
// of the family and stay NaN.
func Holm(p []float64) []float64 {
	idx := make([]int, 0, len(p))
	for i, v := range p {
		if !math.IsNaN(v) {
			idx = append(idx, i)
		}
	}
	sort.SliceStable(idx, func(a, b int) bool { return p[idx[a]] < p[idx[b]] })
	out := make([]float64, len(p))
	for i := range out {
		out[i] = math.NaN()
	}
	m := len(idx)
	run := 0.0
	for r, i := range idx {
		v := math.Min(1, float64(m-r)*p[i])
		if v < run {
			v = run
		}
		run = v
		out[i] = v
	}
	return out
}

// stratum is one block of a stratified rank test: x and y measured under
// the same condition.
type stratum struct{ x, y []float64 }

// vanElteren is the two-sided van Elteren stratified rank-sum test: the
// rank sums of x in each stratum, weighted by 1/(N_s+1), compared with
// their null mean through the normal approximation (with tie correction).
// With a single stratum it is the exact Mann–Whitney test.
func vanElteren(strata []stratum) float64 {
	var live []stratum
	for _, s := range strata {
		if len(s.x) > 0 && len(s.y) > 0 {
			live = append(live, s)
		}
	}
	if len(live) == 0 {
		return math.NaN()
	}
	if len(live) == 1 {
		return MannWhitneyU(live[0].x, live[0].y).P
	}
	t, e, v := 0.0, 0.0, 0.0
	for _, s := range live {
		n, m := float64(len(s.x)), float64(len(s.y))
		N := n + m
		w := 1 / (N + 1)
		ranks, ties := midranks(s.x, s.y)
		rs := 0.0
		for i := range s.x {
			rs += ranks[i]
		}
		tc := 0.0
		for _, k := range ties {
			tc += float64(k*k*k - k)
		}
		t += w * rs
		e += w * n * (N + 1) / 2
		v += w * w * n * m / 12 * ((N + 1) - tc/(N*(N-1)))
	}
	if v == 0 {
		return 1
	}
	z := math.Abs(t-e) / math.Sqrt(v)
	return math.Min(1, 2*(1-normCDF(z)))
}

func normCDF(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }

func normQuantile(p float64) float64 { return -math.Sqrt2 * math.Erfcinv(2*p) }

// bootMedians returns b bootstrap medians of xs (resampling with
// replacement) from a generator seeded with seed and key, so the draws for
// one cell do not depend on which other cells exist.
func bootMedians(xs []float64, b int, seed, key uint64) []float64 {
	out := make([]float64, b)
	n := len(xs)
	if n == 0 {
		for i := range out {
			out[i] = math.NaN()
		}
		return out
	}
	r := rand.New(rand.NewPCG(seed, key))
	buf := make([]float64, n)
	for i := range out {
		for j := range buf {
			buf[j] = xs[r.IntN(n)]
		}
		sort.Float64s(buf)
		out[i] = quantileSorted(buf, 0.5)
	}
	return out
}

// percentileInterval returns the equal-tailed percentile interval of xs
// (modified in place: sorted) at the given confidence.
func percentileInterval(xs []float64, confidence float64) (lo, hi float64) {
	v := xs[:0:0]
	for _, x := range xs {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			v = append(v, x)
		}
	}
	if len(v) == 0 {
		return math.NaN(), math.NaN()
	}
	sort.Float64s(v)
	a := (1 - confidence) / 2
	return quantileSorted(v, a), quantileSorted(v, 1-a)
}
