package verify

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"time"

	bk "github.com/moby/buildkit/client"

	"github.com/redis-variants/redis-variants/engine"
	"github.com/redis-variants/redis-variants/machine"
	"github.com/redis-variants/redis-variants/results"
	"github.com/redis-variants/redis-variants/sources"
	"github.com/redis-variants/redis-variants/variants"
)

// Options tune a verification.
type Options struct {
	Profile       string   // quick (default) or full
	Units         []string // replaces the profile's unit list for the in-build suite (tests, quick runs)
	ExternalUnits []string // units run against the image from outside (default ExternalQuickUnits; full: the same plus more)
	NoExternal    bool     // skip the external run
	SourcesDir    string   // the source cache (.state/cache/sources): the tarball's tests/ for the external run
	// Sources are the plan's sources: a reference without a source of its
	// own (the distro package) takes its tests from redis-<version>.
	Sources  map[string]variants.Source
	CPUFlags []string // this machine's CPU flags (nil: machine.Read's)
	Log      io.Writer
}

// Verifier verifies images.
// Interface verifies one built entry and writes its report to the run
// folder. *Verifier is the real one (Redis's suite through BuildKit, the
// image checks through Docker Engine).
type Interface interface {
	Verify(ctx context.Context, v variants.Variant, t Target) Report
}

var (
	_ Interface = (*Verifier)(nil)
	_ Interface = (*recorder)(nil)
)

// Record writes every report of next to run's verify/<name>.json
// (atomically) the moment it is known, except an interrupted one, which is
// no verdict: a re-run verifies that image again. A report that cannot be
// written fails, saying why.
func Record(run *results.Run, next Interface) Interface { return &recorder{run: run, next: next} }

type recorder struct {
	run  *results.Run
	next Interface
}

func (rc *recorder) Verify(ctx context.Context, v variants.Variant, t Target) Report {
	r := rc.next.Verify(ctx, v, t)
	if r.Status == StatusInterrupted {
		return r
	}
	if err := Write(rc.run, r); err != nil {
		r.Status = StatusFailed
		r.Problems = append(r.Problems, "writing the report: "+err.Error())
	}
	return r
}

type Verifier struct {
	Engine   Engine
	BuildKit *bk.Client                               // nil: no in-build suite (reported as not run, which fails a variant that needs it)
	Render   func(v variants.Variant) (Recipe, error) // the recipe with the test stages
	Run      *results.Run                             // where logs and reports go
	Opt      Options
}

// Target is the image a verification runs against.
type Target struct {
	Image  string         // Docker Engine reference
	ID     string         // the image ID (config digest): what a kept proof is keyed by (Reuse)
	Recipe string         // the recipe digest it was built from
	Server string         // where the image keeps redis-server ("" = ServerBinary(v))
	Pulled *engine.Pulled // set when the image was pulled rather than built
	Redis  string         // the Redis version a pulled image declares, for a spec that names none
	// SuiteServer is the sha256 of the redis-server the suite in the build
	// ran ("" = none ran, or its report does not say): the image's must be
	// the same binary.
	SuiteServer string
	// Twin is the image of the same spec without PGO, when the run built
	// it: a PGO build's redis-server must differ from it.
	Twin       string
	TwinServer string
	TwinID     string
	// First is draw 1 of the spec when v is a layout draw (Layout 2 and
	// up): the suite runs on draw 1, and the layout check compares this
	// draw with it.
	First       string
	FirstServer string
	FirstID     string
}

