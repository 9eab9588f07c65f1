package rank

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/redis-variants/redis-variants/results"
)

// synth draws n trials of one cell whose ops/s are log-normal around
// median with coefficient of variation cv.
func synth(r *rand.Rand, image string, ref bool, runtime, test string, pipeline int, median, cv float64, n int) []Trial {
	out := make([]Trial, n)
	for i := range out {
		ops := median * math.Exp(cv*r.NormFloat64())
		out[i] = Trial{
			Variant: image, Reference: ref, Runtime: runtime, Test: test, Pipeline: pipeline, Clients: 50,
			Rep: i, OpsPerSec: ops, Requests: int64(ops * 10), P50Ms: 50 / ops * 1000, P99Ms: 120 / ops * 1000,
			ServerCPUNsPerOp: 1e9 / ops * 0.8, ClientCPUShare: 0.5, CPUModel: "Synthetic CPU",
		}
	}
	return out
}

var tests3 = []string{"GET", "SET", "LRANGE_100"}

// world builds trials for images with the given speed factors (relative
// to 100k ops/s) over tests3 under one runtime; "stock" is the reference.
func world(seed uint64, n int, cv float64, factors map[string]float64) []Trial {
	r := rand.New(rand.NewPCG(seed, 7))
	var ts []Trial
	for _, img := range []string{"stock", "a", "b", "c", "d"} {
		f, ok := factors[img]
		if !ok {
			continue
		}
		for _, test := range tests3 {
			ts = append(ts, synth(r, img, img == "stock", "host", test, 1, 1e5*f, cv, n)...)
		}
	}
	return ts
}

func entry(t *testing.T, r Ranking, rt, img string) Entry {
	t.Helper()
	st, ok := r.Standing(rt)
	if !ok {
		t.Fatalf("no standings for %s", rt)
	}
	for _, e := range st.Entries {
		if e.Image == img {
			return e
		}
	}
	t.Fatalf("no entry for %s in %s", img, rt)
	return Entry{}
}

func TestAATie(t *testing.T) {
	r := Rank(world(1, 5, 0.05, map[string]float64{"stock": 1, "a": 1}), nil, DefaultThresholds())
	for _, c := range r.Comparisons {
		if c.Verdict != Tie {
			t.Errorf("A/A comparison %+v is not a tie", c)
		}
	}
	e := entry(t, r, "host", "a")
	if e.Versus[0].Verdict != Tie || e.Rank != 1 || entry(t, r, "host", "stock").Rank != 1 {
		t.Errorf("A/A: entry %+v, want tie sharing rank 1", e)
	}
}

// Over 200 seeded A/A simulations (5 trials per cell, 3 benchmarks, 5%
// noise) the family-wise false-positive rate (any verdict other than tie,
// per benchmark or overall) stays near the nominal 5%.
func TestAAFalsePositiveRate(t *testing.T) {
	th := DefaultThresholds()
	th.Bootstrap = 500
	const sims = 200
	fp := 0
	for s := uint64(0); s < sims; s++ {
		r := Rank(world(100+s, 5, 0.05, map[string]float64{"stock": 1, "a": 1}), nil, th)
		bad := entry(t, r, "host", "a").Versus[0].Verdict != Tie
		for _, c := range r.Comparisons {
			bad = bad || c.Verdict != Tie
		}
		if bad {
			fp++
		}
	}
	rate := float64(fp) / sims
	t.Logf("A/A family-wise false-positive rate: %d/%d = %.3f", fp, sims, rate)
	if rate > 0.075 {
		t.Errorf("false-positive rate %.3f over %d A/A simulations, want ≤ ~0.05", rate, sims)
	}
}

func TestThirtyPercentSlower(t *testing.T) {
	r := Rank(world(2, 8, 0.04, map[string]float64{"stock": 1, "a": 0.7}), nil, DefaultThresholds())
	if len(r.Comparisons) != 3 {
		t.Fatalf("%d comparisons, want 3", len(r.Comparisons))
	}
	for _, c := range r.Comparisons {
		if c.Verdict != Slower || !(c.Lo <= 0.7 && 0.7 <= c.Hi) || c.Hi >= 1 {
			t.Errorf("comparison %s: ratio %.3f [%.3f, %.3f] p_adj %.2g %s; want slower with 0.7 inside", c.Test, c.Ratio, c.Lo, c.Hi, c.PAdj, c.Verdict)
		}
	}
	e := entry(t, r, "host", "a")
	s := e.Versus[0]
	if s.Verdict != Slower || !(s.Lo <= 0.7 && 0.7 <= s.Hi) {
		t.Errorf("score %+v, want slower with 0.7 inside", s)
	}
	if e.Rank != 2 || entry(t, r, "host", "stock").Rank != 1 {
		t.Errorf("ranks: a=%d stock=%d, want 2 and 1", e.Rank, entry(t, r, "host", "stock").Rank)
	}
}

