// Package loadgen is a Redis load generator in the manner of
// redis-benchmark: the same tests, key names and -t selection, so results
// are comparable, plus an open-loop mode (fixed arrival rate, latency
// measured from the intended send time, i.e. corrected for coordinated
// omission) and a memtier-like MIXED set/get workload.
//
// The hot path writes pre-encoded RESP commands (random keys patched in
// place) on raw connections and validates every reply with a scanner that
// does not allocate; go-redis is used only for the control plane
// (readiness, authentication check, data preparation).
package loadgen

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"math/rand"
	"net"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/redis/go-redis/v9"
	"golang.org/x/sync/errgroup"
	"golang.org/x/sys/unix"

	"github.com/redis-variants/redis-variants/loadgen/resp"
)

// Config says what to run against which server.
type Config struct {
	Addr     string        `json:"addr,omitempty"`     // host:port (TCP); default 127.0.0.1:6379
	Socket   string        `json:"socket,omitempty"`   // unix socket path (overrides Addr)
	Password string        `json:"-"`                  // AUTH password ("" = none)
	Clients  int           `json:"clients"`            // connections (default 50)
	Pipeline int           `json:"pipeline"`           // depth (default 1)
	Requests int64         `json:"requests,omitempty"` // total requests per test (0 = use Duration; both 0 = 100000)
	Duration time.Duration `json:"duration,omitempty"` // measured time per test
	Warmup   time.Duration `json:"warmup,omitempty"`   // unmeasured time before each test
	DataSize int           `json:"data_size"`          // value size in bytes (default 3)
	Keyspace int           `json:"keyspace"`           // random keys in [0,Keyspace) (0 = one fixed key, like redis-benchmark without -r)
	Tests    []string      `json:"tests"`              // test names (see Tests); "ping" and "lrange" expand; empty = DefaultTests
	// Threads is the number of goroutines driving the connections: 0 (the
	// default) runs one goroutine per connection; N > 0 runs N goroutines,
	// each driving its share of the connections in lock step (write every
	// connection's batch, then read every reply).
	Threads int     `json:"threads,omitempty"`
	Rate    float64 `json:"rate,omitempty"` // open-loop requests/s in total (0 = closed loop)

	// Ratio is MIXED's set:get ratio, "1:10" by default.
	Ratio string `json:"ratio,omitempty"`
	// KeyPattern is MIXED's key distribution: "uniform" (default),
	// "gaussian" (mean Keyspace/2, σ Keyspace/6) or "zipf" (s=1.01).
	KeyPattern string `json:"key_pattern,omitempty"`
	// Timeout is how long a connection may wait for a reply before the run
	// fails (default 10s). It also bounds connecting.
	Timeout time.Duration `json:"timeout,omitempty"`
	// Seed seeds the random keys (0 = derived from the clock).
	Seed int64 `json:"seed,omitempty"`
	// PathDelay adds this much to every round trip of every connection:
	// replies are read no sooner than PathDelay after the write they
	// answer. It stands for a costlier network path (what a netem delay
	// does; these machines' kernels have no netem) in the tests that
	// provoke a load too light to keep the servers busy.
	PathDelay time.Duration `json:"path_delay,omitempty"`
}

// Result is one test's measurement.
type Result struct {
	Test         string        `json:"test"`  // canonical name, as in Tests()
	Title        string        `json:"title"` // redis-benchmark's title (its CSV test column)
	Requests     int64         `json:"requests"`
	Errors       int64         `json:"errors"`
	ErrorSamples []string      `json:"error_samples,omitempty"`
	Misses       int64         `json:"misses"` // valid nil replies (GET of a missing key, pop of an empty list)
	Elapsed      time.Duration `json:"elapsed"`
	OpsPerSec    float64       `json:"ops_per_sec"`
	AvgMs        float64       `json:"avg_ms"`
	MinMs        float64       `json:"min_ms"`
	P50Ms        float64       `json:"p50_ms"`
	P95Ms        float64       `json:"p95_ms"`
	P99Ms        float64       `json:"p99_ms"`
	P999Ms       float64       `json:"p999_ms"`
	MaxMs        float64       `json:"max_ms"`
	Hist         string        `json:"hist"`           // encoded HdrHistogram (µs), base64 V2 compressed; see DecodeHist
	ClientCPU    time.Duration `json:"client_cpu"`     // the generator process's CPU time during the measured window
	ClientMaxRSS int64         `json:"client_max_rss"` // the generator process's peak RSS so far, bytes
	Clients      int           `json:"clients"`
	Pipeline     int           `json:"pipeline"`
	Rate         float64       `json:"rate,omitempty"` // configured open-loop rate (0 = closed loop)
	// SentPerSec is, in open-loop mode, the achieved arrival rate: requests
	// actually written during the measured window per second.
	SentPerSec float64 `json:"sent_per_sec,omitempty"`
	// SendLagP50Ms and SendLagP99Ms are, in open-loop mode, the median and
	// 99th percentile of how late the generator wrote each request after
	// its intended send time: its own share of every latency figure.
	SendLagP50Ms float64 `json:"send_lag_p50_ms,omitempty"`
	SendLagP99Ms float64 `json:"send_lag_p99_ms,omitempty"`
}

