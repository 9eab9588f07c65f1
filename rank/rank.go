// Package rank turns benchmark trials into a ranking that survives a
// skeptical reader: medians with distribution-free intervals, ratios to the
// references with Hodges–Lehmann/Moses intervals, Mann–Whitney tests
// corrected for multiple comparisons with Holm's method, and an overall
// score per image with a bootstrap interval. When the data cannot separate
// two images the verdict is "tie" and they share a rank.
//
// The package is pure: trials in, statistics out. It is shaped like
// benchstat's benchmath: Sample, Summary, warnings returned as data and
// thresholds in a struct started from DefaultThresholds.
package rank

import (
	"fmt"
	"hash/fnv"
	"math"
	"sort"
)

// Verdicts.
const (
	Faster = "faster"
	Slower = "slower"
	Tie    = "tie"
	Self   = "reference" // an image compared with itself
)

// Axis is one runtime axis: the effect of running under Other instead of Base.
type Axis struct {
	Name  string `json:"name"`  // e.g. "seccomp"
	Base  string `json:"base"`  // runtime name of the baseline, e.g. "host"
	Other string `json:"other"` // runtime name of the changed configuration, e.g. "host-unconfined"
	Label string `json:"label"` // human description, e.g. "seccomp unconfined vs default"
}

// DefaultAxes are the runtime axes for the default runtime names.
func DefaultAxes() []Axis {
	return []Axis{
		{Name: "network", Base: "host", Other: "bridge", Label: "bridge networking vs host networking"},
		{Name: "seccomp", Base: "host", Other: "host-unconfined", Label: "seccomp unconfined vs default profile"},
		{Name: "socket", Base: "host", Other: "unix", Label: "unix socket vs TCP (host network)"},
	}
}

// Thresholds are the knobs of the method. Start from DefaultThresholds.
type Thresholds struct {
	Confidence     float64 `json:"confidence"`       // confidence level of every interval (0.95)
	Alpha          float64 `json:"alpha"`            // family-wise significance level after Holm correction (0.05)
	MinTrials      int     `json:"min_trials"`       // fewer trials in a cell is a warning, and NeedMore asks for more (3)
	MaxTrials      int     `json:"max_trials"`       // NeedMore stops asking at this many trials (10)
	MaxCV          float64 `json:"max_cv"`           // coefficient of variation above this is a "high spread" warning (0.10)
	ClientCPUShare float64 `json:"client_cpu_share"` // median generator CPU share at or above this: generator-bound warning (0.9)
	Bootstrap      int     `json:"bootstrap"`        // bootstrap iterations for score intervals (2000)
	Seed           uint64  `json:"seed"`             // bootstrap seed; the same trials always give the same ranking
	Primary        string  `json:"primary"`          // reference the ranks are computed against, listed first ("" = first reference by name)
	Axes           []Axis  `json:"axes"`             // runtime axes (DefaultAxes)
}

// DefaultThresholds returns the default method settings.
func DefaultThresholds() Thresholds {
	return Thresholds{
		Confidence:     0.95,
		Alpha:          0.05,
		MinTrials:      3,
		MaxTrials:      10,
		MaxCV:          0.10,
		ClientCPUShare: 0.9,
		Bootstrap:      2000,
		Seed:           0x5eed,
		Axes:           DefaultAxes(),
	}
}

func (th Thresholds) withDefaults() Thresholds {
	d := DefaultThresholds()
	if th.Confidence <= 0 || th.Confidence >= 1 {
		th.Confidence = d.Confidence
	}
	if th.Alpha <= 0 || th.Alpha >= 1 {
		th.Alpha = d.Alpha
	}
	if th.MinTrials <= 0 {
		th.MinTrials = d.MinTrials
	}
	if th.MaxTrials < th.MinTrials {
		th.MaxTrials = max(d.MaxTrials, th.MinTrials)
	}
	if th.MaxCV <= 0 {
		th.MaxCV = d.MaxCV
	}
	if th.ClientCPUShare <= 0 {
		th.ClientCPUShare = d.ClientCPUShare
	}
	if th.Bootstrap <= 0 {
		th.Bootstrap = d.Bootstrap
	}
	if th.Axes == nil {
		th.Axes = d.Axes
	}
	return th
}

