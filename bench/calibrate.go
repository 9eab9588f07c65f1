package bench

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis-variants/redis-variants/rank"
	"github.com/redis-variants/redis-variants/results"
	"github.com/redis-variants/redis-variants/variants"
)

// The bench checks its own preconditions first. Co-scheduled pairs rank
// images only where the two servers keep the server CPUs busy: then each
// server's CPU time per operation is its own cost, and the vCPU's waves
// hit both alike. Whether a load does that depends on the machine (how
// costly its network path is, how fast its client CPU), so before the
// design runs an A/A pair of the primary reference is loaded at rising
// loads, per benchmark, until two windows in a row are accepted; the pairs
// then run at that load. If no load does it, no pair could be measured:
// the bench says so within its first minute and stops.

// ErrNoAnswer: the bench cannot measure what the ranking needs here.
var ErrNoAnswer = errors.New("no answer")

// calibrationWindows is how many windows one load is tried with.
const calibrationWindows = 2

// lockStepThreads is how many goroutines drive a generator's connections
// in lock step on the ladder's upper rungs: on one client CPU that costs
// the generator about half the CPU per request of a goroutine per
// connection (GET P16 here: 41-46% of the client CPU against 67-73%).
const lockStepThreads = 3

// loads is the ladder of loads a calibration tries, lightest first: the
// profile's connections (half its clients per server), the same on
// goroutines in lock step, then two, four and eight times the
// connections. The top rung is for a costly path to the servers, where
// the generators wait and their CPU has time to spare: with 1 ms added to
// each round trip (TestSlowPathRaisesTheLoad), four times the profile's
// connections kept the server CPU 80% busy, with the generators at a third
// of theirs.
func loads(profileClients int) []results.Load {
	c := max(profileClients/2, 1)
	t := min(lockStepThreads, c)
	return []results.Load{{Clients: c}, {Clients: c, Threads: t}, {Clients: 2 * c, Threads: t}, {Clients: 4 * c, Threads: t}, {Clients: 8 * c, Threads: t}}
}

// calibrate finds the load of every benchmark, or reuses the calibration
// an earlier bench of the run recorded for the same image, runtime, CPU
// and window.
func (s *session) calibrate(ctx context.Context) error {
	if len(s.slots) == 0 {
		return nil
	}
	rt := s.o.Runtimes[0]
	prim := s.byName[s.primary]
	var old results.Calibration
	if err := s.o.Run.ReadJSON(results.CalibrationFile, &old); err == nil && s.reusable(old, prim, rt.Name) {
		s.apply(old)
		fmt.Fprintf(s.log, "calibration: reused (%s)\n", describeLoads(old))
		return nil
	}
	start := time.Now()
	cal := results.Calibration{Image: prim.Name, ImageRef: prim.Ref, Runtime: rt.Name, CPUModel: s.cpuModel, Duration: s.o.Profile.Duration}
	rep := &rank.Replicate{PairKey: rank.PairKey{Image: prim.Name, Runtime: rt.Name, Base: prim.Name, BaseRuntime: rt.Name}, Rep: -1}
	var p *livePair
	defer func() {
		if p != nil {
			p.close()
		}
	}()
	var failed []string
	for _, bn := range s.benches {
		try := func(ld results.Load) (results.Level, error) {
			lvl := results.Level{Load: ld}
			if p == nil {
				var err error
				if p, err = s.env.startLive(ctx, rep); err != nil {
					if ctx.Err() != nil {
						return lvl, ctx.Err()
					}
					return lvl, fmt.Errorf("bench: calibrating on %s: %w", prim.Name, err)
				}
			}
			wins, reasons, err := s.env.measure(ctx, p, bn, ld, 0, calibrationWindows)
			if ctx.Err() != nil {
				return lvl, ctx.Err()
			}
			if err != nil {
				lvl.Error = err.Error()
				p.close()
				p = nil
			}
			lvl.Windows = wins
			for _, r := range reasons {
				if r != "" {
					lvl.Rejected = append(lvl.Rejected, r)
				}
			}
			lvl.ClientCPU = clientCPU(wins, rt.ClientCPUs)
			return lvl, nil
		}
		logf := func(format string, a ...any) {
			fmt.Fprintf(s.log, "calibration %s: "+format+"\n", append([]any{bn}, a...)...)
		}
		bc, err := climb(bn, s.o.Profile.Duration, loads(s.o.Profile.Clients), try, logf)
		if err != nil {
			return err
		}
		cal.Benches = append(cal.Benches, bc)
		if bc.Load.Clients == 0 {
			failed = append(failed, fmt.Sprintf("%s (%s)", bn, whyUnsaturated(bc, rt)))
		}
	}
	cal.Elapsed = time.Since(start)
	if err := s.o.Run.WriteJSON(results.CalibrationFile, cal); err != nil {
		return recordError(err)
	}
	if len(failed) > 0 {
		msg := fmt.Sprintf("no load tried kept the server CPU busy with two servers of %s under %s, so no pair can be measured on this machine: %s (calibration.json has every window)",
			prim.Name, rt.Name, strings.Join(failed, "; "))

		s.sum.Warnings = append(s.sum.Warnings, "no answer: "+msg)
		return fmt.Errorf("%w: %s", ErrNoAnswer, msg)
	}
	s.apply(cal)
	line := fmt.Sprintf("bench: calibrated in %s: %s", cal.Elapsed.Round(100*time.Millisecond), describeLoads(cal))
	fmt.Fprintln(s.log, line)
	s.o.Progress.Println("%s", line)
	return nil
}

