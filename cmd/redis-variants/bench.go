package main

import (
	"github.com/spf13/cobra"

	"github.com/redis-variants/redis-variants/pipeline"
)

func newCmdBench(g *globals) *cobra.Command {
	o := &pipeline.BenchOptions{}
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
			return pipeline.Bench(cmd.Context(), config(cmd, g), *o)
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
