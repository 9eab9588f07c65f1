// Package bench measures built images through the Docker Engine.
//
// The ranking rests on co-scheduled pairs (pairs.go): an image's server and
// the primary reference's pinned to the same CPUs and loaded at the same
// time, each one's CPU time per operation read from its cgroup, so the
// vCPU's waves of speed cancel in their ratio; the primary reference
// paired with itself is the A/A control in every run. Standalone trials
// (one server alone, as before) give absolute ops/s and latency. The whole
// design (which replicates, which side first, which trials, in which order)
// is drawn from a recorded seed before anything is measured; nothing
// depends on the data. Every finished window and trial is written at once,
// atomically, so an interrupted run resumes where it stopped.
package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-variants/redis-variants/engine"
	"github.com/redis-variants/redis-variants/loadgen"
	"github.com/redis-variants/redis-variants/machine"
	"github.com/redis-variants/redis-variants/rank"
	"github.com/redis-variants/redis-variants/results"
	"github.com/redis-variants/redis-variants/variants"
)

// Image is one image to benchmark.
type Image struct {
	Name      string `json:"name"`               // variant or reference name
	ID        string `json:"id,omitempty"`       // variants.Variant.ID
	Ref       string `json:"ref"`                // Docker Engine reference
	Reference bool   `json:"reference"`          // a reference rather than a tuned variant
	Verified  string `json:"verified,omitempty"` // verify status: "passed", "failed", "" (never verified)
}

// Engine is what bench needs from the Docker Engine; *engine.Client has it.
type Engine interface {
	SweepMatching(ctx context.Context, match map[string]string) (int, error)
	StartServer(ctx context.Context, s engine.ServerSpec) (*engine.Server, error)
	WaitReady(ctx context.Context, s *engine.Server, timeout time.Duration) error
	Remove(ctx context.Context, containerID string) error
	CPUUsageNanos(ctx context.Context, containerID string) (uint64, error)
}

// Options configure a bench run.
type Options struct {
	Run      *results.Run
	Engine   Engine
	Images   []Image            // what to benchmark (see Images)
	Runtimes []variants.Runtime // runtime configurations
	Profile  variants.Profile

	Primary    string        // the primary reference: every pair's base (usually the plan's first reference)
	Trials     int           // standalone trials per cell (0 = Profile.Trials; < 0 = none)
	Replicates int           // replicates per pair (0 = Profile.Replicates)
	Budget     time.Duration // no new measurement starts after this long (0 = Profile.Budget; <0 = none)
	// MinSaturation is the least share of the server CPUs a pair's two
	// servers must use together in a window (0 = MinSaturation).
	MinSaturation float64
	// CPU reads a container's cgroup CPU time (nil = machine.ContainerCPUNanos).
	CPU func(containerID string) (uint64, error)

	Generator Generator         // nil = ExecGenerator{}
	Seed      int64             // shuffle seed (0 = from the clock); recorded in bench.json
	LockFile  string            // machine lock shared with the builder ("" = none)
	Labels    map[string]string // put on every container; when set, the start-up sweep is limited to containers carrying them
	ReadyWait time.Duration     // readiness timeout per trial (0 = 30s)
	Log       io.Writer         // progress (nil = discard)
}

// Cell is one (image, runtime, test, pipeline) combination.
type Cell = rank.Cell

// Failure is a trial that did not finish.
type Failure struct {
	Cell  Cell   `json:"cell"`
	Error string `json:"error"`
}

