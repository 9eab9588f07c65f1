package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/spf13/cobra"

	"github.com/redis-variants/redis-variants/builder"
	"github.com/redis-variants/redis-variants/results"
	"github.com/redis-variants/redis-variants/variants"
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
			ctx := cmd.Context()
			errw := cmd.ErrOrStderr()
			plan, err := loadPlan(errw, g)
			if err != nil {
				return err
			}
			vs, err := plan.Select(only)
			if err != nil {
				return err
			}
			push := map[string]string{}
			var todo []variants.Variant
			for _, v := range vs {
				if v.Kind != variants.KindOfficial || v.Image == "" {
					continue
				}
				ref, err := name.ParseReference(v.Image)
				if err != nil || ref.Context().RegistryStr() != name.DefaultRegistry {
					continue // only Docker Hub names have a mirror here
				}
				local := g.Registry + "/" + ref.Context().RepositoryStr() + ":" + ref.Identifier()
				lr, err := name.ParseReference(local, name.Insecure)
				if err != nil {
					return err
				}
				if d, err := remote.Head(lr, remote.WithContext(ctx)); err == nil {
					fmt.Fprintf(errw, "seed-official: %s is in the local registry (%s)\n", local, d.Digest)
					continue
				}
				push[v.Name] = local
				todo = append(todo, v)
			}
			if len(todo) == 0 {
				return nil
			}
			tmp, err := os.MkdirTemp(g.State, "seed-official-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(tmp)
			run, err := results.Open(filepath.Join(tmp, "run"))
			if err != nil {
				return err
			}
			res, err := buildWith(ctx, g, errw, "seed-official", builder.Options{Run: run, RunsRoot: tmp, NoPull: true, PushAs: push, Progress: errw, Mode: "quiet"}, todo)
			for _, r := range res {
				if r.Status != builder.StatusOK {
					continue
				}
				lr, _ := name.ParseReference(push[r.Variant.Name], name.Insecure)
				d, herr := remote.Head(lr, remote.WithContext(ctx))
				if herr != nil {
					return fmt.Errorf("seed-official: reading back %s: %w", lr, herr)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s@%s (the %s recipe, rebuilt)\n", push[r.Variant.Name], d.Digest, strings.TrimSpace(r.Variant.Recipe))
			}
			return err
		},
	}
	cmd.Flags().StringSliceVar(&only, "only", nil, "references to seed (default: every official reference with a Docker Hub image)")
	return cmd
}
