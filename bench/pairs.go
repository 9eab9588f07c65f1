package bench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"golang.org/x/sync/errgroup"

	"github.com/redis-variants/redis-variants/engine"
	"github.com/redis-variants/redis-variants/loadgen"
	"github.com/redis-variants/redis-variants/machine"
	"github.com/redis-variants/redis-variants/rank"
	"github.com/redis-variants/redis-variants/results"
	"github.com/redis-variants/redis-variants/variants"
)

// A co-scheduled pair: two servers pinned to the same server CPUs, each
// driven by its own generator process (half the profile's clients each,
// both pinned to the client CPUs and launched together, the launch order
// alternating from window to window). Each server's CPU time is read from
// its cgroup right before both generators start and right after both end;
// CPU ns per operation is the figure, and the log of the base's over the
// image's is the window's observation. Waves of the vCPU's speed hit both
// servers alike and cancel in that ratio.

// The window hygiene limits (see rank.MinSaturation and rank.MaxSteal).
const (
	MinCoreBusy   = rank.MinCoreBusy
	MinSaturation = rank.MinSaturation
	MaxSteal      = rank.MaxSteal
)

// maxStarts is how often a replicate's pair of servers is started before
// the replicate is given up.
const maxStarts = 2

// startLead is how far ahead of now a window run's start instant is set:
// both generators get the request and are waiting when it comes.
const startLead = 40 * time.Millisecond

// tail is the unmeasured load after a window run's last interval, so the
// load goes on while its end is read.
const tail = 40 * time.Millisecond

// PairRel is the run-folder path of one replicate.
func PairRel(k rank.PairKey, rep int) string {
	name := safe(k.Image) + "~" + safe(k.Base)
	if k.Runtime != k.BaseRuntime {
		name = safe(k.Image) + "~" + safe(k.BaseRuntime)
	}
	return filepath.Join("pairs", safe(k.Runtime), fmt.Sprintf("%s-%d.json", name, rep))
}

// pairSlot is one planned replicate, or a stand-in for one (replaces).
type pairSlot struct {
	key       rank.PairKey
	rep       int
	swapped   bool
	imageRef  bool
	replaces  *int
	extension bool // added toward the profile's target: no stand-in (the next round decides)
}

// maxStandIns is how many stand-ins a pair of planned replicates may get:
// as many as it planned, at least 2. A replicate that lost a benchmark or
// was given up gets a stand-in at the end of the schedule while the pair
// has some left (a stand-in that loses one gets one too). Without them, on
// a machine whose vCPUs have slow spells (here a benchmark was lost from
// 10-25% of the replicates, in spells the generators' CPU could not keep
// the servers busy), the A/A control's few replicates decide whether a run
// answers; with them, a run on a machine that loses most replicates still
// ends, at most twice as long, with no answer.
func maxStandIns(planned int) int { return max(2, planned) }

// planPairs lays out every replicate of the design: under each ranked
// runtime, each image against primary and primary against itself (the
// A/A control); then primary under each other runtime against primary
// under the first (the runtime axes). Within each pair, the sides are
// swapped in exactly half of the replicates, which half drawn from rng;
// where the image is several layout draws (replicate r runs draw r mod
// L), in half of each draw's replicates as far as their number allows,
// so that each draw's mean is free of the slot bias on its own.
func planPairs(images []Image, rts []variants.Runtime, prof variants.Profile, primary string, rng *rand.Rand) []pairSlot {
	var out []pairSlot
	draws := map[string]int{}
	for _, im := range images {
		draws[im.Name] = 1 + len(im.Draws)
	}
	add := func(k rank.PairKey, n int, imageRef bool) {
		sw := balancedSides(n, max(draws[k.Image], 1), rng)
		for r := 0; r < n; r++ {
			out = append(out, pairSlot{key: k, rep: r, swapped: sw[r], imageRef: imageRef})
		}
	}
	ranked := rts
	if prof.Runtimes != variants.RuntimesAll && len(rts) > 1 {
		ranked = rts[:1]
	}
	for _, rt := range ranked {
		add(rank.PairKey{Image: primary, Runtime: rt.Name, Base: primary, BaseRuntime: rt.Name}, prof.Replicates, true)
		for _, im := range images {
			if im.Name == primary {
				continue
			}
			add(rank.PairKey{Image: im.Name, Runtime: rt.Name, Base: primary, BaseRuntime: rt.Name}, prof.Replicates, im.Reference)
		}
	}
	if prof.AxisReplicates > 0 {
		for _, rt := range rts[1:] {
			if !FairAxis(rts[0], rt) {
				continue
			}
			add(rank.PairKey{Image: primary, Runtime: rt.Name, Base: primary, BaseRuntime: rts[0].Name}, prof.AxisReplicates, true)
		}
	}
	return out
}

