package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/redis-variants/redis-variants/rank"
)

// Headline is the answer first, one short paragraph per ranked runtime:
// the image to ship and its ratio to each reference with the interval,
// the ties named, then how sure the run is (the A/A control's contrast
// and the resolution it achieved). Markdown; PlainText strips it for a
// terminal.
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
	if !r.Answer.Given {
		fmt.Fprintf(&b, "**No answer.** %s.", upperFirst(strings.Join(r.Answer.Why, "; ")))
		if len(r.Answer.Change) > 0 {
			fmt.Fprintf(&b, " To get one: %s.", strings.Join(r.Answer.Change, "; "))
		}
		b.WriteString(" What the data show is below, none of it a verdict to act on.\n\n")
	} else if !r.Trustworthy {
		b.WriteString("**This run is not to be trusted**: its A/A control (the primary reference against itself) came out significant, so two identical servers differed.\n\n")
	}
	controls := map[string]rank.Control{}
	for _, c := range r.Controls {
		controls[c.Runtime] = c
	}
	for _, st := range r.Standings {
		if len(st.Entries) == 0 {
			continue
		}
		var sent []string
		best := st.Entries[0]
		first := fmt.Sprintf("Under `%s`, ship **`%s`**", st.Runtime, best.Image)
		switch {
		case !r.Answer.Given:
			first = fmt.Sprintf("Under `%s`, the best estimate is `%s`", st.Runtime, best.Image)
		case best.Image == st.Primary:
			first = fmt.Sprintf("Under `%s`, nothing beats the primary reference **`%s`**", st.Runtime, best.Image)
		case !separated(best, st.Primary):
			first = fmt.Sprintf("Under `%s`, no image is separated from the primary reference `%s`; the best estimate is `%s`", st.Runtime, st.Primary, best.Image)
		}
		if d, ok := r.Decision(st.Runtime); ok && r.Answer.Given && st.Method == rank.MethodPairs && !d.Settled && d.Leader == best.Image {
			first = fmt.Sprintf("Under `%s`, the fastest is **`%s`** or %s (tied: the data cannot tell which); `%s` has the best estimate", st.Runtime, best.Image, joinAnd(quoted(d.Tied())), best.Image)
		}
		var vs []string
		for _, s := range best.Versus {
			if s.Verdict == rank.Self {
				continue
			}
			vs = append(vs, fmt.Sprintf("%s× `%s` [%s, %s] (%s)", num(float64(s.Score)), s.Reference, num(float64(s.Lo)), num(float64(s.Hi)), s.Verdict))
		}
		if len(vs) > 0 {
			first += ": " + strings.Join(vs, ", ")
		}
		sent = append(sent, first+".")
		if st.Method != rank.MethodPairs {
			if groups := tieGroups(st); len(groups) > 0 {
				sent = append(sent, "Tied (the data cannot separate them): "+strings.Join(groups, "; ")+".")
			} else if len(st.Entries) > 1 {
				sent = append(sent, "Every image is separated from the next.")
			}
		} else {
			if d, ok := r.Decision(st.Runtime); ok {
				sent = append(sent, decisionSentence(d))
			}
			if s := tieSentence(st); s != "" {
				sent = append(sent, s)
			}
		}
		if c, ok := controls[st.Runtime]; ok {
			verdict := "a tie, as it must be"
			if c.Significant {
				verdict = "**significant: the run is flagged**"
			}
			sent = append(sent, fmt.Sprintf("The A/A control (`%s` against itself) came out %s [%s, %s], %s.",
				st.Primary, num4(float64(c.Ratio)), num4(float64(c.Lo)), num4(float64(c.Hi)), verdict))
		}
		fmt.Fprintf(&b, "%s\n\n", strings.Join(sent, " "))
	}
	b.WriteString(memoryHeadline(r.Memory))
	if r.Method == rank.MethodPairs && !r.Resolution.Median.IsNaN() {
		line := fmt.Sprintf("Resolution: the full ranking tells a ratio from 1 when it differs by more than ±%.2f%% (median over %d images; widest ±%.2f%%)",
			100*float64(r.Resolution.Median), r.Resolution.N, 100*float64(r.Resolution.Max))
		for _, d := range r.Decisions {
			if !d.Median.IsNaN() {
				asks := ""
				if r.Thresholds.Resolution > 0 {
					asks = fmt.Sprintf("; the profile asks ±%.2f%% or closer where the leader is tied", 100*r.Thresholds.Resolution)
				}
				line = fmt.Sprintf("Resolution: the decision's bounds under `%s` sit ±%.2f%% from their ratios (median over its %d comparisons%s); ", d.Runtime, 100*float64(d.Median), len(d.Rivals), asks) + strings.TrimPrefix(line, "Resolution: ")
			}
		}
		if !r.SplitHalfMaxZ.IsNaN() {
			line += fmt.Sprintf("; its odd and even halves (windows, or replicates of one window per test) agree within |z| ≤ %.2f", float64(r.SplitHalfMaxZ))
		}
		b.WriteString(line + ". " + coverSentence(r) + " " + runEffectSentence(r.RunEffect) + "\n")
	}
	return b.String()
}