// TestSmallDifferenceFewTrialsIsNotTested: with 3 trials a cell there is
// no interval at the family's level, so no comparison is tested: never a
// finding, and never called a tie either (issue 52).
func TestSmallDifferenceFewTrialsIsNotTested(t *testing.T) {
	for seed := uint64(0); seed < 20; seed++ {
		r := Rank(world(300+seed, 3, 0.05, map[string]float64{"stock": 1, "a": 1.02}), nil, DefaultThresholds())
		for _, c := range r.Comparisons {
			if c.Verdict != NotTested || !c.Short {
				t.Errorf("seed %d: 2%% with 3 noisy trials: %+v, want not tested (short)", seed, c)
			}
		}
		if v := entry(t, r, "host", "a").Versus[0].Verdict; v != NotTested {
			t.Errorf("seed %d: score verdict %s, want not tested (no bootstrap interval with 3 trials)", seed, v)
		}
		if !hasWarning(r, WarnUnderpowered, "") {
			t.Errorf("seed %d: no underpowered warning with 3 trials per cell", seed)
		}
	}
}

func TestRankGroups(t *testing.T) {
	r := Rank(world(3, 8, 0.03, map[string]float64{"stock": 1, "a": 1.3, "b": 1.3, "c": 0.7}), nil, DefaultThresholds())
	want := map[string]int{"a": 1, "b": 1, "stock": 3, "c": 4}
	for img, rk := range want {
		if got := entry(t, r, "host", img).Rank; got != rk {
			t.Errorf("rank of %s = %d, want %d", img, got, rk)
		}
	}
	st, _ := r.Standing("host")
	for i := 1; i < len(st.Entries); i++ {
		if st.Entries[i].Score > st.Entries[i-1].Score {
			t.Errorf("standings not sorted by score: %v", st.Entries)
		}
	}
	if v := entry(t, r, "host", "a").Versus[0].Verdict; v != Faster {
		t.Errorf("a vs stock: %s, want faster", v)
	}
}

func TestDeterministicAndOrderFree(t *testing.T) {
	ts := world(4, 4, 0.05, map[string]float64{"stock": 1, "a": 1.1, "b": 0.95})
	a, _ := json.Marshal(Rank(ts, nil, DefaultThresholds()))
	rev := append([]Trial(nil), ts...)
	rand.New(rand.NewPCG(9, 9)).Shuffle(len(rev), func(i, j int) { rev[i], rev[j] = rev[j], rev[i] })
	b, _ := json.Marshal(Rank(rev, nil, DefaultThresholds()))
	if string(a) != string(b) {
		t.Error("ranking depends on the order of the trials")
	}
	var back Ranking
	if err := json.Unmarshal(a, &back); err != nil {
		t.Fatalf("ranking does not round-trip through JSON: %v", err)
	}
	c, _ := json.Marshal(back)
	if string(a) != string(c) {
		t.Error("ranking changes through a JSON round trip")
	}
}

func TestJSONNulls(t *testing.T) {
	// No reference: scores are not applicable and must encode as null, not fail.
	r := Rank(world(5, 3, 0.05, map[string]float64{"a": 1, "b": 1}), nil, DefaultThresholds())
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	if !strings.Contains(string(b), `"score":null`) {
		t.Errorf("want null scores without a reference: %s", b)
	}
	if !hasWarning(r, WarnNoReference, "") {
		t.Error("no missing-reference warning")
	}
	if e := entry(t, r, "host", "a"); e.Rank != 1 || entry(t, r, "host", "b").Rank != 1 {
		t.Errorf("without scores every image shares rank 1, got %+v", r.Standings)
	}
}

