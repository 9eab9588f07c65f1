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
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis-variants/redis-variants/engine"
	"github.com/redis-variants/redis-variants/loadgen"
	"github.com/redis-variants/redis-variants/machine"
	"github.com/redis-variants/redis-variants/progress"
	"github.com/redis-variants/redis-variants/rank"
	"github.com/redis-variants/redis-variants/results"
	"github.com/redis-variants/redis-variants/variants"
)

// Image is one image to benchmark.
type Image struct {
	Name      string `json:"name"`               // variant or reference name
	ID        string `json:"id,omitempty"`       // variants.Variant.ID
	ImageID   string `json:"image_id,omitempty"` // the image ID (config digest): every record of it names this one
	Ref       string `json:"ref"`                // Docker Engine reference
	Reference bool   `json:"reference"`          // a reference rather than a tuned variant
	Verified  string `json:"verified,omitempty"` // verify status: "passed", "failed", "" (never verified)
	// Draws are the other layout draws of the image's build spec (draws
	// 2..L; the Image itself is draw 1): the same objects linked in other
	// orders. A pair's replicates spread over the L draws in turn, so its
	// interval covers the build spec; standalone trials and memory
	// servers run draw 1.
	Draws []Image `json:"draws,omitempty"`
}

// Draw is the layout draw replicate rep of the image's pairs runs and its
// number (1..L), draws taken in turn; 0 for an image of one binary.
func (im Image) Draw(rep int) (Image, int) {
	if len(im.Draws) == 0 {
		return im, 0
	}
	k := rep % (1 + len(im.Draws))
	if k == 0 {
		return im, 1
	}
	return im.Draws[k-1], k + 1
}

// Engine is what bench needs from the Docker Engine; *engine.Client has it.
type Engine interface {
	SweepMatching(ctx context.Context, match map[string]string) (int, error)
	StartServer(ctx context.Context, s engine.ServerSpec) (*engine.Server, error)
	WaitReady(ctx context.Context, s *engine.Server, timeout time.Duration) error
	Remove(ctx context.Context, containerID string) error
	CPUUsageNanos(ctx context.Context, containerID string) (uint64, error)
}

// watchedEngine passes every call to Engine and counts the servers it
// refused to start, remembering the last refusal.
type watchedEngine struct {
	Engine
	mu      sync.Mutex
	refused int
	last    error
}

func (w *watchedEngine) StartServer(ctx context.Context, spec engine.ServerSpec) (*engine.Server, error) {
	srv, err := w.Engine.StartServer(ctx, spec)
	if err != nil && ctx.Err() == nil {
		w.mu.Lock()
		w.refused, w.last = w.refused+1, err
		w.mu.Unlock()
	}
	return srv, err
}

var errNoState = errors.New("the Engine does not report container states")

// ContainerState passes on to the Engine when it can tell (StateEngine).
func (w *watchedEngine) ContainerState(ctx context.Context, id string) (running, oomKilled bool, err error) {
	se, ok := w.Engine.(StateEngine)
	if !ok {
		return false, false, errNoState
	}
	return se.ContainerState(ctx, id)
}

// refusals is how many servers the Engine refused to start so far, and
// the last refusal.
func (w *watchedEngine) refusals() (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.refused, w.last
}

// recordError is a measurement's record that could not be written (a
// full disk): the bench stops, and says that what it wrote before is whole
// (each record is written atomically) and that a re-run resumes from it.
func recordError(err error) error {
	return fmt.Errorf("bench: %w (the records written before it are whole: make room and run bench again to resume)", err)
}

