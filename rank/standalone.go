package rank

// Standalone trials: grouping into cells, their summaries, the pairwise
// comparisons of medians and the warnings about them.

import (
	"fmt"
	"math"
	"sort"
)

// cellData holds one cell's valid trials.
type cellData struct {
	Cell
	ref    bool
	trials []Trial
	ops    []float64 // sorted
	logOps []float64
}

// dataset is the trials grouped into cells.
type dataset struct {
	th       Thresholds
	cells    map[Cell]*cellData
	order    []Cell
	images   []string
	refs     []string
	runtimes []string
	benches  []Bench
	excluded []Trial
	total    int
	cpus     []string
}

func group(trials []Trial, th Thresholds) *dataset {
	d := &dataset{th: th, cells: map[Cell]*cellData{}, total: len(trials)}
	isRef := map[string]bool{}
	imgs, rts, bs, cpus := map[string]bool{}, map[string]bool{}, map[Bench]bool{}, map[string]bool{}
	for _, t := range trials {
		p := t.Pipeline
		if p < 1 {
			p = 1
		}
		c := Cell{Image: t.Variant, Runtime: t.Runtime, Test: t.Test, Pipeline: p}
		if t.Reference {
			isRef[t.Variant] = true
		}
		if t.CPUModel != "" {
			cpus[t.CPUModel] = true
		}
		if !(t.OpsPerSec > 0) || math.IsInf(t.OpsPerSec, 0) {
			d.excluded = append(d.excluded, t)
			continue
		}
		cd := d.cells[c]
		if cd == nil {
			cd = &cellData{Cell: c}
			d.cells[c] = cd
			d.order = append(d.order, c)
		}
		cd.trials = append(cd.trials, t)
		cd.ops = append(cd.ops, t.OpsPerSec)
		imgs[c.Image], rts[c.Runtime], bs[c.Bench()] = true, true, true
	}
	for _, cd := range d.cells {
		cd.ref = isRef[cd.Image]
		sort.Float64s(cd.ops)
		cd.logOps = make([]float64, len(cd.ops))
		for i, v := range cd.ops {
			cd.logOps[i] = math.Log(v)
		}
	}
	for im := range imgs {
		d.images = append(d.images, im)
		if isRef[im] {
			d.refs = append(d.refs, im)
		}
	}
	sort.Strings(d.refs)
	if th.Primary != "" { // the primary reference first
		for i, ref := range d.refs {
			if ref == th.Primary {
				copy(d.refs[1:i+1], d.refs[:i])
				d.refs[0] = ref
			}
		}
	}
	sort.Slice(d.images, func(i, j int) bool {
		a, b := d.images[i], d.images[j]
		if isRef[a] != isRef[b] {
			return isRef[a]
		}
		return a < b
	})
	for rt := range rts {
		d.runtimes = append(d.runtimes, rt)
	}
	sort.Strings(d.runtimes)
	for b := range bs {
		d.benches = append(d.benches, b)
	}
	sort.Slice(d.benches, func(i, j int) bool {
		if d.benches[i].Test != d.benches[j].Test {
			return d.benches[i].Test < d.benches[j].Test
		}
		return d.benches[i].Pipeline < d.benches[j].Pipeline
	})
	sort.Slice(d.order, func(i, j int) bool { return cellLess(d.order[i], d.order[j]) })
	for c := range cpus {
		d.cpus = append(d.cpus, c)
	}
	sort.Strings(d.cpus)
	return d
}

func cellLess(a, b Cell) bool {
	if a.Runtime != b.Runtime {
		return a.Runtime < b.Runtime
	}
	if a.Test != b.Test {
		return a.Test < b.Test
	}
	if a.Pipeline != b.Pipeline {
		return a.Pipeline < b.Pipeline
	}
	return a.Image < b.Image
}

func (d *dataset) get(img, rt string, b Bench) *cellData {
	return d.cells[Cell{Image: img, Runtime: rt, Test: b.Test, Pipeline: b.Pipeline}]
}

// compare compares x's cell with y's: ratio of medians, Moses interval of
// the ratio (from log ops/s) and the Mann–Whitney p-value.
func compare(x, y *cellData, conf float64) (ratio, lo, hi, achieved float64, mw MannWhitney) {
	ratio = quantileSorted(x.ops, 0.5) / quantileSorted(y.ops, 0.5)
	hl := HodgesLehmann(x.logOps, y.logOps, conf)
	mw = MannWhitneyU(x.ops, y.ops)
	return ratio, math.Exp(hl.Lo), math.Exp(hl.Hi), hl.Confidence, mw
}

