package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/redis-variants/redis-variants/builder"
	"github.com/redis-variants/redis-variants/dockerfiles"
	"github.com/redis-variants/redis-variants/engine"
	"github.com/redis-variants/redis-variants/machine"
	"github.com/redis-variants/redis-variants/progress"
	"github.com/redis-variants/redis-variants/publish"
	"github.com/redis-variants/redis-variants/results"
	"github.com/redis-variants/redis-variants/sbom"
	"github.com/redis-variants/redis-variants/variants"
)

// BuildOptions are the flags of `redis-variants build`.
type BuildOptions struct {
	Only []string
	Jobs int
	Push string
	// Attest pushes each image (Push is required) as an index with
	// BuildKit's SLSA provenance and SBOMs from this tool's generator.
	Attest bool
	OCI    string
	Force  bool
	// NoTable leaves out the table of every entry on c.Out at the end
	// (run prints the finished builds' lines, and its own summary).
	NoTable bool
	// CacheTo and CacheFrom: builder.Options' registry cache (a
	// repository each; CacheFrom repeatable).
	CacheTo   string
	CacheFrom []string
	// ProfilesTo and ProfilesFrom: registry repositories
	// (host[:port]/repo) a PGO build stores its trained profile in, and
	// looks in for a stored one before training (repeatable).
	ProfilesTo   string
	ProfilesFrom []string
}

// Build builds (or pulls) the selected entries of the variants file into a
// run folder (c.RunDir, else a new one under c.Runs), holding the machine
// lock, and prints one line per entry on c.Out. A failed entry does not
// stop the others.
func Build(ctx context.Context, c Config, o BuildOptions) error {
	errw := c.Err
	plan, vs, err := c.Select(o.Only)
	if err != nil {
		return err
	}
	dir := c.RunDir
	if dir == "" {
		dir = filepath.Join(c.Runs, results.NewRunID(time.Now()))
	}
	run, err := results.Open(dir)
	if err != nil {
		return err
	}
	unlock, err := c.holdRun(run.Dir, "build")
	if err != nil {
		return err
	}
	defer unlock()
	if !run.Exists(results.PlanFile) {
		if err := run.WritePlan(plan); err != nil {
			return err
		}
	}
	p, closeP, err := c.printer()
	if err != nil {
		return err
	}
	defer closeP()
	fetchMissing(ctx, c, p, vs)
	p.Println("building %d images into %s (jobs %d; full logs in %s)", len(vs), run.Dir, o.Jobs, run.Path("logs"))
	start := time.Now()
	bo := builder.Options{
		Jobs: o.Jobs, Run: run, RunsRoot: c.Runs,
		Push: o.Push, OCIDir: o.OCI, Progress: p, Force: o.Force,
		CacheTo: o.CacheTo, CacheFrom: o.CacheFrom,
		RegistryOptions: publish.ReadOptions(ctx),
	}
	if o.Attest {
		if o.Push == "" {
			return fmt.Errorf("--attest: attestations travel with a pushed image: give --push REGISTRY too")
		}
		bin, err := sbom.FindBinary()
		if err != nil {
			return fmt.Errorf("--attest: %w", err)
		}
		gen, err := sbom.EnsureGenerator(ctx, o.Push, bin, bo.RegistryOptions...)
		if err != nil {
			return fmt.Errorf("--attest: %w", err)
		}
		bo.Attest = func(v variants.Variant, sha string) map[string]string { return sbom.Attrs(gen, v, sha) }
		p.Println("attested pushes: SLSA provenance (mode max) and SBOMs by %s", gen)
	}
	for _, r := range o.ProfilesFrom {
		repo, err := publish.Repository(r)
		if err != nil {
			return fmt.Errorf("--profiles-from: %w", err)
		}
		bo.ProfilesFrom = append(bo.ProfilesFrom, repo)
	}
	if o.ProfilesTo != "" {
		repo, err := publish.Repository(o.ProfilesTo)
		if err != nil {
			return fmt.Errorf("--profiles-to: %w", err)
		}
		bo.ProfilesTo = &repo
	}
	res, err := buildWith(ctx, c, errw, "build", bo, vs)
	for _, r := range res {
		if o.NoTable {
			break
		}
		state := r.Status
		if r.UpToDate {
			state = "uptodate"
		}
		fmt.Fprintf(c.Out, "%-28s %-9s %-40s %8s  %d/%d cached\n", r.Variant.Name, state, r.Image,
			r.Duration.Round(100*time.Millisecond), r.CachedSteps, r.TotalSteps)
	}
	p.Println("%d images in %s; results in %s", len(res), time.Since(start).Round(100*time.Millisecond), run.Path("builds"))
	if o.Push != "" {
		platformIndexes(ctx, p, res)
	}
	var fe *builder.FailedError
	if errors.As(err, &fe) {
		for _, r := range res {
			if r.Status == builder.StatusFailed {
				tail := ""
				for _, l := range r.LogTail {
					tail += "\n  | " + l
				}
				p.Failure("\n%s failed: %s (full log: %s); the failing step's last lines:%s", r.Variant.Name, r.Error, r.Log, tail)
			}
		}
	}
	return err
}

