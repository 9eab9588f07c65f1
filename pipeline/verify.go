package pipeline

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/redis-variants/redis-variants/progress"
	"github.com/redis-variants/redis-variants/solve"

	"github.com/redis-variants/redis-variants/builder"
	"github.com/redis-variants/redis-variants/dockerfiles"
	"github.com/redis-variants/redis-variants/engine"
	"github.com/redis-variants/redis-variants/machine"
	"github.com/redis-variants/redis-variants/results"
	"github.com/redis-variants/redis-variants/variants"
	"github.com/redis-variants/redis-variants/verify"
)

type VerifyOptions struct {
	Profile    string
	Only       []string
	Units      []string
	NoExternal bool
	NoTable    bool // leave out the table on c.Out (run: each verification's line is printed as it ends)
	// Again verifies every image again, proofs kept from earlier runs
	// or not (verify.Reuse).
	Again bool
}

// ProofsDir is where passed verifications are kept for reuse.
func (c Config) ProofsDir() string { return filepath.Join(c.State, "cache", "verify") }

// Verify runs Redis's test suite and the image checks against every
// selected entry of the run (c.RunDir, else the latest), holding the machine
// lock; entries that were not built get a failed report saying why.
func Verify(ctx context.Context, c Config, o VerifyOptions) error {
	errw := c.Err
	if _, err := verify.SuiteArgs(o.Profile, nil); err != nil {
		return err
	}
	run, err := results.Find(c.RunDir, c.Runs, "build")
	if err != nil {
		return err
	}
	unlockRun, err := c.holdRun(run.Dir, "verify")
	if err != nil {
		return err
	}
	defer unlockRun()
	plan, vs, err := c.Select(o.Only)
	if err != nil {
		return err
	}
	builds, _, err := results.LoadBuilds(run)
	if err != nil {
		return err
	}
	eng, err := engine.New(ctx)
	if err != nil {
		return err
	}
	defer eng.Close()
	bkc, err := solve.Connect(ctx, c.BuildKit)
	if err != nil {
		return err
	}
	defer bkc.Close()
	sources := c.SourcesDir()
	ropt, err := dockerfiles.HostOptions(sources)
	if err != nil {
		fmt.Fprintln(errw, "warning:", err)
	}
	unlock, err := machine.Lock(ctx, machine.LockFile(c.State), "verify", errw)
	if err != nil {
		return err
	}
	defer unlock()

	p, closeP, err := c.printer()
	if err != nil {
		return err
	}
	defer closeP()
	shown := &verifyProgress{p: p}
	vf := &verify.Verifier{
		Engine: eng, BuildKit: bkc, Run: run,
		Render: func(v variants.Variant) (verify.Recipe, error) {
			r, err := dockerfiles.Render(v, ropt)
			return verify.Recipe{Dockerfile: r.Dockerfile, BuildArgs: r.BuildArgs, Contexts: r.Contexts, Platform: r.Platform}, err
		},
		Opt: verify.Options{Profile: o.Profile, Units: o.Units, NoExternal: o.NoExternal, SourcesDir: sources, Sources: plan.Sources, Log: shown},
	}
	var vi verify.Interface = vf
	if !o.Again {
		vi = verify.Reuse(c.ProofsDir(), run, vf.Opt, vf)
	}
	shown.next = verify.Record(run, vi)
	out := c.Out
	p.Println("verifying %d images of %s (profile %s)", len(vs), run.Dir, o.Profile)
	reports, err := verifyEntries(ctx, shown, run, vs, builds, o.Profile, errw)
	if err != nil {
		return err
	}
	var failed []string
	for _, r := range reports {
		if r.Status != verify.StatusPassed {
			failed = append(failed, r.Variant)
		}
	}
	if o.NoTable {
		out = io.Discard
	}
	fmt.Fprintf(out, "%-28s %-7s %7s %6s %5s %-12s %8s %9s %8s\n", "VARIANT", "STATUS", "PASSED", "FAILED", "KNOWN", "CHECKS", "EXTERNAL", "RUNTEST", "TIME")
	for _, r := range reports {
		ext := "-"
		if r.External != nil {
			ext = fmt.Sprintf("%d/%d", r.External.Passed, r.External.Passed+r.External.Failed)
		}
		rt := "-"
		if len(r.Suite.Units) > 0 {
			rt = r.Suite.Duration.Round(time.Second).String()
		}
		took := r.Duration.Round(time.Second).String()
		if r.ReusedFrom != "" {
			took = "reused"
		}
		fmt.Fprintf(out, "%-28s %-7s %7d %6d %5d %-12s %8s %9s %8s\n", r.Variant, r.Status, r.Suite.Passed, r.Suite.Failed, r.Suite.Known,
			results.CountChecks(r.Checks).String(), ext, rt, took)
		for _, p := range r.Problems {
			fmt.Fprintf(out, "    ! %s\n", firstLineOf(p))
		}
	}
	p.Println("reports in %s", run.Path("verify"))
	if len(failed) > 0 {
		return fmt.Errorf("%d of %d variants failed verification: %s", len(failed), len(reports), strings.Join(failed, ", "))
	}
	return nil
}

