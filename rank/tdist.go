package rank

import (
	"math"
	"sort"
)

// studentCDF is the CDF of Student's t distribution with df degrees of
// freedom at t (df may be fractional, as Welch–Satterthwaite gives).
func studentCDF(t, df float64) float64 {
	if math.IsNaN(t) || !(df > 0) {
		return math.NaN()
	}
	if math.IsInf(t, 1) {
		return 1
	}
	if math.IsInf(t, -1) {
		return 0
	}
	x := df / (df + t*t)
	tail := 0.5 * betaInc(df/2, 0.5, x) // P(T > |t|)
	if t > 0 {
		return 1 - tail
	}
	return tail
}

// studentQuantile is the p-quantile of Student's t with df degrees of
// freedom, found by bisection on studentCDF (accurate to 1e-10).
func studentQuantile(p, df float64) float64 {
	if !(p > 0 && p < 1) || !(df > 0) {
		return math.NaN()
	}
	if p == 0.5 {
		return 0
	}
	if p < 0.5 {
		return -studentQuantile(1-p, df)
	}
	return invertCDF(func(x float64) float64 { return studentCDF(x, df) }, p, 1)
}

// invertCDF is the x ≥ 0 where the increasing cdf reaches p, by
// bisection from [0, hi] (hi doubled until cdf(hi) ≥ p; +Inf past 1e12),
// to a relative 1e-10.
func invertCDF(cdf func(float64) float64, p, hi float64) float64 {
	lo := 0.0
	for cdf(hi) < p {
		hi *= 2
		if hi > 1e12 {
			return math.Inf(1)
		}
	}
	for i := 0; i < 200 && hi-lo > 1e-10*math.Max(1, hi); i++ {
		mid := (lo + hi) / 2
		if cdf(mid) < p {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// studentP is the two-sided p-value of t with df degrees of freedom.
func studentP(t, df float64) float64 {
	if math.IsNaN(t) || !(df > 0) {
		return math.NaN()
	}
	return math.Min(1, 2*studentCDF(-math.Abs(t), df))
}

// betaInc is the regularised incomplete beta function I_x(a, b), by the
// continued fraction of Numerical Recipes (betacf), with the symmetry
// I_x(a,b) = 1 - I_{1-x}(b,a) where it converges faster.
func betaInc(a, b, x float64) float64 {
	if x <= 0 {
		return 0
	}
	if x >= 1 {
		return 1
	}
	la, _ := math.Lgamma(a + b)
	lb, _ := math.Lgamma(a)
	lc, _ := math.Lgamma(b)
	front := math.Exp(la - lb - lc + a*math.Log(x) + b*math.Log(1-x))
	if x < (a+1)/(a+b+2) {
		return front * betaCF(a, b, x) / a
	}
	return 1 - front*betaCF(b, a, 1-x)/b
}

func betaCF(a, b, x float64) float64 {
	const tiny = 1e-300
	qab, qap, qam := a+b, a+1, a-1
	c, d := 1.0, 1-qab*x/qap
	if math.Abs(d) < tiny {
		d = tiny
	}
	d = 1 / d
	h := d
	for m := 1; m <= 300; m++ {
		fm := float64(m)
		var del float64
		c, d, del = lentz(fm*(b-fm)*x/((qam+2*fm)*(a+2*fm)), 1, c, d)
		h *= del
		c, d, del = lentz(-(a+fm)*(qab+fm)*x/((a+2*fm)*(qap+2*fm)), 1, c, d)
		h *= del
		if math.Abs(del-1) < 3e-14 {
			break
		}
	}
	return h
}

// lentz takes one term a/(b + …) of a continued fraction in the modified
// Lentz method (Numerical Recipes, 5.2): c and d are its running values;
// it returns their new values and the factor the fraction's value is
// multiplied by.
func lentz(a, b, c, d float64) (float64, float64, float64) {
	const tiny = 1e-300
	d = b + a*d
	if math.Abs(d) < tiny {
		d = tiny
	}
	c = b + a/c
	if math.Abs(c) < tiny {
		c = tiny
	}
	d = 1 / d
	return c, d, c * d
}

// SignedRankP is the two-sided p-value of the Wilcoxon signed-rank test
// that xs is centred on zero: exact (by the distribution of rank sums)
// for up to 50 non-zero values without ties, else the normal
// approximation with tie correction. Zeros are dropped (Wilcoxon's
// convention). NaN for no non-zero value.
func SignedRankP(xs []float64) float64 {
	var v []float64
	for _, x := range xs {
		if x != 0 && !math.IsNaN(x) && !math.IsInf(x, 0) {
			v = append(v, x)
		}
	}
	n := len(v)
	if n == 0 {
		return math.NaN()
	}
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return math.Abs(v[idx[a]]) < math.Abs(v[idx[b]]) })
	ranks := make([]float64, n)
	ties := false
	tieTerm := 0.0
	for i := 0; i < n; {
		j := i
		for j+1 < n && math.Abs(v[idx[j+1]]) == math.Abs(v[idx[i]]) {
			j++
		}
		r := float64(i+j)/2 + 1
		for k := i; k <= j; k++ {
			ranks[idx[k]] = r
		}
		if t := float64(j - i + 1); t > 1 {
			ties = true
			tieTerm += t*t*t - t
		}
		i = j + 1
	}
	wPlus := 0.0
	for i, x := range v {
		if x > 0 {
			wPlus += ranks[i]
		}
	}
	total := float64(n*(n+1)) / 2
	if !ties && n <= 50 {
		// counts[s] = number of sign assignments with W+ = s
		maxS := n * (n + 1) / 2
		counts := make([]float64, maxS+1)
		counts[0] = 1
		for r := 1; r <= n; r++ {
			for s := maxS; s >= r; s-- {
				counts[s] += counts[s-r]
			}
		}
		w := int(math.Round(math.Min(wPlus, total-wPlus)))
		tail := 0.0
		for s := 0; s <= w; s++ {
			tail += counts[s]
		}
		return math.Min(1, 2*tail/math.Pow(2, float64(n)))
	}
	mu := total / 2
	sigma := math.Sqrt(float64(n*(n+1)*(2*n+1))/24 - tieTerm/48)
	if sigma == 0 {
		return 1
	}
	z := (math.Abs(wPlus-mu) - 0.5) / sigma
	if z < 0 {
		z = 0
	}
	return math.Min(1, 2*(1-normCDF(z)))
}
