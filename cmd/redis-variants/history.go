package main

import (
	"github.com/spf13/cobra"

	"github.com/redis-variants/redis-variants/history"
	"github.com/redis-variants/redis-variants/pipeline"
)

func newCmdHistory(g *globals) *cobra.Command {
	o := &pipeline.HistoryOptions{}
	cmd := &cobra.Command{
		Use:   "history [RUN_DIR...]",
		Short: "Merge results from several runs and machines into one table and chart",
		Long: `Merge the rankings of several runs — typically from machines with different
CPU models and x86-64 levels — into one table: a row per CPU model (with its
x86-64 level), a column per allocator (or compiler, -O level, variant: --by),
and in each cell the score against the stock reference (Debian's
redis-server package, measured in the same run on the same machine) with its
interval, for the best variant of that column on that CPU. Bold is the best
on the CPU, "=" marks a cell whose interval overlaps the best's, "≈" one that
cannot be told from the reference.

Reads every run folder under --runs plus the folders given, and with --from
every results artifact publish attached to images in a registry repository
(one per run: a run already here is read from its local folder). When a variant
was measured on the same CPU in several runs, the latest run counts. A run
that cannot be read is reported and skipped.

The Markdown table goes to stdout; --html writes a self-contained page with
an SVG chart, --csv one line per cell ("-" for stdout instead of Markdown).`,
		Example: `  redis-variants history
  redis-variants history --by compiler --html history.html
  redis-variants history --from 127.0.0.1:5000/redis-variants --html history.html
  redis-variants history --no-runs ci-results/xeon-run ci-results/epyc-run --csv -
  redis-variants history --merge --no-runs --from 127.0.0.1:5000/redis-variants`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return pipeline.History(cmd.Context(), config(cmd, g), *o, args)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.By, "by", history.ByAllocator, "columns: allocator, compiler, opt or variant")
	f.StringVar(&o.Metric, "metric", history.MetricSpeed, "what a cell compares: speed (the score) or memory (the memory workload's RSS after the churn, as the reference's over the variant's)")
	f.StringVar(&o.Runtime, "runtime", "host", "runtime configuration whose scores are compared")
	f.StringVar(&o.Reference, "reference", "", "reference the scores are against (default: each run's distro-package reference)")
	f.StringVar(&o.HTML, "html", "", "also write a self-contained HTML page with an SVG chart to this file")
	f.StringVar(&o.CSV, "csv", "", `also write CSV to this file ("-" = stdout, instead of the Markdown table)`)
	f.BoolVar(&o.NoRuns, "no-runs", false, "read only the folders given, not every run under --runs")
	f.StringArrayVar(&o.From, "from", nil, "also merge every results artifact in this registry repository (REGISTRY/REPO, repeatable)")
	f.BoolVar(&o.Merge, "merge", false, "merge the latest run of each shard of a sharded file (runs made with --shard i/n) into one ranking, the run effect between runners measured on the references every shard ran")
	f.BoolVar(&o.Insecure, "insecure", false, "use plain HTTP for a --from registry that is not local")
	return cmd
}
