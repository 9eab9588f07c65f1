package bench_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis-variants/redis-variants/bench"
	"github.com/redis-variants/redis-variants/engine"
	"github.com/redis-variants/redis-variants/engine/enginetest"
	"github.com/redis-variants/redis-variants/loadgen"
	"github.com/redis-variants/redis-variants/rank"
	"github.com/redis-variants/redis-variants/results"
	"github.com/redis-variants/redis-variants/variants"
)

// cancelAfter cancels the run after n measured generator runs.
type cancelAfter struct {
	n      int
	cancel func()
}

func (g *cancelAfter) Generate(ctx context.Context, cfg loadgen.Config, cpus string) (loadgen.Result, time.Duration, error) {
	r, cpu, err := bench.InProcess{}.Generate(ctx, cfg, cpus)
	if cfg.Duration >= time.Second {
		if g.n--; g.n == 0 {
			g.cancel()
		}
	}
	return r, cpu, err
}

// stockPair is what the real-daemon bench tests share: options with the
// Docker Engine, a run folder, a session label for their containers, and
// the same real redis image under two names (A/A), stock-a the reference.
func stockPair(t *testing.T) (*engine.Client, bench.Options) {
	t.Helper()
	eng := enginetest.Client(t)
	img := enginetest.Image(t)
	run, err := results.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return eng, bench.Options{Run: run, Engine: eng, Labels: enginetest.Session(t), Images: []bench.Image{
		{Name: "stock-a", Ref: img, Reference: true, Verified: "passed"},
		{Name: "stock-b", Ref: img, Verified: "passed"},
	}}
}

// TestBenchDockerEngine: the same real redis image under two names (A/A),
// host networking and a unix socket (network none), SET for 1 s, 2 trials
// each; interrupted after 3 trials, then resumed.
func TestBenchDockerEngine(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: needs a Docker Engine")
	}
	eng, o := stockPair(t)
	run, session := o.Run, o.Labels
	o.Runtimes = []variants.Runtime{
		{Name: "host", Network: "host", Seccomp: "default", ServerCPUs: "0", ClientCPUs: "1"},
		{Name: "unix", Network: "unix", Seccomp: "unconfined", ServerCPUs: "0", ClientCPUs: "1"},
	}
	o.Profile = variants.Profile{Name: "it", Tests: []string{"SET"}, Clients: 8, Pipelines: []int{1},
		DataSize: 3, Duration: time.Second, Warmup: 200 * time.Millisecond, Trials: 2}
	o.Seed, o.LockFile = 7, t.TempDir()+"/machine.lock"
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	o.Generator = &cancelAfter{n: 3, cancel: cancel}
	sum, err := bench.Run(ctx, o)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted run: %v", err)
	}
	left, err := eng.Managed(context.Background(), session)
	if err != nil || len(left) != 0 {
		t.Fatalf("%d containers left after the interrupt (%v)", len(left), err)
	}
	done := sum.Done
	if done < 2 || done > 3 {
		t.Fatalf("interrupted run finished %d trials, want 2 or 3", done)
	}

	o.Generator = bench.InProcess{}
	sum, err = bench.Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Resumed != done || sum.Done != 8-done || sum.Total != 8 || len(sum.Failures) != 0 {
		t.Fatalf("resumed run: %+v", sum)
	}
	trials, skipped, err := results.LoadTrials(run)
	if err != nil || len(skipped) > 0 || len(trials) != 8 {
		t.Fatalf("%d trials on disk (%v, left out %v), want 8", len(trials), err, skipped)
	}
	for _, tr := range trials {
		if tr.OpsPerSec <= 0 || tr.ServerCPUNsPerOp <= 0 || tr.RSSBytes <= 0 || tr.P99Ms <= 0 {
			t.Errorf("trial %s/%s #%d: ops/s %.0f, server CPU %.0f ns/op, rss %d, p99 %.3f ms",
				tr.Variant, tr.Runtime, tr.Rep, tr.OpsPerSec, tr.ServerCPUNsPerOp, tr.RSSBytes, tr.P99Ms)
		}
		t.Logf("%s/%s #%d: %.0f ops/s, %.0f ns/op server CPU, p99 %.3f ms, rss %d, frag %.2f",
			tr.Variant, tr.Runtime, tr.Rep, tr.OpsPerSec, tr.ServerCPUNsPerOp, tr.P99Ms, tr.RSSBytes, tr.Fragmentation)
	}
	if n, err := eng.SweepMatching(context.Background(), session); err != nil || n != 0 {
		t.Fatalf("Sweep after the run removed %d containers (%v), want 0", n, err)
	}
}

