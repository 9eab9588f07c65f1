package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/redis-variants/redis-variants/machine"
	"github.com/redis-variants/redis-variants/publish"
	"github.com/redis-variants/redis-variants/results"
)

// runOptions are the flags of `redis-variants run`: the stages' own flags
// that matter for a whole run.
type runOptions struct {
	Only          []string
	Jobs          int
	VerifyProfile string
	BenchProfile  string
	Runtimes      []string
	Push          string
	NoVerify      bool
}

func newCmdRun(g *globals) *cobra.Command {
	o := &runOptions{}
	cmd := &cobra.Command{
		Use:   "run [--push REGISTRY]",
		Short: "Build, verify, benchmark, rank and report in one command",
		Long: `Runs every stage on the variants file into one run folder (new, or --run DIR
to resume one): build (failed variants are recorded and skipped), verify
(failed ones are never benchmarked or published), bench (resumes from the
trials already in the folder), rank and reports, and with --push the
publish stage. A stage that fails for some variants does not stop the
others; the exit status is non-zero when any stage failed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runAll(cmd, g, o) },
	}
	f := cmd.Flags()
	f.StringSliceVar(&o.Only, "only", nil, "only these variants or references (names or globs)")
	f.IntVar(&o.Jobs, "jobs", 1, "variants built at once")
	f.StringVar(&o.VerifyProfile, "verify-profile", "quick", "test-suite profile: quick or full")
	f.StringVar(&o.BenchProfile, "profile", "quick", "benchmark profile")
	f.StringSliceVar(&o.Runtimes, "runtime", nil, "only these runtime configurations")
	f.StringVar(&o.Push, "push", "", "publish the verified, ranked images to this registry at the end")
	f.BoolVar(&o.NoVerify, "no-verify", false, "skip verification (images are then flagged unverified and cannot be published)")
	return cmd
}

func runAll(cmd *cobra.Command, g *globals, o *runOptions) error {
	errw := cmd.ErrOrStderr()
	if g.RunDir == "" {
		g.RunDir = filepath.Join(g.Runs, results.NewRunID(time.Now()))
	}
	fmt.Fprintf(errw, "run folder: %s\n", g.RunDir)
	if err := writeMachine(g.RunDir); err != nil {
		return err
	}
	var failed []error
	stage := func(name string, f func() error) bool {
		start := time.Now()
		fmt.Fprintf(errw, "\n== %s ==\n", name)
		err := f()
		fmt.Fprintf(errw, "== %s: %.0fs ==\n", name, time.Since(start).Seconds())
		if err != nil {
			if cmd.Context().Err() != nil {
				failed = append(failed, fmt.Errorf("%s: interrupted: %w", name, err))
				return false
			}
			fmt.Fprintf(errw, "%s: %v\n", name, err)
			failed = append(failed, fmt.Errorf("%s: %w", name, err))
		}
		return true
	}
	ok := stage("build", func() error {
		return runBuild(cmd, g, &buildOptions{Only: o.Only, Jobs: o.Jobs, Progress: "auto"})
	})
	if ok && !o.NoVerify {
		ok = stage("verify", func() error {
			return runVerify(cmd, g, &verifyOptions{Profile: o.VerifyProfile, Only: o.Only})
		})
	}
	if ok {
		ok = stage("bench", func() error {
			return runBench(cmd, g, &benchOptions{Profile: o.BenchProfile, Only: o.Only, Runtimes: o.Runtimes})
		})
	}
	if ok {
		ok = stage("rank", func() error { return runRank(cmd, g, "") })
	}
	if ok && o.Push != "" {
		stage("publish", func() error {
			return runPublish(cmd, g, &publishOptions{To: o.Push, Repo: publish.DefaultRepo, Runtime: "host"})
		})
	}
	fmt.Fprintf(errw, "\nresults: %s (report.md, report.html)\n", g.RunDir)
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
	in.Flags = nil
	return run.WriteJSON("machine.json", in)
}
