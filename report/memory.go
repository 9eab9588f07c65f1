package report

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"html/template"
	"strings"

	"github.com/redis-variants/redis-variants/rank"
	"github.com/redis-variants/redis-variants/results"
)

// MemoryCSVFile is one row per image of the memory ranking.
const MemoryCSVFile = "report-memory.csv"

// memoryColumns and memoryCells are the memory table, as the Markdown and
// HTML reports show it: figures after the churn, then after
// defragmentation, then the ratio that ranks.
var memoryColumns = []string{"Rank", "Image", "allocator", "servers", "RSS after churn MiB [95% CI]", "RSS vs primary [CI]", "verdict",
	"used_memory MiB", "fragmentation", "allocator frag", "peak MiB (cgroup)", "RSS after defrag MiB", "defrag gave back", "defrag CPU s", "fill SET/s"}

func memoryCells(e rank.MemoryEntry) []string {
	rankS := rankText(e.Rank, e.RankHi)
	if e.Rank == 0 {
		rankS = "A/A"
	}
	n := fmt.Sprint(e.N)
	if e.Failed > 0 {
		n += fmt.Sprintf(" (%d failed", e.Failed)
		if e.OOM > 0 {
			n += fmt.Sprintf(", %d OOM", e.OOM)
		}
		n += ")"
	}
	ratio := "1 (reference)"
	if e.Verdict != rank.Self {
		ratio = fmt.Sprintf("%s [%s, %s]", num(float64(e.Ratio)), num(float64(e.Lo)), num(float64(e.Hi)))
	}
	defrag, gave, cpu := "not supported", "–", "–"
	if e.Defrag {
		defrag, gave, cpu = mibStat(e.RSSDefrag), pctStat(e.DefragRecovered), fmt.Sprintf("%.2f", float64(e.DefragCPU.Mean))
	}
	afrag := "–"
	if e.AllocatorFrag.N > 0 {
		afrag = fmt.Sprintf("%.3f", float64(e.AllocatorFrag.Mean))
	}
	peak := "–"
	if e.Peak.N > 0 {
		peak = fmt.Sprintf("%.1f", float64(e.Peak.Mean)/(1<<20))
	}
	return []string{rankS, e.Image, e.Allocator, n, mibStat(e.RSS), ratio, e.Verdict, fmt.Sprintf("%.1f", float64(e.Used.Mean)/(1<<20)),
		fmt.Sprintf("%.3f", float64(e.Frag.Mean)), afrag, peak, defrag, gave, cpu, fmt.Sprintf("%.0f", float64(e.FillOps.Mean))}
}

func mibStat(s results.Stat) string {
	if s.N == 0 || s.Mean.IsNaN() {
		return "n/a"
	}
	if s.Lo.IsNaN() {
		return fmt.Sprintf("%.1f", float64(s.Mean)/(1<<20))
	}
	return fmt.Sprintf("%.1f [%.1f, %.1f]", float64(s.Mean)/(1<<20), float64(s.Lo)/(1<<20), float64(s.Hi)/(1<<20))
}

func pctStat(s results.Stat) string {
	if s.N == 0 || s.Mean.IsNaN() {
		return "n/a"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(s.Mean))
}

// memoryRows is every row of the memory table: the ranked images, then
// the A/A control. The allocator is the variant's (from the plan), with
// the server's own name for it where that says more (a version) or
// differs (mimalloc and tcmalloc replace malloc under Redis's "libc").
func memoryRows(m *rank.MemoryRanking, ctx Context) [][]string {
	planned := map[string]string{}
	for _, im := range ctx.Images {
		planned[im.Name] = im.Allocator
	}
	var rows [][]string
	add := func(e rank.MemoryEntry, image string) {
		if p := planned[image]; p != "" && p != e.Allocator {
			e.Allocator = p + " (" + e.Allocator + ")"
		}
		rows = append(rows, memoryCells(e))
	}
	for _, e := range m.Entries {
		add(e, e.Image)
	}
	if m.Control != nil {
		c := *m.Control
		c.Rank = 0
		add(c, m.Primary)
	}
	return rows
}

// memoryIntro says what the memory table is, in Markdown.
func memoryIntro(m *rank.MemoryRanking) string {
	s := fmt.Sprintf("Each image's server, fresh each time, was filled to the same dataset (%.1f MiB of values left after the churn), a share of its keys overwritten with other sizes and a share deleted; the table ranks by the resident memory it then held (less is better), as a ratio to `%s` with a Welch interval on log RSS at %.1f%% (Bonferroni over the images). ",
		float64(m.Dataset.Mean)/(1<<20), m.Primary, 100*m.Confidence)
	if m.Control != nil && m.Control.Verdict != "" {
		s += fmt.Sprintf("The A/A control (`%s`'s second set of servers) came out %s [%s, %s]. ", m.Primary, num4(float64(m.Control.Ratio)), num4(float64(m.Control.Lo)), num4(float64(m.Control.Hi)))
	}
	if !m.Spread.IsNaN() {
		s += fmt.Sprintf("The spread of RSS across an image's servers is ±%.2f%% (median half-width of the 95%% interval over the images). ", 100*float64(m.Spread))
	}
	s += "Active defragmentation runs where the allocator supports it (jemalloc), for a bounded time; its CPU is the server's."
	return s
}

