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
	Misses    int64         `json:"misses"`               // nil replies (GET of a missing key): 0 once keys are prefilled
	CPUNanos  uint64        `json:"cpu_nanos"`            // the server container's cgroup CPU time over the window
	CPUShare  float64       `json:"cpu_share"`            // CPUNanos / the measured interval / server CPUs
	OpsPerSec float64       `json:"ops_per_sec"`          // the generator's figure (co-scheduled: not an absolute figure)
	Elapsed   time.Duration `json:"elapsed"`              // the generator's measured time
	ClientCPU time.Duration `json:"client_cpu,omitempty"` // the generator's own CPU time over the window
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
	// CoreBusy and SoftIRQ are the server CPUs' own account of the window
	// (/proc/stat): the share of their unstolen time that was not idle, and
	// the share spent in softirq, the kernel's network work, which no
	// container's cgroup is charged with. Saturation is judged on CoreBusy;
	// the two cgroup shares (Image.CPUShare + Base.CPUShare) say how much of
	// it the servers themselves used.
	CoreBusy float64 `json:"core_busy"`
	SoftIRQ  float64 `json:"softirq"`
	// ClientBusy and ClientSteal are the client CPUs' account of the window
	// (/proc/stat), where both generators run: a busy share near 1 with the
	// server CPUs idle says the generators were the bottleneck.
	ClientBusy  float64 `json:"client_busy"`
	ClientSteal float64 `json:"client_steal"`
	Load        Load    `json:"load"` // the calibrated load it ran at
	// Before is the busiest CPU's busy share in the 100 ms before the
	// benchmark's load began, with nothing of the bench running: the
	// machine's quiet, waited for (up to 3 s) before every benchmark.
	Before float64 `json:"busy_before"`
}

// Load is how hard a pair's generators drive each server: connections per
// server, and the goroutines driving them (0 = one per connection; N =
// N goroutines in lock step, which costs the client CPU less).
type Load struct {
	Clients int `json:"clients"`
	Threads int `json:"threads,omitempty"`
	// Window is the length of this benchmark's windows when calibration
	// lengthened them (0 = the profile's duration): a benchmark whose
	// requests are so heavy that a window of the profile's length holds
	// only a few rounds of every connection's pipeline.
	Window time.Duration `json:"window,omitempty"`
}

func (l Load) String() string {
	conns := "connections"
	if l.Clients == 1 {
		conns = "connection"
	}
	s := fmt.Sprintf("%d %s per server", l.Clients, conns)
	if l.Threads > 0 {
		s += fmt.Sprintf(" on %d goroutines", l.Threads)
	}
	if l.Window > 0 {
		s += fmt.Sprintf(", %s windows", l.Window)
	}
	return s
}

// Bench returns the window's benchmark.
func (w Window) Bench() Bench { return Bench{w.Test, max(w.Pipeline, 1)} }

// Rejected is a window that was measured but not accepted, with why. It
// is not measured again (retrying until a window passes would select
// windows by their figures): its test is lost for the replicate (Lost).
type Rejected struct {
	Test     string  `json:"test"`
	Pipeline int     `json:"pipeline"`
	Index    int     `json:"index"`
	Reason   string  `json:"reason"`
	Window   *Window `json:"window,omitempty"` // its figures, for the diagnosis; never ranked
}

// Lost is a benchmark a replicate lost, and why.
type Lost struct {
	Test     string `json:"test"`
	Pipeline int    `json:"pipeline"`
	Reason   string `json:"reason"`
}

// Bench returns the lost benchmark.
func (l Lost) Bench() Bench { return Bench{l.Test, max(l.Pipeline, 1)} }

