package main

import (
	"fmt"
	"io"

	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/redis-variants/redis-variants/variants"
)

// experiment is one variants file of the experiments folder.
type experiment struct {
	File string
	Plan *variants.Plan
}

// loadExperiments reads every variants file in dir that declares an
// experiment, ordered by experiment number (unnumbered first), then file.
func loadExperiments(dir string) ([]experiment, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no variants files in %s (the experiments folder: --dir)", dir)
	}
	var out []experiment
	for _, f := range files {
		p, err := variants.Load(f)
		if err != nil {
			return nil, fmt.Errorf("loading experiment %s: %w", f, err)
		}
		if p.Experiment != nil {
			out = append(out, experiment{File: f, Plan: p})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Plan.Experiment.Number < out[j].Plan.Experiment.Number })
	return out, nil
}

// findExperiment picks an experiment by number, file name (with or
// without .yaml) or path.
func findExperiment(exps []experiment, name string) (experiment, error) {
	n, numErr := strconv.Atoi(name)
	var names []string
	for _, e := range exps {
		base := strings.TrimSuffix(filepath.Base(e.File), ".yaml")
		if numErr == nil && e.Plan.Experiment.Number == n && n > 0 || base == name || e.File == name || filepath.Base(e.File) == name {
			return e, nil
		}
		names = append(names, base)
	}
	return experiment{}, fmt.Errorf("no experiment %q (have %s, or their numbers)", name, strings.Join(names, ", "))
}

func writeExperiments(w io.Writer, exps []experiment) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tFILE\tTITLE\tIMAGES\tRUNTIMES\tCLAIMS")
	for _, e := range exps {
		num := "-"
		if e.Plan.Experiment.Number > 0 {
			num = strconv.Itoa(e.Plan.Experiment.Number)
		}
		var rts []string
		for _, rt := range e.Plan.Runtimes {
			rts = append(rts, rt.Name)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%d\n", num, e.File, e.Plan.Experiment.Title, len(e.Plan.All()), strings.Join(rts, ","), len(e.Plan.Experiment.Claims))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, "\nrun one with: redis-variants experiments run NUMBER|FILE (the same as run -f FILE); its report opens with the published figures beside this machine's")
	return err
}

func newCmdExperiments(g *globals) *cobra.Command {
	dir := "experiments"
	cmd := &cobra.Command{
		Use:   "experiments",
		Short: "List the published experiments the tool reproduces (experiments/*.yaml)",
		Long: `Lists each variants file of the experiments folder that declares an
experiment: section (a published measurement, its claims and the
comparison of a run that answers each). "experiments run N" runs one:
the same as run -f FILE, with run's flags.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			exps, err := loadExperiments(dir)
			if err != nil {
				return err
			}
			return writeExperiments(cmd.OutOrStdout(), exps)
		},
	}
	cmd.PersistentFlags().StringVar(&dir, "dir", "experiments", "the experiments folder")
	run := newCmdRun(g)
	run.Use = "run NUMBER|FILE"
	run.Short = "Run one experiment (run -f experiments/FILE.yaml)"
	run.Args = cobra.ExactArgs(1)
	inner := run.RunE
	run.RunE = func(cmd *cobra.Command, args []string) error {
		exps, err := loadExperiments(dir)
		if err != nil {
			return err
		}
		e, err := findExperiment(exps, args[0])
		if err != nil {
			return err
		}
		g.File = e.File
		fmt.Fprintf(cmd.ErrOrStderr(), "experiment %s: %s\n", e.File, e.Plan.Experiment.Title)
		return inner(cmd, nil)
	}
	cmd.AddCommand(run)
	return cmd
}
