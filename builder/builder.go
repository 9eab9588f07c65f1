// Package builder builds variant images with BuildKit: one buildkitd for
// every variant (so toolchain and source layers are shared), bounded
// parallelism, one progress prefix and one full log per variant, images
// streamed into Docker Engine as docker tarballs, and a build result per
// variant written atomically into the run folder. A variant that fails is
// recorded with the tail of its log; the others finish.
package builder

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	bk "github.com/moby/buildkit/client"
	"github.com/moby/buildkit/exporter/containerimage/exptypes"

	"github.com/redis-variants/redis-variants/dockerfiles"
	"github.com/redis-variants/redis-variants/engine"
	"github.com/redis-variants/redis-variants/profiles"
	"github.com/redis-variants/redis-variants/progress"
	"github.com/redis-variants/redis-variants/results"
	"github.com/redis-variants/redis-variants/solve"
	"github.com/redis-variants/redis-variants/variants"
)

// Result statuses.
const (
	StatusOK      = "ok"
	StatusFailed  = "failed"
	StatusSkipped = "skipped"
)

// Result is the outcome of building one entry: results.Build, the record
// the run folder holds in builds/<name>.json.
type Result = results.Build

// Result origins.
const (
	OriginBuilt   = "built"   // from its recipe
	OriginPulled  = "pulled"  // by reference from a registry, not built
	OriginRebuilt = "rebuilt" // an official reference's recipe, because no registry had its image
)

// ServerPaths are where images keep redis-server: the official images and
// this tool's builds in /usr/local/bin, Debian's package in /usr/bin.
var ServerPaths = []string{"/usr/local/bin/redis-server", "/usr/bin/redis-server"}

// Engine is what the builder needs from Docker Engine (*engine.Client).
type Engine interface {
	Load(ctx context.Context, tarball io.Reader) error
	Pull(ctx context.Context, ref string) (engine.Pulled, error)
	Tag(ctx context.Context, src, dst string) error
	ImageID(ctx context.Context, ref string) (string, error)
	ImageLabels(ctx context.Context, ref string) (map[string]string, error)
	ImageSize(ctx context.Context, ref string) (int64, error)
	CopyFileFromImage(ctx context.Context, image, path string) ([]byte, error)
}

// Options configure a Builder.
type Options struct {
	Host     string       // buildkitd address ("" = solve.DefaultAddress)
	Jobs     int          // variants built at once (0 = 1)
	Run      *results.Run // run folder: builds/<name>.json, logs/<name>.log
	RunsRoot string       // folder of run folders, searched for earlier results ("" = the run's parent)
	Engine   Engine       // Docker Engine the images are loaded into
	Recipe   dockerfiles.Options
	Push     string            // registry host:port to push to as well ("" = none)
	OCIDir   string            // folder for one OCI layout per variant ("" = none)
	Progress *progress.Printer // console progress: a live line per running build, a line per finished one (nil = none)
	Force    bool              // solve even when the image is up to date
	NoPull   bool              // build official references from their recipe without trying to pull them
	// CacheTo and CacheFrom are registry repositories (host[:port]/repo)
	// of BuildKit's registry cache, mode max: each entry's cache is written
	// to, or read from, the tag buildcache-<name> (buildcache-<name>-pgo
	// for a PGO build's training), so a buildkitd with an empty cache
	// builds what another one built already from the registry.
	CacheTo   string
	CacheFrom []string
	// ProfilesFrom are registry repositories a PGO build looks in for a
	// stored profile of its key (profiles.Key) before training: the first
	// that has one serves, and the build trains nothing. ProfilesTo is
	// where a PGO build stores the profile it trained (nil: nowhere).
	// RegistryOptions are go-containerregistry's options for both.
	ProfilesFrom    []name.Repository
	ProfilesTo      *name.Repository
	RegistryOptions []remote.Option
	// PushAs pushes the named variants' images to these full references
	// (registry/repository:tag) as well; set-up uses it to place the
	// rebuilt official image in the local registry under Docker Hub's name.
	PushAs map[string]string
	// Attest, when set with Push, makes each push attested: the image is
	// pushed by a second, cached solve given the frontend attributes Attest
	// returns for the variant and the sha256 of the source archive its
	// recipe builds from (sbom.Attrs: BuildKit's SLSA provenance, mode max,
	// and SBOMs from this project's generator, of the image and of the
	// build stage), as attestation manifests in the pushed index. (A solve
	// with attestations cannot also be loaded into Docker 20.10 as a docker
	// tarball, so the load and the attested push are two solves.)
	Attest func(v variants.Variant, sourceSHA256 string) map[string]string
}

