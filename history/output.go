package history

import (
	"encoding/csv"
	"fmt"
	"html"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"
)

func num(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "n/a"
	}
	return strconv.FormatFloat(x, 'f', 3, 64)
}

// CellText is a cell as text: "1.123 [1.090, 1.150]", prefixed "≈" when
// the score cannot be told from the reference's (verdict tie) and "=" when
// its interval overlaps the row's best; "—" for an empty cell.
func CellText(c Cell) string {
	if c.Result == nil {
		return "—"
	}
	r := c.Result
	s := fmt.Sprintf("%s [%s, %s]", num(r.Score), num(r.Lo), num(r.Hi))
	if r.Verdict == "tie" {
		s = "≈" + s
	}
	if c.TiedBest {
		s = "=" + s
	}
	return s
}

func (t Table) caption() string {
	if t.Metric == MetricMemory {
		return fmt.Sprintf("Memory vs %s (its RSS after the memory workload's churn over the variant's: > 1 is less memory for the same data, with its interval), best variant per %s on each CPU",
			strings.Join(t.References, "/"), t.By)
	}
	return fmt.Sprintf("Score vs %s (geometric mean of ops/s ratios over the benchmarks, with its interval), runtime %s, best variant per %s on each CPU",
		strings.Join(t.References, "/"), t.Runtime, t.By)
}

// Legend explains the marks.
const Legend = "Bold: the best on that CPU. =: its interval overlaps the best's (tied for best). ≈: not distinguishable from the reference (verdict tie). Scores compare within a row only: each is a ratio to the reference measured on that machine."

func mdEscape(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// Markdown writes the table as GitHub-flavoured Markdown.
func (t Table) Markdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s.\n\n", t.caption())
	b.WriteString("| CPU (x86-64 level) | runs |")
	for _, c := range t.Columns {
		fmt.Fprintf(&b, " %s |", mdEscape(c))
	}
	b.WriteString("\n|---|---:|")
	for range t.Columns {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	for _, r := range t.Rows {
		fmt.Fprintf(&b, "| %s | %d |", mdEscape(r.Label()), len(r.Runs))
		for _, c := range r.Cells {
			s := CellText(c)
			if c.Result != nil {
				if c.Best {
					s = "**" + s + "**"
				}
				if t.By != ByVariant {
					s += " " + mdEscape(c.Result.Variant)
				}
			}
			fmt.Fprintf(&b, " %s |", s)
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "\n%s\n", Legend)
	_, err := io.WriteString(w, b.String())
	return err
}

// CSV writes one line per non-empty cell.
func (t Table) CSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"cpu_model", "x86_64_level", "by", "group", "variant", "run", "reference", "score", "lo", "hi", "verdict", "best", "tied_best", "variants"})
	for _, r := range t.Rows {
		for i, c := range r.Cells {
			if c.Result == nil {
				continue
			}
			x := c.Result
			cw.Write([]string{r.CPUModel, r.Level, t.By, t.Columns[i], x.Variant, filepath.Base(x.Run), x.Reference,
				strconv.FormatFloat(x.Score, 'g', 6, 64), strconv.FormatFloat(x.Lo, 'g', 6, 64), strconv.FormatFloat(x.Hi, 'g', 6, 64),
				x.Verdict, strconv.FormatBool(c.Best), strconv.FormatBool(c.TiedBest), strconv.Itoa(c.Variants)})
		}
	}
	cw.Flush()
	return cw.Error()
}

var palette = []string{"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"}

