package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redis-variants/redis-variants/rank"
	"github.com/redis-variants/redis-variants/results"
	"github.com/redis-variants/redis-variants/variants"
)

// TestRankCommand ranks a synthetic run folder end to end: it picks the
// latest run, reads nested trial files (skipping a broken one with a
// warning), takes the primary reference from plan.json and writes
// ranking.json and the four reports.
func TestRankCommand(t *testing.T) {
	runs := t.TempDir()
	os.MkdirAll(filepath.Join(runs, "20260101-000000", "trials"), 0o755) // older, empty
	run := &results.Run{Dir: filepath.Join(runs, "20261129-120000")}
	plan := variants.Plan{
		References: []variants.Variant{{Name: "stock", Kind: variants.KindDistro}, {Name: "official", Kind: variants.KindOfficial}},
		Variants:   []variants.Variant{{Name: "fast", Kind: variants.KindVariant, Opt: "O3", Compiler: variants.Compiler{Family: "gcc", Version: "12"}}},
	}
	if err := run.WriteJSON("plan.json", plan); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 1))
	speed := map[string]float64{"stock": 1, "official": 1, "fast": 1.3}
	for img, f := range speed {
		for _, test := range []string{"GET", "SET"} {
			for rep := 0; rep < 6; rep++ {
				tr := rank.Trial{Variant: img, Reference: img != "fast", Runtime: "host", Test: test, Pipeline: 1, Rep: rep,
					OpsPerSec: 1e5 * f * math.Exp(0.02*r.NormFloat64()), P50Ms: 0.4, P99Ms: 1}
				if err := run.WriteJSON(fmt.Sprintf("trials/%s/host/%s-P1-%d.json", img, test, rep), tr); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	os.WriteFile(run.Path("trials", "broken.json"), []byte("{"), 0o644)

	root := newRoot()
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs([]string{"rank", "--runs", runs})
	if err := root.Execute(); err != nil {
		t.Fatalf("rank: %v\n%s", err, errOut.String())
	}
	for _, f := range []string{"ranking.json", "report.md", "report.csv", "report.json", "report.html"} {
		if !run.Exists(f) {
			t.Errorf("rank did not write %s", f)
		}
	}
	var rk rank.Ranking
	if err := run.ReadJSON("ranking.json", &rk); err != nil {
		t.Fatal(err)
	}
	st, ok := rk.Standing("host")
	if !ok || st.Primary != "stock" || st.Entries[0].Image != "fast" || st.Entries[0].Versus[0].Verdict != rank.Faster {
		t.Errorf("standings %+v, want fast first and faster than the primary reference stock", st)
	}
	if rk.Trials != 3*2*6 {
		t.Errorf("ranked %d trials, want 36", rk.Trials)
	}
	if !strings.Contains(out.String(), "| 1 | `fast` |") || !strings.Contains(errOut.String(), "broken.json") {
		t.Errorf("stdout:\n%s\nstderr:\n%s", out.String(), errOut.String())
	}
	md, _ := os.ReadFile(run.Path("report.md"))
	if !strings.Contains(string(md), "broken.json") || !strings.Contains(string(md), "gcc-12") {
		t.Errorf("report.md lacks the broken-file note or the image table:\n%s", md)
	}
	var doc map[string]json.RawMessage
	b, _ := os.ReadFile(run.Path("report.json"))
	if err := json.Unmarshal(b, &doc); err != nil || doc["trials"] == nil {
		t.Errorf("report.json: %v", err)
	}

	// No trials at all: a clear error.
	root = newRoot()
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs([]string{"rank", "--run", filepath.Join(runs, "20260101-000000")})
	if err := root.Execute(); err == nil || !strings.Contains(err.Error(), "no trial") {
		t.Errorf("empty run: err = %v, want a 'no trial' error", err)
	}
}

// TestRankNamesUnreadableRecords: a plan.json that cannot be decoded
// beside a bench.json that names a profile crashed rank (the plan's
// profiles were read before its error), and an unreadable verification
// record left its image silently without a verification. Now both are
// warnings, on stderr and among the report's notes.
func TestRankNamesUnreadableRecords(t *testing.T) {
	writeTrials := func(t *testing.T, run *results.Run) {
		for img, f := range map[string]float64{"stock": 1, "fast": 1.3} {
			for rep := 0; rep < 4; rep++ {
				tr := rank.Trial{Variant: img, Reference: img == "stock", Runtime: "host", Test: "SET", Pipeline: 1, Rep: rep,
					OpsPerSec: 1e5 * f * (1 + 0.01*float64(rep)), P50Ms: 0.4, P99Ms: 1}
				if err := run.WriteJSON(fmt.Sprintf("trials/%s/host/SET-P1-%d.json", img, rep), tr); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	rankRun := func(t *testing.T, runs string) (string, string) {
		root := newRoot()
		var out, errOut bytes.Buffer
		root.SetOut(&out)
		root.SetErr(&errOut)
		root.SetArgs([]string{"rank", "--runs", runs})
		root.Execute() // no answer from so few trials is an error; the warnings are what is judged
		return out.String(), errOut.String()
	}

	t.Run("plan", func(t *testing.T) {
		runs := t.TempDir()
		run := &results.Run{Dir: filepath.Join(runs, "20261203-120000")}
		writeTrials(t, run)
		os.WriteFile(run.Path("plan.json"), []byte(`{"references": [`), 0o644)
		if err := run.WriteJSON(results.BenchFile, map[string]any{"profile": "quick"}); err != nil {
			t.Fatal(err)
		}
		_, errOut := rankRun(t, runs)
		if !strings.Contains(errOut, "the run's plan cannot be read") {
			t.Fatalf("stderr does not name the unreadable plan:\n%s", errOut)
		}
		md, _ := os.ReadFile(run.Path("report.md"))
		if !strings.Contains(string(md), "the run's plan cannot be read") {
			t.Errorf("report.md does not name the unreadable plan:\n%s", md)
		}
	})
	t.Run("verification", func(t *testing.T) {
		runs := t.TempDir()
		run := &results.Run{Dir: filepath.Join(runs, "20261203-120000")}
		writeTrials(t, run)
		plan := variants.Plan{
			References: []variants.Variant{{Name: "stock", Kind: variants.KindDistro}},
			Variants:   []variants.Variant{{Name: "fast", Kind: variants.KindVariant, Opt: "O3", Compiler: variants.Compiler{Family: "gcc", Version: "12"}}},
		}
		if err := run.WriteJSON("plan.json", plan); err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(run.Path("verify"), 0o755)
		os.WriteFile(run.Path("verify", "fast.json"), []byte(`{"variant": "fast", "status": `), 0o644)
		_, errOut := rankRun(t, runs)
		if !strings.Contains(errOut, "verification record left out") || !strings.Contains(errOut, "fast.json") {
			t.Fatalf("stderr does not name the unreadable verification:\n%s", errOut)
		}
	})
}