// TestMemoryOOM: a memory-workload server whose limit is too small for
// its dataset is stopped by the kernel's OOM killer; the trial is recorded
// as such, measured once more at the end (stopped again), bench.json lists
// both, and the run's other measurements (the standalone trials) are all
// kept.
func TestMemoryOOM(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: needs a Docker Engine")
	}
	eng := enginetest.Client(t)
	img := enginetest.Image(t)
	run, err := results.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	o := bench.Options{
		Run:    run,
		Engine: eng,
		Images: []bench.Image{{Name: "stock", Ref: img, Reference: true, Verified: "passed"}},
		Runtimes: []variants.Runtime{
			{Name: "host", Network: "host", Seccomp: "default", ServerCPUs: "0", ClientCPUs: "1"},
		},
		Profile: variants.Profile{Name: "it", Tests: []string{"SET"}, Clients: 8, Pipelines: []int{1},
			DataSize: 3, Duration: 300 * time.Millisecond, Trials: 2,
			Memory: &variants.MemoryProfile{Target: 36 << 20, Sizes: "uniform:1K-4K", Overwrite: 0.5, Delete: 0.3, Replicates: 1}},
		MemoryLimit: 40 << 20,
		Primary:     "stock",
		Seed:        3,
		Generator:   bench.InProcess{},
		Labels:      enginetest.Session(t),
		LockFile:    t.TempDir() + "/machine.lock",
	}
	sum, err := bench.Run(context.Background(), o)
	if err != nil {
		t.Fatalf("bench: %v", err)
	}
	if sum.Total != 2 {
		t.Errorf("%d standalone trials kept, want 2", sum.Total)
	}
	mem, _, err := results.LoadMemory(run)
	if err != nil || len(mem) != 2 {
		t.Fatalf("memory trials %+v (%v): want the primary's server and its A/A control's", mem, err)
	}
	for _, m := range mem {
		if !m.OOM || m.Limit != 40<<20 || !strings.Contains(m.Error, "OOM killer") {
			t.Errorf("%s: oom %v, limit %d, error %q", m.Name(), m.OOM, m.Limit, m.Error)
		}
	}
	if n := len(sum.MemoryFailures); n != 4 || !strings.Contains(sum.MemoryFailures[0], "measured again at the end") {
		t.Errorf("bench.json's memory failures %q: want each server's OOM, then its second after measuring it again", sum.MemoryFailures)
	}
	rk := rank.Memory(mem, "stock")
	if rk == nil || len(rk.Entries) != 1 || rk.Entries[0].OOM != 1 || rk.Entries[0].N != 0 || rk.Control == nil || rk.Control.OOM != 1 {
		t.Errorf("memory ranking of OOM-killed servers: %+v", rk)
	}
}