// SVG returns a grouped horizontal bar chart: one group per row, one bar
// per column with its interval as a whisker, and the reference at 1.0.
func (t Table) SVG() string {
	const (
		labelW = 260
		plotW  = 520
		barH   = 14
		gap    = 4
		groupG = 18
		top    = 30
	)
	lo, hi := 1.0, 1.0
	for _, r := range t.Rows {
		for _, c := range r.Cells {
			if c.Result == nil {
				continue
			}
			for _, v := range []float64{c.Result.Score, c.Result.Lo, c.Result.Hi} {
				if !math.IsNaN(v) && !math.IsInf(v, 0) {
					lo, hi = math.Min(lo, v), math.Max(hi, v)
				}
			}
		}
	}
	pad := (hi - lo) * 0.08
	if pad == 0 {
		pad = 0.05
	}
	lo, hi = math.Max(0, lo-pad), hi+pad
	x := func(v float64) float64 { return labelW + (v-lo)/(hi-lo)*plotW }

	var b strings.Builder
	y := top
	var body strings.Builder
	for _, r := range t.Rows {
		n := 0
		for _, c := range r.Cells {
			if c.Result != nil {
				n++
			}
		}
		gh := n*(barH+gap) - gap
		if gh < barH {
			gh = barH
		}
		fmt.Fprintf(&body, `<text x="%d" y="%d" class="row">%s</text>`+"\n", labelW-8, y+gh/2+4, html.EscapeString(r.Label()))
		i := 0
		for ci, c := range r.Cells {
			if c.Result == nil {
				continue
			}
			res := c.Result
			by := y + i*(barH+gap)
			// Bars grow from the reference (1.0): right is faster, left slower.
			x0, x1 := x(1), x(res.Score)
			if math.IsNaN(res.Score) {
				x1 = x0
			}
			if x1 < x0 {
				x0, x1 = x1, x0
			}
			stroke := ""
			if c.Best {
				stroke = ` stroke="#000" stroke-width="1.5"`
			}
			fmt.Fprintf(&body, `<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="%s"%s><title>%s: %s (%s, run %s)</title></rect>`+"\n",
				x0, by, x1-x0, barH, palette[ci%len(palette)], stroke,
				html.EscapeString(t.Columns[ci]), html.EscapeString(CellText(c)), html.EscapeString(res.Variant), html.EscapeString(filepath.Base(res.Run)))
			if !math.IsNaN(res.Lo) && !math.IsNaN(res.Hi) {
				cy := by + barH/2
				fmt.Fprintf(&body, `<path d="M%.1f %dH%.1fM%.1f %dv%dM%.1f %dv%d" class="ci"/>`+"\n",
					x(res.Lo), cy, x(res.Hi), x(res.Lo), cy-4, 8, x(res.Hi), cy-4, 8)
			}
			fmt.Fprintf(&body, `<text x="%.1f" y="%d" class="val">%s</text>`+"\n", x(hi)+4, by+barH-3, html.EscapeString(CellText(c)))
			i++
		}
		y += gh + groupG
	}
	width := labelW + plotW + 200
	height := y + 40
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", width, height, width, height)
	b.WriteString(`<style>.row{text-anchor:end}.ci{stroke:#222;fill:none}.axis{stroke:#888}.ref{stroke:#c00;stroke-dasharray:4 3}.val{fill:#333;font-size:11px}</style>` + "\n")
	// Axis with ticks.
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" class="axis"/>`+"\n", labelW, y, labelW+plotW, y)
	for k := 0; k <= 4; k++ {
		v := lo + (hi-lo)*float64(k)/4
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">%s</text>`+"\n", x(v), y+16, num(v))
	}
	fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" class="ref"/>`+"\n", x(1), top-10, x(1), y)
	fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle" fill="#c00">%s = 1</text>`+"\n", x(1), top-14, html.EscapeString(strings.Join(t.References, "/")))
	b.WriteString(body.String())
	// Legend.
	for ci, c := range t.Columns {
		ly := top + ci*18
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="12" height="12" fill="%s"/><text x="%d" y="%d">%s</text>`+"\n",
			labelW+plotW+110, ly, palette[ci%len(palette)], labelW+plotW+128, ly+10, html.EscapeString(c))
	}
	b.WriteString("</svg>\n")
	return b.String()
}

// HTML writes a self-contained page: the chart and the table.
func (t Table) HTML(w io.Writer) error {
	var b strings.Builder
	b.WriteString("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>redis-variants history</title>\n")
	b.WriteString("<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px 8px;text-align:left}td.best{font-weight:bold;background:#eef6ee}td.tied{background:#f6f6e8}small{color:#555}</style>\n")
	b.WriteString("</head><body>\n<h1>redis-variants: results across machines</h1>\n")
	fmt.Fprintf(&b, "<p>%s.</p>\n", html.EscapeString(t.caption()))
	b.WriteString(t.SVG())
	b.WriteString("<table>\n<tr><th>CPU (x86-64 level)</th><th>runs</th>")
	for _, c := range t.Columns {
		fmt.Fprintf(&b, "<th>%s</th>", html.EscapeString(c))
	}
	b.WriteString("</tr>\n")
	for _, r := range t.Rows {
		fmt.Fprintf(&b, "<tr><td>%s</td><td>%d</td>", html.EscapeString(r.Label()), len(r.Runs))
		for _, c := range r.Cells {
			class := ""
			switch {
			case c.Best:
				class = ` class="best"`
			case c.TiedBest:
				class = ` class="tied"`
			}
			fmt.Fprintf(&b, "<td%s>%s", class, html.EscapeString(CellText(c)))
			if c.Result != nil && t.By != ByVariant {
				fmt.Fprintf(&b, " <small>%s</small>", html.EscapeString(c.Result.Variant))
			}
			b.WriteString("</td>")
		}
		b.WriteString("</tr>\n")
	}
	fmt.Fprintf(&b, "</table>\n<p><small>%s</small></p>\n</body></html>\n", html.EscapeString(Legend))
	_, err := io.WriteString(w, b.String())
	return err
}