// pinger is an Engine that can say whether it still answers
// (*engine.Client); the bench asks it after a measurement that did not
// finish, and stops when it does not.
type pinger interface {
	Ping(ctx context.Context) error
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
	// Stat reads the machine's per-CPU times (nil = machine.ReadCPUTimes):
	// a window's server CPUs' own account of it.
	Stat func() (map[int]machine.CPUTimes, error)
	// Settle is how long a pair waits at most, before each benchmark's
	// windows, for the machine to be quiet (0 = 3 s; < 0 = no wait).
	Settle time.Duration

	Generator Generator         // nil = ExecGenerator{}
	Sidecar   string            // the static generator a pod runtime's sidecars run ("" = redis-loadgen beside the generator's binary)
	Seed      int64             // shuffle seed (0 = from the clock); recorded in bench.json
	LockFile  string            // machine lock shared with the builder ("" = none)
	Labels    map[string]string // put on every container; when set, the start-up sweep is limited to containers carrying them
	ReadyWait time.Duration     // readiness timeout per trial (0 = 30s)
	Log       io.Writer         // every measurement's line (nil = discard); run puts it in the run folder
	// MemoryLimit is the memory workload's servers' limit in bytes (0 =
	// MemoryLimit(Profile.Memory): 4× the target and 128 MiB).
	MemoryLimit int64
	// Progress shows the windows done of those planned, with an ETA (a
	// live line on a terminal, a line per tenth otherwise), and failures.
	Progress *progress.Printer
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
	LostTests         []string      `json:"lost_tests,omitempty"` // benchmarks lost from a replicate, with why
	StandIns          int           `json:"stand_ins,omitempty"`  // replicates on disk that stand in for a short one
	Resumed           int           `json:"resumed"`              // trials found from an earlier run
	Stale             int           `json:"stale,omitempty"`      // records of an earlier image of the same name, set aside (.stale) and measured again
	Done              int           `json:"done"`                 // trials finished by this run
	Total             int           `json:"total"`                // trials on disk now
	BudgetSpent       bool          `json:"budget_spent"`
	Extension         *Extension    `json:"extension,omitempty"`       // replicates added toward the profile's target
	Sequential        *Sequential   `json:"sequential,omitempty"`      // a sequential profile's looks at the decision and the rounds they gave
	MemoryPlanned     int           `json:"memory_planned,omitempty"`  // memory-workload servers in the design
	MemoryDone        int           `json:"memory_done,omitempty"`     // measured by this run
	MemoryFailures    []string      `json:"memory_failures,omitempty"` // servers with no figures, or stopped by the OOM killer
	LatencyTrials     int           `json:"latency_trials,omitempty"`  // fixed-rate latency trials measured by this run
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
	mem  *memSlot
	cell Cell
	rep  int
}

// image names what the unit measures: its image (a pair's, not its base).
func (u unit) image() string {
	switch {
	case u.pair != nil:
		return u.pair.key.Image
	case u.mem != nil:
		return u.mem.image
	}
	return u.cell.Image
}

// Interface is the bench stage: it measures images and says what it did
// (also on error: an interrupted bench reports what it finished). *Bencher
// measures through the Docker Engine; Locked and Record wrap any Interface
// with what a run needs around it, as builder's wrappers do.
type Interface interface {
	Bench(ctx context.Context, images []Image) (Summary, error)
}

var (
	_ Interface = (*Bencher)(nil)
	_ Interface = (*locked)(nil)
	_ Interface = (*recorder)(nil)
)

// Run benchmarks o.Images: a Bencher, under the machine lock when
// o.LockFile is set, with its summary recorded in bench.json.
func Run(ctx context.Context, o Options) (Summary, error) {
	b, err := New(o)
	if err != nil {
		return Summary{}, err
	}
	var i Interface = b
	if o.LockFile != "" {
		var lockLog io.Writer = b.log
		if o.Progress != nil {
			lockLog = o.Progress.Writer() // waiting for the lock is said on the console
		}
		i = Locked(i, o.LockFile, lockLog)
	}
	return Record(i, o.Run).Bench(ctx, o.Images)
}

// Locked holds the machine lock at lockFile while next measures: never
// benchmark while building or verifying.
func Locked(next Interface, lockFile string, log io.Writer) Interface {
	return &locked{next: next, file: lockFile, log: log}
}

type locked struct {
	next Interface
	file string
	log  io.Writer
}

func (l *locked) Bench(ctx context.Context, images []Image) (Summary, error) {
	unlock, err := machine.Lock(ctx, l.file, "bench", l.log)
	if err != nil {
		return Summary{}, err
	}
	defer unlock()
	return l.next.Bench(ctx, images)
}

// Record writes next's summary to run's bench.json (BenchFile) when it
// returns, on error too, atomically.
func Record(next Interface, run *results.Run) Interface { return &recorder{next: next, run: run} }

type recorder struct {
	next Interface
	run  *results.Run
}

func (r *recorder) Bench(ctx context.Context, images []Image) (Summary, error) {
	sum, err := r.next.Bench(ctx, images)
	if sum.Finished.IsZero() && err != nil {
		return sum, err // refused before measuring: nothing to record
	}
	if werr := r.run.WriteJSON(results.BenchFile, sum); werr != nil && err == nil {
		err = fmt.Errorf("bench: %w", werr)
	}
	return sum, err
}

