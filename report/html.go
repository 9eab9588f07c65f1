package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"html/template"
	"math"
	"sort"
	"strings"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/redis-variants/redis-variants/rank"
)

// CDFSeries is one image's latency distribution on one benchmark: the
// merged HdrHistograms of its trials, as (latency ms, cumulative fraction)
// points.
type CDFSeries struct {
	Image     string       `json:"image"`
	Reference bool         `json:"reference"`
	Count     int64        `json:"count"`  // latencies recorded
	Points    [][2]float64 `json:"points"` // [ms, fraction ≤ ms], fraction ascending
}

// CDF is the latency distributions of every image on one benchmark under
// one runtime.
type CDF struct {
	ID      string      `json:"id"`
	Runtime string      `json:"runtime"`
	Bench   string      `json:"bench"`
	Series  []CDFSeries `json:"series"`
}

// cdfQuantiles are the fractions at which each CDF is sampled: dense in
// the body, then into the tail.
var cdfQuantiles = func() []float64 {
	var q []float64
	for i := 0; i < 100; i += 2 {
		q = append(q, float64(i)/100)
	}
	return append(q, 0.99, 0.995, 0.999, 0.9995, 0.9999, 1)
}()

// CDFs decodes the trials' histograms (hdrhistogram-go V2 compressed,
// base64, microseconds), merges them per cell and samples each merged
// distribution. Histograms that fail to decode are reported as errors
// naming the trial and left out.
func CDFs(r rank.Ranking, trials []rank.Trial) ([]CDF, []error) {
	type key struct {
		rt, img string
		b       rank.Bench
	}
	merged := map[key]*hdrhistogram.Histogram{}
	var errs []error
	for _, t := range trials {
		if t.Hist == "" {
			continue
		}
		h, err := hdrhistogram.Decode([]byte(t.Hist))
		if err != nil {
			errs = append(errs, fmt.Errorf("decoding latency histogram of %s/%s/%s rep %d: %w", t.Variant, t.Runtime, t.Test, t.Rep, err))
			continue
		}
		k := key{t.Runtime, t.Variant, rank.Bench{Test: t.Test, Pipeline: max(t.Pipeline, 1)}}
		if m := merged[k]; m != nil {
			m.Merge(h)
		} else {
			merged[k] = h
		}
	}
	refs := map[string]bool{}
	for _, ref := range r.References {
		refs[ref] = true
	}
	var out []CDF
	for _, rt := range r.Runtimes {
		for _, b := range r.Benches {
			c := CDF{ID: fmt.Sprintf("cdf-%d", len(out)), Runtime: rt, Bench: b.String()}
			for _, img := range r.Images {
				h := merged[key{rt, img, b}]
				if h == nil || h.TotalCount() == 0 {
					continue
				}
				s := CDFSeries{Image: img, Reference: refs[img], Count: h.TotalCount()}
				for _, q := range cdfQuantiles {
					v := h.ValueAtQuantile(100 * q)
					if q == 0 {
						v = h.Min()
					}
					s.Points = append(s.Points, [2]float64{float64(v) / 1000, q})
				}
				c.Series = append(c.Series, s)
			}
			if len(c.Series) > 0 {
				out = append(out, c)
			}
		}
	}
	return out, errs
}

// barRow is one bar of a ratio chart: a label, the ratio drawn from 1,
// its interval (NaN: none) and the class that colours it (faster,
// slower, tie, self), with a tooltip.
type barRow struct {
	label, class, title string
	ratio, lo, hi       float64
}