// Bench is one benchmark: a test at a pipeline depth.
type Bench struct {
	Test     string `json:"test"`
	Pipeline int    `json:"pipeline"`
}

func (b Bench) String() string {
	if b.Pipeline > 1 {
		return fmt.Sprintf("%s P%d", b.Test, b.Pipeline)
	}
	return b.Test
}

// Cell identifies the trials that are repetitions of one measurement.
type Cell struct {
	Image    string `json:"image"`
	Runtime  string `json:"runtime"`
	Test     string `json:"test"`
	Pipeline int    `json:"pipeline"`
}

func (c Cell) String() string {
	return fmt.Sprintf("%s/%s/%s", c.Image, c.Runtime, Bench{c.Test, c.Pipeline})
}

// Bench returns the cell's benchmark.
func (c Cell) Bench() Bench { return Bench{c.Test, c.Pipeline} }

func (c Cell) key() uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00%d", c.Image, c.Runtime, c.Test, c.Pipeline)
	return h.Sum64()
}

// CellSummary summarises one cell's trials.
type CellSummary struct {
	Cell
	Reference      bool    `json:"reference"`
	N              int     `json:"n"`
	Ops            Summary `json:"ops"` // ops/s: median and interval
	CV             float64 `json:"cv"`  // coefficient of variation of ops/s
	CPUNsPerOp     Summary `json:"cpu_ns_per_op"`
	P50Ms          float64 `json:"p50_ms"` // median over trials
	P99Ms          float64 `json:"p99_ms"`
	P999Ms         float64 `json:"p999_ms"`
	ClientCPUShare float64 `json:"client_cpu_share"` // median over trials
	// MachineCPUNsPerOp and ProxyCPUNsPerOp are medians over the trials of
	// the whole machine's busy CPU per operation and docker-proxy's (0
	// without a proxy): the end-to-end cost of a runtime's path.
	MachineCPUNsPerOp float64 `json:"machine_cpu_ns_per_op"`
	ProxyCPUNsPerOp   float64 `json:"proxy_cpu_ns_per_op"`
	RSSBytes          int64   `json:"rss_bytes"` // median over trials
	Errors            int64   `json:"errors"`    // total over trials
	Requests          int64   `json:"requests"`  // total over trials
}

// Comparison is one image against one reference on one benchmark under
// one runtime.
type Comparison struct {
	Runtime    string  `json:"runtime"`
	Test       string  `json:"test"`
	Pipeline   int     `json:"pipeline"`
	Image      string  `json:"image"`
	Reference  string  `json:"reference"`
	N          int     `json:"n"`     // trials of the image
	M          int     `json:"m"`     // trials of the reference
	Ratio      float64 `json:"ratio"` // median ops/s of the image over the reference's (>1: faster)
	Lo         float64 `json:"lo"`    // interval of the ratio (Hodges–Lehmann/Moses on log ops/s)
	Hi         float64 `json:"hi"`
	Confidence float64 `json:"confidence"` // coverage the interval achieves (below the requested level when n is small)
	U          float64 `json:"u"`
	P          float64 `json:"p"`     // two-sided Mann–Whitney p-value
	PAdj       float64 `json:"p_adj"` // Holm-adjusted over every comparison in the ranking
	MinP       float64 `json:"min_p"` // smallest p these sample sizes can give at all
	Verdict    string  `json:"verdict"`
	// Short: the trials are too few for an interval at the simultaneous
	// level; [Lo, Hi] then covers only Confidence, is not printed, and the
	// verdict is a tie.
	Short bool `json:"short,omitempty"`
}

// Score is an image's overall score against one reference under one
// runtime: the geometric mean over benchmarks of the ratio of medians.
type Score struct {
	Reference string `json:"reference"`
	Score     Num    `json:"score"`
	Lo        Num    `json:"lo"` // bootstrap percentile interval (trials resampled within cells)
	Hi        Num    `json:"hi"`
	P         Num    `json:"p"`     // van Elteren stratified rank test over the benchmarks (null against itself)
	PAdj      Num    `json:"p_adj"` // Holm-adjusted over every score comparison in the ranking
	Benches   int    `json:"benches"`
	Verdict   string `json:"verdict"`
	// Derived: computed through the primary reference from two
	// co-scheduled comparisons (their errors added), not measured as a pair.
	Derived bool `json:"derived,omitempty"`
}

