// Package bench runs every built image under every runtime configuration
// through the Docker Engine: the server pinned to its CPUs, the load
// generator to the others, a fresh container per trial, a readiness wait
// and a warmup before each measured window. Trials are interleaved across
// images in a seeded, shuffled round-robin so machine drift hits all alike;
// after the minimum count, more trials go to the cells whose comparisons are
// still unseparated (rank.NeedMore) until they separate, reach the maximum,
// or the time budget is spent. Every finished trial is written at once,
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
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-variants/redis-variants/engine"
	"github.com/redis-variants/redis-variants/loadgen"
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

	Trials    int           // minimum trials per cell (0 = Profile.Trials, at least 1)
	MaxTrials int           // adaptive repetition stops here (0 = Profile.MaxTrials)
	Budget    time.Duration // no new trial starts after this long (0 = Profile.Budget; <0 = none)

	Generator  Generator         // nil = ExecGenerator{}
	Seed       int64             // shuffle seed (0 = from the clock); recorded in bench.json
	LockFile   string            // machine lock shared with the builder ("" = none)
	Labels     map[string]string // put on every container; when set, the start-up sweep is limited to containers carrying them
	Thresholds rank.Thresholds   // for NeedMore (zero = rank.DefaultThresholds)
	ReadyWait  time.Duration     // readiness timeout per trial (0 = 30s)
	Log        io.Writer         // progress (nil = discard)
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
	Seed        int64         `json:"seed"`
	Profile     string        `json:"profile"`
	Images      []Image       `json:"images"`
	Cells       int           `json:"cells"`
	Planned     int           `json:"planned"` // cells × minimum trials
	Resumed     int           `json:"resumed"` // trials found from an earlier run
	Done        int           `json:"done"`    // trials finished by this run
	Total       int           `json:"total"`   // trials on disk now
	Rounds      int           `json:"rounds"`  // rounds started by this run
	BudgetSpent bool          `json:"budget_spent"`
	Failures    []Failure     `json:"failures,omitempty"`
	Dropped     []Cell        `json:"dropped,omitempty"` // cells given up after repeated failures
	Warnings    []string      `json:"warnings,omitempty"`
	Elapsed     time.Duration `json:"elapsed"`
	Finished    time.Time     `json:"finished"`
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

// LoadTrials reads every trial of a run folder.
func LoadTrials(run *results.Run) ([]rank.Trial, error) {
	var out []rank.Trial
	root := run.Path("trials")
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, os.ErrNotExist) && p == root {
				return filepath.SkipDir
			}
			return err
		}
		if d.IsDir() || !strings.HasSuffix(p, ".json") || strings.HasPrefix(d.Name(), ".") {
			return nil
		}
		rel, _ := filepath.Rel(run.Dir, p)
		var t rank.Trial
		if err := run.ReadJSON(rel, &t); err != nil {
			return fmt.Errorf("reading trial: %w", err)
		}
		out = append(out, t)
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Seq < out[j].Seq })
	return out, nil
}

func cellOf(t rank.Trial) Cell {
	return Cell{Image: t.Variant, Runtime: t.Runtime, Test: t.Test, Pipeline: max(t.Pipeline, 1)}
}