// climb finds bn's load: it measures loads of ladder with try, lightest
// first, and takes the first that keeps the server CPUs busy with
// headroom (a load saturated without it stands only when the next does
// no better, or on the last rung). A saturated load with headroom whose
// windows would need lengthening (stretch: too few rounds of every
// connection's pipeline in the profile's duration) tries fewer
// connections first: the same server work in shorter windows, the
// lightest that keeps headroom winning, with the shortest windows (the
// LRANGE tests of 1000-byte values at P16 asked for 2-4 s windows at 25
// connections, which made six-builds' bench 21 minutes). A benchmark
// whose requests outlast a window (starved) goes down the ladder too.
// try fails only when the bench cannot go on (the context ended, no
// server starts); a load that errs is a level with its Error.
func climb(bn rank.Bench, dur time.Duration, ladder []results.Load, try func(results.Load) (results.Level, error), logf func(format string, a ...any)) (results.BenchCalibration, error) {
	bc := results.BenchCalibration{Bench: bn}
	down := false              // the ladder now goes to fewer connections
	var marginal *results.Load // the first load saturated without headroom
	var best *results.Load     // set when going down for shorter windows: the lightest load with headroom so far
	goDown := func(i int, ld results.Load) {
		if !down {
			ladder = append(ladder[:i+1:i+1], lighter(ld)...)
			down = true
		}
	}
	for i := 0; i < len(ladder); i++ {
		ld := ladder[i]
		lvl, err := try(ld)
		if err != nil {
			return bc, err
		}
		bc.Tried = append(bc.Tried, lvl)
		logf("%s", describeLevel(lvl))
		if lvl.Saturated() {
			if w := stretch(lvl.Windows, bn, ld, dur); w > 0 {
				ld.Window = w
				logf("windows of %s (%.1f rounds of every connection's pipeline in %s)", w, rounds(lvl.Windows, bn, ld), dur)
			}
			room := headroom(lvl.Windows, lvl.ClientCPU)
			if best != nil && !room {
				break // fewer connections lost the headroom: the lightest with it stands
			}
			if room && ld.Window > 0 && ld.Clients > 1 {
				best = &ld
				goDown(i, ld)
				logf("saturated with headroom, but its windows need lengthening: trying fewer connections")
				continue
			}
			if room || down || i == len(ladder)-1 {
				bc.Load = ld
				return bc, nil
			}
			if marginal == nil {
				marginal = &ld
			}
			logf("saturated without headroom (server CPUs busy under %.0f%%, or the generators over %.0f%% of the client CPUs): trying the next load", 100*(MinCoreBusy+Headroom), 100*MaxClientBusy)
			continue
		}
		if best != nil || marginal != nil {
			break // a lighter load lost saturation, or a heavier one did no better: the one before stands
		}
		if starved(lvl.Windows) {
			// More connections only queue more requests behind ones
			// that already outlast a window: go down the ladder.
			goDown(i, ld)
		}
	}
	switch {
	case best != nil:
		bc.Load = *best
	case marginal != nil:
		bc.Load = *marginal
	}
	return bc, nil
}