// Histogram geometry: microseconds, 1 µs .. 100 s, 3 significant digits.
const (
	histMin    = 1
	histMax    = 100_000_000
	histDigits = 3
)

func newHist() *hdrhistogram.Histogram { return hdrhistogram.New(histMin, histMax, histDigits) }

// DecodeHist decodes Result.Hist.
func DecodeHist(s string) (*hdrhistogram.Histogram, error) {
	h, err := hdrhistogram.Decode([]byte(s))
	if err != nil {
		return nil, fmt.Errorf("decoding latency histogram: %w", err)
	}
	return h, nil
}

const maxSamples = 5

func (c *Config) setDefaults() error {
	if c.Addr == "" {
		c.Addr = "127.0.0.1:6379"
	}
	if c.Clients == 0 {
		c.Clients = 50
	}
	if c.Pipeline == 0 {
		c.Pipeline = 1
	}
	if c.DataSize == 0 {
		c.DataSize = 3
	}
	if c.Requests == 0 && c.Duration == 0 {
		c.Requests = 100000
	}
	if c.Timeout == 0 {
		c.Timeout = 10 * time.Second
	}
	if c.Ratio == "" {
		c.Ratio = "1:10"
	}
	if c.KeyPattern == "" {
		c.KeyPattern = "uniform"
	}
	switch {
	case c.Clients < 0:
		return fmt.Errorf("clients must be positive, got %d", c.Clients)
	case c.Pipeline < 0:
		return fmt.Errorf("pipeline must be positive, got %d", c.Pipeline)
	case c.Requests < 0:
		return fmt.Errorf("requests must not be negative, got %d", c.Requests)
	case c.Duration < 0 || c.Warmup < 0:
		return fmt.Errorf("duration and warmup must not be negative")
	case c.DataSize < 0:
		return fmt.Errorf("data size must not be negative, got %d", c.DataSize)
	case c.Keyspace < 0:
		return fmt.Errorf("keyspace must not be negative, got %d", c.Keyspace)
	case c.Threads < 0:
		return fmt.Errorf("threads must not be negative, got %d", c.Threads)
	case c.Rate < 0 || math.IsNaN(c.Rate) || math.IsInf(c.Rate, 0):
		return fmt.Errorf("rate must be a positive number, got %v", c.Rate)
	}
	if _, _, err := parseRatio(c.Ratio); err != nil {
		return err
	}
	switch c.KeyPattern {
	case "uniform", "gaussian", "zipf":
	default:
		return fmt.Errorf("key pattern %q: want uniform, gaussian or zipf", c.KeyPattern)
	}
	return nil
}

func parseRatio(s string) (set, get int, err error) {
	a, b, found := strings.Cut(s, ":")
	if found {
		set, err = strconv.Atoi(strings.TrimSpace(a))
		if err == nil {
			get, err = strconv.Atoi(strings.TrimSpace(b))
		}
	}
	if !found || err != nil || set < 0 || get < 0 || set+get == 0 {
		return 0, 0, fmt.Errorf("ratio %q: want SET:GET, e.g. 1:10", s)
	}
	return set, get, nil
}

func (c *Config) network() (string, string) {
	if c.Socket != "" {
		return "unix", c.Socket
	}
	return "tcp", c.Addr
}

func (c *Config) target() string {
	if c.Socket != "" {
		return "unix:" + c.Socket
	}
	return c.Addr
}

// control returns a go-redis client for the control plane.
func (c *Config) control() *redis.Client {
	n, a := c.network()
	return redis.NewClient(&redis.Options{
		Network:         n,
		Addr:            a,
		Password:        c.Password,
		Protocol:        2,
		DisableIdentity: true,
		DialTimeout:     c.Timeout,
		ReadTimeout:     c.Timeout,
		WriteTimeout:    c.Timeout,
		PoolSize:        2,
		MaxRetries:      -1,
	})
}

// Run runs cfg.Tests in order against the server and returns one Result per
// test. It prepares the data LRANGE tests read (the list "mylist" is
// filled up to 600 elements) itself. A lost connection or a server that
// stops answering for cfg.Timeout ends the run with an error, returning the
// results of the tests finished so far.
func Run(ctx context.Context, cfg Config) ([]Result, error) {
	if err := cfg.setDefaults(); err != nil {
		return nil, fmt.Errorf("loadgen: %w", err)
	}
	defs, err := resolveTests(cfg.Tests)
	if err != nil {
		return nil, fmt.Errorf("loadgen: %w", err)
	}
	ctl := cfg.control()
	defer ctl.Close()
	if err := ctl.Ping(ctx).Err(); err != nil {
		return nil, fmt.Errorf("loadgen: connecting to %s: %w", cfg.target(), err)
	}
	var out []Result
	for _, d := range defs {
		if d.lrange > 0 {
			if err := fillList(ctx, ctl, &cfg, d.lrange); err != nil {
				return out, fmt.Errorf("loadgen: preparing %s: %w", d.name, err)
			}
		}
		r, err := runTest(ctx, &cfg, d)
		if err != nil {
			return out, fmt.Errorf("loadgen: test %s against %s: %w", d.name, cfg.target(), err)
		}
		out = append(out, r)
	}
	return out, nil
}

