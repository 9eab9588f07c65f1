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
	// NotTested: the comparison has no interval (one trial, or no
	// spread measured), so nothing was tested: not a tie, no verdict
	NotTested = "not tested"
)

// Decided says whether verdict v is a finding (faster or slower), not a
// tie, a comparison that was not tested, or the reference itself.
func Decided(v string) bool { return v == Faster || v == Slower }

// Axis is one runtime axis (results.Axis).
type Axis = results.Axis

// DefaultAxes are the runtime axes for the default runtime names.
func DefaultAxes() []Axis {
	return []Axis{
		{Name: "network", Base: "host", Other: "bridge", Label: "bridge networking vs host networking"},
		{Name: "seccomp", Base: "host", Other: "host-unconfined", Label: "seccomp unconfined vs default profile"},
		{Name: "socket", Base: "host", Other: "unix", Label: "unix socket vs TCP (host network)"},
	}
}

// Thresholds are the knobs of the method (results.Thresholds). Start from DefaultThresholds.
type Thresholds = results.Thresholds

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

func withDefaults(th Thresholds) Thresholds {
	d := DefaultThresholds()
	// One level: Alpha decides, Confidence is 1 − Alpha.
	switch {
	case th.Alpha > 0 && th.Alpha < 1:
	case th.Confidence > 0 && th.Confidence < 1:
		th.Alpha = 1 - th.Confidence
	default:
		th.Alpha = d.Alpha
	}
	th.Confidence = 1 - th.Alpha
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

// The ranking record (ranking.json) is declared in results; these are its names here.
type (
	Cell        = results.Cell
	CellSummary = results.CellSummary
	Comparison  = results.Comparison
	Score       = results.Score
	Entry       = results.Entry
	Standings   = results.Standings
	Separation  = results.Separation
	AxisEffect  = results.AxisEffect
	Warning     = results.Warning
	Ranking     = results.Ranking
)

// cellKey seeds a cell's bootstrap stream.
func cellKey(c Cell) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00%d", c.Image, c.Runtime, c.Test, c.Pipeline)
	return h.Sum64()
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
