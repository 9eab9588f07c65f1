package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/redis-variants/redis-variants/bench"
	"github.com/redis-variants/redis-variants/builder"
	"github.com/redis-variants/redis-variants/engine"
	"github.com/redis-variants/redis-variants/history"
	"github.com/redis-variants/redis-variants/rank"
	"github.com/redis-variants/redis-variants/report"
	"github.com/redis-variants/redis-variants/results"
	"github.com/redis-variants/redis-variants/variants"
)

// Rank ranks the run's trials and replicates and writes ranking.json and
// the reports. Bad trial files are left out and named.
func Rank(ctx context.Context, c Config, primary string) error {
	run, err := results.Find(c.RunDir, c.Runs, "bench")
	if err != nil {
		return err
	}
	unlock, err := c.holdRun(run.Dir, "rank")
	if err != nil {
		return err
	}
	defer unlock()
	dir := run.Dir
	trials, badTrials, err := results.LoadTrials(run)
	if err != nil {
		return err
	}
	reps, badReps, err := results.LoadReplicates(run)
	if err != nil {
		return err
	}
	mem, badMem, err := results.LoadMemory(run)
	if err != nil {
		return err
	}
	lplan, hasLatency, err := results.LoadLatencyPlan(run)
	if err != nil {
		return err
	}
	lat, badLat, err := results.LoadLatencyTrials(run)
	if err != nil {
		return err
	}
	bad := append(append(append(badTrials, badReps...), badMem...), badLat...)
	if len(trials) == 0 && len(reps) == 0 {
		if len(bad) > 0 {
			return fmt.Errorf("no readable trial in %s or pair in %s: %v", run.Path("trials"), run.Path("pairs"), bad)
		}
		return fmt.Errorf("no trial in %s and no pair in %s: run `redis-variants bench --run %s` first", run.Path("trials"), run.Path("pairs"), dir)
	}
	rc, th, problems := rankContext(run, primary)
	rc.Generated = time.Now()
	imageSizes(ctx, rc.Images)
	for _, s := range bad {
		fmt.Fprintf(c.Err, "warning: left out %v (bench --run %s measures it again)\n", s, dir)
		rc.Notes = append(rc.Notes, "left out: "+s.Error())
	}
	for _, p := range problems {
		fmt.Fprintf(c.Err, "warning: %s\n", p)
		rc.Notes = append(rc.Notes, p)
	}
	earlier, problems := earlierRuns(c.Runs, dir)
	for _, p := range problems {
		fmt.Fprintf(c.Err, "warning: %s\n", p)
	}
	ranker := &rank.Ranker{Thresholds: th, Memory: mem, Earlier: earlier, Latency: lat}
	if hasLatency {
		ranker.LatencyPlan = &lplan
	}
	stage := report.Reports(rank.Record(ranker, run), run, rc)
	r, err := stage.Rank(ctx, trials, reps)
	if err != nil {
		return err
	}
	out := c.Out
	fmt.Fprint(out, report.RankingTables(*r))
	if n := len(r.Warnings); n > 0 {
		fmt.Fprintf(out, "%d warning(s); see %s\n", n, run.Path(report.MarkdownFile))
	}
	fmt.Fprintf(out, "wrote %s, %s, %s, %s, %s\n", run.Path(results.RankingFile), run.Path(report.MarkdownFile),
		run.Path(report.CSVFile), run.Path(report.JSONFile), run.Path(report.HTMLFile))
	if !r.Answer.Given {
		if len(r.Images) < 2 {
			// one entry asks no ranking (an experiment about runtimes or
			// latency): its measures are its axes and its latency section
			fmt.Fprintf(out, "one image: no ranking asked of this run\n")
			return nil
		}
		return fmt.Errorf("%w: %s", bench.ErrNoAnswer, strings.Join(r.Answer.Why, "; "))
	}
	return nil
}

// rankContext gathers what the report says about the run from the files
// earlier stages left (plan.json, bench.json, builds/, verify/), each
// optional, and the thresholds the plan implies. problems names each of
// those files that is there and cannot be read, and what the report lacks
// for it: nothing is dropped without a word.
// MaxEarlierRuns is how many of the latest earlier runs the run effect is
// measured on.
const MaxEarlierRuns = 10

