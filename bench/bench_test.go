package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis-variants/redis-variants/engine"
	"github.com/redis-variants/redis-variants/loadgen"
	"github.com/redis-variants/redis-variants/machine"
	"github.com/redis-variants/redis-variants/rank"
	"github.com/redis-variants/redis-variants/results"
	"github.com/redis-variants/redis-variants/variants"
)

// procEngine stands in for the Docker Engine in unit tests: each "container"
// is a redis-server process on the host (Debian's redis-server package).
type procEngine struct {
	mu      sync.Mutex
	procs   map[string]*exec.Cmd
	n       int
	failFor string // StartServer fails for this image
	started int
	images  map[string]string // server address → the image it runs
}

func newProcEngine(t *testing.T) *procEngine {
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Fatalf("this test needs redis-server on the host (apt-get install redis-server): %v", err)
	}
	e := &procEngine{procs: map[string]*exec.Cmd{}}
	t.Cleanup(func() { e.SweepMatching(context.Background(), nil) })
	return e
}

func (e *procEngine) SweepMatching(ctx context.Context, _ map[string]string) (int, error) {
	e.mu.Lock()
	ids := make([]string, 0, len(e.procs))
	for id := range e.procs {
		ids = append(ids, id)
	}
	e.mu.Unlock()
	for _, id := range ids {
		e.Remove(ctx, id)
	}
	return len(ids), nil
}

func (e *procEngine) live() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.procs)
}

func (e *procEngine) StartServer(ctx context.Context, s engine.ServerSpec) (*engine.Server, error) {
	if s.Image == e.failFor {
		return nil, fmt.Errorf("image %s: no such image", s.Image)
	}
	args := []string{"--save", "", "--appendonly", "no"}
	srv := &engine.Server{}
	switch s.Network {
	case "host":
		p, err := engine.FreePort()
		if err != nil {
			return nil, err
		}
		args = append(args, "--port", strconv.Itoa(p), "--bind", "127.0.0.1")
		srv.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(p))
	case "none":
		if s.SocketDir == "" {
			return nil, errors.New("none without a socket folder")
		}
		srv.Socket = filepath.Join(s.SocketDir, "redis.sock")
		args = append(args, "--port", "0", "--unixsocket", srv.Socket)
	default:
		return nil, fmt.Errorf("procEngine: network %q", s.Network)
	}
	cmd := exec.Command("redis-server", args...)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	e.mu.Lock()
	e.n++
	e.started++
	srv.ID = strconv.Itoa(e.n)
	srv.Name = s.Image + "-" + srv.ID
	e.procs[srv.ID] = cmd
	if e.images == nil {
		e.images = map[string]string{}
	}
	e.images[srv.Addr+srv.Socket] = s.Image
	e.mu.Unlock()
	return srv, nil
}

// imageAt is the image of the server at addr (a TCP address or a socket).
func (e *procEngine) imageAt(addr string) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.images[addr]
}