// Verify runs everything for variant v whose image is t and returns the
// report (Record writes it to the run folder). It never returns early with
// an error: every problem is in the report and fails it.
func (vf *Verifier) Verify(ctx context.Context, v variants.Variant, t Target) Report {
	start := time.Now()
	image := t.Image
	if v.Redis == "" {
		v.Redis = t.Redis
	}
	r := Report{Variant: v.Name, ID: v.ID, Image: image, ImageID: t.ID, Profile: vf.Opt.Profile}
	if t.Pulled != nil {
		r.Pulled = t.Pulled.Resolved + "@" + t.Pulled.Digest
	}
	if r.Profile == "" {
		r.Profile = ProfileQuick
	}
	logf := func(format string, a ...any) {
		if vf.Opt.Log != nil {
			fmt.Fprintf(vf.Opt.Log, "verify %s: "+format+"\n", append([]any{v.Name}, a...)...)
		}
	}
	gated := false // the ISA gate refused the image: nothing of it ran
	finish := func() Report {
		r.Problems = nil
		if why := failedReason(&r.Suite); why != "" {
			r.Problems = append(r.Problems, "suite in the build: "+why)
		}
		if r.External != nil {
			if why := failedReason(r.External); why != "" {
				r.Problems = append(r.Problems, "suite against the image: "+why)
			} else if !r.External.Ran {
				r.Problems = append(r.Problems, "suite against the image did not run: "+r.External.Note)
			}
		}
		for _, c := range r.Checks {
			if c.Failed() {
				r.Problems = append(r.Problems, "check "+c.Name+": "+c.Detail)
			}
		}
		if !r.Suite.Ran && (r.External == nil || !r.External.Ran) && !gated && v.Layout < 2 {
			// a distribution package or pulled image with --no-external
			r.Problems = append(r.Problems, "no test suite ran against this image (it has no build tree here, and the suite against the running image was not run): its behaviour is unproven; verify without --no-external")
		}
		r.Status = StatusPassed
		if len(r.Problems) > 0 {
			r.Status = StatusFailed
		}
		r.Duration = time.Since(start)
		r.Finished = time.Now().UTC()
		if ctx.Err() != nil {
			// An interrupted verification is no verdict (Record writes
			// nothing for it, so a re-run verifies this image again).
			r.Status = StatusInterrupted
		}
		return r
	}

	// An image of another platform runs here only under emulation.
	if how, ok := Emulation(v); !ok {
		r.Checks = append(r.Checks, Check{Name: "platform", Detail: how})
		r.Suite.Note = "not run: " + how
		gated = true
		return finish()
	} else if how != "" {
		r.Checks = append(r.Checks, Check{Name: "platform", OK: true, Detail: how})
		r.Emulation = how
	}

	// The ISA gate comes first: nothing of the image runs on a CPU it cannot run on.
	flags := vf.Opt.CPUFlags
	if flags == nil {
		host, err := machine.Read()
		if err != nil {
			r.Checks = append(r.Checks, Check{Name: "isa", Detail: err.Error()})
			return finish()
		}
		flags = host.Flags
	}
	labels, err := vf.Engine.ImageLabels(ctx, image)
	if err != nil {
		r.Checks = append(r.Checks, Check{Name: "image", Detail: fmt.Sprintf("image %s: %v", image, err)})
		return finish()
	}
	if _, cross := variants.CrossFor(v.PlatformOf()); cross {
		r.Checks = append(r.Checks, Check{Name: "isa", NotApplicable: true, Detail: fmt.Sprintf("a %s image: x86-64 levels say nothing of its code, which runs here under emulation", v.PlatformOf())})
	} else if err := ISAGate(labels, flags); err != nil {
		r.Checks = append(r.Checks, Check{Name: "isa", Detail: err.Error()})
		r.Suite.Note = "not run: refused by the ISA gate"
		gated = true
		return finish()
	} else {
		r.Checks = append(r.Checks, Check{Name: "isa", OK: true, Detail: fmt.Sprintf("image needs %s; this CPU is x86-64-%s", orV1(labels[LabelISALevel]), machine.Level(flags))})
	}

	known, err := LoadKnown(v.Redis)
	if err != nil {
		known = &KnownList{}
		logf("%v", err)
	}
	known = known.ForPlatform(v.PlatformOf())

	// 1. The suite inside the build.
	switch {
	case v.Kind == variants.KindDistro:
		r.Suite = Suite{Note: "not run: a distribution package has no build tree"}
	case t.Pulled != nil:
		r.Suite = Suite{Note: "not run: a pulled image has no build tree (Redis's suite runs against the running image)"}
	case v.Layout > 1:
		r.Suite = Suite{Note: fmt.Sprintf("not run: layout draw %d of %s, the same objects linked in another order; the suite runs on draw 1 (%s), and the layout check proves this draw is its code", v.Layout, v.DrawOf, v.DrawOf)}
	default:
		logf("running the %s suite in the build", r.Profile)
		r.Suite = vf.buildSuite(ctx, v, t, r.Profile, known)
		logf("suite: %d passed, %d failed, %d known, %d skipped, %d ignored in %s",
			r.Suite.Passed, r.Suite.Failed, r.Suite.Known, r.Suite.Skipped, r.Suite.Ignored, r.Suite.Duration.Round(time.Second))
	}

	// 2. Checks on the finished image.
	logf("checking the image")
	t.SuiteServer = r.Suite.Server
	checks, found := ImageChecks(ctx, vf.Engine, v, t)
	r.Checks = append(r.Checks, checks...)
	if t.Pulled != nil || v.Kind == variants.KindImage {
		r.Discovered = found
	}
	// A pulled image of unknown build is tested as what it turned out to
	// be: its version picks the tests and the known failures, its
	// allocator the allocator-dependent ones.
	if v.Redis == "" && found.Redis != "" {
		v.Redis = found.Redis
		if k, err := LoadKnown(v.Redis); err == nil {
			known = k
		}
	}
	if v.Allocator == "" {
		v.Allocator = found.Allocator
	}

	// 3. The suite against the running image (on draw 1 of a spec only).
	if !vf.Opt.NoExternal && v.Layout < 2 {
		units := vf.Opt.ExternalUnits
		if len(units) == 0 {
			units = ExternalQuickUnits
		}
		tarball, err := vf.testTarball(ctx, v)
		var tmp string
		if err == nil {
			tmp, err = os.MkdirTemp("", "redis-variants-external-")
		}
		if err == nil {
			defer os.RemoveAll(tmp)
			var tree string
			if tree, err = ExtractTestTree(tarball, tmp); err == nil {
				logf("running %s against the image", strings.Join(units, " "))
				r.External = ExternalSuite(ctx, vf.Engine, image, tree, units, known, v.Allocator, v.Compiler.Family)
			}
		}
		if err != nil {
			r.External = &Suite{Aborted: "the external run could not start: " + err.Error()}
		}
	}
	return finish()
}