// Replicate is one fresh pair of containers and the windows measured on
// it. The bench stage writes it to pairs/... after every window.
type Replicate struct {
	PairKey
	Rep int `json:"rep"` // replicate number of this pair, from 0
	// ImageReference: the pair's Image is itself a reference (the second
	// reference, or the primary one in the control and on the axes).
	ImageReference bool `json:"image_reference"`
	// ImageID and BaseID are the image IDs (config digests) of the two
	// sides: a replicate describes those images and no others.
	ImageID string `json:"image_id,omitempty"`
	BaseID  string `json:"base_id,omitempty"`
	Seq     int    `json:"seq"` // global order in which replicates were scheduled
	// Swapped: the image's server is in slot B (its container started
	// second and its generator launched second); sides are swapped in
	// half of each pair's replicates.
	Swapped  bool       `json:"swapped"`
	Windows  []Window   `json:"windows"`
	Rejected []Rejected `json:"rejected,omitempty"`
	// Lost are the benchmarks this replicate has no windows of, each with
	// why (a rejected window, a generator or server error): a failed test
	// loses that test, the replicate's other tests stand.
	Lost   []Lost `json:"lost,omitempty"`
	Failed string `json:"failed,omitempty"` // set when the replicate was given up whole (its servers would not start)
	// Replaces is the number of the replicate of this pair this one stands
	// in for (it lost a benchmark or was given up); nil for a planned
	// replicate. A stand-in measures every benchmark on a fresh pair, at
	// the end of the schedule, with its sides as the one it replaces.
	Replaces *int `json:"replaces,omitempty"`
	// Added marks a replicate the bench's extension added after the
	// planned design: it was never promised, so one that comes out short
	// is not a shortfall and gets no stand-in.
	Added bool `json:"added,omitempty"`
	// Look is the look of a sequential bench (profile looks > 1) whose
	// round this replicate belongs to: 1 for the first replicates of
	// every pair (and their stand-ins), m for those added after look
	// m − 1 to the pairs still deciding; 0 in a fixed design.
	Look     int    `json:"look,omitempty"`
	CPUModel string `json:"cpu_model,omitempty"`
	// Draw is the layout draw of the image side (1..L) when the image's
	// build spec has L > 1 draws, and DrawImage that draw's own name (the
	// spec's for draw 1): replicates of a spec spread over its draws, so
	// the pair's interval covers the spec, not one binary. ImageID is the
	// draw's image. 0 and "": the image is one binary.
	Draw      int    `json:"draw,omitempty"`
	DrawImage string `json:"draw_image,omitempty"`
}

// ImageName is the name of the image the replicate's image side ran: its
// layout draw's, or the pair's image.
func (r Replicate) ImageName() string {
	if r.DrawImage != "" {
		return r.DrawImage
	}
	return r.Image
}

// Complete says whether the replicate has windows of every benchmark of
// benches.
func (r Replicate) Complete(benches []Bench) bool {
	have := map[Bench]bool{}
	for _, w := range r.Windows {
		have[w.Bench()] = true
	}
	for _, b := range benches {
		if !have[b] {
			return false
		}
	}
	return true
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

// Calibration is what the bench found before its design ran: per
// benchmark, the load (connections per server) at which an A/A pair of the
// primary reference kept the server CPUs busy, with the windows each load
// tried gave. The bench writes it once and a resumed bench reuses it.
type Calibration struct {
	Image    string             `json:"image"`     // the image calibrated on (the primary reference)
	ImageRef string             `json:"image_ref"` // its Docker reference, as measured
	Runtime  string             `json:"runtime"`
	CPUModel string             `json:"cpu_model,omitempty"`
	Duration time.Duration      `json:"duration"` // one window
	Benches  []BenchCalibration `json:"benches"`
	Elapsed  time.Duration      `json:"elapsed"`
}

// BenchCalibration is one benchmark's calibration.
type BenchCalibration struct {
	Bench
	Load  Load    `json:"load"` // the load chosen (zero: none kept the server CPU busy)
	Tried []Level `json:"tried"`
}

// Level is one load tried: its windows and whether each was accepted.
type Level struct {
	Load
	Windows   []Window `json:"windows"`
	Rejected  []string `json:"rejected,omitempty"` // why, per window not accepted
	ClientCPU float64  `json:"client_cpu"`         // the two generators' CPU over the client CPUs (1 = the client CPUs were full)
	Error     string   `json:"error,omitempty"`
}

// Saturated says whether every window of the level was accepted.
func (l Level) Saturated() bool { return l.Error == "" && len(l.Rejected) == 0 && len(l.Windows) > 0 }
