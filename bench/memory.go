package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/redis-variants/redis-variants/loadgen"
	"github.com/redis-variants/redis-variants/machine"
	"github.com/redis-variants/redis-variants/results"
	"github.com/redis-variants/redis-variants/variants"
)

// The memory workload's servers: every image gets the profile's
// replicates of fresh servers, the primary reference twice as many (the
// second half its A/A control), in the same drawn order as every other
// measurement. Memory figures are nearly deterministic for a given
// binary, so a server is measured alone (no co-scheduling).

// memSlot is one memory-workload server to measure.
type memSlot struct {
	image   string
	control bool
	rep     int
}

func (m memSlot) rel() string { return results.MemoryRel(m.image, m.control, m.rep) }

func (m memSlot) String() string {
	s := fmt.Sprintf("memory %s #%d", m.image, m.rep)
	if m.control {
		s += " (A/A)"
	}
	return s
}

// StateEngine is what the memory workload needs of the Docker Engine
// besides Engine: whether the OOM killer stopped a server.
type StateEngine interface {
	ContainerState(ctx context.Context, id string) (running, oomKilled bool, err error)
}

// MemoryLimit is the memory limit of a memory-workload server: room for
// the dataset four times over (the overhead of keys and objects, the
// allocator's size classes, fragmentation after the churn) and 128 MiB
// for the server itself.
func MemoryLimit(m *variants.MemoryProfile) int64 { return 4*m.Target + 128<<20 }

// limit is the memory limit of the memory workload's servers:
// Options.MemoryLimit, else MemoryLimit.
func (o Options) limit() int64 {
	if o.MemoryLimit > 0 {
		return o.MemoryLimit
	}
	return MemoryLimit(o.Profile.Memory)
}

// CheckMemory refuses a memory workload the machine cannot hold: a
// target the servers' memory limit cannot take, or a limit larger than
// the memory the machine has available now, with the numbers.
func CheckMemory(m *variants.MemoryProfile, limit, available int64) error {
	if m == nil {
		return nil
	}
	switch {
	case m.Target <= 0:
		return fmt.Errorf("memory workload: target %d bytes: want a positive size", m.Target)
	case m.Target >= limit:
		return fmt.Errorf("memory workload: target %s does not fit the server's memory limit of %s", mib(m.Target), mib(limit))
	case available > 0 && limit > available:
		return fmt.Errorf("memory workload: target %s needs a server of up to %s, and this machine has %s available: lower the target", mib(m.Target), mib(limit), mib(available))
	}
	return nil
}

func mib(b int64) string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }

// memoryUnits are the memory workload's servers of the design.
func memoryUnits(o Options, images []Image, primary string) []unit {
	m := o.Profile.Memory
	if m == nil || m.Replicates <= 0 {
		return nil
	}
	var out []unit
	for _, im := range images {
		for r := 0; r < m.Replicates; r++ {
			out = append(out, unit{mem: &memSlot{image: im.Name, rep: r}})
			if im.Name == primary {
				out = append(out, unit{mem: &memSlot{image: im.Name, control: true, rep: r}})
			}
		}
	}
	return out
}

// memory measures one memory-workload server, unless it is done. A
// server the OOM killer stops is recorded as such and measured once more
// at the end; a second OOM stays recorded, and nothing else is lost.
func (s *session) memory(ctx context.Context, u unit) error {
	sl := u.mem
	if s.doneMem[sl.rel()] {
		return nil
	}
	im := s.byName[sl.image]
	rt := s.o.Runtimes[0]
	t, err := s.env.runMemory(ctx, im, rt, *s.o.Profile.Memory)
	if err != nil && ctx.Err() != nil {
		return ctx.Err()
	}
	t.Image, t.VariantID, t.ImageID, t.Reference, t.Control, t.Rep, t.Seq, t.CPUModel = im.Name, im.ID, im.ImageID, im.Reference, sl.control, sl.rep, s.seq, s.cpuModel
	if err != nil {
		t.Error = err.Error()
	}
	if err := s.o.Run.WriteJSON(sl.rel(), t); err != nil {
		return recordError(err)
	}
	s.seq++
	switch {
	case t.OOM && !s.memRetried[sl.rel()]:
		s.memRetried[sl.rel()] = true
		s.sum.MemoryFailures = append(s.sum.MemoryFailures, fmt.Sprintf("%s: stopped by the OOM killer (limit %s); measured again at the end", sl, mib(t.Limit)))
		s.o.Progress.Failure("bench %s: the OOM killer stopped the server (limit %s); measuring it again at the end", sl, mib(t.Limit))
		s.units = append(s.units, u)
		return nil
	case t.Error != "":
		s.sum.MemoryFailures = append(s.sum.MemoryFailures, fmt.Sprintf("%s: %s", sl, t.Error))
		s.o.Progress.Failure("bench %s: %s", sl, t.Error)
	}
	s.doneMem[sl.rel()] = true
	s.sum.MemoryDone++
	if ch, ok := t.Churned(); ok {
		s.logf("  %s: %s used, rss %s, fragmentation %.3f after the churn; peak %s; fill %.0f ops/s\n", sl,
			mib(ch.UsedMemory), mib(ch.UsedMemoryRSS), ch.FragRatio, mib(t.PeakBytes), phaseOps(t.Result, "fill"))
	}
	return nil
}

func phaseOps(r loadgen.MemoryResult, name string) float64 {
	p, _ := r.Phase(name)
	return p.OpsPerSec
}

// runMemory starts a fresh server of im under rt with the workload's
// memory limit and runs the memory workload on it.
func (e *pairEnv) runMemory(ctx context.Context, im Image, rt variants.Runtime, m variants.MemoryProfile) (t results.MemoryTrial, err error) {
	t = results.MemoryTrial{Runtime: rt.Name, Limit: e.o.limit(), Started: time.Now().UTC()}
	start := time.Now()
	defer func() { t.Duration = time.Since(start) }()
	srv, err := e.start(ctx, im, rt, "memory", t.Limit)
	if err != nil {
		return t, err
	}
	defer e.remove(ctx, srv)
	if err := e.o.Engine.WaitReady(ctx, srv, e.readyWait()); err != nil {
		return t, err
	}
	cfg := loadgen.Config{Addr: srv.Addr, Socket: srv.Socket}
	res, err := loadgen.RunMemory(ctx, cfg, loadgen.Memory{Target: m.Target, Sizes: m.Sizes, Overwrite: m.Overwrite, Delete: m.Delete, Defrag: m.Defrag})
	t.Result = res
	t.PeakBytes, _ = machine.ContainerPeakMemory(srv.ID)
	if err != nil && ctx.Err() == nil && e.oomKilled(ctx, srv.ID, t.PeakBytes, t.Limit) {
		t.OOM = true
		return t, fmt.Errorf("the OOM killer stopped the server at its limit of %s (peak %s): %w", mib(t.Limit), mib(t.PeakBytes), err)
	}
	if err != nil {
		return t, err
	}
	if len(res.Phases) > 0 {
		t.Allocator = res.Phases[len(res.Phases)-1].After.Allocator
	}
	return t, nil
}

// oomKilled says whether a server whose workload failed was stopped by
// the OOM killer: the Engine says so once the container has exited (it is
// given 5 s to), or its cgroup's peak reached the limit.
func (e *pairEnv) oomKilled(ctx context.Context, id string, peak, limit int64) bool {
	se, ok := e.o.Engine.(StateEngine)
	if ok {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		for ctx.Err() == nil {
			running, oom, err := se.ContainerState(ctx, id)
			if err != nil || oom || !running {
				if oom {
					return true
				}
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	return limit > 0 && peak >= limit
}