// Summary is what a bench run did; it is written to bench.json.
type Summary struct {
	Seed              int64         `json:"seed"`
	Profile           string        `json:"profile"`
	Images            []Image       `json:"images"`
	Cells             int           `json:"cells"`
	Planned           int           `json:"planned"` // cells × minimum trials
	Primary           string        `json:"primary"`
	PlannedReplicates int           `json:"planned_replicates"`
	Replicates        int           `json:"replicates"`      // replicates on disk now
	Windows           int           `json:"windows"`         // windows on disk now
	DoneReplicates    int           `json:"done_replicates"` // replicates this run measured windows of
	DoneWindows       int           `json:"done_windows"`
	ResumedWindows    int           `json:"resumed_windows"`
	FailedReplicates  []string      `json:"failed_replicates,omitempty"`
	Resumed           int           `json:"resumed"` // trials found from an earlier run
	Done              int           `json:"done"`    // trials finished by this run
	Total             int           `json:"total"`   // trials on disk now
	BudgetSpent       bool          `json:"budget_spent"`
	Failures          []Failure     `json:"failures,omitempty"`
	Dropped           []Cell        `json:"dropped,omitempty"` // cells given up after repeated failures
	Warnings          []string      `json:"warnings,omitempty"`
	Elapsed           time.Duration `json:"elapsed"`
	Finished          time.Time     `json:"finished"`
}

// LoadSummary reads the summary of the run's bench (BenchFile).
func LoadSummary(run *results.Run) (Summary, error) {
	var s Summary
	err := run.ReadJSON(results.BenchFile, &s)
	return s, err
}

// maxCellFailures is how many failed trials drop a cell.
const maxCellFailures = 2

// TrialRel is the run-folder path of one trial.
func TrialRel(c Cell, rep int) string {
	return filepath.Join("trials", safe(c.Image), safe(c.Runtime), fmt.Sprintf("%s-P%d-%d.json", safe(c.Test), c.Pipeline, rep))
}

func safe(s string) string {
	if strings.HasPrefix(s, ".") {
		s = "_" + s[1:]
	}
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '_'
	}, s)
}

// LoadTrials reads the run's standalone trials (results.LoadTrials).
func LoadTrials(run *results.Run) ([]rank.Trial, []results.Skipped, error) {
	return results.LoadTrials(run)
}

func cellOf(t rank.Trial) Cell {
	return Cell{Image: t.Variant, Runtime: t.Runtime, Test: t.Test, Pipeline: max(t.Pipeline, 1)}
}

// unit is one scheduled measurement: a replicate of a pair, or a
// standalone trial of a cell.
type unit struct {
	pair *pairSlot
	cell Cell
	rep  int
}