// balancedSides are the sides of n replicates of a pair whose image has
// L layout draws (replicate r on draw r mod L): within each draw's
// replicates half swapped, which half drawn from rng; a draw with an odd
// number gets its extra replicate swapped or not in turn, so that
// exactly n/2 of all are swapped (n even).
func balancedSides(n, L int, rng *rand.Rand) []bool {
	sw := make([]bool, n)
	odd := 0
	for c := 0; c < L && c < n; c++ {
		var idx []int
		for r := c; r < n; r += L {
			idx = append(idx, r)
		}
		m := len(idx)
		k := m / 2
		if m%2 == 1 {
			k += odd
			odd ^= 1
		}
		side := make([]bool, m)
		for i := 0; i < k; i++ {
			side[i] = true
		}
		rng.Shuffle(m, func(i, j int) { side[i], side[j] = side[j], side[i] })
		for i, r := range idx {
			sw[r] = side[i]
		}
	}
	return sw
}

// FairAxis says whether the same image under runtimes a and b can be
// co-scheduled as a fair contest. A runtime whose traffic goes through
// docker-proxy (bridge networking with a published port) cannot: the
// proxy runs on the host, outside the server's cgroup and unpinned, and
// takes the generators' CPU, so neither server of the pair is saturated
// (measured here: 29% + 30% of the server CPU). Such a path is compared by
// the standalone trials' end-to-end ops/s and whole-machine CPU per
// operation instead.
func FairAxis(a, b variants.Runtime) bool {
	return a.Network != "bridge" && b.Network != "bridge"
}

// pairMeter opens a replicate's pair of servers and measures benchmarks
// on it. The bench's own (pairEnv) starts the two containers through the
// Docker Engine and loads them with the generators; the simulations
// (sim_test.go) put a noise model here instead, so that they run the
// bench's own design, stand-ins, extension and window judgement, and the
// rank stage's analysis, not copies of them.
type pairMeter interface {
	open(ctx context.Context, rep *rank.Replicate) (pairRun, error)
}

// pairRun is one open pair. measure runs n windows of bn numbered from
// first: reasons[i] says why window i is not accepted ("" = accepted; see
// finishWindow). An error means no windows, and the pair is closed.
type pairRun interface {
	measure(ctx context.Context, bn rank.Bench, first, n int) ([]rank.Window, []string, error)
	close()
}

// pairEnv is what running replicates needs.
type pairEnv struct {
	meter    pairMeter // nil = the env itself (the Docker Engine and the generators)
	o        Options
	gen      Generator
	sessions Sessions                    // the generators that stay up for a replicate
	loads    map[rank.Bench]results.Load // the calibrated load of each benchmark
	byName   map[string]Image
	rts      map[string]variants.Runtime
	benches  []rank.Bench
	sockRoot string
	pods     sidecars // the Engine's sidecars, for pod runtimes (nil = it has none)
	cpu      func(id string) (uint64, error)
	cpuModel string
	log      func(format string, a ...any)
	clock    phaseClock // where the current replicate's time goes
}

