package main

import (
	"github.com/redis-variants/redis-variants/pipeline"
	"github.com/spf13/cobra"
)

func newCmdCompare(g *globals) *cobra.Command {
	var runtime string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "compare RUN_A RUN_B [RUN...]",
		Short: "Check that independent runs agree, and merge them with a random run effect",
		Long: `Compare the primary scores (each image against the primary reference,
co-scheduled) of two or more runs' ranking.json.

For two runs: each image's z of the difference between the runs (|z| < 2
is agreement within the runs' own errors), Σz² against χ² on as many df,
and Kendall's τ between the two orders over the pairs both runs' families
separate and over every pair.

For any number: the runs merged with a random run effect (one
between-run variance for every image, DerSimonian–Laird over Cochran's Q
summed over the images), each image's merged score with its interval,
and ranks and verdicts from one family over the merged scores. Runs of
the same file on one machine kind are what this is for.`,
		Example: "  redis-variants compare runs/20261201-120000 runs/20261201-124500 runs/20261201-133000",
		Args:    cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return pipeline.Compare(config(cmd, g), args, runtime, asJSON)
		},
	}
	cmd.Flags().StringVar(&runtime, "runtime", "", "runtime to compare (default: run A's first ranked runtime)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the comparison as JSON")
	return cmd
}
