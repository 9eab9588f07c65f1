package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/redis-variants/redis-variants/bench"
	"github.com/redis-variants/redis-variants/engine"
	"github.com/redis-variants/redis-variants/machine"
	"github.com/redis-variants/redis-variants/results"
	"github.com/redis-variants/redis-variants/variants"
)

// benchOptions are the flags of `redis-variants bench`.
type benchOptions struct {
	Profile    string
	Only       []string
	Runtimes   []string
	Trials     int
	Replicates int
	Budget     time.Duration
	Seed       int64
}

func newCmdBench(g *globals) *cobra.Command {
	o := &benchOptions{}
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Benchmark every built image under every runtime configuration",
		Long: `Benchmark every successfully built image of a run (verified ones; images
whose verification failed are skipped, never-verified ones are flagged).

The ranking comes from co-scheduled pairs: each image's server and the
primary reference's (the plan's first reference) pinned to the same server
CPUs and loaded at the same time by two generators (this binary's loadgen
under taskset, half the clients each), each server's CPU time per operation
read from its cgroup; the primary reference paired with itself is the A/A
control. Each pair runs in the profile's number of replicates (fresh
containers, sides swapped in half) with a fixed number of windows per test.
Standalone trials (one server alone) give absolute ops/s and latency.

The whole design and its order are drawn from --seed before anything runs;
every window and trial is written at once to pairs/ and trials/, and an
interrupted run resumes where it stopped. Waits for the machine lock so it
never runs while a build does.`,
		Example: `  redis-variants bench --profile quick
  redis-variants bench --run runs/20261129-223300 --only gcc-o3 --only stock --runtime host --replicates 4 --trials -1`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runBench(cmd, g, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Profile, "profile", "quick", "benchmark profile (quick, full, or one defined in the variants file)")
	f.StringSliceVar(&o.Only, "only", nil, "benchmark only this variant or reference (repeatable, or comma-separated)")
	f.StringSliceVar(&o.Runtimes, "runtime", nil, "use only this runtime configuration (repeatable, or comma-separated)")
	f.IntVar(&o.Trials, "trials", 0, "standalone trials per image, runtime and test (default: the profile's; -1 = none)")
	f.IntVar(&o.Replicates, "replicates", 0, "co-scheduled replicates per pair, even (default: the profile's)")
	f.DurationVar(&o.Budget, "budget", 0, "stop starting trials after this long (default: the profile's)")
	f.Int64Var(&o.Seed, "seed", 0, "trial-order shuffle seed (default: from the clock; recorded in bench.json)")
	return cmd
}

// primaryOf is the plan's primary reference: its first reference.
func primaryOf(p *variants.Plan) string {
	if len(p.References) > 0 {
		return p.References[0].Name
	}
	return ""
}

// benchPlan returns the run's own plan.json when it has one, else the
// variants file's plan.
func benchPlan(cmd *cobra.Command, g *globals, run *results.Run) (*variants.Plan, error) {
	var p variants.Plan
	err := run.ReadJSON("plan.json", &p)
	if err == nil {
		return &p, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	return loadPlan(cmd.ErrOrStderr(), g)
}

func runBench(cmd *cobra.Command, g *globals, o *benchOptions) error {
	ctx := cmd.Context()
	errw := cmd.ErrOrStderr()
	run, err := results.Find(g.RunDir, g.Runs, "build")
	if err != nil {
		return err
	}
	plan, err := benchPlan(cmd, g, run)
	if err != nil {
		return err
	}
	prof, ok := plan.Profiles[o.Profile]
	if !ok {
		return fmt.Errorf("--profile %s: no such profile in the plan", o.Profile)
	}
	rts, err := bench.SelectRuntimes(plan.Runtimes, o.Runtimes)
	if err != nil {
		return err
	}
	images, warnings, err := bench.Images(run, o.Only)
	if err != nil {
		return err
	}
	for _, w := range warnings {
		fmt.Fprintln(errw, w)
	}
	eng, err := engine.New(ctx)
	if err != nil {
		return err
	}
	defer eng.Close()
	var missing []bench.Image
	kept := images[:0]
	for _, im := range images {
		if ok, err := eng.ImageExists(ctx, im.Ref); err != nil {
			return err
		} else if !ok {
			missing = append(missing, im)
			continue
		}
		kept = append(kept, im)
	}
	for _, im := range missing {
		fmt.Fprintf(errw, "skipping %s: image %s is not in the Docker Engine (rebuild it)\n", im.Name, im.Ref)
	}
	budget := o.Budget
	sum, err := bench.Run(ctx, bench.Options{
		Run:        run,
		Engine:     eng,
		Images:     kept,
		Runtimes:   rts,
		Profile:    prof,
		Primary:    primaryOf(plan),
		Trials:     o.Trials,
		Replicates: o.Replicates,
		Budget:     budget,
		Seed:       o.Seed,
		LockFile:   machine.LockFile(g.State),
		Log:        errw,
	})
	fmt.Fprintf(cmd.OutOrStdout(), "bench: %d of %d replicate(s) on disk (%d windows, %d given up); %d of %d standalone trial(s) (%d failed); seed %d, %s\n",
		sum.Replicates, sum.PlannedReplicates, sum.Windows, len(sum.FailedReplicates), sum.Total, sum.Planned, len(sum.Failures), sum.Seed, sum.Elapsed.Round(time.Second))
	if sum.BudgetSpent {
		fmt.Fprintln(cmd.OutOrStdout(), "bench: the time budget ran out before every planned trial ran; run it again to continue")
	}
	if errors.Is(err, context.Canceled) {
		return fmt.Errorf("interrupted: the %d finished trial(s) are kept in %s; run the same command again to resume", sum.Total, run.Path("trials"))
	}
	return err
}
