package main

import (
	"github.com/spf13/cobra"

	"github.com/redis-variants/redis-variants/pipeline"
)

func newCmdFetch(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "fetch",
		Short: "Fill the content-addressed source cache with every source the variants file names",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return pipeline.Fetch(cmd.Context(), config(cmd, g))
		},
	}
}
