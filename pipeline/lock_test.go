package pipeline

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis-variants/redis-variants/progress"
)

// TestMain runs the test binary as the second process of
// TestRunFolderWrittenByOne when told to: it holds a run folder's lock as
// `run` would until its stdin closes.
func TestMain(m *testing.M) {
	if dir := os.Getenv("REDIS_VARIANTS_HOLD_RUN"); dir != "" {
		unlock, err := Config{}.holdRun(dir, "run")
		if err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Stdout.WriteString("held\n")
		bufio.NewReader(os.Stdin).ReadString('\n')
		unlock()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// Two processes on one run folder: while another process runs on it, a
// stage on the same folder is refused before it writes anything, naming
// that process; a run on a folder of its own is not held up; once the
// first is gone, the folder is free.
func TestRunFolderWrittenByOne(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "runs", "20261204-000000")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "bench.json"), []byte(`{}`), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "REDIS_VARIANTS_HOLD_RUN="+dir)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || line != "held\n" {
		t.Fatalf("the holding process said %q (%v)", line, err)
	}
	file := filepath.Join(root, "v.yaml")
	os.WriteFile(file, []byte(minimalFile), 0o644)
	var out, errw bytes.Buffer
	c := Config{File: file, Runs: filepath.Join(root, "runs"), RunDir: dir, State: filepath.Join(root, "state"), Progress: progress.Quiet, Out: &out, Err: &errw}
	want := "run pid " + strconv.Itoa(cmd.Process.Pid) + " since "
	for name, stage := range map[string]func() error{
		"rank":  func() error { return Rank(context.Background(), c, "") },
		"build": func() error { return Build(context.Background(), c, BuildOptions{Jobs: 1}) },
		"run":   func() error { return Run(context.Background(), c, RunOptions{Jobs: 1}) },
	} {
		err := stage()
		if err == nil || !strings.Contains(err.Error(), "being written by another redis-variants") || !strings.Contains(err.Error(), want) {
			t.Errorf("%s on a folder another process is writing: %v, want a refusal naming %q", name, err, want)
		}
	}
	ents, _ := os.ReadDir(dir)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != ".lock bench.json" {
		t.Errorf("the refused stages wrote into the folder: %v", names)
	}
	// Another folder is not held up by this one.
	other := c
	other.RunDir = filepath.Join(root, "runs", "20261204-000001")
	if unlock, err := other.holdRun(other.RunDir, "build"); err != nil {
		t.Errorf("a folder of its own: %v", err)
	} else {
		unlock()
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the holding process: %v", err)
	}
	start := time.Now()
	unlock, err := c.holdRun(dir, "rank")
	if err != nil {
		t.Fatalf("after the first process ended: %v", err)
	}
	unlock()
	t.Logf("freed in %v", time.Since(start))
}
