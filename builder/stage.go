package builder

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/redis-variants/redis-variants/dockerfiles"
	"github.com/redis-variants/redis-variants/progress"
	"github.com/redis-variants/redis-variants/results"
	"github.com/redis-variants/redis-variants/variants"
)

// Interface makes one entry's image. It never fails outright: the Result
// says what went wrong. *Builder is the BuildKit-backed implementation; the
// wrappers below add what every run needs around any Interface (a job
// limit, skipping images that are up to date, recording each result in the
// run folder), as ko's build package wraps its builders.
type Interface interface {
	Build(ctx context.Context, v variants.Variant) Result
}

var (
	_ Interface = (*Builder)(nil)
	_ Interface = (*limiter)(nil)
	_ Interface = (*upToDate)(nil)
	_ Interface = (*recorder)(nil)
)

// All builds vs through b, each in its own goroutine (bound them with
// Limit), and returns the results of those that ran, in vs's order. A
// failed entry does not stop the others. The error is a *FailedError when
// some failed, or the context's error when interrupted.
//
// A layout draw (DrawOf set) starts once its spec's build has ended: the
// draws share the spec's compile through BuildKit's cache, and a draw
// started beside the spec compiles everything again (a clang full-LTO
// draw took 4m52s that way, against about 20 s from the cache).
func All(ctx context.Context, b Interface, vs []variants.Variant) ([]Result, error) {
	out := make([]Result, len(vs))
	done := make([]bool, len(vs))
	specDone := map[string]chan struct{}{}
	for _, v := range vs {
		if v.DrawOf == "" {
			specDone[v.Name] = make(chan struct{})
		}
	}
	var g errgroup.Group
	for i, v := range vs {
		g.Go(func() error {
			if ch, ok := specDone[v.Name]; ok {
				defer close(ch)
			}
			if ch, ok := specDone[v.DrawOf]; ok && v.DrawOf != "" {
				select {
				case <-ch:
				case <-ctx.Done():
				}
			}
			if ctx.Err() != nil {
				return nil
			}
			out[i], done[i] = b.Build(ctx, v), true
			return nil
		})
	}
	g.Wait()
	var res []Result
	var failed []string
	for i := range vs {
		if !done[i] {
			continue
		}
		res = append(res, out[i])
		if out[i].Status == StatusFailed {
			failed = append(failed, vs[i].Name)
		}
	}
	if err := ctx.Err(); err != nil {
		return res, fmt.Errorf("build interrupted after %d of %d variants: %w", len(res), len(vs), err)
	}
	if len(failed) > 0 {
		return res, &FailedError{Failed: failed, Total: len(vs)}
	}
	return res, nil
}

// Limit lets at most n builds of next run at once (n < 1: one).
func Limit(next Interface, n int) Interface {
	return &limiter{next: next, sem: make(chan struct{}, max(n, 1))}
}

type limiter struct {
	next Interface
	sem  chan struct{}
}

func (l *limiter) Build(ctx context.Context, v variants.Variant) Result {
	select {
	case l.sem <- struct{}{}:
	case <-ctx.Done():
		return Result{Variant: v, Image: ImageRef(v), Status: StatusFailed, Error: fmt.Sprintf("building variant %q: interrupted while waiting for a build slot: %v", v.Name, ctx.Err())}
	}
	defer func() { <-l.sem }()
	return l.next.Build(ctx, v)
}

// SkipUpToDate answers for an entry whose image is already in b's Docker
// Engine with the same variant ID and recipe digest, and agrees with the
// newest earlier result, without building it; other entries go to next.
// Entries pulled first (image references, official ones) always go to
// next: a registry may have the image by now.
func SkipUpToDate(b *Builder, next Interface) Interface {
	return &upToDate{b: b, next: next}
}

type upToDate struct {
	b    *Builder
	next Interface
}

func (u *upToDate) Build(ctx context.Context, v variants.Variant) Result {
	b := u.b
	if v.Pulls() && (v.Kind == variants.KindImage || !b.opt.NoPull) || b.opt.PushAs[v.Name] != "" {
		return u.next.Build(ctx, v)
	}
	if r, ok := b.current(ctx, v, time.Now()); ok {
		return r
	}
	return u.next.Build(ctx, v)
}

// current is v's result without building it, when its image is already
// in the Docker Engine with v's variant ID and recipe digest and agrees
// with the newest earlier result (false: it has to be built). Both the
// skipper above and an official reference's rebuild (when no registry
// has its image) ask it, so a recipe rebuilt once is not rebuilt, under
// a new image ID, on every run.
func (b *Builder) current(ctx context.Context, v variants.Variant, start time.Time) (Result, bool) {
	rec, err := dockerfiles.Render(v, b.opt.Recipe)
	if err != nil {
		return Result{}, false // the build says what is wrong
	}
	r := Result{Variant: v, Image: ImageRef(v), Log: b.opt.Run.Path("logs", v.Name+".log"),
		Target: rec.Target, Recipe: rec.BuildArgs["RECIPE_DIGEST"]}
	labels, err := b.opt.Engine.ImageLabels(ctx, r.Image)
	if err != nil || labels["io.redis-variants.id"] != v.ID || labels["io.redis-variants.recipe"] != r.Recipe {
		return Result{}, false
	}
	id, err := b.opt.Engine.ImageID(ctx, r.Image)
	if err != nil {
		return Result{}, false
	}
	prev, found := b.previous(v.Name)
	if found && (prev.Status != StatusOK || prev.Variant.ID != v.ID || prev.ConfigDigest != id) {
		return Result{}, false
	}
	r.Status, r.UpToDate, r.ConfigDigest, r.Labels = StatusOK, true, id, labels
	r.Origin, r.Server = OriginBuilt, serverPath(r.Target)
	r.Size, _ = b.opt.Engine.ImageSize(ctx, r.Image)
	if found {
		r.CachedSteps, r.TotalSteps, r.BuildInfo = prev.TotalSteps, prev.TotalSteps, prev.BuildInfo
	}
	if r.BuildInfo == nil {
		if info, err := b.opt.Engine.CopyFileFromImage(ctx, r.Image, dockerfiles.BuildInfoPath); err == nil && json.Valid(info) {
			r.BuildInfo = json.RawMessage(info)
		}
	}
	writeLog(r.Log, fmt.Sprintf("uptodate: %s is in Docker Engine as %s with variant ID %s and recipe %s; nothing to build\n",
		r.Image, r.ConfigDigest, v.ID, r.Recipe))
	r.Duration = time.Since(start)
	r.Finished = time.Now().UTC()
	return r, true
}

// Record writes every result of next to run's builds/<name>.json the
// moment it is known (atomically), and prints its one line on out (nil:
// nothing; a failure is printed in every mode). A result that cannot be
// written becomes a failure.
func Record(run *results.Run, out *progress.Printer, next Interface) Interface {
	return &recorder{run: run, out: out, next: next}
}

type recorder struct {
	run  *results.Run
	out  *progress.Printer
	next Interface
}

func (rc *recorder) Build(ctx context.Context, v variants.Variant) Result {
	r := rc.next.Build(ctx, v)
	if err := rc.run.WriteJSON(filepath.Join("builds", v.Name+".json"), r); err != nil {
		r.Status, r.Error = StatusFailed, err.Error()
	}
	if r.Status == StatusFailed {
		rc.out.Failure("[%s] %s", v.Name, summary(r))
	} else {
		rc.out.Println("[%s] %s", v.Name, summary(r))
	}
	return r
}
