package results

// The ranking record: what rank writes to ranking.json (RankingFile) and
// report, publish, history and compare read back. rank computes it and
// names these types as its own (type aliases); their meaning (verdicts,
// warning kinds, families) is documented there.

import (
	"fmt"
	"math"
	"strconv"

	"github.com/redis-variants/redis-variants/variants"
)

// Num is a float64 that encodes NaN and ±Inf as JSON null (and decodes
// null as NaN): "not applicable" survives a round trip through ranking.json.
type Num float64

// IsNaN reports whether n is NaN or infinite: a value that is not there.
func (n Num) IsNaN() bool { return math.IsNaN(float64(n)) || math.IsInf(float64(n), 0) }

// MarshalJSON implements json.Marshaler.
func (n Num) MarshalJSON() ([]byte, error) {
	if n.IsNaN() {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, float64(n), 'g', -1, 64), nil
}

// UnmarshalJSON implements json.Unmarshaler.
func (n *Num) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*n = Num(math.NaN())
		return nil
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return err
	}
	*n = Num(f)
	return nil
}

// Summary is a center with a distribution-free confidence interval.
type Summary struct {
	Center     float64 `json:"center"`     // the median
	Lo         float64 `json:"lo"`         // lower bound of the interval
	Hi         float64 `json:"hi"`         // upper bound of the interval
	Confidence float64 `json:"confidence"` // confidence actually achieved by [Lo, Hi]
	N          int     `json:"n"`
}

// Axis is one runtime axis: the effect of running under Other instead of Base.
type Axis struct {
	Name  string `json:"name"`  // e.g. "seccomp"
	Base  string `json:"base"`  // runtime name of the baseline, e.g. "host"
	Other string `json:"other"` // runtime name of the changed configuration, e.g. "host-unconfined"
	Label string `json:"label"` // human description, e.g. "seccomp unconfined vs default"
}

// Thresholds are the knobs of the method. Start from DefaultThresholds.
type Thresholds struct {
	// Alpha is the method's one level: the family-wise significance of
	// the Holm-corrected families (0.05). Confidence is 1 − Alpha, the
	// level of every uncorrected interval; rank sets it from Alpha (or
	// Alpha from it when only Confidence is given), so the two cannot
	// disagree.
	Confidence     float64 `json:"confidence"`
	Alpha          float64 `json:"alpha"`
	MinTrials      int     `json:"min_trials"`       // fewer trials in a cell is a warning, and NeedMore asks for more (3)
	MaxTrials      int     `json:"max_trials"`       // NeedMore stops asking at this many trials (10)
	MaxCV          float64 `json:"max_cv"`           // coefficient of variation above this is a "high spread" warning (0.10)
	ClientCPUShare float64 `json:"client_cpu_share"` // median generator CPU share at or above this: generator-bound warning (0.9)
	Bootstrap      int     `json:"bootstrap"`        // bootstrap iterations for score intervals (2000)
	Seed           uint64  `json:"seed"`             // bootstrap seed; the same trials always give the same ranking
	Primary        string  `json:"primary"`          // reference the ranks are computed against, listed first ("" = first reference by name)
	Axes           []Axis  `json:"axes"`             // runtime axes (DefaultAxes)
	// Resolution is the profile's stated precision: the answer is given
	// only when the primary family's median half-width is within it (0 =
	// no bound).
	Resolution float64 `json:"resolution,omitempty"`
	// Looks is the most looks the bench's profile allowed at the decision
	// (variants.Profile.Looks; 0 or 1: one). The decision at look m of M
	// spends alpha·((m/M)² − ((m−1)/M)²), so its error stays within Alpha
	// over every look the bench could take.
	Looks int `json:"looks,omitempty"`
	// Contrasts are pairs of images compared with each other directly (a
	// PGO build and the same flags without it), through the primary
	// reference both were co-scheduled with.
	Contrasts []Contrast `json:"contrasts,omitempty"`
	// Experiment is the published measurement the variants file
	// reproduces: Ranking.Experiment answers its claims (nil: none).
	Experiment *variants.Experiment `json:"experiment,omitempty"`
}

