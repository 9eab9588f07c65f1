package main

import (
	"fmt"
	"os"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/redis-variants/redis-variants/pipeline"
	"github.com/redis-variants/redis-variants/progress"
	"github.com/redis-variants/redis-variants/solve"
	"github.com/redis-variants/redis-variants/variants"

	"github.com/spf13/cobra"
)

// commands holds one constructor per subcommand; each subcommand's file
// registers itself with register in an init function.

// globals are the flags every command shares.
type globals struct {
	File     string // variants file
	Runs     string // folder holding one folder per run
	RunDir   string // a specific run folder ("" = new or latest, per command)
	State    string // state folder: caches, daemons' data
	Registry string // local registry host:port
	BuildKit string // buildkitd address
	Builders []string
	Progress string // progress mode
	Shard    string // i/n: the part of the file this runner works on
	shard    variants.Shard
}

// config is the pipeline's Config for a command: the global flags and the
// command's own writers.
func config(cmd *cobra.Command, g *globals) pipeline.Config {
	return pipeline.Config{File: g.File, Runs: g.Runs, RunDir: g.RunDir, State: g.State, Registry: g.Registry,
		BuildKit: g.BuildKit, Builders: g.Builders, Progress: g.Progress, Shard: g.shard, Out: cmd.OutOrStdout(), Err: cmd.ErrOrStderr()}
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func newRoot() *cobra.Command {
	g := &globals{}
	root := &cobra.Command{
		Use:           "redis-variants",
		Short:         "Build, verify, benchmark, rank and publish tuned Redis images from one variants.yaml",
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(*cobra.Command, []string) (err error) {
			g.shard, err = variants.ParseShard(g.Shard)
			if err != nil {
				return fmt.Errorf("--shard: %w", err)
			}
			return nil
		},
	}
	pf := root.PersistentFlags()
	pf.StringVarP(&g.File, "file", "f", "variants.yaml", "variants file")
	pf.StringVar(&g.Runs, "runs", envOr("RV_RUNS", "runs"), "folder of run folders")
	pf.StringVar(&g.RunDir, "run", "", "run folder to use (default: a new one for build/run, the latest for later stages)")
	pf.StringVar(&g.State, "state", envOr("RV_STATE", ".state"), "state folder (source cache, daemon data)")
	pf.StringVar(&g.Registry, "registry", envOr("RV_REGISTRY", "127.0.0.1:5000"), "local registry (host:port) used as Docker Hub mirror")
	pf.StringVar(&g.Progress, "progress", envOr("RV_PROGRESS", progress.Auto), "progress on stderr: auto (tty on a terminal, else plain), tty (live lines), plain (a line per finished build, verification, tenth of the benchmark), quiet (failures only); full logs are in the run folder either way")
	pf.StringVar(&g.BuildKit, "buildkit", solve.Address(), "buildkitd address (BUILDKIT_HOST)")
	pf.StringArrayVar(&g.Builders, "builder", strings.Fields(os.Getenv("RV_BUILDERS")),
		"spread builds over this buildkitd, ADDR or ADDR,jobs=N (repeatable; RV_BUILDERS: a space-separated list); replaces --buildkit")
	pf.StringVar(&g.Shard, "shard", os.Getenv("RV_SHARD"),
		"work on part i of n of the variants file (i/n): every reference and every n-th build spec from the i-th, for a matrix spread over CI runners (RV_SHARD)")
	for _, gr := range commandGroups {
		root.AddGroup(&cobra.Group{ID: gr.id, Title: gr.title})
	}
	for _, f := range []func(*globals) *cobra.Command{
		newCmdInit, newCmdPlan, newCmdFetch, newCmdBuild, newCmdVerify, newCmdBench, newCmdRank, newCmdRun,
		newCmdPublish, newCmdResults, newCmdCompare, newCmdHistory, newCmdLoadgen, newCmdDoctor, newCmdSmoke,
		newCmdSeedBase, newCmdSeedOfficial, newCmdExperiments, newCmdProfiles, newCmdGate, newCmdKeygen, newCmdSign, newCmdVerifySignature, newCmdAttestations,
	} {
		c := f(g)
		c.GroupID = ""
		for _, gr := range commandGroups {
			if slices.Contains(gr.commands, c.Name()) {
				c.GroupID = gr.id
			}
		}
		if c.GroupID == "" {
			c.Hidden = true // plumbing: set-up and tests call it, a user need not
		}
		root.AddCommand(c)
	}
	root.Version = version()
	root.SetVersionTemplate("redis-variants {{.Version}}\n")
	return root
}

// commandGroups are the groups --help shows the commands in; a command in
// none is plumbing (fetch, smoke, profiles, seed-base, seed-official) and
// hidden from it.
var commandGroups = []struct {
	id, title string
	commands  []string
}{
	{"stages", "Run the stages:", []string{"run", "init", "plan", "build", "verify", "bench", "rank"}},
	{"release", "Publishing and release:", []string{"publish", "sign", "verify-signature", "keygen", "attestations", "gate"}},
	{"results", "Results and history:", []string{"results", "history", "compare", "experiments"}},
	{"machine", "Machine and tools:", []string{"doctor", "loadgen"}},
}

// version is the module's version and the commit it was built from (the
// build's VCS stamp: go build in a checkout records it).
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown)"
	}
	v := bi.Main.Version
	var rev, when, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			when = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = ", modified"
			}
		}
	}
	if rev != "" {
		v += fmt.Sprintf(" (commit %.12s, %s%s)", rev, when, dirty)
	}
	return v + " " + bi.GoVersion
}
