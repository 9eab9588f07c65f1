package main

import (
	"bytes"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/redis-variants/redis-variants/history"
	"github.com/redis-variants/redis-variants/results"
)

// historyOptions are the flags of `redis-variants history`.
type historyOptions struct {
	By        string
	Runtime   string
	Reference string
	HTML      string
	CSV       string
	NoRuns    bool
}

func newCmdHistory(g *globals) *cobra.Command {
	o := &historyOptions{}
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

Reads every run folder under --runs plus the folders given. When a variant
was measured on the same CPU in several runs, the latest run counts. A run
that cannot be read is reported and skipped.

The Markdown table goes to stdout; --html writes a self-contained page with
an SVG chart, --csv one line per cell ("-" for stdout instead of Markdown).`,
		Example: `  redis-variants history
  redis-variants history --by compiler --html history.html
  redis-variants history --no-runs ci-results/xeon-run ci-results/epyc-run --csv -`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runHistory(cmd, g, o, args)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.By, "by", history.ByAllocator, "columns: allocator, compiler, opt or variant")
	f.StringVar(&o.Runtime, "runtime", "host", "runtime configuration whose scores are compared")
	f.StringVar(&o.Reference, "reference", "", "reference the scores are against (default: each run's distro-package reference)")
	f.StringVar(&o.HTML, "html", "", "also write a self-contained HTML page with an SVG chart to this file")
	f.StringVar(&o.CSV, "csv", "", `also write CSV to this file ("-" = stdout, instead of the Markdown table)`)
	f.BoolVar(&o.NoRuns, "no-runs", false, "read only the folders given, not every run under --runs")
	return cmd
}

func runHistory(cmd *cobra.Command, g *globals, o *historyOptions, args []string) error {
	var dirs []string
	if !o.NoRuns {
		found, err := history.RunDirs(g.Runs)
		if err != nil {
			return fmt.Errorf("listing runs under %s: %w", g.Runs, err)
		}
		dirs = found
	}
	dirs = append(dirs, args...)
	if g.RunDir != "" {
		dirs = append(dirs, g.RunDir)
	}
	if len(dirs) == 0 {
		return fmt.Errorf("no run folders under %s and none given", g.Runs)
	}
	opt := history.Options{Runtime: o.Runtime, Reference: o.Reference, By: o.By}
	rs, warnings, err := history.Load(dirs, opt)
	for _, w := range warnings {
		fmt.Fprintf(cmd.ErrOrStderr(), "warning: %s\n", w)
	}
	if err != nil {
		return err
	}
	t, err := history.Build(rs, opt)
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	if o.CSV == "-" {
		return t.CSV(out)
	}
	if err := t.Markdown(out); err != nil {
		return err
	}
	if o.CSV != "" {
		var b bytes.Buffer
		if err := t.CSV(&b); err != nil {
			return err
		}
		if err := results.WriteFile(o.CSV, b.Bytes()); err != nil {
			return err
		}
	}
	if o.HTML != "" {
		var b bytes.Buffer
		if err := t.HTML(&b); err != nil {
			return err
		}
		if err := results.WriteFile(o.HTML, b.Bytes()); err != nil {
			return err
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "wrote %s\n", o.HTML)
	}
	return nil
}