// Contrast names two images to compare directly: Image against Versus.
type Contrast struct {
	Image  string `json:"image"`
	Versus string `json:"versus"`
	Label  string `json:"label"` // what differs, e.g. "PGO vs the same flags without it"
}

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
	// Rank and RankHi bound the entry's rank (1 = fastest): Rank is 1 +
	// the number of entries separated from it above, RankHi the count of
	// entries less the number separated from it below. Rank == RankHi is
	// a rank the family proves; "1–3" is as far as it goes. Two entries
	// are tied exactly when their pair is not separated (Standings.Pairs):
	// the rank interval is what the separations allow, not a tie group.
	Rank   int `json:"rank"`
	RankHi int `json:"rank_hi"`
	Score  Num `json:"score"` // against the primary reference (null when not comparable)
	Lo     Num `json:"lo"`
	Hi     Num `json:"hi"`
	// SepP is the family's Holm-adjusted p-value of the comparison with
	// the entry listed just above (null for the first).
	SepP   Num     `json:"sep_p"`
	Versus []Score `json:"versus"` // one per reference
}

// Standings is one runtime's ranking.
type Standings struct {
	Runtime string  `json:"runtime"`
	Method  string  `json:"method"`  // MethodPairs or MethodStandalone
	Primary string  `json:"primary"` // the reference the scores in Entries are against
	Entries []Entry `json:"entries"`
	// Pairs is every pair of Entries, the family the verdicts and the
	// ranks both come from (co-scheduled standings; nil for standalone).
	Pairs []Separation `json:"pairs,omitempty"`
}

// Separation is one pair of a runtime's entries in the ranking family:
// Higher listed above Lower, their ratio with its interval at the level
// that matches the family's Holm decision, and whether that decision
// separates them.
type Separation struct {
	Higher    string `json:"higher"`
	Lower     string `json:"lower"`
	Ratio     Num    `json:"ratio"` // Higher over Lower
	Lo        Num    `json:"lo"`
	Hi        Num    `json:"hi"`
	P         Num    `json:"p"`
	PAdj      Num    `json:"p_adj"`   // Holm over every pair of every runtime
	Derived   bool   `json:"derived"` // through the primary reference (neither side is it)
	Separated bool   `json:"separated"`
}

// Tied says whether entries a and b of st cannot be told apart: the
// family does not separate them, or, in standings without pairs
// (standalone trials), they share a rank.
func (st Standings) Tied(a, b string) bool {
	if st.Pairs == nil {
		ra, rb := -1, -2
		for _, e := range st.Entries {
			if e.Image == a {
				ra = e.Rank
			}
			if e.Image == b {
				rb = e.Rank
			}
		}
		return ra == rb
	}
	return !st.Separated(a, b)
}

