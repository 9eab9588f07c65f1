package pipeline

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/redis-variants/redis-variants/doctor"
	"github.com/redis-variants/redis-variants/progress"
	"github.com/redis-variants/redis-variants/sources"
	"github.com/redis-variants/redis-variants/variants"
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

// fetchMissing fetches the sources the entries vs build from that the
// cache lacks (a file that names a catalogue release needs no separate
// fetch), a line each; one that cannot be had is printed as a failure
// and its entries' builds fail saying so.
func fetchMissing(ctx context.Context, c Config, p *progress.Printer, vs []variants.Variant) {
	cache := sources.New(c.SourcesDir())
	seen := map[string]bool{}
	for _, v := range vs {
		for _, src := range []variants.Source{v.Source, v.Toolchain} {
			if src.Name == "" || seen[src.Name] {
				continue
			}
			seen[src.Name] = true
			if _, err := cache.Resolve(src); err == nil {
				continue
			}
			e, err := cache.Fetch(ctx, src)
			if err != nil {
				p.Failure("%v", err)
				continue
			}
			p.Println("fetched %s (sha256:%s) from %s", src.Name, e.SHA256, e.From)
		}
	}
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