// Bencher measures images through the Docker Engine with the options'
// runtimes and profile: the co-scheduled pairs that decide the ranking
// (see planPairs) and the standalone trials that give absolute figures,
// all in one seeded random order fixed before anything is measured. Every
// finished window and trial is written to the run folder at once, and a
// later Bench on the same folder resumes from them.
type Bencher struct {
	o      Options
	gen    Generator
	cpu    func(containerID string) (uint64, error)
	budget time.Duration
	seed   int64
	log    io.Writer
	// now is the session's clock (time.Now): what the budget, the
	// replicates' pace and the extension's time are read from. The
	// simulations (sim_test.go) run it on simulated time.
	now func() time.Time
	// meter opens and measures the pairs (nil = the Docker Engine and
	// the generators, pairEnv); the simulations put a noise model here.
	meter pairMeter
}

// New checks o and returns its Bencher.
func New(o Options) (*Bencher, error) {
	if o.Run == nil || o.Engine == nil {
		return nil, errors.New("bench: Run and Engine are required")
	}
	b := &Bencher{gen: o.Generator, cpu: o.CPU, log: o.Log, now: time.Now}
	if b.log == nil {
		b.log = io.Discard
	}
	if b.gen == nil {
		b.gen = ExecGenerator{}
	}
	if b.cpu == nil {
		b.cpu = machine.ContainerCPUNanos
	}
	if o.Stat == nil {
		o.Stat = machine.ReadCPUTimes
	}
	var err error
	b.o, b.budget, b.seed, err = withProfile(o)
	if err != nil {
		return nil, err
	}
	return b, nil
}

// session is one Bench call: the design and what has been measured.
type session struct {
	*Bencher
	watch *watchedEngine
	// refusedRun: the images of the measurements in a row, up to now,
	// whose servers the Engine refused to start
	refusedRun []string
	start      time.Time
	sum        Summary
	byName     map[string]Image
	drawByName map[string]Image // layout draws 2..L, by their own names (resume judges their records)
	rts        map[string]variants.Runtime
	benches    []rank.Bench
	slots      []pairSlot
	units      []unit
	primary    string
	cpuModel   string
	sockRoot   string
	env        *pairEnv

	trials     []rank.Trial
	planned    map[rank.PairKey]int // planned replicates per pair
	standIns   map[rank.PairKey]int // stand-ins scheduled per pair
	ctr        *progress.Counter
	doneTrial  map[string]bool
	repByRel   map[string]*rank.Replicate
	seq        int
	look       int // the look whose round new replicates belong to (sequential profiles)
	failures   map[Cell]int
	dropped    map[Cell]bool
	doneMem    map[string]bool // memory trials on disk, by MemoryRel
	memRetried map[string]bool // memory trials measured again after an OOM
	last       string          // the latest measurement's line, for the live display
	repTime    time.Duration   // time the replicates measured in this session took
	repTimed   int             // how many
}

// since is the time on the session's clock since t.
func (s *session) since(t time.Time) time.Duration { return s.now().Sub(t) }

// logf writes one line of the measurement log and keeps it as the latest.
func (s *session) logf(format string, a ...any) {
	line := fmt.Sprintf(format, a...)
	fmt.Fprint(s.log, line)
	s.last = strings.TrimSpace(line)
}

// size is how many windows a unit measures (a standalone trial counts
// as one), and done how many of them are on disk.
func (s *session) size(u unit) int {
	if u.mem != nil {
		return 1
	}
	if u.pair != nil {
		return len(s.benches) * s.o.Profile.Windows
	}
	return 1
}

func (s *session) done(u unit) int {
	if u.mem != nil {
		if s.doneMem[u.mem.rel()] {
			return 1
		}
		return 0
	}
	if u.pair != nil {
		rep := s.repByRel[PairRel(u.pair.key, u.pair.rep)]
		if rep == nil {
			return 0
		}
		if rep.Failed != "" {
			return s.size(u)
		}
		return min(len(rep.Windows)+len(rep.Lost)*s.o.Profile.Windows, s.size(u))
	}
	if s.doneTrial[TrialRel(u.cell, u.rep)] || s.dropped[u.cell] {
		return 1
	}
	return 0
}