// Separated says whether the family separates entries a and b of st
// (false for a pair it does not hold).
func (st Standings) Separated(a, b string) bool {
	for _, p := range st.Pairs {
		if p.Higher == a && p.Lower == b || p.Higher == b && p.Lower == a {
			return p.Separated
		}
	}
	return false
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

// Warning is something the reader must know to trust the ranking.
type Warning struct {
	Kind    string `json:"kind"`
	Subject string `json:"subject"`
	Message string `json:"message"`
}

// Ranking is the whole result, JSON-serialisable.
type Ranking struct {
	Thresholds Thresholds  `json:"thresholds"`
	References []string    `json:"references"` // the primary reference first, then by name
	Images     []string    `json:"images"`     // every image, references first, then by name
	Runtimes   []string    `json:"runtimes"`
	Benches    []Bench     `json:"benches"`
	Standings  []Standings `json:"standings"`
	// Decisions answer the quick profile's question, per ranked runtime:
	// which entry to ship (rank's decide).
	Decisions   []Decision    `json:"decisions,omitempty"`
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
	Pairs    []PairResult `json:"pairs"`
	Controls []Control    `json:"controls"` // the A/A contrast per runtime
	// Contrasts compare the images Thresholds.Contrasts names directly,
	// per benchmark and on the score (Test == ""), derived through the
	// primary reference.
	Contrasts []PairResult `json:"contrasts,omitempty"`
	// Layouts is the layout spread of every image whose build spec ran as
	// several draws, per ranked runtime.
	Layouts    []LayoutSpread `json:"layouts,omitempty"`
	Resolution Resolution     `json:"resolution"`
	// SplitHalfMaxZ is the largest |z| between odd- and even-window
	// estimates (odd- and even-numbered replicates where a replicate has
	// one window per benchmark) over the primary family and the controls.
	SplitHalfMaxZ Num `json:"split_half_max_z"`
	// Trustworthy is false when an A/A control is significant.
	Trustworthy bool `json:"trustworthy"`
	// Answer says whether the run answers its question, and if not, why
	// and what to change. The report opens with it.
	Answer     Answer `json:"answer"`
	Replicates int    `json:"replicates"` // replicates given
	// Measured is how many of them have windows: the rest were lost whole.
	Measured int `json:"measured_replicates"`
	// StandIns is how many of them stand in for a short replicate
	// (Replicate.Replaces).
	StandIns int `json:"stand_ins"`
	// Added is how many of them the extension added after the planned
	// design (Replicate.Added); the rest, less the stand-ins, were planned.
	Added     int      `json:"added_replicates"`
	Trials    int      `json:"trials"`   // standalone trials given
	Excluded  int      `json:"excluded"` // trials left out (no valid ops/s)
	CPUModels []string `json:"cpu_models,omitempty"`
	// Memory is the memory workload's ranking (nil: the run had none).
	Memory *MemoryRanking `json:"memory,omitempty"`
	// Latency is the fixed-rate latency measure (nil: none in the run).
	Latency *LatencyRanking `json:"latency,omitempty"`
	// Experiment answers Thresholds.Experiment's claims from this ranking
	// (nil: the file reproduces no published experiment).
	Experiment []ClaimResult `json:"experiment,omitempty"`
	// RunEffect is the run effect measured on this machine kind from the
	// earlier runs of these images found beside this one (nil: none was
	// found). The run's own intervals are within-run; this says how much
	// wider a claim beyond the run must be.
	RunEffect *RunEffect `json:"run_effect,omitempty"`
}

// RunEffect is the between-run variance of the primary scores of images
// measured in several runs on one machine kind: a random run effect with
// one variance for every image (DerSimonian–Laird on the per-run
// estimates, Cochran's Q summed over the images).
type RunEffect struct {
	Runtime  string   `json:"runtime"`
	CPUModel string   `json:"cpu_model,omitempty"`
	Runs     []string `json:"runs"`   // the run folders, by name
	Images   int      `json:"images"` // images measured in two runs or more
	// Q is Cochran's Q summed over the images (for two runs, Σz² of the
	// per-image differences); DF its degrees of freedom (Σ runs − 1); P
	// the χ² test of no run effect; QLo and QHi the 95% band of Q when
	// there is none.
	Q   Num `json:"q"`
	DF  int `json:"df"`
	P   Num `json:"p"`
	QLo Num `json:"q_lo"`
	QHi Num `json:"q_hi"`
	// Tau is the run effect's standard deviation on the log ratio (0.006
	// ≈ 0.6%), MedianSE the median within-run standard error of the
	// estimates it was measured on, and Allowance √(1 + τ²/SE²): how much
	// wider a one-run interval must be to cover another run.
	Tau       Num `json:"tau"`
	MedianSE  Num `json:"median_se"`
	Allowance Num `json:"allowance"`
}

// MemoryRanking ranks the images by the memory their server held for the
// same dataset after the churn (used_memory_rss after fill, overwrite and
// delete): less is better. Each image's ratio to the primary reference is
// a Welch interval on log RSS over its servers, Bonferroni-adjusted over
// the images; the primary reference's second set of servers is the A/A
// control, whose true ratio is 1.
type MemoryRanking struct {
	Primary    string        `json:"primary"`
	Dataset    Stat          `json:"dataset_bytes"` // the live dataset the workload left (per server; nearly constant)
	Entries    []MemoryEntry `json:"entries"`       // by rank
	Control    *MemoryEntry  `json:"control,omitempty"`
	Confidence float64       `json:"confidence"` // of each ratio's interval
	// Spread is the median over images of the coefficient of variation of
	// RSS after the churn across an image's servers.
	Spread Num      `json:"spread"`
	Notes  []string `json:"notes,omitempty"`
}

// MemoryEntry is one image's memory figures: the mean over its servers of
// each, with a 95% t interval, and its RSS ratio to the primary reference.
type MemoryEntry struct {
	Image     string `json:"image"`
	Allocator string `json:"allocator"`
	Reference bool   `json:"reference,omitempty"`
	Rank      int    `json:"rank"`    // as Entry.Rank: 1 + the entries separated from it above (1 = least RSS)
	RankHi    int    `json:"rank_hi"` // as Entry.RankHi
	N         int    `json:"n"`       // servers with figures
	Failed    int    `json:"failed,omitempty"`
	OOM       int    `json:"oom,omitempty"`
	// After the churn.
	RSS           Stat `json:"rss"`
	Used          Stat `json:"used_memory"`
	Frag          Stat `json:"fragmentation"`           // mem_fragmentation_ratio
	AllocatorFrag Stat `json:"allocator_fragmentation"` // allocator_frag_ratio (jemalloc only)
	Peak          Stat `json:"peak"`                    // the container's peak, from its cgroup
	FillOps       Stat `json:"fill_ops"`                // fill phase, SETs per second
	// After active defragmentation, where the build supports it.
	Defrag          bool `json:"defrag"`
	RSSDefrag       Stat `json:"rss_defrag"`
	DefragRecovered Stat `json:"defrag_recovered"` // share of the RSS defragmentation gave back
	DefragCPU       Stat `json:"defrag_cpu_seconds"`
	// RSS after the churn against the primary reference's (< 1: less).
	Ratio   Num    `json:"ratio"`
	Lo      Num    `json:"lo"`
	Hi      Num    `json:"hi"`
	Verdict string `json:"verdict"` // less, more, tie, reference, or no spread measured
}

// Stat is a mean over servers with its 95% t interval.
type Stat struct {
	Mean Num `json:"mean"`
	Lo   Num `json:"lo"`
	Hi   Num `json:"hi"`
	N    int `json:"n"`
}

// Memory verdicts.
const (
	MemoryLess = "less"
	MemoryMore = "more"
	// MemoryNoSpread: both sides' figures have no spread at all, so the
	// comparison has no error estimate and gives no verdict.
	MemoryNoSpread = "no spread measured"
)

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

// Estimate is a mean log ratio over replicates with its interval. The
// replicate (a fresh pair of containers) is the unit: windows of one
// replicate share its containers and are averaged first. With both sides
// measured at least twice the side (slot) effect is removed as in a
// two-period crossover: the estimate is the mean of the two sides' means
// and the error comes from the spread within each side (df = n − 2).
type Estimate struct {
	Ratio      Num     `json:"ratio"` // exp(mean log ratio): > 1 faster
	Lo         Num     `json:"lo"`
	Hi         Num     `json:"hi"`
	Confidence float64 `json:"confidence"` // coverage of [Lo, Hi] (simultaneous over the family for primary results)
	// LogMean, SE, DF, SideEffect and WindowSD are Num: one replicate has
	// no SE (NaN) and an exact estimate an infinite df; JSON gets null.
	LogMean    Num  `json:"log_mean"`
	SE         Num  `json:"se"` // standard error of LogMean
	DF         Num  `json:"df"`
	P          Num  `json:"p"`           // two-sided t test of ratio = 1
	SignRankP  Num  `json:"sign_rank_p"` // Wilcoxon signed-rank over the replicate values: a cross-check
	Replicates int  `json:"replicates"`
	Windows    int  `json:"windows"`
	Balanced   bool `json:"balanced"`    // both sides measured ≥ 2 times: the side effect was removed
	SideEffect Num  `json:"side_effect"` // estimated slot bias, log (slot A over slot B), 0 when unbalanced
	WindowSD   Num  `json:"window_sd"`   // sd of the per-window log ratios around their replicate's mean
	// Draws is how many layout draws of the image's build spec the
	// replicates ran: above 1 the SE is the nested one (draws random, so
	// the interval covers the build spec); 0 or 1 it covers one binary.
	Draws int `json:"draws,omitempty"`
	// LayoutVar is the part of SE² that is the layout draws' (what the
	// draw means' spread leaves after their replicates' own noise, at
	// least 0): runs of the same draws share that error, so merging runs
	// does not shrink it. 0 for one binary, or where the draws' means
	// vary no more than their replicates explain.
	LayoutVar Num `json:"layout_var,omitempty"`
}

// LayoutSpread is how much code layout moves one image's score against
// the primary reference under one runtime: the same objects linked in L
// orders (the draws), replicates spread over them. The variance
// components come from a one-way random-effects analysis of the
// replicates' score values (after the slot effect): SigmaLayout is the
// between-draw standard deviation (log ratio, truncated at 0), Share its
// part of one replicate's variance, F and P the test that the draws
// differ at all (MS between over MS within).
type LayoutSpread struct {
	Image       string      `json:"image"`
	Runtime     string      `json:"runtime"`
	Draws       []DrawScore `json:"draws"`
	SigmaLayout Num         `json:"sigma_layout"`
	SigmaWithin Num         `json:"sigma_within"`
	Share       Num         `json:"share"`
	F           Num         `json:"f"`
	DFBetween   int         `json:"df_between"`
	DFWithin    int         `json:"df_within"`
	P           Num         `json:"p"`
	// Range is the fastest draw over the slowest (both chosen after the
	// fact, so its interval, uncorrected, overstates its precision: the F
	// test is the test of layout).
	Range   Estimate `json:"range"`
	Fastest int      `json:"fastest"`
	Slowest int      `json:"slowest"`
}

// DrawScore is one layout draw's own score against the primary reference
// (its replicates only, with the within-draw SE of the whole analysis).
type DrawScore struct {
	Draw    int    `json:"draw"`
	Name    string `json:"name"`     // the draw's entry: the spec's name for draw 1
	ImageID string `json:"image_id"` // the draw's image
	Estimate
}

// HalfWidth is the interval's relative half-width: the smallest ratio
// difference from 1 it can tell (0.01 = ±1%). NaN without an interval.
func (e Estimate) HalfWidth() float64 {
	if e.Lo.IsNaN() || e.Hi.IsNaN() {
		return math.NaN()
	}
	return math.Sqrt(float64(e.Hi)/float64(e.Lo)) - 1
}

// PairResult is the analysis of one pair on one benchmark (Test != "") or
// its score over every benchmark (Test == "").
type PairResult struct {
	PairKey
	Kind     string `json:"kind"`
	Test     string `json:"test,omitempty"`
	Pipeline int    `json:"pipeline,omitempty"`
	Family   string `json:"family"`
	// Benchmarks is how many benchmarks the row covers (1 for a
	// per-benchmark row).
	Benchmarks int `json:"benchmarks"`
	Estimate
	PAdj    Num    `json:"p_adj"` // Holm over the primary family (primary results only)
	Verdict string `json:"verdict"`
	// SplitZ compares the estimate from odd windows with the one from even
	// windows (score rows): |z| well above 2 means the windows disagree
	// with themselves more than the interval admits.
	SplitZ Num `json:"split_z"`
	// Saturation is the median over windows of both servers' CPU shares
	// summed: ≈ 1 per server CPU when both were saturated.
	Saturation float64 `json:"saturation"`
	Steal      float64 `json:"steal"` // median steal share over the windows
}

// Answer is whether a ranking answers the question it was run for: the
// primary family estimated to the profile's resolution, on an A/A control
// with replicates enough to judge, with few measurements lost.
type Answer struct {
	Given  bool     `json:"given"`
	Why    []string `json:"why,omitempty"`    // why there is no answer
	Change []string `json:"change,omitempty"` // what to change to get one
}

// Resolution is the precision the run achieved on the primary family.
type Resolution struct {
	Median Num `json:"median"` // median over the primary results of the interval's half-width (0.01 = ±1%)
	Max    Num `json:"max"`    // the widest
	N      int `json:"n"`
}

// Control is the A/A contrast of a runtime: the primary reference paired
// with itself. Its true ratio is exactly 1.
type Control struct {
	Runtime string `json:"runtime"`
	Estimate
	Significant bool `json:"significant"` // uncorrected p < alpha: the run is not to be trusted
	SplitZ      Num  `json:"split_z"`
}

// LatencyRanking is the fixed-rate latency measure: each cell's
// percentiles over its trials, and each runtime against the first under
// the same image, percentile by percentile. Every interval is about these
// images in this run: a trial is a fresh server, so it covers the spread
// between servers and between the machine's spells, not between runs.
type LatencyRanking struct {
	Plan        LatencyPlan          `json:"plan"`
	Level       float64              `json:"level"`        // each cell's intervals' coverage
	FamilyLvl   float64              `json:"family_level"` // the comparisons' simultaneous coverage (Bonferroni over all of them)
	Cells       []LatencyCellSummary `json:"cells"`
	Comparisons []LatencyComparison  `json:"comparisons"`
	NotCounted  int                  `json:"not_counted"` // trials recorded but not counted (the generator fell behind, CPU stolen)
}

// LatencyCellSummary is one cell's percentiles over its counted trials.
type LatencyCellSummary struct {
	LatencyCell
	N           int                 `json:"n"`
	Percentiles []LatencyPercentile `json:"percentiles"`
	// the generator's send lag (median over the trials of each trial's
	// p50 and p99, µs), and whether it is most of the median latency: then
	// the cell measures the generator as much as the server
	SendLagP50Us   Num  `json:"send_lag_p50_us"`
	SendLagP99Us   Num  `json:"send_lag_p99_us"`
	GeneratorBound bool `json:"generator_bound,omitempty"` // at the median
	// GeneratorBoundTail: the same at the 99th percentile (send lag p99
	// over half the latency p99): the tail figures measure the generator
	GeneratorBoundTail bool `json:"generator_bound_tail,omitempty"`
}

// LatencyPercentile is one percentile of a cell: the geometric mean over
// its trials, microseconds, with a t interval on the logs.
type LatencyPercentile struct {
	Q  string `json:"q"` // p50, p95, p99, p99.9
	Us Num    `json:"us"`
	Lo Num    `json:"lo"`
	Hi Num    `json:"hi"`
	// SELog is the standard error of the log of Us (the t interval's):
	// two runs' figures are compared with it (rank.AgreeLatency).
	SELog Num `json:"se_log"`
}

// LatencyComparison is one runtime's percentile against the first
// runtime's for one image: their ratio (> 1: higher latency) with a
// simultaneous interval, Welch's t on the logs.
type LatencyComparison struct {
	Image   string `json:"image"`
	Runtime string `json:"runtime"`
	Base    string `json:"base_runtime"`
	Q       string `json:"q"`
	Ratio   Num    `json:"ratio"`
	Lo      Num    `json:"lo"`
	Hi      Num    `json:"hi"`
	P       Num    `json:"p"`
	Verdict string `json:"verdict"` // lower, higher, tie
}

// Decision is the answer to "which entry is fastest" under one runtime:
// the entry with the best estimate (the leader) compared one-sided with
// every other entry, Bonferroni over those comparisons (Hsu's multiple
// comparisons with the best): the leader is Settled as the fastest when
// every comparison's lower bound is above 1, and with probability at least
// 1 − Alpha no entry that is not the fastest (one tied with the fastest
// included) is ever settled as it. Rivals not separated from the leader
// may be the fastest: the decision names them as tied with it.
type Decision struct {
	Runtime string  `json:"runtime"`
	Leader  string  `json:"leader"`
	Alpha   float64 `json:"alpha"`
	// Look is the look this decision was made at, of Looks the bench
	// could take (1 of 1 for a fixed design), and LookAlpha the share of
	// Alpha it spent (Alpha itself at 1 of 1).
	Look      int            `json:"look"`
	Looks     int            `json:"looks"`
	LookAlpha float64        `json:"look_alpha"`
	Level     float64        `json:"level"` // each one-sided bound's confidence, 1 − LookAlpha/(entries − 1)
	Settled   bool           `json:"settled"`
	Rivals    []DecisionPair `json:"rivals"`    // every other entry, closest first
	Median    Num            `json:"median_hw"` // the median of the rivals' half-widths: the decision's resolution
}

// DecisionPair is the leader against one other entry: the ratio
// leader/entry, its one-sided lower bound and the half-width
// (exp(t·SE) − 1) the bound sits below the ratio.
type DecisionPair struct {
	Image     string `json:"image"`
	Reference bool   `json:"reference,omitempty"`
	Ratio     Num    `json:"ratio"`
	Lo        Num    `json:"lo"`
	HalfWidth Num    `json:"half_width"`
	DF        Num    `json:"df"`
	Separated bool   `json:"separated"` // Lo > 1: the leader is faster than this entry
}

// Shortfall is the most the leader may be slower than a rival it is not
// separated from: 1/Lo − 1 for the lowest of their bounds (0 when every
// rival is separated; NaN when one has no bound). Shipping the leader
// then costs at most this against the truly fastest entry, at the
// decision's confidence (Hsu's comparisons with the best).
func (d Decision) Shortfall() float64 {
	w := 0.0
	for _, r := range d.Rivals {
		if r.Separated {
			continue
		}
		if r.Lo.IsNaN() || !(r.Lo > 0) {
			return math.NaN()
		}
		w = math.Max(w, 1/float64(r.Lo)-1)
	}
	return w
}

// Tied are the rivals not separated from the leader.
func (d Decision) Tied() []string {
	var out []string
	for _, r := range d.Rivals {
		if !r.Separated {
			out = append(out, r.Image)
		}
	}
	return out
}

// Decision returns the decision under rt.
func (r *Ranking) Decision(rt string) (Decision, bool) {
	for _, d := range r.Decisions {
		if d.Runtime == rt {
			return d, true
		}
	}
	return Decision{}, false
}