// Builder builds variants on one buildkitd.
type Builder struct {
	opt   Options
	bk    *bk.Client
	tasks sync.Map // variant name → *progress.Task while it builds
}

// New connects to buildkitd.
func New(ctx context.Context, opt Options) (*Builder, error) {
	if opt.Run == nil {
		return nil, errors.New("builder: no run folder")
	}
	if opt.Engine == nil {
		return nil, errors.New("builder: no Docker Engine client")
	}
	if opt.Jobs <= 0 {
		opt.Jobs = 1
	}
	if opt.RunsRoot == "" {
		opt.RunsRoot = filepath.Dir(opt.Run.Dir)
	}
	c, err := solve.Connect(ctx, opt.Host)
	if err != nil {
		return nil, err
	}
	return &Builder{opt: opt, bk: c}, nil
}

// Close closes the connection to buildkitd.
func (b *Builder) Close() error { return b.bk.Close() }

// ImageRef is the Docker Engine reference of v's image.
func ImageRef(v variants.Variant) string { return "redis-variants/" + v.Name + ":" + v.ID }

// FailedError is returned by Build when some variants failed.
type FailedError struct {
	Failed []string // names
	Total  int
}

func (e *FailedError) Error() string {
	return fmt.Sprintf("%d of %d builds failed: %s", len(e.Failed), e.Total, strings.Join(e.Failed, ", "))
}

// BuildAll builds vs through the stack every run uses: All over
// Record(SkipUpToDate(Limit(b, Jobs))). A failed variant does not stop the
// others; every result is written to builds/<name>.json as soon as it is
// known. The error is a *FailedError when some failed, or the context's
// error when interrupted.
func (b *Builder) BuildAll(ctx context.Context, vs []variants.Variant) ([]Result, error) {
	var stack Interface = Limit(b, b.opt.Jobs)
	if !b.opt.Force && b.opt.Push == "" && b.opt.OCIDir == "" && b.opt.CacheTo == "" {
		stack = SkipUpToDate(b, stack)
	}
	return All(ctx, Record(b.opt.Run, b.opt.Progress, stack), vs)
}

func summary(r Result) string {
	switch {
	case r.Status == StatusFailed:
		return fmt.Sprintf("FAILED after %s: %s (log: %s)", r.Duration.Round(time.Millisecond), r.Error, r.Log)
	case r.Pulled != nil:
		from := r.Pulled.Resolved
		if !strings.Contains(from, "@") {
			from += "@" + r.Pulled.Digest
		}
		return fmt.Sprintf("pulled %s (%s) as %s in %s", from, r.Pulled.Platform, r.Image, r.Duration.Round(time.Millisecond))
	case r.UpToDate:
		return fmt.Sprintf("uptodate %s (%s)", r.Image, short(r.ConfigDigest))
	default:
		return fmt.Sprintf("built %s (%s) in %s, %d/%d steps cached", r.Image, short(r.ConfigDigest), r.Duration.Round(time.Millisecond), r.CachedSteps, r.TotalSteps)
	}
}

func short(d string) string {
	if len(d) > 19 {
		return d[:19]
	}
	return d
}

// say prints a line about one entry that stays (not a finished build's).
func (b *Builder) say(name, msg string) {
	b.opt.Progress.Println("[%s] %s", name, msg)
}

// task is the live progress line of the entry building now (nil: none).
func (b *Builder) task(name string) *progress.Task {
	if t, ok := b.tasks.Load(name); ok {
		return t.(*progress.Task)
	}
	return nil
}

