package main

import (
	"github.com/spf13/cobra"

	"github.com/redis-variants/redis-variants/pipeline"
	"github.com/redis-variants/redis-variants/verify"
)

func newCmdVerify(g *globals) *cobra.Command {
	o := &pipeline.VerifyOptions{}
	cmd := &cobra.Command{
		Use:   "verify [--run DIR] [--profile quick|full] [--only NAME...]",
		Short: "Run Redis's test suite and checks against every built image",
		Long: `Verify every built variant of a run (the latest by default): Redis's own
test suite inside the build (BuildKit test stage; quick or full profile),
known failures reported as known, other failures retried once on their own;
checks on the running image (PING, SET/GET, version, allocator, compiler and
flags recorded in the binary, user, labels; an ISA gate first); and a few
units of the suite run against the image from outside. Each result is
written to <run>/verify/<name>.json; a variant that fails is marked failed
and is never benchmarked or published. A pass is kept (.state/cache/verify)
and reused, saying from which run, while the image ID, the spec, the
recipe, the suite (profile, units, known failures, sources), the CPU flags
and the checks' version are unchanged; --again verifies anyway.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return pipeline.Verify(cmd.Context(), config(cmd, g), *o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.Profile, "suite", verify.ProfileQuick, "test-suite profile: quick (a few minutes per variant) or full (everything, for releases)")
	f.StringVar(&o.Profile, "profile", verify.ProfileQuick, "test-suite profile")
	f.MarkDeprecated("profile", "use --suite (--profile names a benchmark profile everywhere else)")
	f.StringSliceVar(&o.Only, "only", nil, "verify only these variants or references (names or globs)")
	f.StringSliceVar(&o.Units, "units", nil, "run only these test units in the build (overrides the profile's list)")
	f.BoolVar(&o.NoExternal, "no-external", false, "skip the suite run against the running image")
	f.BoolVar(&o.Again, "again", false, "verify every image again, even one whose proof is kept from an earlier run")
	return cmd
}