// fillList makes sure "mylist" holds at least n elements.
func fillList(ctx context.Context, ctl *redis.Client, cfg *Config, n int) error {
	have, err := ctl.LLen(ctx, "mylist").Result()
	if err != nil {
		return fmt.Errorf("LLEN mylist: %w", err)
	}
	if have >= int64(n) {
		return nil
	}
	vals := make([]any, int64(n)-have)
	for i := range vals {
		vals[i] = data(cfg)
	}
	return ctl.LPush(ctx, "mylist", vals...).Err()
}

// clock is a monotonic nanosecond clock starting at a fixed base.
type clock struct{ base time.Time }

func (c clock) now() int64 { return int64(time.Since(c.base)) }

// countingConn counts reads so the worker can timestamp replies by the
// read that delivered them instead of calling the clock per reply.
type countingConn struct {
	net.Conn
	reads uint64
}

func (c *countingConn) Read(p []byte) (int, error) {
	c.reads++
	return c.Conn.Read(p)
}

// conn is one connection and its state.
type conn struct {
	id   int
	nc   net.Conn
	cc   *countingConn
	rd   *resp.Reader
	wbuf []byte
	// watchdog
	progress atomic.Uint64
	idle     atomic.Bool
	killed   atomic.Value // error set by the watchdog before closing
}

// stats is one worker's tally.
type stats struct {
	hist    *hdrhistogram.Histogram
	count   int64
	errors  int64
	misses  int64
	samples []string
	sent    int64 // open loop: requests written inside the window
	// lag is, in open loop, each counted request's send lag (µs): how long
	// after its intended time it was written. Latency is measured from the
	// intended time, so the generator's own lateness is in every figure:
	// this says how much of it.
	lag   *hdrhistogram.Histogram
	first int64 // earliest send time of a counted request (ns)
	last  int64 // latest completion time of a counted request (ns)
}

func newStats() *stats { return &stats{hist: newHist(), first: math.MaxInt64} }

func (s *stats) sample(msg string) {
	if len(s.samples) < maxSamples {
		s.samples = append(s.samples, msg)
	}
}

// phase times, ns on the test's clock. The measured time [start, end) is
// n intervals of d ns each (one in request mode, where end is MaxInt64);
// the load goes on, unmeasured, until stop.
type window struct {
	start int64 // measurement starts (after warmup)
	end   int64 // measurement ends (duration mode); MaxInt64 in request mode
	stop  int64 // load stops (>= end)
	n     int   // measured intervals
	d     int64 // one interval's length (duration mode)
}

func (w window) in(t int64) bool { return t >= w.start && t < w.end }

// index is the measured interval t falls in, or -1 outside them.
func (w window) index(t int64) int {
	if !w.in(t) {
		return -1
	}
	if w.n <= 1 {
		return 0
	}
	return min(int((t-w.start)/w.d), w.n-1)
}

// tally is one worker's statistics, one per measured interval.
type tally []*stats

func newTally(n int) tally {
	t := make(tally, max(n, 1))
	for i := range t {
		t[i] = newStats()
	}
	return t
}

type test struct {
	cfg     *Config
	def     *testDef
	cmds    []command
	clk     clock
	win     window
	claimed atomic.Int64 // requests claimed (request mode)
	total   int64        // requests to run (request mode; 0 = duration mode)
	setW    int          // MIXED weights
	getW    int
}

func runTest(ctx context.Context, cfg *Config, d *testDef) (Result, error) {
	t := newTest(cfg, d)
	conns, err := dialAll(ctx, cfg)
	defer closeAll(conns)
	if err != nil {
		return t.empty(), err
	}
	t.clk = clock{base: time.Now()}
	t.win = window{start: int64(cfg.Warmup), end: math.MaxInt64, stop: math.MaxInt64, n: 1}
	if cfg.Requests > 0 {
		t.total = cfg.Requests
	} else {
		t.win.end = t.win.start + int64(cfg.Duration)
		t.win.stop, t.win.d = t.win.end, int64(cfg.Duration)
	}
	res, err := t.run(ctx, conns)
	if err != nil {
		return t.empty(), err
	}
	return res[0], nil
}

func newTest(cfg *Config, d *testDef) *test {
	t := &test{cfg: cfg, def: d, cmds: d.commands(cfg)}
	t.setW, t.getW, _ = parseRatio(cfg.Ratio)
	return t
}

// empty is a result with the test's identity and no figures.
func (t *test) empty() Result {
	return Result{Test: t.def.name, Title: t.def.title, Clients: t.cfg.Clients, Pipeline: t.cfg.Pipeline, Rate: t.cfg.Rate}
}

func closeAll(conns []*conn) {
	for _, c := range conns {
		if c != nil {
			c.nc.Close()
		}
	}
}