// verdict reads a verdict from a simultaneous interval: faster or slower
// only when it excludes 1. The intervals of the standalone statistics are
// Bonferroni-simultaneous over their family, so the verdicts control the
// family-wise error and an interval that excludes 1 is never printed
// beside "tie"; the Holm-adjusted p-values are reported beside them.
func verdict(lo, hi float64) string {
	switch {
	case math.IsNaN(lo) || math.IsNaN(hi):
		return NotTested
	case lo > 1:
		return Faster
	case hi < 1:
		return Slower
	}
	return Tie
}

func (d *dataset) summaries() []CellSummary {
	out := make([]CellSummary, 0, len(d.order))
	for _, c := range d.order {
		cd := d.cells[c]
		var cpu, p50, p99, p999, share, mach, proxy []float64
		var rss []float64
		s := CellSummary{Cell: c, Reference: cd.ref, N: len(cd.ops)}
		for _, t := range cd.trials {
			if t.ServerCPUNsPerOp > 0 {
				cpu = append(cpu, t.ServerCPUNsPerOp)
			}
			p50 = append(p50, t.P50Ms)
			p99 = append(p99, t.P99Ms)
			p999 = append(p999, t.P999Ms)
			share = append(share, t.ClientCPUShare)
			mach = append(mach, t.MachineCPUNsPerOp)
			proxy = append(proxy, t.ProxyCPUNsPerOp)
			rss = append(rss, float64(t.RSSBytes))
			s.Errors += t.Errors
			s.Requests += t.Requests
		}
		ops := Sample{Values: cd.ops}
		s.Ops = ops.Summary(d.th.Confidence)
		s.CV = ops.CV()
		if len(cpu) > 0 {
			s.CPUNsPerOp = NewSample(cpu).Summary(d.th.Confidence)
		}
		s.P50Ms = NewSample(p50).Median()
		s.P99Ms = NewSample(p99).Median()
		s.P999Ms = NewSample(p999).Median()
		s.ClientCPUShare = NewSample(share).Median()
		s.MachineCPUNsPerOp = NewSample(mach).Median()
		s.ProxyCPUNsPerOp = NewSample(proxy).Median()
		s.RSSBytes = int64(NewSample(rss).Median())
		out = append(out, s)
	}
	return out
}

func (d *dataset) warnings(cells []CellSummary) []Warning {
	var w []Warning
	for _, t := range d.excluded {
		w = append(w, Warning{Kind: WarnInvalid, Subject: Cell{Image: t.Variant, Runtime: t.Runtime, Test: t.Test, Pipeline: max(t.Pipeline, 1)}.String(), Message: fmt.Sprintf("trial rep %d has no valid ops/s (%v) and was left out", t.Rep, t.OpsPerSec)})
	}
	for _, s := range cells {
		if s.N < d.th.MinTrials {
			w = append(w, Warning{Kind: WarnFewTrials, Subject: s.Cell.String(), Message: fmt.Sprintf("%d trial(s), fewer than the %d needed", s.N, d.th.MinTrials)})
		}
		if s.CV > d.th.MaxCV {
			w = append(w, Warning{Kind: WarnHighSpread, Subject: s.Cell.String(), Message: fmt.Sprintf("ops/s varies by %.1f%% (CV) across %d trials, above %.0f%%: the machine is noisy", 100*s.CV, s.N, 100*d.th.MaxCV)})
		}
		if s.ClientCPUShare >= d.th.ClientCPUShare {
			w = append(w, Warning{Kind: WarnGeneratorBound, Subject: s.Cell.String(), Message: fmt.Sprintf("the load generator used %.0f%% of its CPUs: this measures the generator, not the server", 100*s.ClientCPUShare)})
		}
		if s.Errors > 0 {
			w = append(w, Warning{Kind: WarnErrors, Subject: s.Cell.String(), Message: fmt.Sprintf("%d errors in %d requests", s.Errors, s.Requests)})
		}
	}
	if len(d.refs) == 0 && len(d.cells) > 0 {
		w = append(w, Warning{Kind: WarnNoReference, Subject: "", Message: "no reference image has trials: no ratio, score or verdict can be computed"})
	}
	if d.th.Primary != "" && !contains(d.refs, d.th.Primary) && len(d.cells) > 0 {
		w = append(w, Warning{Kind: WarnNoReference, Subject: d.th.Primary, Message: fmt.Sprintf("primary reference %q has no trials; ranking against %q", d.th.Primary, d.primary())})
	}
	for _, rt := range d.runtimes {
		imgs := 0
		for _, im := range d.images {
			if d.shared(im, im, rt) > 0 {
				imgs++
			}
		}
		if imgs < 2 {
			continue // one image under this runtime (the primary reference, for the runtime paths): nothing is compared
		}
		for _, b := range d.benches {
			has := false
			for _, im := range d.images {
				if d.get(im, rt, b) != nil {
					has = true
				}
			}
			if !has {
				continue
			}
			for _, ref := range d.refs {
				if d.get(ref, rt, b) == nil {
					w = append(w, Warning{Kind: WarnNoReference, Subject: Cell{Image: ref, Runtime: rt, Test: b.Test, Pipeline: b.Pipeline}.String(), Message: fmt.Sprintf("reference %q has no trials for %s under %s: images cannot be compared with it there", ref, b, rt)})
				}
			}
			for _, im := range d.images {
				if d.get(im, rt, b) == nil {
					w = append(w, Warning{Kind: WarnIncomplete, Subject: Cell{Image: im, Runtime: rt, Test: b.Test, Pipeline: b.Pipeline}.String(), Message: fmt.Sprintf("%q has no trials for %s under %s: its score covers fewer benchmarks", im, b, rt)})
				}
			}
		}
	}
	return w
}

