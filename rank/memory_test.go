package rank

import (
	"math"
	"math/rand"
	"testing"
	"time"

	"github.com/redis-variants/redis-variants/loadgen"
)

// memTrial is a memory trial whose server held rss bytes after the churn.
func memTrial(image string, control bool, rep int, alloc string, rss float64) MemoryTrial {
	st := loadgen.MemStats{UsedMemory: int64(rss * 0.8), UsedMemoryRSS: int64(rss), FragRatio: 1.25, Allocator: alloc}
	res := loadgen.MemoryResult{Dataset: 48 << 20, Phases: []loadgen.MemoryPhase{
		{Name: "fill", OpsPerSec: 50000, After: st}, {Name: "overwrite", After: st}, {Name: "delete", After: st}}}
	if alloc == "jemalloc-5.3.0" {
		res.Defrag, res.DefragCPU = true, 300*time.Millisecond
		d := st
		d.UsedMemoryRSS = int64(rss * 0.9)
		res.Phases = append(res.Phases, loadgen.MemoryPhase{Name: "defrag", After: d})
	}
	return MemoryTrial{Image: image, Control: control, Rep: rep, Allocator: alloc, Result: res, Reference: image == "stock"}
}

// TestMemoryKnownRatios: simulated servers with known RSS (1% noise):
// libc holding 1.30× the reference's and mimalloc 0.90× are found, an
// image with the reference's true RSS and the A/A control are ties, the
// intervals cover the truth, ranks follow RSS, and defragmentation is
// reported only where it ran.
func TestMemoryKnownRatios(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	truth := map[string]float64{"stock": 1, "libc": 1.30, "mimalloc": 0.90, "same": 1}
	alloc := map[string]string{"stock": "jemalloc-5.3.0", "libc": "libc", "mimalloc": "mimalloc", "same": "jemalloc-5.3.0"}
	var ts []MemoryTrial
	for rep := 0; rep < 4; rep++ {
		for _, img := range []string{"stock", "libc", "mimalloc", "same"} {
			ts = append(ts, memTrial(img, false, rep, alloc[img], 100e6*truth[img]*(1+0.01*r.NormFloat64())))
		}
		ts = append(ts, memTrial("stock", true, rep, alloc["stock"], 100e6*(1+0.01*r.NormFloat64())))
	}
	ts = append(ts, MemoryTrial{Image: "libc", Rep: 9, OOM: true, Error: "the OOM killer stopped the server"})
	m := Memory(ts, "stock")
	if m == nil || len(m.Entries) != 4 || m.Control == nil {
		t.Fatalf("memory ranking %+v", m)
	}
	order := ""
	for _, e := range m.Entries {
		order += e.Image + " "
		want := truth[e.Image]
		if e.Image != "stock" && (float64(e.Lo) > want || float64(e.Hi) < want) {
			t.Errorf("%s: %.4f [%.4f, %.4f] does not cover %.2f", e.Image, float64(e.Ratio), float64(e.Lo), float64(e.Hi), want)
		}
	}
	if order != "mimalloc stock same libc " && order != "mimalloc same stock libc " {
		t.Errorf("order %q, want by RSS", order)
	}
	verdicts := map[string]string{}
	ranks := map[string]int{}
	for _, e := range m.Entries {
		verdicts[e.Image], ranks[e.Image] = e.Verdict, e.Rank
	}
	if verdicts["libc"] != More || verdicts["mimalloc"] != Less || verdicts["same"] != Tie || verdicts["stock"] != Self || m.Control.Verdict != Tie {
		t.Errorf("verdicts %v, control %s", verdicts, m.Control.Verdict)
	}
	if ranks["mimalloc"] != 1 || ranks["stock"] != 2 || ranks["same"] != 2 || ranks["libc"] != 4 {
		t.Errorf("ranks %v", ranks)
	}
	for _, e := range m.Entries {
		if e.Image == "libc" && (e.OOM != 1 || e.Failed != 1 || e.N != 4 || e.Defrag) {
			t.Errorf("libc: %+v", e)
		}
		if e.Image == "stock" && (!e.Defrag || math.Abs(float64(e.DefragRecovered.Mean)-0.1) > 0.001 || e.AllocatorFrag.N != 0) {
			t.Errorf("stock's defrag figures: %+v", e)
		}
	}
	if m.Dataset.Mean != 48<<20 || m.Confidence != 1-0.05/4 {
		t.Errorf("dataset %v, confidence %v", m.Dataset.Mean, m.Confidence)
	}
	if Memory(nil, "stock") != nil {
		t.Error("a ranking from no trials")
	}
	if got := Memory([]MemoryTrial{memTrial("a", false, 0, "libc", 1)}, "stock"); len(got.Notes) != 1 {
		t.Errorf("no note for a missing primary: %+v", got.Notes)
	}
}