// separated says whether e was found faster than the primary reference.
func separated(e rank.Entry, primary string) bool {
	for _, s := range e.Versus {
		if s.Reference == primary {
			return s.Verdict == rank.Faster
		}
	}
	return false
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// runEffectSentence says what the earlier runs of this machine kind say
// of the run effect, or that there were none.
func runEffectSentence(re *rank.RunEffect) string {
	if re == nil {
		return "No earlier run of these benchmarks on this CPU model was found beside this one, so the run effect is not measured here."
	}
	s := fmt.Sprintf("The run effect on this machine kind, from %d runs (this one and %s) of %d images: Q = %.1f on %d df (χ² 95%% band without one [%.1f, %.1f], p = %.2g), τ = %.2f%% against a median within-run SE of %.2f%%",
		len(re.Runs), joinAnd(re.Runs[:len(re.Runs)-1]), re.Images, float64(re.Q), re.DF, float64(re.QLo), float64(re.QHi), float64(re.P), 100*float64(re.Tau), 100*float64(re.MedianSE))
	if float64(re.Tau) > 0 {
		return s + fmt.Sprintf(": a claim beyond this run needs intervals about %.2f× as wide (`redis-variants compare` merges the runs).", float64(re.Allowance))
	}
	return s + ": no run effect beyond the within-run spread was measured."
}

// tieGroups names the images of standalone standings that share a
// rank, a group each: "`a` and `b` (rank 3)".
func tieGroups(st rank.Standings) []string {
	var out []string
	for i := 0; i < len(st.Entries); {
		j := i + 1
		for j < len(st.Entries) && st.Entries[j].Rank == st.Entries[i].Rank {
			j++
		}
		if j-i > 1 {
			var names []string
			for _, e := range st.Entries[i:j] {
				names = append(names, "`"+e.Image+"`")
			}
			out = append(out, fmt.Sprintf("%s (rank %d)", joinAnd(names), st.Entries[i].Rank))
		}
		i = j
	}
	return out
}

// tieSentence says which entries the best one is not separated from
// (any of them may be the fastest) and how many of the family's pairs
// are separated: ties are pairs, not groups.
func tieSentence(st rank.Standings) string {
	if len(st.Entries) < 2 {
		return ""
	}
	best := st.Entries[0]
	var first []string
	for _, e := range st.Entries[1:] {
		if e.Rank == 1 {
			first = append(first, fmt.Sprintf("`%s` (rank %s)", e.Image, rankText(e.Rank, e.RankHi)))
		}
	}
	sep := 0
	for _, p := range st.Pairs {
		if p.Separated {
			sep++
		}
	}
	s := fmt.Sprintf("In the full ranking (every pair at once), `%s` is separated from every other entry", best.Image)
	if len(first) > 0 {
		s = fmt.Sprintf("In the full ranking (every pair at once), `%s` (rank %s) is not separated from %s", best.Image, rankText(best.Rank, best.RankHi), joinAnd(first))
	}
	if len(st.Pairs) > 0 {
		s += fmt.Sprintf("; %d of the %d pairs are separated", sep, len(st.Pairs))
		var tied []string
		for _, p := range st.Pairs {
			if !p.Separated {
				tied = append(tied, fmt.Sprintf("`%s`–`%s`", p.Higher, p.Lower))
			}
		}
		if len(tied) > 0 && len(tied) <= 6 {
			s += " (tied: " + strings.Join(tied, ", ") + ")"
		}
	}
	return s + "."
}

// joinAnd is "a", "a and b", "a, b and c".
func joinAnd(xs []string) string {
	if len(xs) < 2 {
		return strings.Join(xs, "")
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " and " + xs[len(xs)-1]
}

// PlainText turns the report's small Markdown (headings, **bold**,
// `code`) into text for a terminal.
func PlainText(md string) string {
	var b strings.Builder
	for _, l := range strings.Split(md, "\n") {
		if h, ok := strings.CutPrefix(l, "## "); ok {
			l = strings.ToUpper(h[:1]) + h[1:] + ":"
		}
		l = strings.ReplaceAll(l, "**", "")
		l = strings.ReplaceAll(l, "`", "")
		b.WriteString(l + "\n")
	}
	return strings.TrimSuffix(b.String(), "\n")
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

// coverage lists the run's primary entries whose intervals cover a build
// spec over its layout draws (tuned entries built as several draws, the
// most draws any has) and those that cover one binary (references,
// entries of one draw).
func coverage(r rank.Ranking) (specs, single []string, draws int) {
	for _, p := range r.Pairs {
		if p.Family != rank.FamilyPrimary || p.Test != "" {
			continue
		}
		if p.Draws > 1 {
			specs = append(specs, "`"+p.Image+"`")
			draws = max(draws, p.Draws)
		} else {
			single = append(single, "`"+p.Image+"`")
		}
	}
	return specs, single, draws
}

// coverClaim says what the primary intervals cover, within the run.
func coverClaim(r rank.Ranking) string {
	specs, single, draws := coverage(r)
	switch {
	case len(specs) == 0:
		return "for one binary per image"
	case len(single) == 0:
		return fmt.Sprintf("for each build spec over its layout draws (up to %d each: the same objects linked in other orders)", draws)
	}
	return fmt.Sprintf("for the build specs of %s over their layout draws (up to %d each: the same objects linked in other orders) and for one binary of %s",
		strings.Join(specs, ", "), draws, strings.Join(single, ", "))
}

// coverSentence is the headline's sentence on what the intervals cover.
func coverSentence(r rank.Ranking) string {
	specs, _, _ := coverage(r)
	if len(specs) == 0 {
		return "These intervals are within this run and for one binary per image: another run, or another build of the same flags, can land outside them."
	}
	return "These intervals are within this run and " + coverClaim(r) + ": another run can land outside them."
}

// decisionSentence says what the decision (rank's decide) found: the
// leader settled as the fastest, with its closest rival's bound, or the
// rivals it is tied with.
func decisionSentence(d rank.Decision) string {
	k := len(d.Rivals) + 1
	how := fmt.Sprintf("one-sided bounds of `%s` over each of the %d other entries, each at %.2f%%, so that a wrong \"fastest\" comes out in at most %.0f%% of runs", d.Leader, k-1, 100*d.Level, 100*d.Alpha)
	if d.Looks > 1 {
		how = fmt.Sprintf("one-sided bounds of `%s` over each of the %d other entries at look %d of the bench's %d, each at %.2f%% (this look's %.2f%% share of the %.0f%%), so that a wrong \"fastest\" comes out in at most %.0f%% of runs however many looks it takes", d.Leader, k-1, d.Look, d.Looks, 100*d.Level, 100*d.LookAlpha, 100*d.Alpha, 100*d.Alpha)
	}
	if d.Settled {
		c := d.Rivals[0]
		for _, r := range d.Rivals {
			if r.Lo < c.Lo {
				c = r
			}
		}
		return fmt.Sprintf("The decision: `%s` is the fastest entry (%s); its closest rival is `%s`, %s× [≥ %s].", d.Leader, how, c.Image, num(float64(c.Ratio)), num(float64(c.Lo)))
	}
	var tied []string
	for _, r := range d.Rivals {
		if !r.Separated {
			tied = append(tied, fmt.Sprintf("`%s` (%s× [≥ %s], ±%.2f%%)", r.Image, num(float64(r.Ratio)), num(float64(r.Lo)), 100*float64(r.HalfWidth)))
		}
	}
	out := fmt.Sprintf("The decision (%s) does not separate `%s` from %s: any of them may be the fastest", how, d.Leader, joinAnd(tied))
	if w := d.Shortfall(); !math.IsNaN(w) {
		out += fmt.Sprintf("; `%s` is at most %.2f%% slower than the fastest of them", d.Leader, 100*w)
	}
	return out + "."
}

// quoted is each name in backquotes.
func quoted(xs []string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = "`" + x + "`"
	}
	return out
}