// phaseClock adds up where a replicate's wall time goes (starting and
// removing containers, preparing data, waiting for quiet, load), for the
// bench log: the replicate's overhead beside its measured time.
type phaseClock struct {
	names []string
	d     map[string]time.Duration
}

func (c *phaseClock) reset() { c.names, c.d = nil, map[string]time.Duration{} }

// since adds the time since t0 to phase name.
func (c *phaseClock) since(name string, t0 time.Time) {
	if c.d == nil {
		c.reset()
	}
	if _, ok := c.d[name]; !ok {
		c.names = append(c.names, name)
	}
	c.d[name] += time.Since(t0)
}

func (c *phaseClock) String() string {
	var b []string
	var total time.Duration
	for _, n := range c.names {
		total += c.d[n]
		b = append(b, fmt.Sprintf("%s %.2fs", n, c.d[n].Seconds()))
	}
	return fmt.Sprintf("%.1fs: %s", total.Seconds(), strings.Join(b, ", "))
}

// side is one started server of a pair.
type side struct {
	srv   *engine.Server
	rt    variants.Runtime
	image Image
}

// runReplicate measures the benchmarks replicate rep still lacks on one
// fresh pair of servers, one generator per server staying up for the whole
// replicate, writing the replicate after every benchmark. A benchmark
// whose windows fail (a window rejected, a generator or server error) is
// lost for this replicate, not measured again: the replicate's other
// benchmarks stand. It returns an error only for what stops the whole
// bench (cancellation, a folder that cannot be written); a replicate whose
// servers would not start is recorded in rep.Failed.
func (e *pairEnv) runReplicate(ctx context.Context, rep *rank.Replicate) error {
	write := func() error {
		if err := e.o.Run.WriteJSON(PairRel(rep.PairKey, rep.Rep), rep); err != nil {
			return recordError(err)
		}
		return nil
	}
	have := map[rank.Bench]int{}
	for _, w := range rep.Windows {
		have[w.Bench()]++
	}
	lost := map[rank.Bench]bool{}
	for _, l := range rep.Lost {
		lost[l.Bench()] = true
	}
	var work []rank.Bench
	for _, b := range e.benches {
		if have[b] < e.o.Profile.Windows && !lost[b] {
			work = append(work, b)
		}
	}
	e.clock.reset()
	meter := e.meter
	if meter == nil {
		meter = e
	}
	var p pairRun
	defer func() {
		if p != nil {
			p.close()
		}
		if len(e.clock.names) > 0 {
			e.log("  %s #%d: time %s\n", rep.PairKey, rep.Rep, &e.clock)
		}
	}()
	starts := 0
	for len(work) > 0 {
		if p == nil {
			var err error
			p, err = meter.open(ctx, rep)
			if err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				if errors.Is(err, ErrNoCgroup) {
					rep.Failed = err.Error()
					return write()
				}
				starts++
				e.log("  %s #%d: %v (start %d)\n", rep.PairKey, rep.Rep, err, starts)
				if starts >= maxStarts {
					rep.Failed = fmt.Sprintf("the pair's servers did not start %d times; last: %v", starts, err)
					e.log("  %s #%d: GIVEN UP: %s\n", rep.PairKey, rep.Rep, rep.Failed)
					e.o.Progress.Failure("bench %s #%d: given up: %s", rep.PairKey, rep.Rep, rep.Failed)
					return write()
				}
				continue
			}
		}
		bn := work[0]
		work = work[1:]
		n := e.o.Profile.Windows - have[bn]
		wins, reasons, err := p.measure(ctx, bn, have[bn], n)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		why := ""
		if err != nil {
			why = err.Error()
			p.close() // fresh servers and generators for the next benchmark
			p = nil
		}
		for i, r := range reasons {
			if r != "" {
				rep.Rejected = append(rep.Rejected, rank.Rejected{Test: bn.Test, Pipeline: bn.Pipeline, Index: wins[i].Index, Reason: r, Window: &wins[i]})
				if why == "" {
					why = fmt.Sprintf("window %d rejected: %s", wins[i].Index, r)
				}
			}
		}
		if why != "" {
			rep.Lost = append(rep.Lost, rank.Lost{Test: bn.Test, Pipeline: bn.Pipeline, Reason: why})
			e.log("  %s #%d %s: LOST: %s\n", rep.PairKey, rep.Rep, bn, why)
			e.o.Progress.Failure("bench %s #%d %s: lost: %s", rep.PairKey, rep.Rep, bn, why)
		} else {
			rep.Windows = append(rep.Windows, wins...)
		}
		if err := write(); err != nil {
			return err
		}
	}
	if len(rep.Windows) > 0 {
		e.log("  %s #%d%s: %s\n", rep.PairKey, rep.Rep, map[bool]string{true: " (swapped)", false: ""}[rep.Swapped], summarize(rep))
	}
	return nil
}

