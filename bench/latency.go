package bench

import (
	"context"
	"fmt"
	"math/rand"
	"slices"
	"time"

	"github.com/redis-variants/redis-variants/engine"
	"github.com/redis-variants/redis-variants/loadgen"
	"github.com/redis-variants/redis-variants/machine"
	"github.com/redis-variants/redis-variants/rank"
	"github.com/redis-variants/redis-variants/results"
	"github.com/redis-variants/redis-variants/variants"
)

// Fixed-rate latency (variants.LatencyProfile): after the pairs, each cell
// (an image under a runtime) gets the profile's latency trials, one fresh
// server each, in an order drawn from the seed for every round so that
// the cells share the machine's slow and fast spells; the rate is fixed
// for the run before the first trial (latency/plan.json). A trial whose
// generator fell behind its rate, or that had CPU stolen, is recorded
// with why and does not count (rank.Latency).

// latencyBehind is how far below its rate a generator may send before the
// trial is no measurement of latency at that rate.
const latencyBehind = 0.98

// latencySteal is the most CPU the machine may have stolen in a trial.
const latencySteal = 0.02

// latency runs the profile's latency measure, resuming what an earlier
// run of the folder finished.
func (s *session) latency(ctx context.Context) error {
	lp := s.o.Profile.Latency
	if lp == nil {
		return nil
	}
	plan, ok, err := results.LoadLatencyPlan(s.o.Run)
	if err != nil || !ok || plan.Test != lp.Test || plan.Clients != lp.Clients {
		if plan, err = s.latencyPlan(ctx, *lp); err != nil {
			return err
		}
		if err := s.o.Run.WriteJSON(results.LatencyPlanRel, plan); err != nil {
			return recordError(err)
		}
	}
	if len(plan.Cells) == 0 {
		return nil
	}
	old, _, err := results.LoadLatencyTrials(s.o.Run)
	if err != nil {
		return err
	}
	done := map[string]bool{}
	for _, t := range old {
		if t.Rate == plan.Rate {
			done[results.LatencyRel(t.LatencyCell, t.Rep)] = true
		}
	}
	rng := rand.New(rand.NewSource(s.seed ^ 0x1a7e2c))
	s.logf("latency: %s at %.0f requests/s over %d connections, %d trial(s) a cell, %d cell(s)\n", plan.Test, plan.Rate, plan.Clients, lp.Trials, len(plan.Cells))
	for rep := range lp.Trials {
		for _, i := range rng.Perm(len(plan.Cells)) {
			c := plan.Cells[i]
			rel := results.LatencyRel(c, rep)
			if done[rel] {
				continue
			}
			t, err := s.env.latencyTrial(ctx, s.byName[c.Image], s.rts[c.Runtime], plan, *lp)
			if err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				cell := Cell{Image: c.Image, Runtime: c.Runtime, Test: "latency " + plan.Test, Pipeline: 1}
				s.sum.Failures = append(s.sum.Failures, Failure{Cell: cell, Error: err.Error()})
				s.logf("  latency %s under %s #%d: FAILED: %v\n", c.Image, c.Runtime, rep, err)
				continue
			}
			t.LatencyCell, t.Rep, t.Seq, t.CPUModel = c, rep, s.seq, s.cpuModel
			s.seq++
			if err := s.o.Run.WriteJSON(rel, t); err != nil {
				return recordError(err)
			}
			s.sum.LatencyTrials++
			note := ""
			if t.Behind != "" {
				note = " (not counted: " + t.Behind + ")"
			}
			s.logf("  latency %s under %s #%d: p50 %.1f µs, p95 %.1f, p99 %.1f, p99.9 %.1f at %.0f/s sent%s\n",
				c.Image, c.Runtime, rep, t.P50Us, t.P95Us, t.P99Us, t.P999Us, t.SentPerSec, note)
		}
	}
	return nil
}

