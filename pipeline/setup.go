package pipeline

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/redis-variants/redis-variants/doctor"
	"github.com/redis-variants/redis-variants/sources"
)

// Fetch fills the source cache with every source the variants file names,
// one line per source on c.Out; a source that cannot be had does not stop
// the others.
func Fetch(ctx context.Context, c Config) error {
	plan, err := c.Plan()
	if err != nil {
		return err
	}
	cache := sources.New(c.SourcesDir())
	names := slices.Sorted(maps.Keys(plan.Sources))
	failed := 0
	for _, n := range names {
		e, err := cache.Fetch(ctx, plan.Sources[n])
		if err != nil {
			failed++
			fmt.Fprintln(c.Err, err)
			continue
		}
		fmt.Fprintf(c.Out, "%-14s sha256:%s  %s\n", n, e.SHA256, e.From)
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d sources could not be fetched", failed, len(names))
	}
	return nil
}

// Doctor checks every part the tool needs (against the base images the
// variants file uses, debian:bookworm-slim when it cannot be read) and
// prints the table on c.Out; it fails when a required check does.
func Doctor(ctx context.Context, c Config, minFreeMB uint64) error {
	o := doctor.Options{Registry: c.Registry, BuildKit: c.BuildKit, SourcesDir: c.SourcesDir(), StateDir: c.State, MinFreeMB: minFreeMB}
	plan, err := c.Plan()
	if err == nil {
		o.Plan, o.BaseImages = plan, plan.BaseImages()
	} else {
		fmt.Fprintln(c.Err, err)
	}
	if len(o.BaseImages) == 0 {
		o.BaseImages = []string{"debian:bookworm-slim"}
	}
	cs := doctor.Run(ctx, o)
	doctor.Print(c.Out, cs)
	if n := doctor.Failed(cs); n > 0 {
		return fmt.Errorf("%d required checks failed", n)
	}
	if err != nil {
		return fmt.Errorf("the variants file: %w", err)
	}
	return nil
}
