// Package report writes a ranking as report.md, report.csv, report.json and
// a self-contained report.html (inline CSS, JS and SVG; works offline).
package report

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/redis-variants/redis-variants/rank"
	"github.com/redis-variants/redis-variants/results"
)

// Context is what the report says besides the statistics: where the
// numbers come from. Every field is optional.
type Context struct {
	Title     string      `json:"title,omitempty"`     // default "Redis variants: benchmark ranking"
	RunID     string      `json:"run_id,omitempty"`    // run folder name
	Profile   string      `json:"profile,omitempty"`   // benchmark profile name and settings, one line
	Host      string      `json:"host,omitempty"`      // machine description (CPUs, kernel, Docker version)
	Generated time.Time   `json:"generated,omitempty"` // zero: not printed (golden files)
	Images    []ImageInfo `json:"images,omitempty"`    // what each image is, from the plan, builds and verify stages
	Notes     []string    `json:"notes,omitempty"`     // anything else the reader should know (e.g. unreadable trial files)
}

// ImageInfo describes one image for the report.
type ImageInfo struct {
	Name      string `json:"name"`
	Kind      string `json:"kind,omitempty"`      // variant, distro-package, official
	Image     string `json:"image,omitempty"`     // Docker reference
	Digest    string `json:"digest,omitempty"`    // config digest
	Compiler  string `json:"compiler,omitempty"`  // e.g. gcc-12
	Flags     string `json:"flags,omitempty"`     // -O, -march, LTO, extra flags, one line
	Allocator string `json:"allocator,omitempty"` // jemalloc, mimalloc, ...
	Libc      string `json:"libc,omitempty"`      // glibc, musl
	Size      int64  `json:"size,omitempty"`      // image size in bytes, as Docker Engine reports it
	Build     string `json:"build,omitempty"`     // build status and duration, e.g. "ok 3m12s"
	Origin    string `json:"origin,omitempty"`    // built, pulled (reference, digest, platform) or rebuilt from a recipe (and why)
	Verify    string `json:"verify,omitempty"`    // verify status, e.g. "passed (quick)"
}

func (c Context) title() string {
	if c.Title != "" {
		return c.Title
	}
	return "Redis variants: benchmark ranking"
}

// Files written by Write.
const (
	MarkdownFile = "report.md"
	CSVFile      = "report.csv"
	PairsCSVFile = "report-pairs.csv" // one row per co-scheduled result
	JSONFile     = "report.json"
	HTMLFile     = "report.html"
)

// Reports wraps a rank stage: after next ranks, the reports of its
// ranking and the trials are written into run's folder (Write).
func Reports(next rank.Interface, run *results.Run, ctx Context) rank.Interface {
	return &reports{next: next, run: run, ctx: ctx}
}

var _ rank.Interface = (*reports)(nil)

type reports struct {
	next rank.Interface
	run  *results.Run
	ctx  Context
}

func (w *reports) Rank(ctx context.Context, trials []rank.Trial, reps []rank.Replicate) (*rank.Ranking, error) {
	rk, err := w.next.Rank(ctx, trials, reps)
	if err != nil {
		return nil, err
	}
	return rk, Write(w.run.Dir, *rk, trials, w.ctx)
}

// Write writes the four reports into dir, each atomically. It writes
// every report it can and returns the first error.
func Write(dir string, r rank.Ranking, trials []rank.Trial, ctx Context) error {
	var first error
	keep := func(err error) {
		if err != nil && first == nil {
			first = err
		}
	}
	keep(results.WriteFile(filepath.Join(dir, MarkdownFile), Markdown(r, ctx)))
	c, err := CSV(r)
	keep(err)
	if err == nil {
		keep(results.WriteFile(filepath.Join(dir, CSVFile), c))
	}
	pc, err := PairsCSV(r)
	keep(err)
	if err == nil {
		keep(results.WriteFile(filepath.Join(dir, PairsCSVFile), pc))
	}
	if r.Memory != nil {
		mc, err := MemoryCSV(r)
		keep(err)
		if err == nil {
			keep(results.WriteFile(filepath.Join(dir, MemoryCSVFile), mc))
		}
	}
	j, err := JSON(r, trials, ctx)
	keep(err)
	if err == nil {
		keep(results.WriteFile(filepath.Join(dir, JSONFile), j))
	}
	h, err := HTML(r, trials, ctx)
	keep(err)
	if err == nil {
		keep(results.WriteFile(filepath.Join(dir, HTMLFile), h))
	}
	if first != nil {
		return fmt.Errorf("writing reports into %s: %w", dir, first)
	}
	return nil
}

