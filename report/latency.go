package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/redis-variants/redis-variants/rank"
)

// latencySection is the Markdown section of the fixed-rate latency
// measure ("" without one).
func latencySection(r rank.Ranking) string {
	l := r.Latency
	if l == nil {
		return ""
	}
	var b strings.Builder
	p := l.Plan
	fmt.Fprintf(&b, "## Latency at a fixed rate\n\n")
	fmt.Fprintf(&b, "%s sent open loop at **%.0f requests/s** over %d connections, no pipelining, %s a trial; each latency from its request's intended send time (no coordinated omission).",
		p.Test, p.Rate, p.Clients, p.Duration)
	if p.Share > 0 {
		fmt.Fprintf(&b, " The rate is %.0f%% of the slowest cell's closed-loop capacity (%s), measured in this run.", 100*p.Share, p.Slowest)
	}
	fmt.Fprintf(&b, " Each cell's figures are the geometric mean of its trials (fresh servers, interleaved in a seeded order) with a %.0f%% t interval: about these images in this run, not between runs.", 100*l.Level)
	if l.NotCounted > 0 {
		fmt.Fprintf(&b, " %d trial(s) not counted (the generator fell behind its rate, or CPU was stolen).", l.NotCounted)
	}
	for _, sk := range p.Skipped {
		fmt.Fprintf(&b, " Runtime `%s` left out: %s.", sk.Runtime, sk.Why)
	}
	b.WriteString(" Every latency includes the generator's own lateness in writing the request (its send lag, last column); a cell whose median send lag is over half its median latency measures the generator as much as the server, and is marked generator-bound; one whose send lag p99 is over half its p99, tail generator-bound (its p99 and p99.9 say as much about the generator as about the server).")
	b.WriteString("\n\n| image | runtime | trials | p50 µs | p95 µs | p99 µs | p99.9 µs | send lag p50 / p99 µs |\n|---|---|---:|---|---|---|---|---|\n")
	for _, c := range l.Cells {
		row := []string{"`" + c.Image + "`", "`" + c.Runtime + "`", fmt.Sprint(c.N)}
		for _, q := range c.Percentiles {
			row = append(row, usInterval(float64(q.Us), float64(q.Lo), float64(q.Hi)))
		}
		lag := fmt.Sprintf("%.0f / %.0f", float64(c.SendLagP50Us), float64(c.SendLagP99Us))
		switch {
		case c.GeneratorBound:
			lag += " **generator-bound**"
		case c.GeneratorBoundTail:
			lag += " **tail generator-bound**"
		}
		row = append(row, lag)
		b.WriteString("| " + strings.Join(row, " | ") + " |\n")
	}
	if len(l.Comparisons) > 0 {
		fmt.Fprintf(&b, "\nEach runtime against `%s`, the same image: the ratio of each percentile (> 1: higher latency), simultaneous %.0f%% intervals over all %d comparisons (Bonferroni), Welch's t on the logs.\n\n",
			l.Comparisons[0].Base, 100*l.FamilyLvl, len(l.Comparisons))
		b.WriteString("| image | runtime | percentile | ratio [interval] | p adj | verdict |\n|---|---|---|---|---:|---|\n")
		for _, c := range l.Comparisons {
			v := c.Verdict
			if v != rank.Tie && v != rank.NotTested {
				v = "**" + v + "**"
			}
			fmt.Fprintf(&b, "| `%s` | `%s` / `%s` | %s | %s | %s | %s |\n", c.Image, c.Runtime, c.Base, c.Q,
				ratioInterval(float64(c.Ratio), float64(c.Lo), float64(c.Hi)), orDash(pval(float64(c.P))), v)
		}
	}
	b.WriteString("\n")
	return b.String()
}

func usInterval(v, lo, hi float64) string {
	switch {
	case math.IsNaN(v):
		return "–"
	case math.IsNaN(lo):
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.1f [%.1f, %.1f]", v, lo, hi)
}

func ratioInterval(v, lo, hi float64) string {
	switch {
	case math.IsNaN(v):
		return "–"
	case math.IsNaN(lo):
		return fmt.Sprintf("%.3f", v)
	}
	return fmt.Sprintf("%.3f [%.3f, %.3f]", v, lo, hi)
}

// orDash is s, or "–" for a figure there is none of.
func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}
