package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis-variants/redis-variants/engine"
	"github.com/redis-variants/redis-variants/loadgen"
	"github.com/redis-variants/redis-variants/machine"
)

// Generator runs one load-generator test (cfg.Tests holds exactly one name)
// pinned to the CPU list cpus ("" = anywhere) and returns its result and the
// generator's CPU time.
type Generator interface {
	Generate(ctx context.Context, cfg loadgen.Config, cpus string) (loadgen.Result, time.Duration, error)
}

// ExecGenerator runs `<Binary> loadgen --json ...` as a child process under
// `taskset -c <cpus>`, so the generator is pinned to its CPUs from its first
// thread on, and reads its JSON report. Its CPU time is the child's
// (user + system) from the kernel.
type ExecGenerator struct {
	Binary string // the redis-variants binary ("" = this executable)
}

// Args returns the loadgen command line for cfg (without the binary).
func Args(cfg loadgen.Config) ([]string, error) {
	if len(cfg.Tests) > 1 {
		return nil, fmt.Errorf("the generator runs one test at a time, got %q", cfg.Tests)
	}
	args := []string{"loadgen", "--json", "--exact-tests"}
	if len(cfg.Tests) == 1 {
		args = append(args, "-t", cfg.Tests[0])
	}
	if cfg.Socket != "" {
		args = append(args, "--socket", cfg.Socket)
	} else {
		host, port, err := net.SplitHostPort(cfg.Addr)
		if err != nil {
			return nil, fmt.Errorf("generator address %q: %w", cfg.Addr, err)
		}
		args = append(args, "--host", host, "--port", port)
	}
	if cfg.Clients > 0 {
		args = append(args, "-c", strconv.Itoa(cfg.Clients))
	}
	if cfg.Pipeline > 0 {
		args = append(args, "-P", strconv.Itoa(cfg.Pipeline))
	}
	if cfg.Threads > 0 {
		args = append(args, "--threads", strconv.Itoa(cfg.Threads))
	}
	if cfg.DataSize > 0 {
		args = append(args, "-d", strconv.Itoa(cfg.DataSize))
	}
	if cfg.Keyspace > 0 {
		args = append(args, "-r", strconv.Itoa(cfg.Keyspace))
	}
	if cfg.Duration > 0 {
		args = append(args, "--duration", cfg.Duration.String())
	} else if cfg.Requests > 0 {
		args = append(args, "-n", strconv.FormatInt(cfg.Requests, 10))
	}
	if cfg.Warmup > 0 {
		args = append(args, "--warmup", cfg.Warmup.String())
	}
	if cfg.Rate > 0 {
		args = append(args, "--rate", strconv.FormatFloat(cfg.Rate, 'f', -1, 64))
	}
	if cfg.Seed != 0 {
		args = append(args, "--seed", strconv.FormatInt(cfg.Seed, 10))
	}
	if cfg.Timeout > 0 {
		args = append(args, "--timeout", cfg.Timeout.String())
	}
	if cfg.PathDelay > 0 {
		args = append(args, "--path-delay", cfg.PathDelay.String())
	}
	return args, nil
}

// command is the command line that runs the generator for cfg pinned to
// cpus: taskset, this binary (or Binary) and its loadgen arguments.
func (g ExecGenerator) command(cfg loadgen.Config, cpus string) (string, []string, error) {
	bin := g.Binary
	if bin == "" {
		exe, err := os.Executable()
		if err != nil {
			return "", nil, fmt.Errorf("finding this executable to run the generator: %w", err)
		}
		if strings.HasSuffix(exe, ".test") {
			// A test binary has no loadgen command: run as one, it would
			// run the tests again, each bench starting another.
			return "", nil, fmt.Errorf("the generator runs this executable's loadgen command, and %s is a test binary: give the bench an in-process generator (bench.InProcess) or ExecGenerator.Binary", filepath.Base(exe))
		}
		bin = exe
	}
	args, err := Args(cfg)
	if err != nil {
		return "", nil, err
	}
	name := bin
	if cpus != "" {
		ts, err := exec.LookPath("taskset")
		if err != nil {
			return "", nil, fmt.Errorf("pinning the generator to CPUs %s: taskset (util-linux) not found: %w", cpus, err)
		}
		name, args = ts, append([]string{"-c", cpus, bin}, args...)
	}
	return name, args, nil
}

