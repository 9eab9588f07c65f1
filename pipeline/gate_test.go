package pipeline

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/redis-variants/redis-variants/bench"
	"github.com/redis-variants/redis-variants/engine/enginetest"
	"github.com/redis-variants/redis-variants/gate"
	"github.com/redis-variants/redis-variants/progress"
	"github.com/redis-variants/redis-variants/publish"
	"github.com/redis-variants/redis-variants/results"
	"github.com/redis-variants/redis-variants/solve"
)

// gateFile is the file a gate test measures under: one runtime, one
// benchmark, few replicates (the gate adds more toward its margin).
const gateFile = `variants: [{name: unused, redis: 7.0.15, opt: O1, allocator: libc}]
runtimes: [{name: host, network: host}]
profiles:
  quick:
    tests: [GET]
    pipelines: [64]
    keyspace: 1000
    duration: 1s
    warmup: 1s
    replicates: 6
    windows: 1
    trials: 1
    budget: 5m
    looks: 1
    max_replicates: 12
    extend: 1m
`

// slowC is an LD_PRELOAD library that makes a server slower without
// touching its binary: each read(2) first spins on the thread's CPU clock
// for half the CPU time the thread spent since its last read returned,
// so every command costs about 1.5 times the server's own CPU. It calls
// the system call itself (no dlsym), so it links against old glibcs.
const slowC = `#define _GNU_SOURCE
#include <sys/syscall.h>
#include <unistd.h>
#include <time.h>
static __thread long long last;
static long long cpu_ns(void) {
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}
ssize_t read(int fd, void *buf, size_t n) {
	long long t = cpu_ns();
	if (last) {
		long long until = t + (t - last) / 2;
		while (cpu_ns() < until)
			;
	}
	ssize_t r = syscall(SYS_read, fd, buf, n);
	last = cpu_ns();
	return r;
}
`

// TestGate runs the gate on the real daemons against a baseline pushed to
// the local registry (the official recipe's image, which set-up places
// there): the identical image passes, and the same image with the slowing
// library preloaded fails, each with exit code and gate.json to match.
func TestGate(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: needs Docker Engine, buildkitd and the local registry")
	}
	needRegistry(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	enginetest.Client(t)
	root := t.TempDir()

	// baseline: the official image, under a repository of this test's own
	src, err := publish.Reference(localRegistry+"/library/redis:7.0.15", false)
	if err != nil {
		t.Fatal(err)
	}
	img, err := remote.Image(src, publish.ReadOptions(ctx)...)
	if err != nil {
		t.Fatalf("the official image set-up places in the registry: %v", err)
	}
	rnd := make([]byte, 4)
	rand.Read(rnd)
	repo := localRegistry + "/gate-" + hex.EncodeToString(rnd)
	base := repo + ":7.0.15-best"
	if err := remote.Write(mustTag(t, base), img); err != nil {
		t.Fatal(err)
	}
	// the planted regression: the same image, plus the library preloaded
	so := filepath.Join(root, "slow.so")
	if err := os.WriteFile(filepath.Join(root, "slow.c"), []byte(slowC), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("gcc", "-O2", "-shared", "-fPIC", "-o", so, filepath.Join(root, "slow.c")).CombinedOutput(); err != nil {
		t.Fatalf("compiling the slowing library: %v\n%s", err, out)
	}
	lib, err := os.ReadFile(so)
	if err != nil {
		t.Fatal(err)
	}
	var tb bytes.Buffer
	tw := tar.NewWriter(&tb)
	if err := tw.WriteHeader(&tar.Header{Name: "usr/local/lib/rv-slow.so", Mode: 0o755, Size: int64(len(lib)), Typeflag: tar.TypeReg}); err != nil {
		t.Fatal(err)
	}
	tw.Write(lib)
	tw.Close()
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(tb.Bytes())), nil })
	if err != nil {
		t.Fatal(err)
	}
	slow, err := mutate.AppendLayers(img, layer)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := slow.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cf = cf.DeepCopy()
	cf.Config.Env = append(cf.Config.Env, "LD_PRELOAD=/usr/local/lib/rv-slow.so")
	if slow, err = mutate.ConfigFile(slow, cf); err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(mustTag(t, repo+":slow"), slow); err != nil {
		t.Fatal(err)
	}

	file := filepath.Join(root, "gate.yaml")
	if err := os.WriteFile(file, []byte(gateFile), 0o644); err != nil {
		t.Fatal(err)
	}
	const margin = 0.10
	for _, c := range []struct {
		candidate string
		outcome   string
	}{
		{base, gate.Pass},
		{repo + ":slow", gate.Fail},
	} {
		var out, errw bytes.Buffer
		dir := filepath.Join(root, "runs", c.outcome)
		cfg := Config{File: file, Runs: filepath.Join(root, "runs"), RunDir: dir, State: filepath.Join(enginetest.RepoRoot(t), ".state"),
			Registry: localRegistry, BuildKit: solve.Address(), Progress: progress.Plain, Out: &out, Err: &errw}
		d, err := Gate(ctx, cfg, GateOptions{Baseline: base, Candidate: c.candidate, Margin: margin, Profile: "quick", JSON: true,
			Bench: BenchOptions{Generator: bench.ExecGenerator{Binary: enginetest.ToolBinary(t)}}})
		if err != nil {
			t.Fatalf("gate %s: %v\nstderr:\n%s", c.candidate, err, errw.String())
		}
		t.Logf("%s: %s exit %d: %s; A/A %s", c.candidate, d.Outcome, d.ExitCode, d.Reason, d.Control)
		if d.Outcome != c.outcome || d.ExitCode != gate.ExitCode(c.outcome) {
			t.Errorf("%s: %s (exit %d), want %s", c.candidate, d.Outcome, d.ExitCode, c.outcome)
		}
		var printed gate.Decision
		if err := json.Unmarshal(out.Bytes(), &printed); err != nil || printed.Outcome != d.Outcome {
			t.Errorf("--json printed %q (%v), want the decision", out.String(), err)
		}
		var rec gateRecord
		if err := (&results.Run{Dir: dir}).ReadJSON(results.GateFile, &rec); err != nil {
			t.Fatal(err)
		}
		if rec.Outcome != c.outcome || !strings.Contains(rec.BaselineImage, "@sha256:") || rec.CandidateImage == "" {
			t.Errorf("gate.json %+v: want the outcome and both images by digest", rec)
		}
	}
}

// needRegistry fails t when the local registry does not answer.
func needRegistry(t *testing.T) {
	t.Helper()
	resp, err := http.Get("http://" + localRegistry + "/v2/")
	if err != nil {
		t.Fatalf("this test needs the Distribution registry at %s (scripts/setup.sh starts it): %v", localRegistry, err)
	}
	resp.Body.Close()
}