// buildWith builds vs with a builder made of opt, the machine's recipe
// facts and a Docker Engine client, holding the machine lock as holder:
// the set-up every command that builds shares (build, run, seed-official).
// Host and Recipe are filled in here.
func buildWith(ctx context.Context, c Config, errw io.Writer, holder string, opt builder.Options, vs []variants.Variant) ([]builder.Result, error) {
	eng, err := engine.New(ctx)
	if err != nil {
		return nil, err
	}
	defer eng.Close()
	ropt, err := dockerfiles.HostOptions(c.SourcesDir())
	if err != nil {
		fmt.Fprintln(errw, "warning:", err)
	}
	unlock, err := machine.Lock(ctx, machine.LockFile(c.State), holder, errw)
	if err != nil {
		return nil, err
	}
	defer unlock()
	opt.Host, opt.Engine, opt.Recipe = c.BuildKit, eng, ropt
	if len(c.Builders) > 0 {
		var eps []builder.Endpoint
		for _, s := range c.Builders {
			e, err := builder.ParseEndpoint(s, opt.Jobs)
			if err != nil {
				return nil, err
			}
			eps = append(eps, e)
		}
		p, err := builder.NewPool(ctx, opt, eps)
		if err != nil {
			return nil, err
		}
		defer p.Close()
		return p.BuildAll(ctx, vs)
	}
	b, err := builder.New(ctx, opt)
	if err != nil {
		return nil, err
	}
	defer b.Close()
	return b.BuildAll(ctx, vs)
}

// PrintRecipe prints what the builder sends BuildKit for one variant: the
// Dockerfile exactly as rendered, then the target, named contexts and
// every build arg as comment lines.
func PrintRecipe(out io.Writer, c Config, plan *variants.Plan, name string) error {
	v, ok := plan.Lookup(name)
	if !ok {
		var names []string
		for _, v := range plan.All() {
			names = append(names, v.Name)
		}
		return fmt.Errorf("no variant or reference %q in %s (have: %s)", name, c.File, strings.Join(names, ", "))
	}
	ropt, err := dockerfiles.HostOptions(c.SourcesDir())
	if err != nil {
		return err
	}
	rec, err := dockerfiles.Render(v, ropt)
	if err != nil {
		return err
	}
	if _, err := out.Write(rec.Dockerfile); err != nil {
		return err
	}
	fmt.Fprintf(out, "\n# ---- what the builder sends with this Dockerfile (%s, id %s) ----\n", v.Name, v.ID)
	fmt.Fprintf(out, "# target: %s\n", rec.Target)
	fmt.Fprintf(out, "# image: %s\n", builder.ImageRef(v))
	for _, k := range slices.Sorted(maps.Keys(rec.Contexts)) {
		fmt.Fprintf(out, "# context: %s=%s\n", k, rec.Contexts[k])
	}
	for _, k := range slices.Sorted(maps.Keys(rec.BuildArgs)) {
		fmt.Fprintf(out, "# build-arg: %s=%s\n", k, rec.BuildArgs[k])
	}
	fmt.Fprintln(out, "# (the builder sets CREATED to the build's start time; RECIPE_DIGEST does not depend on it)")
	return nil
}

// platformIndexes pushes one multi-platform index for each build spec
// pushed for several platforms (twins: the same spec but platform and
// mcpu), beside the images: <registry>/<amd64 image's repository>:<its
// tag>-platforms. A failure is reported and does not fail the build.
func platformIndexes(ctx context.Context, p *progress.Printer, res []builder.Result) {
	groups := map[string][]builder.Result{}
	var keys []string
	for _, r := range res {
		if r.Status != builder.StatusOK || r.Pushed == "" || r.PushedDigest == "" || r.Variant.Kind != variants.KindVariant {
			continue
		}
		k := variants.TwinKey(r.Variant)
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], r)
	}
	for _, k := range keys {
		g := groups[k]
		if len(g) < 2 {
			continue
		}
		// named after the build for this machine's platform, else the first
		head := g[0]
		for _, r := range g {
			if r.Variant.PlatformOf() == variants.PlatformAMD64 {
				head = r
				break
			}
		}
		var members, names []string
		for _, r := range g {
			repo, _, _ := strings.Cut(r.Pushed, "@")
			if i := strings.LastIndex(repo, ":"); i > strings.LastIndex(repo, "/") {
				repo = repo[:i]
			}
			members = append(members, repo+"@"+r.PushedDigest)
			names = append(names, r.Variant.Name+" ("+r.Variant.PlatformOf()+")")
		}
		ref := head.Pushed + "-platforms"
		d, err := publish.PlatformIndex(ctx, ref, members, publish.ReadOptions(ctx)...)
		if err != nil {
			p.Failure("platform index of %s: %v", strings.Join(names, ", "), err)
			continue
		}
		p.Println("platform index %s@%s: %s", ref, d, strings.Join(names, ", "))
	}
}