// TestThrottledServersGiveNoAnswer provokes what no machine of this kind
// shows by itself: servers that cannot saturate their CPU. Under a runtime
// that caps each server at 0.2 CPUs (a CFS quota, Docker's --cpus), the
// calibration tries every load, none keeps the server CPU busy, and the
// bench stops there with "no answer", naming the cap, before any replicate
// or trial: only the calibration's one pair of servers was started, and
// nothing is left running.
func TestThrottledServersGiveNoAnswer(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: needs a Docker Engine")
	}
	eng, o := stockPair(t)
	run, session := o.Run, o.Labels
	o.Runtimes = []variants.Runtime{{Name: "capped", Network: "host", Seccomp: "default", ServerCPUs: "0", ClientCPUs: "1", CPULimit: 0.2}}
	o.Profile = variants.Profile{Name: "it", Tests: []string{"GET"}, Clients: 16, Pipelines: []int{16}, Keyspace: 1000,
		DataSize: 3, Duration: 500 * time.Millisecond, Warmup: 200 * time.Millisecond, Replicates: 2, Windows: 1, Trials: 1}
	o.Primary, o.Seed, o.Generator, o.LockFile = "stock-a", 5, bench.InProcess{}, t.TempDir()+"/machine.lock"
	start := time.Now()
	sum, err := bench.Run(context.Background(), o)
	took := time.Since(start)
	if !errors.Is(err, bench.ErrNoAnswer) || !strings.Contains(err.Error(), "cpu_limit") || !strings.Contains(err.Error(), "GET") {
		t.Fatalf("bench under a 0.2-CPU cap: %v; want no answer naming the test and the cap", err)
	}
	t.Logf("no answer after %s: %v", took.Round(100*time.Millisecond), err)
	var cal results.Calibration
	if err := run.ReadJSON(results.CalibrationFile, &cal); err != nil {
		t.Fatal(err)
	}
	if len(cal.Benches) != 1 || cal.Benches[0].Load.Clients != 0 || len(cal.Benches[0].Tried) < 2 {
		t.Fatalf("calibration %+v: want every load tried, none chosen", cal)
	}
	for _, l := range cal.Benches[0].Tried {
		for _, w := range l.Windows {
			// Two servers capped at 0.2 CPUs each use about 0.4 of the
			// server CPU (cgroups), whatever the load: 20 ms of each 100 ms
			// period, so a 500 ms window that straddles six periods can hold
			// 6 × 20 ms a server, 0.48 for the two (0.45 seen here), and
			// uncapped they fill it (≥ 0.95). (The server CPU's own busy
			// share is not asserted: the in-process generator is not
			// pinned and may fill it.)
			if s := w.Image.CPUShare + w.Base.CPUShare; s > 0.55 || s <= 0 {
				t.Errorf("level %s: cgroups %.2f + %.2f under the cap", l.Load, w.Image.CPUShare, w.Base.CPUShare)
			}
		}
	}
	if reps, _, _ := results.LoadReplicates(run); len(reps) != 0 || sum.Done != 0 || sum.Replicates != 0 {
		t.Errorf("measured after no answer: %d replicates, %d trials", len(reps), sum.Done)
	}
	if left, err := eng.Managed(context.Background(), session); err != nil || len(left) != 0 {
		t.Fatalf("%d containers left (%v)", len(left), err)
	}
}

// slowPath opens every generator with a path delay: each round trip of
// every connection takes at least delay longer, what a netem delay on the
// generators' path would do (these kernels have no netem).
type slowPath struct {
	bench.ExecGenerator
	delay time.Duration
}

func (g slowPath) Generate(ctx context.Context, cfg loadgen.Config, cpus string) (loadgen.Result, time.Duration, error) {
	cfg.PathDelay = g.delay
	return g.ExecGenerator.Generate(ctx, cfg, cpus)
}

func (g slowPath) Open(ctx context.Context, cfg loadgen.Config, cpus string) (bench.Session, error) {
	cfg.PathDelay = g.delay
	return g.ExecGenerator.Open(ctx, cfg, cpus)
}