func summarize(rep *rank.Replicate) string {
	var parts []string
	per := map[rank.Bench][]float64{}
	var order []rank.Bench
	for _, w := range rep.Windows {
		if _, ok := per[w.Bench()]; !ok {
			order = append(order, w.Bench())
		}
		per[w.Bench()] = append(per[w.Bench()], w.LogRatio)
	}
	for _, b := range order {
		s := 0.0
		for _, x := range per[b] {
			s += x
		}
		parts = append(parts, fmt.Sprintf("%s %.4f", b, math.Exp(s/float64(len(per[b])))))
	}
	return strings.Join(parts, ", ")
}

// startPair starts the two servers, slot A first: the image's unless the
// replicate is swapped.
func (e *pairEnv) startPair(ctx context.Context, rep *rank.Replicate) (img, base *side, cleanup func(), err error) {
	type want struct {
		image Image
		rt    variants.Runtime
		isImg bool
	}
	im := e.byName[rep.Image]
	if rep.Draw > 1 {
		im, _ = im.Draw(rep.Draw - 1)
	}
	slots := []want{
		{im, e.rts[rep.Runtime], true},
		{e.byName[rep.Base], e.rts[rep.BaseRuntime], false},
	}
	if rep.Swapped {
		slots[0], slots[1] = slots[1], slots[0]
	}
	// Both servers start, and later go, at once: the Docker Engine's work
	// for a pair is the overhead of every replicate, none of it measured.
	started := make([]*side, len(slots))
	cleanup = func() {
		var wg sync.WaitGroup
		for _, s := range started {
			if s != nil {
				wg.Add(1)
				go func() { defer wg.Done(); e.remove(ctx, s.srv) }()
			}
		}
		wg.Wait()
	}
	g, gctx := errgroup.WithContext(ctx)
	for i, w := range slots {
		g.Go(func() error {
			srv, err := e.startServer(gctx, w.image, w.rt, fmt.Sprintf("pair-%c", 'a'+i))
			if err != nil {
				return err
			}
			started[i] = &side{srv: srv, rt: w.rt, image: w.image}
			return e.o.Engine.WaitReady(gctx, srv, e.readyWait())
		})
	}
	if err := g.Wait(); err != nil {
		cleanup()
		return nil, nil, nil, err
	}
	for i, w := range slots {
		s := started[i]
		if w.isImg {
			img = s
		} else {
			base = s
		}
		if _, err := e.cpu(s.srv.ID); err != nil {
			cleanup()
			return nil, nil, nil, fmt.Errorf("%w: %v", ErrNoCgroup, err)
		}
	}
	return img, base, cleanup, nil
}

// livePair is a started pair with the generators that stay up for it,
// opened per load (clients per server) as the benchmarks ask.
type livePair struct {
	e         *pairEnv
	img, base *side
	cleanup   func()
	gens      map[results.Load][2]Session // by load: [image's, base's]
	warm      bool                        // a benchmark has run on these servers (Profile.WarmupNext)
}