// ratioChart draws rows as bars from 1 (the reference) to each ratio,
// with the interval as an error bar and a dashed line at 1 labelled
// oneLabel; left is the width kept for the labels.
func ratioChart(class, aria string, rows []barRow, left, width int, oneLabel string) template.HTML {
	if len(rows) == 0 {
		return ""
	}
	// The axis covers 1 and every ratio, and the intervals as far as
	// the ratios' own span (at least 0.05) beyond them: an interval that
	// reaches further is cut at the axis with an arrow, so one wide
	// interval cannot shrink every other to a dot.
	rlo, rhi := 1.0, 1.0
	for _, r := range rows {
		if !math.IsNaN(r.ratio) {
			rlo, rhi = math.Min(rlo, r.ratio), math.Max(rhi, r.ratio)
		}
	}
	reach := math.Max(rhi-rlo, 0.05)
	lo, hi := rlo, rhi
	for _, r := range rows {
		for _, v := range []float64{r.lo, r.hi} {
			if !math.IsNaN(v) {
				lo, hi = math.Min(lo, math.Max(v, rlo-reach)), math.Max(hi, math.Min(v, rhi+reach))
			}
		}
	}
	pad := math.Max((hi-lo)*0.08, 0.01)
	lo, hi = lo-pad, hi+pad
	const row, top = 26, 24
	h := top + row*len(rows) + 30
	x := func(v float64) float64 { return float64(left) + (v-lo)/(hi-lo)*float64(width) }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="%s" viewBox="0 0 %d %d" width="%d" height="%d" role="img" aria-label="%s">`, class, left+width+20, h, left+width+20, h, html.EscapeString(aria))
	for _, t := range ticks(lo, hi, 6) {
		fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" class="grid"/><text x="%.1f" y="%d" class="tick" text-anchor="middle">%s</text>`,
			x(t), x(t), top-6, h-24, x(t), h-10, fmtTick(t))
	}
	for i, r := range rows {
		y := top + i*row
		fmt.Fprintf(&b, `<text x="%d" y="%d" class="label" text-anchor="end">%s</text>`, left-8, y+16, html.EscapeString(r.label))
		x0, x1 := x(1), x(r.ratio)
		if x1 < x0 {
			x0, x1 = x1, x0
		}
		fmt.Fprintf(&b, `<rect x="%.1f" y="%d" width="%.1f" height="16" class="bar %s"><title>%s</title></rect>`, x0, y+4, math.Max(x1-x0, 1), r.class, html.EscapeString(r.title))
		if !math.IsNaN(r.lo) && r.hi > r.lo {
			yl := float64(y) + 12
			el, eh := math.Max(r.lo, lo), math.Min(r.hi, hi)
			fmt.Fprintf(&b, `<path d="M%.1f %.1fH%.1f" class="err"/>`, x(el), yl, x(eh))
			for _, end := range []struct {
				v   float64
				cut bool
				dir float64
			}{{el, el > r.lo, -1}, {eh, eh < r.hi, 1}} {
				if end.cut { // an arrowhead: the interval goes on past the axis
					fmt.Fprintf(&b, `<path d="M%.1f %.1fL%.1f %.1fL%.1f %.1f" class="err cut"/>`, x(end.v)-end.dir*6, yl-5, x(end.v), yl, x(end.v)-end.dir*6, yl+5)
				} else {
					fmt.Fprintf(&b, `<path d="M%.1f %.1fV%.1f" class="err"/>`, x(end.v), yl-5, yl+5)
				}
			}
		}
	}
	fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" class="one"/>`, x(1), x(1), top-6, h-24)
	if oneLabel != "" {
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" class="tick" text-anchor="middle">%s</text>`, x(1), top-10, html.EscapeString(oneLabel))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// verdictBar is the bar class of a verdict: green faster (or less
// memory), red slower (or more), blue the reference, grey a tie.
func verdictBar(v string) string {
	switch v {
	case rank.Faster, rank.Less:
		return "faster"
	case rank.Slower, rank.More:
		return "slower"
	case rank.Self:
		return "self"
	}
	return "tie"
}

// scoreChart draws one runtime's scores against the primary reference.
func scoreChart(st rank.Standings) template.HTML {
	var rows []barRow
	for _, e := range st.Entries {
		if e.Score.IsNaN() {
			continue
		}
		verdict := rank.Tie
		for _, s := range e.Versus {
			if s.Reference == st.Primary {
				verdict = s.Verdict
			}
		}
		name := e.Image
		if e.Reference {
			name += " (ref)"
		}
		rows = append(rows, barRow{label: fmt.Sprintf("#%s %s", rankText(e.Rank, e.RankHi), name), class: verdictBar(verdict),
			title: fmt.Sprintf("%s: %.3f [%.3f, %.3f] %s", e.Image, float64(e.Score), float64(e.Lo), float64(e.Hi), verdict),
			ratio: float64(e.Score), lo: float64(e.Lo), hi: float64(e.Hi)})
	}
	return ratioChart("score", "scores under "+st.Runtime, rows, 220, 560, st.Primary+" = 1")
}

// axisChart draws the overall runtime-axis effects.
func axisChart(r rank.Ranking) template.HTML {
	var rows []barRow
	for _, a := range r.Axes {
		if a.Test != "" {
			continue
		}
		rows = append(rows, barRow{label: a.Axis + " " + a.Other + "/" + a.Base + ": " + a.Image, class: verdictBar(a.Verdict),
			title: fmt.Sprintf("%.3f [%.3f, %.3f] %s", a.Ratio, a.Lo, a.Hi, a.Verdict), ratio: a.Ratio, lo: a.Lo, hi: a.Hi})
	}
	return ratioChart("axes", "runtime effects", rows, 300, 480, "")
}

// ticks returns about n round values covering [lo, hi].
func ticks(lo, hi float64, n int) []float64 {
	span := hi - lo
	if !(span > 0) {
		return nil
	}
	step := math.Pow(10, math.Floor(math.Log10(span/float64(n))))
	for _, m := range []float64{1, 2, 5, 10} {
		if span/(step*m) <= float64(n) {
			step *= m
			break
		}
	}
	var out []float64
	for v := math.Ceil(lo/step) * step; v <= hi+1e-12; v += step {
		out = append(out, v)
	}
	return out
}

func fmtTick(v float64) string {
	s := fmt.Sprintf("%.3f", v)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	return s
}

type htmlCell struct {
	Text  string
	Class string
}

type htmlTable struct {
	Head []string
	Rows [][]htmlCell
}

type htmlRuntime struct {
	Name    string
	Chart   template.HTML
	Ranking htmlTable
	Heat    heatMap
	Benches []htmlBench
}

type htmlBench struct {
	Name  string
	Table htmlTable
	CDF   string // id of the CDF svg ("" when no histograms)
}

type htmlPage struct {
	Title     string
	Overview  []string
	Runtimes  []htmlRuntime
	AxisChart template.HTML
	Axes      htmlTable
	Warnings  []string
	Images    htmlTable
	Method    template.HTML
	Headline  template.HTML
	ExpTitle  string
	ExpIntro  string
	Exp       htmlTable
	Pairs     htmlTable
	Memory    htmlTable
	MemIntro  template.HTML
	MemChart  template.HTML
	CDFJSON   template.JS
	Script    template.JS
	Style     template.CSS
}

func verdictClass(v string) string {
	switch v {
	case rank.Faster:
		return "v-faster"
	case rank.Slower:
		return "v-slower"
	case rank.Tie, rank.NotTested:
		return "v-tie"
	}
	return ""
}

// HTML returns report.html: one file with inline CSS, SVG charts of the
// scores and runtime effects (drawn here), and latency CDFs drawn by a
// small inline script from JSON embedded in the page.
func HTML(r rank.Ranking, trials []rank.Trial, ctx Context) ([]byte, error) {
	cdfs, errs := CDFs(r, trials)
	p := htmlPage{Title: ctx.title(), Script: template.JS(script), Style: template.CSS(style)}
	for _, l := range strings.Split(strings.TrimSpace(overview(r, ctx)), "\n") {
		l = strings.ReplaceAll(l, "[Warnings](#warnings)", "Warnings below")
		p.Overview = append(p.Overview, PlainText(strings.TrimPrefix(l, "- ")))
	}
	cdfID := map[string]string{}
	for _, c := range cdfs {
		cdfID[c.Runtime+"\x00"+c.Bench] = c.ID
	}
	for _, st := range r.Standings {
		hr := htmlRuntime{Name: st.Runtime, Chart: scoreChart(st), Heat: heat(r, st)}
		hr.Ranking.Head = []string{"Rank", "Image"}
		_, heads := versusColumns(r, st)
		for _, h := range heads {
			hr.Ranking.Head = append(hr.Ranking.Head, strings.ReplaceAll(h[0], "`", ""), h[1])
		}
		hr.Ranking.Head = append(hr.Ranking.Head, "benchmarks")
		for _, e := range st.Entries {
			name := e.Image
			if e.Reference {
				name += " (reference)"
			}
			row := []htmlCell{{Text: rankText(e.Rank, e.RankHi), Class: "num"}, {Text: name}}
			n := 0
			for _, s := range e.Versus {
				if s.Verdict == rank.Self {
					row = append(row, htmlCell{Text: "1", Class: "num"}, htmlCell{Text: "reference"})
				} else {
					v := s.Verdict
					if s.Benches == 0 {
						v = "n/a"
					}
					row = append(row, htmlCell{Text: interval(float64(s.Score), float64(s.Lo), float64(s.Hi)), Class: "num"}, htmlCell{Text: v, Class: verdictClass(v)})
				}
				n = max(n, s.Benches)
			}
			hr.Ranking.Rows = append(hr.Ranking.Rows, append(row, htmlCell{Text: fmt.Sprint(n), Class: "num"}))
		}
		for _, b := range r.Benches {
			t := benchHTML(r, st.Runtime, b)
			if len(t.Rows) == 0 {
				continue
			}
			hr.Benches = append(hr.Benches, htmlBench{Name: b.String(), Table: t, CDF: cdfID[st.Runtime+"\x00"+b.String()]})
		}
		p.Runtimes = append(p.Runtimes, hr)
	}
	p.AxisChart = axisChart(r)
	p.Axes.Head = []string{"Axis", "Image", "Benchmark", "ratio [95% CI]", "p adj", "verdict"}
	for _, a := range r.Axes {
		bench := "all (geometric mean)"
		if a.Test != "" {
			bench = rank.Bench{Test: a.Test, Pipeline: a.Pipeline}.String()
		}
		p.Axes.Rows = append(p.Axes.Rows, []htmlCell{{Text: fmt.Sprintf("%s (%s / %s)", a.Axis, a.Other, a.Base)}, {Text: a.Image}, {Text: bench},
			{Text: shortInterval(a.Ratio, a.Lo, a.Hi, a.Short), Class: "num"}, {Text: pval(a.PAdj), Class: "num"}, {Text: a.Verdict, Class: verdictClass(a.Verdict)}})
	}
	for _, w := range r.Warnings {
		s := w.Kind + ": "
		if w.Subject != "" {
			s += w.Subject + ": "
		}
		p.Warnings = append(p.Warnings, s+w.Message)
	}
	p.Warnings = append(p.Warnings, ctx.Notes...)
	for _, e := range errs {
		p.Warnings = append(p.Warnings, e.Error())
	}
	if len(ctx.Images) > 0 {
		p.Images.Head = imageColumns
		for _, im := range ctx.Images {
			var row []htmlCell
			for i, c := range imageCells(im) {
				cls := ""
				switch imageColumns[i] {
				case "size":
					cls = "num"
				case "digest", "reference":
					cls = "mono"
				}
				row = append(row, htmlCell{Text: c, Class: cls})
			}
			p.Images.Rows = append(p.Images.Rows, row)
		}
	}
	if m := r.Memory; m != nil {
		p.Memory.Head = memoryColumns
		for _, row := range memoryRows(m, ctx) {
			var cells []htmlCell
			for i, c := range row {
				cls := "num"
				if i == 1 || i == 2 {
					cls = ""
				}
				if i == 6 {
					cls = verdictClass(map[string]string{rank.Less: rank.Faster, rank.More: rank.Slower}[c])
				}
				cells = append(cells, htmlCell{Text: c, Class: cls})
			}
			p.Memory.Rows = append(p.Memory.Rows, cells)
		}
		p.MemIntro = template.HTML(mdToHTML(memoryIntro(m) + "\n" + strings.Join(m.Notes, "\n")))
		p.MemChart = memoryChart(m)
	}
	p.Method = template.HTML(mdToHTML(methodSection(r, ctx)))
	p.Headline = template.HTML(mdToHTML(Headline(r)))
	if e := r.Thresholds.Experiment; e != nil {
		p.ExpTitle, p.ExpIntro = experimentTitle(e), PlainText(experimentIntro(e))
		p.Exp.Head = experimentColumns
		for _, row := range experimentRows(r) {
			var cells []htmlCell
			for i, c := range row {
				cls := ""
				if i == 2 || i == 3 {
					cls = "num"
				}
				cells = append(cells, htmlCell{Text: PlainText(c), Class: cls})
			}
			p.Exp.Rows = append(p.Exp.Rows, cells)
		}
	}
	if len(r.Pairs) > 0 {
		p.Pairs.Head = []string{"pair", "benchmark", "family", "ratio [CI]", "verdict", "p", "replicates", "windows", "window sd", "side effect", "saturation"}
		for _, pr := range r.Pairs {
			bench := "score"
			if pr.Test != "" {
				bench = rank.Bench{Test: pr.Test, Pipeline: pr.Pipeline}.String()
			}
			p.Pairs.Rows = append(p.Pairs.Rows, []htmlCell{{Text: pr.PairKey.String()}, {Text: bench}, {Text: pr.Family},
				{Text: fmt.Sprintf("%s [%s, %s]", num4(float64(pr.Ratio)), num4(float64(pr.Lo)), num4(float64(pr.Hi))), Class: "num"},
				{Text: pr.Verdict, Class: verdictClass(pr.Verdict)}, {Text: pval(float64(pr.P)), Class: "num"},
				{Text: fmt.Sprint(pr.Replicates), Class: "num"}, {Text: fmt.Sprint(pr.Windows), Class: "num"},
				{Text: fmt.Sprintf("%.2f%%", 100*pr.WindowSD), Class: "num"}, {Text: fmt.Sprintf("%+.2f%%", 100*pr.SideEffect), Class: "num"},
				{Text: fmt.Sprintf("%.2f", pr.Saturation), Class: "num"}})
		}
	}
	if cdfs == nil {
		cdfs = []CDF{}
	}
	j, err := json.Marshal(cdfs) // escapes <, > and & for embedding in <script>
	if err != nil {
		return nil, fmt.Errorf("encoding latency CDFs: %w", err)
	}
	p.CDFJSON = template.JS(j)
	var buf bytes.Buffer
	if err := pageTemplate.Execute(&buf, p); err != nil {
		return nil, fmt.Errorf("rendering report.html: %w", err)
	}
	return buf.Bytes(), nil
}

func benchHTML(r rank.Ranking, rt string, bn rank.Bench) htmlTable {
	var t htmlTable
	var rows []rank.CellSummary
	for _, c := range r.Cells {
		if c.Runtime == rt && c.Test == bn.Test && c.Pipeline == bn.Pipeline {
			rows = append(rows, c)
		}
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].Ops.Center > rows[j].Ops.Center })
	t.Head = []string{"Image", "ops/s median [CI]", "n", "CV"}
	for _, ref := range r.References {
		t.Head = append(t.Head, "vs "+ref+" [CI]", "p adj", "verdict")
	}
	t.Head = append(t.Head, "p50 ms", "p99 ms", "server CPU ns/op")
	for _, c := range rows {
		name := c.Image
		if c.Reference {
			name += " (ref)"
		}
		row := []htmlCell{{Text: name}, {Text: fmt.Sprintf("%s [%s, %s]", ops(c.Ops.Center), ops(c.Ops.Lo), ops(c.Ops.Hi)), Class: "num"},
			{Text: fmt.Sprint(c.N), Class: "num"}, {Text: fmt.Sprintf("%.1f%%", 100*c.CV), Class: "num"}}
		for _, ref := range r.References {
			if ref == c.Image {
				row = append(row, htmlCell{Text: "1", Class: "num"}, htmlCell{}, htmlCell{Text: "reference"})
				continue
			}
			cmp, ok := r.Comparison(rt, bn, c.Image, ref)
			if !ok {
				row = append(row, htmlCell{Text: "n/a"}, htmlCell{}, htmlCell{})
				continue
			}
			row = append(row, htmlCell{Text: shortInterval(cmp.Ratio, cmp.Lo, cmp.Hi, cmp.Short), Class: "num"}, htmlCell{Text: pval(cmp.PAdj), Class: "num"}, htmlCell{Text: cmp.Verdict, Class: verdictClass(cmp.Verdict)})
		}
		cpu := "n/a"
		if c.CPUNsPerOp.N > 0 {
			cpu = fmt.Sprintf("%.0f [%.0f, %.0f]", c.CPUNsPerOp.Center, c.CPUNsPerOp.Lo, c.CPUNsPerOp.Hi)
		}
		row = append(row, htmlCell{Text: fmt.Sprintf("%.3f", c.P50Ms), Class: "num"}, htmlCell{Text: fmt.Sprintf("%.3f", c.P99Ms), Class: "num"}, htmlCell{Text: cpu, Class: "num"})
		t.Rows = append(t.Rows, row)
	}
	return t
}