// Bench implements Interface. It returns the summary even on error.
func (b *Bencher) Bench(ctx context.Context, images []Image) (Summary, error) {
	s := &session{Bencher: b, start: b.now(), failures: map[Cell]int{}, dropped: map[Cell]bool{}}
	s.watch = &watchedEngine{Engine: b.o.Engine}
	if err := s.design(images); err != nil {
		return s.sum, err
	}
	// Leftovers from an interrupted run.
	if n, err := b.o.Engine.SweepMatching(ctx, b.o.Labels); err != nil {
		return s.sum, fmt.Errorf("bench: removing leftover containers: %w", err)
	} else if n > 0 {
		fmt.Fprintf(b.log, "removed %d leftover container(s)\n", n)
	}
	if err := s.resume(); err != nil {
		return s.sum, err
	}
	sockRoot, err := os.MkdirTemp("", "redis-variants-bench-")
	if err != nil {
		return s.sum, fmt.Errorf("bench: socket folder: %w", err)
	}
	defer os.RemoveAll(sockRoot)
	s.sockRoot = sockRoot
	eng, cpu, closeNative, err := withNative(b.o.Engine, b.cpu, sockRoot, s.runsNative())
	if err != nil {
		return s.sum, fmt.Errorf("bench: %w", err)
	}
	defer closeNative()
	s.watch.Engine = eng
	s.env = &pairEnv{o: b.o, gen: b.gen, byName: s.byName, rts: s.rts, benches: s.benches, sockRoot: sockRoot, cpu: cpu,
		cpuModel: s.cpuModel, log: s.logf, meter: b.meter}
	s.env.o.Engine = s.watch // every server of the session is started through the watch
	s.env.pods, _ = b.o.Engine.(sidecars)
	if len(s.slots) > 0 {
		sess, ok := b.gen.(Sessions)
		if !ok {
			return s.sum, fmt.Errorf("bench: co-scheduled pairs need a generator that stays up for a replicate; %T cannot (bench.Sessions)", b.gen)
		}
		s.env.sessions = sess
	}
	head := fmt.Sprintf("bench: %d replicate(s) of %d pair(s) x %d window(s) x %d benchmark(s), %d standalone trial(s), %d memory-workload server(s), seed %d",
		len(s.slots), countPairs(s.slots), b.o.Profile.Windows, len(s.benches), s.sum.Planned, s.sum.MemoryPlanned, b.seed)
	fmt.Fprintln(b.log, head)
	b.o.Progress.Println("%s", head)
	if err := s.calibrate(ctx); err != nil {
		return s.finish(err)
	}
	if err := s.measure(ctx); err != nil {
		return s.finish(err)
	}
	if err := s.looks(ctx); err != nil {
		return s.finish(err)
	}
	if err := s.extend(ctx); err != nil {
		return s.finish(err)
	}
	return s.finish(s.latency(ctx))
}

// design lays out every measurement before any is made, in one order
// drawn from the seed, and writes it to bench-plan.json.
func (s *session) design(all []Image) error {
	o := s.o
	s.sum = Summary{Seed: s.seed, Profile: o.Profile.Name}
	s.benches = profileBenches(o.Profile)
	images := runnable(all, s.log, &s.sum)
	s.sum.Images = images
	if len(images) == 0 || len(o.Runtimes) == 0 || len(s.benches) == 0 {
		return fmt.Errorf("bench: nothing to run (%d images, %d runtimes, %d tests)", len(images), len(o.Runtimes), len(o.Profile.Tests))
	}
	s.byName = map[string]Image{}
	s.drawByName = map[string]Image{}
	for _, im := range images {
		s.byName[im.Name] = im
		for _, d := range im.Draws {
			s.drawByName[d.Name] = d
		}
	}
	s.rts = map[string]variants.Runtime{}
	for _, rt := range o.Runtimes {
		s.rts[rt.Name] = rt
	}
	rng := rand.New(rand.NewSource(s.seed))
	if _, ok := s.byName[o.Primary]; ok {
		s.primary = o.Primary
	}
	slots, err := pairDesign(o, images, s.primary, rng, s.log, &s.sum)
	if err != nil {
		return err
	}
	s.slots = slots
	s.planned, s.standIns = map[rank.PairKey]int{}, map[rank.PairKey]int{}
	for i := range slots {
		s.planned[slots[i].key]++
		s.units = append(s.units, unit{pair: &slots[i]})
	}
	cells := standaloneCells(o, images, s.benches, s.primary)
	for _, c := range cells {
		for r := 0; r < o.Profile.Trials; r++ {
			s.units = append(s.units, unit{cell: c, rep: r})
		}
	}
	if m := o.Profile.Memory; m != nil {
		avail, _ := machine.MemAvailable()
		if err := CheckMemory(m, o.limit(), avail); err != nil {
			return err
		}
		mu := memoryUnits(o, images, s.primary)
		s.units = append(s.units, mu...)
		s.sum.MemoryPlanned = len(mu)
	}
	rng.Shuffle(len(s.units), func(i, j int) { s.units[i], s.units[j] = s.units[j], s.units[i] })
	s.sum.Cells, s.sum.Planned = len(cells), len(cells)*o.Profile.Trials
	s.sum.PlannedReplicates = len(slots)
	s.sum.Primary = s.primary
	if err := o.Run.WriteJSON(results.BenchPlanFile, benchPlan{Seed: s.seed, Profile: o.Profile, Primary: s.primary, Units: describe(s.units)}); err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	return nil
}