// Run benchmarks o.Images under o.Runtimes with o.Profile: the
// co-scheduled pairs that decide the ranking (see planPairs) and the
// standalone trials that give absolute figures, all in one seeded random
// order fixed before anything is measured. It returns the summary even on
// error (an interrupted run reports what it finished).
func Run(ctx context.Context, o Options) (Summary, error) {
	start := time.Now()
	log := o.Log
	if log == nil {
		log = io.Discard
	}
	if o.Run == nil || o.Engine == nil {
		return Summary{}, errors.New("bench: Run and Engine are required")
	}
	gen := o.Generator
	if gen == nil {
		gen = ExecGenerator{}
	}
	cpuOf := o.CPU
	if cpuOf == nil {
		cpuOf = machine.ContainerCPUNanos
	}
	o, budget, seed, err := withProfile(o)
	if err != nil {
		return Summary{}, err
	}
	sum := Summary{Seed: seed, Profile: o.Profile.Name}
	benches := profileBenches(o.Profile)
	images := runnable(o.Images, log, &sum)
	sum.Images = images
	if len(images) == 0 || len(o.Runtimes) == 0 || len(benches) == 0 {
		return sum, fmt.Errorf("bench: nothing to run (%d images, %d runtimes, %d tests)", len(images), len(o.Runtimes), len(o.Profile.Tests))
	}
	byName := map[string]Image{}
	for _, im := range images {
		byName[im.Name] = im
	}
	rts := map[string]variants.Runtime{}
	for _, rt := range o.Runtimes {
		rts[rt.Name] = rt
	}

	// The design, fixed before measuring.
	rng := rand.New(rand.NewSource(seed))
	primary := o.Primary
	if _, ok := byName[primary]; !ok {
		primary = ""
	}
	slots, err := pairDesign(o, images, primary, rng, log, &sum)
	if err != nil {
		return sum, err
	}
	var units []unit
	for i := range slots {
		units = append(units, unit{pair: &slots[i]})
	}
	// Standalone trials: every image under the runtimes it is ranked
	// under; the primary reference under the others too (the runtime
	// axes' end-to-end figures).
	ranked := map[string]bool{}
	for i, rt := range o.Runtimes {
		if i == 0 || o.Profile.Runtimes == variants.RuntimesAll {
			ranked[rt.Name] = true
		}
	}
	var cells []Cell
	for _, im := range images {
		for _, rt := range o.Runtimes {
			if !ranked[rt.Name] && im.Name != primary && primary != "" {
				continue
			}
			for _, b := range benches {
				c := Cell{Image: im.Name, Runtime: rt.Name, Test: b.Test, Pipeline: b.Pipeline}
				cells = append(cells, c)
				for r := 0; r < o.Profile.Trials; r++ {
					units = append(units, unit{cell: c, rep: r})
				}
			}
		}
	}
	rng.Shuffle(len(units), func(i, j int) { units[i], units[j] = units[j], units[i] })
	sum.Cells, sum.Planned = len(cells), len(cells)*o.Profile.Trials
	sum.PlannedReplicates = len(slots)
	sum.Primary = primary
	if err := o.Run.WriteJSON(results.BenchPlanFile, benchPlan{Seed: seed, Profile: o.Profile, Primary: primary, Units: describe(units)}); err != nil {
		return sum, fmt.Errorf("bench: %w", err)
	}

	// Never benchmark while building.
	if o.LockFile != "" {
		unlock, err := machine.Lock(ctx, o.LockFile, "bench", log)
		if err != nil {
			return sum, err
		}
		defer unlock()
	}

	// Leftovers from an interrupted run.
	if n, err := o.Engine.SweepMatching(ctx, o.Labels); err != nil {
		return sum, fmt.Errorf("bench: removing leftover containers: %w", err)
	} else if n > 0 {
		fmt.Fprintf(log, "removed %d leftover container(s)\n", n)
	}

	trials, badTrials, err := results.LoadTrials(o.Run)
	if err != nil {
		return sum, fmt.Errorf("bench: resuming: %w", err)
	}
	reps, badReps, err := results.LoadReplicates(o.Run)
	if err != nil {
		return sum, fmt.Errorf("bench: resuming: %w", err)
	}
	for _, s := range append(badTrials, badReps...) {
		fmt.Fprintf(log, "resuming: left out %v: measured again\n", s)
	}
	sum.Resumed = len(trials)
	doneTrial := map[string]bool{}
	seq := 0
	for _, t := range trials {
		doneTrial[TrialRel(cellOf(t), t.Rep)] = true
		seq = max(seq, t.Seq+1)
	}
	repByRel := map[string]*rank.Replicate{}
	for i := range reps {
		repByRel[PairRel(reps[i].PairKey, reps[i].Rep)] = &reps[i]
		seq = max(seq, reps[i].Seq+1)
	}
	sum.ResumedWindows = 0
	for _, r := range reps {
		sum.ResumedWindows += len(r.Windows)
	}
	if sum.Resumed+sum.ResumedWindows > 0 {
		fmt.Fprintf(log, "resuming: %d trial(s) and %d window(s) of %d replicate(s) already done\n", sum.Resumed, sum.ResumedWindows, len(reps))
	}

	host, _ := machine.Read()
	cpuModel := host.CPUModel
	sockRoot, err := os.MkdirTemp("", "redis-variants-bench-")
	if err != nil {
		return sum, fmt.Errorf("bench: socket folder: %w", err)
	}
	defer os.RemoveAll(sockRoot)
	env := &pairEnv{o: o, gen: gen, byName: byName, rts: rts, benches: benches, sockRoot: sockRoot, cpu: cpuOf,
		cpuModel: cpuModel, log: func(f string, a ...any) { fmt.Fprintf(log, f, a...) }}

	failures := map[Cell]int{}
	dropped := map[Cell]bool{}
	finish := func(err error) (Summary, error) {
		sum.Total = len(trials)
		all, _, lerr := results.LoadReplicates(o.Run)
		if lerr == nil {
			sum.Replicates = len(all)
			for _, r := range all {
				sum.Windows += len(r.Windows)
				if r.Failed != "" {
					sum.FailedReplicates = append(sum.FailedReplicates, fmt.Sprintf("%s #%d: %s", r.PairKey, r.Rep, r.Failed))
				}
			}
		}
		sum.Elapsed = time.Since(start)
		sum.Finished = time.Now().UTC()
		for c := range dropped {
			sum.Dropped = append(sum.Dropped, c)
		}
		sort.Slice(sum.Dropped, func(i, j int) bool { return sum.Dropped[i].String() < sum.Dropped[j].String() })
		if werr := o.Run.WriteJSON(results.BenchFile, sum); werr != nil && err == nil {
			err = werr
		}
		return sum, err
	}
	fmt.Fprintf(log, "bench: %d replicate(s) of %d pair(s) x %d window(s) x %d benchmark(s), %d standalone trial(s), seed %d\n",
		len(slots), countPairs(slots), o.Profile.Windows, len(benches), sum.Planned, seed)
	for n, u := range units {
		if err := ctx.Err(); err != nil {
			return finish(err)
		}
		if budget > 0 && time.Since(start) >= budget {
			sum.BudgetSpent = true
			fmt.Fprintf(log, "time budget %s spent: stopping after %d of %d measurements; the design is incomplete\n", budget, n, len(units))
			return finish(nil)
		}
		if u.pair != nil {
			sl := u.pair
			rel := PairRel(sl.key, sl.rep)
			rep := repByRel[rel]
			if rep == nil {
				rep = &rank.Replicate{PairKey: sl.key, Rep: sl.rep, Seq: seq, Swapped: sl.swapped, ImageReference: sl.imageRef, CPUModel: cpuModel}
				seq++
				repByRel[rel] = rep
			}
			if rep.Failed != "" {
				continue
			}
			before := len(rep.Windows)
			if err := env.runReplicate(ctx, rep); err != nil {
				return finish(err)
			}
			sum.DoneWindows += len(rep.Windows) - before
			if len(rep.Windows) > before {
				sum.DoneReplicates++
			}
			if strings.Contains(rep.Failed, ErrNoCgroup.Error()) {
				return finish(fmt.Errorf("bench: co-scheduled pairs need each server's CPU time from its cgroup: %s (run with a profile of replicates: 0 for standalone trials only)", rep.Failed))
			}
			continue
		}
		c := u.cell
		if doneTrial[TrialRel(c, u.rep)] || dropped[c] {
			continue
		}
		im, rt := byName[c.Image], rts[c.Runtime]
		t, err := runTrial(ctx, o, gen, im, rt, c, sockRoot)
		if err != nil {
			if ctx.Err() != nil {
				return finish(ctx.Err())
			}
			failures[c]++
			sum.Failures = append(sum.Failures, Failure{Cell: c, Error: err.Error()})
			fmt.Fprintf(log, "  %s: FAILED: %v\n", c, err)
			if failures[c] >= maxCellFailures {
				dropped[c] = true
				fmt.Fprintf(log, "  %s: giving up after %d failures\n", c, failures[c])
			} else {
				// measured again at the end
				units = append(units, u)
			}
			continue
		}
		t.Rep, t.Seq, t.CPUModel = u.rep, seq, cpuModel
		t.VariantID, t.Reference = im.ID, im.Reference
		if err := o.Run.WriteJSON(TrialRel(c, t.Rep), t); err != nil {
			return finish(fmt.Errorf("bench: %w", err))
		}
		doneTrial[TrialRel(c, t.Rep)] = true
		seq++
		trials = append(trials, t)
		sum.Done++
		fmt.Fprintf(log, "  %s #%d (standalone): %.0f ops/s, p99 %.3f ms, server %.0f ns/op, machine %.0f ns/op, client CPU %.0f%%\n",
			c, t.Rep, t.OpsPerSec, t.P99Ms, t.ServerCPUNsPerOp, t.MachineCPUNsPerOp, 100*t.ClientCPUShare)
	}
	return finish(nil)
}

