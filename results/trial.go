package results

import (
	"errors"
	"time"
)

// Trial is one finished benchmark trial: one image, under one runtime
// configuration, one test at one pipeline depth, one repetition. The bench
// stage writes each as trials/<...>.json the moment it finishes.
type Trial struct {
	Variant   string `json:"variant"`            // variant or reference name
	VariantID string `json:"variant_id"`         // variants.Variant.ID
	ImageID   string `json:"image_id,omitempty"` // the image ID (config digest) measured
	Reference bool   `json:"reference"`          // a reference (stock, official) rather than a tuned variant
	Runtime   string `json:"runtime"`            // runtime configuration name
	Test      string `json:"test"`               // loadgen test name, e.g. SET, LRANGE_100
	Clients   int    `json:"clients"`
	Pipeline  int    `json:"pipeline"`
	Rep       int    `json:"rep"` // repetition number for this (variant, runtime, test, pipeline), from 0
	Seq       int    `json:"seq"` // global order in which trials ran

	OpsPerSec float64 `json:"ops_per_sec"`
	Requests  int64   `json:"requests"`
	Errors    int64   `json:"errors"`
	AvgMs     float64 `json:"avg_ms"`
	P50Ms     float64 `json:"p50_ms"`
	P99Ms     float64 `json:"p99_ms"`
	P999Ms    float64 `json:"p999_ms"`
	MaxMs     float64 `json:"max_ms"`
	Hist      string  `json:"hist,omitempty"` // HdrHistogram, encoded (hdrhistogram-go Encode, base64)

	ServerCPUNsPerOp float64 `json:"server_cpu_ns_per_op"` // server container's cgroup CPU time / ops
	ClientCPUShare   float64 `json:"client_cpu_share"`     // generator CPU time / wall time / its CPUs: near 1 means generator-bound
	// MachineCPUNsPerOp is the whole machine's busy CPU time (server,
	// generator, docker-proxy, kernel) per operation, from /proc/stat.
	MachineCPUNsPerOp float64 `json:"machine_cpu_ns_per_op"`
	// ProxyCPUNsPerOp is docker-proxy's CPU time per operation (bridge
	// networking with a published port; 0 when no docker-proxy runs). It
	// is not in the server's cgroup: docker-proxy runs on the host,
	// unpinned.
	ProxyCPUNsPerOp float64 `json:"proxy_cpu_ns_per_op"`
	Steal           float64 `json:"steal"`  // share of the machine's CPU time stolen during the trial
	Misses          int64   `json:"misses"` // nil replies (GET misses): 0 with the keyspace prefilled
	RSSBytes        int64   `json:"rss_bytes"`
	Fragmentation   float64 `json:"mem_fragmentation_ratio"`

	Started  time.Time     `json:"started"`
	Duration time.Duration `json:"duration"`
	CPUModel string        `json:"cpu_model,omitempty"`
}

// LoadTrials reads every standalone trial of a run folder (trials/), in
// the order they ran, with LoadDir's policy: a file that cannot be decoded,
// or names no image or test, is left out and listed; rank names it, and a
// resumed bench measures that trial again.
func LoadTrials(r *Run) ([]Trial, []Skipped, error) {
	return loadInOrder(r, TrialsDir, func(t *Trial) error {
		if t.Variant == "" || t.Test == "" {
			return errors.New("not a trial: no variant or test name")
		}
		return nil
	}, func(t *Trial) int { return t.Seq })
}