// open starts rep's pair (pairMeter).
func (e *pairEnv) open(ctx context.Context, rep *rank.Replicate) (pairRun, error) {
	p, err := e.startLive(ctx, rep)
	if err != nil {
		return nil, err // not a nil *livePair in an interface
	}
	return p, nil
}

// measure runs n windows of bn at its calibrated load (pairRun).
func (p *livePair) measure(ctx context.Context, bn rank.Bench, first, n int) ([]rank.Window, []string, error) {
	return p.e.measure(ctx, p, bn, p.e.loadFor(bn), first, n)
}

func (e *pairEnv) startLive(ctx context.Context, rep *rank.Replicate) (*livePair, error) {
	defer e.clock.since("start", time.Now())
	img, base, cleanup, err := e.startPair(ctx, rep)
	if err != nil {
		return nil, err
	}
	return &livePair{e: e, img: img, base: base, cleanup: cleanup, gens: map[results.Load][2]Session{}}, nil
}

// sessions returns the pair's two generators at load l, starting them
// the first time.
func (p *livePair) sessions(ctx context.Context, l results.Load) ([2]Session, error) {
	if g, ok := p.gens[l]; ok {
		return g, nil
	}
	var g [2]Session
	for i, s := range []*side{p.img, p.base} {
		cfg := genConfig(s.srv, p.e.o.Profile, rank.Bench{}, l.Clients)
		cfg.Tests, cfg.Threads = nil, l.Threads
		var sess Session
		var err error
		if s.rt.Network == variants.NetworkPod {
			sess, err = p.e.openSidecar(ctx, cfg, s)
		} else {
			sess, err = p.e.sessions.Open(ctx, cfg, s.rt.ClientCPUs)
		}
		if err != nil {
			if i == 1 {
				g[0].Close()
			}
			return g, fmt.Errorf("starting the generator for %s: %w", s.image.Name, err)
		}
		g[i] = sess
	}
	p.gens[l] = g
	return g, nil
}

func (p *livePair) close() {
	defer p.e.clock.since("stop", time.Now())
	for _, g := range p.gens {
		for _, s := range g {
			s.Close()
		}
	}
	p.gens = nil
	p.cleanup()
}

// ErrNoCgroup: the servers' cgroup CPU time cannot be read here, so no
// pair can be measured.
var ErrNoCgroup = errors.New("the server's cgroup CPU time cannot be read")

// startServer starts im's server under rt for role ("pair-a",
// "standalone"), labelled for the start-up sweep; a unix-socket runtime
// gets its own socket folder under the bench's.
func (e *pairEnv) startServer(ctx context.Context, im Image, rt variants.Runtime, role string) (*engine.Server, error) {
	return e.start(ctx, im, rt, role, 0)
}

// start starts a server container of im under rt, with a memory limit in
// bytes (0 = none).
func (e *pairEnv) start(ctx context.Context, im Image, rt variants.Runtime, role string, memory int64) (*engine.Server, error) {
	spec := engine.ServerSpec{
		Image:    im.Ref,
		Network:  rt.Network,
		Seccomp:  rt.Seccomp,
		CPUs:     rt.ServerCPUs,
		CPULimit: rt.CPULimit,
		Memory:   memory,
		Labels: map[string]string{"io.redis-variants.bench.image": im.Name, "io.redis-variants.bench.runtime": rt.Name,
			"io.redis-variants.bench.role": role},
	}
	for k, v := range e.o.Labels {
		spec.Labels[k] = v
	}
	if rt.Network == "unix" || rt.Network == variants.NetworkPod {
		if rt.Network == "unix" {
			spec.Network = "none"
		}
		dir, err := os.MkdirTemp(e.sockRoot, "sock-")
		if err != nil {
			return nil, err
		}
		spec.SocketDir = dir
	}
	return e.o.Engine.StartServer(ctx, spec)
}

// remove removes srv's container, with a fresh context: Ctrl-C must still
// remove it.
func (e *pairEnv) remove(ctx context.Context, srv *engine.Server) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	e.o.Engine.Remove(rctx, srv.ID)
}

