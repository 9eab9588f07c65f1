package main

import (
	"github.com/spf13/cobra"

	"github.com/redis-variants/redis-variants/pipeline"
)

func newCmdGate(g *globals) *cobra.Command {
	o := &pipeline.GateOptions{}
	cmd := &cobra.Command{
		Use:   "gate",
		Short: "Fail a CI job when a candidate image is slower than the one published",
		Long: `Measure a candidate against the image published under a tag, co-scheduled on
one CPU the way bench pairs every image with the primary reference: the
baseline is the primary reference, so the run's A/A control is the baseline
against itself. The candidate is an image (--candidate) or a variant of the
file built now (--build, with its layout draws). Both images are pinned to
their digests before measuring; gate.json in the run folder records them.

The pairs follow the file's --profile without its memory and latency
measures, adding replicates while the interval is wider than a quarter of
the margin. Exit status:
  0  pass: not slower by more than --margin as far as the interval shows
     (a tie passes);
  2  fail: slower by more than --margin, and the interval excludes no change;
  3  cannot tell: the A/A control failed (significant and off by half the
     margin or more), the run gave no answer, or the interval reaches past
     the margin;
  1  the gate could not run (an error).`,
		Example: `  redis-variants gate --baseline registry.example.com/redis:7.0.15-best --build gcc-o3-native --margin 0.03
  redis-variants gate --baseline 127.0.0.1:5000/redis-variants:7.0.15-best --candidate 127.0.0.1:5000/redis-variants:7.0.15-pr123 --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			d, err := pipeline.Gate(cmd.Context(), config(cmd, g), *o)
			if err != nil {
				return err
			}
			if d.ExitCode != 0 {
				return exitCode(d.ExitCode)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Baseline, "baseline", "", "the image published now: REGISTRY/REPO:TAG or @DIGEST (required)")
	f.StringVar(&o.Candidate, "candidate", "", "the image to measure against it")
	f.StringVar(&o.Build, "build", "", "build this variant of the file and measure it against the baseline (instead of --candidate)")
	f.Float64Var(&o.Margin, "margin", 0.05, "the slowdown allowed, as a share (0.05 = 5%)")
	f.StringVar(&o.Profile, "profile", "quick", "benchmark profile of the file the pairs follow")
	f.StringVar(&o.Runtime, "runtime", "", "runtime configuration to measure under (default: the file's first)")
	f.BoolVar(&o.Insecure, "insecure", false, "use plain HTTP for a registry that is not local")
	f.BoolVar(&o.JSON, "json", false, "print the decision as JSON")
	_ = cmd.MarkFlagRequired("baseline")
	return cmd
}
