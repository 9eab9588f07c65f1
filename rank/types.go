package rank

// The ranking's types: thresholds, cells, comparisons, scores, standings,
// axis effects, warnings and the Ranking itself (what ranking.json holds).

import (
	"fmt"
	"hash/fnv"

	"github.com/redis-variants/redis-variants/results"
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

// Bench is one benchmark: a test at a pipeline depth (results.Bench).
type Bench = results.Bench

// Cell identifies the trials that are repetitions of one measurement.
type Cell struct {
	Image    string `json:"image"`
	Runtime  string `json:"runtime"`
	Test     string `json:"test"`
	Pipeline int    `json:"pipeline"`
}

func (c Cell) String() string {
	return fmt.Sprintf("%s/%s/%s", c.Image, c.Runtime, Bench{Test: c.Test, Pipeline: c.Pipeline})
}

// Bench returns the cell's benchmark.
func (c Cell) Bench() Bench { return Bench{Test: c.Test, Pipeline: c.Pipeline} }

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