// latencyCells are the cells the measure takes: the primary reference
// (or every image) under every runtime whose generator runs on the host.
func (s *session) latencyCells(lp variants.LatencyProfile) ([]results.LatencyCell, []results.LatencySkippedRun) {
	var images []Image
	if im, ok := s.byName[s.primary]; ok && lp.Images != variants.LatencyAll {
		images = []Image{im}
	} else {
		images = s.sum.Images
	}
	var cells []results.LatencyCell
	var skipped []results.LatencySkippedRun
	for _, rt := range s.o.Runtimes {
		if rt.Network == variants.NetworkPod {
			skipped = append(skipped, results.LatencySkippedRun{Runtime: rt.Name, Why: "its generator runs in a sidecar of co-scheduled pairs only"})
			continue
		}
		for _, im := range images {
			cells = append(cells, results.LatencyCell{Image: im.Name, ImageID: im.ImageID, Runtime: rt.Name})
		}
	}
	return cells, skipped
}

// latencyPlan fixes the rate: the profile's, or its share of the slowest
// cell's closed-loop capacity, measured now on a fresh server of each.
func (s *session) latencyPlan(ctx context.Context, lp variants.LatencyProfile) (results.LatencyPlan, error) {
	cells, skipped := s.latencyCells(lp)
	plan := results.LatencyPlan{Test: lp.Test, Rate: lp.Rate, Clients: lp.Clients, Duration: lp.Duration, Cells: cells, Skipped: skipped}
	for _, sk := range skipped {
		w := fmt.Sprintf("latency: runtime %s left out: %s", sk.Runtime, sk.Why)
		s.logf("%s\n", w)
		s.sum.Warnings = append(s.sum.Warnings, w)
	}
	if lp.Rate > 0 || len(cells) == 0 {
		return plan, nil
	}
	plan.Share = lp.Share
	for _, c := range cells {
		ops, err := s.env.capacity(ctx, s.byName[c.Image], s.rts[c.Runtime], lp)
		if err != nil {
			return plan, fmt.Errorf("bench: latency: the capacity of %s under %s: %w", c.Image, c.Runtime, err)
		}
		plan.Capacities = append(plan.Capacities, results.LatencyCapacity{LatencyCell: c, OpsPerSec: ops})
		if plan.Slowest == "" || ops*lp.Share < plan.Rate {
			plan.Rate, plan.Slowest = ops*lp.Share, c.Image+" under "+c.Runtime
		}
		s.logf("latency: capacity of %s under %s: %.0f requests/s (%s, %d connections, no pipelining)\n", c.Image, c.Runtime, ops, lp.Test, lp.Clients)
	}
	return plan, nil
}

// latencyConfig is the generator's configuration for the measure on srv.
func (e *pairEnv) latencyConfig(srv *engine.Server, lp variants.LatencyProfile) loadgen.Config {
	cfg := genConfig(srv, e.o.Profile, rank.Bench{Test: lp.Test, Pipeline: 1}, lp.Clients)
	cfg.Pipeline = 1
	return cfg
}

// withServer runs f on a fresh, ready, prepared server of im under rt.
func (e *pairEnv) withServer(ctx context.Context, im Image, rt variants.Runtime, lp variants.LatencyProfile, f func(*engine.Server, loadgen.Config) error) error {
	srv, err := e.startServer(ctx, im, rt, "latency")
	if err != nil {
		return err
	}
	defer e.remove(ctx, srv)
	if err := e.o.Engine.WaitReady(ctx, srv, e.readyWait()); err != nil {
		return err
	}
	cfg := e.latencyConfig(srv, lp)
	if err := flushAndPrepare(ctx, srv, cfg); err != nil {
		return err
	}
	return f(srv, cfg)
}

