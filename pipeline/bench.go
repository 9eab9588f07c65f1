package pipeline

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/redis-variants/redis-variants/bench"
	"github.com/redis-variants/redis-variants/builder"
	"github.com/redis-variants/redis-variants/engine"
	"github.com/redis-variants/redis-variants/machine"
	"github.com/redis-variants/redis-variants/results"
	"github.com/redis-variants/redis-variants/variants"
)

// BenchOptions are the flags of `redis-variants bench`.
type BenchOptions struct {
	Profile    string
	Only       []string
	Runtimes   []string
	Trials     int
	Replicates int
	Budget     time.Duration
	Seed       int64
	// Generator runs the load (nil = bench.ExecGenerator: this binary's
	// loadgen in a child process); tests give bench.InProcess.
	Generator bench.Generator
}

// primaryOf is the plan's primary reference: its first reference.
func primaryOf(p *variants.Plan) string {
	if len(p.References) > 0 {
		return p.References[0].Name
	}
	return ""
}

// benchPlan returns the run's own plan.json when it has one, else the
// variants file's plan.
func benchPlan(c Config, run *results.Run) (*variants.Plan, error) {
	p, err := run.Plan()
	if err == nil {
		return p, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	return c.Plan()
}

// Bench benchmarks the run's built images (those whose verification did
// not fail) under the selected runtimes, holding the machine lock; an
// interrupted bench resumes from what is on disk.
func Bench(ctx context.Context, c Config, o BenchOptions) error {
	errw := c.Err
	run, err := results.Find(c.RunDir, c.Runs, "build")
	if err != nil {
		return err
	}
	unlock, err := c.holdRun(run.Dir, "bench")
	if err != nil {
		return err
	}
	defer unlock()
	plan, err := benchPlan(c, run)
	if err != nil {
		return err
	}
	prof, ok := plan.Profiles[o.Profile]
	if !ok {
		return fmt.Errorf("--profile %s: no such profile in the plan", o.Profile)
	}
	rts, err := bench.SelectRuntimes(plan.Runtimes, o.Runtimes)
	if err != nil {
		return err
	}
	images, warnings, err := benchImages(run, o.Only)
	if err != nil {
		return err
	}
	for _, w := range warnings {
		fmt.Fprintln(errw, w)
	}
	eng, err := engine.New(ctx)
	if err != nil {
		return err
	}
	defer eng.Close()
	var missing []bench.Image
	kept := images[:0]
	for _, im := range images {
		if ok, err := eng.ImageExists(ctx, im.Ref); err != nil {
			return err
		} else if !ok {
			missing = append(missing, im)
			continue
		}
		kept = append(kept, im)
	}
	for _, im := range missing {
		fmt.Fprintf(errw, "skipping %s: image %s is not in the Docker Engine (rebuild it)\n", im.Name, im.Ref)
	}
	budget := o.Budget
	p, closeP, err := c.printer()
	if err != nil {
		return err
	}
	defer closeP()
	logPath := run.Path("logs", "bench.log")
	if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
		return err
	}
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("bench log: %w", err)
	}
	defer logFile.Close()
	p.Println("benchmarking %d images (profile %s; every measurement in %s)", len(kept), prof.Name, logPath)
	sum, err := bench.Run(ctx, bench.Options{
		Run:        run,
		Engine:     eng,
		Images:     kept,
		Runtimes:   rts,
		Profile:    prof,
		Primary:    primaryOf(plan),
		Trials:     o.Trials,
		Replicates: o.Replicates,
		Budget:     budget,
		Seed:       o.Seed,
		Generator:  o.Generator,
		LockFile:   machine.LockFile(c.State),
		Log:        logFile,
		Progress:   p,
	})
	p.Println("bench: %d replicate(s) on disk, %d planned and %d stand-in(s) (%d windows, %d benchmark(s) lost, %d given up); %d of %d standalone trial(s) (%d failed); %d memory-workload server(s) measured now (%d failed); seed %d, %s",
		sum.Replicates, sum.PlannedReplicates, sum.StandIns, sum.Windows, len(sum.LostTests), len(sum.FailedReplicates), sum.Total, sum.Planned, len(sum.Failures),
		sum.MemoryDone, len(sum.MemoryFailures), sum.Seed, sum.Elapsed.Round(time.Second))
	if sum.BudgetSpent {
		p.Failure("bench: the time budget ran out before every planned trial ran; run it again to continue")
	}
	if errors.Is(err, context.Canceled) {
		return fmt.Errorf("interrupted: the %d finished trial(s) are kept in %s; run the same command again to resume", sum.Total, run.Path("trials"))
	}
	return err
}

