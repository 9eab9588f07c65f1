package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis-variants/redis-variants/engine/enginetest"
	"github.com/redis-variants/redis-variants/results"
)

// cappedFile ranks one pulled image (the official one, through the local
// mirror) under a runtime that caps every server at 0.2 CPUs: no load
// can keep the server CPU busy.
const cappedFile = `references:
  - {name: stock, kind: image, image: redis:7.0.15}
runtimes:
  - {name: capped, network: host, cpu_limit: 0.2}
profiles:
  quick:
    tests: [GET]
    pipelines: [16]
    keyspace: 1000
    duration: 500ms
    warmup: 200ms
    replicates: 2
    looks: 1
    axis_replicates: 0
    trials: 1
    memory: off
    budget: 5m
`

// TestRunWithoutSaturationExitsNonZero is the whole command where
// saturation is impossible: the real binary's run (pull, bench, rank)
// stops in the bench's calibration, within its first minute, says "no
// answer" and why, measures no replicate, and exits non-zero.
func TestRunWithoutSaturationExitsNonZero(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: needs Docker Engine and the local registry")
	}
	enginetest.Client(t) // fails, saying how to start it, without a Docker Engine
	bin := enginetest.ToolBinary(t)
	root := t.TempDir()
	file := filepath.Join(root, "capped.yaml")
	if err := os.WriteFile(file, []byte(cappedFile), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "runs", "20261203-000000")
	cmd := exec.Command(bin, "run", "-f", file, "--runs", filepath.Join(root, "runs"), "--run", dir,
		"--state", filepath.Join(enginetest.RepoRoot(t), ".state"), "--progress", "plain", "--no-verify")
	var out, errw bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errw
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 3 {
		t.Fatalf("run under a 0.2-CPU cap: %v, want exit status 3 (no answer)\nstdout:\n%s\nstderr:\n%s", err, out.String(), errw.String())
	}
	stderr := errw.String()
	for _, want := range []string{"no answer", "cpu_limit", "GET"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	run := &results.Run{Dir: dir}
	var cal results.Calibration
	if err := run.ReadJSON(results.CalibrationFile, &cal); err != nil {
		t.Fatalf("no calibration record: %v", err)
	}
	if len(cal.Benches) != 1 || cal.Benches[0].Load.Clients != 0 {
		t.Fatalf("calibration %+v: want GET tried and no load chosen", cal.Benches)
	}
	// The calibration's own time: every load tried, none kept, within the
	// bench's first minute.
	if spent := cal.Elapsed; spent <= 0 || spent > time.Minute || len(cal.Benches[0].Tried) < 2 {
		t.Errorf("the calibration took %s over %d loads, want every load tried in under a minute", spent, len(cal.Benches[0].Tried))
	}
	if pairs, _ := filepath.Glob(run.Path("pairs", "*")); len(pairs) != 0 {
		t.Errorf("replicates measured after no answer: %v", pairs)
	}
	t.Logf("exit %d after a calibration of %s; stderr:\n%s", exit.ExitCode(), cal.Elapsed.Round(100*time.Millisecond), stderr)
}