// Entry is one image in one runtime's standings.
type Entry struct {
	Image     string `json:"image"`
	Runtime   string `json:"runtime"`
	Reference bool   `json:"reference"`
	Rank      int    `json:"rank"`  // 1 = fastest; tied images share a rank (competition ranking: 1, 1, 3)
	Score     Num    `json:"score"` // against the primary reference (null when not comparable)
	Lo        Num    `json:"lo"`
	Hi        Num    `json:"hi"`
	// SepP is the Holm-adjusted p-value of the stratified test against the
	// entry ranked just above (null for the first).
	SepP   Num     `json:"sep_p"`
	Versus []Score `json:"versus"` // one per reference
}

// Standings is one runtime's ranking.
type Standings struct {
	Runtime string  `json:"runtime"`
	Method  string  `json:"method"`  // MethodPairs or MethodStandalone
	Primary string  `json:"primary"` // the reference the scores in Entries are against
	Entries []Entry `json:"entries"`
}

// AxisEffect is the effect of one runtime axis on one image and benchmark
// (Test == "" for the geometric mean over the benchmarks).
type AxisEffect struct {
	Axis       string  `json:"axis"`
	Base       string  `json:"base"`
	Other      string  `json:"other"`
	Image      string  `json:"image"`
	Test       string  `json:"test,omitempty"`
	Pipeline   int     `json:"pipeline,omitempty"`
	Ratio      float64 `json:"ratio"` // ops/s under Other over Base
	Lo         float64 `json:"lo"`
	Hi         float64 `json:"hi"`
	Confidence float64 `json:"confidence"`
	P          float64 `json:"p"`
	PAdj       float64 `json:"p_adj"` // Holm over all axis effects
	Verdict    string  `json:"verdict"`
	Short      bool    `json:"short,omitempty"` // as Comparison.Short
}

// Warning kinds.
const (
	WarnFewTrials      = "few-trials"
	WarnHighSpread     = "high-spread"
	WarnGeneratorBound = "generator-bound"
	WarnErrors         = "errors"
	WarnNoReference    = "missing-reference"
	WarnInvalid        = "invalid-trial"
	WarnUnderpowered   = "underpowered"
	WarnIncomplete     = "incomplete"
	WarnControl        = "control"         // the A/A control is significant, or cannot be judged
	WarnUnbalanced     = "unbalanced"      // a pair's sides were not swapped in at least two replicates each
	WarnDisagree       = "disagreement"    // standalone and co-scheduled verdicts differ in sign
	WarnStandaloneOnly = "standalone-only" // no co-scheduled pairs: the ranking rests on the noisier standalone trials
	WarnPairFailures   = "pair-failures"   // replicates given up
)

// Methods of a ranking.
const (
	MethodPairs      = "co-scheduled pairs"
	MethodStandalone = "standalone trials"
)

// Warning is something the reader must know to trust the ranking.
type Warning struct {
	Kind    string `json:"kind"`
	Subject string `json:"subject"`
	Message string `json:"message"`
}

// Ranking is the whole result, JSON-serialisable.
type Ranking struct {
	Thresholds  Thresholds    `json:"thresholds"`
	References  []string      `json:"references"` // the primary reference first, then by name
	Images      []string      `json:"images"`     // every image, references first, then by name
	Runtimes    []string      `json:"runtimes"`
	Benches     []Bench       `json:"benches"`
	Standings   []Standings   `json:"standings"`
	Cells       []CellSummary `json:"cells"`
	Comparisons []Comparison  `json:"comparisons"`
	Axes        []AxisEffect  `json:"axes"`
	Warnings    []Warning     `json:"warnings"`
	// Method is what the standings rest on: MethodPairs (each image's
	// server CPU time per operation against the primary reference's,
	// co-scheduled on the same CPUs) or, without pairs, MethodStandalone.
	Method string `json:"method"`
	// Pairs holds every co-scheduled result: the primary family (scores
	// vs the primary reference), per-benchmark rows, controls and axes.
	Pairs      []PairResult `json:"pairs"`
	Controls   []Control    `json:"controls"` // the A/A contrast per runtime
	Resolution Resolution   `json:"resolution"`
	// SplitHalfMaxZ is the largest |z| between odd- and even-window
	// estimates over the primary family and the controls.
	SplitHalfMaxZ Num `json:"split_half_max_z"`
	// Trustworthy is false when an A/A control is significant.
	Trustworthy bool     `json:"trustworthy"`
	Replicates  int      `json:"replicates"` // replicates given
	Trials      int      `json:"trials"`     // standalone trials given
	Excluded    int      `json:"excluded"`   // trials left out (no valid ops/s)
	CPUModels   []string `json:"cpu_models,omitempty"`
}

