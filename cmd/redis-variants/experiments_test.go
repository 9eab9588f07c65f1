package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestExperimentsListed lists the shipped experiments folder: every
// published experiment, numbered 1 to 5, and the no-container baseline,
// each found by number and by file name.
func TestExperimentsListed(t *testing.T) {
	exps, err := loadExperiments("../../experiments")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, e := range exps {
		seen[e.Plan.Experiment.Number] = true
	}
	for n := 0; n <= 5; n++ {
		if !seen[n] {
			t.Errorf("no experiment numbered %d", n)
		}
	}
	for _, name := range []string{"4", "latency", "latency.yaml", "../../experiments/latency.yaml"} {
		if e, err := findExperiment(exps, name); err != nil || e.Plan.Experiment.Number != 4 {
			t.Errorf("%q: %v %v", name, e.File, err)
		}
	}
	if _, err := findExperiment(exps, "9"); err == nil || !strings.Contains(err.Error(), "six-builds") {
		t.Errorf("unknown experiment: %v", err)
	}
	var out bytes.Buffer
	root := newRoot()
	root.SetOut(&out)
	root.SetArgs([]string{"experiments", "--dir", "../../experiments"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "Docker network I/O latency") || !strings.Contains(out.String(), "experiments run NUMBER|FILE") {
		t.Errorf("listing:\n%s", out.String())
	}
}