// Run benchmarks o.Images under o.Runtimes with o.Profile. It returns the
// summary even on error (an interrupted run reports what it finished).
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
	minT := o.Trials
	if minT == 0 {
		minT = o.Profile.Trials
	}
	minT = max(minT, 1)
	maxT := o.MaxTrials
	if maxT == 0 {
		maxT = o.Profile.MaxTrials
	}
	maxT = max(maxT, minT)
	budget := o.Budget
	if budget == 0 {
		budget = o.Profile.Budget
	}
	seed := o.Seed
	if seed == 0 {
		seed = time.Now().UnixNano()
	}
	th := o.Thresholds
	if th.Confidence == 0 {
		th = rank.DefaultThresholds()
	}
	th.MinTrials, th.MaxTrials = minT, maxT
	sum := Summary{Seed: seed, Profile: o.Profile.Name}

	tests := make([]string, 0, len(o.Profile.Tests))
	for _, t := range o.Profile.Tests {
		tests = append(tests, strings.ToUpper(t))
	}
	pipes := o.Profile.Pipelines
	if len(pipes) == 0 {
		pipes = []int{1}
	}

	// Images: skip those whose verification failed, flag the unverified.
	var images []Image
	for _, im := range o.Images {
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
	sum.Images = images
	if len(images) == 0 || len(o.Runtimes) == 0 || len(tests) == 0 {
		return sum, fmt.Errorf("bench: nothing to run (%d images, %d runtimes, %d tests)", len(images), len(o.Runtimes), len(tests))
	}
	byName := map[string]Image{}
	for _, im := range images {
		byName[im.Name] = im
	}
	rts := map[string]variants.Runtime{}
	for _, rt := range o.Runtimes {
		rts[rt.Name] = rt
	}
	var cells []Cell
	for _, im := range images {
		for _, rt := range o.Runtimes {
			for _, t := range tests {
				for _, p := range pipes {
					cells = append(cells, Cell{Image: im.Name, Runtime: rt.Name, Test: t, Pipeline: max(p, 1)})
				}
			}
		}
	}
	sum.Cells, sum.Planned = len(cells), len(cells)*minT

	// Never benchmark while building.
	if o.LockFile != "" {
		unlock, err := lockMachine(ctx, o.LockFile, log)
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

	trials, err := LoadTrials(o.Run)
	if err != nil {
		return sum, fmt.Errorf("bench: resuming: %w", err)
	}
	sum.Resumed = len(trials)
	counts := map[Cell]int{}
	nextRep := map[Cell]int{}
	seq := 0
	for _, t := range trials {
		c := cellOf(t)
		counts[c]++
		nextRep[c] = max(nextRep[c], t.Rep+1)
		seq = max(seq, t.Seq+1)
	}
	if sum.Resumed > 0 {
		fmt.Fprintf(log, "resuming: %d trial(s) already done\n", sum.Resumed)
	}
	planned := map[Cell]bool{}
	for _, c := range cells {
		planned[c] = true
	}

	cpuModel := readCPUModel()
	sockRoot, err := os.MkdirTemp("", "redis-variants-bench-")
	if err != nil {
		return sum, fmt.Errorf("bench: socket folder: %w", err)
	}
	defer os.RemoveAll(sockRoot)

	failures := map[Cell]int{}
	dropped := map[Cell]bool{}
	rng := rand.New(rand.NewSource(seed))
	finish := func(err error) (Summary, error) {
		sum.Total = len(trials)
		sum.Elapsed = time.Since(start)
		sum.Finished = time.Now().UTC()
		for c := range dropped {
			sum.Dropped = append(sum.Dropped, c)
		}
		sort.Slice(sum.Dropped, func(i, j int) bool { return sum.Dropped[i].String() < sum.Dropped[j].String() })
		if werr := o.Run.WriteJSON("bench.json", sum); werr != nil && err == nil {
			err = werr
		}
		return sum, err
	}
	for {
		// Which cells need a trial this round.
		// Round-robin: a round brings every cell at the lowest count one
		// trial further, so a resumed run evens out before going on.
		level := minT
		for _, c := range cells {
			if !dropped[c] {
				level = min(level, counts[c])
			}
		}
		var need []Cell
		for _, c := range cells {
			if !dropped[c] && counts[c] == level && level < minT {
				need = append(need, c)
			}
		}
		if len(need) == 0 && maxT > minT {
			var mine []rank.Trial
			for _, t := range trials {
				if planned[cellOf(t)] {
					mine = append(mine, t)
				}
			}
			for _, c := range rank.NeedMore(mine, th) {
				c.Pipeline = max(c.Pipeline, 1)
				if planned[c] && !dropped[c] && counts[c] < maxT {
					need = append(need, c)
				}
			}
		}
		if len(need) == 0 {
			break
		}
		sort.Slice(need, func(i, j int) bool { return need[i].String() < need[j].String() })
		rng.Shuffle(len(need), func(i, j int) { need[i], need[j] = need[j], need[i] })
		sum.Rounds++
		fmt.Fprintf(log, "round %d: %d trial(s)\n", sum.Rounds, len(need))
		for _, c := range need {
			if err := ctx.Err(); err != nil {
				return finish(err)
			}
			if budget > 0 && time.Since(start) >= budget {
				sum.BudgetSpent = true
				fmt.Fprintf(log, "time budget %s spent: stopping with %d of %d planned trials\n", budget, len(trials), sum.Planned)
				return finish(nil)
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
				}
				continue
			}
			t.Rep, t.Seq, t.CPUModel = nextRep[c], seq, cpuModel
			t.VariantID, t.Reference = im.ID, im.Reference
			if err := o.Run.WriteJSON(TrialRel(c, t.Rep), t); err != nil {
				return finish(fmt.Errorf("bench: %w", err))
			}
			nextRep[c]++
			seq++
			counts[c]++
			trials = append(trials, t)
			sum.Done++
			fmt.Fprintf(log, "  %s #%d: %.0f ops/s, p99 %.3f ms, server %.0f ns/op, client CPU %.0f%%\n",
				c, t.Rep, t.OpsPerSec, t.P99Ms, t.ServerCPUNsPerOp, 100*t.ClientCPUShare)
		}
	}
	return finish(nil)
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
	if err := rdb.FlushAll(ctx).Err(); err != nil {
		return rank.Trial{}, fmt.Errorf("FLUSHALL: %w", err)
	}
	cfg := loadgen.Config{
		Addr:     srv.Addr,
		Socket:   srv.Socket,
		Clients:  o.Profile.Clients,
		Pipeline: c.Pipeline,
		DataSize: o.Profile.DataSize,
		Keyspace: o.Profile.Keyspace,
		Tests:    []string{c.Test},
	}
	if srv.Addr == "" {
		cfg.Addr = ""
	} else {
		cfg.Socket = "" // measure over TCP when the runtime has TCP
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
	cpu0, err := o.Engine.CPUUsageNanos(ctx, srv.ID)
	if err != nil {
		return rank.Trial{}, err
	}
	started := time.Now()
	res, clientCPU, err := gen.Generate(ctx, cfg, rt.ClientCPUs)
	wall := time.Since(started)
	if err != nil {
		return rank.Trial{}, err
	}
	cpu1, err := o.Engine.CPUUsageNanos(ctx, srv.ID)
	if err != nil {
		return rank.Trial{}, err
	}
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

func readCPUModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// lockMachine takes the exclusive machine lock (shared with the builder),
// waiting for it with a message.
func lockMachine(ctx context.Context, name string, log io.Writer) (func(), error) {
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return nil, fmt.Errorf("machine lock: %w", err)
	}
	f, err := os.OpenFile(name, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("machine lock: %w", err)
	}
	told := false
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("machine lock %s: %w", name, err)
		}
		if !told {
			fmt.Fprintf(log, "waiting for the machine lock %s (a build is running; benchmarks never run during builds)\n", name)
			told = true
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("waiting for the machine lock %s: %w", name, ctx.Err())
		case <-time.After(500 * time.Millisecond):
		}
	}
}
