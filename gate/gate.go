// Package gate decides whether a candidate image may replace a baseline in
// CI: from the candidate's score against the baseline (co-scheduled, the
// baseline as the primary reference) and the run's A/A control, with a
// stated margin. The decision is pure: the measuring is the pipeline's.
package gate

import (
	"fmt"
	"math"
)

// Outcomes and their exit codes. 1 is left to errors (the gate could not
// run at all), so a CI job tells "slower" from "broken".
const (
	Pass       = "pass"        // not slower by more than the margin, as far as the interval shows
	Fail       = "fail"        // slower by more than the margin, and the interval excludes no change
	CannotTell = "cannot-tell" // the run cannot decide: a failed A/A control, no answer, or an interval reaching past the margin
)

// ExitCode is the process exit status for an outcome.
func ExitCode(outcome string) int {
	switch outcome {
	case Pass:
		return 0
	case Fail:
		return 2
	default:
		return 3
	}
}

// Interval is a ratio (candidate or baseline over baseline: > 1 faster)
// with its 95% interval.
type Interval struct {
	Ratio float64 `json:"ratio"`
	Lo    float64 `json:"lo"`
	Hi    float64 `json:"hi"`
}

func (iv Interval) String() string {
	return fmt.Sprintf("%.4f [%.4f, %.4f]", iv.Ratio, iv.Lo, iv.Hi)
}

func (iv Interval) valid() bool {
	return iv.Ratio > 0 && iv.Lo > 0 && iv.Hi >= iv.Lo && !math.IsInf(iv.Hi, 0) && !math.IsNaN(iv.Ratio+iv.Lo+iv.Hi)
}

// Input is what one gate run measured.
type Input struct {
	Margin    float64  `json:"margin"`    // the slowdown allowed, as a share (0.05 = 5%)
	Candidate Interval `json:"candidate"` // the candidate against the baseline
	Control   Interval `json:"control"`   // the baseline against itself (the A/A control; true ratio 1)
	// ControlSignificant is the ranking's own test of the A/A control.
	ControlSignificant bool `json:"control_significant"`
	// Answered is whether the run reached the precision it was asked for
	// (rank's Answer.Given); Why says why not.
	Answered bool     `json:"answered"`
	Why      []string `json:"why,omitempty"`
}

// Decision is the gate's verdict on an Input.
type Decision struct {
	Input
	Outcome  string `json:"outcome"`
	ExitCode int    `json:"exit_code"`
	Reason   string `json:"reason"`
}

// Decide applies the rules, in order:
//   - the A/A control has no interval, or is significant and off 1 by half
//     the margin or more: cannot tell (the bench does not measure
//     straight; a significant control within half the margin is the
//     1-in-20 chance of a 95% interval and decides nothing here);
//   - the candidate has no interval, or the run gave no answer: cannot tell;
//   - the candidate is slower than 1−margin and its interval lies under 1:
//     fail;
//   - its interval reaches under 1−margin: cannot tell (a slowdown beyond
//     the margin is not excluded);
//   - else pass (a tie, or faster).
func Decide(in Input) Decision {
	d := Decision{Input: in}
	m := in.Margin
	floor := 1 - m
	switch {
	case !(m > 0 && m < 1):
		d.Outcome, d.Reason = CannotTell, fmt.Sprintf("margin %g: want a share between 0 and 1", m)
	case !in.Control.valid():
		d.Outcome, d.Reason = CannotTell, "the A/A control has no interval (too few replicates)"
	case in.ControlSignificant && math.Abs(in.Control.Ratio-1) >= m/2:
		d.Outcome, d.Reason = CannotTell, fmt.Sprintf("the A/A control failed: the baseline against itself read %s, off 1 by %.1f%%, half the margin or more: this run does not measure straight", in.Control, 100*math.Abs(in.Control.Ratio-1))
	case !in.Candidate.valid():
		d.Outcome, d.Reason = CannotTell, "the candidate has no interval (too few replicates)"
	case !in.Answered:
		d.Outcome, d.Reason = CannotTell, "the run gave no answer"
		if len(in.Why) > 0 {
			d.Reason += ": " + in.Why[0]
		}
	case in.Candidate.Ratio < floor && in.Candidate.Hi < 1:
		d.Outcome, d.Reason = Fail, fmt.Sprintf("the candidate is %.1f%% slower than the baseline, %s, beyond the %.1f%% margin, and the interval excludes no change", 100*(1-in.Candidate.Ratio), in.Candidate, 100*m)
	case in.Candidate.Lo < floor:
		d.Outcome, d.Reason = CannotTell, fmt.Sprintf("the candidate reads %s: the interval reaches below %.4f, so a slowdown beyond the %.1f%% margin is not excluded (more replicates, or a wider margin)", in.Candidate, floor, 100*m)
	default:
		d.Outcome = Pass
		switch {
		case in.Candidate.Lo > 1:
			d.Reason = fmt.Sprintf("the candidate is faster than the baseline: %s", in.Candidate)
		case in.Candidate.Hi < 1:
			d.Reason = fmt.Sprintf("the candidate is slower than the baseline, %s, but within the %.1f%% margin", in.Candidate, 100*m)
		default:
			d.Reason = fmt.Sprintf("the candidate cannot be told from the baseline: %s (a tie)", in.Candidate)
		}
	}
	d.ExitCode = ExitCode(d.Outcome)
	return d
}