// earlierRuns loads the co-scheduled rankings of the runs under root
// older than dir (by name: run IDs are times), the latest
// MaxEarlierRuns; the ranker keeps those of the same machine kind and
// benchmarks. A ranking that cannot be read is named and left out.
func earlierRuns(root, dir string) ([]rank.RunScores, []string) {
	if root == "" {
		return nil, nil
	}
	dirs, err := history.RunDirs(root)
	if err != nil {
		return nil, []string{fmt.Sprintf("earlier runs under %s cannot be listed (%v): the run effect is not measured", root, err)}
	}
	var out []rank.RunScores
	var problems []string
	for i := len(dirs) - 1; i >= 0 && len(out) < MaxEarlierRuns; i-- {
		d := dirs[i]
		if filepath.Base(d) >= filepath.Base(dir) {
			continue
		}
		rk, err := (&results.Run{Dir: d}).Ranking()
		if err != nil {
			problems = append(problems, fmt.Sprintf("earlier run %s left out of the run effect: %v", d, err))
			continue
		}
		if rk.Method != rank.MethodPairs {
			continue
		}
		out = append(out, rank.RunScores{Name: filepath.Base(d), Ranking: *rk})
	}
	slices.Reverse(out)
	return out, problems
}

func rankContext(run *results.Run, primary string) (ctx report.Context, th rank.Thresholds, problems []string) {
	ctx = report.Context{RunID: filepath.Base(run.Dir)}
	if m, err := run.Machine(); err == nil && m.CPUModel != "" {
		ctx.Host = m.String()
	}
	th = rank.DefaultThresholds()
	th.Primary = primary

	plan, perr := run.Plan()
	if perr != nil && !errors.Is(perr, fs.ErrNotExist) {
		problems = append(problems, fmt.Sprintf("the run's plan cannot be read (%v): the report lists no build facts, verification or profile thresholds", perr))
	}
	bj, berr := bench.LoadSummary(run)
	if berr != nil && !errors.Is(berr, fs.ErrNotExist) {
		problems = append(problems, fmt.Sprintf("the bench's summary cannot be read (%v): the report names no profile", berr))
	}
	if berr == nil && bj.Profile != "" {
		ctx.Profile = bj.Profile
		var p variants.Profile
		ok := false
		if perr == nil {
			p, ok = plan.Profiles[bj.Profile]
		}
		if ok {
			ctx.Profile = fmt.Sprintf("%s: tests %s, %d clients, pipelines %v, %d-byte values, keyspace %d prefilled; co-scheduled pairs: %d replicates%s x %d windows of %s per test after %s warm-up on fresh servers, %s before each later test (runtimes: %s; axes: %d replicates); %d standalone trial(s) per image, runtime and test",
				p.Name, strings.Join(p.Tests, " "), p.Clients, p.Pipelines, p.DataSize, p.Keyspace, p.Replicates, extendsTo(p), p.Windows, p.Duration, p.Warmup, p.WarmupNext, p.Runtimes, p.AxisReplicates, p.Trials)
			if p.Trials > 0 {
				th.MinTrials = p.Trials
			}
			th.Resolution = p.Resolution
			th.Looks = p.Looks
		}
		if e := bj.Extension; e != nil {
			ctx.Notes = append(ctx.Notes, extensionNote(e))
		}
		if q := bj.Sequential; q != nil {
			ctx.Notes = append(ctx.Notes, sequentialNote(q))
		}
	}
	if perr != nil {
		return ctx, th, problems
	}
	builds, badBuilds, err := results.LoadBuilds(run)
	if err != nil {
		problems = append(problems, fmt.Sprintf("the build records cannot be read (%v): no image is listed with its build facts", err))
	}
	for _, s := range badBuilds {
		problems = append(problems, fmt.Sprintf("build record left out (%v): its image is listed without its build facts", s))
	}
	reports, badReports, err := results.LoadVerifications(run)
	if err != nil {
		problems = append(problems, fmt.Sprintf("the verification records cannot be read (%v): every image is listed as unverified", err))
	}
	for _, s := range badReports {
		problems = append(problems, fmt.Sprintf("verification record left out (%v): its image is listed as unverified", s))
	}
	if th.Primary == "" && len(plan.References) > 0 {
		th.Primary = plan.References[0].Name
	}
	th.Contrasts = twinContrasts(plan)
	th.Experiment = plan.Experiment
	for _, v := range plan.All() {
		info := report.ImageInfo{Name: v.Name, Kind: v.Kind, Allocator: v.Allocator, Libc: v.Libc}
		if v.Kind == variants.KindDistro {
			info.Libc = variants.LibcGlibc // Debian's package
		}
		if v.Kind == variants.KindVariant {
			info.Compiler = v.Compiler.String()
			flags := []string{"-" + v.Opt}
			if v.March != "" {
				flags = append(flags, "-march="+v.March)
			}
			if v.Mtune != "" {
				flags = append(flags, "-mtune="+v.Mtune)
			}
			if v.LTO != "" && v.LTO != "off" {
				flags = append(flags, "LTO "+v.LTO)
			}
			if v.Mcpu != "" {
				flags = append(flags, "-mcpu="+v.Mcpu)
			}
			flags = append(flags, v.CFlags...)
			if v.IsMusl() {
				flags = append(flags, "libc musl")
			}
			if p := v.PlatformOf(); p != engine.HostPlatform() {
				flags = append(flags, "for "+p)
				if _, built := builds[v.Name]; built {
					ctx.Notes = append(ctx.Notes, fmt.Sprintf("`%s` is a %s image: built and verified here (under emulation), not benchmarked, since only a matching CPU measures it (bench --images on such a host; history --from merges its rows)", v.Name, p))
				}
			}
			info.Flags = strings.Join(flags, " ")
		} else if v.IsMusl() {
			info.Flags = "libc musl"
		}
		if b, ok := builds[v.Name]; ok {
			info.Image, info.Digest = b.Image, b.ConfigDigest
			info.Build = strings.TrimSpace(b.Status + " " + b.Duration.Round(time.Second).String())
			info.Size = b.Size
			info.Origin = origin(v, b)
		}
		if vr, ok := reports[v.Name]; ok {
			info.Verify = vr.Summary()
			if d := vr.Discovered; d != nil {
				// a pulled image: what verification found it to be
				if info.Allocator == "" && d.Allocator != "" {
					info.Allocator = d.Allocator + " (found)"
				}
				if info.Libc == "" && d.Libc != "" {
					info.Libc = d.Libc + " (found)"
				}
			}
			if b, built := builds[v.Name]; built && b.ConfigDigest != "" && vr.ImageID != b.ConfigDigest {
				info.Verify = fmt.Sprintf("not verified: the verification describes image %q, not this one", vr.ImageID)
			}
		}
		ctx.Images = append(ctx.Images, info)
	}
	sort.SliceStable(ctx.Images, func(i, j int) bool {
		ri, rj := ctx.Images[i].Kind != variants.KindVariant, ctx.Images[j].Kind != variants.KindVariant
		return ri && !rj
	})
	return ctx, th, problems
}

