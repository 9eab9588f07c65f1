package pipeline

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strings"

	"github.com/redis-variants/redis-variants/rank"
	"github.com/redis-variants/redis-variants/results"
)

// Comparison is what compare prints with --json.
type Comparison struct {
	// Agreement is the two-run check (per-image z, Kendall τ): only when
	// two runs are compared.
	Agreement *rank.Agreement `json:"agreement,omitempty"`
	// Latency compares the two runs' fixed-rate latency percentiles (two
	// runs, both with the measure).
	Latency *rank.LatencyAgreement `json:"latency,omitempty"`
	// Merged is every run merged with a random run effect.
	Merged rank.Merged `json:"merged"`
}

// Compare prints on c.Out how the rankings of the run folders dirs (two
// or more) agree under runtime ("" = the first run's first ranked
// runtime): for two runs the per-image z between their primary scores and
// Kendall's τ of their orders over the pairs both separate; for any
// number, the runs merged with a random run effect (rank.Merge): the run
// effect measured over the images, each image's merged score with its
// interval, and the ranks and verdicts of one family over them. Markdown,
// or JSON with asJSON.
func Compare(c Config, dirs []string, runtime string, asJSON bool) error {
	if len(dirs) < 2 {
		return fmt.Errorf("compare needs two run folders or more, got %d", len(dirs))
	}
	runs, err := loadRuns(dirs)
	if err != nil {
		return err
	}
	return writeComparison(c.Out, runs, runtime, asJSON)
}

// loadRuns reads the ranking of each run folder.
func loadRuns(dirs []string) ([]rank.RunScores, error) {
	var runs []rank.RunScores
	for _, dir := range dirs {
		rk, err := (&results.Run{Dir: dir}).Ranking()
		if err != nil {
			return nil, fmt.Errorf("%s (run `redis-variants rank --run %s`): %w", dir, dir, err)
		}
		runs = append(runs, rank.RunScores{Name: filepath.Base(dir), Ranking: *rk})
	}
	return runs, nil
}