func (d *dataset) primary() string {
	if d.th.Primary != "" && contains(d.refs, d.th.Primary) {
		return d.th.Primary
	}
	if len(d.refs) > 0 {
		return d.refs[0]
	}
	return ""
}

func (d *dataset) comparisons() []Comparison {
	out := []Comparison{}
	var pairs [][2]*cellData
	for _, rt := range d.runtimes {
		for _, b := range d.benches {
			for _, ref := range d.refs {
				y := d.get(ref, rt, b)
				if y == nil {
					continue
				}
				for _, im := range d.images {
					x := d.get(im, rt, b)
					if x == nil || im == ref {
						continue
					}
					pairs = append(pairs, [2]*cellData{x, y})
				}
			}
		}
	}
	conf := simultaneous(d.th.Confidence, len(pairs))
	for _, xy := range pairs {
		x, y := xy[0], xy[1]
		ratio, lo, hi, achieved, mw := compare(x, y, conf)
		out = append(out, Comparison{
			Runtime: x.Runtime, Test: x.Test, Pipeline: x.Pipeline, Image: x.Image, Reference: y.Image,
			N: len(x.ops), M: len(y.ops), Ratio: ratio, Lo: lo, Hi: hi, Confidence: achieved,
			U: mw.U, P: mw.P, MinP: MinP(len(x.ops), len(y.ops)),
			// too few trials for an interval at this level: none is
			// printed, and the verdict is a tie
			Short: achieved < conf-1e-9,
		})
	}
	holmVerdicts(out, func(x *Comparison) (float64, bool, float64, float64, *float64, *string) {
		return x.P, x.Short, x.Lo, x.Hi, &x.PAdj, &x.Verdict
	})
	return out
}

// simultaneous is the per-interval confidence that gives conf for all m
// intervals together (Bonferroni).
func simultaneous(conf float64, m int) float64 {
	if m <= 1 {
		return conf
	}
	return 1 - (1-conf)/float64(m)
}

// powerWarnings says when the sample sizes cannot reach significance at
// all after the correction: every per-benchmark verdict is then "tie"
// whatever the data.
func (d *dataset) powerWarnings(cs []Comparison) []Warning {
	if len(cs) == 0 {
		return nil
	}
	m := float64(len(cs))
	under := 0
	minN := math.MaxInt
	for _, c := range cs {
		if c.MinP*m >= d.th.Alpha { // the smallest p, Holm-adjusted as the first of m, still misses
			under++
		}
		minN = min(minN, c.N, c.M)
	}
	if under == 0 {
		return nil
	}
	need := 2
	for need < 100 && MinP(need, need)*m >= d.th.Alpha {
		need++
	}
	return []Warning{{Kind: WarnUnderpowered, Subject: "comparisons", Message: fmt.Sprintf("%d of %d per-benchmark comparisons cannot reach p < %.2g after Holm correction over %d comparisons with so few trials (smallest n = %d): no verdict of theirs can be faster or slower whatever the data (those without an interval at the family's level are not tested); about %d trials per cell are needed (scores pool the benchmarks and need fewer)",
		under, len(cs), d.th.Alpha, len(cs), minN, need)}}
}

// holmVerdicts Holm-adjusts the p-values of one family of comparisons and
// gives each its verdict from its interval: a tie when the interval
// includes 1; not tested when there were too few trials for one (short). fields
// returns a comparison's p, short, interval, and where its adjusted p and
// verdict go.
func holmVerdicts[T any](family []T, fields func(*T) (p float64, short bool, lo, hi float64, padj *float64, verdict *string)) {
	ps := make([]float64, len(family))
	for i := range family {
		ps[i], _, _, _, _, _ = fields(&family[i])
	}
	for i, adj := range Holm(ps) {
		_, short, lo, hi, padj, v := fields(&family[i])
		*padj, *v = adj, NotTested
		if !short {
			*v = verdict(lo, hi)
		}
	}
}
