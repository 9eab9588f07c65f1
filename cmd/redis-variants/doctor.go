package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/redis-variants/redis-variants/doctor"
	"github.com/redis-variants/redis-variants/variants"
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
			o := doctor.Options{Registry: g.Registry, BuildKit: g.BuildKit, SourcesDir: config(cmd, g).SourcesDir(), StateDir: g.State, MinFreeMB: minFree}
			plan, err := variants.Load(g.File)
			if err != nil {
				fmt.Fprintln(cmd.ErrOrStderr(), err)
			} else {
				o.Plan = plan
				seen := map[string]bool{}
				for _, v := range plan.All() {
					if !seen[v.Base] {
						seen[v.Base] = true
						o.BaseImages = append(o.BaseImages, v.Base)
					}
				}
			}
			if len(o.BaseImages) == 0 {
				o.BaseImages = []string{"debian:bookworm-slim"}
			}
			cs := doctor.Run(cmd.Context(), o)
			doctor.Print(cmd.OutOrStdout(), cs)
			if n := doctor.Failed(cs); n > 0 || err != nil {
				return fmt.Errorf("%d required checks failed", n)
			}
			return nil
		},
	}
	cmd.Flags().Uint64Var(&minFree, "min-free-mb", 8000, "free disk the main job needs")
	return cmd
}
