package rank

import "github.com/redis-variants/redis-variants/results"

// MinSaturation is the least share of the server CPUs the two servers of
// a pair must use together in a window: below it they were not both
// saturated (the generators, not the servers, set the pace) and the bench
// stage measures the window again.
const MinSaturation = 0.9

// MaxSteal is the largest share of the server CPUs' time the hypervisor
// may steal during a window before the bench stage measures it again.
const MaxSteal = 0.05

// The co-scheduled pair records live in results (the run folder holds
// them under pairs/); these are their names here.
type (
	PairKey   = results.PairKey
	SideStats = results.SideStats
	Window    = results.Window
	Rejected  = results.Rejected
	Replicate = results.Replicate
)

// Pair kinds.
const (
	KindImage   = results.PairImage
	KindControl = results.PairControl
	KindAxis    = results.PairAxis
)