// pairDesign lays out the co-scheduled replicates (planPairs), or none,
// with a warning, when there is no primary reference among the images or a
// runtime cannot put servers and generators on separate CPUs. It also
// warns about runtime axes that cannot be co-scheduled.
func pairDesign(o Options, images []Image, primary string, rng *rand.Rand, log io.Writer, sum *Summary) ([]pairSlot, error) {
	var slots []pairSlot
	pairsOK := true
	if primary == "" {
		w := fmt.Sprintf("no primary reference among the images (want %q): standalone trials only, which do not rank reliably on a shared machine", o.Primary)
		fmt.Fprintln(log, w)
		sum.Warnings = append(sum.Warnings, w)
		pairsOK = false
	} else if o.Profile.Replicates > 0 {
		for _, rt := range o.Runtimes {
			cpus, err := machine.ParseCPUList(rt.ServerCPUs)
			if err != nil {
				return nil, fmt.Errorf("bench: runtime %s: server_cpus: %w", rt.Name, err)
			}
			ccpus, err := machine.ParseCPUList(rt.ClientCPUs)
			if err != nil {
				return nil, fmt.Errorf("bench: runtime %s: client_cpus: %w", rt.Name, err)
			}
			if runtime.NumCPU() < 2 || len(cpus) == 0 || len(ccpus) == 0 {
				w := fmt.Sprintf("runtime %s: co-scheduled pairs need the servers and the generators on separate CPUs (server_cpus %q, client_cpus %q, %d CPUs here): standalone trials only",
					rt.Name, rt.ServerCPUs, rt.ClientCPUs, runtime.NumCPU())
				fmt.Fprintln(log, w)
				sum.Warnings = append(sum.Warnings, w)
				pairsOK = false
			}
		}
		if pairsOK {
			slots = planPairs(images, o.Runtimes, o.Profile, primary, rng)
			for _, rt := range o.Runtimes[1:] {
				if o.Profile.AxisReplicates > 0 && !FairAxis(o.Runtimes[0], rt) {
					w := fmt.Sprintf("runtime axis %s vs %s: not co-scheduled (docker-proxy runs outside the server's cgroup and takes the generators' CPU, so the pair cannot be saturated); compared by the standalone trials' end-to-end figures", rt.Name, o.Runtimes[0].Name)
					fmt.Fprintln(log, w)
					sum.Warnings = append(sum.Warnings, w)
				}
			}
		}
	}
	return slots, nil
}