// testTarball is the source archive whose tests/ belong to v: its own
// source (whichever of its URL and fallbacks is cached), or for a
// reference or pulled image without one, Redis <version>'s from the plan's
// sources or the built-in catalogue, fetched into the cache when it is not
// there yet.
func (vf *Verifier) testTarball(ctx context.Context, v variants.Variant) (string, error) {
	src := v.Source
	if src.SHA256 == "" {
		s, err := variants.RedisSource(vf.Opt.Sources, v.Redis)
		if err != nil {
			return "", fmt.Errorf("no source to take Redis %s's tests from: %w", v.Redis, err)
		}
		src = s
	}
	c := sources.New(vf.Opt.SourcesDir)
	if sum, err := c.Resolve(src); err == nil {
		return c.Path(sum), nil
	}
	e, err := c.Fetch(ctx, src)
	if err != nil {
		return "", fmt.Errorf("the tests of Redis %s: %w", v.Redis, err)
	}
	return c.Path(e.SHA256), nil
}

func orV1(level string) string {
	if level == "" {
		return "the x86-64 baseline (no isa label)"
	}
	if level == "native" {
		return "the build CPU's flags (-march=native)"
	}
	return "x86-64-" + level
}

// buildSuite runs the profile in the build, applies the known list and
// retries each unknown failure once on its own. A tuned build's suite runs
// on the image's own redis-server, read from t's image and put in the
// build's tree (ServerContext).
func (vf *Verifier) buildSuite(ctx context.Context, v variants.Variant, t Target, profile string, known *KnownList) Suite {
	start := time.Now()
	if vf.BuildKit == nil || vf.Render == nil {
		return Suite{Ran: true, ExitCode: -1, Aborted: "no BuildKit client: the suite in the build could not run"}
	}
	rec, err := vf.Render(v)
	if err != nil {
		return Suite{Ran: true, ExitCode: -1, Aborted: "rendering the recipe: " + err.Error()}
	}
	if v.Kind == variants.KindOfficial {
		rec.Target = OfficialSuiteTarget
	} else {
		dir, err := vf.serverContext(ctx, v, t)
		if err != nil {
			return Suite{Ran: true, ExitCode: -1, Aborted: err.Error()}
		}
		defer os.RemoveAll(dir)
		rec.Contexts = maps.Clone(rec.Contexts)
		if rec.Contexts == nil {
			rec.Contexts = map[string]string{}
		}
		rec.Contexts[ServerContext] = dir
	}
	_, emulated := variants.CrossFor(v.PlatformOf())
	args, err := SuiteArgs(profile, vf.Opt.Units)
	if err != nil {
		return Suite{Ran: true, ExitCode: -1, Aborted: err.Error()}
	}
	var progress io.Writer
	if vf.Run != nil {
		if err := os.MkdirAll(vf.Run.Path("logs"), 0o755); err == nil {
			if f, err := os.Create(vf.Run.Path("logs", v.Name+".verify.log")); err == nil {
				defer f.Close()
				progress = f
			}
		}
	}
	out, err := RunSuite(ctx, vf.BuildKit, rec, args, "", progress)
	if err != nil {
		return Suite{Ran: true, ExitCode: -1, Args: args, Aborted: err.Error(), Duration: time.Since(start)}
	}
	var resolve UnitResolver
	tmp, err := os.MkdirTemp("", "redis-variants-index-")
	if err == nil {
		defer os.RemoveAll(tmp)
	}
	tarball, terr := vf.testTarball(ctx, v)
	if err == nil && terr == nil {
		if tree, err := ExtractTestTree(tarball, tmp); err == nil {
			if idx, err := LoadTestIndex(filepath.Join(tree, "tests")); err == nil {
				resolve = idx.Resolve
			}
		}
	}
	s, retry := Judge(ParseRuntest(out.Log, resolve), out.ExitCode, known, v.Allocator, v.Compiler.Family)
	s.Args = args
	s.Server = out.Server
	if vf.Run != nil {
		rel := filepath.Join("verify", v.Name+".runtest.log")
		if err := results.WriteFile(vf.Run.Path(rel), []byte(out.Log)); err == nil {
			s.Log = vf.Run.Path(rel)
		}
	}
	if out.Wall >= time.Duration(out.Seconds)*time.Second {
		s.Note = fmt.Sprintf("runtest ran %ds in the build (solve %s)", out.Seconds, out.Wall.Round(time.Second))
	} else {
		s.Note = fmt.Sprintf("the test stage was cached: same binaries and arguments as an earlier run (solve %s)", out.Wall.Round(time.Second))
	}
	for _, t := range retry {
		if t.Unit == "" {
			ApplyRetry(&s, Retry{Name: t.Name, Detail: "cannot retry: runtest did not say which unit the test is in"})
			continue
		}
		rs := time.Now()
		ro, err := RunSuite(ctx, vf.BuildKit, rec, RetryArgs(t.Unit, t.Name), fmt.Sprintf("retry-%d", time.Now().UnixNano()), progress)
		r := Retry{Name: t.Name, Unit: t.Unit, Duration: time.Since(rs)}
		if err != nil {
			r.Detail = "retry could not run: " + err.Error()
		} else {
			r.ExitCode = ro.ExitCode
			r.Passed, r.Detail = RetryPassed(ro.Log, ro.ExitCode, t.Name)
		}
		ApplyRetry(&s, r)
	}
	s.Duration = time.Since(start)
	if emulated {
		s.Note += fmt.Sprintf("; %s under user-mode emulation: redis-server, redis-cli and redis-benchmark ran under qemu, runtest's Tcl clients natively", v.PlatformOf())
	}
	return s
}

// ServerContext is the named context that brings the image's redis-server
// into the suite's build tree (dockerfiles/test.Dockerfile).
const ServerContext = "server"

// serverContext writes the redis-server of t's image into a new temporary
// folder, the suite's ServerContext.
func (vf *Verifier) serverContext(ctx context.Context, v variants.Variant, t Target) (string, error) {
	server := t.Server
	if server == "" {
		server = ServerBinary(v)
	}
	if vf.Engine == nil {
		return "", errors.New("no Docker Engine: the image's redis-server cannot be read for the suite")
	}
	bin, err := vf.Engine.CopyFileFromImage(ctx, t.Image, server)
	if err != nil {
		return "", fmt.Errorf("reading %s from %s for the suite: %w", server, t.Image, err)
	}
	dir, err := os.MkdirTemp("", "redis-variants-server-")
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "redis-server"), bin, 0o755); err != nil {
		os.RemoveAll(dir)
		return "", err
	}
	return dir, nil
}