func hasWarning(r Ranking, kind, subject string) bool {
	for _, w := range r.Warnings {
		if w.Kind == kind && (subject == "" || w.Subject == subject) {
			return true
		}
	}
	return false
}

func TestWarnings(t *testing.T) {
	r0 := rand.New(rand.NewPCG(6, 6))
	var ts []Trial
	ts = append(ts, synth(r0, "stock", true, "host", "GET", 1, 1e5, 0.02, 4)...)
	ts = append(ts, synth(r0, "noisy", false, "host", "GET", 1, 1e5, 0.4, 4)...)
	gen := synth(r0, "genbound", false, "host", "GET", 1, 1e5, 0.02, 4)
	for i := range gen {
		gen[i].ClientCPUShare = 0.97
	}
	ts = append(ts, gen...)
	errs := synth(r0, "erring", false, "host", "GET", 1, 1e5, 0.02, 4)
	errs[0].Errors = 12
	ts = append(ts, errs...)
	ts = append(ts, synth(r0, "few", false, "host", "GET", 1, 1e5, 0.02, 2)...)
	bad := synth(r0, "few", false, "host", "GET", 1, 1e5, 0.02, 1)
	bad[0].OpsPerSec = 0
	ts = append(ts, bad...)
	// a benchmark the reference lacks
	ts = append(ts, synth(r0, "noisy", false, "host", "SET", 1, 1e5, 0.02, 3)...)

	r := Rank(ts, nil, DefaultThresholds())
	for _, w := range []struct{ kind, subject string }{
		{WarnHighSpread, "noisy/host/GET"},
		{WarnGeneratorBound, "genbound/host/GET"},
		{WarnErrors, "erring/host/GET"},
		{WarnFewTrials, "few/host/GET"},
		{WarnInvalid, "few/host/GET"},
		{WarnNoReference, "stock/host/SET"},
		{WarnIncomplete, "genbound/host/SET"},
	} {
		if !hasWarning(r, w.kind, w.subject) {
			t.Errorf("missing warning %s for %s; got %+v", w.kind, w.subject, r.Warnings)
		}
	}
	for _, w := range r.Warnings {
		if w.Kind == WarnHighSpread && w.Subject != "noisy/host/GET" {
			t.Errorf("unexpected high-spread warning %+v", w)
		}
	}
	if r.Trials != len(ts) || r.Excluded != 1 {
		t.Errorf("trials %d excluded %d, want %d and 1", r.Trials, r.Excluded, len(ts))
	}
}

func TestAxisEffects(t *testing.T) {
	r0 := rand.New(rand.NewPCG(8, 8))
	var ts []Trial
	for _, img := range []string{"stock", "a"} {
		for _, test := range tests3 {
			ts = append(ts, synth(r0, img, img == "stock", "host", test, 1, 1e5, 0.03, 8)...)
			ts = append(ts, synth(r0, img, img == "stock", "bridge", test, 1, 0.8e5, 0.03, 8)...)
			ts = append(ts, synth(r0, img, img == "stock", "host-unconfined", test, 1, 1e5, 0.03, 8)...)
		}
	}
	r := Rank(ts, nil, DefaultThresholds())
	seen := map[string]int{}
	for _, a := range r.Axes {
		seen[a.Axis]++
		if a.Test != "" {
			continue
		}
		switch a.Axis {
		case "network":
			if a.Verdict != Slower || !(a.Lo <= 0.8 && 0.8 <= a.Hi) {
				t.Errorf("network effect %+v, want slower around 0.8", a)
			}
		case "seccomp":
			if a.Verdict != Tie {
				t.Errorf("seccomp effect %+v, want tie", a)
			}
		}
	}
	if seen["socket"] != 0 {
		t.Error("socket axis computed without a unix runtime")
	}
	if seen["network"] != 2*(3+1) || seen["seccomp"] != 2*(3+1) {
		t.Errorf("axis effects per axis: %v, want 8 each (2 images × (3 tests + overall))", seen)
	}

	// Other runtime names through Thresholds.Axes.
	for i := range ts {
		ts[i].Runtime = map[string]string{"host": "h", "bridge": "b", "host-unconfined": "hu"}[ts[i].Runtime]
	}
	th := DefaultThresholds()
	th.Axes = []Axis{{Name: "network", Base: "h", Other: "b"}}
	r = Rank(ts, nil, th)
	if len(r.Axes) != 8 {
		t.Errorf("custom axes: %d effects, want 8", len(r.Axes))
	}

	// One trial a cell (the quick profile's): a runtime 20% slower has
	// no interval, overall or per benchmark, and no verdict: "not
	// tested", never "slower" on an interval of zero width.
	ts = nil
	for _, img := range []string{"stock", "a"} {
		for _, test := range tests3 {
			ts = append(ts, synth(r0, img, img == "stock", "host", test, 1, 1e5, 0.03, 1)...)
			ts = append(ts, synth(r0, img, img == "stock", "bridge", test, 1, 0.8e5, 0.03, 1)...)
		}
	}
	r = Rank(ts, nil, DefaultThresholds())
	for _, a := range r.Axes {
		if a.Verdict != NotTested || !math.IsNaN(a.Lo) && a.Test == "" {
			t.Errorf("one trial a cell: %s %s %q: %.3f [%.3f, %.3f] %s, want not tested", a.Axis, a.Image, a.Test, a.Ratio, a.Lo, a.Hi, a.Verdict)
		}
	}
}