// Document is report.json: the ranking with every trial (histograms
// included) and the context.
type Document struct {
	Context Context      `json:"context"`
	Ranking rank.Ranking `json:"ranking"`
	Trials  []rank.Trial `json:"trials"`
}

// JSON returns report.json.
func JSON(r rank.Ranking, trials []rank.Trial, ctx Context) ([]byte, error) {
	if trials == nil {
		trials = []rank.Trial{}
	}
	b, err := json.MarshalIndent(Document{Context: ctx, Ranking: r, Trials: trials}, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encoding report.json: %w", err)
	}
	return append(b, '\n'), nil
}

// CSV returns report.csv: one row per cell (image, runtime, benchmark),
// with the ratio, interval, adjusted p-value and verdict against each
// reference.
func CSV(r rank.Ranking) ([]byte, error) {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	head := []string{"runtime", "test", "pipeline", "image", "reference", "n",
		"ops_median", "ops_lo", "ops_hi", "ops_confidence", "cv",
		"cpu_ns_per_op", "cpu_ns_per_op_lo", "cpu_ns_per_op_hi",
		"p50_ms", "p99_ms", "p999_ms", "client_cpu_share", "rss_bytes", "errors"}
	for _, ref := range r.References {
		head = append(head, "ratio_vs_"+ref, "lo_vs_"+ref, "hi_vs_"+ref, "p_adj_vs_"+ref, "verdict_vs_"+ref)
	}
	if err := w.Write(head); err != nil {
		return nil, err
	}
	for _, c := range r.Cells {
		row := []string{c.Runtime, c.Test, strconv.Itoa(c.Pipeline), c.Image, strconv.FormatBool(c.Reference), strconv.Itoa(c.N),
			g(c.Ops.Center), g(c.Ops.Lo), g(c.Ops.Hi), g(c.Ops.Confidence), g(c.CV),
			g(c.CPUNsPerOp.Center), g(c.CPUNsPerOp.Lo), g(c.CPUNsPerOp.Hi),
			g(c.P50Ms), g(c.P99Ms), g(c.P999Ms), g(c.ClientCPUShare), strconv.FormatInt(c.RSSBytes, 10), strconv.FormatInt(c.Errors, 10)}
		for _, ref := range r.References {
			if ref == c.Image {
				row = append(row, "1", "1", "1", "", rank.Self)
				continue
			}
			cmp, ok := r.Comparison(c.Runtime, c.Cell.Bench(), c.Image, ref)
			if !ok {
				row = append(row, "", "", "", "", "")
				continue
			}
			row = append(row, g(cmp.Ratio), g(cmp.Lo), g(cmp.Hi), g(cmp.PAdj), cmp.Verdict)
		}
		if err := w.Write(row); err != nil {
			return nil, err
		}
	}
	w.Flush()
	return buf.Bytes(), w.Error()
}

// PairsCSV returns report-pairs.csv: one row per co-scheduled result
// (score and per-benchmark rows of every pair, controls, axes).
func PairsCSV(r rank.Ranking) ([]byte, error) {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	head := []string{"kind", "family", "image", "runtime", "base", "base_runtime", "test", "pipeline",
		"ratio", "lo", "hi", "confidence", "p", "p_adj", "sign_rank_p", "verdict", "replicates", "windows",
		"log_mean", "se", "df", "window_sd", "side_effect", "balanced", "saturation", "steal", "split_z"}
	if err := w.Write(head); err != nil {
		return nil, err
	}
	for _, p := range r.Pairs {
		pipe := ""
		if p.Test != "" {
			pipe = strconv.Itoa(p.Pipeline)
		}
		row := []string{p.Kind, p.Family, p.Image, p.Runtime, p.Base, p.BaseRuntime, p.Test, pipe,
			g(float64(p.Ratio)), g(float64(p.Lo)), g(float64(p.Hi)), g(p.Confidence), g(float64(p.P)), g(float64(p.PAdj)), g(float64(p.SignRankP)),
			p.Verdict, strconv.Itoa(p.Replicates), strconv.Itoa(p.Windows),
			g(float64(p.LogMean)), g(float64(p.SE)), g(float64(p.DF)), g(float64(p.WindowSD)), g(float64(p.SideEffect)), strconv.FormatBool(p.Balanced), g(p.Saturation), g(p.Steal), g(float64(p.SplitZ))}
		if err := w.Write(row); err != nil {
			return nil, err
		}
	}
	w.Flush()
	return buf.Bytes(), w.Error()
}

