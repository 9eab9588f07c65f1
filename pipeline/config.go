// Package pipeline drives a run's stages: build → verify → bench → rank →
// report → publish, each over the run folder the previous ones filled.
// `redis-variants run` and every stage's subcommand make one call into it;
// it prints to the writers its Config names, never to the process's own.
package pipeline

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/redis-variants/redis-variants/machine"
	"github.com/redis-variants/redis-variants/progress"
	"github.com/redis-variants/redis-variants/results"
	"github.com/redis-variants/redis-variants/variants"
)

// Config is what every stage is given: where things are, and where to
// print. The commands fill it from their flags (and those flags' defaults
// from the environment, read once in cmd).
type Config struct {
	File     string // variants file
	Runs     string // folder of run folders
	RunDir   string // a specific run folder ("" = a new one for build/run, the latest for later stages)
	State    string // state folder: caches, daemons' data, the machine lock
	Registry string // local registry host:port
	BuildKit string // buildkitd address
	// Builders, when set, are the buildkitd daemons builds are spread
	// over instead of BuildKit alone: ADDR or ADDR,jobs=N each.
	Builders []string
	// Shard, when not the whole file, is the part of the variants file
	// this call works on (variants.Plan.ShardOf): every stage of a run sees
	// the same part, recorded in the run's plan.json.
	Shard variants.Shard
	Out   io.Writer
	Err   io.Writer
	// Progress is the progress mode on Err: auto, tty, plain or quiet
	// (progress.Modes; "" = auto). Printer, when set, is the one printer
	// every stage of a run shares; a stage called alone makes its own.
	Progress string
	Printer  *progress.Printer

	// heldRun is the run folder whose lock this call chain holds (Run
	// takes it once for all its stages).
	heldRun string
}

// holdRun takes the lock of the run folder dir for a stage that writes
// it. A folder another process is writing (a second `run --run R`, a
// `bench` beside a `build` of the same run) is refused, naming that
// process, rather than written by two at once. A new run folder never
// conflicts: two runs at once each have their own, and the machine lock
// makes their stages take turns.
func (c Config) holdRun(dir, holder string) (func(), error) {
	if c.heldRun != "" && filepath.Clean(c.heldRun) == filepath.Clean(dir) {
		return func() {}, nil
	}
	unlock, err := machine.TryLock(filepath.Join(dir, results.LockFile), holder)
	if errors.Is(err, machine.ErrHeld) {
		return nil, fmt.Errorf("run folder %s is being written by another redis-variants (%s); wait for it to finish, or name another --run", dir, machine.Holder(filepath.Join(dir, results.LockFile)))
	}
	if err != nil {
		return nil, fmt.Errorf("run folder %s: %w", dir, err)
	}
	return unlock, nil
}

// printer returns the shared printer, or a new one on c.Err and the
// function that closes it.
func (c Config) printer() (*progress.Printer, func(), error) {
	if c.Printer != nil {
		return c.Printer, func() {}, nil
	}
	p, err := progress.New(c.Err, c.Progress)
	if err != nil {
		return nil, nil, err
	}
	return p, p.Close, nil
}

// SourcesDir is the content-addressed source cache under the state folder.
func (c Config) SourcesDir() string { return filepath.Join(c.State, "cache", "sources") }

// Plan loads the variants file, printing its validation errors and
// warnings (file:line:column) on c.Err.
func (c Config) Plan() (*variants.Plan, error) {
	plan, err := variants.Load(c.File)
	var verr *variants.Error
	if errors.As(err, &verr) {
		fmt.Fprintln(c.Err, verr.Error())
		return nil, fmt.Errorf("%s: %d error(s)", c.File, len(verr.Diagnostics))
	}
	if err != nil {
		return nil, err
	}
	for _, w := range plan.Warnings {
		fmt.Fprintln(c.Err, w.String())
	}
	return plan.ShardOf(c.Shard)
}

// Select loads the plan and the entries named by only (names or globs;
// none: all of them).
func (c Config) Select(only []string) (*variants.Plan, []variants.Variant, error) {
	plan, err := c.Plan()
	if err != nil {
		return nil, nil, err
	}
	vs, err := plan.Select(only)
	return plan, vs, err
}
