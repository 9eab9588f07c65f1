package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/redis-variants/redis-variants/bench"
	"github.com/redis-variants/redis-variants/engine"
	"github.com/redis-variants/redis-variants/results"
	"github.com/redis-variants/redis-variants/variants"
)

func init() { register(newCmdBench) }

// benchOptions are the flags of `redis-variants bench`.
type benchOptions struct {
	Profile  string
	Only     []string
	Runtimes []string
	Trials   int
	Budget   time.Duration
	Seed     int64
}

func newCmdBench(g *globals) *cobra.Command {
	o := &benchOptions{}
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Benchmark every built image under every runtime configuration",
		Long: `Benchmark every successfully built image of a run (verified ones; images
whose verification failed are skipped, never-verified ones are flagged)
under every runtime configuration: a fresh container per trial, the server
pinned to the runtime's server CPUs and the generator (this binary's
loadgen, under taskset) to its client CPUs, a readiness wait and a warmup,
then the measured window. Trials are interleaved across images in a
shuffled round-robin; after the profile's minimum, more go to the pairs
whose intervals still overlap, until they separate, reach max_trials or the
budget is spent. Each trial is written at once to trials/...json; an
interrupted run resumes where it stopped. Waits for the machine lock so it
never runs while a build does.`,
		Example: `  redis-variants bench --profile quick
  redis-variants bench --run runs/20261129-223300 --only gcc-o3 --only stock --runtime host --trials 3`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runBench(cmd, g, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Profile, "profile", "quick", "benchmark profile (quick, full, or one defined in the variants file)")
	f.StringSliceVar(&o.Only, "only", nil, "benchmark only this variant or reference (repeatable, or comma-separated)")
	f.StringSliceVar(&o.Runtimes, "runtime", nil, "use only this runtime configuration (repeatable, or comma-separated)")
	f.IntVar(&o.Trials, "trials", 0, "minimum trials per image, runtime and test (default: the profile's)")
	f.DurationVar(&o.Budget, "budget", 0, "stop starting trials after this long (default: the profile's)")
	f.Int64Var(&o.Seed, "seed", 0, "trial-order shuffle seed (default: from the clock; recorded in bench.json)")
	return cmd
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
	dir := g.RunDir
	if dir == "" {
		latest, err := results.Latest(g.Runs)
		if err != nil {
			return err
		}
		if latest == "" {
			return fmt.Errorf("no run folder under %s: run `redis-variants build` first, or give --run", g.Runs)
		}
		dir = latest
	}
	run, err := results.Open(dir)
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
		Run:       run,
		Engine:    eng,
		Images:    kept,
		Runtimes:  rts,
		Profile:   prof,
		Trials:    o.Trials,
		MaxTrials: max(prof.MaxTrials, o.Trials),
		Budget:    budget,
		Seed:      o.Seed,
		LockFile:  filepath.Join(g.State, "locks", "machine.lock"),
		Log:       errw,
	})
	fmt.Fprintf(cmd.OutOrStdout(), "bench: %d trial(s) done now, %d resumed, %d on disk, %d planned (minimum), %d failed, seed %d, %s\n",
		sum.Done, sum.Resumed, sum.Total, sum.Planned, len(sum.Failures), sum.Seed, sum.Elapsed.Round(time.Second))
	if sum.BudgetSpent {
		fmt.Fprintln(cmd.OutOrStdout(), "bench: the time budget ran out before every planned trial ran; run it again to continue")
	}
	if errors.Is(err, context.Canceled) {
		return fmt.Errorf("interrupted: the %d finished trial(s) are kept in %s; run the same command again to resume", sum.Total, run.Path("trials"))
	}
	return err
}