func g(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return ""
	}
	return strconv.FormatFloat(f, 'g', 6, 64)
}

// Markdown returns report.md.
func Markdown(r rank.Ranking, ctx Context) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", ctx.title())
	b.WriteString(Headline(r))
	b.WriteString("\n")
	b.WriteString(overview(r, ctx))
	b.WriteString("\n")
	b.WriteString(experimentSection(r))
	for _, st := range r.Standings {
		fmt.Fprintf(&b, "## Ranking under `%s`\n\n", st.Runtime)
		b.WriteString(standingTable(r, st))
		b.WriteString("\n")
	}
	if len(r.Standings) == 0 {
		b.WriteString("No trials to rank.\n\n")
	}
	b.WriteString(memorySection(r, ctx))
	b.WriteString(latencySection(r))
	b.WriteString(pairsSection(r))
	b.WriteString(pathsSection(r))
	for _, rt := range r.Runtimes {
		if r.Method == rank.MethodPairs {
			fmt.Fprintf(&b, "## Standalone trials under `%s` (absolute figures; noisier, they do not decide the ranking)\n\n", rt)
		} else {
			fmt.Fprintf(&b, "## Per benchmark under `%s`\n\n", rt)
		}
		for _, bn := range r.Benches {
			t := benchTable(r, rt, bn)
			if t == "" {
				continue
			}
			fmt.Fprintf(&b, "### %s\n\n%s\n", bn, t)
		}
	}
	b.WriteString(contrastsSection(r))
	b.WriteString(layoutSection(r))
	b.WriteString(axesSection(r))
	b.WriteString(warningsSection(r, ctx))
	b.WriteString(imagesSection(ctx))
	b.WriteString(methodSection(r, ctx))
	return []byte(b.String())
}

func overview(r rank.Ranking, ctx Context) string {
	var b strings.Builder
	if ctx.RunID != "" {
		fmt.Fprintf(&b, "- Run: `%s`\n", ctx.RunID)
	}
	if !ctx.Generated.IsZero() {
		fmt.Fprintf(&b, "- Generated: %s\n", ctx.Generated.UTC().Format(time.RFC3339))
	}
	fmt.Fprintf(&b, "- Trials: %d (%d left out as invalid)\n", r.Trials, r.Excluded)
	if len(r.References) > 0 {
		fmt.Fprintf(&b, "- References: %s\n", codeList(r.References))
	} else {
		b.WriteString("- References: none (no ratio, score or verdict can be computed)\n")
	}
	fmt.Fprintf(&b, "- Runtimes: %s\n", codeList(r.Runtimes))
	var bs []string
	for _, bn := range r.Benches {
		bs = append(bs, bn.String())
	}
	fmt.Fprintf(&b, "- Benchmarks: %s\n", strings.Join(bs, ", "))
	if ctx.Profile != "" {
		fmt.Fprintf(&b, "- Profile: %s\n", ctx.Profile)
	}
	if len(r.CPUModels) > 0 {
		fmt.Fprintf(&b, "- CPU: %s\n", strings.Join(r.CPUModels, "; "))
	}
	if ctx.Host != "" {
		fmt.Fprintf(&b, "- Host: %s\n", ctx.Host)
	}
	if n := len(r.Warnings); n > 0 {
		fmt.Fprintf(&b, "- Warnings: %d (see [Warnings](#warnings))\n", n)
	}
	return b.String()
}

func codeList(xs []string) string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = "`" + x + "`"
	}
	return strings.Join(out, ", ")
}

// RankingTables returns the ranking table of every runtime, as in
// report.md, for printing on a terminal.
func RankingTables(r rank.Ranking) string {
	var b strings.Builder
	b.WriteString(PlainText(Headline(r)))
	b.WriteString("\n")
	for _, st := range r.Standings {
		fmt.Fprintf(&b, "Ranking under %s:\n\n", st.Runtime)
		b.WriteString(standingTable(r, st))
		b.WriteString("\n")
	}
	if len(r.Standings) == 0 {
		b.WriteString("No trials to rank.\n")
	}
	return b.String()
}