// standaloneCells are the cells of standalone trials: every image under
// the runtimes it is ranked under; the primary reference under the
// others too (the runtime axes' end-to-end figures).
func standaloneCells(o Options, images []Image, benches []rank.Bench, primary string) []Cell {
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
			if rt.Network == variants.NetworkPod {
				continue // its generator runs in a sidecar of the pairs' servers only
			}
			for _, b := range benches {
				cells = append(cells, Cell{Image: im.Name, Runtime: rt.Name, Test: b.Test, Pipeline: b.Pipeline})
			}
		}
	}
	return cells
}

// resume reads what an earlier bench of the run finished; a record that
// cannot be read is measured again.
func (s *session) resume() error {
	trials, badTrials, err := results.LoadTrials(s.o.Run)
	if err != nil {
		return fmt.Errorf("bench: resuming: %w", err)
	}
	reps, badReps, err := results.LoadReplicates(s.o.Run)
	if err != nil {
		return fmt.Errorf("bench: resuming: %w", err)
	}
	for _, sk := range append(badTrials, badReps...) {
		fmt.Fprintf(s.log, "resuming: left out %v: measured again\n", sk)
	}
	trials = keepCurrent(s, trials, func(t rank.Trial) (string, []string) {
		return TrialRel(cellOf(t), t.Rep), []string{t.Variant, t.ImageID}
	})
	reps = keepCurrent(s, reps, func(r rank.Replicate) (string, []string) {
		return PairRel(r.PairKey, r.Rep), []string{r.ImageName(), r.ImageID, r.Base, r.BaseID}
	})
	s.trials = trials
	s.sum.Resumed = len(trials)
	mem, badMem, err := results.LoadMemory(s.o.Run)
	if err != nil {
		return fmt.Errorf("bench: resuming: %w", err)
	}
	for _, sk := range badMem {
		fmt.Fprintf(s.log, "resuming: left out %v: measured again\n", sk)
	}
	mem = keepCurrent(s, mem, func(t results.MemoryTrial) (string, []string) {
		return results.MemoryRel(t.Image, t.Control, t.Rep), []string{t.Image, t.ImageID}
	})
	s.doneMem, s.memRetried = map[string]bool{}, map[string]bool{}
	for _, t := range mem {
		if !t.OOM {
			s.doneMem[results.MemoryRel(t.Image, t.Control, t.Rep)] = true
		}
		s.seq = max(s.seq, t.Seq+1)
	}
	s.doneTrial = map[string]bool{}
	for _, t := range trials {
		s.doneTrial[TrialRel(cellOf(t), t.Rep)] = true
		s.seq = max(s.seq, t.Seq+1)
	}
	s.repByRel = map[string]*rank.Replicate{}
	for i := range reps {
		s.repByRel[PairRel(reps[i].PairKey, reps[i].Rep)] = &reps[i]
		s.seq = max(s.seq, reps[i].Seq+1)
		s.sum.ResumedWindows += len(reps[i].Windows)
	}
	if s.sum.Resumed+s.sum.ResumedWindows > 0 {
		fmt.Fprintf(s.log, "resuming: %d trial(s) and %d window(s) of %d replicate(s) already done\n", s.sum.Resumed, s.sum.ResumedWindows, len(reps))
	}
	host, _ := machine.Read()
	s.cpuModel = host.CPUModel
	return nil
}

// measure runs the units in their drawn order, skipping what is done; a
// failed trial is tried once more at the end, then its cell is dropped.
func (s *session) measure(ctx context.Context) error {
	total, done := 0, 0
	for _, u := range s.units {
		total += s.size(u)
		done += s.done(u)
	}
	ctr := s.o.Progress.Count("windows", done, total)
	s.ctr = ctr
	for n := 0; n < len(s.units); n++ {
		u := s.units[n]
		before := s.done(u) // a failed trial, measured again at the end, counts when it is done
		if err := ctx.Err(); err != nil {
			return err
		}
		if s.budget > 0 && s.since(s.start) >= s.budget {
			s.sum.BudgetSpent = true
			fmt.Fprintf(s.log, "time budget %s spent: stopping after %d of %d measurements; the design is incomplete\n", s.budget, n, len(s.units))
			return nil
		}
		refusedBefore, _ := s.watch.refusals()
		var err error
		if u.mem != nil {
			err = s.memory(ctx, u)
		} else if u.pair != nil {
			err = s.replicate(ctx, u.pair)
		} else {
			err = s.trial(ctx, u)
		}
		if err != nil {
			return err
		}
		// a unit the Engine refused a server of can count as done (its
		// cell dropped, its replicate given up): both are asked about
		if refused, _ := s.watch.refusals(); refused > refusedBefore || s.done(u) < s.size(u) {
			if err := s.engineAnswers(ctx, n, u, refusedBefore); err != nil {
				return err
			}
		} else {
			s.refusedRun = nil
		}
		ctr.Add(max(s.done(u)-before, 0), s.last)
	}
	return nil
}