// Build builds (or pulls) one entry with BuildKit and loads it into Docker
// Engine; it never returns an error, only a Result saying what failed.
func (b *Builder) Build(ctx context.Context, v variants.Variant) Result {
	start := time.Now()
	logPath := b.opt.Run.Path("logs", v.Name+".log")
	r := Result{Variant: v, Image: ImageRef(v), Log: logPath, Status: StatusFailed}
	fail := func(err error, tail []string) Result {
		r.Error = fmt.Sprintf("building variant %q: %v", v.Name, err)
		if len(tail) == 0 {
			tail = tailLines(r.Error, tailN)
		}
		r.LogTail = tail
		r.Duration = time.Since(start)
		r.Finished = time.Now().UTC()
		return r
	}
	if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
		return fail(err, nil)
	}
	task := b.opt.Progress.Start(v.Name)
	b.tasks.Store(v.Name, task)
	defer func() { b.tasks.Delete(v.Name); task.Remove() }()

	if v.Pulls() && (v.Kind == variants.KindImage || !b.opt.NoPull) {
		pr, err := b.pull(ctx, v, r)
		if err == nil {
			pr.Duration = time.Since(start)
			pr.Finished = time.Now().UTC()
			return pr
		}
		if v.Kind == variants.KindImage || ctx.Err() != nil {
			writeLog(logPath, err.Error())
			return fail(err, nil)
		}
		if cur, ok := b.current(ctx, v, start); ok && !b.opt.Force && b.opt.PushAs[v.Name] == "" {
			cur.Origin, cur.PullError = OriginRebuilt, err.Error()
			b.say(v.Name, fmt.Sprintf("no registry has %s (%v): its %s recipe's rebuild is up to date", v.Image, err, v.Recipe))
			return cur
		}
		r.Origin, r.PullError = OriginRebuilt, err.Error()
		b.say(v.Name, fmt.Sprintf("no registry has %s (%v): rebuilding it from the %s recipe", v.Image, err, v.Recipe))
	}

	ro := b.opt.Recipe
	ro.Created = start
	rec, err := dockerfiles.Render(v, ro)
	if err != nil {
		writeLog(logPath, err.Error())
		return fail(err, nil)
	}
	r.Target, r.Recipe = rec.Target, rec.BuildArgs["RECIPE_DIGEST"]
	if err := checkSources(rec); err != nil {
		writeLog(logPath, err.Error())
		return fail(err, nil)
	}

	if rec.BuildArgs["PGO_STAGE"] == "pgo-train" {
		// A stored profile of the same key, when a registry has one;
		// else the training first, its profile exported into the run
		// folder (and stored, when asked). The image's build then reuses
		// the cached stages and is handed the profile's digest for its
		// labels.
		dir := b.opt.Run.Path(results.PGORel(v.Name))
		key, err := b.profileKey(v, rec)
		if err != nil {
			return fail(err, nil)
		}
		stored, err := b.storedProfile(ctx, v, key, dir)
		if err != nil {
			return fail(err, nil)
		}
		if stored != nil {
			dockerfiles.UseStoredProfile(&rec, dir, stored.CPU)
			r.Recipe = rec.BuildArgs["RECIPE_DIGEST"]
		} else {
			prec := rec
			prec.Target = dockerfiles.TargetPGOExport
			if tr, err := b.solve(ctx, v, prec, logPath, &r); err != nil {
				if ctx.Err() != nil {
					err = fmt.Errorf("interrupted: %w", context.Cause(ctx))
				}
				return fail(fmt.Errorf("pgo training: %w", err), tr.failureTail(err))
			}
		}
		prof, err := readProfile(dir)
		if err != nil {
			return fail(err, nil)
		}
		prof.TrainedOn = rec.BuildArgs["PGO_TRAINED_ON"]
		if stored != nil {
			prof.From = stored.Ref.String()
		} else if b.opt.ProfilesTo != nil {
			s, err := profiles.Push(ctx, *b.opt.ProfilesTo, key, dir, v.Name, prof.TrainedOn, b.opt.RegistryOptions...)
			if err != nil {
				return fail(err, nil)
			}
			prof.Stored = s.Ref.String()
			b.say(v.Name, fmt.Sprintf("stored its pgo profile %s as %s", short(prof.SHA256), s.Ref))
		}
		r.PGO = prof
		rec.BuildArgs = maps.Clone(rec.BuildArgs)
		rec.BuildArgs["PGO_PROFILE_SHA256"] = prof.SHA256
	}

	tr, err := b.solve(ctx, v, rec, logPath, &r)
	r.CachedSteps, r.TotalSteps = tr.counts()
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("interrupted: %w", context.Cause(ctx))
		}
		return fail(err, tr.failureTail(err))
	}

	// The image as Docker Engine has it.
	id, err := b.opt.Engine.ImageID(ctx, r.Image)
	if err != nil {
		return fail(fmt.Errorf("image not in Docker Engine after loading: %w", err), nil)
	}
	// Docker Engine 20.10 re-serialises the config on load, so its image
	// ID (what every later stage uses) can differ from BuildKit's digest.
	r.ConfigDigest = id
	if r.Labels, err = b.opt.Engine.ImageLabels(ctx, r.Image); err != nil {
		return fail(err, nil)
	}
	r.Size, _ = b.opt.Engine.ImageSize(ctx, r.Image) // a fact for the report; none is no failure
	if info, err := b.opt.Engine.CopyFileFromImage(ctx, r.Image, dockerfiles.BuildInfoPath); err == nil && json.Valid(info) {
		r.BuildInfo = json.RawMessage(info)
	}
	r.Status = StatusOK
	if r.Origin == "" {
		r.Origin = OriginBuilt
	}
	r.Server = serverPath(rec.Target)
	r.Duration = time.Since(start)
	r.Finished = time.Now().UTC()
	return r
}