// Standing returns the standings of runtime rt.
func (r *Ranking) Standing(rt string) (Standings, bool) {
	for _, s := range r.Standings {
		if s.Runtime == rt {
			return s, true
		}
	}
	return Standings{}, false
}

// Cell returns the summary of c.
func (r *Ranking) Cell(c Cell) (CellSummary, bool) {
	for _, s := range r.Cells {
		if s.Cell == c {
			return s, true
		}
	}
	return CellSummary{}, false
}

// Comparison returns the comparison of image with ref on bench under rt.
func (r *Ranking) Comparison(rt string, b Bench, image, ref string) (Comparison, bool) {
	for _, c := range r.Comparisons {
		if c.Runtime == rt && c.Test == b.Test && c.Pipeline == b.Pipeline && c.Image == image && c.Reference == ref {
			return c, true
		}
	}
	return Comparison{}, false
}

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
		return Tie
	case lo > 1:
		return Faster
	case hi < 1:
		return Slower
	}
	return Tie
}

// Rank ranks the co-scheduled replicates and the standalone trials. The
// standings of a runtime with image pairs come from the pairs; a runtime
// with standalone trials only is ranked from them, with a warning. See
// the package documentation and README for the method; every threshold
// left zero takes its default.
func Rank(trials []Trial, reps []Replicate, th Thresholds) Ranking {
	th = th.withDefaults()
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
	r.Pairs, r.Controls = []PairResult{}, []Control{}
	r.Resolution = Resolution{Median: nan, Max: nan}
	r.SplitHalfMaxZ = nan
	pa := analysePairs(reps, th)
	if len(pa.results) == 0 {
		if len(r.Standings) > 0 {
			r.Warnings = append(r.Warnings, Warning{WarnStandaloneOnly, "", "no co-scheduled pairs: the ranking rests on standalone trials, whose run-to-run spread on a shared machine is 10-30%"})
		}
		return r
	}
	r.Method = MethodPairs
	r.Pairs, r.Controls, r.Resolution = pa.results, nonNilControls(pa.controls), pa.resolution
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
		r.Warnings = append(r.Warnings, Warning{WarnPairFailures, "", fmt.Sprintf("%d replicate(s) were given up after repeated failures; their images are ranked on the replicates that finished", failed)})
	}
	// Runtimes ranked by pairs replace their standalone standings.
	refs := d.refs
	for _, rep := range reps {
		if rep.ImageReference && !contains(refs, rep.Image) {
			refs = append(refs, rep.Image)
		}
		if !contains(refs, rep.Base) {
			refs = append(refs, rep.Base)
		}
	}
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
		WarnUnderpowered: "%d group(s) of standalone comparisons cannot reach significance with so few trials: they are ties whatever the data (the ranking comes from the pairs)",
	}
	for _, k := range []string{WarnFewTrials, WarnHighSpread, WarnUnderpowered} {
		if count[k] > 0 {
			out = append(out, Warning{k, "standalone", fmt.Sprintf(msg[k], count[k])})
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
		w = append(w, Warning{WarnInvalid, Cell{t.Variant, t.Runtime, t.Test, max(t.Pipeline, 1)}.String(),
			fmt.Sprintf("trial rep %d has no valid ops/s (%v) and was left out", t.Rep, t.OpsPerSec)})
	}
	for _, s := range cells {
		if s.N < d.th.MinTrials {
			w = append(w, Warning{WarnFewTrials, s.Cell.String(),
				fmt.Sprintf("%d trial(s), fewer than the %d needed", s.N, d.th.MinTrials)})
		}
		if s.CV > d.th.MaxCV {
			w = append(w, Warning{WarnHighSpread, s.Cell.String(),
				fmt.Sprintf("ops/s varies by %.1f%% (CV) across %d trials, above %.0f%%: the machine is noisy", 100*s.CV, s.N, 100*d.th.MaxCV)})
		}
		if s.ClientCPUShare >= d.th.ClientCPUShare {
			w = append(w, Warning{WarnGeneratorBound, s.Cell.String(),
				fmt.Sprintf("the load generator used %.0f%% of its CPUs: this measures the generator, not the server", 100*s.ClientCPUShare)})
		}
		if s.Errors > 0 {
			w = append(w, Warning{WarnErrors, s.Cell.String(),
				fmt.Sprintf("%d errors in %d requests", s.Errors, s.Requests)})
		}
	}
	if len(d.refs) == 0 && len(d.cells) > 0 {
		w = append(w, Warning{WarnNoReference, "", "no reference image has trials: no ratio, score or verdict can be computed"})
	}
	if d.th.Primary != "" && !contains(d.refs, d.th.Primary) && len(d.cells) > 0 {
		w = append(w, Warning{WarnNoReference, d.th.Primary,
			fmt.Sprintf("primary reference %q has no trials; ranking against %q", d.th.Primary, d.primary())})
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
					w = append(w, Warning{WarnNoReference, Cell{ref, rt, b.Test, b.Pipeline}.String(),
						fmt.Sprintf("reference %q has no trials for %s under %s: images cannot be compared with it there", ref, b, rt)})
				}
			}
			for _, im := range d.images {
				if d.get(im, rt, b) == nil {
					w = append(w, Warning{WarnIncomplete, Cell{im, rt, b.Test, b.Pipeline}.String(),
						fmt.Sprintf("%q has no trials for %s under %s: its score covers fewer benchmarks", im, b, rt)})
				}
			}
		}
	}
	return w
}