// benchImages returns the images of a run folder's successful builds, with
// their verify status, sorted by name: what bench may measure. only, when
// not empty, keeps those names (an unknown name is an error). Builds that
// did not succeed are reported as warnings.
func benchImages(run *results.Run, only []string) ([]bench.Image, []string, error) {
	builds, _, err := results.LoadBuilds(run)
	if err != nil {
		return nil, nil, err
	}
	if len(builds) == 0 {
		return nil, nil, fmt.Errorf("no build results in %s: run `redis-variants build` first", run.Path("builds"))
	}
	reports, _, err := results.LoadVerifications(run)
	if err != nil {
		return nil, nil, err
	}
	// --only a spec selects its layout draws
	for name, b := range builds {
		if b.Variant.DrawOf != "" && slices.Contains(only, b.Variant.DrawOf) && !slices.Contains(only, name) {
			only = append(only, name)
		}
	}
	for _, n := range only {
		if _, ok := builds[n]; !ok {
			return nil, nil, fmt.Errorf("--only %s: no build result with that name in %s", n, run.Path("builds"))
		}
	}
	var imgs []bench.Image
	var warnings []string
	for _, name := range slices.Sorted(maps.Keys(builds)) {
		b := builds[name]
		if len(only) > 0 && !slices.Contains(only, name) {
			continue
		}
		if b.Status != builder.StatusOK {
			warnings = append(warnings, fmt.Sprintf("skipping %s: build %s %s", name, b.Status, b.Error))
			continue
		}
		if b.Image == "" {
			warnings = append(warnings, fmt.Sprintf("skipping %s: its build result names no image", name))
			continue
		}
		if pl := b.Variant.PlatformOf(); pl != engine.HostPlatform() {
			// Under emulation it would measure qemu, not the build: an
			// arm64 image is benchmarked on an arm64 host (bench --images
			// there, merged by history --from).
			warnings = append(warnings, fmt.Sprintf("skipping %s: a %s image is benchmarked only on a matching CPU, and this machine is %s (measure it on an arm64 host with bench --images; history --from merges the rows)", name, pl, engine.HostPlatform()))
			continue
		}
		verified := reports[name].Status
		if r, ok := reports[name]; ok && r.ImageID != b.ConfigDigest {
			verified = "" // a verification of another image (built before this one) proves nothing of it
			warnings = append(warnings, fmt.Sprintf("%s: its verification describes image %q, not the one built (%s): not verified", name, r.ImageID, b.ConfigDigest))
		}
		imgs = append(imgs, bench.Image{Name: name, ID: b.Variant.ID, ImageID: b.ConfigDigest, Ref: b.Image, Reference: b.Variant.IsReference(),
			Verified: verified})
	}
	imgs, w := gatherDraws(imgs, builds)
	return imgs, append(warnings, w...), nil
}

// gatherDraws puts each layout draw (2..L) under its spec's image, in
// draw order: the bench spreads the spec's replicates over them. A draw
// whose verification failed, or whose spec's draw 1 is not measured, is
// left out with a warning (the other draws still cover the spec).
func gatherDraws(imgs []bench.Image, builds map[string]builder.Result) ([]bench.Image, []string) {
	var warnings []string
	spec := map[string]int{}
	for i, im := range imgs {
		if builds[im.Name].Variant.DrawOf == "" {
			spec[im.Name] = i
		}
	}
	var draws []bench.Image
	for _, im := range imgs {
		if builds[im.Name].Variant.DrawOf != "" {
			draws = append(draws, im)
		}
	}
	slices.SortFunc(draws, func(a, b bench.Image) int { return builds[a.Name].Variant.Layout - builds[b.Name].Variant.Layout })
	for _, d := range draws {
		of := builds[d.Name].Variant.DrawOf
		i, ok := spec[of]
		switch {
		case !ok:
			warnings = append(warnings, fmt.Sprintf("skipping %s: draw 1 of its spec (%s) is not measured, so neither are its other draws", d.Name, of))
		case d.Verified == "failed":
			warnings = append(warnings, fmt.Sprintf("skipping %s: its verification failed (see verify/%s.json); %s's replicates spread over its other draws", d.Name, d.Name, of))
		default:
			imgs[i].Draws = append(imgs[i].Draws, d)
		}
	}
	out := imgs[:0]
	for _, im := range imgs {
		if builds[im.Name].Variant.DrawOf == "" {
			out = append(out, im)
		}
	}
	return out, warnings
}
