package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/redis-variants/redis-variants/builder"
	"github.com/redis-variants/redis-variants/gate"
	"github.com/redis-variants/redis-variants/publish"
	"github.com/redis-variants/redis-variants/rank"
	"github.com/redis-variants/redis-variants/results"
	"github.com/redis-variants/redis-variants/variants"
)

// GateOptions are the flags of `redis-variants gate`.
type GateOptions struct {
	Baseline  string  // REGISTRY/REPO:TAG (or @DIGEST): the image published now
	Candidate string  // an image reference to measure against it, or
	Build     string  // a variant of the file to build and measure against it
	Margin    float64 // the slowdown allowed (0.05 = 5%)
	Profile   string  // the file's benchmark profile the pairs follow
	Runtime   string  // the runtime configuration ("" = the file's first)
	Insecure  bool    // plain HTTP for a registry that is not local
	JSON      bool    // print the decision as JSON
	// Bench gives the bench's generator, seed and budget (its profile and
	// trials are the gate's).
	Bench BenchOptions
}

// Gate names the images of a gate run.
const (
	GateBaseline  = "baseline"
	GateCandidate = "candidate"
)

// Gate measures a candidate (an image, or a variant of the file built
// now) co-scheduled against the baseline image, which stands as the
// primary reference, so the run's A/A control is the baseline against
// itself; it decides with gate.Decide, records gate.json in a new run
// folder and prints the decision. The error is nil whatever the outcome:
// the caller turns Decision.ExitCode into the exit status.
func Gate(ctx context.Context, c Config, o GateOptions) (*gate.Decision, error) {
	if (o.Candidate == "") == (o.Build == "") {
		return nil, fmt.Errorf("gate: give one candidate, --candidate IMAGE or --build VARIANT")
	}
	if !(o.Margin > 0 && o.Margin < 1) {
		return nil, fmt.Errorf("gate: --margin %g: want a share between 0 and 1 (0.05 = 5%%)", o.Margin)
	}
	plan, err := c.Plan()
	if err != nil {
		return nil, err
	}
	base, err := pinnedImage(ctx, o.Baseline, GateBaseline, true, o.Insecure)
	if err != nil {
		return nil, fmt.Errorf("gate: --baseline: %w", err)
	}
	var cands []variants.Variant
	if o.Build != "" {
		v, ok := plan.Lookup(o.Build)
		if !ok || v.Reference {
			return nil, fmt.Errorf("gate: --build %s: no such variant in %s", o.Build, c.File)
		}
		// a spec brings its layout draws: the verdict is about the build
		cands, err = plan.Select([]string{o.Build})
		if err != nil {
			return nil, err
		}
	} else {
		v, err := pinnedImage(ctx, o.Candidate, GateCandidate, false, o.Insecure)
		if err != nil {
			return nil, fmt.Errorf("gate: --candidate: %w", err)
		}
		cands = []variants.Variant{v}
	}
	subject := cands[0].Name
	prof, ok := plan.Profiles[o.Profile]
	if !ok {
		return nil, fmt.Errorf("gate: --profile %s: no such profile in %s", o.Profile, c.File)
	}
	// the pairs alone, worked toward the margin's precision
	prof.Memory, prof.Latency, prof.AxisReplicates, prof.Runtimes = nil, nil, 0, variants.RuntimesFirst
	prof.Target = o.Margin / 4
	prof.Looks = 1 // the gate's question is one pair against a margin: the width-driven extension, not the decision's looks
	prof.Resolution = max(prof.Resolution, o.Margin)
	rts, err := selectRuntime(plan.Runtimes, o.Runtime)
	if err != nil {
		return nil, err
	}
	gp := &variants.Plan{File: plan.File, References: []variants.Variant{base}, Variants: cands,
		Runtimes: rts, Profiles: map[string]variants.Profile{o.Profile: prof}, Sources: plan.Sources}

	if c.RunDir == "" {
		c.RunDir = filepath.Join(c.Runs, results.NewRunID(time.Now()))
	}
	run, err := results.Open(c.RunDir)
	if err != nil {
		return nil, err
	}
	unlock, err := c.holdRun(run.Dir, "gate")
	if err != nil {
		return nil, err
	}
	defer unlock()
	c.heldRun = run.Dir
	if err := writeMachine(run.Dir); err != nil {
		return nil, err
	}
	if err := run.WritePlan(gp); err != nil {
		return nil, err
	}
	fmt.Fprintf(c.Err, "gate: %s against %s (%s), margin %.1f%%, into %s\n", subject, base.Image, o.Baseline, 100*o.Margin, run.Dir)
	p, closeP, err := c.printer()
	if err != nil {
		return nil, err
	}
	res, err := buildWith(ctx, c, c.Err, "gate", builder.Options{Run: run, RunsRoot: c.Runs, Progress: p}, gp.All())
	closeP()
	if err != nil {
		return nil, fmt.Errorf("gate: %w", err)
	}
	for _, r := range res {
		if r.Status == builder.StatusFailed {
			return nil, fmt.Errorf("gate: %s: %s", r.Variant.Name, r.Error)
		}
	}
	bo := o.Bench
	bo.Profile, bo.Trials = o.Profile, -1
	inner := c // the stages' own output goes with the progress: stdout is the decision's
	inner.Out = c.Err
	if err := Bench(ctx, inner, bo); err != nil {
		return nil, err
	}
	if err := Rank(ctx, inner, ""); err != nil {
		return nil, err
	}
	rk, err := run.Ranking()
	if err != nil {
		return nil, err
	}
	d := gate.Decide(gateInput(rk, subject, rts[0].Name, o.Margin))
	if err := run.WriteJSON(results.GateFile, gateRecord{Decision: d, Baseline: o.Baseline, BaselineImage: base.Image,
		CandidateName: subject, CandidateImage: candidateImage(res, subject), Runtime: rts[0].Name, Profile: o.Profile}); err != nil {
		return nil, err
	}
	if o.JSON {
		js, err := json.MarshalIndent(d, "", "  ")
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(c.Out, "%s\n", js)
	} else {
		fmt.Fprintf(c.Out, "gate: %s (exit %d): %s\nA/A control (the baseline against itself): %s\n", d.Outcome, d.ExitCode, d.Reason, d.Control)
	}
	return &d, nil
}