// engineAnswers is nil while the Docker Engine works. A measurement that
// failed because the daemon went away (stopped, restarting, crashed)
// would fail again for every unit left, each recorded as the image's
// failure, and the cells dropped: the bench stops instead, saying so;
// what it finished is on disk, and running it again resumes. The Engine
// is taken as not working when it does not answer a ping, or when it
// refused to start the servers of two different images in a row (a
// daemon shutting down still answers pings for seconds; one image whose
// servers do not start is that image's failure).
func (s *session) engineAnswers(ctx context.Context, n int, u unit, refusedBefore int) error {
	var err error
	if p, ok := s.watch.Engine.(pinger); ok {
		pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err = p.Ping(pctx)
		cancel()
	}
	if refused, last := s.watch.refusals(); refused > refusedBefore {
		s.refusedRun = append(s.refusedRun, u.image())
		if err == nil && len(slices.Compact(slices.Sorted(slices.Values(s.refusedRun)))) > 1 {
			err = fmt.Errorf("Docker Engine refused to start the servers of %d measurements in a row, of different images (%s): %w",
				len(s.refusedRun), strings.Join(s.refusedRun, ", "), last)
		}
	} else {
		s.refusedRun = nil
	}
	if err == nil || ctx.Err() != nil {
		return nil
	}
	fmt.Fprintf(s.log, "the Docker Engine stopped working after %d of %d measurements: %v\n", n+1, len(s.units), err)
	return fmt.Errorf("bench: stopped after %d of %d measurements: %w; what finished is kept in %s (%d trials, %d windows this time): start the Engine again (make setup) and run bench again to resume",
		n+1, len(s.units), err, s.o.Run.Dir, s.sum.Done, s.sum.DoneWindows)
}

// replicate measures (the rest of) one replicate of a pair.
func (s *session) replicate(ctx context.Context, sl *pairSlot) error {
	rel := PairRel(sl.key, sl.rep)
	rep := s.repByRel[rel]
	if rep == nil {
		// a stand-in runs the draw of the replicate it stands in for
		turn := sl.rep
		if sl.replaces != nil {
			turn = *sl.replaces
		}
		im, draw := s.byName[sl.key.Image].Draw(turn)
		rep = &rank.Replicate{PairKey: sl.key, Rep: sl.rep, Seq: s.seq, Swapped: sl.swapped, ImageReference: sl.imageRef, CPUModel: s.cpuModel,
			ImageID: im.ImageID, BaseID: s.byName[sl.key.Base].ImageID, Added: sl.extension, Look: s.lookOf()}
		if draw > 0 {
			rep.Draw, rep.DrawImage = draw, im.Name
		}
		s.seq++
		s.repByRel[rel] = rep
	}
	if sl.replaces != nil {
		rep.Replaces = sl.replaces
	}
	if rep.Failed == "" {
		before := len(rep.Windows)
		t0 := s.now()
		if err := s.env.runReplicate(ctx, rep); err != nil {
			return err
		}
		if len(rep.Windows) > before {
			s.repTime += s.since(t0)
			s.repTimed++
		}
		s.sum.DoneWindows += len(rep.Windows) - before
		if len(rep.Windows) > before {
			s.sum.DoneReplicates++
		}
		if strings.Contains(rep.Failed, ErrNoCgroup.Error()) {
			return fmt.Errorf("bench: co-scheduled pairs need each server's CPU time from its cgroup: %s (run with a profile of replicates: 0 for standalone trials only)", rep.Failed)
		}
	}
	if !sl.extension {
		s.standIn(sl, rep)
	}
	return nil
}

// standIn schedules, at the end, a stand-in for rep when it is short (a
// benchmark lost, or given up) and its pair has stand-ins left
// (maxStandIns): a fresh replicate numbered after the planned ones, its
// sides as rep's, so that the pair's swaps stay balanced. Units are
// visited in their drawn order and a stand-in's number is its order among
// the pair's, so a resumed bench schedules the same stand-ins under the
// same numbers.
func (s *session) standIn(sl *pairSlot, rep *rank.Replicate) {
	if rep.Failed == "" && len(rep.Lost) == 0 {
		return
	}
	k := sl.key
	if s.standIns[k] >= maxStandIns(s.planned[k]) {
		return
	}
	was := rep.Rep
	ns := &pairSlot{key: k, rep: s.planned[k] + s.standIns[k], swapped: rep.Swapped, imageRef: sl.imageRef, replaces: &was}
	s.standIns[k]++
	u := unit{pair: ns}
	s.units = append(s.units, u)
	s.ctr.Grow(s.size(u))
	s.logf("  %s #%d: short (%s): stand-in #%d scheduled at the end\n", k, rep.Rep, shortWhy(rep), ns.rep)
}

