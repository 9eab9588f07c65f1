package results

import "github.com/redis-variants/redis-variants/variants"

// ClaimResult is this run's answer to one published claim: the ratio of
// the comparison the claim names (A over B), its interval and what the
// interval covers, and whether the published direction holds here.
type ClaimResult struct {
	variants.Claim
	// Found is false when the ranking has no such comparison; Why says
	// what is missing.
	Found bool   `json:"found"`
	Why   string `json:"why,omitempty"`
	Ratio Num    `json:"ratio"`
	Lo    Num    `json:"lo"`
	Hi    Num    `json:"hi"`
	// Confidence is the interval's coverage (simultaneous over its family
	// where the comparison belongs to one).
	Confidence float64 `json:"confidence"`
	// Covers says what the figure measures and what its interval covers,
	// e.g. "co-scheduled server CPU per operation, 16 replicates of one
	// binary in one run".
	Covers string `json:"covers"`
	// Direction compares the published ratio with this interval: Holds
	// (the interval is on the published side of 1), Opposite, TieHere
	// (the interval holds 1), or "" (no published ratio, or not found).
	Direction string `json:"direction,omitempty"`
	// Within says whether the published ratio lies inside the interval.
	Within bool `json:"within"`
}

// Claim directions.
const (
	DirectionHolds    = "holds"
	DirectionOpposite = "opposite"
	DirectionTie      = "tie here"
)
