package main

import (
	"github.com/spf13/cobra"

	"github.com/redis-variants/redis-variants/pipeline"
)

func newCmdBench(g *globals) *cobra.Command {
	o := &pipeline.BenchOptions{}
	io := &pipeline.ImagesOptions{}
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
never runs while a build does.

With --images (or --images-from), bench measures published images instead
of a run's builds, without building them: each is pulled by digest through
Docker Engine, its build facts read from its labels (the variant spec), and
it is measured against the variants file's references, built or pulled here,
with the same method, into a new run folder that is then ranked. A
repository without a tag stands for every published variant in it. This is
how another machine (another CPU generation) adds its row to history.`,
		Example: `  redis-variants bench --profile quick
  redis-variants bench --images 127.0.0.1:5000/redis-variants --profile quick
  redis-variants bench --images ghcr.io/acme/redis-variants:7.0.15-best --images ghcr.io/acme/redis-variants:7.0.15-gcc-o3
  redis-variants bench --run runs/20261129-223300 --only gcc-o3 --only stock --runtime host --replicates 4 --trials -1`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if len(io.Images) > 0 || io.From != "" {
				return pipeline.BenchImages(cmd.Context(), config(cmd, g), *o, *io)
			}
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
	f.StringArrayVar(&io.Images, "images", nil, "benchmark this published image or repository instead of a run's builds (REGISTRY/REPO[:TAG|@DIGEST], repeatable)")
	f.StringVar(&io.From, "images-from", "", "benchmark the published images listed in this file (one reference per line)")
	f.BoolVar(&io.Insecure, "insecure", false, "use plain HTTP for an --images registry that is not local")
	return cmd
}
