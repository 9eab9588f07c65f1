package rank

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestAnswer: a campaign that meets its preconditions answers; one whose
// A/A control lost its replicates, whose intervals are wider than the
// profile's resolution, or that lost more than a tenth of its benchmark
// measurements gives no answer, saying why; an image that lost more than
// the control is a bias risk. Replicates replaced by complete stand-ins
// are not short: that campaign answers, and its losses still count for
// the bias risk.
func TestAnswer(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	d := quickDesign(t)
	truth := map[string]float64{"stock": 1, "fast": 1.05, "same": 1}
	names := []string{"fast", "same"}
	th := DefaultThresholds()
	th.Resolution = 0.015
	ok := Rank(nil, campaign(r, measuredNoise(), d, truth, names), th)
	if !ok.Answer.Given || len(ok.Answer.Why) != 0 {
		t.Fatalf("a clean campaign: answer %+v (resolution %v)", ok.Answer, ok.Resolution)
	}

	reason := func(reps []Replicate, th Thresholds, want string) Ranking {
		t.Helper()
		rk := Rank(nil, reps, th)
		if rk.Answer.Given || !strings.Contains(strings.Join(rk.Answer.Why, "; "), want) || len(rk.Answer.Change) == 0 {
			t.Errorf("want no answer because %q, got %+v", want, rk.Answer)
		}
		return rk
	}
	// The A/A control with 2 replicates left: the others given up.
	reps := campaign(r, measuredNoise(), d, truth, names)
	kept := 0
	for i := range reps {
		if reps[i].Kind() == KindControl {
			if kept >= 2 {
				reps[i].Windows, reps[i].Failed = nil, "the pair's servers did not start 2 times"
			}
			kept++
		}
	}
	reason(reps, th, "A/A control under host has 2 replicate(s)")

	// A leader tied with its rivals, and by its bounds possibly slower
	// than one of them by more than a resolution of ±0.1%: no answer. The same resolution with a leader settled as the
	// fastest (every bound above 1): an answer, however wide its bounds.
	tight := th
	tight.Resolution = 0.001
	flat := map[string]float64{"stock": 1, "fast": 1, "same": 1}
	rk0 := reason(campaign(r, measuredNoise(), d, flat, names), tight, "more than the profile's stated ±0.10%")
	if dd, ok := rk0.Decision("host"); !ok || dd.Settled || len(dd.Tied()) == 0 {
		t.Errorf("three equal entries: decision %+v, want unsettled with ties", dd)
	}
	for range 5 {
		rk := Rank(nil, campaign(r, measuredNoise(), d, truth, names), tight)
		if dd, ok := rk.Decision("host"); ok && dd.Settled && !rk.Answer.Given {
			t.Errorf("a settled decision (%s) gave no answer: %v", dd.Leader, rk.Answer.Why)
		}
	}

	// "fast" loses GET in every replicate, the control nothing: more than
	// a tenth lost, and fast is a bias risk.
	reps = campaign(r, measuredNoise(), d, truth, names)
	for i := range reps {
		if reps[i].Image != "fast" {
			continue
		}
		var ws []Window
		for _, w := range reps[i].Windows {
			if w.Test != "GET" {
				ws = append(ws, w)
			}
		}
		reps[i].Windows = ws
		reps[i].Lost = []Lost{{Test: "GET", Pipeline: d.pipeline, Reason: "window 0 rejected"}}
	}
	rk := reason(reps, th, "planned replicates have no complete stand-in")
	if !hasWarning(rk, WarnBiasRisk, "fast vs stock under host") || hasWarning(rk, WarnBiasRisk, "same vs stock under host") {
		t.Errorf("bias-risk warnings: %+v", rk.Warnings)
	}

	// The same losses, each replicate of fast replaced by a complete
	// stand-in (here: its windows before the loss): not short, an answer,
	// still a bias risk.
	clean := campaign(r, measuredNoise(), d, truth, names)
	reps = nil
	n := 0
	for i := range clean {
		n = max(n, clean[i].Rep+1)
	}
	for i := range clean {
		rep := clean[i]
		if rep.Image != "fast" {
			reps = append(reps, rep)
			continue
		}
		lost := rep
		lost.Windows = nil
		for _, w := range rep.Windows {
			if w.Test != "GET" {
				lost.Windows = append(lost.Windows, w)
			}
		}
		lost.Lost = []Lost{{Test: "GET", Pipeline: d.pipeline, Reason: "window 0 rejected"}}
		stand := rep
		was := rep.Rep
		stand.Rep, stand.Replaces = n+rep.Rep, &was
		reps = append(reps, lost, stand)
	}
	rk = Rank(nil, reps, th)
	if !rk.Answer.Given {
		t.Errorf("losses replaced by complete stand-ins: no answer: %v", rk.Answer.Why)
	}
	if !hasWarning(rk, WarnBiasRisk, "fast vs stock under host") {
		t.Errorf("replaced losses are still a bias risk: %+v", rk.Warnings)
	}
}
