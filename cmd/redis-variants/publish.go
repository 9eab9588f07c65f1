package main

import (
	"github.com/spf13/cobra"

	"github.com/redis-variants/redis-variants/pipeline"
	"github.com/redis-variants/redis-variants/publish"
)

func newCmdPublish(g *globals) *cobra.Command {
	o := &pipeline.PublishOptions{}
	cmd := &cobra.Command{
		Use:   "publish",
		Short: "Push the ranked, verified images to a registry with their evidence attached",
		Long: `Push a run's ranked variant images from Docker Engine to an OCI registry.

Each image is tagged <repo>:<redis-version>-<variant>; the best verified
variant under --runtime also gets <redis-version>-best, and for each x86-64
level some image needs (label io.redis-variants.isa.level), the best image a
CPU of that level can run gets <redis-version>-best-<level> (e.g.
7.0.15-best-v3; native builds get no level tag). Labels in the image config
and annotations on the manifest carry the variant spec and ID, the score and
interval against each reference, the runtime and CPU model measured on, the
verify summary and the sha256 of report.json/report.md. Layers are pushed
as they are.

Only variants that passed verification are published; references never
are. Refused variants are listed with the reason. Every image is uploaded by
digest and read back before any tag is written; what was pushed is recorded
in the run's published.json.

The registry is the global --registry (default 127.0.0.1:5000, the local
registry set-up starts) unless --to names another. Credentials come from the
Docker config (~/.docker/config.json and its credential helpers). Local
registries (localhost, 127.0.0.0/8) are spoken to over plain HTTP; others
over HTTPS unless --insecure or an http:// prefix.`,
		Example: `  redis-variants publish --dry-run
  redis-variants publish --to ghcr.io/acme --top 3
  redis-variants publish --run runs/20261129-223300 --only gcc-o3-native --runtime bridge`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return pipeline.Publish(cmd.Context(), config(cmd, g), *o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.To, "to", "", "registry to push to (host[:port][/namespace]; default: the global --registry)")
	f.StringVar(&o.Repo, "repo", publish.DefaultRepo, "repository name under the registry")
	f.IntVar(&o.Top, "top", 0, "publish only the K best verified variants (0 = all)")
	f.StringSliceVar(&o.Only, "only", nil, "publish only this variant (repeatable, or comma-separated)")
	f.StringVar(&o.Runtime, "runtime", "host", "runtime configuration whose ranking decides the order and the best tags")
	f.BoolVar(&o.DryRun, "dry-run", false, "print what would be pushed (tags, annotations) and push nothing")
	f.BoolVar(&o.Insecure, "insecure", false, "use plain HTTP for a registry that is not local")
	f.StringVar(&o.Sign, "sign", "", "sign each pushed image and its results artifact with this private key before any tag (cosign's format, its password in COSIGN_PASSWORD; redis-variants keygen or cosign generate-key-pair writes one)")
	f.StringVar(&o.LayerCache, "layer-cache", "", "keep compressed layers in this folder between publications (default: a temporary folder)")
	return cmd
}