// imageSizes fills the sizes builds recorded before they were recorded,
// from the local Docker Engine where it still has the image; a report
// without them is no failure, so nothing here is an error.
func imageSizes(ctx context.Context, ims []report.ImageInfo) {
	missing := false
	for _, im := range ims {
		missing = missing || im.Size == 0 && im.Image != ""
	}
	if !missing {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	eng, err := engine.New(ctx)
	if err != nil {
		return
	}
	defer eng.Close()
	for i := range ims {
		if ims[i].Size == 0 && ims[i].Image != "" {
			ims[i].Size, _ = eng.ImageSize(ctx, ims[i].Image)
		}
	}
}

// twinContrasts pairs every variant built with a trained step (PGO, BOLT)
// with the variant of the same spec without that step, when the plan has
// one: PGO against the same flags without it, BOLT against the same build
// (PGO included) without it.
func twinContrasts(plan *variants.Plan) []rank.Contrast {
	byID := map[string]string{}
	for _, v := range plan.Variants {
		byID[v.ID] = v.Name
	}
	var out []rank.Contrast
	for _, v := range plan.Variants {
		if v.PGO != nil {
			plain := v
			plain.PGO = nil
			if twin, ok := byID[variants.ID(plain)]; ok {
				out = append(out, rank.Contrast{Image: v.Name, Versus: twin, Label: "PGO vs the same flags without it"})
			}
		}
		if v.BOLT != nil {
			plain := v
			plain.BOLT = nil
			if twin, ok := byID[variants.ID(plain)]; ok {
				out = append(out, rank.Contrast{Image: v.Name, Versus: twin, Label: "BOLT vs the same build without it"})
			}
		}
	}
	return out
}

// origin says where an image came from, for the report: pulled (with the
// digest and platform), rebuilt from its recipe because no registry had
// it (with why), or built.
func origin(v variants.Variant, b builder.Result) string {
	switch {
	case b.Pulled != nil:
		return fmt.Sprintf("pulled %s as %s@%s (%s)", b.Pulled.Ref, b.Pulled.Resolved, b.Pulled.Digest, b.Pulled.Platform)
	case b.Origin == builder.OriginRebuilt:
		why := b.PullError
		if i := strings.LastIndex(why, ": "); i > 0 && len(why) > 120 {
			why = why[i+2:]
		}
		return fmt.Sprintf("rebuilt from the %s recipe: no registry has %s (%s)", v.Recipe, v.Image, why)
	case b.Status == builder.StatusOK && v.Kind == variants.KindOfficial:
		return "built from the " + v.Recipe + " recipe (pulling was not tried)"
	case b.Status == builder.StatusOK:
		return "built"
	}
	return ""
}

// extensionNote says what the bench added toward the profile's target.
func extensionNote(e *bench.Extension) string {
	var ps []string
	for _, p := range e.Pairs {
		w := "control"
		if !p.HalfWidth.IsNaN() {
			w = fmt.Sprintf("±%.2f%%", 100*float64(p.HalfWidth))
		}
		ps = append(ps, fmt.Sprintf("%s %d (+%d, %s)", p.Pair, p.Replicates, p.Added, w))
	}
	return fmt.Sprintf("Replicates added toward the profile's target of ±%.2f%%, decided by the intervals' widths alone: %d in %d round(s) over %s; it stopped because %s. Complete replicates per pair: %s.",
		100*e.Target, e.Added, e.Rounds, e.Elapsed.Round(time.Second), e.Stopped, strings.Join(ps, "; "))
}

// sequentialNote says what a sequential bench saw at each look and what
// each round measured.
func sequentialNote(q *bench.Sequential) string {
	var ls []string
	for _, l := range q.Taken {
		var ds []string
		for _, d := range l.Decisions {
			state := "settled"
			if !d.Settled {
				state = "not separated from " + strings.Join(d.Open, ", ")
			}
			ds = append(ds, fmt.Sprintf("under %s %s leads, %s", d.Runtime, d.Leader, state))
		}
		line := fmt.Sprintf("look %d: %s", l.Look, strings.Join(ds, "; "))
		if len(l.Next) > 0 {
			line += fmt.Sprintf(", so round %d measured %s", l.Look+1, strings.Join(l.Next, ", "))
		}
		ls = append(ls, line)
	}
	return fmt.Sprintf("The bench looked at the decision %d time(s) of the profile's %d: %s. It stopped because %s; the later rounds ran %d replicate(s) in %s. Each look spends its share of alpha, so the decision's error holds whichever look stopped it; the full ranking's intervals are those of the replicates measured, which the looks gave unevenly.",
		len(q.Taken), q.Looks, strings.Join(ls, "; "), q.Stopped, q.Added, q.Elapsed.Round(time.Second))
}

// extendsTo says how a profile's replicates grow toward its target ("" if
// they do not).
func extendsTo(p variants.Profile) string {
	if p.Looks > 1 {
		return fmt.Sprintf(" (then up to %d more rounds of %d for the pairs the decision is still waiting on, at %d looks in all)", p.Looks-1, p.Replicates, p.Looks)
	}
	if p.Target <= 0 || p.MaxReplicates <= p.Replicates || p.Extend <= 0 {
		return ""
	}
	return fmt.Sprintf(" (more toward ±%.2f%%, up to %d a pair within %s)", 100*p.Target, p.MaxReplicates, p.Extend)
}
