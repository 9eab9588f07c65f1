package report

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/redis-variants/redis-variants/rank"
	"github.com/redis-variants/redis-variants/results"
	"github.com/redis-variants/redis-variants/variants"
)

// experimentColumns head the published-experiment table (Markdown and
// HTML alike).
var experimentColumns = []string{"claim", "published", "published ratio", "this run [interval]", "what the interval covers", "published direction here", "published ratio inside?"}

// experimentRows is one row per claim of the run's experiment, in
// experimentColumns' order.
func experimentRows(r rank.Ranking) [][]string {
	var rows [][]string
	for _, c := range r.Experiment {
		pub := "–"
		if c.Claim.Ratio > 0 {
			pub = fmt.Sprintf("%.4g", c.Claim.Ratio)
		}
		this, covers, dir, within := "not measured", c.Why, "–", "–"
		if c.Found {
			this = fmt.Sprintf("%s [%s, %s]", num4(float64(c.Ratio)), num4(float64(c.Lo)), num4(float64(c.Hi)))
			covers = fmt.Sprintf("%s; %s%% interval", c.Covers, strconv.FormatFloat(100*c.Confidence, 'g', 3, 64))
			if c.Direction != "" {
				dir = map[string]string{results.DirectionHolds: "holds", results.DirectionOpposite: "**opposite**", results.DirectionTie: "not seen (a tie here)"}[c.Direction]
				within = map[bool]string{true: "yes", false: "no"}[c.Within]
			}
		}
		rows = append(rows, []string{claimWhat(c), c.Published, pub, this, covers, dir, within})
	}
	return rows
}

// claimWhat says what a claim compares, A over B, on what.
func claimWhat(c results.ClaimResult) string {
	on := ""
	switch {
	case c.Measure != variants.MeasureThroughput:
		on = c.Measure + " latency of "
	default:
		on = "throughput of "
	}
	where := ""
	if c.Image != "" {
		where = fmt.Sprintf(" (`%s`", c.Image)
	} else if c.Runtime != "" {
		where = fmt.Sprintf(" (under `%s`", c.Runtime)
	}
	if c.Test != "" {
		b := c.Test
		if c.Pipeline > 0 {
			b = rank.Bench{Test: c.Test, Pipeline: c.Pipeline}.String()
		}
		if where == "" {
			where = " (" + b
		} else {
			where += ", " + b
		}
	}
	if where != "" {
		where += ")"
	}
	return fmt.Sprintf("%s: %s`%s` / `%s`%s", c.Label, on, c.A, c.B, where)
}

// experimentIntro is the section's text above its table.
func experimentIntro(e *variants.Experiment) string {
	var b strings.Builder
	if e.Source != "" {
		fmt.Fprintf(&b, "Published in %s.", e.Source)
	}
	if e.Here != "" {
		fmt.Fprintf(&b, " Here: %s", e.Here)
	}
	b.WriteString(" Each claim's figure is a ratio A / B from this run (throughput: > 1 means A is faster; latency: > 1 means A is slower), with the interval of the comparison that answers it; a published direction is seen here only where that interval excludes 1.")
	return strings.TrimSpace(b.String())
}

func experimentTitle(e *variants.Experiment) string {
	if e.Number > 0 {
		return fmt.Sprintf("Published experiment %d: %s", e.Number, e.Title)
	}
	return "Published experiment: " + e.Title
}

// experimentSection puts each published claim beside this run's figure.
func experimentSection(r rank.Ranking) string {
	e := r.Thresholds.Experiment
	if e == nil {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "## %s\n\n%s\n\n", experimentTitle(e), experimentIntro(e))
	b.WriteString("| " + strings.Join(experimentColumns, " | ") + " |\n|---|---|---:|---|---|---|---|\n")
	for _, row := range experimentRows(r) {
		for i := range row {
			row[i] = strings.ReplaceAll(row[i], "|", "\\|")
		}
		b.WriteString("| " + strings.Join(row, " | ") + " |\n")
	}
	b.WriteString("\n")
	return b.String()
}
