package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/redis-variants/redis-variants/rank"
)

// Headline is the answer first: per ranked runtime, the best image and its
// ratio to each reference with the interval, the images tied with it, the
// A/A control's contrast and the resolution the run achieved.
func Headline(r rank.Ranking) string {
	var b strings.Builder
	b.WriteString("## The answer\n\n")
	if len(r.Standings) == 0 {
		b.WriteString("Nothing was ranked.\n")
		return b.String()
	}
	if r.Method != rank.MethodPairs {
		b.WriteString("**Standalone trials only** (no co-scheduled pairs): on a shared machine their spread is 10-30%, so read every verdict below as provisional.\n\n")
	}
	if !r.Trustworthy {
		b.WriteString("**This run is not to be trusted**: its A/A control (the primary reference against itself) came out significant, so two identical servers differed.\n\n")
	}
	for _, st := range r.Standings {
		if len(st.Entries) == 0 {
			continue
		}
		best := st.Entries[0]
		var tied []string
		for _, e := range st.Entries[1:] {
			if e.Rank == best.Rank {
				tied = append(tied, "`"+e.Image+"`")
			}
		}
		fmt.Fprintf(&b, "- Under `%s`: **`%s`**", st.Runtime, best.Image)
		var vs []string
		for _, s := range best.Versus {
			if s.Verdict == rank.Self {
				continue
			}
			vs = append(vs, fmt.Sprintf("%s× `%s` [%s, %s] (%s)", num(float64(s.Score)), s.Reference, num(float64(s.Lo)), num(float64(s.Hi)), s.Verdict))
		}
		if best.Image == st.Primary {
			b.WriteString(" (the primary reference itself)")
		}
		if len(vs) > 0 {
			b.WriteString(": " + strings.Join(vs, "; "))
		}
		if len(tied) > 0 {
			fmt.Fprintf(&b, "; tied with %s (the data cannot separate them)", strings.Join(tied, ", "))
		} else if len(st.Entries) > 1 {
			fmt.Fprintf(&b, "; separated from the runner-up `%s`", st.Entries[1].Image)
		}
		b.WriteString(".\n")
	}
	for _, c := range r.Controls {
		verdict := "a tie, as it must be"
		if c.Significant {
			verdict = "**significant: the run is flagged**"
		}
		fmt.Fprintf(&b, "- A/A control under `%s`: %s [%s, %s], p = %s, %s (%d replicates, %d windows).\n",
			c.Runtime, num4(float64(c.Ratio)), num4(float64(c.Lo)), num4(float64(c.Hi)), pval(float64(c.P)), verdict, c.Replicates, c.Windows)
	}
	if r.Method == rank.MethodPairs {
		if !r.Resolution.Median.IsNaN() {
			fmt.Fprintf(&b, "- Resolution: the run tells a ratio from 1 when it differs by more than ±%.2f%% (median over the %d images; widest ±%.2f%%).\n",
				100*float64(r.Resolution.Median), r.Resolution.N, 100*float64(r.Resolution.Max))
		}
		if !r.SplitHalfMaxZ.IsNaN() {
			fmt.Fprintf(&b, "- Split-half agreement: odd and even windows give estimates within |z| ≤ %.2f of each other.\n", float64(r.SplitHalfMaxZ))
		}
	}
	return b.String()
}

func num(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "n/a"
	}
	return fmt.Sprintf("%.3f", f)
}

func num4(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "n/a"
	}
	return fmt.Sprintf("%.4f", f)
}

// pairsSection lists every co-scheduled result: the primary family, the
// per-benchmark rows (secondary), the controls and the runtime axes.
func pairsSection(r rank.Ranking) string {
	if len(r.Pairs) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("## Co-scheduled pairs\n\n")
	b.WriteString("Each row is an image's server against the base's on the same CPU at the same time: the ratio of the base's server CPU time per operation to the image's (> 1: the image is faster). Primary rows (an image's score over every benchmark) carry Holm-corrected verdicts, each with its interval at the matching Holm level; every other row has an uncorrected 95% interval.\n\n")
	b.WriteString("| pair | benchmark | family | ratio [CI] | verdict | p | sign-rank p | replicates | windows | window sd | side effect | saturation | split z |\n")
	b.WriteString("|---|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, p := range r.Pairs {
		bench := "score"
		if p.Test != "" {
			bench = rank.Bench{Test: p.Test, Pipeline: p.Pipeline}.String()
		}
		z := "–"
		if !p.SplitZ.IsNaN() {
			z = fmt.Sprintf("%.2f", float64(p.SplitZ))
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s [%s, %s] | %s | %s | %s | %d | %d | %.2f%% | %+.2f%% | %.2f | %s |\n",
			p.PairKey, bench, p.Family, num4(float64(p.Ratio)), num4(float64(p.Lo)), num4(float64(p.Hi)), p.Verdict,
			pval(float64(p.P)), pval(float64(p.SignRankP)), p.Replicates, p.Windows, 100*p.WindowSD, 100*p.SideEffect, p.Saturation, z)
	}
	b.WriteString("\n")
	return b.String()
}

// pathsSection compares the runtime paths for the primary reference: the
// standalone trials' end-to-end ops/s and CPU per operation (the server's,
// the whole machine's, docker-proxy's) under every runtime, and the
// co-scheduled axis rows (the server's own CPU per operation on each path,
// side by side) where the pair is a fair contest.
func pathsSection(r rank.Ranking) string {
	if len(r.Pairs) == 0 || len(r.Runtimes) < 2 {
		return ""
	}
	prim := ""
	for _, p := range r.Pairs {
		if p.Kind == rank.KindControl || p.Kind == rank.KindAxis {
			prim = p.Base
			break
		}
	}
	if prim == "" {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "## Runtime paths (`%s`)\n\n", prim)
	b.WriteString("The runtime configuration changes the path, not the build. Standalone figures (one server alone): end-to-end ops/s and the CPU each operation costs the server, docker-proxy (a host process outside the server's cgroup, unpinned: its CPU lands on whichever core the scheduler picks) and the whole machine (server, generator, proxy, kernel). The co-scheduled column is the server's own CPU per operation on that path against the first runtime's, both servers on the same CPU at once; bridge networking is not co-scheduled, since docker-proxy takes the generators' CPU and neither server of such a pair can be saturated.\n\n")
	b.WriteString("| runtime | benchmark | ops/s (standalone) | server ns/op | docker-proxy ns/op | machine ns/op | co-scheduled server-CPU ratio vs first runtime [95% CI] |\n")
	b.WriteString("|---|---|---:|---:|---:|---:|---|\n")
	for _, rt := range r.Runtimes {
		for _, bn := range r.Benches {
			c, ok := r.Cell(rank.Cell{Image: prim, Runtime: rt, Test: bn.Test, Pipeline: bn.Pipeline})
			if !ok {
				continue
			}
			co := "–"
			for _, p := range r.Pairs {
				if p.Kind == rank.KindAxis && p.Runtime == rt && p.Test == bn.Test && p.Pipeline == bn.Pipeline {
					co = fmt.Sprintf("%s [%s, %s] (%s vs %s)", num4(float64(p.Ratio)), num4(float64(p.Lo)), num4(float64(p.Hi)), p.Runtime, p.BaseRuntime)
				}
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s | %.0f | %.0f | %.0f | %s |\n", rt, bn, ops(c.Ops.Center), c.CPUNsPerOp.Center, c.ProxyCPUNsPerOp, c.MachineCPUNsPerOp, co)
		}
	}
	b.WriteString("\n")
	return b.String()
}