// versusColumns is the references a standings table compares with, in
// order, and each one's two column titles (interval, verdict): for a
// runtime ranked by pairs the primary reference's Holm-adjusted interval,
// then the derived comparisons; else every reference's standalone score.
func versusColumns(r rank.Ranking, st rank.Standings) (refs []string, heads [][2]string) {
	refs = r.References
	if st.Method == rank.MethodPairs && len(st.Entries) > 0 {
		refs = nil
		for _, s := range st.Entries[0].Versus {
			refs = append(refs, s.Reference)
		}
	}
	for i, ref := range refs {
		switch {
		case st.Method == rank.MethodPairs && i == 0:
			heads = append(heads, [2]string{"vs `" + ref + "` [Holm-adjusted CI]", "verdict (Holm)"})
		case st.Method == rank.MethodPairs:
			heads = append(heads, [2]string{"vs `" + ref + "`, derived [95% CI]", "verdict"})
		default:
			heads = append(heads, [2]string{"vs `" + ref + "` [95% CI]", "verdict"})
		}
	}
	return refs, heads
}

func standingTable(r rank.Ranking, st rank.Standings) string {
	var b strings.Builder
	b.WriteString("| Rank | Image |")
	refs, heads := versusColumns(r, st)
	for _, h := range heads {
		fmt.Fprintf(&b, " %s | %s |", h[0], h[1])
	}
	b.WriteString(" benchmarks |\n|---:|---|")
	for range refs {
		b.WriteString("---|---|")
	}
	b.WriteString("---:|\n")
	for _, e := range st.Entries {
		name := "`" + e.Image + "`"
		if e.Reference {
			name += " (reference)"
		}
		fmt.Fprintf(&b, "| %s | %s |", rankText(e.Rank, e.RankHi), name)
		n := 0
		for _, s := range e.Versus {
			if s.Verdict == rank.Self {
				b.WriteString(" 1 | reference |")
			} else {
				fmt.Fprintf(&b, " %s | %s |", interval(float64(s.Score), float64(s.Lo), float64(s.Hi)), verdictOr(s))
			}
			n = max(n, s.Benches)
		}
		fmt.Fprintf(&b, " %d |\n", n)
	}
	return b.String()
}

func verdictOr(s rank.Score) string {
	if s.Benches == 0 {
		return "n/a"
	}
	if !rank.Decided(s.Verdict) {
		return s.Verdict
	}
	return "**" + s.Verdict + "**"
}

// shortInterval is interval, or the ratio alone when the trials were too
// few for an interval at the simultaneous level.
func shortInterval(c, lo, hi float64, short bool) string {
	if short {
		return interval(c, math.NaN(), math.NaN())
	}
	return interval(c, lo, hi)
}

func interval(c, lo, hi float64) string {
	if math.IsNaN(c) {
		return "n/a"
	}
	if math.IsNaN(lo) || math.IsNaN(hi) {
		return fmt.Sprintf("%.3f [too few trials for an interval]", c)
	}
	return fmt.Sprintf("%.3f [%.3f, %.3f]", c, lo, hi)
}

func benchTable(r rank.Ranking, rt string, bn rank.Bench) string {
	var rows []rank.CellSummary
	for _, c := range r.Cells {
		if c.Runtime == rt && c.Test == bn.Test && c.Pipeline == bn.Pipeline {
			rows = append(rows, c)
		}
	}
	if len(rows) == 0 {
		return ""
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].Ops.Center > rows[j].Ops.Center })
	var b strings.Builder
	b.WriteString("| Image | ops/s median [CI] | n | CV |")
	for _, ref := range r.References {
		fmt.Fprintf(&b, " vs `%s` [CI] | p adj | verdict |", ref)
	}
	b.WriteString(" p50 ms | p99 ms | server CPU ns/op | machine CPU ns/op | docker-proxy ns/op |\n|---|---|---:|---:|")
	for range r.References {
		b.WriteString("---|---:|---|")
	}
	b.WriteString("---:|---:|---:|---:|---:|\n")
	for _, c := range rows {
		name := "`" + c.Image + "`"
		if c.Reference {
			name += " (ref)"
		}
		fmt.Fprintf(&b, "| %s | %s [%s, %s] | %d | %.1f%% |", name, ops(c.Ops.Center), ops(c.Ops.Lo), ops(c.Ops.Hi), c.N, 100*c.CV)
		for _, ref := range r.References {
			if ref == c.Image {
				b.WriteString(" 1 | | reference |")
				continue
			}
			cmp, ok := r.Comparison(rt, bn, c.Image, ref)
			if !ok {
				b.WriteString(" n/a | | |")
				continue
			}
			v := cmp.Verdict
			if rank.Decided(v) {
				v = "**" + v + "**"
			}
			fmt.Fprintf(&b, " %s | %s | %s |", shortInterval(cmp.Ratio, cmp.Lo, cmp.Hi, cmp.Short), pval(cmp.PAdj), v)
		}
		cpu := "n/a"
		if c.CPUNsPerOp.N > 0 {
			cpu = fmt.Sprintf("%.0f [%.0f, %.0f]", c.CPUNsPerOp.Center, c.CPUNsPerOp.Lo, c.CPUNsPerOp.Hi)
		}
		fmt.Fprintf(&b, " %.3f | %.3f | %s | %.0f | %.0f |\n", c.P50Ms, c.P99Ms, cpu, c.MachineCPUNsPerOp, c.ProxyCPUNsPerOp)
	}
	return b.String()
}