// mdToHTML renders the small Markdown subset methodSection and Headline
// use: paragraphs, "- " lists, **bold** and `code`.
func mdToHTML(md string) string {
	var b strings.Builder
	inList := false
	for _, l := range strings.Split(md, "\n") {
		if strings.HasPrefix(l, "## ") || l == "" {
			if inList {
				b.WriteString("</ul>")
				inList = false
			}
			continue
		}
		text := html.EscapeString(strings.TrimPrefix(l, "### "))
		for strings.Count(text, "`") >= 2 {
			text = strings.Replace(text, "`", "<code>", 1)
			text = strings.Replace(text, "`", "</code>", 1)
		}
		for strings.Count(text, "**") >= 2 {
			text = strings.Replace(text, "**", "<b>", 1)
			text = strings.Replace(text, "**", "</b>", 1)
		}
		if strings.HasPrefix(l, "- ") {
			if !inList {
				b.WriteString("<ul>")
				inList = true
			}
			fmt.Fprintf(&b, "<li>%s</li>", strings.TrimPrefix(text, "- "))
			continue
		}
		fmt.Fprintf(&b, "<p>%s</p>", text)
	}
	if inList {
		b.WriteString("</ul>")
	}
	return b.String()
}

var pageTemplate = template.Must(template.New("report").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>{{.Style}}</style>
<script>{{.Script}}</script>
</head>
<body>
<header>
<h1>{{.Title}}</h1>
<section class="answer" aria-label="The answer">{{.Headline}}</section>
<nav class="toc">{{range .Runtimes}}<a href="#rt-{{.Name}}">Ranking under {{.Name}}</a>{{end}}{{if .Memory.Rows}}<a href="#memory">Memory</a>{{end}}{{if .Pairs.Rows}}<a href="#pairs">Co-scheduled pairs</a>{{end}}<a href="#axes">Runtime effects</a>{{if .Images.Rows}}<a href="#images">Images</a>{{end}}<a href="#warnings">Warnings ({{len .Warnings}})</a><a href="#method">Method</a></nav>
<details class="facts"><summary>Run facts</summary><ul class="overview">{{range .Overview}}<li>{{.}}</li>{{end}}</ul></details>
</header>
{{define "table"}}<div class="scroll"><table><thead><tr>{{range .Head}}<th>{{.}}</th>{{end}}</tr></thead><tbody>{{range .Rows}}<tr>{{range .}}<td{{if .Class}} class="{{.Class}}"{{end}}>{{.Text}}</td>{{end}}</tr>{{end}}</tbody></table></div>{{end}}
{{if .ExpTitle}}<section id="experiment"><h2>{{.ExpTitle}}</h2><p>{{.ExpIntro}}</p>{{template "table" .Exp}}</section>{{end}}
{{range .Runtimes}}
<section class="runtime" id="rt-{{.Name}}">
<h2>Ranking under <code>{{.Name}}</code></h2>
<div class="scroll chart">{{.Chart}}</div>
{{template "table" .Ranking}}
{{if .Heat.Rows}}<h3>Per-test ratios against <code>{{.Heat.Primary}}</code></h3>
<p class="note">Each cell is the image's ratio to <code>{{.Heat.Primary}}</code> on one benchmark (&gt; 1: faster); green is faster, red slower, deeper the larger the difference; grey cells are ties. Hover a cell for its interval.</p>
<div class="scroll"><table class="heat"><thead><tr><th>Image</th>{{range .Heat.Head}}<th>{{.}}</th>{{end}}</tr></thead><tbody>{{range .Heat.Rows}}<tr><th scope="row">{{.Image}}</th>{{range .Cells}}<td style="{{.Style}}"{{if .Title}} title="{{.Title}}"{{end}}>{{.Text}}</td>{{end}}</tr>{{end}}</tbody></table></div>{{end}}
<h3>Per benchmark under <code>{{.Name}}</code></h3>
{{range .Benches}}
<div class="bench">
<h4>{{.Name}}</h4>
{{template "table" .Table}}
{{if .CDF}}<div class="scroll chart"><svg class="cdf" id="{{.CDF}}" data-cdf="{{.CDF}}" viewBox="0 0 760 300" width="760" height="300" role="img" aria-label="latency CDF {{.Name}}"></svg></div>{{end}}
</div>
{{end}}
</section>
{{end}}
{{if .Memory.Rows}}<section id="memory"><h2>Memory</h2>{{.MemIntro}}<div class="scroll chart">{{.MemChart}}</div>{{template "table" .Memory}}</section>{{end}}
{{if .Pairs.Rows}}<section id="pairs"><h2>Co-scheduled pairs</h2><p>The ratio of the base's server CPU time per operation to the image's, both servers on the same CPU at the same time (&gt; 1: the image is faster). Score rows of images are the primary family (Holm-corrected verdicts, each with the interval at its Holm level); the rest are uncorrected 95% intervals.</p><details><summary>All {{len .Pairs.Rows}} rows</summary>{{template "table" .Pairs}}</details></section>{{end}}
<section id="axes">
<h2>Runtime effects</h2>
{{if .Axes.Rows}}<div class="scroll chart">{{.AxisChart}}</div>{{template "table" .Axes}}{{else}}<p>No runtime axis could be measured: each needs both of its runtimes.</p>{{end}}
</section>
{{if .Images.Rows}}<section id="images"><h2>Images</h2>{{template "table" .Images}}</section>{{end}}
<section>
<h2 id="warnings">Warnings</h2>
{{if .Warnings}}<ul class="warnings">{{range .Warnings}}<li>{{.}}</li>{{end}}</ul>{{else}}<p>None.</p>{{end}}
</section>
<section class="method" id="method">
<h2>How this was measured</h2>
{{.Method}}
</section>
<script type="application/json" id="cdf-data">{{.CDFJSON}}</script>
</body>
</html>
`))

const style = `
*{box-sizing:border-box}
body{font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0 auto;max-width:1180px;color:#1b1f24;padding:16px}
h1{font-size:24px;margin:4px 0 12px}h2{font-size:19px;margin-top:36px;border-bottom:1px solid #d0d7de;padding-bottom:4px}h3{font-size:16px;margin-top:22px}h4{font-size:14px;margin:18px 0 6px}
.answer{background:#f0f6ff;border:1px solid #b6d4fe;border-radius:8px;padding:6px 16px;font-size:16px}
.answer p{margin:10px 0}
.toc{display:flex;flex-wrap:wrap;gap:4px 14px;margin:12px 0;font-size:13.5px}.toc a{color:#0969da;text-decoration:none}
.facts{margin:8px 0 0;font-size:13px;color:#424a53}.facts summary{cursor:pointer}
.note{font-size:13px;color:#57606a}
.scroll{overflow-x:auto;max-width:100%;-webkit-overflow-scrolling:touch}
table{border-collapse:collapse;margin:8px 0 12px;font-size:12.5px}th,td{border:1px solid #d0d7de;padding:3px 7px;text-align:left;vertical-align:top}th{background:#f6f8fa}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}td.mono{font-family:ui-monospace,monospace;font-size:11.5px}
table.heat td{text-align:center;font-variant-numeric:tabular-nums;min-width:64px}table.heat th[scope=row]{white-space:nowrap}
.v-faster{color:#116329;font-weight:600}.v-slower{color:#a40e26;font-weight:600}.v-tie{color:#57606a}
svg{display:block;margin:8px 0;max-width:100%;height:auto}
.grid{stroke:#eaeef2}.tick{font-size:11px;fill:#57606a}.label{font-size:12px;fill:#1b1f24}
.bar.faster{fill:#2da44e}.bar.slower{fill:#cf222e}.bar.tie{fill:#8c959f}.bar.self{fill:#0969da}
.err{stroke:#1b1f24;stroke-width:1.3;fill:none}.one{stroke:#0969da;stroke-dasharray:4 3}
.cdf .axis{stroke:#57606a}.cdf .line{fill:none;stroke-width:1.6}.cdf .ref{stroke-dasharray:5 3}
.warnings li{margin:2px 0;overflow-wrap:anywhere}code{background:#f6f8fa;padding:0 3px;border-radius:3px;overflow-wrap:anywhere}
details summary{cursor:pointer;color:#0969da}
@media (max-width:640px){.chart svg{min-width:600px}body{font-size:14px;padding:10px}h1{font-size:20px}.answer{font-size:14.5px;padding:4px 10px}table{font-size:11.5px}}
`

// script records errors on the page (so a headless browser test can see
// them in the DOM) and draws each latency CDF from the embedded JSON:
// x = latency in ms on a log scale, y = fraction of requests at or below.
const script = `
(function(){
  var root = document.documentElement;
  function fail(msg){ root.setAttribute('data-js-errors', (root.getAttribute('data-js-errors')||'') + msg + ';'); }
  window.addEventListener('error', function(e){ fail(String(e.message)); });
  var palette = ['#1f77b4','#ff7f0e','#2ca02c','#d62728','#9467bd','#8c564b','#e377c2','#17becf','#bcbd22','#7f7f7f'];
  var NS = 'http://www.w3.org/2000/svg';
  function el(name, attrs, text){
    var e = document.createElementNS(NS, name);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function draw(svg, cdf){
    var W = 760, H = 300, L = 56, R = 190, T = 14, B = 40;
    var lo = Infinity, hi = 0;
    cdf.series.forEach(function(s){ s.points.forEach(function(p){ if (p[0] > 0) { lo = Math.min(lo, p[0]); hi = Math.max(hi, p[0]); } }); });
    if (!(hi > 0)) return false;
    if (!(lo < hi)) { lo = hi / 2; }
    var l0 = Math.floor(Math.log10(lo)), l1 = Math.ceil(Math.log10(hi));
    if (l1 <= l0) l1 = l0 + 1;
    function x(v){ v = Math.max(v, Math.pow(10, l0)); return L + (Math.log10(v) - l0) / (l1 - l0) * (W - L - R); }
    function y(q){ return T + (1 - q) * (H - T - B); }
    svg.appendChild(el('text', {x: L, y: 11, 'class': 'tick'}, cdf.runtime + ' / ' + cdf.bench + ': latency CDF'));
    for (var d = l0; d <= l1; d++) {
      var xv = x(Math.pow(10, d));
      svg.appendChild(el('line', {x1: xv, x2: xv, y1: T, y2: H - B, 'class': 'grid'}));
      svg.appendChild(el('text', {x: xv, y: H - B + 16, 'class': 'tick', 'text-anchor': 'middle'}, String(Math.pow(10, d) >= 1 ? Math.pow(10, d) : Math.pow(10, d).toPrecision(1)) + ' ms'));
    }
    [0, 0.25, 0.5, 0.75, 0.9, 1].forEach(function(q){
      svg.appendChild(el('line', {x1: L, x2: W - R, y1: y(q), y2: y(q), 'class': 'grid'}));
      svg.appendChild(el('text', {x: L - 6, y: y(q) + 4, 'class': 'tick', 'text-anchor': 'end'}, String(q)));
    });
    svg.appendChild(el('path', {d: 'M' + L + ' ' + T + 'V' + (H - B) + 'H' + (W - R), 'class': 'axis', fill: 'none'}));
    svg.appendChild(el('text', {x: (L + W - R) / 2, y: H - 6, 'class': 'tick', 'text-anchor': 'middle'}, 'latency (ms, log scale)'));
    cdf.series.forEach(function(s, i){
      var c = palette[i % palette.length];
      var d = s.points.map(function(p, j){ return (j ? 'L' : 'M') + x(p[0]).toFixed(1) + ' ' + y(p[1]).toFixed(1); }).join('');
      var path = el('path', {d: d, 'class': 'line' + (s.reference ? ' ref' : ''), stroke: c});
      path.appendChild(el('title', {}, s.image + ' (' + s.count + ' requests)'));
      svg.appendChild(path);
      var ly = T + 8 + i * 16;
      svg.appendChild(el('line', {x1: W - R + 12, x2: W - R + 34, y1: ly, y2: ly, stroke: c, 'stroke-width': 2, 'class': s.reference ? 'ref' : ''}));
      svg.appendChild(el('text', {x: W - R + 40, y: ly + 4, 'class': 'label'}, s.image + (s.reference ? ' (ref)' : '')));
    });
    return true;
  }
  document.addEventListener('DOMContentLoaded', function(){
    var data = JSON.parse(document.getElementById('cdf-data').textContent);
    var n = 0;
    data.forEach(function(cdf){
      var svg = document.getElementById(cdf.id);
      if (svg && draw(svg, cdf)) n++;
    });
    root.setAttribute('data-cdfs-drawn', String(n));
  });
})();
`