// withProfile applies the options' overrides (trials, replicates, budget,
// seed) to the profile and checks the design it asks for can be made.
func withProfile(o Options) (Options, time.Duration, int64, error) {
	switch {
	case o.Trials < 0:
		o.Profile.Trials = 0
	case o.Trials > 0:
		o.Profile.Trials = o.Trials
	}
	if o.Replicates > 0 {
		o.Profile.Replicates = o.Replicates
	}
	if o.Profile.Replicates > 0 && o.Profile.Windows < 1 {
		return o, 0, 0, fmt.Errorf("bench: profile %s asks for %d replicates per pair but no windows per test (windows: N)", o.Profile.Name, o.Profile.Replicates)
	}
	if o.Profile.Replicates%2 != 0 {
		return o, 0, 0, fmt.Errorf("bench: %d replicates per pair: must be even, the sides are swapped in half of them", o.Profile.Replicates)
	}
	budget := o.Budget
	if budget == 0 {
		budget = o.Profile.Budget
	}
	seed := o.Seed
	if seed == 0 {
		seed = time.Now().UnixNano()
	}
	return o, budget, seed, nil
}

// profileBenches is every test of the profile at every pipeline depth.
func profileBenches(p variants.Profile) []rank.Bench {
	pipes := p.Pipelines
	if len(pipes) == 0 {
		pipes = []int{1}
	}
	var benches []rank.Bench
	for _, t := range p.Tests {
		for _, pl := range pipes {
			benches = append(benches, rank.Bench{Test: strings.ToUpper(t), Pipeline: max(pl, 1)})
		}
	}
	return benches
}