// shortWhy says in a few words why a replicate is short.
func shortWhy(rep *rank.Replicate) string {
	if rep.Failed != "" {
		return "given up"
	}
	var b []string
	for _, l := range rep.Lost {
		b = append(b, l.Bench().String())
	}
	return "lost " + strings.Join(b, ", ")
}

// trial measures one standalone trial, unless it is done or its cell was
// dropped.
func (s *session) trial(ctx context.Context, u unit) error {
	c := u.cell
	if s.doneTrial[TrialRel(c, u.rep)] || s.dropped[c] {
		return nil
	}
	im, rt := s.byName[c.Image], s.rts[c.Runtime]
	t, err := s.env.runTrial(ctx, im, rt, c)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		s.failures[c]++
		s.sum.Failures = append(s.sum.Failures, Failure{Cell: c, Error: err.Error()})
		fmt.Fprintf(s.log, "  %s: FAILED: %v\n", c, err)
		s.o.Progress.Failure("bench %s: FAILED: %v", c, err)
		if s.failures[c] >= maxCellFailures {
			s.dropped[c] = true
			fmt.Fprintf(s.log, "  %s: giving up after %d failures\n", c, s.failures[c])
		} else {
			s.units = append(s.units, u) // measured again at the end
		}
		return nil
	}
	t.Rep, t.Seq, t.CPUModel = u.rep, s.seq, s.cpuModel
	t.VariantID, t.ImageID, t.Reference = im.ID, im.ImageID, im.Reference
	if err := s.o.Run.WriteJSON(TrialRel(c, t.Rep), t); err != nil {
		return recordError(err)
	}
	s.doneTrial[TrialRel(c, t.Rep)] = true
	s.seq++
	s.trials = append(s.trials, t)
	s.sum.Done++
	s.logf("  %s #%d (standalone): %.0f ops/s, p99 %.3f ms, server %.0f ns/op, machine %.0f ns/op, client CPU %.0f%%\n",
		c, t.Rep, t.OpsPerSec, t.P99Ms, t.ServerCPUNsPerOp, t.MachineCPUNsPerOp, 100*t.ClientCPUShare)
	return nil
}

