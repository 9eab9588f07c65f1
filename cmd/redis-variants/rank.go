package main

import (
	"github.com/spf13/cobra"

	"github.com/redis-variants/redis-variants/pipeline"
)

func newCmdRank(g *globals) *cobra.Command {
	var primary string
	cmd := &cobra.Command{
		Use:   "rank",
		Short: "Rank a run's benchmark trials and write report.md, .csv, .json and .html",
		Long: `Read every trials/**/*.json of a run (--run, default the latest under --runs),
rank the images against the references with the statistics described in
the report (medians with distribution-free intervals, Mann–Whitney tests
with Holm correction, geometric-mean scores with bootstrap intervals; "tie"
whenever the data cannot separate two images), and write ranking.json,
report.md, report.csv, report.json and report.html into the run folder.
Nothing is re-run; an unreadable trial file is reported and left out.`,
		Example: `  redis-variants rank
  redis-variants rank --run runs/20261129-223300 --primary official`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return pipeline.Rank(cmd.Context(), config(cmd, g), primary)
		},
	}
	cmd.Flags().StringVar(&primary, "primary", "", "reference the ranks are computed against (default: the plan's first reference)")
	return cmd
}