// runnable drops the images whose verification failed and flags those
// never verified, saying each on log and in sum's warnings.
func runnable(all []Image, log io.Writer, sum *Summary) []Image {
	var images []Image
	for _, im := range all {
		switch im.Verified {
		case "failed":
			w := fmt.Sprintf("skipping %s: its verification failed (see verify/%s.json)", im.Name, im.Name)
			fmt.Fprintln(log, w)
			sum.Warnings = append(sum.Warnings, w)
			continue
		case "":
			w := fmt.Sprintf("%s was never verified: benchmarking it anyway", im.Name)
			fmt.Fprintln(log, w)
			sum.Warnings = append(sum.Warnings, w)
		}
		images = append(images, im)
	}
	return images
}

func countPairs(slots []pairSlot) int {
	seen := map[rank.PairKey]bool{}
	for _, s := range slots {
		seen[s.key] = true
	}
	return len(seen)
}

// benchPlan is the design written before measuring (bench-plan.json).
type benchPlan struct {
	Seed    int64            `json:"seed"`
	Profile variants.Profile `json:"profile"`
	Primary string           `json:"primary"`
	Units   []string         `json:"units"` // in the order they run
}

func describe(units []unit) []string {
	out := make([]string, len(units))
	for i, u := range units {
		if u.pair != nil {
			sw := ""
			if u.pair.swapped {
				sw = " (swapped)"
			}
			out[i] = fmt.Sprintf("pair %s #%d%s", u.pair.key, u.pair.rep, sw)
		} else {
			out[i] = fmt.Sprintf("trial %s #%d", u.cell, u.rep)
		}
	}
	return out
}