func (e *procEngine) WaitReady(ctx context.Context, s *engine.Server, timeout time.Duration) error {
	network, addr := "tcp", s.Addr
	if addr == "" {
		network, addr = "unix", s.Socket
	}
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if c, err := net.Dial(network, addr); err == nil {
			c.Close()
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("%s not ready", addr)
}

func (e *procEngine) Remove(ctx context.Context, id string) error {
	e.mu.Lock()
	cmd := e.procs[id]
	delete(e.procs, id)
	e.mu.Unlock()
	if cmd != nil {
		cmd.Process.Kill()
		cmd.Wait()
	}
	return nil
}

func (e *procEngine) CPUUsageNanos(ctx context.Context, id string) (uint64, error) {
	e.mu.Lock()
	cmd := e.procs[id]
	e.mu.Unlock()
	if cmd == nil {
		return 0, fmt.Errorf("no container %s", id)
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
	ut, _ := strconv.ParseUint(f[11], 10, 64)
	st, _ := strconv.ParseUint(f[12], 10, 64)
	return (ut + st) * 1e7, nil // clock ticks of 10 ms
}

type cpuReader interface {
	CPU(id string) (uint64, error)
}

// CPU is the fake's cgroup reader: the process's CPU time.
func (e *procEngine) CPU(id string) (uint64, error) { return e.CPUUsageNanos(context.Background(), id) }

// countingGen wraps a generator and cancels after n measured runs: a
// standalone trial's run, or a window run of a generator that stays up.
type countingGen struct {
	Sessions
	calls  atomic.Int64
	cancel func()
	after  int64
	// from, when set, holds the count back until it reports true: a test
	// that interrupts the design counts from the end of calibration,
	// however many loads calibration tried on this machine.
	from func() bool
	// failTest makes every window run of that test fail after its first
	// failAfter runs (counted, like after, from from).
	failTest  string
	failAfter int64
	failed    atomic.Int64
}

func (g *countingGen) count() {
	if g.from != nil && !g.from() {
		return
	}
	if n := g.calls.Add(1); g.cancel != nil && n == g.after {
		g.cancel()
	}
}

func (g *countingGen) Generate(ctx context.Context, cfg loadgen.Config, cpus string) (loadgen.Result, time.Duration, error) {
	r, cpu, err := g.Sessions.Generate(ctx, cfg, cpus)
	if cfg.Duration >= 300*time.Millisecond { // a measured run, not a warmup
		g.count()
	}
	return r, cpu, err
}

func (g *countingGen) Open(ctx context.Context, cfg loadgen.Config, cpus string) (Session, error) {
	s, err := g.Sessions.Open(ctx, cfg, cpus)
	if err != nil {
		return nil, err
	}
	return &countingSession{Session: s, g: g}, nil
}

type countingSession struct {
	Session
	g *countingGen
}

func (s *countingSession) Run(ctx context.Context, w loadgen.Windows) ([]loadgen.Result, error) {
	s.g.count()
	if strings.EqualFold(w.Test, s.g.failTest) && (s.g.from == nil || s.g.from()) && s.g.failed.Add(1) > s.g.failAfter {
		return nil, fmt.Errorf("injected failure of %s", w.Test)
	}
	return s.Session.Run(ctx, w)
}

// calibrated reports whether o's bench has written its calibration.
func calibrated(o Options) func() bool {
	return func() bool {
		var c results.Calibration
		return o.Run.ReadJSON(results.CalibrationFile, &c) == nil
	}
}

// wallCPU is the fake engine's cgroup reader: every server has used half
// of one CPU since the reader was made, so the two of a pair fill it.
func wallCPU() func(string) (uint64, error) {
	t0 := time.Now()
	return func(string) (uint64, error) { return uint64(time.Since(t0).Nanoseconds() / 2), nil }
}

// fakeStat is /proc/stat of a machine whose CPUs are busy the share busy
// of the time, none of it stolen (a tick a microsecond).
func fakeStat(busy float64) func() (map[int]machine.CPUTimes, error) {
	t0 := time.Now()
	return func() (map[int]machine.CPUTimes, error) {
		ticks := uint64(time.Since(t0).Microseconds())
		b := uint64(busy * float64(ticks))
		c := machine.CPUTimes{User: b, Idle: ticks - b}
		return map[int]machine.CPUTimes{-1: c, 0: c, 1: c}, nil
	}
}

func testOptions(t *testing.T, e Engine, images []Image) Options {
	run, err := results.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return Options{
		Run:    run,
		Engine: e,
		Images: images,
		Runtimes: []variants.Runtime{
			{Name: "host", Network: "host", Seccomp: "default", ServerCPUs: "0", ClientCPUs: "1"},
			{Name: "unix", Network: "unix", Seccomp: "default", ServerCPUs: "0", ClientCPUs: "1"},
		},
		Profile: variants.Profile{
			Name: "test", Tests: []string{"set"}, Clients: 4, Pipelines: []int{1},
			DataSize: 3, Keyspace: 100, Duration: 300 * time.Millisecond, Warmup: 100 * time.Millisecond, Trials: 2,
		},
		Primary:   "a",
		Trials:    0,
		CPU:       wallCPU(),
		Stat:      fakeStat(1),
		Settle:    -1, // the fake machine is always busy
		Generator: InProcess{},
		Seed:      42,
		LockFile:  filepath.Join(t.TempDir(), "locks", "machine.lock"),
	}
}

func twoImages() []Image {
	return []Image{
		{Name: "a", ID: "aaaaaaaaaaaa", Ref: "img:a", Reference: true, Verified: "passed"},
		{Name: "b", ID: "bbbbbbbbbbbb", Ref: "img:b", Verified: "passed"},
	}
}

func checkTrials(t *testing.T, run *results.Run, want int) []rank.Trial {
	t.Helper()
	trials, skipped, err := results.LoadTrials(run)
	if err != nil || len(skipped) > 0 {
		t.Fatal(err, skipped)
	}
	if len(trials) != want {
		t.Fatalf("%d trials on disk, want %d", len(trials), want)
	}
	seqs := map[int]bool{}
	reps := map[string]bool{}
	for _, tr := range trials {
		if tr.OpsPerSec <= 0 || tr.Requests <= 0 || tr.P50Ms <= 0 || tr.Hist == "" {
			t.Errorf("trial %+v has no measurement", tr)
		}
		if tr.RSSBytes <= 0 || tr.Fragmentation <= 0 {
			t.Errorf("trial %s/%s/%d: rss %d frag %v", tr.Variant, tr.Runtime, tr.Rep, tr.RSSBytes, tr.Fragmentation)
		}
		if tr.Test != "SET" || tr.Clients != 4 || tr.Pipeline != 1 {
			t.Errorf("trial %+v: wrong test/clients/pipeline", tr)
		}
		if seqs[tr.Seq] {
			t.Errorf("seq %d used twice", tr.Seq)
		}
		seqs[tr.Seq] = true
		key := fmt.Sprintf("%s/%s/%d", tr.Variant, tr.Runtime, tr.Rep)
		if reps[key] {
			t.Errorf("rep %s done twice", key)
		}
		reps[key] = true
		if !run.Exists(TrialRel(cellOf(tr), tr.Rep)) {
			t.Errorf("trial %s not at %s", key, TrialRel(cellOf(tr), tr.Rep))
		}
		if tr.Variant == "a" && (!tr.Reference || tr.VariantID != "aaaaaaaaaaaa") {
			t.Errorf("trial of a lost its identity: %+v", tr)
		}
	}
	return trials
}

func TestRunResumeAfterInterrupt(t *testing.T) {
	e := newProcEngine(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	o := testOptions(t, e, twoImages())
	// standalone trials: a (the primary) under host and unix, b under
	// host (the ranked runtime), 2 each
	gen := &countingGen{Sessions: InProcess{}, cancel: cancel, after: 3}
	o.Generator = gen
	var log bytes.Buffer
	o.Log = &log
	sum, err := Run(ctx, o)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted run returned %v, want context.Canceled", err)
	}
	if e.live() != 0 {
		t.Fatalf("%d servers left after the interrupt", e.live())
	}
	if sum.Planned != 6 || sum.Done < 2 || sum.Done > 3 {
		t.Fatalf("interrupted summary: planned %d done %d", sum.Planned, sum.Done)
	}
	first := checkTrials(t, o.Run, sum.Done)
	var bj Summary
	if err := o.Run.ReadJSON("bench.json", &bj); err != nil || bj.Seed != 42 {
		t.Fatalf("bench.json: %+v %v", bj, err)
	}

	// Resume: finished trials are kept, the rest are run.
	o.Generator = InProcess{}
	started := e.started
	sum2, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if sum2.Resumed != len(first) || sum2.Done != 6-len(first) || sum2.Total != 6 {
		t.Fatalf("resumed run: %+v", sum2)
	}
	if e.started-started != sum2.Done {
		t.Fatalf("resumed run started %d servers for %d trials", e.started-started, sum2.Done)
	}
	all := checkTrials(t, o.Run, 6)
	for _, f := range first {
		for _, a := range all {
			if a.Seq == f.Seq && a.Started != f.Started {
				t.Fatalf("trial seq %d was redone", f.Seq)
			}
		}
	}
	var cpuOK bool
	for _, tr := range all {
		cpuOK = cpuOK || tr.ServerCPUNsPerOp > 0
	}
	if !cpuOK {
		t.Fatal("no trial measured any server CPU time")
	}
	// A third run has nothing to do.
	sum3, err := Run(context.Background(), o)
	if err != nil || sum3.Done != 0 || sum3.Total != 6 {
		t.Fatalf("third run: %+v %v", sum3, err)
	}

	// A trial file torn by hand (or a crash outside the atomic write) is
	// left out, named, and measured again; rank's loader is the same one.
	torn := all[0]
	rel := TrialRel(cellOf(torn), torn.Rep)
	if err := os.WriteFile(o.Run.Path(rel), []byte(`{"variant": "a", "ops_per`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, skipped, err := results.LoadTrials(o.Run); err != nil || len(skipped) != 1 || !strings.Contains(skipped[0].Error(), rel) {
		t.Fatalf("torn trial: skipped %v, err %v", skipped, err)
	}
	log.Reset()
	sum4, err := Run(context.Background(), o)
	if err != nil || sum4.Resumed != 5 || sum4.Done != 1 || sum4.Total != 6 {
		t.Fatalf("run after a torn trial: %+v %v", sum4, err)
	}
	if !strings.Contains(log.String(), "left out") || !strings.Contains(log.String(), rel) {
		t.Fatalf("the torn trial is not named: %s", log.String())
	}
	checkTrials(t, o.Run, 6)
}

func TestRunSkipsAndFails(t *testing.T) {
	e := newProcEngine(t)
	imgs := append(twoImages(),
		Image{Name: "broken", Ref: "img:broken", Verified: "passed"},
		Image{Name: "unsafe", Ref: "img:unsafe", Verified: "failed"},
		Image{Name: "fresh", Ref: "img:a"}, // never verified: runs, flagged
	)
	e.failFor = "img:broken"
	o := testOptions(t, e, imgs)
	o.Runtimes = o.Runtimes[:1]
	sum, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Images) != 4 || slices.ContainsFunc(sum.Images, func(im Image) bool { return im.Name == "unsafe" }) {
		t.Fatalf("images benchmarked: %+v", sum.Images)
	}
	w := strings.Join(sum.Warnings, "\n")
	if !strings.Contains(w, "unsafe") || !strings.Contains(w, "fresh was never verified") {
		t.Fatalf("warnings: %s", w)
	}
	if len(sum.Failures) != maxCellFailures || len(sum.Dropped) != 1 || sum.Dropped[0].Image != "broken" {
		t.Fatalf("failures %+v dropped %+v", sum.Failures, sum.Dropped)
	}
	trials, _, _ := results.LoadTrials(o.Run)
	n := map[string]int{}
	for _, tr := range trials {
		n[tr.Variant]++
	}
	if n["a"] != 2 || n["fresh"] != 2 || n["broken"] != 0 {
		t.Fatalf("trials per image %v: want the profile's 2 for a and fresh, whatever the data", n)
	}
	if e.live() != 0 {
		t.Fatalf("%d servers left", e.live())
	}
}

func TestRunBudget(t *testing.T) {
	e := newProcEngine(t)
	o := testOptions(t, e, twoImages())
	o.Budget = time.Nanosecond
	sum, err := Run(context.Background(), o)
	if err != nil || !sum.BudgetSpent || sum.Done != 0 {
		t.Fatalf("budget run: %+v %v", sum, err)
	}
}

func TestSelectRuntimes(t *testing.T) {
	all := []variants.Runtime{{Name: "host"}, {Name: "bridge"}, {Name: "unix"}}
	got, err := SelectRuntimes(all, []string{"unix", "host"})
	if err != nil || len(got) != 2 || got[0].Name != "unix" || got[1].Name != "host" {
		t.Fatalf("%+v %v", got, err)
	}
	if _, err := SelectRuntimes(all, []string{"macvlan"}); err == nil || !strings.Contains(err.Error(), "bridge") {
		t.Fatalf("unknown runtime: %v", err)
	}
}

func TestCountCPUs(t *testing.T) {
	for in, want := range map[string]int{"1": 1, "2-3": 2, "0,2-5": 5, " 7 ": 1} {
		if got, err := CountCPUs(in); err != nil || got != want {
			t.Errorf("CountCPUs(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"x", "3-1", "1,,2", "-1"} {
		if _, err := CountCPUs(bad); err == nil {
			t.Errorf("CountCPUs(%q): no error", bad)
		}
	}
}

func TestArgs(t *testing.T) {
	args, err := Args(loadgen.Config{Addr: "127.0.0.1:7000", Clients: 50, Pipeline: 16, DataSize: 3, Keyspace: 1000,
		Duration: 2 * time.Second, Warmup: time.Second, Tests: []string{"GET"}})
	if err != nil {
		t.Fatal(err)
	}
	want := "loadgen --json --exact-tests -t GET --host 127.0.0.1 --port 7000 -c 50 -P 16 -d 3 -r 1000 --duration 2s --warmup 1s"
	if got := strings.Join(args, " "); got != want {
		t.Fatalf("Args = %q\nwant   %q", got, want)
	}
	args, _ = Args(loadgen.Config{Socket: "/tmp/s/redis.sock", Tests: []string{"SET"}, Requests: 10})
	if got := strings.Join(args, " "); got != "loadgen --json --exact-tests -t SET --socket /tmp/s/redis.sock -n 10" {
		t.Fatalf("socket Args = %q", got)
	}
	if _, err := Args(loadgen.Config{Addr: "x:1", Tests: []string{"SET", "GET"}}); err == nil {
		t.Fatal("two tests: no error")
	}
}

func TestClientShare(t *testing.T) {
	r := loadgen.Result{ClientCPU: 500 * time.Millisecond, Elapsed: time.Second}
	if got := clientShare(r, 0, 0, 1); got != 0.5 {
		t.Fatalf("share = %v, want 0.5", got)
	}
	if got := clientShare(loadgen.Result{}, time.Second, 2*time.Second, 2); got != 0.25 {
		t.Fatalf("fallback share = %v, want 0.25", got)
	}
}

func TestTrialRel(t *testing.T) {
	got := TrialRel(Cell{Image: "gcc-o3", Runtime: "host", Test: "LRANGE_100", Pipeline: 16}, 2)
	if got != filepath.Join("trials", "gcc-o3", "host", "LRANGE_100-P16-2.json") {
		t.Fatal(got)
	}
	if got := TrialRel(Cell{Image: "../x", Runtime: "a/b", Test: "SET", Pipeline: 1}, 0); got != filepath.Join("trials", "_._x", "a_b", "SET-P1-0.json") {
		t.Fatalf("unsafe path %s", got)
	}
}

// TestExecGeneratorPinsAndParses runs a stand-in generator binary that
// reports the CPUs it may run on and the arguments it got.
func TestExecGeneratorPinsAndParses(t *testing.T) {
	if _, err := exec.LookPath("taskset"); err != nil {
		t.Fatalf("needs taskset (util-linux): %v", err)
	}
	bin := filepath.Join(t.TempDir(), "fake-rv")
	script := `#!/bin/sh
cpus=$(awk '/Cpus_allowed_list/ {print $2}' /proc/self/status)
printf '{"config":{},"results":[{"test":"%s","title":"%s","requests":7,"ops_per_sec":7}]}\n' "$cpus" "$*"
`
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	g := ExecGenerator{Binary: bin}
	res, _, err := g.Generate(context.Background(), loadgen.Config{Addr: "127.0.0.1:1", Tests: []string{"SET"}, Duration: time.Second}, "0")
	if err != nil {
		t.Fatal(err)
	}
	if res.Test != "0" || res.Requests != 7 {
		t.Fatalf("generator ran on CPUs %q (want 0), requests %d", res.Test, res.Requests)
	}
	if !strings.HasPrefix(res.Title, "loadgen --json --exact-tests -t SET --host 127.0.0.1 --port 1") {
		t.Fatalf("generator got %q", res.Title)
	}
	// An LRANGE test also reports loadgen's preparatory LPUSH: the LRANGE
	// result is the one taken (this failed every LRANGE trial once).
	two := `#!/bin/sh
printf '{"config":{},"results":[{"test":"LPUSH (needed to benchmark LRANGE)","requests":600},{"test":"LRANGE_100","requests":9}]}\n'
`
	if err := os.WriteFile(bin, []byte(two), 0o755); err != nil {
		t.Fatal(err)
	}
	res, _, err = g.Generate(context.Background(), loadgen.Config{Addr: "127.0.0.1:1", Tests: []string{"LRANGE_100"}}, "")
	if err != nil || res.Test != "LRANGE_100" || res.Requests != 9 {
		t.Fatalf("LRANGE generator: %+v, %v", res, err)
	}
	// A generator that fails says why.
	if err := os.WriteFile(bin, []byte("#!/bin/sh\necho 'connection refused' >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, _, err := g.Generate(context.Background(), loadgen.Config{Addr: "127.0.0.1:1", Tests: []string{"SET"}}, ""); err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("failing generator: %v", err)
	}
	// A generator that reports requests and then exits non-zero failed:
	// its report may be of a run cut short (this one was counted).
	cut := `#!/bin/sh
printf '{"config":{},"results":[{"test":"SET","requests":5,"ops_per_sec":5}]}\n'
echo 'lost the connection' >&2
exit 2
`
	if err := os.WriteFile(bin, []byte(cut), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, _, err := g.Generate(context.Background(), loadgen.Config{Addr: "127.0.0.1:1", Tests: []string{"SET"}}, ""); err == nil || !strings.Contains(err.Error(), "lost the connection") {
		t.Fatalf("a generator exiting 2 after 5 requests: %v", err)
	}
}

// errorReplies reports error replies in every measured standalone run of
// one image's server, as a miscompiled server answering some requests
// with errors would.
type errorReplies struct {
	InProcess
	e     *procEngine
	image string
}

func (g errorReplies) Generate(ctx context.Context, cfg loadgen.Config, cpus string) (loadgen.Result, time.Duration, error) {
	r, cpu, err := g.InProcess.Generate(ctx, cfg, cpus)
	if err == nil && g.e.imageAt(cfg.Addr+cfg.Socket) == g.image {
		r.Errors, r.ErrorSamples = 3, []string{"ERR injected"}
	}
	return r, cpu, err
}

// TestTrialsRefuseErrorReplies: a standalone trial whose generator saw
// error replies is a failed trial, not a (fast) measurement.
func TestTrialsRefuseErrorReplies(t *testing.T) {
	e := newProcEngine(t)
	o := testOptions(t, e, twoImages())
	o.Runtimes = o.Runtimes[:1]
	o.Trials = 1
	o.Profile.Replicates, o.Profile.AxisReplicates = 0, 0
	o.Generator = errorReplies{e: e, image: "img:b"}
	sum, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	trials, _, _ := results.LoadTrials(o.Run)
	for _, tr := range trials {
		if tr.Variant == "b" {
			t.Errorf("a trial with error replies was recorded: %+v", tr)
		}
	}
	if len(sum.Failures) == 0 || !strings.Contains(sum.Failures[0].Error, "error replies") {
		t.Fatalf("failures %+v", sum.Failures)
	}
}

// TestPairsResumeAndControl runs the co-scheduled design on the fake
// engine (redis-server processes; their CPU time from /proc): an
// interrupted run keeps every finished window, the resumed run measures
// only what is missing, and the design has its A/A control, sides swapped
// in half of each pair's replicates and a runtime axis.
func TestPairsResumeAndControl(t *testing.T) {
	e := newProcEngine(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	o := testOptions(t, e, twoImages())
	o.Trials = -1
	o.Profile.Replicates, o.Profile.Windows, o.Profile.AxisReplicates = 2, 2, 2
	o.Profile.Runtimes = variants.RuntimesFirst
	// cancelled in the design's second window run, counted per generator
	// (two to a run): one replicate's, then the next replicate's
	o.Generator = &countingGen{Sessions: InProcess{}, cancel: cancel, after: 3, from: calibrated(o)}
	sum, err := Run(ctx, o)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted run returned %v, want context.Canceled", err)
	}
	if e.live() != 0 {
		t.Fatalf("%d servers left after the interrupt", e.live())
	}
	if sum.PlannedReplicates != 6 {
		t.Fatalf("planned %d replicates, want 6 (A/A, b vs a, axis unix vs host; 2 each)", sum.PlannedReplicates)
	}
	first, _, err := results.LoadReplicates(o.Run)
	if err != nil {
		t.Fatal(err)
	}
	kept := map[string]time.Time{}
	for _, r := range first {
		for _, w := range r.Windows {
			kept[fmt.Sprintf("%s#%d/%d", r.PairKey, r.Rep, w.Index)] = w.Started
		}
	}
	if len(kept) != 2 {
		t.Fatalf("%d windows kept after an interrupt in the 2nd replicate, want the first one's 2", len(kept))
	}
	o.Generator = InProcess{}
	sum2, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if sum2.ResumedWindows != len(kept) || sum2.Windows != 12 || sum2.Replicates != 6 {
		t.Fatalf("resumed: %+v", sum2)
	}
	all, _, _ := results.LoadReplicates(o.Run)
	swaps := map[rank.PairKey]int{}
	kinds := map[string]int{}
	for _, r := range all {
		kinds[r.Kind()]++
		if r.Swapped {
			swaps[r.PairKey]++
		}
		for _, w := range r.Windows {
			if at, ok := kept[fmt.Sprintf("%s#%d/%d", r.PairKey, r.Rep, w.Index)]; ok && !at.Equal(w.Started) {
				t.Errorf("window %s#%d/%d was measured again", r.PairKey, r.Rep, w.Index)
			}
			if w.Image.Requests <= 0 || w.Base.Requests <= 0 || w.Image.CPUNanos == 0 && w.Base.CPUNanos == 0 {
				t.Errorf("window without a measurement: %+v", w)
			}
			if w.Image.Misses != 0 || w.Base.Misses != 0 {
				t.Errorf("misses after prefill: %+v", w)
			}
		}
	}
	if kinds[rank.KindControl] != 2 || kinds[rank.KindImage] != 2 || kinds[rank.KindAxis] != 2 {
		t.Fatalf("replicate kinds %v", kinds)
	}
	for k, n := range swaps {
		if n != 1 {
			t.Errorf("%s: %d of 2 replicates swapped, want 1", k, n)
		}
	}
	rk := rank.Rank(nil, all, rank.DefaultThresholds())
	if rk.Method != rank.MethodPairs || len(rk.Controls) != 1 {
		t.Fatalf("ranking method %q controls %+v", rk.Method, rk.Controls)
	}
	if e.live() != 0 {
		t.Fatalf("%d servers left", e.live())
	}
}

// TestPairsWithoutCgroup: where no container's CPU time can be read the
// bench stops with a clear error rather than ranking on nothing.
func TestPairsWithoutCgroup(t *testing.T) {
	e := newProcEngine(t)
	o := testOptions(t, e, twoImages())
	o.Trials = -1
	o.Profile.Replicates, o.Profile.Windows = 2, 1
	o.CPU = func(string) (uint64, error) { return 0, errors.New("no cgroup here") }
	_, err := Run(context.Background(), o)
	if err == nil || !strings.Contains(err.Error(), "cgroup") {
		t.Fatalf("want a cgroup error, got %v", err)
	}
	if e.live() != 0 {
		t.Fatalf("%d servers left", e.live())
	}
}

// TestPairsUnsaturatedGiveNoAnswer: where no load keeps the server CPU
// busy, the calibration tries each load, records every window, and the
// bench stops before its design with "no answer", measuring nothing else.
func TestPairsUnsaturatedGiveNoAnswer(t *testing.T) {
	e := newProcEngine(t)
	o := testOptions(t, e, twoImages())
	o.Profile.Replicates, o.Profile.Windows = 2, 1
	o.Stat = fakeStat(0.6)
	var log bytes.Buffer
	o.Log = &log
	sum, err := Run(context.Background(), o)
	if !errors.Is(err, ErrNoAnswer) || !strings.Contains(err.Error(), "busy 60%") || !strings.Contains(err.Error(), "SET") {
		t.Fatalf("Run: %v; want no answer naming the test and the busy share", err)
	}
	var cal results.Calibration
	if err := o.Run.ReadJSON(results.CalibrationFile, &cal); err != nil {
		t.Fatal(err)
	}
	if len(cal.Benches) != 1 || cal.Benches[0].Load.Clients != 0 || len(cal.Benches[0].Tried) != len(loads(o.Profile.Clients)) {
		t.Fatalf("calibration %+v: want one benchmark, every load tried, none chosen", cal)
	}
	for _, l := range cal.Benches[0].Tried {
		if l.Saturated() || len(l.Windows) != calibrationWindows || !strings.Contains(l.Rejected[0], "not saturated") {
			t.Errorf("level %s: %+v", l.Load, l)
		}
	}
	if first, last := cal.Benches[0].Tried[0].Load, cal.Benches[0].Tried[3].Load; first != (results.Load{Clients: 2}) || last != (results.Load{Clients: 8, Threads: 2}) {
		t.Errorf("loads tried from %v to %v, want 2 connections per server up to 8 on 2 goroutines", first, last)
	}
	if reps, _, _ := results.LoadReplicates(o.Run); len(reps) != 0 || sum.Done != 0 {
		t.Errorf("measured after no answer: %d replicates, %d trials", len(reps), sum.Done)
	}
	var bj Summary
	if err := o.Run.ReadJSON(results.BenchFile, &bj); err != nil || len(bj.Warnings) == 0 || !strings.HasPrefix(bj.Warnings[len(bj.Warnings)-1], "no answer") {
		t.Errorf("bench.json warnings %v (%v)", bj.Warnings, err)
	}
	if e.started != 2 || e.live() != 0 {
		t.Fatalf("%d servers started (want the calibration's 2), %d left", e.started, e.live())
	}
}

// TestPairsLoseATestNotTheReplicate: a benchmark whose window run fails
// is lost for its replicate, with why; the replicate's other benchmarks
// stand, and nothing is measured again. Each short replicate gets a
// stand-in at the end, with its sides, while its pair has some left
// (maxStandIns); a resumed bench schedules no more.
func TestPairsLoseATestNotTheReplicate(t *testing.T) {
	e := newProcEngine(t)
	o := testOptions(t, e, twoImages())
	o.Trials = -1
	o.Profile.Tests = []string{"set", "get"}
	o.Profile.Replicates, o.Profile.Windows = 2, 2
	o.Generator = &countingGen{Sessions: InProcess{}, failTest: "GET", from: calibrated(o)}
	var log bytes.Buffer
	o.Log = &log
	sum, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	reps, _, _ := results.LoadReplicates(o.Run)
	// 2 pairs (A/A, b vs a) x 2 planned, every one short, so each pair
	// gets its maxStandIns(2) = 2 stand-ins, which are short too.
	if len(reps) != 8 || len(sum.FailedReplicates) != 0 || sum.StandIns != 4 || sum.PlannedReplicates != 4 {
		t.Fatalf("%d replicates (%d planned, %d stand-ins), failed %v; want 4 + 4, none given up", len(reps), sum.PlannedReplicates, sum.StandIns, sum.FailedReplicates)
	}
	byRep := map[string]results.Replicate{}
	for _, r := range reps {
		byRep[PairRel(r.PairKey, r.Rep)] = r
	}
	for _, r := range reps {
		set := 0
		for _, w := range r.Windows {
			if w.Test != "SET" {
				t.Errorf("%s #%d: a %s window kept", r.PairKey, r.Rep, w.Test)
			}
			set++
		}
		if set != 2 || len(r.Lost) != 1 || r.Lost[0].Test != "GET" || !strings.Contains(r.Lost[0].Reason, "injected failure") {
			t.Errorf("%s #%d: %d SET windows, lost %+v; want 2 and GET lost with its reason", r.PairKey, r.Rep, set, r.Lost)
		}
		switch {
		case r.Rep < 2 && r.Replaces != nil:
			t.Errorf("%s #%d: a planned replicate marked as replacing #%d", r.PairKey, r.Rep, *r.Replaces)
		case r.Rep >= 2 && r.Replaces == nil:
			t.Errorf("%s #%d: a stand-in without the replicate it replaces", r.PairKey, r.Rep)
		case r.Rep >= 2:
			was, ok := byRep[PairRel(r.PairKey, *r.Replaces)]
			if !ok || was.Swapped != r.Swapped || *r.Replaces >= r.Rep {
				t.Errorf("%s #%d (swapped %v) replaces #%d: %+v", r.PairKey, r.Rep, r.Swapped, *r.Replaces, was)
			}
		}
	}
	if len(sum.LostTests) != 8 || strings.Count(log.String(), "stand-in #") != 4 {
		t.Errorf("summary lost tests %v, want one per replicate; log:\n%s", sum.LostTests, log.String())
	}
	// Resumed, nothing is measured again: lost stays lost, and no stand-in
	// beyond those on disk.
	before := e.started
	sum, err = Run(context.Background(), o)
	if err != nil || e.started != before || sum.StandIns != 4 || sum.Replicates != 8 {
		t.Errorf("resume: %v, %d more servers started, %d stand-ins, %d replicates", err, e.started-before, sum.StandIns, sum.Replicates)
	}
	if e.live() != 0 {
		t.Fatalf("%d servers left", e.live())
	}
}

func TestFairAxis(t *testing.T) {
	host := variants.Runtime{Name: "host", Network: "host"}
	if !FairAxis(host, variants.Runtime{Network: "unix"}) || FairAxis(host, variants.Runtime{Network: "bridge"}) {
		t.Fatal("FairAxis: want unix fair, bridge not")
	}
}

// TestExecGeneratorRefusesATestBinary: from a test binary, the default
// generator (this executable's loadgen) would run the tests again, each
// bench starting another; it refuses at once, saying what to give instead.
func TestExecGeneratorRefusesATestBinary(t *testing.T) {
	_, _, err := ExecGenerator{}.Generate(context.Background(), loadgen.Config{Tests: []string{"GET"}}, "")
	if err == nil || !strings.Contains(err.Error(), "is a test binary") || !strings.Contains(err.Error(), "bench.InProcess") {
		t.Fatalf("Generate from a test binary: %v", err)
	}
}

// A benchmark whose requests outlast a window at the profile's load goes
// down the ladder, not up: halving the connections to one.
func TestLighterLoads(t *testing.T) {
	for _, c := range []struct {
		from results.Load
		want []results.Load
	}{
		{results.Load{Clients: 25, Threads: 3}, []results.Load{{Clients: 12}, {Clients: 6}, {Clients: 3}, {Clients: 1}}},
		{results.Load{Clients: 4}, []results.Load{{Clients: 2}, {Clients: 1}}},
		{results.Load{Clients: 1}, nil},
	} {
		if got := lighter(c.from); !slices.Equal(got, c.want) {
			t.Errorf("lighter(%v) = %v, want %v", c.from, got, c.want)
		}
	}
	ok := results.Window{Image: results.SideStats{Requests: 75}, Base: results.SideStats{Requests: 80}}
	none := results.Window{Image: results.SideStats{Requests: 250}, Base: results.SideStats{Requests: 0}}
	if starved([]results.Window{ok, ok}) || !starved([]results.Window{ok, none}) {
		t.Error("starved: want true exactly when a side finished no request in a window")
	}
}

// A benchmark whose calibration windows hold fewer than MinRounds rounds
// of every connection's pipeline gets longer windows, in proportion, at
// most MaxStretch times the profile's; a light one keeps the profile's.
func TestStretch(t *testing.T) {
	win := func(a, b int64) results.Window {
		return results.Window{Image: results.SideStats{Requests: a}, Base: results.SideStats{Requests: b}}
	}
	heavy := rank.Bench{Test: "LRANGE_600", Pipeline: 16}
	ld := results.Load{Clients: 6} // 96 requests a round
	for _, c := range []struct {
		wins []results.Window
		want time.Duration
	}{
		{[]results.Window{win(96*20, 96*30), win(96*25, 96*9)}, 0},                    // 9 rounds at least: enough
		{[]results.Window{win(96*4, 96*6), win(96*5, 96*4)}, time.Second},             // 4 rounds: twice 500 ms
		{[]results.Window{win(96*3, 96*6), win(96*5, 96*4)}, 1400 * time.Millisecond}, // 8/3 × 500 ms, rounded up
		{[]results.Window{win(50, 96*6)}, 4 * time.Second},                            // half a round: capped at 8×
		{[]results.Window{win(0, 96*6)}, 4 * time.Second},                             // none finished: the cap
	} {
		if got := stretch(c.wins, heavy, ld, 500*time.Millisecond); got != c.want {
			t.Errorf("stretch(%v) = %s, want %s (rounds %.2f)", c.wins, got, c.want, rounds(c.wins, heavy, ld))
		}
	}
	if got := (results.Load{Clients: 6, Window: time.Second}).String(); got != "6 connections per server, 1s windows" {
		t.Errorf("Load.String() = %q", got)
	}
}

// climb's choices on a fake machine whose server finishes the same
// requests a window whatever the connections (as LRANGE_600 of 1000-byte
// values at P16 does once saturated): the heavy test goes to fewer
// connections until its windows hold MinRounds rounds, stopping where
// fewer connections lose the headroom or the saturation; a cheap one
// takes its first load with headroom; a load without headroom gives way
// to the next rung; a starved one goes down.
func TestClimb(t *testing.T) {
	heavy := rank.Bench{Test: "LRANGE_600", Pipeline: 16}
	type shape struct {
		busy, client float64
		requests     int64
		rejected     bool
	}
	level := func(ld results.Load, sh shape) results.Level {
		w := results.Window{CoreBusy: sh.busy, Image: results.SideStats{Requests: sh.requests}, Base: results.SideStats{Requests: sh.requests}}
		l := results.Level{Load: ld, Windows: []results.Window{w, w}, ClientCPU: sh.client}
		if sh.rejected {
			l.Rejected = []string{"not saturated"}
		}
		return l
	}
	ok := shape{busy: 1, client: 0.5, requests: 400} // 400 requests a window: one round of 25 connections at P16
	for _, c := range []struct {
		name   string
		shapes map[results.Load]shape // by load; a load absent is not expected to be tried
		want   results.Load
		tried  int
	}{
		{"fewer connections until the windows need no lengthening", map[results.Load]shape{
			{Clients: 25}: ok, {Clients: 12}: ok, {Clients: 6}: ok, {Clients: 3}: ok,
		}, results.Load{Clients: 3}, 4},
		{"fewer connections lose the headroom: the lightest with it stands, lengthened", map[results.Load]shape{
			{Clients: 25}: ok, {Clients: 12}: ok, {Clients: 6}: {busy: 0.96, client: 0.5, requests: 400},
		}, results.Load{Clients: 12, Window: 2 * time.Second}, 3}, // 2.1 rounds: 8/2.1 × 500 ms, rounded up
		{"fewer connections lose saturation", map[results.Load]shape{
			{Clients: 25}: ok, {Clients: 12}: {busy: 0.7, client: 0.3, requests: 300, rejected: true},
		}, results.Load{Clients: 25, Window: 4 * time.Second}, 2},
		{"a cheap test takes its first load with headroom", map[results.Load]shape{
			{Clients: 25}: {busy: 1, client: 0.6, requests: 40000},
		}, results.Load{Clients: 25}, 1},
		{"the generators without headroom: the next rung", map[results.Load]shape{
			{Clients: 25}:             {busy: 1, client: 0.97, requests: 40000},
			{Clients: 25, Threads: 3}: {busy: 1, client: 0.6, requests: 40000},
		}, results.Load{Clients: 25, Threads: 3}, 2},
		{"no rung does better: the marginal one", map[results.Load]shape{
			{Clients: 25}:             {busy: 0.96, client: 0.5, requests: 40000},
			{Clients: 25, Threads: 3}: {busy: 0.8, client: 0.4, requests: 30000, rejected: true},
		}, results.Load{Clients: 25}, 2},
		{"starved: down the ladder", map[results.Load]shape{
			{Clients: 25}: {busy: 0.5, requests: 0, rejected: true},
			{Clients: 12}: {busy: 1, client: 0.5, requests: 12 * 16 * 10},
		}, results.Load{Clients: 12}, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			try := func(ld results.Load) (results.Level, error) {
				sh, ok := c.shapes[ld]
				if !ok {
					t.Fatalf("tried %v, not expected", ld)
				}
				return level(ld, sh), nil
			}
			var log strings.Builder
			bc, err := climb(heavy, 500*time.Millisecond, loads(50), try, func(f string, a ...any) { fmt.Fprintf(&log, f+"\n", a...) })
			if err != nil {
				t.Fatal(err)
			}
			if bc.Load != c.want || len(bc.Tried) != c.tried {
				t.Errorf("load %v after %d tries, want %v after %d\n%s", bc.Load, len(bc.Tried), c.want, c.tried, log.String())
			}
		})
	}
	stop := errors.New("no server started")
	if _, err := climb(heavy, time.Second, loads(50), func(results.Load) (results.Level, error) { return results.Level{}, stop }, func(string, ...any) {}); !errors.Is(err, stop) {
		t.Errorf("climb when try fails: %v, want %v", err, stop)
	}
}

// A calibration load is taken at once only with headroom above the
// saturation bound in every window.
func TestHeadroom(t *testing.T) {
	w := func(busy float64) results.Window { return results.Window{CoreBusy: busy} }
	for _, c := range []struct {
		wins []results.Window
		want bool
	}{
		{[]results.Window{w(1.0), w(0.99)}, true},
		{[]results.Window{w(1.0), w(0.96)}, false}, // accepted (≥ 0.95), but no headroom
		{[]results.Window{w(MinCoreBusy + Headroom)}, true},
		{nil, false},
	} {
		if got := headroom(c.wins, 0.5); got != c.want {
			t.Errorf("headroom(%v) = %v, want %v", c.wins, got, c.want)
		}
	}
	if headroom([]results.Window{w(1.0)}, 0.97) {
		t.Error("headroom with the generators at 97% of the client CPU: want false")
	}
}