// BenchmarkRank ranks a realistic run: 10 images (2 references) × 4
// runtimes × 6 benchmarks × 5 trials = 1200 trials, 2000 bootstrap
// resamples.
func BenchmarkRank(b *testing.B) {
	r := rand.New(rand.NewPCG(11, 11))
	var ts []Trial
	for i := 0; i < 10; i++ {
		img := fmt.Sprintf("img%02d", i)
		for _, rt := range []string{"host", "bridge", "host-unconfined", "unix"} {
			for _, test := range []string{"PING_INLINE", "SET", "GET", "INCR", "LPUSH", "LRANGE_100"} {
				ts = append(ts, synth(r, img, i < 2, rt, test, 1, 1e5*(1+0.02*float64(i)), 0.05, 5)...)
			}
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		Rank(ts, nil, DefaultThresholds())
	}
}

func TestEmptyInput(t *testing.T) {
	r := Rank(nil, nil, Thresholds{})
	if r.Trials != 0 || len(r.Standings) != 0 || len(r.Warnings) != 0 {
		t.Errorf("empty ranking %+v", r)
	}
	if _, err := json.Marshal(r); err != nil {
		t.Errorf("empty ranking does not encode: %v", err)
	}
	// A single trial: no interval, no comparison, a few-trials warning, no panic.
	one := []Trial{{Variant: "stock", Reference: true, Runtime: "host", Test: "GET", OpsPerSec: 1e5}}
	r = Rank(one, nil, Thresholds{})
	if !hasWarning(r, WarnFewTrials, "stock/host/GET") {
		t.Errorf("one trial: warnings %+v", r.Warnings)
	}
	if _, err := json.Marshal(r); err != nil {
		t.Errorf("one-trial ranking does not encode: %v", err)
	}
}

// Record writes exactly the ranking the wrapped stage returned, and
// nothing when it failed.
func TestRecordWritesTheRanking(t *testing.T) {
	run, err := results.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	trials := []Trial{
		{Variant: "ref", Reference: true, Runtime: "host", Test: "SET", Pipeline: 1, OpsPerSec: 100},
		{Variant: "ref", Reference: true, Runtime: "host", Test: "SET", Pipeline: 1, OpsPerSec: 101, Rep: 1},
		{Variant: "a", Runtime: "host", Test: "SET", Pipeline: 1, OpsPerSec: 120},
		{Variant: "a", Runtime: "host", Test: "SET", Pipeline: 1, OpsPerSec: 121, Rep: 1},
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Record(&Ranker{}, run).Rank(ctx, trials, nil); err == nil {
		t.Fatal("a cancelled rank succeeded")
	}
	if run.Exists(results.RankingFile) {
		t.Fatal("a failed rank wrote ranking.json")
	}
	rk, err := Record(&Ranker{}, run).Rank(context.Background(), trials, nil)
	if err != nil {
		t.Fatal(err)
	}
	back, err := run.Ranking()
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Images) != 2 || back.Images[0] != "ref" || back.Method != rk.Method || len(back.Cells) != len(rk.Cells) {
		t.Fatalf("ranking.json holds images %v method %q (%d cells), the stage returned %v %q (%d)", back.Images, back.Method, len(back.Cells), rk.Images, rk.Method, len(rk.Cells))
	}
}