// runTrial runs one trial of cell c in a fresh container.
func runTrial(ctx context.Context, o Options, gen Generator, im Image, rt variants.Runtime, c Cell, sockRoot string) (rank.Trial, error) {
	spec := engine.ServerSpec{
		Image:   im.Ref,
		Network: rt.Network,
		Seccomp: rt.Seccomp,
		CPUs:    rt.ServerCPUs,
		Labels:  map[string]string{"io.redis-variants.bench.image": im.Name, "io.redis-variants.bench.runtime": rt.Name},
	}
	for k, v := range o.Labels {
		spec.Labels[k] = v
	}
	if rt.Network == "unix" {
		spec.Network = "none"
		dir, err := os.MkdirTemp(sockRoot, "sock-")
		if err != nil {
			return rank.Trial{}, err
		}
		defer os.RemoveAll(dir)
		spec.SocketDir = dir
	}
	srv, err := o.Engine.StartServer(ctx, spec)
	if err != nil {
		return rank.Trial{}, err
	}
	defer func() {
		// A fresh context: Ctrl-C must still remove the container.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		o.Engine.Remove(rctx, srv.ID)
	}()
	wait := o.ReadyWait
	if wait == 0 {
		wait = 30 * time.Second
	}
	if err := o.Engine.WaitReady(ctx, srv, wait); err != nil {
		return rank.Trial{}, err
	}
	ropt := &redis.Options{Network: "tcp", Addr: srv.Addr, Protocol: 2, DisableIdentity: true}
	if srv.Addr == "" {
		ropt.Network, ropt.Addr = "unix", srv.Socket
	}
	rdb := redis.NewClient(ropt)
	defer rdb.Close()
	cfg := genConfig(srv, o.Profile, c.Bench(), o.Profile.Clients)
	if err := flushAndFill(ctx, srv, cfg, readsKeys(c.Test)); err != nil {
		return rank.Trial{}, err
	}
	// Warmup: its own generator run, so the server's CPU time can be read
	// around the measured window alone.
	if o.Profile.Warmup > 0 {
		w := cfg
		w.Duration = o.Profile.Warmup
		if _, _, err := gen.Generate(ctx, w, rt.ClientCPUs); err != nil {
			return rank.Trial{}, fmt.Errorf("warmup: %w", err)
		}
	}
	cfg.Duration = o.Profile.Duration
	if cfg.Duration <= 0 {
		cfg.Duration = 10 * time.Second
	}
	cpuOf := o.CPU
	if cpuOf == nil {
		cpuOf = machine.ContainerCPUNanos
	}
	readCPU := func() (uint64, error) {
		if v, err := cpuOf(srv.ID); err == nil {
			return v, nil
		}
		return o.Engine.CPUUsageNanos(ctx, srv.ID) // a remote engine: its stats API
	}
	proxies := machine.ProcessesNamed("docker-proxy")
	proxyCPU := func() uint64 {
		var t uint64
		for _, pid := range proxies {
			v, _ := machine.ProcessCPUNanos(pid)
			t += v
		}
		return t
	}
	cpu0, err := readCPU()
	if err != nil {
		return rank.Trial{}, err
	}
	st0, _ := machine.ReadCPUTimes()
	px0 := proxyCPU()
	started := time.Now()
	res, clientCPU, err := gen.Generate(ctx, cfg, rt.ClientCPUs)
	wall := time.Since(started)
	if err != nil {
		return rank.Trial{}, err
	}
	cpu1, err := readCPU()
	if err != nil {
		return rank.Trial{}, err
	}
	st1, _ := machine.ReadCPUTimes()
	px1 := proxyCPU()
	if res.Requests == 0 {
		return rank.Trial{}, fmt.Errorf("generator finished no request (%d errors: %q)", res.Errors, res.ErrorSamples)
	}
	t := rank.Trial{
		Variant: im.Name, Runtime: rt.Name, Test: c.Test, Clients: cfg.Clients, Pipeline: c.Pipeline,
		OpsPerSec: res.OpsPerSec, Requests: res.Requests, Errors: res.Errors,
		AvgMs: res.AvgMs, P50Ms: res.P50Ms, P99Ms: res.P99Ms, P999Ms: res.P999Ms, MaxMs: res.MaxMs,
		Hist:    res.Hist,
		Started: started.UTC(), Duration: wall,
	}
	if t.Clients == 0 {
		t.Clients = 50
	}
	if cpu1 > cpu0 {
		t.ServerCPUNsPerOp = float64(cpu1-cpu0) / float64(res.Requests)
	}
	if st0 != nil && st1 != nil {
		// the whole machine's busy time (server, generator, docker-proxy,
		// kernel), in ticks of 10 ms
		busy := st1[-1].Busy() - st0[-1].Busy()
		t.MachineCPUNsPerOp = float64(busy) * 1e7 / float64(res.Requests)
		t.Steal = machine.StealShare(st0, st1, nil)
	}
	if len(proxies) > 0 && px1 > px0 {
		t.ProxyCPUNsPerOp = float64(px1-px0) / float64(res.Requests)
	}
	t.Misses = res.Misses
	ncpu, err := CountCPUs(rt.ClientCPUs)
	if err != nil {
		return rank.Trial{}, err
	}
	t.ClientCPUShare = clientShare(res, clientCPU, wall, ncpu)
	info, err := rdb.Info(ctx, "memory").Result()
	if err != nil {
		return rank.Trial{}, fmt.Errorf("INFO memory: %w", err)
	}
	mem := ParseInfo(info)
	t.RSSBytes, _ = strconv.ParseInt(mem["used_memory_rss"], 10, 64)
	t.Fragmentation, _ = strconv.ParseFloat(mem["mem_fragmentation_ratio"], 64)
	return t, nil
}

// clientShare is the generator's CPU time over its wall time and CPUs:
// near 1 means the generator, not the server, was the bottleneck. The
// generator's own figure for the measured window is preferred; else the
// whole process's CPU time over the whole call.
func clientShare(res loadgen.Result, cpu, wall time.Duration, ncpu int) float64 {
	if ncpu < 1 {
		ncpu = 1
	}
	if res.ClientCPU > 0 && res.Elapsed > 0 {
		return res.ClientCPU.Seconds() / res.Elapsed.Seconds() / float64(ncpu)
	}
	if wall <= 0 {
		return 0
	}
	return cpu.Seconds() / wall.Seconds() / float64(ncpu)
}

// ParseInfo parses an INFO reply into key → value.
func ParseInfo(s string) map[string]string {
	out := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		if k, v, ok := strings.Cut(line, ":"); ok {
			out[k] = v
		}
	}
	return out
}
