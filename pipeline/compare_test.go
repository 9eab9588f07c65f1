package pipeline

import (
	"bytes"
	"encoding/json"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redis-variants/redis-variants/rank"
	"github.com/redis-variants/redis-variants/results"
)

// writeScores writes a run folder whose ranking.json holds primary scores
// only: image → log ratio against "stock" under host, each with SE se on
// 10 df, measured on cpu.
func writeScores(t *testing.T, root, name, cpu string, se float64, scores map[string]float64) string {
	t.Helper()
	dir := filepath.Join(root, name)
	rk := rank.Ranking{Method: rank.MethodPairs, References: []string{"stock"}, CPUModels: []string{cpu},
		Benches: []rank.Bench{{Test: "SET", Pipeline: 1}}}
	for im, y := range scores {
		rk.Pairs = append(rk.Pairs, rank.PairResult{PairKey: rank.PairKey{Image: im, Runtime: "host", Base: "stock", BaseRuntime: "host"},
			Kind: rank.KindImage, Family: rank.FamilyPrimary, Benchmarks: 1,
			Estimate: rank.Estimate{LogMean: results.Num(y), SE: results.Num(se), DF: 10, Ratio: results.Num(math.Exp(y))}})
	}
	if err := (&results.Run{Dir: dir}).WriteRanking(&rk); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestCompareMergesRuns: three runs whose images moved between runs by
// several within-run SEs. compare measures the run effect (Q far above
// its df, τ > 0, an allowance above 1), merges the scores with it
// (intervals wider than one run's), and ranks them from one family; with
// two runs it also gives the per-image z and Σz².
func TestCompareMergesRuns(t *testing.T) {
	root := t.TempDir()
	const se = 0.003
	var dirs []string
	for i, shift := range []float64{0, 0.012, -0.012} {
		dirs = append(dirs, writeScores(t, root, []string{"20261204-100000", "20261204-110000", "20261204-120000"}[i], "EPYC", se,
			map[string]float64{"fast": math.Log(1.08) + shift, "mid": math.Log(1.04) - shift, "twin": 0}))
	}
	var out bytes.Buffer
	if err := Compare(Config{Out: &out}, dirs, "", true); err != nil {
		t.Fatal(err)
	}
	var cmp Comparison
	if err := json.Unmarshal(out.Bytes(), &cmp); err != nil {
		t.Fatalf("compare --json: %v\n%s", err, out.String())
	}
	re := cmp.Merged.RunEffect
	if re == nil || re.DF != 6 || re.Images != 3 || !(float64(re.Q) > 30) || !(float64(re.Tau) > 0.005) || !(float64(re.Allowance) > 2) {
		t.Fatalf("run effect %+v, want Q ≫ 6 on 6 df over 3 images, τ > 0.5%%, allowance > 2", re)
	}
	if cmp.Agreement != nil {
		t.Error("an agreement for three runs: it is a two-run check")
	}
	for _, mi := range cmp.Merged.Images {
		if mi.Image != "fast" {
			continue
		}
		if hw := float64(mi.Estimate.SE); !(hw > se) {
			t.Errorf("merged SE of fast %.4f, want wider than one run's %.4f", hw, se)
		}
		if r := float64(mi.Estimate.Ratio); math.Abs(r-1.08) > 0.002 {
			t.Errorf("merged ratio of fast %.4f, want 1.08", r)
		}
	}
	st := cmp.Merged.Standings
	if len(st.Pairs) != 6 || !st.Separated("fast", "stock") || st.Separated("twin", "stock") {
		t.Errorf("merged standings %+v", st)
	}

	out.Reset()
	if err := Compare(Config{Out: &out}, dirs[:2], "", false); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, want := range []string{"Σz² = ", "2 runs merged under host", "run effect: Q = ", "not about another build of the same flags"} {
		if !strings.Contains(text, want) {
			t.Errorf("compare of two runs lacks %q:\n%s", want, text)
		}
	}
	if err := Compare(Config{Out: &out}, dirs[:1], "", false); err == nil {
		t.Error("compare of one run: no error")
	}
}

// TestEarlierRuns: the run effect is measured on the co-scheduled runs
// older than this one (the ranker then keeps those of its machine kind,
// rank.TestRankerMeasuresTheRunEffect).
func TestEarlierRuns(t *testing.T) {
	root := t.TempDir()
	writeScores(t, root, "20261204-090000", "EPYC", 0.003, map[string]float64{"fast": 0.09, "twin": 0.01})
	writeScores(t, root, "20261204-095000", "Xeon", 0.003, map[string]float64{"fast": 0.02, "twin": -0.03})
	writeScores(t, root, "20261204-130000", "EPYC", 0.003, map[string]float64{"fast": 0.05, "twin": 0.00}) // later than this run
	earlier, problems := earlierRuns(root, filepath.Join(root, "20261204-100000"))
	if len(problems) > 0 || len(earlier) != 2 || earlier[0].Name != "20261204-090000" || earlier[1].Name != "20261204-095000" {
		t.Fatalf("earlier runs %+v (%v), want the two older ones, oldest first", earlier, problems)
	}
}