// run drives conns from the test clock's zero (waiting for it when it
// lies ahead) until t.win.stop, or until t.total requests are measured,
// and returns one Result per measured interval. The connections stay open
// and, on success, have no reply outstanding: a Session runs its next
// windows on them.
func (t *test) run(ctx context.Context, conns []*conn) ([]Result, error) {
	cfg := t.cfg
	seed := cfg.Seed
	if seed == 0 {
		seed = time.Now().UnixNano()
	}
	for _, c := range conns {
		// A session's connections come from its last test: their batch
		// buffers hold that test's commands, and they are not idle.
		c.wbuf = c.wbuf[:0]
		c.idle.Store(false)
	}
	if !sleepUntil(ctx, t.clk, 0) {
		return nil, ctx.Err()
	}
	// The workers' context: ended by the caller, or by a worker's error
	// (failed), which also makes the watchdog close the connections. A
	// normal end closes neither.
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	failed := make(chan struct{})
	var failOnce sync.Once
	g := new(errgroup.Group)
	work := func(f func() error) {
		g.Go(func() error {
			err := f()
			if err != nil {
				failOnce.Do(func() { close(failed); cancel() })
			}
			return err
		})
	}

	// CPU time over each measured interval.
	n := max(t.win.n, 1)
	cpus := make([]time.Duration, n+1)
	cpuDone := make(chan struct{})
	go func() {
		defer close(cpuDone)
		for i := 0; i <= n; i++ {
			if t.total > 0 && i == n {
				return // request mode: read when the last request is done
			}
			if !sleepUntil(wctx, t.clk, t.win.start+int64(i)*t.win.d) {
				return
			}
			cpus[i] = processCPU()
		}
	}()

	stopWatch := make(chan struct{})
	watchDone := make(chan struct{})
	var watchErr atomic.Value
	go func() {
		defer close(watchDone)
		t.watchdog(ctx, failed, conns, stopWatch, &watchErr)
	}()

	all := make([]tally, 0, len(conns))
	var mu sync.Mutex
	collect := func(s tally) {
		mu.Lock()
		all = append(all, s)
		mu.Unlock()
	}
	rng := rand.New(rand.NewSource(seed))
	switch {
	case cfg.Rate > 0:
		// each sender sleeps its last stretch in the kernel (sleepUntil),
		// holding its thread: the readers need Ps of their own meanwhile
		if runtime.GOMAXPROCS(0) < openLoopProcs {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(openLoopProcs))
		}
		perConn := cfg.Rate / float64(len(conns))
		for i, c := range conns {
			s := newTally(n)
			collect(s)
			kg := t.newKeyGen(rng.Int63())
			phase := float64(i) / float64(len(conns)) / perConn
			quota := int64(0)
			if t.total > 0 {
				quota = t.total / int64(len(conns))
				if int64(i) < t.total%int64(len(conns)) {
					quota++
				}
			}
			work(func() error { return t.openLoop(wctx, c, s, kg, perConn, phase, quota) })
		}
	case cfg.Threads > 0 && cfg.Threads < len(conns):
		for w := 0; w < cfg.Threads; w++ {
			var mine []*conn
			for i := w; i < len(conns); i += cfg.Threads {
				mine = append(mine, conns[i])
			}
			s := newTally(n)
			collect(s)
			kgs := make([]*keyGen, len(mine))
			for i := range kgs {
				kgs[i] = t.newKeyGen(rng.Int63())
			}
			work(func() error { return t.lockStep(wctx, mine, s, kgs) })
		}
	default:
		for _, c := range conns {
			s := newTally(n)
			collect(s)
			kg := t.newKeyGen(rng.Int63())
			work(func() error { return t.closedLoop(wctx, c, s, kg) })
		}
	}
	err := g.Wait()
	endNs := t.clk.now()
	close(stopWatch)
	<-watchDone
	if t.total > 0 {
		cpus[n] = processCPU()
	}
	if err == nil {
		// The last bound is now or just past: let the CPU reader take
		// it before wctx ends (cancelled first, a late reader under -race
		// left the window's CPU at zero).
		<-cpuDone
	}
	cancel()
	<-cpuDone
	if err != nil {
		if werr, ok := watchErr.Load().(error); ok {
			err = werr
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	out := make([]Result, n)
	for i := range out {
		out[i] = t.empty()
		per := make([]*stats, len(all))
		for j, s := range all {
			per[j] = s[i]
		}
		var cpu time.Duration
		if cpus[i+1] > cpus[i] {
			cpu = cpus[i+1] - cpus[i]
		}
		if err := t.summarize(&out[i], per, endNs, cpu); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// dialAll opens the test's connections, 16 dials at a time, within the
// configured timeout. The connections opened are returned even on error,
// for the caller to close.
func dialAll(ctx context.Context, cfg *Config) ([]*conn, error) {
	conns := make([]*conn, cfg.Clients)
	dctx, cancelDial := context.WithTimeout(ctx, cfg.Timeout)
	defer cancelDial()
	dg, dgctx := errgroup.WithContext(dctx)
	dg.SetLimit(16)
	for i := range conns {
		dg.Go(func() error {
			c, err := dial(dgctx, cfg, i)
			if err != nil {
				return err
			}
			conns[i] = c
			return nil
		})
	}
	return conns, dg.Wait()
}

// summarize merges the connections' statistics into res: counts, the
// measured time (request mode: from the start of measurement to the last
// reply; endNs when none came), the rates, the generator's CPU time and
// peak RSS, the latency percentiles and the encoded histogram.
func (t *test) summarize(res *Result, all []*stats, endNs int64, cpu time.Duration) error {
	h := newHist()
	var lag *hdrhistogram.Histogram
	first, last := int64(math.MaxInt64), int64(0)
	var sent int64
	for _, s := range all {
		h.Merge(s.hist)
		if s.lag != nil {
			if lag == nil {
				lag = newHist()
			}
			lag.Merge(s.lag)
		}
		res.Requests += s.count
		res.Errors += s.errors
		res.Misses += s.misses
		sent += s.sent
		for _, m := range s.samples {
			if len(res.ErrorSamples) < maxSamples {
				res.ErrorSamples = append(res.ErrorSamples, m)
			}
		}
		first = min(first, s.first)
		last = max(last, s.last)
	}
	if t.total > 0 {
		// Request mode: from the start of measurement to the last reply.
		if last == 0 {
			last = endNs
		}
		res.Elapsed = time.Duration(last - t.win.start)
	} else {
		res.Elapsed = time.Duration(t.win.d)
	}
	if res.Elapsed > 0 {
		res.OpsPerSec = float64(res.Requests) / res.Elapsed.Seconds()
		if t.cfg.Rate > 0 {
			res.SentPerSec = float64(sent) / res.Elapsed.Seconds()
		}
	}
	if cpu > 0 {
		res.ClientCPU = cpu
	}
	res.ClientMaxRSS = maxRSS()
	if h.TotalCount() > 0 {
		ms := func(us int64) float64 { return float64(us) / 1000 }
		res.AvgMs = h.Mean() / 1000
		res.MinMs = ms(h.Min())
		res.P50Ms = ms(h.ValueAtQuantile(50))
		res.P95Ms = ms(h.ValueAtQuantile(95))
		res.P99Ms = ms(h.ValueAtQuantile(99))
		res.P999Ms = ms(h.ValueAtQuantile(99.9))
		res.MaxMs = ms(h.Max())
	}
	if lag != nil && lag.TotalCount() > 0 {
		res.SendLagP50Ms = float64(lag.ValueAtQuantile(50)) / 1000
		res.SendLagP99Ms = float64(lag.ValueAtQuantile(99)) / 1000
	}
	enc, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return fmt.Errorf("encoding histogram: %w", err)
	}
	res.Hist = string(enc)
	return nil
}

func sleepUntil(ctx context.Context, clk clock, t int64) bool {
	d := time.Duration(t - clk.now())
	if d <= 0 {
		return ctx.Err() == nil
	}
	if d > nanosleepFrom {
		tm := time.NewTimer(d - nanosleepFrom)
		select {
		case <-ctx.Done():
			tm.Stop()
			return false
		case <-tm.C:
		}
	}
	if d := time.Duration(t - clk.now()); d > 0 {
		unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0) // this thread's: 50 µs by default
		ts := unix.NsecToTimespec(int64(d))
		for unix.Nanosleep(&ts, &ts) == unix.EINTR {
		}
	}
	return ctx.Err() == nil
}

// nanosleepFrom is how long before its time an open-loop sender leaves
// Go's timers, which wake about 0.8 ms late here (the netpoller waits in
// milliseconds), for the kernel's nanosleep (tens of µs late with the
// thread's timer slack at 1 ns). Measured on this project's 2-vCPU VMs
// at 20,000 GET/s over 50 connections: send lag p50 0.43 → 0.04 ms,
// latency p50 0.49 → 0.09 ms (Result.SendLag* report it in every run).
const nanosleepFrom = 2 * time.Millisecond

// openLoopProcs is the fewest Ps an open-loop run gets (sleepUntil).
const openLoopProcs = 4

// dial connects and authenticates one connection.
func dial(ctx context.Context, cfg *Config, id int) (*conn, error) {
	network, addr := cfg.network()
	var d net.Dialer
	nc, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, fmt.Errorf("connection %d: %w", id, err)
	}
	if tc, ok := nc.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
	}
	if cfg.PathDelay > 0 {
		nc = &delayedConn{Conn: nc, d: cfg.PathDelay}
	}
	cc := &countingConn{Conn: nc}
	c := &conn{id: id, nc: nc, cc: cc, rd: resp.NewReader(cc, 64<<10)}
	if cfg.Password != "" {
		nc.SetDeadline(time.Now().Add(cfg.Timeout))
		if _, err := nc.Write(resp.AppendCommand(nil, "AUTH", cfg.Password)); err != nil {
			nc.Close()
			return nil, fmt.Errorf("connection %d: sending AUTH: %w", id, err)
		}
		var rep resp.Reply
		if err := c.rd.Next(&rep); err != nil {
			nc.Close()
			return nil, fmt.Errorf("connection %d: reading AUTH reply: %w", id, err)
		}
		if rep.Kind != resp.SimpleString {
			nc.Close()
			return nil, fmt.Errorf("connection %d: AUTH failed: %s", id, rep.Line)
		}
		nc.SetDeadline(time.Time{})
	}
	return c, nil
}

