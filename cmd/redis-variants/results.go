package main

import (
	"github.com/spf13/cobra"

	"github.com/redis-variants/redis-variants/pipeline"
)

func newCmdResults(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "results",
		Short: "Work with the results artifacts publish attaches to images in a registry",
		Args:  cobra.NoArgs,
	}
	o := &pipeline.ResultsPullOptions{}
	pull := &cobra.Command{
		Use:   "pull REF",
		Short: "Bring a results artifact back from a registry as a run folder",
		Long: `Bring back the results a publication attached to an image: the ranking,
reports, trials, build and verify records, machine description and plan,
as a run folder that rank, history, compare and publish read like any other.

REF is the artifact itself (REGISTRY/REPO@sha256:...) or an image it is
attached to (a tag or digest): then the newest results artifact attached to
that image. The results travel as an OCI artifact of type
application/vnd.redis-variants.results.v1 whose subject is the image; on
registries without the OCI referrers API they are found through the
referrers tag schema (tag sha256-<image digest>).

The folder is <runs>/<run ID> unless --into names another; an existing
folder is never overwritten. Its path is printed on stdout.`,
		Example: `  redis-variants results pull 127.0.0.1:5000/redis-variants:7.0.15-best
  redis-variants results pull ghcr.io/acme/redis-variants@sha256:... --into /tmp/epyc-run`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return pipeline.PullResults(cmd.Context(), config(cmd, g), args[0], *o)
		},
	}
	pull.Flags().StringVar(&o.Into, "into", "", "run folder to write (default: <runs>/<run ID>)")
	pull.Flags().BoolVar(&o.Insecure, "insecure", false, "use plain HTTP for a registry that is not local")
	cmd.AddCommand(pull)
	return cmd
}
