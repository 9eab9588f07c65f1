package main

import (
	"github.com/spf13/cobra"

	"github.com/redis-variants/redis-variants/pipeline"
)

// newCmdSeedOfficial is used by scripts/setup.sh on machines that reach
// no registry: it rebuilds the official reference's recipe and pushes it
// to the local registry under Docker Hub's name (library/redis:7.0.15), so
// that `redis:7.0.15` resolves through Docker Engine's and BuildKit's
// mirror exactly as it would online, and the pull path runs for real.
func newCmdSeedOfficial(g *globals) *cobra.Command {
	var only []string
	cmd := &cobra.Command{
		Use:    "seed-official [--only NAME]",
		Short:  "Place the rebuilt official images in the local registry as Docker Hub's library/redis (used by set-up)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return pipeline.SeedOfficial(cmd.Context(), config(cmd, g), only)
		},
	}
	cmd.Flags().StringSliceVar(&only, "only", nil, "references to seed (default: every official reference with a Docker Hub image)")
	return cmd
}