// starved reports whether a generator finished no request in one of wins:
// at that depth a request (a pipeline of large replies: LRANGE_600 of
// 1000-byte values at P16 is 9.6 MB a batch) takes longer than a window,
// and a heavier load cannot help.
func starved(wins []results.Window) bool {
	for _, w := range wins {
		if w.Image.Requests == 0 || w.Base.Requests == 0 {
			return true
		}
	}
	return false
}

// Headroom is how far above MinCoreBusy a calibration window's server
// CPUs must be busy for its load to be taken at once: a load that only
// just saturates them in calibration left windows below the bound in the
// bench (six-builds' PING tests), so the next load is tried first, and
// the marginal one kept only when the next does no better.
const Headroom = 0.02

// MaxClientBusy is the most of the client CPUs the generators may use in
// a calibration window whose load is taken at once: a generator near the
// end of its CPU sets the pace in the next slow spell (six-builds' LPOP,
// RPOP, SPOP, ZPOPMIN of 1000-byte values: windows lost at 90-94% busy
// with the client CPU 96-100% busy), and the next rung drives the same
// connections in lock step at about half the client CPU a request.
const MaxClientBusy = 0.85

// headroom reports whether every window of wins kept the server CPUs busy
// by Headroom more than MinCoreBusy asks, with the generators at most
// MaxClientBusy of the client CPUs (client: the level's highest share).
func headroom(wins []results.Window, client float64) bool {
	if client > MaxClientBusy {
		return false
	}
	for _, w := range wins {
		if w.CoreBusy < MinCoreBusy+Headroom {
			return false
		}
	}
	return len(wins) > 0
}

// MinRounds is how many rounds of every connection's pipeline a window
// should hold: with fewer, where a window's bounds fall among a few heavy
// rounds moves its count by a large share, and the next slow spell leaves
// a window with none (six-builds' LRANGE_300/500/600 with 1000-byte
// values at P16: 111 of 960 measurements lost in 500 ms windows).
const MinRounds = 8

// MaxStretch bounds how many times the profile's duration a lengthened
// window may be.
const MaxStretch = 8

// rounds is the fewest rounds of every connection's pipeline (clients ×
// pipeline requests) either generator finished in one of wins.
func rounds(wins []results.Window, bn rank.Bench, ld results.Load) float64 {
	per := float64(max(ld.Clients, 1) * max(bn.Pipeline, 1))
	lo := -1.0
	for _, w := range wins {
		for _, n := range []int64{w.Image.Requests, w.Base.Requests} {
			if r := float64(n) / per; lo < 0 || r < lo {
				lo = r
			}
		}
	}
	return max(lo, 0)
}

// stretch is the window length a benchmark calibrated at ld needs so that
// a window holds MinRounds rounds, judged by its calibration windows wins
// of length dur; 0 when dur already does. It is at most MaxStretch × dur,
// rounded up to 100 ms.
func stretch(wins []results.Window, bn rank.Bench, ld results.Load, dur time.Duration) time.Duration {
	r := rounds(wins, bn, ld)
	if dur <= 0 || r >= MinRounds {
		return 0
	}
	k := float64(MaxStretch)
	if r > 0 {
		k = min(k, MinRounds/r)
	}
	w := time.Duration(k * float64(dur))
	return (w + 99*time.Millisecond).Truncate(100 * time.Millisecond)
}