// delayedConn adds d to each round trip (Config.PathDelay): the first
// read after a write waits until d after that write. Connections written
// in lock step wait out their delays together, as on a slow path.
type delayedConn struct {
	net.Conn
	d       time.Duration
	due     time.Time
	pending bool
}

func (c *delayedConn) Write(p []byte) (int, error) {
	if !c.pending {
		c.due, c.pending = time.Now().Add(c.d), true
	}
	return c.Conn.Write(p)
}

func (c *delayedConn) Read(p []byte) (int, error) {
	if c.pending {
		time.Sleep(time.Until(c.due))
		c.pending = false
	}
	return c.Conn.Read(p)
}

// watchdog closes every connection when ctx ends or a worker failed, and fails a connection
// that waits longer than Timeout for a reply.
func (t *test) watchdog(ctx context.Context, failed <-chan struct{}, conns []*conn, stop chan struct{}, errOut *atomic.Value) {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	last := make([]uint64, len(conns))
	since := make([]time.Time, len(conns))
	now := time.Now()
	for i := range since {
		since[i] = now
	}
	for {
		select {
		case <-stop:
			return
		case <-failed:
			closeAll(conns)
			return
		case <-ctx.Done():
			closeAll(conns)
			return
		case now = <-tick.C:
		}
		for i, c := range conns {
			p := c.progress.Load()
			if p != last[i] || c.idle.Load() {
				last[i], since[i] = p, now
				continue
			}
			if now.Sub(since[i]) > t.cfg.Timeout {
				err := fmt.Errorf("connection %d: no reply within %s", c.id, t.cfg.Timeout)
				errOut.CompareAndSwap(nil, err)
				c.killed.CompareAndSwap(nil, err)
				c.nc.Close()
			}
		}
	}
}

