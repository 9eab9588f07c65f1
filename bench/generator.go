package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

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
	if len(cfg.Tests) != 1 {
		return nil, fmt.Errorf("the generator runs one test at a time, got %q", cfg.Tests)
	}
	args := []string{"loadgen", "--json", "--exact-tests", "-t", cfg.Tests[0]}
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
	if cfg.Seed != 0 {
		args = append(args, "--seed", strconv.FormatInt(cfg.Seed, 10))
	}
	if cfg.Timeout > 0 {
		args = append(args, "--timeout", cfg.Timeout.String())
	}
	return args, nil
}

// Generate implements Generator.
func (g ExecGenerator) Generate(ctx context.Context, cfg loadgen.Config, cpus string) (loadgen.Result, time.Duration, error) {
	bin := g.Binary
	if bin == "" {
		exe, err := os.Executable()
		if err != nil {
			return loadgen.Result{}, 0, fmt.Errorf("finding this executable to run the generator: %w", err)
		}
		if strings.HasSuffix(exe, ".test") {
			// A test binary has no loadgen command: run as one, it would
			// run the tests again, each bench starting another.
			return loadgen.Result{}, 0, fmt.Errorf("the generator runs this executable's loadgen command, and %s is a test binary: give the bench an in-process generator (bench.InProcess) or ExecGenerator.Binary", filepath.Base(exe))
		}
		bin = exe
	}
	args, err := Args(cfg)
	if err != nil {
		return loadgen.Result{}, 0, err
	}
	name := bin
	if cpus != "" {
		ts, err := exec.LookPath("taskset")
		if err != nil {
			return loadgen.Result{}, 0, fmt.Errorf("pinning the generator to CPUs %s: taskset (util-linux) not found: %w", cpus, err)
		}
		name, args = ts, append([]string{"-c", cpus, bin}, args...)
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
	if runErr != nil && res.Requests == 0 {
		return res, cpu, fmt.Errorf("generator: %v: %s", runErr, strings.TrimSpace(stderr.String()))
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