// Generate implements Generator.
func (g ExecGenerator) Generate(ctx context.Context, cfg loadgen.Config, cpus string) (loadgen.Result, time.Duration, error) {
	if len(cfg.Tests) != 1 {
		return loadgen.Result{}, 0, fmt.Errorf("the generator runs one test at a time, got %q", cfg.Tests)
	}
	name, args, err := g.command(cfg, cpus)
	if err != nil {
		return loadgen.Result{}, 0, err
	}
	cmd := exec.CommandContext(ctx, name, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	var cpu time.Duration
	if cmd.ProcessState != nil {
		cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	if ctx.Err() != nil {
		return loadgen.Result{}, cpu, ctx.Err()
	}
	var rep loadgen.Report
	err = json.Unmarshal(stdout.Bytes(), &rep)
	// loadgen, like redis-benchmark, runs "LPUSH (needed to benchmark
	// LRANGE)" before an LRANGE test: the result wanted is the one named.
	res, found := pickResult(rep.Results, cfg.Tests[0])
	if err != nil || !found {
		msg := strings.TrimSpace(stderr.String())
		if runErr != nil {
			return loadgen.Result{}, cpu, fmt.Errorf("generator %s: %v: %s", strings.Join(args, " "), runErr, msg)
		}
		return loadgen.Result{}, cpu, fmt.Errorf("generator %s: reading its JSON report (%d results, none for %s): %v: %s", strings.Join(args, " "), len(rep.Results), cfg.Tests[0], err, msg)
	}
	if runErr != nil {
		// a report and a failure: the report may be of a run cut short
		return res, cpu, fmt.Errorf("generator exited with %v after %d requests: %s", runErr, res.Requests, strings.TrimSpace(stderr.String()))
	}
	return res, cpu, nil
}

// pickResult finds the result of test among a generator's results.
func pickResult(rs []loadgen.Result, test string) (loadgen.Result, bool) {
	for _, r := range rs {
		if strings.EqualFold(r.Test, test) {
			return r, true
		}
	}
	if len(rs) == 1 {
		return rs[0], true
	}
	return loadgen.Result{}, false
}

// InProcess runs loadgen.Run in this process. It does not pin to cpus (Go
// cannot pin one goroutine set without pinning the whole process); it is
// for tests and for machines where the binary cannot re-execute itself.
type InProcess struct{}

// Generate implements Generator. The CPU time is loadgen's own figure for
// the measured window.
func (InProcess) Generate(ctx context.Context, cfg loadgen.Config, cpus string) (loadgen.Result, time.Duration, error) {
	if len(cfg.Tests) != 1 {
		return loadgen.Result{}, 0, fmt.Errorf("the generator runs one test at a time, got %q", cfg.Tests)
	}
	res, err := loadgen.Run(ctx, cfg)
	if err != nil {
		return loadgen.Result{}, 0, err
	}
	if len(res) != 1 {
		return loadgen.Result{}, 0, fmt.Errorf("generator: test %s gave %d results, want 1", cfg.Tests[0], len(res))
	}
	return res[0], res[0].ClientCPU, nil
}

// CountCPUs returns how many CPUs a list such as "1", "2-3" or "0,2-5"
// names; "" means every CPU of the machine.
func CountCPUs(list string) (int, error) {
	cpus, err := machine.ParseCPUList(list)
	if err != nil {
		return 0, err
	}
	if cpus == nil {
		return runtime.NumCPU(), nil
	}
	return len(cpus), nil
}

// Session is a generator that stays up for a replicate: its connections
// to one server stay open across every window (loadgen.Session).
type Session interface {
	Run(ctx context.Context, w loadgen.Windows) ([]loadgen.Result, error)
	Close() error
}

// Sessions is a Generator that can also stay up.
type Sessions interface {
	Generator
	// Open starts a generator pinned to cpus with cfg's connections open.
	Open(ctx context.Context, cfg loadgen.Config, cpus string) (Session, error)
}

var (
	_ Sessions = ExecGenerator{}
	_ Sessions = InProcess{}
)

// Open implements Sessions: `<Binary> loadgen --serve ...` under taskset,
// driven over its standard input and output (loadgen.Serve).
func (g ExecGenerator) Open(ctx context.Context, cfg loadgen.Config, cpus string) (Session, error) {
	name, args, err := g.command(cfg, cpus)
	if err != nil {
		return nil, err
	}
	if len(cfg.Tests) > 0 {
		return nil, fmt.Errorf("a generator that stays up is told its tests window by window, got %q", cfg.Tests)
	}
	args = append(args, "--serve")
	// Not CommandContext: the process outlives Open's ctx; Close ends it.
	cmd := exec.Command(name, args...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr := &engine.LockedBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the generator: %w", err)
	}
	s := &execSession{in: stdin, out: bufio.NewScanner(stdout), stderr: stderr.String, wait: cmd.Wait,
		kill: func() { cmd.Process.Kill() }}
	s.out.Buffer(make([]byte, 1<<20), 64<<20)
	rep, err := s.read(ctx)
	if err == nil && !rep.Ready {
		err = fmt.Errorf("generator %s: %s", strings.Join(args, " "), rep.Error)
	}
	if err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// execSession drives a generator over its standard streams (loadgen.Serve):
// a process of ExecGenerator's, or a pod runtime's sidecar.
type execSession struct {
	in     io.WriteCloser
	out    *bufio.Scanner
	stderr func() string // what it wrote to its standard error so far
	wait   func() error  // waits for it to exit
	kill   func()
	mu     sync.Mutex
	closed bool
}

// read reads one reply line; ctx ending kills the generator.
func (s *execSession) read(ctx context.Context) (loadgen.Reply, error) {
	type line struct {
		b   []byte
		err error
	}
	ch := make(chan line, 1)
	go func() {
		if s.out.Scan() {
			ch <- line{b: append([]byte(nil), s.out.Bytes()...)}
			return
		}
		err := s.out.Err()
		if err == nil {
			err = io.ErrUnexpectedEOF
		}
		ch <- line{err: err}
	}()
	select {
	case <-ctx.Done():
		s.Close()
		<-ch
		return loadgen.Reply{}, ctx.Err()
	case l := <-ch:
		if l.err != nil {
			s.Close()
			return loadgen.Reply{}, fmt.Errorf("generator exited: %v: %s", l.err, strings.TrimSpace(s.stderr()))
		}
		var rep loadgen.Reply
		if err := json.Unmarshal(l.b, &rep); err != nil {
			return rep, fmt.Errorf("generator reply %q: %w", l.b, err)
		}
		return rep, nil
	}
}

func (s *execSession) Run(ctx context.Context, w loadgen.Windows) ([]loadgen.Result, error) {
	b, err := json.Marshal(loadgen.Request{Windows: &w})
	if err != nil {
		return nil, err
	}
	if _, err := s.in.Write(append(b, '\n')); err != nil {
		return nil, fmt.Errorf("generator: sending a request: %w: %s", err, strings.TrimSpace(s.stderr()))
	}
	rep, err := s.read(ctx)
	if err != nil {
		return nil, err
	}
	if rep.Error != "" {
		return nil, errors.New(rep.Error)
	}
	return rep.Results, nil
}

// Close ends the generator: end of input, then a kill if it has not
// exited within 5 s.
func (s *execSession) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	s.in.Close()
	done := make(chan error, 1)
	go func() { done <- s.wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(5 * time.Second):
		s.kill()
		return <-done
	}
}

// Open implements Sessions in this process (no pinning).
func (InProcess) Open(ctx context.Context, cfg loadgen.Config, cpus string) (Session, error) {
	return loadgen.Open(ctx, cfg)
}
