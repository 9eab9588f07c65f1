package main

import (
	"github.com/spf13/cobra"

	"github.com/redis-variants/redis-variants/pipeline"
)

func newCmdProfiles(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "profiles REGISTRY/REPO...",
		Short: "List the trained profiles stored in registry repositories",
		Long: `List the PGO profiles that builds stored with --profiles-to: each an OCI
artifact tagged profile-pgo-<key>, the key being the sha256 of everything the
profile depends on (the variant's spec with its training, the recipe up to
the training, the load generator's sha256). build --profiles-from REPO builds
a PGO variant of the same key with the stored profile instead of training.`,
		Example: `  redis-variants profiles 127.0.0.1:5000/redis-variants-profiles`,
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return pipeline.Profiles(cmd.Context(), config(cmd, g), args)
		},
	}
}