// TestSlowPathRaisesTheLoad provokes what this machine does not show by
// itself: a path to the servers so costly that the profile's load leaves
// a pair short of its CPU. A first bench on the plain path measures what
// one server of a saturated pair serves (N ops/s); the second adds 1 ms
// to every round trip, so that the profile's connections can ask at most
// about half of N. The calibration must find that load short (its windows bound
// by the delay, as a slow path bounds them), raise the load until the pair
// keeps the server CPU busy, and measure every replicate at that load.
func TestSlowPathRaisesTheLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: needs a Docker Engine")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	_, o := stockPair(t)
	o.Runtimes = []variants.Runtime{{Name: "host", Network: "host", Seccomp: "default", ServerCPUs: "0", ClientCPUs: "1"}}
	const clients, pipeline = 16, 64
	o.Profile = variants.Profile{Name: "it", Tests: []string{"GET"}, Clients: clients, Pipelines: []int{pipeline}, Keyspace: 1000,
		DataSize: 3, Duration: 500 * time.Millisecond, Warmup: 300 * time.Millisecond, WarmupNext: 300 * time.Millisecond, Replicates: 2, Windows: 1, Trials: 1}
	o.Primary, o.Seed, o.Budget, o.LockFile = "stock-a", 7, -1, t.TempDir()+"/machine.lock"
	o.Generator = bench.ExecGenerator{Binary: enginetest.ToolBinary(t)}
	if _, err := bench.Run(ctx, o); err != nil {
		t.Fatalf("bench on the plain path: %v", err)
	}
	var plain results.Calibration
	if err := o.Run.ReadJSON(results.CalibrationFile, &plain); err != nil {
		t.Fatal(err)
	}
	var served []float64
	for _, l := range plain.Benches[0].Tried {
		if l.Load == plain.Benches[0].Load {
			for _, w := range l.Windows {
				served = append(served, w.Image.OpsPerSec, w.Base.OpsPerSec)
			}
		}
	}
	if len(served) == 0 {
		t.Fatalf("plain path: no saturated level in %+v", plain.Benches[0])
	}
	n := median(served)
	first := clients / 2 // the ladder's first rung: half the profile's clients per server
	// A whole millisecond: Go's timers wake about a millisecond late when
	// the process is otherwise idle, so a 330 µs delay took 1.25 ms here
	// (100k ops/s where it bounded 8 connections at P16 to 391k). At 1 ms
	// the first rung asks at most about half of what a server serves here
	// (1.29M ops/s at P64 here, 2026-12-03); four times the connections
	// reached 1.1M (80% busy), eight times are the ladder's top rung.
	const delay = time.Millisecond
	bound := float64(first*pipeline) / delay.Seconds()
	if bound > 0.8*n {
		t.Fatalf("the delay %s bounds the first rung to %.0f ops/s, near or above the %.0f a server serves here: the test cannot make the path short", delay, bound, n)
	}
	t.Logf("plain path: %s, one server of the pair served %.0f ops/s; path delay %s bounds %d connections at P%d to %.0f ops/s", plain.Benches[0].Load, n, delay, first, pipeline, bound)

	slow := o
	run, err := results.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	slow.Run, slow.Generator = run, slowPath{ExecGenerator: bench.ExecGenerator{Binary: enginetest.ToolBinary(t)}, delay: delay}
	sum, benchErr := bench.Run(ctx, slow)
	var cal results.Calibration
	if err := run.ReadJSON(results.CalibrationFile, &cal); err != nil {
		t.Fatal(benchErr, err)
	}
	bc := cal.Benches[0]
	for _, l := range bc.Tried {
		for _, w := range l.Windows {
			t.Logf("slow path at %s: busy %.3f, cgroups %.3f + %.3f, %.0f + %.0f ops/s, generators %.2f", l.Load, w.CoreBusy, w.Image.CPUShare, w.Base.CPUShare, w.Image.OpsPerSec, w.Base.OpsPerSec, l.ClientCPU)
		}
	}
	if len(bc.Tried) < 2 || bc.Tried[0].Clients != first || bc.Tried[0].Saturated() {
		t.Fatalf("slow path: the first load tried %+v; want %d connections, found short (bench: %v)", bc.Tried, first, benchErr)
	}
	for _, w := range bc.Tried[0].Windows {
		if w.Image.OpsPerSec > 1.02*bound || w.Base.OpsPerSec > 1.02*bound {
			t.Errorf("slow path at %s: %.0f + %.0f ops/s, over the delay's bound %.0f", bc.Tried[0].Load, w.Image.OpsPerSec, w.Base.OpsPerSec, bound)
		}
	}
	if benchErr != nil {
		// Behind the delay the upper rungs keep the server CPU busy
		// about 94-100% of a window (Intel Sapphire Rapids, 2026-12-07:
		// 0.961, 0.938 at 32 connections, 0.938, 1.000 at 64), around
		// the calibration's bar: whether one rung clears it in both its
		// windows is the machine's spell, not the code's. Where none does,
		// the calibration must still have climbed: to the ladder's top
		// rung, serving well past the first rung's bound, and the bench
		// must say that the client CPUs had time to spare (the path).
		top := bc.Tried[len(bc.Tried)-1]
		served := 0.0
		for _, w := range top.Windows {
			served = max(served, w.Image.OpsPerSec)
		}
		if top.Clients < 8*first || !(served > 1.5*bound) || !strings.Contains(benchErr.Error(), "the client CPUs had time to spare") {
			t.Fatalf("bench on the slow path: %v; the ladder stopped at %s serving %.0f ops/s (the first rung's bound %.0f)", benchErr, top.Load, served, bound)
		}
		t.Logf("no rung cleared the bar on this machine: the ladder climbed to %s (%.0f ops/s a server, %.1fx the first rung's bound) and the bench named the path: %v", top.Load, served, served/bound, benchErr)
		return
	}
	if bc.Load.Clients <= first {
		t.Fatalf("slow path: chose %s; want more than %d connections", bc.Load, first)
	}
	reps, _, err := results.LoadReplicates(run)
	if err != nil {
		t.Fatal(err)
	}
	// Every replicate ran at the calibrated load; a window lost to steal
	// is the machine's, not the path's, so the test asks for most of them.
	kept := 0
	for _, r := range reps {
		kept += len(r.Windows)
		for _, l := range r.Lost {
			t.Logf("%s #%d lost %s: %s", r.PairKey, r.Rep, l.Bench(), l.Reason)
		}
		for _, w := range r.Windows {
			if w.Load != bc.Load {
				t.Errorf("%s #%d measured at %s, calibrated %s", r.PairKey, r.Rep, w.Load, bc.Load)
			}
		}
	}
	if sum.PlannedReplicates == 0 || len(sum.FailedReplicates) != 0 || 2*kept < sum.PlannedReplicates {
		t.Fatalf("slow path: %d windows kept of %d planned replicates: %+v", kept, sum.PlannedReplicates, sum)
	}
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// TestNativeAgainstItsContainer co-schedules the test image's own
// redis-server run natively (no container: package native) against the
// same image in a container on the host network, as a runtime axis, and
// runs a standalone trial under each: every window of the axis pair has
// the native side's requests and CPU time (read from /proc), the native
// trial has its ops/s, CPU per operation and RSS, and the run leaves no
// container, no process and no root behind. Whether the windows were
// saturated is this machine's business, not asserted.
func TestNativeAgainstItsContainer(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: needs a Docker Engine")
	}
	eng, o := stockPair(t)
	o.Images = o.Images[:1]
	o.Primary = "stock-a"
	id, err := eng.ImageID(context.Background(), o.Images[0].Ref)
	if err != nil {
		t.Fatal(err)
	}
	o.Images[0].ImageID = id
	o.Runtimes = []variants.Runtime{
		{Name: "host", Network: "host", Seccomp: "default", ServerCPUs: "0", ClientCPUs: "1"},
		{Name: "native", Network: variants.NetworkNative, Seccomp: "default", ServerCPUs: "0", ClientCPUs: "1"},
	}
	o.Profile = variants.Profile{Name: "it", Tests: []string{"SET"}, Clients: 16, Pipelines: []int{64},
		DataSize: 3, Keyspace: 1000, Duration: time.Second, Warmup: 300 * time.Millisecond, WarmupNext: 100 * time.Millisecond,
		Trials: 1, Replicates: 2, Windows: 1, AxisReplicates: 2, Runtimes: variants.RuntimesFirst,
		Latency: &variants.LatencyProfile{Test: "GET", Share: 0.5, Clients: 8, Trials: 2, Duration: time.Second, Warmup: 200 * time.Millisecond, Images: variants.LatencyPrimary}}
	o.Seed, o.LockFile = 11, t.TempDir()+"/machine.lock"
	// the tool's own generator, pinned: in a test binary under -race the
	// in-process one cannot keep two servers busy
	o.Generator = bench.ExecGenerator{Binary: enginetest.ToolBinary(t)}
	sum, err := bench.Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	// the fixed-rate latency measure: a capacity for each runtime, the
	// rate half the slower one's, two trials a runtime with ordered
	// percentiles; a second run of the folder measures none again
	plan, ok, err := results.LoadLatencyPlan(o.Run)
	if err != nil || !ok || len(plan.Capacities) != 2 || len(plan.Cells) != 2 {
		t.Fatalf("latency plan %+v (%v, %v)", plan, ok, err)
	}
	slowest := min(plan.Capacities[0].OpsPerSec, plan.Capacities[1].OpsPerSec)
	if slowest <= 0 || plan.Rate != 0.5*slowest {
		t.Errorf("rate %.0f, want half the slower capacity (%+v)", plan.Rate, plan.Capacities)
	}
	lat, _, err := results.LoadLatencyTrials(o.Run)
	if err != nil || len(lat) != 4 || sum.LatencyTrials != 4 {
		t.Fatalf("%d latency trials on disk, %d measured (%v), want 4", len(lat), sum.LatencyTrials, err)
	}
	for _, l := range lat {
		if !(0 < l.P50Us && l.P50Us <= l.P95Us && l.P95Us <= l.P99Us && l.P99Us <= l.P999Us) || l.ImageID == "" || l.SentPerSec <= 0 {
			t.Errorf("latency trial %s/%s #%d: p50 %.1f p95 %.1f p99 %.1f p99.9 %.1f µs, sent %.0f/s, image %q",
				l.Image, l.Runtime, l.Rep, l.P50Us, l.P95Us, l.P99Us, l.P999Us, l.SentPerSec, l.ImageID)
		}
	}
	if again, err := bench.Run(context.Background(), o); err != nil || again.LatencyTrials != 0 {
		t.Errorf("a second run measured %d latency trials (%v), want none", again.LatencyTrials, err)
	}
	reps, skipped, err := results.LoadReplicates(o.Run)
	if err != nil || len(skipped) > 0 {
		t.Fatalf("replicates: %v %v", err, skipped)
	}
	axis := 0
	for _, r := range reps {
		if r.Runtime != "native" {
			continue
		}
		if r.BaseRuntime != "host" || r.Image != "stock-a" || r.Base != "stock-a" {
			t.Errorf("native replicate %s, want stock-a native against stock-a host", r.PairKey)
		}
		axis++
		if len(r.Windows) == 0 {
			t.Errorf("native replicate %d has no windows", r.Rep)
		}
		for _, w := range r.Windows {
			if w.Image.Requests <= 0 || w.Image.CPUNanos == 0 || w.Base.Requests <= 0 || w.Base.CPUNanos == 0 {
				t.Errorf("window %d of native replicate %d lacks a side's requests or CPU time: native %+v, container %+v", w.Index, r.Rep, w.Image, w.Base)
			}
		}
	}
	if axis != 2 {
		t.Errorf("%d native replicates on disk, want 2", axis)
	}
	trials, _, err := results.LoadTrials(o.Run)
	if err != nil {
		t.Fatal(err)
	}
	native := 0
	for _, tr := range trials {
		if tr.Runtime == "native" {
			native++
			if tr.OpsPerSec <= 0 || tr.ServerCPUNsPerOp <= 0 || tr.RSSBytes <= 0 {
				t.Errorf("native trial: ops/s %.0f, server CPU %.0f ns/op, rss %d", tr.OpsPerSec, tr.ServerCPUNsPerOp, tr.RSSBytes)
			}
		}
	}
	if native == 0 {
		t.Error("no standalone trial under the native runtime")
	}
	if left, err := eng.Managed(context.Background(), o.Labels); err != nil || len(left) != 0 {
		t.Errorf("%d containers left (%v)", len(left), err)
	}
	mi, _ := os.ReadFile("/proc/self/mountinfo")
	if strings.Contains(string(mi), "redis-variants-bench-") {
		t.Errorf("a native root is still mounted:\n%s", mi)
	}
	if roots, _ := filepath.Glob(filepath.Join(os.TempDir(), "redis-variants-bench-*", "root-*")); len(roots) != 0 {
		t.Errorf("native roots left: %v", roots)
	}
}