// checkSources makes sure the archives the recipe copies from the source
// cache are there, so a missing one is a clear error rather than a
// BuildKit "not found".
func checkSources(rec dockerfiles.Recipe) error {
	dir := rec.Contexts[dockerfiles.SourcesContext]
	need := map[string]bool{}
	switch rec.Target {
	case dockerfiles.TargetRuntime, dockerfiles.TargetOfficial, dockerfiles.TargetOfficialAlpine:
		need["REDIS_SHA256"] = true
		if rec.BuildArgs["TOOLCHAIN"] == "zig" && rec.Target == dockerfiles.TargetRuntime {
			need["ZIG_SHA256"] = true
		}
	}
	for _, k := range []string{"REDIS_SHA256", "ZIG_SHA256"} {
		if !need[k] {
			continue
		}
		sum := rec.BuildArgs[k]
		if dir == "" {
			return errors.New("no source cache folder given")
		}
		p := filepath.Join(dir, "sha256", sum)
		if _, err := os.Stat(p); err != nil {
			return fmt.Errorf("source archive %s is not in the cache (%s); run: redis-variants fetch", sum, p)
		}
	}
	return nil
}

// previous finds the newest result for name: in this run, else in the
// newest earlier run folder that has one.
func (b *Builder) previous(name string) (Result, bool) {
	rel := filepath.Join("builds", name+".json")
	var r Result
	if b.opt.Run.ReadJSON(rel, &r) == nil {
		return r, true
	}
	ents, err := os.ReadDir(b.opt.RunsRoot)
	if err != nil {
		return Result{}, false
	}
	var dirs []string
	for _, e := range ents {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			dirs = append(dirs, e.Name())
		}
	}
	sort.Sort(sort.Reverse(sort.StringSlice(dirs)))
	self, _ := filepath.Abs(b.opt.Run.Dir)
	for _, d := range dirs {
		p := filepath.Join(b.opt.RunsRoot, d)
		if abs, _ := filepath.Abs(p); abs == self {
			continue
		}
		run := &results.Run{Dir: p}
		if run.ReadJSON(rel, &r) == nil {
			return r, true
		}
	}
	return Result{}, false
}

