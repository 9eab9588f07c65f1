package main

import (
	"github.com/spf13/cobra"

	"github.com/redis-variants/redis-variants/pipeline"
)

func newCmdDoctor(g *globals) *cobra.Command {
	var minFree uint64
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check every part the tool needs and say how to fix what fails",
		Long: `Checks Docker Engine (DOCKER_HOST), buildkitd (BUILDKIT_HOST) and its workers,
the registry (--registry), the base images through BuildKit, the source cache,
the CPU (model, x86-64 level), kernel, cgroup version and free disk.
Exits non-zero when the main job could not run.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return pipeline.Doctor(cmd.Context(), config(cmd, g), minFree)
		},
	}
	cmd.Flags().Uint64Var(&minFree, "min-free-mb", 8000, "free disk the main job needs")
	return cmd
}
