package results

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/redis-variants/redis-variants/loadgen"
)

// MemoryTrial is one fresh server's run of the memory workload: what its
// allocator did with the dataset (loadgen.MemoryResult: INFO memory after
// each phase, defragmentation), the container's peak memory from its
// cgroup, and whether the OOM killer ended it.
type MemoryTrial struct {
	Image     string `json:"image"`
	VariantID string `json:"variant_id,omitempty"`
	ImageID   string `json:"image_id,omitempty"` // the image ID (config digest) whose server this was
	Reference bool   `json:"reference,omitempty"`
	// Control marks the primary reference's second set of servers, its
	// A/A control: the same image, so its true ratio to the first is 1.
	Control   bool                 `json:"control,omitempty"`
	Rep       int                  `json:"rep"`
	Seq       int                  `json:"seq"`
	Runtime   string               `json:"runtime"`
	CPUModel  string               `json:"cpu_model,omitempty"`
	Allocator string               `json:"allocator,omitempty"` // mem_allocator, as the server reports it
	Result    loadgen.MemoryResult `json:"result"`
	PeakBytes int64                `json:"peak_bytes,omitempty"` // the container cgroup's peak charge
	Limit     int64                `json:"limit,omitempty"`      // the container's memory limit
	OOM       bool                 `json:"oom,omitempty"`        // the kernel's OOM killer stopped the server
	Error     string               `json:"error,omitempty"`      // why the trial has no figures
	Started   time.Time            `json:"started"`
	Duration  time.Duration        `json:"duration"`
}

// Name is the image as the memory ranking knows it: the A/A control is
// "<image> (A/A)".
func (t MemoryTrial) Name() string {
	if t.Control {
		return t.Image + " (A/A)"
	}
	return t.Image
}

// Churned is the server's memory after the churn (fill, overwrite,
// delete), the figures the ranking compares.
func (t MemoryTrial) Churned() (loadgen.MemStats, bool) {
	p, ok := t.Result.Phase("delete")
	return p.After, ok && t.Error == ""
}

// MemoryRel is where one memory trial's record lives in the run folder.
func MemoryRel(image string, control bool, rep int) string {
	dir := image
	if control {
		dir += "~aa"
	}
	return filepath.Join(MemoryDir, dir, fmt.Sprintf("%d.json", rep))
}

// LoadMemory reads every memory trial of a run in the order they ran,
// with LoadDir's policy for files that cannot be read.
func LoadMemory(r *Run) ([]MemoryTrial, []Skipped, error) {
	return loadInOrder(r, MemoryDir, func(t *MemoryTrial) error {
		if t.Image == "" {
			return errors.New("not a memory trial: no image")
		}
		return nil
	}, func(t *MemoryTrial) int { return t.Seq })
}