// readyWait is how long a server may take to answer (Options.ReadyWait).
func (e *pairEnv) readyWait() time.Duration {
	if e.o.ReadyWait > 0 {
		return e.o.ReadyWait
	}
	return 30 * time.Second
}

// clientOf is a go-redis client of srv, on its port or its socket.
func clientOf(srv *engine.Server) *redis.Client {
	ropt := &redis.Options{Network: "tcp", Addr: srv.Addr, Protocol: 2, DisableIdentity: true}
	if srv.Addr == "" {
		ropt.Network, ropt.Addr = "unix", srv.Socket
	}
	return redis.NewClient(ropt)
}

// genConfig is the generator's configuration for one side.
func (e *pairEnv) genConfig(s *side, b rank.Bench, clients int) loadgen.Config {
	return genConfig(s.srv, e.o.Profile, b, clients)
}

func genConfig(srv *engine.Server, p variants.Profile, b rank.Bench, clients int) loadgen.Config {
	cfg := loadgen.Config{
		Addr:     srv.Addr,
		Socket:   srv.Socket,
		Clients:  clients,
		Pipeline: b.Pipeline,
		DataSize: p.DataSize,
		Keyspace: p.Keyspace,
		Tests:    []string{b.Test},
	}
	if srv.Addr != "" {
		cfg.Socket = "" // measure over TCP when the runtime has TCP
	}
	return cfg
}

// prepare empties both servers and fills what bn reads, both at once:
// the fill is unmeasured time of every replicate, and one server's fill
// waits on its client round trips while the other's uses the core.
func (e *pairEnv) prepare(ctx context.Context, p *livePair, bn rank.Bench, clients int) error {
	var g errgroup.Group
	for _, s := range []*side{p.img, p.base} {
		g.Go(func() error {
			if err := flushAndPrepare(ctx, s.srv, genConfig(s.srv, e.o.Profile, bn, clients)); err != nil {
				return fmt.Errorf("preparing %s on %s: %w", bn, s.image.Name, err)
			}
			return nil
		})
	}
	return g.Wait()
}

// flushAndPrepare empties a server and sets up what cfg's test reads
// (loadgen.Prepare).
func flushAndPrepare(ctx context.Context, srv *engine.Server, cfg loadgen.Config) error {
	rdb := clientOf(srv)
	defer rdb.Close()
	if err := rdb.FlushAll(ctx).Err(); err != nil {
		return fmt.Errorf("FLUSHALL: %w", err)
	}
	return loadgen.Prepare(ctx, cfg)
}

// loadFor is the calibrated load of bn (the profile's clients, half per
// server, before a calibration).
func (e *pairEnv) loadFor(bn rank.Bench) results.Load {
	if l, ok := e.loads[bn]; ok && l.Clients > 0 {
		return l
	}
	return results.Load{Clients: max(e.o.Profile.Clients/2, 1)}
}

