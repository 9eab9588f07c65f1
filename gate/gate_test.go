package gate

import (
	"math"
	"strings"
	"testing"
)

func TestDecide(t *testing.T) {
	aa := Interval{1.001, 0.99, 1.012}
	iv := func(r, lo, hi float64) Interval { return Interval{r, lo, hi} }
	for _, c := range []struct {
		name    string
		in      Input
		outcome string
		reason  string
	}{
		{"identical", Input{Margin: 0.05, Candidate: iv(0.9924, 0.9704, 1.0148), Control: aa, Answered: true}, Pass, "a tie"},
		{"faster", Input{Margin: 0.05, Candidate: iv(1.2, 1.18, 1.22), Control: aa, Answered: true}, Pass, "faster"},
		{"slower within the margin", Input{Margin: 0.05, Candidate: iv(0.97, 0.96, 0.98), Control: aa, Answered: true}, Pass, "within the 5.0% margin"},
		{"planted slowdown", Input{Margin: 0.1, Candidate: iv(0.6514, 0.6368, 0.6664), Control: aa, Answered: true}, Fail, "34.9% slower"},
		{"beyond the margin, interval reaching 1", Input{Margin: 0.05, Candidate: iv(0.93, 0.86, 1.01), Control: aa, Answered: true}, CannotTell, "not excluded"},
		{"within the margin, interval reaching past it", Input{Margin: 0.05, Candidate: iv(0.97, 0.94, 1.0), Control: aa, Answered: true}, CannotTell, "not excluded"},
		{"A/A failed", Input{Margin: 0.05, Candidate: iv(1, 0.99, 1.01), Control: iv(1.04, 1.02, 1.06), ControlSignificant: true, Answered: true}, CannotTell, "A/A control failed"},
		{"A/A significant but small", Input{Margin: 0.1, Candidate: iv(0.99, 0.97, 1.01), Control: iv(0.9893, 0.9796, 0.9991), ControlSignificant: true, Answered: true}, Pass, "a tie"},
		{"A/A failed beats a planted slowdown", Input{Margin: 0.05, Candidate: iv(0.6, 0.58, 0.62), Control: iv(0.9, 0.88, 0.92), ControlSignificant: true, Answered: true}, CannotTell, "A/A control failed"},
		{"no answer", Input{Margin: 0.05, Candidate: iv(0.6, 0.5, 0.7), Control: aa, Why: []string{"±6% is wider than ±5%"}}, CannotTell, "no answer: ±6%"},
		{"no candidate interval", Input{Margin: 0.05, Candidate: iv(0.9, math.NaN(), math.NaN()), Control: aa, Answered: true}, CannotTell, "candidate has no interval"},
		{"no control", Input{Margin: 0.05, Candidate: iv(0.9, 0.89, 0.91), Answered: true}, CannotTell, "control has no interval"},
		{"bad margin", Input{Margin: 0, Candidate: iv(0.5, 0.49, 0.51), Control: aa, Answered: true}, CannotTell, "margin 0"},
	} {
		d := Decide(c.in)
		if d.Outcome != c.outcome || d.ExitCode != ExitCode(c.outcome) || !strings.Contains(d.Reason, c.reason) {
			t.Errorf("%s: %s (exit %d): %s; want %s, reason with %q", c.name, d.Outcome, d.ExitCode, d.Reason, c.outcome, c.reason)
		}
	}
	if ExitCode(Pass) != 0 || ExitCode(Fail) != 2 || ExitCode(CannotTell) != 3 {
		t.Error("exit codes: pass 0, fail 2, cannot tell 3")
	}
}