// solve runs one BuildKit solve for rec and loads the image into Docker
// Engine. It fills r.BuildKitConfig, r.Pushed and r.OCI.
func (b *Builder) solve(ctx context.Context, v variants.Variant, rec dockerfiles.Recipe, logPath string, r *Result) (*tracker, error) {
	tr := newTracker()
	tr.task = b.task(v.Name)
	if rec.Target == dockerfiles.TargetPGOExport {
		tr.phase = "pgo training: "
		return tr, b.solveProfile(ctx, v, rec, logPath, tr)
	}
	req := solve.Request{
		Dockerfile:   rec.Dockerfile,
		Target:       rec.Target,
		Platform:     rec.Platform,
		BuildArgs:    rec.BuildArgs,
		Contexts:     rec.Contexts,
		SharedKey:    sharedKey(),
		CacheExports: b.cacheExports(v.Name),
		CacheImports: b.cacheImports(v.Name),
		// Export: a docker tarball streamed into Docker Engine.
		Tarballs: []solve.Tarball{{
			Type:  bk.ExporterDocker,
			Attrs: map[string]string{"name": r.Image},
			Read:  func(ctx context.Context, tar io.Reader) error { return b.opt.Engine.Load(ctx, tar) },
		}},
	}
	var ociTmp, ociDir string
	if b.opt.OCIDir != "" {
		// exported beside its place and renamed into it once complete: a
		// failed export (a full disk) leaves no half-written layout
		dir := filepath.Join(b.opt.OCIDir, v.Name)
		if err := os.MkdirAll(b.opt.OCIDir, 0o755); err != nil {
			return tr, fmt.Errorf("OCI export: %w", err)
		}
		tmp, err := os.MkdirTemp(b.opt.OCIDir, "."+v.Name+".export-*")
		if err != nil {
			return tr, fmt.Errorf("OCI export: %w", err)
		}
		defer os.RemoveAll(tmp) // gone once renamed
		ociTmp, ociDir = tmp, dir
		req.Exports = append(req.Exports, bk.ExportEntry{Type: bk.ExporterOCI, Attrs: map[string]string{"name": r.Image, "tar": "false"}, OutputDir: tmp})
	}
	var attested *solve.Request
	if b.opt.Push != "" {
		ref := b.opt.Push + "/" + r.Image
		a := map[string]string{"name": ref, "push": "true"}
		if insecureRegistry(b.opt.Push) {
			a["registry.insecure"] = "true"
		}
		push := bk.ExportEntry{Type: bk.ExporterImage, Attrs: a}
		if b.opt.Attest != nil {
			attested = &solve.Request{Dockerfile: rec.Dockerfile, Target: rec.Target, Platform: rec.Platform, BuildArgs: rec.BuildArgs,
				Contexts: rec.Contexts, SharedKey: req.SharedKey, CacheImports: req.CacheImports,
				Exports: []bk.ExportEntry{push}, Attrs: b.opt.Attest(v, rec.BuildArgs["REDIS_SHA256"])}
		} else {
			req.Exports = append(req.Exports, push)
		}
		r.Pushed = ref
	}
	if ref, ok := b.opt.PushAs[v.Name]; ok {
		a := map[string]string{"name": ref, "push": "true"}
		if host, _, _ := strings.Cut(ref, "/"); insecureRegistry(host) {
			a["registry.insecure"] = "true"
		}
		req.Exports = append(req.Exports, bk.ExportEntry{Type: bk.ExporterImage, Attrs: a})
		r.Pushed = ref
	}

	resp, logFile, err := b.run(ctx, v, rec, logPath, tr, req)
	if logFile != nil {
		defer logFile.Close()
	}
	var exportErr *solve.ExportError
	switch {
	case err != nil && ctx.Err() == nil && !b.answers(ctx):
		// The daemon went away mid-build: whatever step it was at did
		// not fail, the daemon did. Say which.
		fmt.Fprintf(logFile, "\nERROR: buildkitd %s stopped answering: %v\n", b.opt.Host, err)
		return tr, fmt.Errorf("buildkitd %s stopped answering during the build (%v)", b.opt.Host, err)
	case errors.As(err, &exportErr):
		fmt.Fprintf(logFile, "\nERROR: loading into Docker Engine: %v\n", exportErr.Err)
		return tr, fmt.Errorf("loading into Docker Engine: %w", exportErr.Err)
	case err != nil:
		fmt.Fprintf(logFile, "\nERROR: %v\n", err)
		if step, msg := tr.failedStep(); step != "" {
			return tr, fmt.Errorf("step %s: %s", shorten(step, 90), msg)
		}
		return tr, fmt.Errorf("solving: %w", err)
	}
	if resp != nil {
		r.BuildKitConfig = resp.ExporterResponse[exptypes.ExporterImageConfigDigestKey]
		r.PushedDigest = resp.ExporterResponse[exptypes.ExporterImageDigestKey]
	}
	if attested != nil {
		fmt.Fprintf(logFile, "\n# the attested push of %s: %s with provenance and SBOMs\n", v.Name, r.Pushed)
		attested.Watch = []func(chan *bk.SolveStatus) error{func(ch chan *bk.SolveStatus) error {
			for st := range ch {
				for _, l := range st.Logs {
					logFile.Write(l.Data)
				}
				for _, vx := range st.Vertexes {
					if vx.Completed != nil {
						fmt.Fprintf(logFile, "#%s %s\n", shorten(vx.Name, 200), errText(vx.Error))
					}
				}
			}
			return nil
		}}
		aresp, err := solve.Run(ctx, b.bk, *attested)
		if err != nil {
			fmt.Fprintf(logFile, "\nERROR: the attested push: %v\n", err)
			return tr, fmt.Errorf("the attested push to %s: %w", r.Pushed, err)
		}
		r.PushedDigest, r.Attested = aresp.ExporterResponse[exptypes.ExporterImageDigestKey], true
	}
	if ociTmp != "" {
		if err := os.RemoveAll(ociDir); err != nil {
			return tr, fmt.Errorf("OCI export: replacing %s: %w", ociDir, err)
		}
		if err := os.Rename(ociTmp, ociDir); err != nil {
			return tr, fmt.Errorf("OCI export: %w", err)
		}
		r.OCI = ociDir
	}
	return tr, nil
}

