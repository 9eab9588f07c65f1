package main

import (
	"github.com/redis-variants/redis-variants/pipeline"
	"github.com/spf13/cobra"
)

func newCmdCompare(g *globals) *cobra.Command {
	var runtime string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "compare RUN_A RUN_B",
		Short: "Check that two independent runs agree: per-image z between their scores, Kendall τ of their orders",
		Long: `Compare the primary scores (each image against the primary reference,
co-scheduled) of two runs' ranking.json: for each image the z of the
difference between the runs (|z| < 2 is agreement within the runs' own
errors), and Kendall's τ between the two orders, over the pairs of images
whose 95% intervals separate in both runs and over every pair.`,
		Example: "  redis-variants compare runs/20261201-120000 runs/20261201-124500",
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return pipeline.Compare(config(cmd, g), args[0], args[1], runtime, asJSON)
		},
	}
	cmd.Flags().StringVar(&runtime, "runtime", "", "runtime to compare (default: run A's first ranked runtime)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the comparison as JSON")
	return cmd
}
