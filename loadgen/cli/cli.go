// Package cli is the loadgen command line, shared by "redis-variants loadgen"
// and the standalone redis-loadgen binary.
package cli

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/redis-variants/redis-variants/loadgen"
)

// NewCommand returns the loadgen command.
func NewCommand() *cobra.Command {
	var (
		cfg       loadgen.Config
		host      string
		port      int
		tests     string
		exact     bool
		csvOut    bool
		jsonOut   bool
		procs     int
		listTests bool
		memTarget string
		mem       loadgen.Memory
		serve     bool
	)
	cmd := &cobra.Command{
		Use:   "loadgen",
		Short: "Benchmark any Redis like redis-benchmark (same tests and key names), with HdrHistogram latencies and an open-loop --rate mode",
		Long: `loadgen runs redis-benchmark's tests (PING_INLINE, PING_MBULK, SET, GET, INCR,
LPUSH, RPUSH, LPOP, RPOP, SADD, HSET, SPOP, ZADD, ZPOPMIN, LRANGE_100..600,
MSET, XADD) plus MIXED (a memtier-like SET:GET mix, --ratio, --key-pattern)
against a Redis server. Replies are validated; wrong and error replies are
counted as errors. With --rate the load is open loop: requests leave at a
fixed rate whatever the replies do, and latency is measured from each
request's intended send time (corrected for coordinated omission).`,
		Example: `  redis-variants loadgen -t set,get -c 50 -P 16 -n 1000000
  redis-variants loadgen -t set,get,lrange_100 --duration 10s --warmup 2s --csv
  redis-variants loadgen -t mixed --ratio 1:10 --key-pattern zipf -r 100000 --duration 10s
  redis-variants loadgen -t get --rate 20000 --duration 10s --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if listTests {
				for _, t := range loadgen.Tests() {
					fmt.Fprintln(cmd.OutOrStdout(), t)
				}
				return nil
			}
			if csvOut && jsonOut {
				return fmt.Errorf("--csv and --json are exclusive")
			}
			if procs > 0 {
				runtime.GOMAXPROCS(procs)
			}
			if port <= 0 || port > 65535 {
				return fmt.Errorf("--port %d: want 1..65535", port)
			}
			cfg.Addr = net.JoinHostPort(host, strconv.Itoa(port))
			if memTarget != "" {
				return runMemory(cmd, cfg, memTarget, mem, jsonOut)
			}
			if serve {
				return loadgen.Serve(cmd.Context(), cfg, cmd.InOrStdin(), cmd.OutOrStdout())
			}
			t, err := loadgen.ParseTests(tests)
			if err != nil {
				return err
			}
			if exact {
				// Only the named tests: no "LPUSH (needed to benchmark
				// LRANGE)" pass (Run fills the list itself), so the
				// server's work during the run is the named test's alone.
				t = slices.DeleteFunc(t, func(name string) bool {
					return name == loadgen.LPushForLRANGE && !strings.Contains(strings.ToLower(tests), "lpush (")
				})
			}
			cfg.Tests = t
			if cmd.Flags().Changed("duration") && !cmd.Flags().Changed("requests") {
				cfg.Requests = 0
			}
			results, runErr := loadgen.Run(cmd.Context(), cfg)
			out := cmd.OutOrStdout()
			switch {
			case csvOut:
				err = loadgen.WriteCSV(out, results)
			case jsonOut:
				err = loadgen.WriteJSON(out, cfg, results)
			default:
				err = loadgen.WriteTable(out, results)
			}
			if runErr != nil {
				return runErr
			}
			if err != nil {
				return err
			}
			for _, r := range results {
				if r.Errors > 0 {
					fmt.Fprintf(os.Stderr, "loadgen: %s: %d of %d replies were errors or wrong\n", r.Test, r.Errors, r.Requests)
				}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&host, "host", "127.0.0.1", "server host")
	f.IntVar(&port, "port", 6379, "server port")
	f.StringVar(&cfg.Socket, "socket", "", "server unix socket (overrides --host/--port)")
	f.StringVarP(&cfg.Password, "password", "a", "", "password for AUTH")
	f.IntVarP(&cfg.Clients, "clients", "c", 50, "parallel connections")
	f.IntVarP(&cfg.Pipeline, "pipeline", "P", 1, "pipeline depth")
	f.Int64VarP(&cfg.Requests, "requests", "n", 100000, "total requests per test (ignored with --duration unless given)")
	f.DurationVar(&cfg.Duration, "duration", 0, "measured time per test instead of -n")
	f.DurationVar(&cfg.Warmup, "warmup", 0, "unmeasured time before each test")
	f.IntVarP(&cfg.DataSize, "data-size", "d", 3, "value size in bytes")
	f.IntVarP(&cfg.Keyspace, "keyspace", "r", 0, "use random keys in [0,N) (0 = one fixed key, like redis-benchmark)")
	f.StringVarP(&tests, "tests", "t", "", "comma-separated tests, as redis-benchmark -t (default: all of redis-benchmark's)")
	f.BoolVar(&exact, "exact-tests", false, "run only the tests named (no separate LPUSH pass before LRANGE tests; the list is filled unmeasured)")
	f.IntVar(&cfg.Threads, "threads", 0, "goroutines driving the connections (0 = one per connection)")
	f.DurationVar(&cfg.PathDelay, "path-delay", 0, "add this to every round trip (a costlier network path, for tests)")
	f.IntVar(&procs, "procs", 0, "GOMAXPROCS for the generator (0 = Go's default)")
	f.Float64Var(&cfg.Rate, "rate", 0, "open loop: requests/s in total, latency from intended send time (0 = closed loop)")
	f.StringVar(&cfg.Ratio, "ratio", "1:10", "MIXED: SET:GET ratio")
	f.StringVar(&cfg.KeyPattern, "key-pattern", "uniform", "MIXED: key distribution: uniform, gaussian or zipf (needs -r)")
	f.DurationVar(&cfg.Timeout, "timeout", 0, "fail when a connection waits this long for a reply (default 10s)")
	f.Int64Var(&cfg.Seed, "seed", 0, "random seed (0 = from the clock)")
	f.BoolVar(&csvOut, "csv", false, "CSV output (redis-benchmark's columns plus p99.9)")
	f.BoolVar(&jsonOut, "json", false, "JSON output with every figure and the encoded HdrHistograms")
	f.BoolVar(&listTests, "list-tests", false, "print the supported test names and exit")
	f.BoolVar(&serve, "serve", false, "stay up: open the connections, then run the windows asked for on standard input (JSON lines, see loadgen.Request), answering each on standard output")
	f.StringVar(&memTarget, "memory", "", "run the memory workload instead of tests: fill to this dataset size (64MiB, 1GiB), overwrite, delete, defragment")
	f.StringVar(&mem.Sizes, "sizes", "64:40,1K:30,4K:20,16K:10", "memory workload: value-size mix, uniform:MIN-MAX or SIZE:WEIGHT,...")
	f.Float64Var(&mem.Overwrite, "overwrite", 0.5, "memory workload: share of the keys overwritten with other sizes")
	f.Float64Var(&mem.Delete, "delete", 0.3, "memory workload: share of the keys deleted")
	f.DurationVar(&mem.Defrag, "defrag", 5*time.Second, "memory workload: active defragmentation's bound (0 = none)")
	return cmd
}

// runMemory runs the memory workload on cfg's server and prints each
// phase's figures (or the whole result as JSON).
func runMemory(cmd *cobra.Command, cfg loadgen.Config, target string, m loadgen.Memory, jsonOut bool) error {
	t, err := loadgen.ParseBytes(target)
	if err != nil {
		return fmt.Errorf("--memory: %w", err)
	}
	m.Target = t
	res, err := loadgen.RunMemory(cmd.Context(), cfg, m)
	out := cmd.OutOrStdout()
	if jsonOut {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		if jerr := enc.Encode(res); jerr != nil {
			return jerr
		}
		return err
	}
	if len(res.Phases) == 0 {
		return err
	}
	fmt.Fprintf(out, "%-10s %10s %12s %12s %12s %8s %8s\n", "phase", "commands", "SET/s", "used MiB", "rss MiB", "frag", "alloc")
	for _, p := range res.Phases {
		fmt.Fprintf(out, "%-10s %10d %12.0f %12.1f %12.1f %8.3f %8.3f\n", p.Name, p.Commands, p.OpsPerSec,
			float64(p.After.UsedMemory)/(1<<20), float64(p.After.UsedMemoryRSS)/(1<<20), p.After.FragRatio, p.After.AllocatorFragRatio)
	}
	fmt.Fprintf(out, "%d keys, dataset %.1f MiB (%s)", res.Keys, float64(res.Dataset)/(1<<20), res.Phases[len(res.Phases)-1].After.Allocator)
	if res.Defrag {
		fmt.Fprintf(out, "; defrag %d hits, %d misses, server CPU %s", res.DefragHits, res.DefragMisses, res.DefragCPU.Round(time.Millisecond))
	} else if res.DefragNote != "" {
		fmt.Fprintf(out, "; defrag %s", res.DefragNote)
	}
	fmt.Fprintln(out)
	return err
}
