package results

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"
)

// LatencyDir holds the fixed-rate latency measure: its plan (the rate it
// sends at and the capacities it was drawn from) and one record per trial.
const LatencyDir = "latency"

// LatencyPlanRel is the latency measure's plan's record.
var LatencyPlanRel = filepath.Join(LatencyDir, "plan.json")

// LatencyPlan is the rate every latency trial of a run sends at, fixed
// before the first trial (a resumed run keeps it), and where it came
// from: Share of the slowest cell's closed-loop capacity, or a rate the
// profile gave.
type LatencyPlan struct {
	Test       string              `json:"test"`
	Rate       float64             `json:"rate"`            // requests/s in total
	Share      float64             `json:"share,omitempty"` // of Slowest's capacity (0: the profile gave Rate)
	Slowest    string              `json:"slowest,omitempty"`
	Capacities []LatencyCapacity   `json:"capacities,omitempty"`
	Clients    int                 `json:"clients"`
	Duration   time.Duration       `json:"duration"`
	Cells      []LatencyCell       `json:"cells"`
	Skipped    []LatencySkippedRun `json:"skipped,omitempty"` // runtimes the measure cannot take, and why
}

// LatencyCell is one image under one runtime.
type LatencyCell struct {
	Image   string `json:"image"`
	ImageID string `json:"image_id"`
	Runtime string `json:"runtime"`
}

// LatencyCapacity is a cell's closed-loop requests/s at the measure's
// connections, without pipelining: what the rate is a share of.
type LatencyCapacity struct {
	LatencyCell
	OpsPerSec float64 `json:"ops_per_sec"`
}

// LatencySkippedRun is a runtime left out of the latency measure.
type LatencySkippedRun struct {
	Runtime string `json:"runtime"`
	Why     string `json:"why"`
}

// LatencyTrial is one fixed-rate trial: a fresh server of the image under
// the runtime, an open-loop generator sending at Rate, each latency
// measured from its request's intended send time.
type LatencyTrial struct {
	LatencyCell
	Test       string  `json:"test"`
	Rep        int     `json:"rep"`
	Seq        int     `json:"seq"`
	Rate       float64 `json:"rate"`         // asked, requests/s in total
	SentPerSec float64 `json:"sent_per_sec"` // achieved arrival rate
	OpsPerSec  float64 `json:"ops_per_sec"`  // replies/s
	Requests   int64   `json:"requests"`
	Errors     int64   `json:"errors"`
	// percentiles of the latency, microseconds
	P50Us  float64 `json:"p50_us"`
	P95Us  float64 `json:"p95_us"`
	P99Us  float64 `json:"p99_us"`
	P999Us float64 `json:"p999_us"`
	MaxUs  float64 `json:"max_us"`
	// the generator's own lateness in writing each request after its
	// intended time (µs): its share of every figure above
	SendLagP50Us float64 `json:"send_lag_p50_us"`
	SendLagP99Us float64 `json:"send_lag_p99_us"`
	Hist         string  `json:"hist,omitempty"` // HdrHistogram (µs), loadgen.DecodeHist
	// Behind is why the trial does not count ("" = it does): the
	// generator fell behind its rate, or the machine was not quiet.
	Behind   string        `json:"behind,omitempty"`
	Steal    float64       `json:"steal"`
	Started  time.Time     `json:"started"`
	Duration time.Duration `json:"duration"`
	CPUModel string        `json:"cpu_model,omitempty"`
}

// LatencyRel is where one latency trial's record lives.
func LatencyRel(c LatencyCell, rep int) string {
	return filepath.Join(LatencyDir, "trials", c.Runtime, fmt.Sprintf("%s-%d.json", c.Image, rep))
}

// LoadLatencyTrials reads every latency trial of a run folder, in the
// order they ran (LoadDir's policy for a record that cannot be read).
func LoadLatencyTrials(r *Run) ([]LatencyTrial, []Skipped, error) {
	return loadInOrder(r, filepath.Join(LatencyDir, "trials"), func(t *LatencyTrial) error {
		if t.Image == "" || t.Runtime == "" || t.Rate <= 0 {
			return errors.New("not a latency trial: no image, runtime or rate")
		}
		return nil
	}, func(t *LatencyTrial) int { return t.Seq })
}

// LoadLatencyPlan reads the latency measure's plan (ok false: none yet).
func LoadLatencyPlan(r *Run) (LatencyPlan, bool, error) {
	var p LatencyPlan
	if !r.Exists(LatencyPlanRel) {
		return p, false, nil
	}
	err := r.ReadJSON(LatencyPlanRel, &p)
	return p, err == nil, err
}