// answers reports whether b's buildkitd still lists its workers.
func (b *Builder) answers(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	_, err := b.bk.ListWorkers(ctx)
	return err == nil
}

// solveProfile solves a PGO build's training and exports its profile into
// the run folder (results.PGORel); the build log starts with it.
func (b *Builder) solveProfile(ctx context.Context, v variants.Variant, rec dockerfiles.Recipe, logPath string, tr *tracker) error {
	dir := b.opt.Run.Path(results.PGORel(v.Name))
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	req := solve.Request{Dockerfile: rec.Dockerfile, Target: rec.Target, Platform: rec.Platform, BuildArgs: rec.BuildArgs, Contexts: rec.Contexts,
		SharedKey: sharedKey(), Exports: []bk.ExportEntry{{Type: bk.ExporterLocal, OutputDir: dir}},
		CacheExports: b.cacheExports(v.Name + "-pgo"), CacheImports: b.cacheImports(v.Name + "-pgo")}
	_, logFile, err := b.run(ctx, v, rec, logPath, tr, req)
	if logFile != nil {
		defer logFile.Close()
	}
	if err != nil {
		// a half-exported profile is no profile
		os.RemoveAll(dir)
		if ctx.Err() == nil && !b.answers(ctx) {
			fmt.Fprintf(logFile, "\nERROR: buildkitd %s stopped answering: %v\n", b.opt.Host, err)
			return fmt.Errorf("buildkitd %s stopped answering during the build (%v)", b.opt.Host, err)
		}
		if logFile != nil {
			fmt.Fprintf(logFile, "\nERROR: %v\n", err)
		}
		if step, msg := tr.failedStep(); step != "" {
			return fmt.Errorf("step %s: %s", shorten(step, 90), msg)
		}
		return fmt.Errorf("solving: %w", err)
	}
	return nil
}

// run solves req with the build log at logPath (started afresh by the
// first solve of a build, appended to by the next) and the progress
// displays; it returns the open log for the caller's last words.
func (b *Builder) run(ctx context.Context, v variants.Variant, rec dockerfiles.Recipe, logPath string, tr *tracker, req solve.Request) (*bk.SolveResponse, *os.File, error) {
	flags := os.O_CREATE | os.O_WRONLY | os.O_TRUNC
	if rec.Target != dockerfiles.TargetPGOExport && rec.BuildArgs["PGO_STAGE"] == "pgo-train" {
		flags = os.O_CREATE | os.O_WRONLY | os.O_APPEND // after the training's
	}
	logFile, err := os.OpenFile(logPath, flags, 0o644)
	if err != nil {
		return nil, nil, fmt.Errorf("creating build log: %w", err)
	}
	fmt.Fprintf(logFile, "# variant %s (id %s), target %s, recipe %s\n", v.Name, v.ID, rec.Target, rec.BuildArgs["RECIPE_DIGEST"])
	displays, err := b.displays(logFile)
	if err != nil {
		return nil, logFile, err
	}
	req.Watch = append(req.Watch, func(ch chan *bk.SolveStatus) error {
		for s := range ch {
			tr.update(s)
		}
		return nil
	})
	for _, d := range displays {
		req.Watch = append(req.Watch, func(ch chan *bk.SolveStatus) error {
			_, err := d.UpdateFrom(context.WithoutCancel(ctx), ch)
			return err
		})
	}
	resp, err := solve.Run(ctx, b.bk, req)
	return resp, logFile, err
}

// cacheTag is the registry cache tag of one solve.
func cacheTag(repo, key string) string { return strings.TrimSuffix(repo, "/") + ":buildcache-" + key }

