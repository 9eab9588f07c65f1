package main

import (
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/redis-variants/redis-variants/rank"
	"github.com/redis-variants/redis-variants/results"
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
			var rs [2]rank.Ranking
			for i, dir := range args {
				rk, err := (&results.Run{Dir: dir}).Ranking()
				if err != nil {
					return fmt.Errorf("%s (run `redis-variants rank --run %s`): %w", dir, dir, err)
				}
				rs[i] = *rk
			}
			rt := runtime
			if rt == "" && len(rs[0].Standings) > 0 {
				rt = rs[0].Standings[0].Runtime
			}
			ag := rank.Agree(rs[0], rs[1], rt)
			out := cmd.OutOrStdout()
			if asJSON {
				b, err := json.MarshalIndent(ag, "", "  ")
				if err != nil {
					return err
				}
				_, err = fmt.Fprintf(out, "%s\n", b)
				return err
			}
			fmt.Fprintf(out, "Runs %s (A) and %s (B) under %s, each image vs the primary reference:\n\n", filepath.Base(args[0]), filepath.Base(args[1]), rt)
			fmt.Fprintln(out, "| image | A | B | z (A vs B) |")
			fmt.Fprintln(out, "|---|---:|---:|---:|")
			for _, im := range ag.Images {
				fmt.Fprintf(out, "| `%s` | %.4f | %.4f | %+.2f |\n", im.Image, float64(im.A), float64(im.B), float64(im.Z))
			}
			fmt.Fprintf(out, "\nlargest |z|: %s; Kendall τ over the %d separated pairs: %s; over every pair: %s\n",
				f2(float64(ag.MaxAbsZ)), ag.TauPairs, f2(float64(ag.Tau)), f2(float64(ag.TauAll)))
			return nil
		},
	}
	cmd.Flags().StringVar(&runtime, "runtime", "", "runtime to compare (default: run A's first ranked runtime)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the comparison as JSON")
	return cmd
}

func f2(f float64) string {
	if math.IsNaN(f) {
		return "n/a"
	}
	return fmt.Sprintf("%.2f", f)
}