// measure runs n windows of bn at load l,
// numbered from first, on p: both servers
// emptied and prepared, then both generators told one run (the profile's
// warm-up, then n intervals of the profile's duration back to back) from
// the same instant; at each interval's bounds both cgroups and the server
// CPUs' /proc/stat are read, so each window's figures cover exactly its
// measured interval. reasons[i] says why window i is not accepted ("" =
// accepted). An error (a generator's or a server's) means no windows.
func (e *pairEnv) measure(ctx context.Context, p *livePair, bn rank.Bench, l results.Load, first, n int) ([]rank.Window, []string, error) {
	t0 := time.Now()
	if err := e.prepare(ctx, p, bn, l.Clients); err != nil {
		return nil, nil, err
	}
	e.clock.since("prepare", t0)
	t0 = time.Now()
	gens, err := p.sessions(ctx, l)
	if err != nil {
		return nil, nil, err
	}
	e.clock.since("generators", t0)
	dur := e.o.Profile.Duration
	if dur <= 0 {
		dur = 2 * time.Second
	}
	if l.Window > 0 {
		dur = l.Window
	}
	cpus, err := machine.ParseCPUList(p.img.rt.ServerCPUs)
	if err != nil {
		return nil, nil, err
	}
	ncpu := max(len(cpus), 1)
	if len(cpus) == 0 {
		ncpu, _ = CountCPUs("")
	}
	ccpus, err := machine.ParseCPUList(p.img.rt.ClientCPUs)
	if err != nil {
		return nil, nil, err
	}
	t0 = time.Now()
	idle, err := e.settle(ctx)
	if err != nil {
		return nil, nil, err
	}
	e.clock.since("settle", t0)
	t0 = time.Now()
	defer e.clock.since("load", t0)
	warmup := e.o.Profile.Warmup
	if p.warm {
		warmup = e.o.Profile.WarmupNext
	}
	p.warm = true
	spec := loadgen.Windows{Test: bn.Test, Pipeline: bn.Pipeline, Start: time.Now().Add(startLead),
		Warmup: warmup, Duration: dur, Count: n, Tail: tail}
	var res [2][]loadgen.Result
	g, gctx := errgroup.WithContext(ctx)
	for i, sess := range gens {
		g.Go(func() error {
			r, err := sess.Run(gctx, spec)
			if err != nil {
				return fmt.Errorf("generator for %s: %w", []*side{p.img, p.base}[i].image.Name, err)
			}
			if len(r) != n {
				return fmt.Errorf("generator for %s: %d results for %d windows", []*side{p.img, p.base}[i].image.Name, len(r), n)
			}
			res[i] = r
			return nil
		})
	}
	// The readings at each bound, while both loads run.
	type reading struct {
		at   time.Time
		cpu  [2]uint64
		stat map[int]machine.CPUTimes
		err  error
	}
	bounds := spec.Bounds()
	reads := make([]reading, len(bounds))
	for k, at := range bounds {
		if !sleepCtx(gctx, time.Until(at)) {
			break
		}
		r := &reads[k]
		r.at = time.Now()
		for i, s := range []*side{p.img, p.base} {
			if r.cpu[i], r.err = e.cpu(s.srv.ID); r.err != nil {
				r.err = fmt.Errorf("server %s: %w", s.image.Name, r.err)
				break
			}
		}
		if r.err == nil {
			r.stat, r.err = e.o.Stat()
		}
	}
	if err := g.Wait(); err != nil {
		return nil, nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	for _, r := range reads {
		if r.err != nil {
			return nil, nil, r.err
		}
		if r.at.IsZero() {
			return nil, nil, errors.New("a window's bound was not read")
		}
	}
	minSat := e.o.MinSaturation
	if minSat == 0 {
		minSat = MinSaturation
	}
	wins := make([]rank.Window, n)
	reasons := make([]string, n)
	for k := 0; k < n; k++ {
		r0, r1 := reads[k], reads[k+1]
		wall := r1.at.Sub(r0.at)
		use, cuse := machine.Use(r0.stat, r1.stat, cpus), machine.Use(r0.stat, r1.stat, ccpus)
		w := rank.Window{Test: bn.Test, Pipeline: bn.Pipeline, Index: first + k, Started: r0.at.UTC(), Wall: wall,
			Steal: use.Steal, CoreBusy: use.Busy, SoftIRQ: use.SoftIRQ, ClientBusy: cuse.Busy, ClientSteal: cuse.Steal, Load: l, Before: idle}
		mk := func(i int) rank.SideStats {
			x := res[i][k]
			st := rank.SideStats{Requests: x.Requests, Errors: x.Errors, Misses: x.Misses, OpsPerSec: x.OpsPerSec, Elapsed: x.Elapsed, ClientCPU: x.ClientCPU}
			if r1.cpu[i] > r0.cpu[i] {
				st.CPUNanos = r1.cpu[i] - r0.cpu[i]
			}
			st.CPUShare = float64(st.CPUNanos) / float64(wall.Nanoseconds()) / float64(ncpu)
			return st
		}
		w.Image, w.Base = mk(0), mk(1)
		reasons[k] = finishWindow(&w, minSat)
		wins[k] = w
	}
	return wins, reasons, nil
}

// settle waits, before a benchmark's windows, until the machine is quiet:
// a 100 ms stretch with every CPU at most maxBusyBefore busy (nothing of
// the bench runs then; what does is the Docker Engine finishing the
// containers it just started or removed, seen here taking a fresh pair's
// first windows down to 80% busy). It gives up after settleFor and goes
// on; the machine's busy share in the last stretch is recorded with the
// windows either way. Options.Settle sets the wait.
func (e *pairEnv) settle(ctx context.Context) (float64, error) {
	wait := e.o.Settle
	if wait == 0 {
		wait = settleFor
	}
	if wait < 0 {
		return 0, nil
	}
	deadline := time.Now().Add(wait)
	prev, err := e.o.Stat()
	if err != nil {
		return 0, err
	}
	for {
		if !sleepCtx(ctx, 100*time.Millisecond) {
			return 0, ctx.Err()
		}
		cur, err := e.o.Stat()
		if err != nil {
			return 0, err
		}
		busy := 0.0
		for c := range cur {
			if c >= 0 {
				busy = max(busy, machine.Use(prev, cur, []int{c}).Busy)
			}
		}
		if busy <= maxBusyBefore || time.Now().After(deadline) {
			return busy, nil
		}
		prev = cur
	}
}

// The quiet a benchmark's windows wait for (settle).
const (
	maxBusyBefore = 0.10
	settleFor     = 3 * time.Second
)

// finishWindow judges a measured window (judge) and, when it is
// accepted, sets its observation: the log of the base's CPU ns per
// operation over the image's. It returns why the window is not accepted
// ("" = accepted).
func finishWindow(w *rank.Window, minSat float64) string {
	why := judge(*w, minSat)
	if why == "" {
		w.LogRatio = math.Log(w.Base.NsPerOp() / w.Image.NsPerOp())
	}
	return why
}

// judge says why a measured window is not accepted ("" = accepted): a
// side with no requests or with error replies, server CPUs not kept busy
// (their own account, /proc/stat), servers that got too little of them
// (their cgroups: something else ran there), or too much steal.
func judge(w rank.Window, minSat float64) string {
	switch {
	case w.Image.Requests == 0 || w.Base.Requests == 0:
		return fmt.Sprintf("a generator finished no request (%d and %d)", w.Image.Requests, w.Base.Requests)
	case w.Image.Errors > 0 || w.Base.Errors > 0:
		return fmt.Sprintf("error replies (%d and %d)", w.Image.Errors, w.Base.Errors)
	case w.CoreBusy < MinCoreBusy:
		return fmt.Sprintf("not saturated: the server CPUs were busy %.0f%% of the time (need %.0f%%; the servers' cgroups %.0f%% + %.0f%%, softirq %.0f%%; the client CPUs busy %.0f%%, %.0f%% stolen)",
			100*w.CoreBusy, 100*MinCoreBusy, 100*w.Image.CPUShare, 100*w.Base.CPUShare, 100*w.SoftIRQ, 100*w.ClientBusy, 100*w.ClientSteal)
	case w.Image.CPUShare+w.Base.CPUShare < minSat:
		return fmt.Sprintf("the servers used %.0f%% + %.0f%% of the busy server CPUs (need %.0f%% together; softirq %.0f%%): something else ran there",
			100*w.Image.CPUShare, 100*w.Base.CPUShare, 100*minSat, 100*w.SoftIRQ)
	case w.Steal > MaxSteal:
		return fmt.Sprintf("%.0f%% of the server CPUs' time was stolen by the hypervisor (limit %.0f%%)", 100*w.Steal, 100*MaxSteal)
	}
	return ""
}

// sleepCtx sleeps d (nothing when d <= 0); false when ctx ended first.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