func (b *Builder) cacheExports(key string) []bk.CacheOptionsEntry {
	if b.opt.CacheTo == "" {
		return nil
	}
	host, _, _ := strings.Cut(b.opt.CacheTo, "/")
	return []bk.CacheOptionsEntry{solve.RegistryCache(cacheTag(b.opt.CacheTo, key), insecureRegistry(host))}
}

func (b *Builder) cacheImports(key string) []bk.CacheOptionsEntry {
	var out []bk.CacheOptionsEntry
	for _, r := range b.opt.CacheFrom {
		host, _, _ := strings.Cut(r, "/")
		out = append(out, solve.RegistryCache(cacheTag(r, key), insecureRegistry(host)))
	}
	return out
}

// profileKey is what v's PGO profile depends on: its spec (the training
// included), what of the recipe the training runs and the load generator.
func (b *Builder) profileKey(v variants.Variant, rec dockerfiles.Recipe) (profiles.Key, error) {
	td, err := dockerfiles.TrainingDigest(rec)
	if err != nil {
		return profiles.Key{}, err
	}
	lg, err := profiles.LoadgenDigest(filepath.Join(rec.Contexts[dockerfiles.LoadgenContext], dockerfiles.LoadgenBinary))
	if err != nil {
		return profiles.Key{}, fmt.Errorf("pgo: %w", err)
	}
	return profiles.Key{Kind: "pgo", Spec: string(variants.Spec(v)), Recipe: td, Loadgen: lg}, nil
}

// storedProfile pulls the profile of key into dir from the first of
// ProfilesFrom that has one (nil: none has, or none is given). A registry
// that cannot be read is said, and the next one asked; a stored profile
// that does not match what it claims fails the build.
func (b *Builder) storedProfile(ctx context.Context, v variants.Variant, key profiles.Key, dir string) (*profiles.Stored, error) {
	for _, repo := range b.opt.ProfilesFrom {
		s, ok, err := profiles.Lookup(ctx, repo, key, b.opt.RegistryOptions...)
		if err != nil {
			b.say(v.Name, fmt.Sprintf("no stored pgo profile from %s: %v", repo, err))
			continue
		}
		if !ok {
			continue
		}
		if err := profiles.Pull(ctx, s, dir, b.opt.RegistryOptions...); err != nil {
			return nil, fmt.Errorf("pgo: pulling the stored profile %s: %w", s.Ref, err)
		}
		b.say(v.Name, fmt.Sprintf("pgo profile %s from %s (trained on %s for %s): no training", short(s.SHA256), s.Ref, s.CPU, s.Variant))
		return &s, nil
	}
	return nil, nil
}

// readProfile reads what a PGO build's training exported into dir: the
// merged profile, its sha256 (checked) and the training's figures.
func readProfile(dir string) (*results.Profile, error) {
	sum, err := os.ReadFile(filepath.Join(dir, "profile.sha256"))
	if err != nil {
		return nil, fmt.Errorf("pgo training: no profile exported: %w", err)
	}
	p := &results.Profile{Dir: dir, SHA256: strings.TrimSpace(string(sum)), Training: filepath.Join(dir, "training.csv")}
	for _, name := range []string{"redis.profdata", "redis.gcda.tar"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			p.File = filepath.Join(dir, name)
		}
	}
	if p.File == "" {
		return nil, fmt.Errorf("pgo training: %s holds no profile (redis.profdata or redis.gcda.tar)", dir)
	}
	f, err := os.Open(p.File)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return nil, fmt.Errorf("pgo training: reading %s: %w", p.File, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != p.SHA256 {
		return nil, fmt.Errorf("pgo training: %s has sha256 %s, the training recorded %s", p.File, got, p.SHA256)
	}
	if n == 0 {
		return nil, fmt.Errorf("pgo training: the profile %s is empty", p.File)
	}
	p.Bytes = n
	return p, nil
}

func insecureRegistry(host string) bool {
	h := host
	if i := strings.LastIndex(h, ":"); i > 0 {
		h = h[:i]
	}
	return h == "127.0.0.1" || h == "localhost" || h == "[::1]"
}

func sharedKey() string {
	h, _ := os.Hostname()
	return "redis-variants-" + h
}

func writeLog(path, msg string) {
	if !strings.HasSuffix(msg, "\n") {
		msg += "\n"
	}
	results.WriteFile(path, []byte(msg))
}

func errText(e string) string {
	if e == "" {
		return "DONE"
	}
	return "ERROR " + e
}