// capacity is im's closed-loop requests/s under rt at the measure's
// connections, without pipelining.
func (e *pairEnv) capacity(ctx context.Context, im Image, rt variants.Runtime, lp variants.LatencyProfile) (float64, error) {
	var ops float64
	err := e.withServer(ctx, im, rt, lp, func(_ *engine.Server, cfg loadgen.Config) error {
		cfg.Warmup, cfg.Duration = lp.Warmup, 2*time.Second
		res, _, err := e.gen.Generate(ctx, cfg, rt.ClientCPUs)
		if err != nil {
			return err
		}
		if res.Errors > 0 || res.OpsPerSec <= 0 {
			return fmt.Errorf("%d error replies, %.0f requests/s", res.Errors, res.OpsPerSec)
		}
		ops = res.OpsPerSec
		return nil
	})
	return ops, err
}

// latencyTrial is one fixed-rate trial of im under rt.
func (e *pairEnv) latencyTrial(ctx context.Context, im Image, rt variants.Runtime, plan results.LatencyPlan, lp variants.LatencyProfile) (results.LatencyTrial, error) {
	var t results.LatencyTrial
	err := e.withServer(ctx, im, rt, lp, func(_ *engine.Server, cfg loadgen.Config) error {
		cfg.Rate, cfg.Warmup, cfg.Duration = plan.Rate, lp.Warmup, lp.Duration
		if rt.Spin {
			stop, err := spinCPUs(rt)
			if err != nil {
				return err
			}
			defer stop()
		}
		st0, _ := machine.ReadCPUTimes()
		started := time.Now()
		res, _, err := e.gen.Generate(ctx, cfg, rt.ClientCPUs)
		wall := time.Since(started)
		if err != nil {
			return err
		}
		st1, _ := machine.ReadCPUTimes()
		if res.Requests == 0 || res.Errors > 0 {
			return fmt.Errorf("%d requests, %d error replies (%q): not a measurement", res.Requests, res.Errors, res.ErrorSamples)
		}
		t = results.LatencyTrial{Test: plan.Test, Rate: plan.Rate, SentPerSec: res.SentPerSec, OpsPerSec: res.OpsPerSec,
			Requests: res.Requests, Errors: res.Errors, P50Us: 1000 * res.P50Ms, P99Us: 1000 * res.P99Ms, P999Us: 1000 * res.P999Ms,
			MaxUs: 1000 * res.MaxMs, Hist: res.Hist, Started: started.UTC(), Duration: wall,
			SendLagP50Us: 1000 * res.SendLagP50Ms, SendLagP99Us: 1000 * res.SendLagP99Ms}
		h, err := loadgen.DecodeHist(res.Hist)
		if err != nil {
			return fmt.Errorf("the generator's histogram: %w", err)
		}
		t.P95Us = float64(h.ValueAtQuantile(95))
		if st0 != nil && st1 != nil {
			t.Steal = machine.StealShare(st0, st1, nil)
		}
		switch {
		case t.SentPerSec < latencyBehind*plan.Rate:
			t.Behind = fmt.Sprintf("the generator sent %.0f of %.0f requests/s", t.SentPerSec, plan.Rate)
		case t.Steal > latencySteal:
			t.Behind = fmt.Sprintf("%.1f%% of the CPU time was stolen", 100*t.Steal)
		}
		return nil
	})
	return t, err
}

// spinCPUs keeps rt's server and client CPUs from idling (machine.Spin).
func spinCPUs(rt variants.Runtime) (func(), error) {
	srv, err := machine.ParseCPUList(rt.ServerCPUs)
	if err != nil {
		return nil, err
	}
	cli, err := machine.ParseCPUList(rt.ClientCPUs)
	if err != nil {
		return nil, err
	}
	var cpus []int
	for _, c := range append(srv, cli...) {
		if !slices.Contains(cpus, c) {
			cpus = append(cpus, c)
		}
	}
	if len(cpus) == 0 {
		return nil, fmt.Errorf("runtime %s spins, and has no CPUs pinned to spin on (server_cpus, client_cpus)", rt.Name)
	}
	return machine.Spin(cpus)
}
