package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/redis-variants/redis-variants/doctor"
)

func newCmdSmoke(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "smoke",
		Short: "Build, load, run and push a tiny image through every real part",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			res, err := doctor.Smoke(cmd.Context(), g.BuildKit, g.Registry)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "built and loaded %s, it printed %q, pushed %s (%.1fs)\n",
				res.Image, res.Output, res.Pushed, res.Elapsed.Seconds())
			return nil
		},
	}
}