func (c *conn) fail(op string, err error) error {
	if k, ok := c.killed.Load().(error); ok {
		return k
	}
	return fmt.Errorf("connection %d: %s: %w", c.id, op, err)
}

// keyGen draws key numbers and builds batches.
type keyGen struct {
	x       uint64 // splitmix64 state
	ks      uint64
	pattern int // 0 uniform, 1 gaussian, 2 zipf
	rng     *rand.Rand
	zipf    *rand.Zipf
	setW    uint64
	tot     uint64
}

func (t *test) newKeyGen(seed int64) *keyGen {
	k := &keyGen{x: uint64(seed), ks: uint64(t.cfg.Keyspace), setW: uint64(t.setW), tot: uint64(t.setW + t.getW)}
	if t.def.name == "MIXED" && t.cfg.Keyspace > 1 {
		switch t.cfg.KeyPattern {
		case "gaussian":
			k.pattern = 1
			k.rng = rand.New(rand.NewSource(seed))
		case "zipf":
			k.pattern = 2
			k.rng = rand.New(rand.NewSource(seed))
			k.zipf = rand.NewZipf(k.rng, 1.01, 1, uint64(t.cfg.Keyspace-1))
		}
	}
	return k
}

func (k *keyGen) next64() uint64 {
	k.x += 0x9e3779b97f4a7c15
	z := k.x
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

func (k *keyGen) key() uint64 {
	switch k.pattern {
	case 1:
		v := float64(k.ks)/2 + k.rng.NormFloat64()*float64(k.ks)/6
		if v < 0 {
			v = 0
		}
		if v >= float64(k.ks) {
			v = float64(k.ks - 1)
		}
		return uint64(v)
	case 2:
		return k.zipf.Uint64()
	}
	hi, _ := bits.Mul64(k.next64(), k.ks)
	return hi
}

// put12 writes v as 12 zero-padded digits (redis-benchmark's %012zu).
func put12(b []byte, v uint64) {
	_ = b[11]
	for i := 11; i >= 0; i-- {
		b[i] = byte('0' + v%10)
		v /= 10
	}
}

// batch fills c.wbuf with n commands and records which command each slot
// holds in kinds (MIXED only).
func (t *test) batch(c *conn, k *keyGen, n int, kinds []uint8) []byte {
	if len(t.cmds) == 1 {
		cmd := &t.cmds[0]
		l := len(cmd.buf)
		if len(c.wbuf) < n*l {
			c.wbuf = make([]byte, 0, n*l)
			for i := 0; i < n; i++ {
				c.wbuf = append(c.wbuf, cmd.buf...)
			}
		}
		if k.ks > 0 && len(cmd.rand) > 0 {
			for i := 0; i < n; i++ {
				base := c.wbuf[i*l : (i+1)*l]
				for _, off := range cmd.rand {
					put12(base[off:off+12], k.key())
				}
			}
		}
		return c.wbuf[:n*l]
	}
	// MIXED: choose per slot.
	b := c.wbuf[:0]
	for i := 0; i < n; i++ {
		which := uint8(1)
		if k.next64()%k.tot < k.setW {
			which = 0
		}
		kinds[i] = which
		cmd := &t.cmds[which]
		start := len(b)
		b = append(b, cmd.buf...)
		if k.ks > 0 {
			key := k.key()
			for _, off := range cmd.rand {
				put12(b[start+off:start+off+12], key)
			}
		}
	}
	c.wbuf = b
	return b
}

// checkReply validates one reply; it returns false for a wrong reply or
// an error reply and records a sample.
// replies reads the n replies of one batch that was written at sent, times
// each at the read that brought it in (at0 for those already buffered),
// and records those that fall in the measured window. The closed loop and
// the lock-step loop read their batches through it.
func (t *test) replies(c *conn, s tally, rep *resp.Reply, kinds []uint8, n int, sent, at0 int64, measuring bool) error {
	reads, at := c.cc.reads, at0
	for i := 0; i < n; i++ {
		if err := c.rd.Next(rep); err != nil {
			return c.fail("reading reply", err)
		}
		if c.cc.reads != reads {
			reads, at = c.cc.reads, t.clk.now()
		}
		ix := t.win.index(at)
		if ix < 0 || (t.total > 0 && !measuring) {
			continue
		}
		t.record(s[ix], rep, t.checkOf(kinds[i]), sent, at)
	}
	return nil
}

// checkOf is the check for a reply to command kind (MIXED has two; every
// other test one).
func (t *test) checkOf(kind uint8) *check {
	if len(t.cmds) > 1 {
		return &t.cmds[kind].check
	}
	return &t.cmds[0].check
}

// record counts one reply of the measured window: it checks it against ck
// and records its latency, from sent (closed loop: when its batch was
// written; open loop: its intended send time) to at, when it was read. The
// closed loop, the lock-step loop and the open loop all record through it.
func (t *test) record(s *stats, rep *resp.Reply, ck *check, sent, at int64) {
	s.count++
	t.checkReply(s, rep, ck)
	s.hist.RecordValue(min(max((at-sent)/1000, histMin), histMax))
	s.first = min(s.first, sent)
	s.last = max(s.last, at)
}

func (t *test) checkReply(s *stats, rep *resp.Reply, ck *check) {
	if rep.Kind == ck.kind {
		switch ck.kind {
		case resp.SimpleString:
			if ck.line == "" || string(rep.Line) == ck.line {
				return
			}
		case resp.Integer:
			return
		case resp.BulkString, resp.Array:
			if rep.N < 0 {
				if ck.nilOK {
					s.misses++
					return
				}
			} else if ck.n < 0 || rep.N == ck.n || (ck.alt >= 0 && rep.N == ck.alt) {
				return
			}
		}
	}
	s.errors++
	if len(s.samples) >= maxSamples {
		return
	}
	if rep.Kind == resp.Error {
		s.sample(fmt.Sprintf("%s: error reply: %s", t.def.name, rep.Line))
		return
	}
	s.sample(fmt.Sprintf("%s: unexpected reply %s, want %s", t.def.name, describe(rep), describeCheck(ck)))
}

func describe(rep *resp.Reply) string {
	switch rep.Kind {
	case resp.SimpleString, resp.Double, resp.BigNumber, resp.Boolean:
		return fmt.Sprintf("%q (%c)", rep.Line, rep.Kind)
	case resp.Integer:
		return fmt.Sprintf("integer %d", rep.N)
	case resp.BulkString:
		if rep.N < 0 {
			return "nil bulk string"
		}
		return fmt.Sprintf("bulk string of %d bytes", rep.N)
	case resp.Array:
		if rep.N < 0 {
			return "nil array"
		}
		return fmt.Sprintf("array of %d elements", rep.N)
	}
	return fmt.Sprintf("reply type %q", byte(rep.Kind))
}

func describeCheck(ck *check) string {
	switch ck.kind {
	case resp.SimpleString:
		return fmt.Sprintf("%q", ck.line)
	case resp.Integer:
		return "an integer"
	case resp.BulkString:
		if ck.n >= 0 {
			return fmt.Sprintf("a bulk string of %d bytes", ck.n)
		}
		return "a bulk string"
	case resp.Array:
		if ck.alt >= 0 {
			return fmt.Sprintf("an array of %d or %d elements", ck.n, ck.alt)
		}
		return fmt.Sprintf("an array of %d elements", ck.n)
	}
	return string(rune(ck.kind))
}

// claim returns how many requests the next batch may send (request mode).
func (t *test) claim(p int) int {
	if t.total == 0 {
		return p
	}
	end := t.claimed.Add(int64(p))
	if over := end - t.total; over > 0 {
		n := int64(p) - over
		if n <= 0 {
			return 0
		}
		return int(n)
	}
	return p
}

// closedLoop drives one connection: send a batch of Pipeline commands,
// read every reply, repeat.
func (t *test) closedLoop(ctx context.Context, c *conn, s tally, k *keyGen) error {
	defer c.idle.Store(true)
	p := t.cfg.Pipeline
	kinds := make([]uint8, p)
	var rep resp.Reply
	measuring := false
	for {
		now := t.clk.now()
		if now >= t.win.stop || ctx.Err() != nil {
			return nil
		}
		n := p
		if !measuring && now >= t.win.start {
			measuring = true
		}
		if measuring {
			n = t.claim(p)
			if n == 0 {
				return nil
			}
		}
		buf := t.batch(c, k, n, kinds)
		sent := t.clk.now()
		if _, err := c.nc.Write(buf); err != nil {
			return c.fail("writing", err)
		}
		if err := t.replies(c, s, &rep, kinds, n, sent, sent, measuring); err != nil {
			return err
		}
		c.progress.Add(1)
	}
}

// lockStep drives several connections from one goroutine: write every
// connection's batch, then read every connection's replies.
func (t *test) lockStep(ctx context.Context, conns []*conn, s tally, kgs []*keyGen) error {
	defer func() {
		for _, c := range conns {
			c.idle.Store(true)
		}
	}()
	p := t.cfg.Pipeline
	kinds := make([][]uint8, len(conns))
	ns := make([]int, len(conns))
	sent := make([]int64, len(conns))
	for i := range kinds {
		kinds[i] = make([]uint8, p)
	}
	var rep resp.Reply
	measuring := false
	for {
		now := t.clk.now()
		if now >= t.win.stop || ctx.Err() != nil {
			return nil
		}
		if !measuring && now >= t.win.start {
			measuring = true
		}
		active := 0
		for i, c := range conns {
			n := p
			if measuring {
				n = t.claim(p)
			}
			ns[i] = n
			if n == 0 {
				continue
			}
			active++
			buf := t.batch(c, kgs[i], n, kinds[i])
			sent[i] = t.clk.now()
			if _, err := c.nc.Write(buf); err != nil {
				return c.fail("writing", err)
			}
		}
		if active == 0 {
			return nil
		}
		for ci, c := range conns {
			if err := t.replies(c, s, &rep, kinds[ci], ns[ci], sent[ci], t.clk.now(), measuring); err != nil {
				return err
			}
			c.progress.Add(1)
		}
	}
}

// openLoop sends at a fixed rate on one connection, independent of
// replies, and measures each reply's latency from its intended send time.
func (t *test) openLoop(ctx context.Context, c *conn, s tally, k *keyGen, rate, phase float64, quota int64) error {
	interval := float64(time.Second) / rate
	start := int64(phase * float64(time.Second))
	queue := make(chan int64, 1<<14) // intended send times, in order
	kinds := make(chan uint8, 1<<14) // MIXED: which command
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		defer close(queue)
		var one [1]uint8
		var buf []byte
		measured := int64(0) // requests sent with an intended time in the window
		due := make([]int64, 0, 256)
		for i := int64(0); ; {
			if quota > 0 && measured >= quota {
				return nil
			}
			next := start + int64(float64(i)*interval)
			if next >= t.win.stop || ctx.Err() != nil {
				return nil
			}
			if !sleepUntil(ctx, t.clk, next) {
				return nil
			}
			now := t.clk.now()
			buf = buf[:0]
			due = due[:0]
			// Send everything that is due now in one write.
			for ; next <= now && next < t.win.stop && (quota == 0 || measured < quota) && len(due) < 256; i++ {
				b := t.batch(c, k, 1, one[:])
				buf = append(buf, b...)
				due = append(due, next)
				if t.win.in(next) {
					measured++
				}
				if len(t.cmds) > 1 {
					select {
					case kinds <- one[0]:
					case <-ctx.Done():
						return nil
					}
				}
				next = start + int64(float64(i+1)*interval)
			}
			for _, d := range due {
				select {
				case queue <- d:
				case <-ctx.Done():
					return nil
				}
			}
			if _, err := c.nc.Write(buf); err != nil {
				return c.fail("writing", err)
			}
			wrote := t.clk.now()
			if ix := t.win.index(wrote); ix >= 0 {
				s[ix].sent += int64(len(due))
			}
			for _, d := range due {
				if ix := t.win.index(d); ix >= 0 {
					if s[ix].lag == nil {
						s[ix].lag = newHist()
					}
					s[ix].lag.RecordValue(max(1, (wrote-d)/1000))
				}
			}
		}
	})
	g.Go(func() error {
		defer c.idle.Store(true)
		var rep resp.Reply
		for {
			c.idle.Store(true)
			var intended int64
			var ok bool
			select {
			case intended, ok = <-queue:
			case <-ctx.Done():
				return nil
			}
			if !ok {
				return nil
			}
			c.idle.Store(false)
			if err := c.rd.Next(&rep); err != nil {
				return c.fail("reading reply", err)
			}
			at := t.clk.now()
			c.progress.Add(1)
			var kind uint8
			if len(t.cmds) > 1 {
				kind = <-kinds
			}
			ix := t.win.index(intended)
			if ix < 0 {
				continue
			}
			t.record(s[ix], &rep, t.checkOf(kind), intended, at)
		}
	})
	err := g.Wait()
	if err != nil && errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}
