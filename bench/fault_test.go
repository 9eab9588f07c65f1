package bench_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis-variants/redis-variants/bench"
	"github.com/redis-variants/redis-variants/engine"
	"github.com/redis-variants/redis-variants/engine/enginetest"
	"github.com/redis-variants/redis-variants/loadgen"
	"github.com/redis-variants/redis-variants/results"
	"github.com/redis-variants/redis-variants/variants"
)

// stopDockerdDuring stops the Docker Engine (SIGTERM, as a service
// manager stopping it for a restart would) 300 ms into the measured run
// after the first n, while a server is under load.
type stopDockerdDuring struct {
	n       atomic.Int32
	stopped chan struct{}
}

func (g *stopDockerdDuring) Generate(ctx context.Context, cfg loadgen.Config, cpus string) (loadgen.Result, time.Duration, error) {
	if cfg.Duration >= time.Second && g.n.Add(-1) == 0 {
		go func() {
			time.Sleep(300 * time.Millisecond)
			exec.Command("pkill", "-x", "dockerd").Run()
			close(g.stopped)
		}()
	}
	return bench.InProcess{}.Generate(ctx, cfg, cpus)
}

// dockerdDown waits until no dockerd process is left.
func dockerdDown(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for exec.Command("pgrep", "-x", "dockerd").Run() == nil {
		if time.Now().After(deadline) {
			t.Fatal("dockerd did not stop within 60 s of SIGTERM")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// runningDockerd is the running dockerd's command line, read before the
// test stops it so that the same daemon (its data root, socket and
// registry mirror) is started again, whoever started it.
func runningDockerd(t *testing.T) (pid string, argv []string) {
	t.Helper()
	out, err := exec.Command("pgrep", "-x", "-o", "dockerd").Output()
	if err != nil {
		t.Fatalf("no dockerd running (make setup starts one): %v", err)
	}
	pid = strings.TrimSpace(string(out))
	b, err := os.ReadFile("/proc/" + pid + "/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	return pid, strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
}

// startDockerd starts the Docker Engine again with the command line it
// ran with (its output to the set-up's log folder), waits until it
// answers, and where this checkout's set-up had recorded the old daemon
// (.state/pids/dockerd.pid) records the new one, so that make clean-state
// still stops it.
func startDockerd(t *testing.T, oldPid string, argv []string) {
	t.Helper()
	root := enginetest.RepoRoot(t)
	logs := filepath.Join(root, ".state", "logs")
	os.MkdirAll(logs, 0o755)
	log, err := os.OpenFile(filepath.Join(logs, "dockerd.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting dockerd again (%s): %v", strings.Join(argv, " "), err)
	}
	go cmd.Wait() // reaped if it exits while the test runs; it outlives the test otherwise
	rec := filepath.Join(root, ".state", "pids", "dockerd.pid")
	if b, err := os.ReadFile(rec); err == nil && strings.TrimSpace(string(b)) == oldPid {
		os.WriteFile(rec, []byte(fmt.Sprintf("%d\n", cmd.Process.Pid)), 0o644)
	}
	deadline := time.Now().Add(60 * time.Second)
	for exec.Command("curl", "-sf", "--unix-socket", "/var/run/docker.sock", "http://localhost/_ping").Run() != nil {
		if time.Now().After(deadline) {
			t.Fatalf("dockerd started again (%s) did not answer within 60 s", strings.Join(argv, " "))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// The Docker Engine stopped in the middle of a bench (and started again):
// the bench stops with an error that says the Engine does not answer, not
// with every later measurement recorded as the images' failure; the
// trials it finished are on disk and kept; the bench run again resumes
// them and completes the design, leaving no container behind.
func TestDockerdRestartedMidBench(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: needs a Docker Engine")
	}
	_, o := stockPair(t)
	run, session := o.Run, o.Labels
	o.Runtimes = []variants.Runtime{{Name: "host", Network: "host", Seccomp: "default", ServerCPUs: "0", ClientCPUs: "1"}}
	o.Profile = variants.Profile{Name: "it", Tests: []string{"SET"}, Clients: 8, Pipelines: []int{1},
		DataSize: 3, Duration: time.Second, Warmup: 200 * time.Millisecond, Trials: 4}
	o.Seed, o.LockFile = 11, t.TempDir()+"/machine.lock"
	g := &stopDockerdDuring{stopped: make(chan struct{})}
	g.n.Store(4) // the 4th of 8 trials
	o.Generator = g
	pid, argv := runningDockerd(t)
	t.Cleanup(func() {
		// whatever happened, leave the machine with its Engine running
		<-g.stopped
		if exec.Command("curl", "-sf", "--unix-socket", "/var/run/docker.sock", "http://localhost/_ping").Run() != nil {
			dockerdDown(t)
			startDockerd(t, pid, argv)
		}
	})
	sum, err := bench.Run(context.Background(), o)
	<-g.stopped
	// While it shuts down, dockerd still answers pings but refuses to
	// start containers; once gone, it does not answer: either is said.
	if err == nil || !strings.Contains(err.Error(), "Docker Engine") || !strings.Contains(err.Error(), "run bench again to resume") {
		t.Fatalf("bench with the Engine stopped: %v (summary %+v), want it stopped saying the Engine failed", err, sum)
	}
	t.Logf("stopped: %v", err)
	done := sum.Done
	// the 4th trial finishes only if the daemon took longer than its
	// measurement to kill its server
	if done < 3 || done > 4 {
		t.Errorf("%d trials finished before the Engine stopped during the 4th, want 3 (or 4)", done)
	}
	trials, skipped, lerr := results.LoadTrials(run)
	if lerr != nil || len(skipped) > 0 || len(trials) != done {
		t.Fatalf("%d trials on disk (%v, left out %v), want the %d finished", len(trials), lerr, skipped, done)
	}
	dockerdDown(t)
	startDockerd(t, pid, argv)

	eng, err := engine.New(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	o.Engine, o.Generator = eng, bench.InProcess{}
	sum, err = bench.Run(context.Background(), o)
	if err != nil {
		t.Fatalf("the resumed bench: %v", err)
	}
	if sum.Resumed != done || sum.Done != 8-done || len(sum.Failures) != 0 {
		t.Errorf("resumed bench: %d resumed, %d done, failures %v; want %d resumed and %d done", sum.Resumed, sum.Done, sum.Failures, done, 8-done)
	}
	if trials, _, _ := results.LoadTrials(run); len(trials) != 8 {
		t.Errorf("%d trials on disk after the resume, want 8", len(trials))
	}
	if left, err := eng.Managed(context.Background(), session); err != nil || len(left) != 0 {
		t.Errorf("%d containers left after the resumed bench (%v)", len(left), err)
	}
	if _, err := os.Stat(run.Path(results.BenchFile)); err != nil {
		t.Errorf("no bench.json after the resume: %v", err)
	}
}

// The run folder's disk filling in the middle of a bench (a tmpfs with
// room for the design and a few trials): the bench stops with an error
// that says the disk is full; every record on the disk is whole (each
// parses, no temporary file is left); and once there is room again the
// bench run again resumes what it finished and completes the design.
func TestBenchWriteDiskFull(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: needs a Docker Engine")
	}
	_, o := stockPair(t)
	disk := enginetest.TinyDisk(t, "1m")
	run, err := results.Open(filepath.Join(disk, "20261204-000000"))
	if err != nil {
		t.Fatal(err)
	}
	o.Run = run
	o.Runtimes = []variants.Runtime{{Name: "host", Network: "host", Seccomp: "default", ServerCPUs: "0", ClientCPUs: "1"}}
	o.Profile = variants.Profile{Name: "it", Tests: []string{"SET"}, Clients: 8, Pipelines: []int{1},
		DataSize: 3, Duration: 300 * time.Millisecond, Warmup: 100 * time.Millisecond, Trials: 6}
	o.Seed, o.LockFile, o.Generator = 5, t.TempDir()+"/machine.lock", bench.InProcess{}
	// Fill the disk but for 24 KiB: six pages of tmpfs.
	filler := filepath.Join(disk, "filler")
	var st syscall.Statfs_t
	if err := syscall.Statfs(disk, &st); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filler, make([]byte, int64(st.Bavail)*st.Bsize-24<<10), 0o644); err != nil {
		t.Fatal(err)
	}
	sum, err := bench.Run(context.Background(), o)
	if err == nil || !strings.Contains(err.Error(), "no space left on device") {
		t.Fatalf("bench on a full disk: %v (%d trials done), want an error saying the disk is full", err, sum.Done)
	}
	t.Logf("disk full after %d trials: %v", sum.Done, err)
	filepath.WalkDir(run.Dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if strings.Contains(d.Name(), ".tmp-") {
			t.Errorf("temporary file %s left behind", p)
		}
		if strings.HasSuffix(p, ".json") {
			b, _ := os.ReadFile(p)
			if !json.Valid(b) {
				t.Errorf("%s is not whole JSON (%d bytes)", p, len(b))
			}
		}
		return nil
	})
	trials, skipped, lerr := results.LoadTrials(run)
	if lerr != nil || len(skipped) > 0 || len(trials) != sum.Done {
		t.Errorf("%d trials on disk (%v, left out %v), want the %d finished", len(trials), lerr, skipped, sum.Done)
	}

	os.Remove(filler)
	resumed, err := bench.Run(context.Background(), o)
	if err != nil {
		t.Fatalf("the bench again with room: %v", err)
	}
	if resumed.Resumed != len(trials) || resumed.Resumed+resumed.Done != 12 {
		t.Errorf("resumed %d and measured %d, want the %d on disk resumed and 12 in all", resumed.Resumed, resumed.Done, len(trials))
	}
}
