package main

import (
	"github.com/spf13/cobra"

	"github.com/redis-variants/redis-variants/pipeline"
)

func newCmdRun(g *globals) *cobra.Command {
	o := &pipeline.RunOptions{}
	cmd := &cobra.Command{
		Use:   "run [--to REGISTRY]",
		Short: "Build, verify, benchmark, rank and report in one command",
		Long: `Runs every stage on the variants file into one run folder (new, or --run DIR
to resume one): build (failed variants are recorded and skipped), verify
(failed ones are never benchmarked or published), bench (resumes from the
trials already in the folder), rank and reports, and with --to the
publish stage (as publish --to). A stage that fails for some variants does not stop the
others; the exit status is non-zero when any stage failed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return pipeline.Run(cmd.Context(), config(cmd, g), *o) },
	}
	f := cmd.Flags()
	f.StringSliceVar(&o.Only, "only", nil, "only these variants (names or globs); the references always come along, as every variant is measured against them")
	f.IntVar(&o.Jobs, "jobs", 1, "variants built at once")
	f.StringVar(&o.CacheTo, "cache-to", "", "write each build's BuildKit cache (mode max) to this registry repository")
	f.StringArrayVar(&o.CacheFrom, "cache-from", nil, "read BuildKit's cache from this registry repository (repeatable)")
	f.StringVar(&o.ProfilesTo, "profiles-to", "", "store each PGO build's trained profile in this registry repository (an OCI artifact tagged by what the profile depends on)")
	f.StringArrayVar(&o.ProfilesFrom, "profiles-from", nil, "build PGO variants with a profile stored in this registry repository, when it has one of the same key, instead of training (repeatable)")
	f.StringVar(&o.VerifyProfile, "suite", "quick", "test-suite profile of verify: quick or full")
	f.StringVar(&o.VerifyProfile, "verify-profile", "quick", "test-suite profile: quick or full")
	f.MarkDeprecated("verify-profile", "use --suite (as verify --suite)")
	f.StringVar(&o.BenchProfile, "profile", "quick", "benchmark profile")
	f.StringSliceVar(&o.Runtimes, "runtime", nil, "only these runtime configurations")
	f.StringVar(&o.Push, "to", "", "publish the verified, ranked images to this registry at the end (as publish --to)")
	f.StringVar(&o.Push, "push", "", "publish the verified, ranked images to this registry at the end")
	f.MarkDeprecated("push", "use --to (as publish --to)")
	f.StringVar(&o.Sign, "sign", "", "sign each published image and its results artifact with this private key (cosign's format; password in COSIGN_PASSWORD)")
	f.BoolVar(&o.Force, "force", false, "solve every build even when its image is up to date (BuildKit's cache still answers unchanged steps)")
	f.BoolVar(&o.NoVerify, "no-verify", false, "skip verification (images are then flagged unverified and cannot be published)")
	f.BoolVar(&o.VerifyAgain, "verify-again", false, "verify every image again, even one whose proof is kept from an earlier run")
	return cmd
}
