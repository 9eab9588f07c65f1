package pipeline

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis-variants/redis-variants/bench"
	"github.com/redis-variants/redis-variants/machine"
	"github.com/redis-variants/redis-variants/progress"
	"github.com/redis-variants/redis-variants/publish"
	"github.com/redis-variants/redis-variants/results"
	"github.com/redis-variants/redis-variants/variants"
)

// RunOptions are the flags of `redis-variants run`: the stages' own flags
// that matter for a whole run.
type RunOptions struct {
	Only          []string
	Jobs          int
	VerifyProfile string
	BenchProfile  string
	Runtimes      []string
	Push          string
	Sign          string // publish's --sign: the private key the pushed images are signed with
	NoVerify      bool
	VerifyAgain   bool     // verify's --again: no proof kept from an earlier run is reused
	CacheTo       string   // build's --cache-to
	CacheFrom     []string // build's --cache-from
	ProfilesTo    string   // build's --profiles-to
	ProfilesFrom  []string // build's --profiles-from
	Force         bool     // build's --force: solve even what is up to date
	// Generator is bench's load generator (nil: this executable's
	// loadgen; a test passes bench.InProcess).
	Generator bench.Generator
}

// Run drives every stage on one run folder: build, verify (unless
// o.NoVerify), bench, rank and reports, and publish when o.Push is set. A
// stage that fails for some entries does not stop the later ones; an
// interruption does.
func Run(ctx context.Context, c Config, o RunOptions) error {
	if o.Sign != "" {
		// a key that cannot be read fails now, not after the bench
		if o.Push == "" {
			return fmt.Errorf("--sign signs what --to publishes: give --to too")
		}
		if _, err := publish.LoadSigner(o.Sign); err != nil {
			return err
		}
	}
	if len(o.Only) > 0 {
		// every variant is measured against the references: --only
		// picks variants, and the references come along
		plan, err := variants.Load(c.File)
		if err != nil {
			return err
		}
		o.Only = withReferences(o.Only, plan)
	}
	if c.RunDir == "" {
		c.RunDir = filepath.Join(c.Runs, results.NewRunID(time.Now()))
	}
	p, closeP, err := c.printer()
	if err != nil {
		return err
	}
	defer closeP()
	c.Printer = p
	unlock, err := c.holdRun(c.RunDir, "run")
	if err != nil {
		return err
	}
	defer unlock()
	c.heldRun = c.RunDir
	begin := time.Now()
	p.Println("run folder: %s", c.RunDir)
	if err := writeMachine(c.RunDir); err != nil {
		return err
	}
	var failed []error
	var took []stageTime
	stage := func(name string, f func() error) bool {
		start := time.Now()
		p.Stage(name)
		err := f()
		p.EndStage()
		took = append(took, stageTime{name, time.Since(start)})
		p.Println("== %s: %s ==", name, progress.Duration(time.Since(start)))
		if err != nil {
			if ctx.Err() != nil {
				failed = append(failed, fmt.Errorf("%s: interrupted: %w", name, err))
				return false
			}
			p.Failure("%s: %v", name, err)
			failed = append(failed, fmt.Errorf("%s: %w", name, err))
		}
		return true
	}
	ok := stage("build", func() error {
		return Build(ctx, c, BuildOptions{Only: o.Only, Jobs: o.Jobs, CacheTo: o.CacheTo, CacheFrom: o.CacheFrom,
			ProfilesTo: o.ProfilesTo, ProfilesFrom: o.ProfilesFrom, Force: o.Force, NoTable: true})
	})
	if ok && !o.NoVerify {
		ok = stage("verify", func() error {
			return Verify(ctx, c, VerifyOptions{Profile: o.VerifyProfile, Only: o.Only, NoTable: true, Again: o.VerifyAgain})
		})
	}
	if ok {
		ok = stage("bench", func() error {
			return Bench(ctx, c, BenchOptions{Profile: o.BenchProfile, Only: o.Only, Runtimes: o.Runtimes, Generator: o.Generator})
		})
	}
	if ok {
		ok = stage("rank", func() error { return Rank(ctx, c, "") })
	}
	if ok && o.Push != "" {
		stage("publish", func() error {
			return Publish(ctx, c, PublishOptions{To: o.Push, Repo: publish.DefaultRepo, Runtime: "host", Sign: o.Sign})
		})
	}
	fmt.Fprintf(c.Out, "\ntime by stage: %s\n", timeSplit(took, setupTime(c.State, begin), time.Since(begin)))
	fmt.Fprintf(c.Out, "results: %s (report.md, report.html; full logs in %s)\n", c.RunDir, filepath.Join(c.RunDir, "logs"))
	if len(failed) > 0 {
		return fmt.Errorf("run finished with failures:\n  %w", errors.Join(failed...))
	}
	return nil
}

type stageTime struct {
	name string
	d    time.Duration
}

// timeSplit is one line: each stage's time and the whole run's, with the
// set-up that ran just before it when there was one (make run).
func timeSplit(took []stageTime, setup, total time.Duration) string {
	var parts []string
	if setup > 0 {
		parts = append(parts, "set-up "+progress.Duration(setup))
		total += setup
	}
	for _, t := range took {
		parts = append(parts, t.name+" "+progress.Duration(t.d))
	}
	return strings.Join(parts, ", ") + "; total " + progress.Duration(total)
}

// SetupTimeFile is where scripts/setup.sh writes how many seconds it took.
const SetupTimeFile = "setup.seconds"

// setupTime is how long scripts/setup.sh took, when it finished within
// two minutes before the run began (make run: set-up, build, then run).
func setupTime(state string, begin time.Time) time.Duration {
	path := filepath.Join(state, "logs", SetupTimeFile)
	fi, err := os.Stat(path)
	if err != nil || begin.Sub(fi.ModTime()) > 2*time.Minute || fi.ModTime().After(begin) {
		return 0
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || n < 0 {
		return 0
	}
	return time.Duration(n) * time.Second
}

// writeMachine records the machine a run measured on (machine.json), which
// history uses to group runs by CPU model and x86-64 level.
func writeMachine(dir string) error {
	run, err := results.Open(dir)
	if err != nil {
		return err
	}
	in, err := machine.Read()
	if err != nil {
		return err
	}
	return run.WriteMachine(in)
}

// withReferences is only with every reference of plan added: a run of
// some variants still measures them against the references.
func withReferences(only []string, plan *variants.Plan) []string {
	out := append([]string(nil), only...)
	for _, r := range plan.References {
		if !slices.Contains(out, r.Name) {
			out = append(out, r.Name)
		}
	}
	return out
}
