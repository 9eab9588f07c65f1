package pipeline

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/redis-variants/redis-variants/machine"
	"github.com/redis-variants/redis-variants/publish"
	"github.com/redis-variants/redis-variants/results"
)

// RunOptions are the flags of `redis-variants run`: the stages' own flags
// that matter for a whole run.
type RunOptions struct {
	Only          []string
	Jobs          int
	VerifyProfile string
	BenchProfile  string
	Runtimes      []string
	Push          string
	NoVerify      bool
	CacheTo       string   // build's --cache-to
	CacheFrom     []string // build's --cache-from
}

// Run drives every stage on one run folder: build, verify (unless
// o.NoVerify), bench, rank and reports, and publish when o.Push is set. A
// stage that fails for some entries does not stop the later ones; an
// interruption does.
func Run(ctx context.Context, c Config, o RunOptions) error {
	errw := c.Err
	if c.RunDir == "" {
		c.RunDir = filepath.Join(c.Runs, results.NewRunID(time.Now()))
	}
	fmt.Fprintf(errw, "run folder: %s\n", c.RunDir)
	if err := writeMachine(c.RunDir); err != nil {
		return err
	}
	var failed []error
	stage := func(name string, f func() error) bool {
		start := time.Now()
		fmt.Fprintf(errw, "\n== %s ==\n", name)
		err := f()
		fmt.Fprintf(errw, "== %s: %.0fs ==\n", name, time.Since(start).Seconds())
		if err != nil {
			if ctx.Err() != nil {
				failed = append(failed, fmt.Errorf("%s: interrupted: %w", name, err))
				return false
			}
			fmt.Fprintf(errw, "%s: %v\n", name, err)
			failed = append(failed, fmt.Errorf("%s: %w", name, err))
		}
		return true
	}
	ok := stage("build", func() error {
		return Build(ctx, c, BuildOptions{Only: o.Only, Jobs: o.Jobs, Progress: "auto", CacheTo: o.CacheTo, CacheFrom: o.CacheFrom})
	})
	if ok && !o.NoVerify {
		ok = stage("verify", func() error {
			return Verify(ctx, c, VerifyOptions{Profile: o.VerifyProfile, Only: o.Only})
		})
	}
	if ok {
		ok = stage("bench", func() error {
			return Bench(ctx, c, BenchOptions{Profile: o.BenchProfile, Only: o.Only, Runtimes: o.Runtimes})
		})
	}
	if ok {
		ok = stage("rank", func() error { return Rank(ctx, c, "") })
	}
	if ok && o.Push != "" {
		stage("publish", func() error {
			return Publish(ctx, c, PublishOptions{To: o.Push, Repo: publish.DefaultRepo, Runtime: "host"})
		})
	}
	fmt.Fprintf(errw, "\nresults: %s (report.md, report.html)\n", c.RunDir)
	if len(failed) > 0 {
		return fmt.Errorf("run finished with failures:\n  %w", errors.Join(failed...))
	}
	return nil
}

// writeMachine records the machine a run measured on (machine.json), which
// history uses to group runs by CPU model and x86-64 level.
func writeMachine(dir string) error {
	run, err := results.Open(dir)
	if err != nil {
		return err
	}
	in, err := machine.Read()
	if err != nil {
		return err
	}
	return run.WriteMachine(in)
}