// finish completes the summary from what is on disk now.
func (s *session) finish(err error) (Summary, error) {
	sum := &s.sum
	sum.Total = len(s.trials)
	if all, _, lerr := results.LoadReplicates(s.o.Run); lerr == nil {
		sum.Replicates = len(all)
		for _, r := range all {
			sum.Windows += len(r.Windows)
			if r.Replaces != nil {
				sum.StandIns++
			}
			if r.Failed != "" {
				sum.FailedReplicates = append(sum.FailedReplicates, fmt.Sprintf("%s #%d: %s", r.PairKey, r.Rep, r.Failed))
			}
			for _, l := range r.Lost {
				sum.LostTests = append(sum.LostTests, fmt.Sprintf("%s #%d %s: %s", r.PairKey, r.Rep, l.Bench(), l.Reason))
			}
		}
	}
	sum.Elapsed = s.since(s.start)
	sum.Finished = s.now().UTC()
	for c := range s.dropped {
		sum.Dropped = append(sum.Dropped, c)
	}
	sort.Slice(sum.Dropped, func(i, j int) bool { return sum.Dropped[i].String() < sum.Dropped[j].String() })
	return *sum, err
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
		for _, rt := range o.Runtimes {
			if rt.Network == variants.NetworkPod && o.Trials >= 0 {
				w := fmt.Sprintf("runtime %s (pod): no standalone trials: its generator runs in a sidecar of each pair's servers, so it is measured in the co-scheduled pairs only", rt.Name)
				fmt.Fprintln(log, w)
				sum.Warnings = append(sum.Warnings, w)
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
		if u.mem != nil {
			out[i] = u.mem.String()
			continue
		}
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

// runTrial measures one standalone trial: c's image alone under rt.
func (e *pairEnv) runTrial(ctx context.Context, im Image, rt variants.Runtime, c Cell) (rank.Trial, error) {
	srv, err := e.startServer(ctx, im, rt, "standalone")
	if err != nil {
		return rank.Trial{}, err
	}
	defer e.remove(ctx, srv)
	if err := e.o.Engine.WaitReady(ctx, srv, e.readyWait()); err != nil {
		return rank.Trial{}, err
	}
	cfg := genConfig(srv, e.o.Profile, c.Bench(), e.o.Profile.Clients)
	if err := flushAndPrepare(ctx, srv, cfg); err != nil {
		return rank.Trial{}, err
	}
	// Warmup: its own generator run, so the server's CPU time can be read
	// around the measured window alone.
	if e.o.Profile.Warmup > 0 {
		w := cfg
		w.Duration = e.o.Profile.Warmup
		if _, _, err := e.gen.Generate(ctx, w, rt.ClientCPUs); err != nil {
			return rank.Trial{}, fmt.Errorf("warmup: %w", err)
		}
	}
	cfg.Duration = e.o.Profile.Duration
	if cfg.Duration <= 0 {
		cfg.Duration = 10 * time.Second
	}
	t, err := e.measureTrial(ctx, srv, cfg, rt)
	if err != nil {
		return rank.Trial{}, err
	}
	t.Variant, t.Runtime, t.Test, t.Pipeline = im.Name, rt.Name, c.Test, c.Pipeline
	rdb := clientOf(srv)
	defer rdb.Close()
	info, err := rdb.Info(ctx, "memory").Result()
	if err != nil {
		return rank.Trial{}, fmt.Errorf("INFO memory: %w", err)
	}
	mem := loadgen.ParseInfo(info)
	t.RSSBytes, _ = strconv.ParseInt(mem["used_memory_rss"], 10, 64)
	t.Fragmentation, _ = strconv.ParseFloat(mem["mem_fragmentation_ratio"], 64)
	return t, nil
}

// measureTrial runs the generator on srv once with cfg and reads the
// server's, the machine's and docker-proxy's CPU time around it.
func (e *pairEnv) measureTrial(ctx context.Context, srv *engine.Server, cfg loadgen.Config, rt variants.Runtime) (rank.Trial, error) {
	readCPU := func() (uint64, error) {
		if v, err := e.cpu(srv.ID); err == nil {
			return v, nil
		}
		return e.o.Engine.CPUUsageNanos(ctx, srv.ID) // a remote engine: its stats API
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
	res, clientCPU, err := e.gen.Generate(ctx, cfg, rt.ClientCPUs)
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
	// Error replies are fast: a server that answers some requests with
	// errors looks faster than one that does the work. A trial with any
	// is no measurement (the paired windows reject them the same way).
	if res.Errors > 0 {
		return rank.Trial{}, fmt.Errorf("%d error replies among %d requests (%q): not a measurement", res.Errors, res.Requests, res.ErrorSamples)
	}
	t := rank.Trial{
		Clients:   cfg.Clients,
		OpsPerSec: res.OpsPerSec, Requests: res.Requests, Errors: res.Errors,
		AvgMs: res.AvgMs, P50Ms: res.P50Ms, P99Ms: res.P99Ms, P999Ms: res.P999Ms, MaxMs: res.MaxMs,
		Hist:    res.Hist,
		Started: started.UTC(), Duration: wall, Misses: res.Misses,
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
	ncpu, err := CountCPUs(rt.ClientCPUs)
	if err != nil {
		return rank.Trial{}, err
	}
	t.ClientCPUShare = clientShare(res, clientCPU, wall, ncpu)
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

// keepCurrent returns the records that describe the images benchmarked
// now; each other one (of an image of the same name built since, or of no
// named image) is renamed to <file>.stale, out of every reader's way, and
// measured again. ids gives a record's file and its (name, image ID)
// pairs; a name whose current image ID is unknown is not judged.
func keepCurrent[T any](s *session, recs []T, ids func(T) (string, []string)) []T {
	out := recs[:0]
	for _, r := range recs {
		rel, nv := ids(r)
		stale := ""
		for i := 0; i+1 < len(nv); i += 2 {
			im, ok := s.byName[nv[i]]
			if !ok {
				im, ok = s.drawByName[nv[i]]
			}
			if ok && im.ImageID != "" && im.ImageID != nv[i+1] {
				stale = fmt.Sprintf("%s is image %q now, the record's is %q", nv[i], im.ImageID, nv[i+1])
				break
			}
		}
		if stale == "" {
			out = append(out, r)
			continue
		}
		if err := os.Rename(s.o.Run.Path(rel), s.o.Run.Path(rel)+".stale"); err != nil {
			fmt.Fprintf(s.log, "resuming: %s: %s, and setting it aside failed: %v\n", rel, stale, err)
			continue
		}
		fmt.Fprintf(s.log, "resuming: %s describes another image (%s): set aside as %s.stale, measured again\n", rel, stale, rel)
		s.sum.Stale++
	}
	return out
}
