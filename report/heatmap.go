package report

import (
	"fmt"
	"html/template"
	"math"

	"github.com/redis-variants/redis-variants/rank"
)

// heatCell is one image's ratio to the primary reference on one
// benchmark (or the score), coloured by how much faster or slower it is;
// a tie is grey whatever its ratio.
type heatCell struct {
	Text  string
	Title string
	Style template.CSS
}

type heatRow struct {
	Image string
	Cells []heatCell
}

type heatMap struct {
	Primary string
	Head    []string
	Rows    []heatRow
}

// heat is the per-test ratio map of one runtime: every ranked image
// (rows, in rank order, the A/A control last) against the primary
// reference on each benchmark and on the score (columns). With
// co-scheduled pairs it reads the pairs' per-benchmark rows, else the
// standalone comparisons.
func heat(r rank.Ranking, st rank.Standings) heatMap {
	hm := heatMap{Primary: st.Primary}
	if st.Primary == "" {
		return hm
	}
	for _, b := range r.Benches {
		hm.Head = append(hm.Head, b.String())
	}
	hm.Head = append(hm.Head, "score")
	type key struct {
		image, test string
		pipe        int
	}
	pairs := map[key]rank.PairResult{}
	control := false
	for _, p := range r.Pairs {
		if p.Runtime != st.Runtime || p.Base != st.Primary || p.Kind != rank.KindImage && p.Kind != rank.KindControl {
			continue
		}
		img := p.Image
		if p.Kind == rank.KindControl {
			img, control = st.Primary+" (A/A)", true
		}
		pairs[key{img, p.Test, p.Pipeline}] = p
	}
	cell := func(ratio, lo, hi float64, verdict string) heatCell {
		if math.IsNaN(ratio) {
			return heatCell{Text: "n/a"}
		}
		return heatCell{Text: fmt.Sprintf("%.3f", ratio), Title: fmt.Sprintf("%.4f [%.4f, %.4f] %s", ratio, lo, hi, verdict), Style: heatStyle(ratio, verdict)}
	}
	row := func(img string) heatRow {
		hr := heatRow{Image: img}
		for _, b := range r.Benches {
			if st.Method == rank.MethodPairs {
				p, ok := pairs[key{img, b.Test, b.Pipeline}]
				if !ok {
					hr.Cells = append(hr.Cells, heatCell{Text: "–"})
					continue
				}
				hr.Cells = append(hr.Cells, cell(float64(p.Ratio), float64(p.Lo), float64(p.Hi), p.Verdict))
				continue
			}
			c, ok := r.Comparison(st.Runtime, b, img, st.Primary)
			if !ok {
				hr.Cells = append(hr.Cells, heatCell{Text: "–"})
				continue
			}
			hr.Cells = append(hr.Cells, cell(c.Ratio, c.Lo, c.Hi, c.Verdict))
		}
		if p, ok := pairs[key{img, "", 0}]; ok {
			hr.Cells = append(hr.Cells, cell(float64(p.Ratio), float64(p.Lo), float64(p.Hi), p.Verdict))
			return hr
		}
		for _, e := range st.Entries {
			if e.Image != img {
				continue
			}
			for _, s := range e.Versus {
				if s.Reference == st.Primary {
					hr.Cells = append(hr.Cells, cell(float64(s.Score), float64(s.Lo), float64(s.Hi), s.Verdict))
					return hr
				}
			}
		}
		hr.Cells = append(hr.Cells, heatCell{Text: "–"})
		return hr
	}
	for _, e := range st.Entries {
		if e.Image == st.Primary {
			continue
		}
		hm.Rows = append(hm.Rows, row(e.Image))
	}
	if control {
		hm.Rows = append(hm.Rows, row(st.Primary+" (A/A)"))
	}
	return hm
}

// heatStyle colours a ratio: green for faster, red for slower, deeper
// the further from 1 (full depth at 1.5× or 1/1.5×); a tie is grey.
func heatStyle(ratio float64, verdict string) template.CSS {
	if !rank.Decided(verdict) || ratio <= 0 {
		return "background:#eef0f2;color:#424a53"
	}
	t := math.Min(math.Abs(math.Log(ratio))/math.Log(1.5), 1)
	light := 92 - 52*t
	hue := 130
	if ratio < 1 {
		hue = 4
	}
	color := "#1b1f24"
	if light < 60 {
		color = "#ffffff"
	}
	return template.CSS(fmt.Sprintf("background:hsl(%d,55%%,%.0f%%);color:%s", hue, light, color))
}
