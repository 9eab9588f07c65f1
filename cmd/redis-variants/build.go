package main

import (
	"github.com/spf13/cobra"

	"github.com/redis-variants/redis-variants/pipeline"
)

func newCmdBuild(g *globals) *cobra.Command {
	o := &pipeline.BuildOptions{}
	cmd := &cobra.Command{
		Use:   "build [--only NAME...] [--jobs N] [--push REGISTRY] [--oci DIR]",
		Short: "Build every variant and reference image with BuildKit and load them into Docker Engine",
		Long: `Build the images of the variants file with BuildKit (BUILDKIT_HOST, default
unix:///run/buildkit/buildkitd.sock), load each into Docker Engine as
redis-variants/<name>:<id>, and record one result per variant in
<run>/builds/<name>.json with its full log in <run>/logs/<name>.log.
A variant whose image is already in Docker Engine with the same ID and
recipe is "uptodate" and not built again. A failed variant does not stop
the others; the command fails saying how many failed.

--cache-to REPO writes each entry's BuildKit cache (mode max: every stage)
to the registry as REPO:buildcache-<name>; --cache-from REPO reads it, so a
buildkitd with an empty cache builds from what another one built. The
global --builder ADDR[,jobs=N] (repeatable, or RV_BUILDERS) spreads the
entries over several buildkitd daemons; a build whose builder stops
answering is retried on another.`,
		Example: `  redis-variants build --only 'gcc-*' --jobs 2
  redis-variants build --cache-to 127.0.0.1:5000/redis-variants-cache
  redis-variants build --cache-from 127.0.0.1:5000/redis-variants-cache --builder unix:///run/a.sock --builder tcp://b:1234,jobs=2`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return pipeline.Build(cmd.Context(), config(cmd, g), *o)
		},
	}
	f := cmd.Flags()
	f.StringSliceVar(&o.Only, "only", nil, "build only these variants or references (names or globs; repeatable, comma separated)")
	f.IntVar(&o.Jobs, "jobs", 1, "variants built at once (each runs make -j2)")
	f.StringVar(&o.Push, "push", "", "also push every image to this registry (host:port)")
	f.BoolVar(&o.Attest, "attest", false, "push each image (with --push) as an index carrying BuildKit's SLSA provenance (mode max) and SPDX SBOMs of the image and its build stage, from redis-variants-sbom (the allocator linked, the source archive's sha256, the bundled dependencies, the packages)")
	f.StringVar(&o.OCI, "oci", "", "also export every image as an OCI layout into DIR/<name>")
	f.BoolVar(&o.Force, "force", false, "solve even when an image is up to date")
	f.StringVar(&o.CacheTo, "cache-to", "", "write each build's BuildKit cache (mode max) to this registry repository, tag buildcache-<name>")
	f.StringArrayVar(&o.CacheFrom, "cache-from", nil, "read BuildKit's cache from this registry repository (repeatable)")
	f.StringVar(&o.ProfilesTo, "profiles-to", "", "store each PGO build's trained profile in this registry repository (an OCI artifact tagged by what the profile depends on)")
	f.StringArrayVar(&o.ProfilesFrom, "profiles-from", nil, "build PGO variants with a profile stored in this registry repository, when it has one of the same key, instead of training (repeatable)")
	return cmd
}
