package report

import (
	"strings"
	"testing"
)

// TestRatioChartCutsWideIntervals: one interval to 4×10²² (what a
// collapsed estimate printed before issue 52) does not set the axis: the
// axis stays about the ratios, and that interval is cut with an arrow.
func TestRatioChartCutsWideIntervals(t *testing.T) {
	rows := []barRow{
		{label: "a", ratio: 1.30, lo: 1.29, hi: 1.33},
		{label: "b", ratio: 1.05, lo: 1e-20, hi: 4e22},
		{label: "c", ratio: 1.07, lo: 1.05, hi: 1.09},
	}
	svg := string(ratioChart("score", "scores", rows, 220, 560, "ref = 1"))
	if !strings.Contains(svg, `class="err cut"`) || strings.Count(svg, `class="err cut"`) != 2 {
		t.Errorf("the wide interval is not cut at both ends:\n%s", svg)
	}
	if !strings.Contains(svg, ">1<") || !strings.Contains(svg, ">1.4<") {
		t.Errorf("the axis does not cover 1 to 1.33, the ratios' range:\n%s", svg)
	}
	if strings.Contains(svg, "e+") || strings.Contains(svg, ">2<") || strings.Contains(svg, ">10<") {
		t.Errorf("the axis reaches the wide interval's end:\n%s", svg)
	}
}
