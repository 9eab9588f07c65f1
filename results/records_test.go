package results

import (
	"errors"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/redis-variants/redis-variants/variants"
)

// Every single-file record reads back what was written, a missing one
// says so with os.ErrNotExist (publications: none), and "not applicable"
// numbers survive the round trip as NaN.
func TestRecordsRoundTrip(t *testing.T) {
	r, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Plan(); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Plan of an empty run: %v, want ErrNotExist", err)
	}
	if _, err := r.Ranking(); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Ranking of an empty run: %v, want ErrNotExist", err)
	}
	if p, err := r.Publications(); err != nil || p != nil {
		t.Fatalf("Publications of an empty run: %v, %v", p, err)
	}

	plan := &variants.Plan{Variants: []variants.Variant{{Name: "gcc-o3", Opt: "O3"}}}
	if err := r.WritePlan(plan); err != nil {
		t.Fatal(err)
	}
	gotPlan, err := r.Plan()
	if err != nil || len(gotPlan.Variants) != 1 || gotPlan.Variants[0].Name != "gcc-o3" {
		t.Fatalf("plan read back as %+v, %v", gotPlan, err)
	}

	if err := r.WriteMachine(Machine{CPUModel: "EPYC", CPUs: 2, Level: "v3", Flags: []string{"avx2"}}); err != nil {
		t.Fatal(err)
	}
	m, err := r.Machine()
	if err != nil || m.CPUModel != "EPYC" || m.Level != "v3" || m.Flags != nil {
		t.Fatalf("machine read back as %+v, %v (flags are not recorded)", m, err)
	}

	rk := &Ranking{Images: []string{"a", "b"}, Standings: []Standings{{Runtime: "host",
		Entries: []Entry{{Image: "a", Rank: 1, Score: 1.05, Lo: Num(math.NaN()), Hi: Num(math.Inf(1))}}}}}
	if err := r.WriteRanking(rk); err != nil {
		t.Fatal(err)
	}
	got, err := r.Ranking()
	if err != nil {
		t.Fatal(err)
	}
	st, ok := got.Standing("host")
	if !ok || len(st.Entries) != 1 || st.Entries[0].Score != 1.05 || !st.Entries[0].Lo.IsNaN() || !st.Entries[0].Hi.IsNaN() {
		t.Fatalf("ranking read back as %+v", got.Standings)
	}

	for _, img := range []string{"a", "b"} {
		if err := r.AppendPublication(Published{Run: "x", Images: []PublishedImage{{Variant: img}}}); err != nil {
			t.Fatal(err)
		}
	}
	pubs, err := r.Publications()
	if err != nil || len(pubs) != 2 || pubs[0].Images[0].Variant != "a" || pubs[1].Images[0].Variant != "b" {
		t.Fatalf("publications read back as %+v, %v", pubs, err)
	}

	if err := os.WriteFile(r.Path(RankingFile), []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Ranking(); err == nil || errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a corrupt ranking.json read as %v", err)
	}
}

// TestEstimateNaNRoundTrip: a one-replicate estimate (no SE) and an exact
// one (infinite df) are written as null and read back as NaN; the ranking
// is written, not refused. A NaN in a plain float64
// field elsewhere is named in the error.
func TestEstimateNaNRoundTrip(t *testing.T) {
	r, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	e := Estimate{Ratio: 1.01, Lo: Num(math.NaN()), Hi: Num(math.NaN()), Confidence: 0.95, LogMean: 0.01,
		SE: Num(math.NaN()), DF: Num(math.Inf(1)), Replicates: 1, Windows: 2, WindowSD: Num(math.NaN())}
	rk := &Ranking{Pairs: []PairResult{{PairKey: PairKey{Image: "a"}, Estimate: e}}}
	if err := r.WriteRanking(rk); err != nil {
		t.Fatalf("writing a ranking with a one-replicate estimate: %v", err)
	}
	back, err := r.Ranking()
	if err != nil {
		t.Fatal(err)
	}
	g := back.Pairs[0].Estimate
	if !g.SE.IsNaN() || !g.DF.IsNaN() || !g.WindowSD.IsNaN() || g.LogMean != 0.01 || g.Confidence != 0.95 || g.Replicates != 1 || float64(g.Ratio) != 1.01 {
		t.Errorf("read back %+v", g)
	}
	rk.Thresholds.MaxCV = math.NaN()
	if err := r.WriteRanking(rk); err == nil || !strings.Contains(err.Error(), ".Thresholds.MaxCV") {
		t.Errorf("a NaN in a plain field: %v, want it named", err)
	}
}