func contains(s []string, x string) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
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
	ps := make([]float64, len(out))
	for i, c := range out {
		ps[i] = c.P
	}
	adj := Holm(ps)
	for i := range out {
		out[i].PAdj = adj[i]
		out[i].Verdict = Tie
		if !out[i].Short {
			out[i].Verdict = verdict(out[i].Lo, out[i].Hi)
		}
	}
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

// bootstrap draws th.Bootstrap bootstrap medians of ops/s for every cell.
func (d *dataset) bootstrap() map[Cell][]float64 {
	out := make(map[Cell][]float64, len(d.cells))
	for c, cd := range d.cells {
		out[c] = bootMedians(cd.ops, d.th.Bootstrap, d.th.Seed, c.key())
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
					s.Verdict = Tie
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
			for _, b := range d.benches {
				co, cb := d.get(im, ax.Other, b), d.get(im, ax.Base, b)
				if co == nil || cb == nil {
					continue
				}
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
			out = append(out, AxisEffect{Axis: ax.Name, Base: ax.Base, Other: ax.Other, Image: im,
				Ratio: math.Exp(mean(logs)), Lo: lo, Hi: hi, Confidence: conf, P: vanElteren(strata)})
		}
	}
	ps := make([]float64, len(out))
	for i, a := range out {
		ps[i] = a.P
	}
	adj := Holm(ps)
	for i := range out {
		out[i].PAdj = adj[i]
		out[i].Verdict = Tie
		if !out[i].Short {
			out[i].Verdict = verdict(out[i].Lo, out[i].Hi)
		}
	}
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
	return []Warning{{WarnUnderpowered, "comparisons",
		fmt.Sprintf("%d of %d per-benchmark comparisons cannot reach p < %.2g after Holm correction over %d comparisons with so few trials (smallest n = %d): they are reported as ties whatever the data; about %d trials per cell are needed (scores pool the benchmarks and need fewer)",
			under, len(cs), d.th.Alpha, len(cs), minN, need)}}
}