// writeComparison prints on out how runs agree and their merge (Compare).
func writeComparison(out io.Writer, runs []rank.RunScores, runtime string, asJSON bool) error {
	rt := runtime
	if rt == "" && len(runs[0].Ranking.Standings) > 0 {
		rt = runs[0].Ranking.Standings[0].Runtime
	}
	for _, p := range runs[0].Ranking.Pairs {
		if rt == "" && p.Family == rank.FamilyPrimary {
			rt = p.Runtime
		}
	}
	var cmp Comparison
	if len(runs) == 2 {
		ag := rank.Agree(runs[0].Ranking, runs[1].Ranking, rt)
		cmp.Agreement = &ag
		cmp.Latency = rank.AgreeLatency(runs[0].Ranking.Latency, runs[1].Ranking.Latency)
	}
	m, mergeErr := rank.Merge(runs, rt, rank.DefaultThresholds())
	if mergeErr != nil {
		var names []string
		for _, r := range runs {
			names = append(names, r.Name)
		}
		mergeErr = fmt.Errorf("merging %s: %w", strings.Join(names, ", "), mergeErr)
		if cmp.Latency == nil || len(cmp.Latency.Cells) == 0 {
			return mergeErr
		}
	}
	cmp.Merged = m
	if asJSON {
		js, err := json.MarshalIndent(cmp, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(out, "%s\n", js)
		return err
	}
	if ag := cmp.Agreement; ag != nil && len(ag.Images) > 0 {
		fmt.Fprintf(out, "Runs %s (A) and %s (B) under %s, each image vs the primary reference:\n\n", runs[0].Name, runs[1].Name, rt)
		fmt.Fprintln(out, "| image | A | B | z (A vs B) |")
		fmt.Fprintln(out, "|---|---:|---:|---:|")
		for _, im := range ag.Images {
			fmt.Fprintf(out, "| `%s` | %.4f | %.4f | %+.2f |\n", im.Image, float64(im.A), float64(im.B), float64(im.Z))
		}
		fmt.Fprintf(out, "\nlargest |z|: %s; Σz² = %s on %d df; Kendall τ over the %d pairs both runs separate: %s; over every pair: %s\n\n",
			f2(float64(ag.MaxAbsZ)), f2(float64(ag.SumZ2)), len(ag.Images), ag.TauPairs, f2(float64(ag.Tau)), f2(float64(ag.TauAll)))
	}
	if la := cmp.Latency; la != nil && len(la.Cells) > 0 {
		fmt.Fprintf(out, "Fixed-rate latency, runs %s (A, %.0f req/s) and %s (B, %.0f req/s), each cell's percentile (µs, geometric mean over its trials):\n\n", runs[0].Name, la.Rates[0], runs[1].Name, la.Rates[1])
		fmt.Fprintln(out, "| image | runtime | percentile | A | B | z (A vs B) |")
		fmt.Fprintln(out, "|---|---|---|---:|---:|---:|")
		for _, p := range la.Cells {
			fmt.Fprintf(out, "| `%s` | `%s` | %s | %.1f | %.1f | %+.2f |\n", p.Image, p.Runtime, p.Q, float64(p.AUs), float64(p.BUs), float64(p.Z))
		}
		fmt.Fprintf(out, "\nlargest |z|: %s; Σz² = %s on %d df (χ²'s 95%% band [%.1f, %.1f])\n\n", f2(float64(la.MaxAbsZ)), f2(float64(la.SumZ2)), len(la.Cells), la.Band[0], la.Band[1])
	}
	if mergeErr != nil {
		// the latency agreement is the answer here; the scores could not be merged
		if rt == "" {
			fmt.Fprintln(out, "No co-scheduled scores to merge: neither run ranked images in pairs.")
			return nil
		}
		fmt.Fprintf(out, "The runs' scores are not merged: %v\n", mergeErr)
		return nil
	}
	fmt.Fprintf(out, "%d runs merged under %s with a random run effect, each image vs %s:\n\n", len(runs), rt, m.Primary)
	fmt.Fprint(out, "| rank | image |")
	for _, r := range runs {
		fmt.Fprintf(out, " %s |", r.Name)
	}
	fmt.Fprintln(out, " merged [95%] | verdict |")
	fmt.Fprint(out, "|---:|---|")
	for range runs {
		fmt.Fprint(out, "---:|")
	}
	fmt.Fprintln(out, "---|---|")
	per := map[string]rank.MergedImage{}
	for _, mi := range m.Images {
		per[mi.Image] = mi
	}
	for _, e := range m.Standings.Entries {
		rankS := fmt.Sprint(e.Rank)
		if e.RankHi > e.Rank {
			rankS = fmt.Sprintf("%d–%d", e.Rank, e.RankHi)
		}
		fmt.Fprintf(out, "| %s | `%s` |", rankS, e.Image)
		for i := range runs {
			v := math.NaN()
			if mi, ok := per[e.Image]; ok {
				v = float64(mi.PerRun[i])
			} else if e.Image == m.Primary {
				v = 1
			}
			fmt.Fprintf(out, " %s |", f4(v))
		}
		verdict := rank.Self
		for _, s := range e.Versus {
			if s.Reference == m.Primary && s.Verdict != rank.Self {
				verdict = s.Verdict
			}
		}
		fmt.Fprintf(out, " %s [%s, %s] | %s |\n", f4(float64(e.Score)), f4(float64(e.Lo)), f4(float64(e.Hi)), verdict)
	}
	if re := m.RunEffect; re != nil {
		fmt.Fprintf(out, "\nrun effect: Q = %.2f on %d df over %d images (χ² 95%% band without one [%.2f, %.2f], p = %.2g); τ = %.2f%% against a median within-run SE of %.2f%%: one run's intervals are %.2f× too narrow for a claim beyond that run\n",
			float64(re.Q), re.DF, re.Images, float64(re.QLo), float64(re.QHi), float64(re.P), 100*float64(re.Tau), 100*float64(re.MedianSE), float64(re.Allowance))
	}
	var specs, single []string
	for _, im := range m.Images {
		if im.Estimate.LayoutVar > 0 {
			specs = append(specs, "`"+im.Image+"`")
		} else {
			single = append(single, "`"+im.Image+"`")
		}
	}
	switch {
	case len(specs) == 0:
		fmt.Fprintln(out, "The merged intervals cover these runs' conditions and each run's servers: a claim about these binaries on this machine kind, not about another build of the same flags.")
	default:
		fmt.Fprintf(out, "The merged intervals cover these runs' conditions and each run's servers; those of %s keep each run's layout error whole (the runs ran the same draws, so merging does not average layout out): a claim about those build specs on this machine kind. Those of %s cover one binary each.\n",
			strings.Join(specs, ", "), strings.Join(single, ", "))
	}
	return nil
}

func f2(f float64) string {
	if math.IsNaN(f) {
		return "n/a"
	}
	return fmt.Sprintf("%.2f", f)
}

func f4(f float64) string {
	if math.IsNaN(f) {
		return "–"
	}
	return fmt.Sprintf("%.4f", f)
}