// TestPodAgainstHost co-schedules the test image with its generator in a
// sidecar (the pod runtime: a container joined to the server's network
// and IPC namespaces, on their loopback) against the same image on the
// host network, as a runtime axis: every window of the axis pair has both
// sides' requests and CPU time, the bench says the pod runtime has no
// standalone trials, and no server or sidecar is left.
func TestPodAgainstHost(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: needs a Docker Engine")
	}
	eng, o := stockPair(t)
	o.Images = o.Images[:1]
	o.Primary = "stock-a"
	o.Runtimes = []variants.Runtime{
		{Name: "host", Network: "host", Seccomp: "default", ServerCPUs: "0", ClientCPUs: "1"},
		{Name: "pod", Network: variants.NetworkPod, Seccomp: "default", ServerCPUs: "0", ClientCPUs: "1"},
	}
	o.Profile = variants.Profile{Name: "it", Tests: []string{"SET"}, Clients: 16, Pipelines: []int{64},
		DataSize: 3, Keyspace: 1000, Duration: time.Second, Warmup: 300 * time.Millisecond, WarmupNext: 100 * time.Millisecond,
		Trials: 1, Replicates: 2, Windows: 1, AxisReplicates: 2, Runtimes: variants.RuntimesFirst}
	o.Seed, o.LockFile = 13, t.TempDir()+"/machine.lock"
	o.Generator = bench.ExecGenerator{Binary: enginetest.ToolBinary(t)}
	o.Sidecar = filepath.Join(filepath.Dir(enginetest.ToolBinary(t)), "redis-loadgen")
	sum, err := bench.Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(sum.Warnings, func(w string) bool { return strings.Contains(w, "pod") && strings.Contains(w, "no standalone trials") }) {
		t.Errorf("no warning that the pod runtime has no standalone trials: %q", sum.Warnings)
	}
	reps, skipped, err := results.LoadReplicates(o.Run)
	if err != nil || len(skipped) > 0 {
		t.Fatalf("replicates: %v %v", err, skipped)
	}
	axis := 0
	for _, r := range reps {
		if r.Runtime != "pod" {
			continue
		}
		axis++
		if len(r.Windows) == 0 {
			t.Errorf("pod replicate %d has no windows", r.Rep)
		}
		for _, w := range r.Windows {
			if w.Image.Requests <= 0 || w.Image.CPUNanos == 0 || w.Base.Requests <= 0 || w.Base.CPUNanos == 0 {
				t.Errorf("window %d of pod replicate %d lacks a side's requests or CPU time: pod %+v, host %+v", w.Index, r.Rep, w.Image, w.Base)
			}
		}
	}
	if axis != 2 {
		t.Errorf("%d pod replicates on disk, want 2", axis)
	}
	trials, _, _ := results.LoadTrials(o.Run)
	for _, tr := range trials {
		if tr.Runtime == "pod" {
			t.Errorf("a standalone trial under the pod runtime: %+v", tr)
		}
	}
	if left, err := eng.Managed(context.Background(), o.Labels); err != nil || len(left) != 0 {
		t.Errorf("%d containers left, sidecars included (%v)", len(left), err)
	}
}
