package pipeline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/redis-variants/redis-variants/builder"
	"github.com/redis-variants/redis-variants/results"
	"github.com/redis-variants/redis-variants/variants"
)

// SeedOfficial is used by scripts/setup.sh on machines that reach no
// registry: it rebuilds the official references' recipes (only: these
// names) and pushes each to the local registry under Docker Hub's name
// (library/redis:7.0.15), so that `redis:7.0.15` resolves through Docker
// Engine's and BuildKit's mirror exactly as it would online, and the pull
// path runs for real.
func SeedOfficial(ctx context.Context, c Config, only []string) error {
	errw := c.Err
	_, vs, err := c.Select(only)
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
		local := c.Registry + "/" + ref.Context().RepositoryStr() + ":" + ref.Identifier()
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
	tmp, err := os.MkdirTemp(c.State, "seed-official-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	run, err := results.Open(filepath.Join(tmp, "run"))
	if err != nil {
		return err
	}
	res, err := buildWith(ctx, c, errw, "seed-official", builder.Options{Run: run, RunsRoot: tmp, NoPull: true, PushAs: push, Progress: nil}, todo)
	for _, r := range res {
		if r.Status != builder.StatusOK {
			continue
		}
		lr, _ := name.ParseReference(push[r.Variant.Name], name.Insecure)
		d, herr := remote.Head(lr, remote.WithContext(ctx))
		if herr != nil {
			return fmt.Errorf("seed-official: reading back %s: %w", lr, herr)
		}
		fmt.Fprintf(c.Out, "%s@%s (the %s recipe, rebuilt)\n", push[r.Variant.Name], d.Digest, strings.TrimSpace(r.Variant.Recipe))
	}
	return err
}