func pval(p float64) string {
	switch {
	case math.IsNaN(p):
		return ""
	case p < 0.001:
		return fmt.Sprintf("%.1e", p)
	}
	return fmt.Sprintf("%.3f", p)
}

// ops formats ops/s with thousands separators.
func ops(f float64) string {
	if math.IsNaN(f) {
		return "n/a"
	}
	s := strconv.FormatInt(int64(math.Round(f)), 10)
	var out []byte
	for i := range s {
		if i > 0 && (len(s)-i)%3 == 0 && s[i-1] != '-' {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	return string(out)
}

func axisLabel(r rank.Ranking, name string) string {
	for _, a := range r.Thresholds.Axes {
		if a.Name == name && a.Label != "" {
			return a.Label
		}
	}
	return name
}

// layoutSection says, for every image whose build spec ran as several
// layout draws, how much of its spread is layout, each draw's own ratio,
// and which draw is the image publish pushes (draw 1, the spec's name).
func layoutSection(r rank.Ranking) string {
	if len(r.Layouts) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("## Layout draws\n\n")
	b.WriteString("Each of these build specs was built as several layout draws: the same objects linked in other orders, so the code is the same and only its placement differs (verify's layout check proves it for each draw). The replicates of its pair with the primary reference ran on the draws in turn, so its interval in the ranking covers the build spec's layout, not one binary: it is taken at the level of the draws (each draw's mean one value, on draws − 1 df), which holds whatever layout and each spec's own noise are. Draw 1 carries the spec's name: it is the image the suite ran on and the one publish pushes. The fastest-over-slowest ratio picks its two draws after the fact, so its uncorrected interval overstates its precision; the F test is the test that layout moves this image at all.\n\n")
	b.WriteString("| Image | runtime | draws | layout sd | share of a replicate's variance | F (p) | fastest / slowest [95% CI] | draw 1 (published) [95% CI] |\n|---|---|---|---|---|---|---|---|\n")
	for _, l := range r.Layouts {
		var first string
		for _, d := range l.Draws {
			if d.Draw == 1 {
				first = fmt.Sprintf("%s (`%s`, %d replicates)", interval(float64(d.Ratio), float64(d.Lo), float64(d.Hi)), shortDigest(d.ImageID), d.Replicates)
			}
		}
		fmt.Fprintf(&b, "| `%s` | `%s` | %d | %.2f%% | %.0f%% | %.2f (%s) | %s (draw %d over draw %d) | %s |\n", l.Image, l.Runtime, len(l.Draws),
			100*float64(l.SigmaLayout), 100*float64(l.Share), float64(l.F), pText(float64(l.P)),
			interval(float64(l.Range.Ratio), float64(l.Range.Lo), float64(l.Range.Hi)), l.Fastest, l.Slowest, first)
	}
	b.WriteString("\n")
	return b.String()
}

// pText is pval, saying "n/a" where there is no test.
func pText(p float64) string {
	if math.IsNaN(p) {
		return "n/a"
	}
	return pval(p)
}

// contrastsSection compares the image pairs the ranking was asked to
// contrast (a PGO build and the same flags without it), per benchmark and
// overall; empty when there are none.
func contrastsSection(r rank.Ranking) string {
	if len(r.Contrasts) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("## Contrasts\n\n")
	b.WriteString("Each image against the one named, derived from their co-scheduled pairs with the primary reference (uncorrected 95% intervals; a tie when the interval holds 1).\n\n")
	b.WriteString("| Image | versus | runtime | benchmark | ratio [95% CI] | verdict |\n|---|---|---|---|---|---|\n")
	label := map[[2]string]string{}
	for _, c := range r.Thresholds.Contrasts {
		label[[2]string{c.Image, c.Versus}] = c.Label
	}
	for _, c := range r.Contrasts {
		bench := "score (geometric mean)"
		if c.Test != "" {
			bench = rank.Bench{Test: c.Test, Pipeline: c.Pipeline}.String()
		}
		v := c.Verdict
		if rank.Decided(v) {
			v = "**" + v + "**"
		}
		versus := "`" + c.Base + "`"
		if l := label[[2]string{c.Image, c.Base}]; l != "" {
			versus += " (" + l + ")"
		}
		fmt.Fprintf(&b, "| `%s` | %s | `%s` | %s | %s | %s |\n", c.Image, versus, c.Runtime, bench,
			interval(float64(c.Ratio), float64(c.Lo), float64(c.Hi)), v)
	}
	b.WriteString("\n")
	return b.String()
}

func axesSection(r rank.Ranking) string {
	var b strings.Builder
	b.WriteString("## Runtime effects\n\n")
	if len(r.Axes) == 0 {
		b.WriteString("No runtime axis could be measured: each needs both of its runtimes (")
		var ps []string
		for _, a := range r.Thresholds.Axes {
			ps = append(ps, fmt.Sprintf("`%s` vs `%s`", a.Other, a.Base))
		}
		b.WriteString(strings.Join(ps, ", "))
		b.WriteString(").\n\n")
		return b.String()
	}
	b.WriteString("Ratio of ops/s under the changed runtime to the baseline (geometric mean over benchmarks; <1 means the change costs throughput).\n\n")
	b.WriteString("| Axis | Image | ratio [95% CI] | p adj | verdict | per benchmark |\n|---|---|---|---:|---|---|\n")
	for _, a := range r.Axes {
		if a.Test != "" {
			continue
		}
		var per []string
		for _, p := range r.Axes {
			if p.Test != "" && p.Axis == a.Axis && p.Image == a.Image {
				per = append(per, fmt.Sprintf("%s %.3f", rank.Bench{Test: p.Test, Pipeline: p.Pipeline}, p.Ratio))
			}
		}
		v := a.Verdict
		if rank.Decided(v) {
			v = "**" + v + "**"
		}
		fmt.Fprintf(&b, "| %s (`%s` / `%s`) | `%s` | %s | %s | %s | %s |\n", axisLabel(r, a.Axis), a.Other, a.Base, a.Image,
			shortInterval(a.Ratio, a.Lo, a.Hi, a.Short), pval(a.PAdj), v, strings.Join(per, ", "))
	}
	b.WriteString("\n")
	return b.String()
}

func warningsSection(r rank.Ranking, ctx Context) string {
	var b strings.Builder
	b.WriteString("## Warnings\n\n")
	if len(r.Warnings) == 0 && len(ctx.Notes) == 0 {
		b.WriteString("None.\n\n")
		return b.String()
	}
	for _, w := range r.Warnings {
		if w.Subject != "" {
			fmt.Fprintf(&b, "- **%s** `%s`: %s\n", w.Kind, w.Subject, w.Message)
		} else {
			fmt.Fprintf(&b, "- **%s**: %s\n", w.Kind, w.Message)
		}
	}
	for _, n := range ctx.Notes {
		fmt.Fprintf(&b, "- %s\n", n)
	}
	b.WriteString("\n")
	return b.String()
}

// imageColumns and imageCells are the build facts of an image, as the
// Markdown and HTML reports both show them.
var imageColumns = []string{"Image", "kind", "compiler", "flags", "allocator", "libc", "size", "build", "verify", "reference", "digest", "origin"}

func imageCells(im ImageInfo) []string {
	size := ""
	if im.Size > 0 {
		size = fmt.Sprintf("%.1f MB", float64(im.Size)/1e6)
	}
	return []string{im.Name, im.Kind, im.Compiler, im.Flags, im.Allocator, im.Libc, size, im.Build, im.Verify, im.Image, shortDigest(im.Digest), im.Origin}
}

func imagesSection(ctx Context) string {
	if len(ctx.Images) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("## Images\n\n| " + strings.Join(imageColumns, " | ") + " |\n|" + strings.Repeat("---|", len(imageColumns)) + "\n")
	for _, im := range ctx.Images {
		c := imageCells(im)
		c[0] = "`" + c[0] + "`"
		b.WriteString("| " + strings.Join(c, " | ") + " |\n")
	}
	b.WriteString("\n")
	return b.String()
}

func shortDigest(d string) string {
	if i := strings.IndexByte(d, ':'); i >= 0 && len(d) > i+13 {
		return d[:i+13]
	}
	return d
}

// rankText is a rank interval as the reports print it: "2", or "1–3"
// (a record without RankHi prints its one rank).
func rankText(lo, hi int) string {
	if hi <= lo {
		return fmt.Sprint(lo)
	}
	return fmt.Sprintf("%d–%d", lo, hi)
}

// familySize is the number of decisions in the ranking family.
func familySize(r rank.Ranking) int {
	n := 0
	for _, st := range r.Standings {
		n += len(st.Pairs)
	}
	return n
}

func methodSection(r rank.Ranking, ctx Context) string {
	th := r.Thresholds
	var b strings.Builder
	b.WriteString("## How this was measured\n\n")
	if r.Method == rank.MethodPairs {
		planned := r.Replicates - r.StandIns - r.Added
		fmt.Fprintf(&b, "**The ranking** rests on %d co-scheduled replicates (%d of them with windows measured): %d planned by the design, %d stand-ins for planned ones that came out short, %d added by the extension (never promised, so one of them that comes out short is not a shortfall). In each, the image's server and the primary reference's run in fresh containers pinned to the same server CPU at the same time, each loaded by its own generator that stays up for the whole replicate (its connections open, both pinned to the client CPU); both generators start each benchmark's windows at the same instant, after a warm-up, and run them back to back. Each server's CPU time is read from its cgroup at each window's bounds, while the load runs, and the window's observation is the log of the reference's CPU time per operation over the image's. The vCPU's fast and slow waves hit both servers alike and cancel in that ratio. Before the design ran, an A/A pair found per benchmark the load (connections per server) at which the server CPU stays busy (calibration.json). A window is not accepted when the server CPU was busy less than %.0f%% of its unstolen time (its own account, /proc/stat), when the two servers' cgroups used less than %.0f%% of it, with error replies, or with more than %.0f%% steal; it is not measured again: its benchmark is lost for that replicate, the replicate's other benchmarks stand, and losses are reported. A replicate short of a benchmark (or given up) gets a stand-in at the end of the schedule, a fresh pair with the same sides, while its pair has some left (as many as it planned, at least 2); %d of the replicates are stand-ins. Only replicates with every benchmark measured enter the estimates.\n\n", r.Replicates, r.Measured, planned, r.StandIns, r.Added, 100*rank.MinCoreBusy, 100*rank.MinSaturation, 100*rank.MaxSteal, r.StandIns)
		b.WriteString("- **Design**: fixed before measuring: the number of replicates per pair and of windows per benchmark come from the profile, the order of every replicate and standalone trial and which side starts first are drawn from the recorded seed, and each pair has its sides swapped in exactly half of its replicates. Nothing stops early on the data.\n")
		b.WriteString("- **Estimate**: a replicate's value for a benchmark is the median of its windows' log ratios where it has three or more, their mean where it has one or two; its score is the mean over benchmarks. Over replicates, the estimate is the mean of the two sides' means (a two-period crossover: the slot bias cancels and is reported as the side effect), with a t interval whose error comes from the spread within each side (df = replicates − 2); the Wilcoxon signed-rank test over the replicate values (the independent units) is shown as a cross-check. For a build spec built as several layout draws the estimate is taken at the draw: each draw's mean (slot effect removed) is one value, the estimate their mean and the t interval theirs, on draws − 1 df, whatever the layout's and the replicates' own variances are (none is subtracted from another, and no spec's interval depends on another spec's data). A comparison without any spread has no interval and no verdict.\n")
		fmt.Fprintf(&b, "- **The family** (verdicts and ranks alike): every pair of a runtime's entries (the images, the references and the primary reference), in every runtime, %d decisions, Holm-corrected together at α = %.2g. An entry against the primary reference is its own co-scheduled comparison; any other pair is the difference of the two entries' comparisons (their errors added, Welch–Satterthwaite df). Each is printed with its interval at the level that matches its Holm decision (1 − α·p/p_adj: at least %.0f%%, and the simultaneous Bonferroni level for the first step), so an interval excludes 1 exactly when the verdict is not a tie. Per-benchmark rows and declared contrasts are secondary: uncorrected %.0f%% intervals, the verdict read from the interval.\n", familySize(r), th.Alpha, 100*th.Confidence, 100*th.Confidence)
		b.WriteString("- **What an interval covers**: within this run, " + coverClaim(r) + ". A tuned entry built as several layout draws (the same objects linked in other orders) ran its replicates on them in turn and its interval takes the draws as random, from its own draws' means (see Layout draws): it covers the servers' spread, the layouts and this run's conditions. An entry of one binary (a reference, or an entry with `layouts: 1`) covers that binary only. Neither covers another run (the run effect); `history` and `compare` merge runs for that.\n")
		b.WriteString("- **A/A control**: the primary reference paired with itself in every run; its true ratio is 1. A control significant even uncorrected flags the run as untrustworthy. Split-half z: where replicates have two or more windows per benchmark, each replicate's score from its even-numbered windows less the one from its odd-numbered windows (a paired difference, true mean 0) over its standard error; with one window per benchmark, the estimate from even-numbered replicates against the one from odd-numbered replicates (independent halves).\n")
		b.WriteString("- **Rank**: entries listed by score; each rank is an interval from the family: its best is 1 + the entries separated from it above, its worst the number of entries less those separated from it below (\"1–3\": it may be first, second or third). The intervals hold jointly at the family's level. Two entries are tied exactly when the family does not separate them; ties are not a grouping, so a chain of close neighbours can end separated.\n")
		b.WriteString("- **Standalone trials** (one server alone) give the absolute ops/s, latency and the whole machine's CPU per operation; co-scheduling halves each server's share of the CPU, so its ops/s are not absolute figures. The standalone figures are noisier (10-30% from run to run here) and do not decide the ranking; a standalone verdict opposite to the co-scheduled one is a warning.\n\n")
		b.WriteString("### The standalone statistics\n\n")
	}
	fmt.Fprintf(&b, "Each cell (image, runtime, benchmark) was measured in %s. ", trialsRange(r))
	fmt.Fprintf(&b, "A cell's center is the median ops/s, with the distribution-free order-statistic interval of the median (%.0f%%, or [min, max] and its lower actual coverage when there are too few trials).\n\n", 100*th.Confidence)
	fmt.Fprintf(&b, "- **Per benchmark**: the ratio is the image's median over the reference's; its interval is the Hodges–Lehmann/Moses interval of the ratio (from log ops/s), simultaneous over all %d comparisons (Bonferroni: each at %.4g%%); the verdict is faster or slower when that interval excludes 1, else **tie**; with too few trials for an interval at that level none is printed and the comparison is **not tested** (no verdict, not a tie). The two-sided Mann–Whitney U p-value, Holm-adjusted over the comparisons, is shown beside it.\n", len(r.Comparisons), 100*(1-(1-th.Confidence)/float64(max(len(r.Comparisons), 1))))
	fmt.Fprintf(&b, "- **Score**: the geometric mean over benchmarks of those ratios, with a bootstrap interval (%d resamples of the trials within each cell, seed %d), simultaneous over every score comparison, given only with at least 5 trials per cell; the verdict is read from it. The van Elteren stratified rank test over the benchmarks is shown beside it.\n", th.Bootstrap, th.Seed)
	b.WriteString("- **Rank**: images sorted by score against the primary reference; an image shares the rank of the one above it unless their score intervals are disjoint and the stratified rank test between the two (Holm over adjacent pairs) is significant. Ranks are competition ranks (1, 1, 3).\n")
	fmt.Fprintf(&b, "- **Warnings**: fewer than %d trials in a cell; CV above %.0f%%; the load generator at or above %.0f%% of its CPUs (then the numbers measure the generator); request errors; missing references.\n\n", th.MinTrials, 100*th.MaxCV, 100*th.ClientCPUShare)
	return b.String()
}

func trialsRange(r rank.Ranking) string {
	lo, hi := math.MaxInt, 0
	for _, c := range r.Cells {
		lo, hi = min(lo, c.N), max(hi, c.N)
	}
	switch {
	case hi == 0:
		return "no trials"
	case lo == hi:
		return fmt.Sprintf("%d trials", lo)
	}
	return fmt.Sprintf("%d to %d trials", lo, hi)
}