// lighter is the ladder down from ld for a benchmark whose requests
// outlast a window at ld: half the connections a rung (a goroutine each),
// down to one. Measured on this project's 2-vCPU machines: LRANGE_300 and
// LRANGE_600 with 1000-byte values at P16 finished no request in a 500 ms
// window at 25 connections per server, and 200 connections got no reply
// within 10 s.
func lighter(ld results.Load) []results.Load {
	var out []results.Load
	for c := ld.Clients / 2; c >= 1; c /= 2 {
		out = append(out, results.Load{Clients: c})
		if c == 1 {
			break
		}
	}
	return out
}

// reusable says whether an earlier calibration holds for this bench.
func (s *session) reusable(c results.Calibration, prim Image, rt string) bool {
	if c.Image != prim.Name || c.ImageRef != prim.Ref || c.Runtime != rt || c.CPUModel != s.cpuModel || c.Duration != s.o.Profile.Duration {
		return false
	}
	got := map[rank.Bench]bool{}
	for _, b := range c.Benches {
		if b.Load.Clients > 0 {
			got[b.Bench] = true
		}
	}
	for _, b := range s.benches {
		if !got[b] {
			return false
		}
	}
	return true
}

func (s *session) apply(c results.Calibration) {
	s.env.loads = map[rank.Bench]results.Load{}
	for _, b := range c.Benches {
		s.env.loads[b.Bench] = b.Load
	}
}

// clientCPU is the two generators' CPU time over the client CPUs' time,
// the highest of the level's windows.
func clientCPU(ws []rank.Window, clientCPUs string) float64 {
	n, err := CountCPUs(clientCPUs)
	if err != nil || n == 0 {
		n = 1
	}
	hi := 0.0
	for _, w := range ws {
		if w.Wall <= 0 {
			continue
		}
		hi = max(hi, float64(w.Image.ClientCPU+w.Base.ClientCPU)/float64(w.Wall)/float64(n))
	}
	return hi
}

func describeLevel(l results.Level) string {
	if l.Error != "" {
		return fmt.Sprintf("%s: %s", l.Load, l.Error)
	}
	var ws []string
	for _, w := range l.Windows {
		ws = append(ws, fmt.Sprintf("busy %.1f%% (cgroups %.1f%% + %.1f%%, softirq %.1f%%)", 100*w.CoreBusy, 100*w.Image.CPUShare, 100*w.Base.CPUShare, 100*w.SoftIRQ))
	}
	verdict := "saturated"
	if !l.Saturated() {
		verdict = "not accepted: " + strings.Join(l.Rejected, "; ")
	}
	return fmt.Sprintf("%s: %s; generators %.0f%% of the client CPUs: %s", l.Load, strings.Join(ws, ", "), 100*l.ClientCPU, verdict)
}

func describeLoads(c results.Calibration) string {
	var parts []string
	for _, b := range c.Benches {
		parts = append(parts, fmt.Sprintf("%s at %s", b.Bench, b.Load))
	}
	return strings.Join(parts, ", ")
}

// whyUnsaturated says what the last load tried showed, and what it points
// to.
func whyUnsaturated(bc results.BenchCalibration, rt variants.Runtime) string {
	if len(bc.Tried) == 0 {
		return "nothing tried"
	}
	l := bc.Tried[len(bc.Tried)-1]
	if l.Error != "" {
		return fmt.Sprintf("at %s: %s", l.Load, l.Error)
	}
	busy := 1.0
	for _, w := range l.Windows {
		busy = min(busy, w.CoreBusy)
	}
	hint := "the client CPUs had time to spare, so something holds the servers back (a CPU quota on them, the path to them)"
	switch {
	case rt.CPULimit > 0:
		hint = fmt.Sprintf("%s caps each server at %g CPUs (cpu_limit), so two of them cannot keep the server CPU busy: compare such a runtime by the standalone trials, or pair under one without the cap", rt.Name, rt.CPULimit)
	case l.ClientCPU >= 0.9:
		hint = "the client CPUs were full: the generators cannot drive the servers harder here (more client_cpus, or a deeper pipeline)"
	}
	return fmt.Sprintf("at up to %s the server CPU was busy %.0f%% (need %.0f%%) with the generators at %.0f%% of the client CPUs: %s",
		l.Load, 100*busy, 100*MinCoreBusy, 100*l.ClientCPU, hint)
}
