package results

import (
	"errors"
	"fmt"
	"time"
)

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

// PairKey names a co-scheduled comparison: Image under Runtime against
// Base under BaseRuntime, both servers pinned to the same CPUs and loaded
// at the same time.
//
//   - an image pair: Runtime == BaseRuntime, Image != Base (Base is the
//     primary reference): the ranking's observations;
//   - the A/A control: Image == Base and Runtime == BaseRuntime;
//   - a runtime axis: Image == Base, Runtime != BaseRuntime.
type PairKey struct {
	Image       string `json:"image"`
	Runtime     string `json:"runtime"`
	Base        string `json:"base"`
	BaseRuntime string `json:"base_runtime"`
}

// Pair kinds.
const (
	PairImage   = "image"
	PairControl = "control"
	PairAxis    = "axis"
)

// Kind says what the pair measures.
func (k PairKey) Kind() string {
	switch {
	case k.Image == k.Base && k.Runtime == k.BaseRuntime:
		return PairControl
	case k.Image == k.Base:
		return PairAxis
	}
	return PairImage
}

func (k PairKey) String() string {
	if k.Runtime == k.BaseRuntime {
		return fmt.Sprintf("%s vs %s under %s", k.Image, k.Base, k.Runtime)
	}
	return fmt.Sprintf("%s: %s vs %s", k.Image, k.Runtime, k.BaseRuntime)
}

// SideStats is what one server of a pair did in one window.
type SideStats struct {
	Requests  int64         `json:"requests"`
	Errors    int64         `json:"errors"`
	Misses    int64         `json:"misses"`      // nil replies (GET of a missing key): 0 once keys are prefilled
	CPUNanos  uint64        `json:"cpu_nanos"`   // the server container's cgroup CPU time over the window
	CPUShare  float64       `json:"cpu_share"`   // CPUNanos / wall / server CPUs
	OpsPerSec float64       `json:"ops_per_sec"` // the generator's figure (co-scheduled: not an absolute figure)
	Elapsed   time.Duration `json:"elapsed"`     // the generator's measured time
}

// NsPerOp is the server's CPU time per operation.
func (s SideStats) NsPerOp() float64 {
	if s.Requests <= 0 {
		return 0
	}
	return float64(s.CPUNanos) / float64(s.Requests)
}

// Window is one measured window of a co-scheduled pair.
type Window struct {
	Test     string        `json:"test"`
	Pipeline int           `json:"pipeline"`
	Index    int           `json:"index"` // window number within its replicate and benchmark, from 0
	Started  time.Time     `json:"started"`
	Wall     time.Duration `json:"wall"`
	// Image and Base are the two servers' figures (Image = the pair key's
	// Image under Runtime), whatever slot each had.
	Image SideStats `json:"image"`
	Base  SideStats `json:"base"`
	// LogRatio is log(Base's CPU ns/op / Image's): > 0 when Image does the
	// same work with less CPU, i.e. is faster.
	LogRatio float64 `json:"log_ratio"`
	Steal    float64 `json:"steal"` // share of the server CPUs' time stolen by the hypervisor (/proc/stat)
}

// Bench returns the window's benchmark.
func (w Window) Bench() Bench { return Bench{w.Test, max(w.Pipeline, 1)} }

// Rejected is a window that was measured but not accepted, with why; it
// was measured again.
type Rejected struct {
	Test     string `json:"test"`
	Pipeline int    `json:"pipeline"`
	Index    int    `json:"index"`
	Reason   string `json:"reason"`
}

// Replicate is one fresh pair of containers and the windows measured on
// it. The bench stage writes it to pairs/... after every window.
type Replicate struct {
	PairKey
	Rep int `json:"rep"` // replicate number of this pair, from 0
	// ImageReference: the pair's Image is itself a reference (the second
	// reference, or the primary one in the control and on the axes).
	ImageReference bool `json:"image_reference"`
	Seq            int  `json:"seq"` // global order in which replicates were scheduled
	// Swapped: the image's server is in slot B (its container started
	// second and its generator launched second); sides are swapped in
	// half of each pair's replicates.
	Swapped  bool       `json:"swapped"`
	Windows  []Window   `json:"windows"`
	Rejected []Rejected `json:"rejected,omitempty"`
	Failed   string     `json:"failed,omitempty"` // set when the replicate was given up
	CPUModel string     `json:"cpu_model,omitempty"`
}

// LoadReplicates reads every co-scheduled replicate of a run folder
// (pairs/), in the order they were scheduled, with LoadDir's policy: a bad
// file is left out and listed, and a resumed bench measures that replicate
// again.
func LoadReplicates(r *Run) ([]Replicate, []Skipped, error) {
	return loadInOrder(r, PairsDir, func(rep *Replicate) error {
		if rep.Image == "" || rep.Base == "" {
			return errors.New("not a replicate: no image or base")
		}
		return nil
	}, func(rep *Replicate) int { return rep.Seq })
}