// memorySection is the Markdown memory section ("" without a memory
// ranking).
func memorySection(r rank.Ranking, ctx Context) string {
	m := r.Memory
	if m == nil {
		return ""
	}
	var b strings.Builder
	b.WriteString("## Memory\n\n" + memoryIntro(m) + "\n\n")
	b.WriteString("| " + strings.Join(memoryColumns, " | ") + " |\n|" + strings.Repeat("---|", len(memoryColumns)) + "\n")
	for _, row := range memoryRows(m, ctx) {
		row[1] = "`" + row[1] + "`"
		b.WriteString("| " + strings.Join(row, " | ") + " |\n")
	}
	for _, n := range m.Notes {
		b.WriteString("\n" + n + "\n")
	}
	b.WriteString("\n")
	return b.String()
}

// memoryHeadline is the memory sentence of the answer.
func memoryHeadline(m *rank.MemoryRanking) string {
	if m == nil || len(m.Entries) == 0 {
		return ""
	}
	best := m.Entries[0]
	s := fmt.Sprintf("Memory: for the same dataset after the churn, **`%s`** held the least", best.Image)
	if best.Verdict != rank.Self && !best.Ratio.IsNaN() {
		s += fmt.Sprintf(", %s× `%s`'s RSS [%s, %s] (%s)", num(float64(best.Ratio)), m.Primary, num(float64(best.Lo)), num(float64(best.Hi)), best.Verdict)
	}
	var tied []string
	for _, e := range m.Entries[1:] {
		if e.Rank == 1 { // nothing separated above it: it may hold the least
			tied = append(tied, "`"+e.Image+"`")
		}
	}
	if len(tied) > 0 {
		s += "; tied with " + strings.Join(tied, ", ")
	}
	if m.Control != nil {
		s += fmt.Sprintf("; A/A %s [%s, %s]", num4(float64(m.Control.Ratio)), num4(float64(m.Control.Lo)), num4(float64(m.Control.Hi)))
	}
	return s + ".\n\n"
}

// MemoryCSV is report-memory.csv: one row per image (and the A/A
// control), every figure with its interval.
func MemoryCSV(r rank.Ranking) ([]byte, error) {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	w.Write([]string{"image", "control", "allocator", "rank", "rank_hi", "servers", "failed", "oom", "dataset_bytes",
		"rss_bytes", "rss_lo", "rss_hi", "ratio_vs_primary", "ratio_lo", "ratio_hi", "verdict",
		"used_memory_bytes", "fragmentation", "allocator_frag_ratio", "peak_bytes", "rss_after_defrag_bytes", "defrag_recovered", "defrag_cpu_seconds", "fill_ops"})
	if m := r.Memory; m != nil {
		all := m.Entries
		if m.Control != nil {
			all = append(append([]rank.MemoryEntry(nil), all...), *m.Control)
		}
		for i, e := range all {
			control := m.Control != nil && i == len(all)-1
			w.Write([]string{e.Image, fmt.Sprint(control), e.Allocator, fmt.Sprint(e.Rank), fmt.Sprint(e.RankHi), fmt.Sprint(e.N), fmt.Sprint(e.Failed), fmt.Sprint(e.OOM), g(float64(m.Dataset.Mean)),
				g(float64(e.RSS.Mean)), g(float64(e.RSS.Lo)), g(float64(e.RSS.Hi)), g(float64(e.Ratio)), g(float64(e.Lo)), g(float64(e.Hi)), e.Verdict,
				g(float64(e.Used.Mean)), g(float64(e.Frag.Mean)), g(float64(e.AllocatorFrag.Mean)), g(float64(e.Peak.Mean)), g(float64(e.RSSDefrag.Mean)),
				g(float64(e.DefragRecovered.Mean)), g(float64(e.DefragCPU.Mean)), g(float64(e.FillOps.Mean))})
		}
	}
	w.Flush()
	return buf.Bytes(), w.Error()
}

// memoryChart draws each image's RSS ratio to the primary reference:
// green less memory, red more, grey tie.
func memoryChart(m *rank.MemoryRanking) template.HTML {
	if m == nil {
		return ""
	}
	var rows []barRow
	add := func(e rank.MemoryEntry, label string) {
		if e.Ratio.IsNaN() {
			return
		}
		rows = append(rows, barRow{label: label, class: verdictBar(e.Verdict),
			title: fmt.Sprintf("%s: %.3f [%.3f, %.3f] %s", e.Image, float64(e.Ratio), float64(e.Lo), float64(e.Hi), e.Verdict),
			ratio: float64(e.Ratio), lo: float64(e.Lo), hi: float64(e.Hi)})
	}
	for _, e := range m.Entries {
		add(e, fmt.Sprintf("#%s %s", rankText(e.Rank, e.RankHi), e.Image))
	}
	if m.Control != nil {
		add(*m.Control, m.Control.Image)
	}
	return ratioChart("memory", "memory after the churn", rows, 240, 540, m.Primary+" = 1 (RSS after the churn; left: less memory)")
}
