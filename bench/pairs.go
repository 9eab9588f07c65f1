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
	"time"

	"github.com/redis/go-redis/v9"
	"golang.org/x/sync/errgroup"

	"github.com/redis-variants/redis-variants/engine"
	"github.com/redis-variants/redis-variants/loadgen"
	"github.com/redis-variants/redis-variants/machine"
	"github.com/redis-variants/redis-variants/rank"
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
	MinSaturation = rank.MinSaturation
	MaxSteal      = rank.MaxSteal
)

// maxWindowAttempts is how often one window is tried before its replicate
// is given up.
const maxWindowAttempts = 3

// PairRel is the run-folder path of one replicate.
func PairRel(k rank.PairKey, rep int) string {
	name := safe(k.Image) + "~" + safe(k.Base)
	if k.Runtime != k.BaseRuntime {
		name = safe(k.Image) + "~" + safe(k.BaseRuntime)
	}
	return filepath.Join("pairs", safe(k.Runtime), fmt.Sprintf("%s-%d.json", name, rep))
}

// pairSlot is one planned replicate.
type pairSlot struct {
	key      rank.PairKey
	rep      int
	swapped  bool
	imageRef bool
}

// planPairs lays out every replicate of the design: under each ranked
// runtime, each image against primary and primary against itself (the
// A/A control); then primary under each other runtime against primary
// under the first (the runtime axes). Within each pair, the sides are
// swapped in exactly half of the replicates, which half drawn from rng.
func planPairs(images []Image, rts []variants.Runtime, prof variants.Profile, primary string, rng *rand.Rand) []pairSlot {
	var out []pairSlot
	add := func(k rank.PairKey, n int, imageRef bool) {
		sw := make([]bool, n)
		for i := n / 2; i < n; i++ {
			sw[i] = true
		}
		rng.Shuffle(n, func(i, j int) { sw[i], sw[j] = sw[j], sw[i] })
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

// pairEnv is what running replicates needs.
type pairEnv struct {
	o        Options
	gen      Generator
	byName   map[string]Image
	rts      map[string]variants.Runtime
	benches  []rank.Bench
	sockRoot string
	cpu      func(id string) (uint64, error)
	cpuModel string
	log      func(format string, a ...any)
}

// side is one started server of a pair.
type side struct {
	srv   *engine.Server
	rt    variants.Runtime
	image Image
}

// runReplicate measures the windows replicate rep still lacks, writing the
// replicate after every window. It returns an error only for what stops
// the whole bench (cancellation, a folder that cannot be written); a
// replicate given up is recorded in rep.Failed.
func (e *pairEnv) runReplicate(ctx context.Context, rep *rank.Replicate) error {
	write := func() error {
		if err := e.o.Run.WriteJSON(PairRel(rep.PairKey, rep.Rep), rep); err != nil {
			return fmt.Errorf("bench: %w", err)
		}
		return nil
	}
	have := map[rank.Bench]int{}
	for _, w := range rep.Windows {
		have[w.Bench()]++
	}
	type todo struct {
		b     rank.Bench
		index int
	}
	var work []todo
	for _, b := range e.benches {
		for i := have[b]; i < e.o.Profile.Windows; i++ {
			work = append(work, todo{b, i})
		}
	}
	if len(work) == 0 {
		return nil
	}
	attempts := 0
	for len(work) > 0 {
		if attempts >= maxWindowAttempts {
			last := rep.Rejected[len(rep.Rejected)-1]
			rep.Failed = fmt.Sprintf("%s window %d failed %d times; last: %s", rank.Bench{Test: last.Test, Pipeline: last.Pipeline}, last.Index, attempts, last.Reason)
			e.log("  %s #%d: GIVEN UP: %s\n", rep.PairKey, rep.Rep, rep.Failed)
			e.o.Progress.Failure("bench %s #%d: given up: %s", rep.PairKey, rep.Rep, rep.Failed)
			return write()
		}
		a, b, cleanup, err := e.startPair(ctx, rep)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			attempts++
			rep.Rejected = append(rep.Rejected, rank.Rejected{Test: work[0].b.Test, Pipeline: work[0].b.Pipeline, Index: work[0].index, Reason: err.Error()})
			e.log("  %s #%d: %v (attempt %d)\n", rep.PairKey, rep.Rep, err, attempts)
			if err := write(); err != nil {
				return err
			}
			continue
		}
		restart := false
		lastBench := rank.Bench{}
		for len(work) > 0 && !restart {
			w := work[0]
			if w.b != lastBench {
				if err := e.prepare(ctx, a, b, w.b); err != nil {
					if ctx.Err() != nil {
						cleanup()
						return ctx.Err()
					}
					attempts++
					rep.Rejected = append(rep.Rejected, rank.Rejected{Test: w.b.Test, Pipeline: w.b.Pipeline, Index: w.index, Reason: err.Error()})
					e.log("  %s #%d %s: %v (attempt %d)\n", rep.PairKey, rep.Rep, w.b, err, attempts)
					restart = true
					break
				}
				lastBench = w.b
			}
			win, reason, err := e.window(ctx, a, b, rep, w.b, w.index)
			if err != nil && ctx.Err() != nil {
				cleanup()
				return ctx.Err()
			}
			if err != nil || reason != "" {
				if reason == "" {
					reason = err.Error()
				}
				attempts++
				rep.Rejected = append(rep.Rejected, rank.Rejected{Test: w.b.Test, Pipeline: w.b.Pipeline, Index: w.index, Reason: reason})
				e.log("  %s #%d %s w%d: rejected: %s (attempt %d)\n", rep.PairKey, rep.Rep, w.b, w.index, reason, attempts)
				if werr := write(); werr != nil {
					cleanup()
					return werr
				}
				if attempts >= maxWindowAttempts || err != nil {
					restart = true // fresh containers (a generator or server error)
				}
				continue
			}
			attempts = 0
			rep.Windows = append(rep.Windows, win)
			work = work[1:]
			if err := write(); err != nil {
				cleanup()
				return err
			}
		}
		cleanup()
	}
	e.log("  %s #%d%s: %s\n", rep.PairKey, rep.Rep, map[bool]string{true: " (swapped)", false: ""}[rep.Swapped], summarize(rep))
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
	slots := []want{
		{e.byName[rep.Image], e.rts[rep.Runtime], true},
		{e.byName[rep.Base], e.rts[rep.BaseRuntime], false},
	}
	if rep.Swapped {
		slots[0], slots[1] = slots[1], slots[0]
	}
	var started []*side
	cleanup = func() {
		for _, s := range started {
			e.remove(ctx, s.srv)
		}
	}
	for i, w := range slots {
		srv, err := e.startServer(ctx, w.image, w.rt, fmt.Sprintf("pair-%c", 'a'+i))
		if err != nil {
			cleanup()
			return nil, nil, nil, err
		}
		s := &side{srv: srv, rt: w.rt, image: w.image}
		started = append(started, s)
		if w.isImg {
			img = s
		} else {
			base = s
		}
	}
	for _, s := range started {
		if err := e.o.Engine.WaitReady(ctx, s.srv, e.readyWait()); err != nil {
			cleanup()
			return nil, nil, nil, err
		}
		if _, err := e.cpu(s.srv.ID); err != nil {
			cleanup()
			return nil, nil, nil, fmt.Errorf("%w: %v", ErrNoCgroup, err)
		}
	}
	return img, base, cleanup, nil
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
		Image:   im.Ref,
		Network: rt.Network,
		Seccomp: rt.Seccomp,
		CPUs:    rt.ServerCPUs,
		Memory:  memory,
		Labels: map[string]string{"io.redis-variants.bench.image": im.Name, "io.redis-variants.bench.runtime": rt.Name,
			"io.redis-variants.bench.role": role},
	}
	for k, v := range e.o.Labels {
		spec.Labels[k] = v
	}
	if rt.Network == "unix" {
		spec.Network = "none"
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

// prepare empties both servers, prefills the keyspace (so GET reads hits)
// and runs the warm-up load on both at once.
func (e *pairEnv) prepare(ctx context.Context, a, b *side, bn rank.Bench) error {
	half := max(e.o.Profile.Clients/2, 1)
	for _, s := range []*side{a, b} {
		if err := flushAndFill(ctx, s.srv, e.genConfig(s, bn, half), readsKeys(bn.Test)); err != nil {
			return err
		}
	}
	if e.o.Profile.Warmup <= 0 {
		return nil
	}
	g, gctx := errgroup.WithContext(ctx)
	for _, s := range []*side{a, b} {
		cfg := e.genConfig(s, bn, half)
		cfg.Duration = e.o.Profile.Warmup
		g.Go(func() error {
			_, _, err := e.gen.Generate(gctx, cfg, s.rt.ClientCPUs)
			if err != nil {
				return fmt.Errorf("warm-up of %s: %w", s.image.Name, err)
			}
			return nil
		})
	}
	return g.Wait()
}

// readsKeys says whether a test reads the keys that Prefill sets (GET,
// and MIXED's GETs); the others only need an empty server.
func readsKeys(test string) bool {
	switch strings.ToUpper(test) {
	case "GET", "MIXED":
		return true
	}
	return false
}

// flushAndFill empties a server and, when fill is set, prefills its keyspace.
func flushAndFill(ctx context.Context, srv *engine.Server, cfg loadgen.Config, fill bool) error {
	rdb := clientOf(srv)
	defer rdb.Close()
	if err := rdb.FlushAll(ctx).Err(); err != nil {
		return fmt.Errorf("FLUSHALL: %w", err)
	}
	if !fill {
		return nil
	}
	if _, err := loadgen.Prefill(ctx, cfg); err != nil {
		return err
	}
	return nil
}

// window measures one window: both generators at once, both cgroups read
// around them. reason says why a measured window is not accepted.
func (e *pairEnv) window(ctx context.Context, img, base *side, rep *rank.Replicate, b rank.Bench, index int) (w rank.Window, reason string, err error) {
	half := max(e.o.Profile.Clients/2, 1)
	dur := e.o.Profile.Duration
	if dur <= 0 {
		dur = 2 * time.Second
	}
	cpus, err := machine.ParseCPUList(img.rt.ServerCPUs)
	if err != nil {
		return w, "", err
	}
	ncpu := max(len(cpus), 1)
	if len(cpus) == 0 {
		n, _ := CountCPUs("")
		ncpu = n
	}
	// Launch order alternates per window, starting with slot A.
	order := []*side{img, base}
	if rep.Swapped != (index%2 == 1) {
		order = []*side{base, img}
	}
	st0, err := machine.ReadCPUTimes()
	if err != nil {
		return w, "", err
	}
	var c0 [2]uint64
	for i, s := range []*side{img, base} {
		if c0[i], err = e.cpu(s.srv.ID); err != nil {
			return w, "", fmt.Errorf("%w: %v", ErrNoCgroup, err)
		}
	}
	started := time.Now()
	var res [2]loadgen.Result
	g, gctx := errgroup.WithContext(ctx)
	for _, s := range order {
		i := 0
		if s == base {
			i = 1
		}
		cfg := e.genConfig(s, b, half)
		cfg.Duration = dur
		g.Go(func() error {
			r, _, err := e.gen.Generate(gctx, cfg, s.rt.ClientCPUs)
			if err != nil {
				return fmt.Errorf("generator for %s: %w", s.image.Name, err)
			}
			res[i] = r
			return nil
		})
		time.Sleep(time.Millisecond) // keep the launch order
	}
	gerr := g.Wait()
	wall := time.Since(started)
	if err := ctx.Err(); err != nil {
		return w, "", err // an interrupted window is not a window
	}
	var c1 [2]uint64
	for i, s := range []*side{img, base} {
		if c1[i], err = e.cpu(s.srv.ID); err != nil {
			return w, "", fmt.Errorf("server %s: %w", s.image.Name, err)
		}
	}
	st1, err := machine.ReadCPUTimes()
	if err != nil {
		return w, "", err
	}
	if gerr != nil {
		return w, "", gerr
	}
	w = rank.Window{Test: b.Test, Pipeline: b.Pipeline, Index: index, Started: started.UTC(), Wall: wall,
		Steal: machine.StealShare(st0, st1, cpus)}
	mk := func(i int) rank.SideStats {
		s := rank.SideStats{Requests: res[i].Requests, Errors: res[i].Errors, Misses: res[i].Misses,
			OpsPerSec: res[i].OpsPerSec, Elapsed: res[i].Elapsed}
		if c1[i] > c0[i] {
			s.CPUNanos = c1[i] - c0[i]
		}
		s.CPUShare = float64(s.CPUNanos) / float64(wall.Nanoseconds()) / float64(ncpu)
		return s
	}
	w.Image, w.Base = mk(0), mk(1)
	minSat := e.o.MinSaturation
	if minSat == 0 {
		minSat = MinSaturation
	}
	switch {
	case w.Image.Requests == 0 || w.Base.Requests == 0:
		return w, fmt.Sprintf("a generator finished no request (%d and %d)", w.Image.Requests, w.Base.Requests), nil
	case w.Image.Errors > 0 || w.Base.Errors > 0:
		return w, fmt.Sprintf("error replies (%d and %d)", w.Image.Errors, w.Base.Errors), nil
	case w.Image.CPUShare+w.Base.CPUShare < minSat:
		return w, fmt.Sprintf("not saturated: the two servers used %.0f%% + %.0f%% of the server CPUs (need %.0f%% together)",
			100*w.Image.CPUShare, 100*w.Base.CPUShare, 100*minSat), nil
	case w.Steal > MaxSteal:
		return w, fmt.Sprintf("%.0f%% of the server CPUs' time was stolen by the hypervisor (limit %.0f%%)", 100*w.Steal, 100*MaxSteal), nil
	}
	w.LogRatio = math.Log(w.Base.NsPerOp() / w.Image.NsPerOp())
	return w, "", nil
}