// verifyProgress shows each verification as a live task (the verifier's
// latest log line is its status) and ends it with one line: the outcome,
// the suite's counts, the checks and the time; a failure's problems
// follow it.
type verifyProgress struct {
	next verify.Interface
	p    *progress.Printer
	mu   sync.Mutex
	cur  *progress.Task
}

var _ verify.Interface = (*verifyProgress)(nil)

func (w *verifyProgress) Verify(ctx context.Context, v variants.Variant, t verify.Target) verify.Report {
	task := w.p.Start(v.Name)
	w.mu.Lock()
	w.cur = task
	w.mu.Unlock()
	r := w.next.Verify(ctx, v, t)
	w.mu.Lock()
	w.cur = nil
	w.mu.Unlock()
	task.Remove()
	line := fmt.Sprintf("[%s] verify in %s: %s", v.Name, progress.Duration(r.Duration), r.Summary())
	if r.ReusedFrom != "" {
		line = fmt.Sprintf("[%s] verify: reused from run %s (%s there): %s", v.Name, r.ReusedFrom, progress.Duration(r.Duration), r.Summary())
	}
	switch r.Status {
	case verify.StatusPassed:
		w.p.Println("%s", line)
	case verify.StatusInterrupted:
	default:
		for _, pr := range r.Problems {
			line += "\n    ! " + firstLineOf(pr)
		}
		w.p.Failure("%s", line)
	}
	return r
}

// Write takes the verifier's log: its latest line is the running task's
// status.
func (w *verifyProgress) Write(b []byte) (int, error) {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	last := lines[len(lines)-1]
	if _, rest, ok := strings.Cut(last, ": "); ok && strings.HasPrefix(last, "verify ") {
		last = rest
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.cur.Update("%s", last)
	return len(b), nil
}

func notBuilt(errw io.Writer, run *results.Run, v variants.Variant, profile, why string) verify.Report {
	r := verify.Report{Variant: v.Name, ID: v.ID, Status: verify.StatusFailed, Profile: profile,
		Problems: []string{"not verified: " + why}, Finished: time.Now().UTC()}
	if err := verify.Write(run, r); err != nil {
		fmt.Fprintln(errw, "writing report:", err)
	}
	return r
}

func firstLineOf(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	if len(l) > 200 {
		l = l[:200] + "..."
	}
	return l
}

// verifyEntries verifies through vf every entry of vs whose build in builds
// succeeded and is of the same spec, and gives each other entry a failed
// report saying why (written to run, so bench and publish see it). An
// interruption stops it: the entry being verified gets no report.
// pgoTwin is the successful build of v's spec without PGO, when v is a
// PGO build and the run has one.
func pgoTwin(v variants.Variant, builds map[string]builder.Result) (builder.Result, bool) {
	if v.PGO == nil {
		return builder.Result{}, false
	}
	plain := v
	plain.PGO = nil
	id := variants.ID(plain)
	for _, b := range builds {
		if b.Status == builder.StatusOK && b.Variant.ID == id {
			return b, true
		}
	}
	return builder.Result{}, false
}

func verifyEntries(ctx context.Context, vf verify.Interface, run *results.Run, vs []variants.Variant, builds map[string]builder.Result, profile string, errw io.Writer) ([]verify.Report, error) {
	var reports []verify.Report
	for _, v := range vs {
		if ctx.Err() != nil {
			return reports, ctx.Err()
		}
		b, ok := builds[v.Name]
		var r verify.Report
		switch {
		case !ok:
			r = notBuilt(errw, run, v, profile, "no build result in "+run.Path("builds"))
		case b.Status != builder.StatusOK:
			r = notBuilt(errw, run, v, profile, fmt.Sprintf("the build %s: %s", b.Status, b.Error))
		case b.Variant.ID != v.ID:
			r = notBuilt(errw, run, v, profile, fmt.Sprintf("the build is of spec %s but the variants file now says %s: build again", b.Variant.ID, v.ID))
		default:
			t := verify.Target{Image: b.Image, ID: b.ConfigDigest, Recipe: b.Recipe, Server: b.Server, Pulled: b.Pulled, Redis: builder.PulledRedis(b)}
			if tw, ok := pgoTwin(v, builds); ok {
				t.Twin, t.TwinServer, t.TwinID = tw.Image, tw.Server, tw.ConfigDigest
			}
			if v.Layout > 1 {
				if f, ok := builds[v.DrawOf]; ok && f.Status == builder.StatusOK {
					t.First, t.FirstServer, t.FirstID = f.Image, f.Server, f.ConfigDigest
				}
			}
			r = vf.Verify(ctx, v, t)
			if r.Status == verify.StatusInterrupted {
				return reports, fmt.Errorf("verifying %s: interrupted (nothing written for it; run again to verify it): %w", v.Name, ctx.Err())
			}
		}
		reports = append(reports, r)
	}
	return reports, nil
}
