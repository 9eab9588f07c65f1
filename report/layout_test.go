package report

import (
	"math"
	"strings"
	"testing"

	"github.com/redis-variants/redis-variants/rank"
	"github.com/redis-variants/redis-variants/results"
)

func TestLayoutSection(t *testing.T) {
	if got := layoutSection(rank.Ranking{}); got != "" {
		t.Errorf("no draws, section %q", got)
	}
	est := func(r float64) results.Estimate {
		return results.Estimate{Ratio: results.Num(r), Lo: results.Num(r - 0.01), Hi: results.Num(r + 0.01), Replicates: 3}
	}
	r := rank.Ranking{Layouts: []results.LayoutSpread{{Image: "gcc-o3", Runtime: "host", SigmaLayout: 0.012, Share: 0.8, F: 9.5, P: 0.004,
		Fastest: 3, Slowest: 1, Range: est(1.03), Draws: []results.DrawScore{
			{Draw: 1, Name: "gcc-o3", ImageID: "sha256:0123456789abcdef", Estimate: est(1.01)},
			{Draw: 3, Name: "gcc-o3.l3", ImageID: "sha256:fedcba", Estimate: est(1.04)}}}}}
	got := layoutSection(r)
	for _, want := range []string{"## Layout draws", "| `gcc-o3` | `host` | 2 | 1.20% | 80% | 9.50 (0.004) |", "(draw 3 over draw 1)", "(`sha256:0123456789ab`, 3 replicates)", "not one binary"} {
		if !strings.Contains(got, want) {
			t.Errorf("layout section lacks %q:\n%s", want, got)
		}
	}
	r.Layouts[0].P = results.Num(math.NaN())
	if got := layoutSection(r); !strings.Contains(got, "(n/a)") {
		t.Errorf("no F test, section:\n%s", got)
	}
}
