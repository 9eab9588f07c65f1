package rank

import "github.com/redis-variants/redis-variants/results"

// MinCoreBusy is the least share of their unstolen time the server CPUs
// must be busy in a window (their own account, /proc/stat: user, system,
// irq and softirq): below it the servers waited for the generators, which
// then set the pace, and the window is not accepted.
const MinCoreBusy = 0.95

// MinSaturation is the least share of the server CPUs the two servers'
// cgroups must use together in a window. The rest of a busy core is the
// kernel's network work (softirq, charged to no cgroup: 7-10% seen here)
// and whatever else ran there; below this bound something else did.
const MinSaturation = 0.8

// MaxSteal is the largest share of the server CPUs' time the hypervisor
// may steal during a window before the window is not accepted.
const MaxSteal = 0.05

// The co-scheduled pair records live in results (the run folder holds
// them under pairs/); these are their names here.
type (
	PairKey   = results.PairKey
	SideStats = results.SideStats
	Window    = results.Window
	Lost      = results.Lost
	Rejected  = results.Rejected
	Replicate = results.Replicate
)

// Pair kinds.
const (
	KindImage   = results.PairImage
	KindControl = results.PairControl
	KindAxis    = results.PairAxis
)