// gateRecord is gate.json: the decision and the exact images it is about.
type gateRecord struct {
	gate.Decision
	Baseline       string `json:"baseline"`        // as given
	BaselineImage  string `json:"baseline_image"`  // by digest
	CandidateName  string `json:"candidate_name"`  // its name in the run
	CandidateImage string `json:"candidate_image"` // the image ID measured (or the pulled reference)
	Runtime        string `json:"runtime"`
	Profile        string `json:"profile"`
}

func candidateImage(res []builder.Result, name string) string {
	for _, r := range res {
		if r.Variant.Name == name {
			if r.Pulled != nil && r.Pulled.Digest != "" && !strings.Contains(r.Pulled.Resolved, "@") {
				return r.Pulled.Resolved + "@" + r.Pulled.Digest
			}
			if r.Pulled != nil {
				return r.Pulled.Resolved
			}
			return r.Image
		}
	}
	return ""
}

// gateInput reads the candidate's primary score and the A/A control under
// rt from a ranking.
func gateInput(rk *rank.Ranking, subject, rt string, margin float64) gate.Input {
	nan := gate.Interval{Ratio: -1, Lo: -1, Hi: -1}
	in := gate.Input{Margin: margin, Candidate: nan, Control: nan, Answered: rk.Answer.Given, Why: rk.Answer.Why}
	for _, p := range rk.Pairs {
		if p.Family == rank.FamilyPrimary && p.Runtime == rt && p.Test == "" && p.Image == subject {
			in.Candidate = gate.Interval{Ratio: float64(p.Ratio), Lo: float64(p.Lo), Hi: float64(p.Hi)}
		}
	}
	for _, ctl := range rk.Controls {
		if ctl.Runtime == rt {
			in.Control = gate.Interval{Ratio: float64(ctl.Ratio), Lo: float64(ctl.Lo), Hi: float64(ctl.Hi)}
			in.ControlSignificant = ctl.Significant
		}
	}
	return in
}

// selectRuntime is the runtime named (or the first of rts).
func selectRuntime(rts []variants.Runtime, name string) ([]variants.Runtime, error) {
	if len(rts) == 0 {
		return nil, fmt.Errorf("the variants file has no runtime configuration")
	}
	if name == "" {
		return rts[:1], nil
	}
	for _, r := range rts {
		if r.Name == name {
			return []variants.Runtime{r}, nil
		}
	}
	return nil, fmt.Errorf("--runtime %s: no such runtime configuration", name)
}

// pinnedImage is an image entry for the image s names, pinned to the
// digest the registry gives for it now (so the run measures, and records,
// exactly that image). Its Redis version comes from the variant spec label
// when it was built by redis-variants.
func pinnedImage(ctx context.Context, s, entryName string, reference, insecure bool) (variants.Variant, error) {
	ref, err := publish.Reference(s, insecure)
	if err != nil {
		return variants.Variant{}, err
	}
	opts := publish.ReadOptions(ctx)
	pinned, err := publish.ResolveDigest(ctx, ref, opts...)
	if err != nil {
		return variants.Variant{}, err
	}
	v := variants.Variant{Kind: variants.KindImage, Name: entryName, Image: pinned.String(), Reference: reference,
		Description: "gate: " + s}
	if img, err := remote.Image(pinned, opts...); err == nil {
		if cf, err := img.ConfigFile(); err == nil {
			var spec variants.Variant
			if json.Unmarshal([]byte(cf.Config.Labels[publish.KeySpec]), &spec) == nil {
				v.Redis = spec.Redis
			}
		}
	}
	v.ID = variants.ID(v)
	return v, nil
}
