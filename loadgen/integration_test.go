package loadgen

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestServerEffects runs every test and checks what it did on the server.
func TestServerEffects(t *testing.T) {
	s := startRedis(t)
	rc := s.client(t, "")
	ctx := context.Background()
	const n = 2000
	base := Config{Addr: s.Addr, Clients: 4, Pipeline: 3, Requests: n, DataSize: 7}
	cfgFor := func(test string, mod func(*Config)) Config {
		c := base
		c.Tests = []string{test}
		if mod != nil {
			mod(&c)
		}
		return c
	}
	noErr := func(r Result) {
		t.Helper()
		if r.Errors != 0 || r.Requests != n {
			t.Errorf("%s: requests %d errors %d (%v), want %d and 0", r.Test, r.Requests, r.Errors, r.ErrorSamples, n)
		}
		if r.OpsPerSec <= 0 || r.P50Ms <= 0 || r.MaxMs < r.P99Ms || r.P99Ms < r.P50Ms || r.Hist == "" {
			t.Errorf("%s: implausible figures %+v", r.Test, r)
		}
		h, err := DecodeHist(r.Hist)
		if err != nil || h.TotalCount() != r.Requests {
			t.Errorf("%s: histogram holds %v values (err %v), want %d", r.Test, h.TotalCount(), err, r.Requests)
		}
	}
	intOf := func(v int64, err error) int64 {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}

	for _, p := range []string{"PING_INLINE", "PING_MBULK"} {
		noErr(runOne(t, cfgFor(p, nil)))
	}

	// SET without -r writes redis-benchmark's literal key; GET reads it back.
	noErr(runOne(t, cfgFor("SET", nil)))
	if v, err := rc.Get(ctx, "key:__rand_int__").Result(); err != nil || v != strings.Repeat("x", 7) {
		t.Errorf("after SET: key:__rand_int__ = %q, %v; want 7 x", v, err)
	}
	r := runOne(t, cfgFor("GET", nil))
	noErr(r)
	if r.Misses != 0 {
		t.Errorf("GET: %d misses, want 0", r.Misses)
	}
	// A GET returning the wrong length is an error, never a success.
	r = runOne(t, cfgFor("GET", func(c *Config) { c.DataSize = 5 }))
	if r.Errors != n || len(r.ErrorSamples) == 0 || !strings.Contains(r.ErrorSamples[0], "bulk string of 7 bytes") {
		t.Errorf("GET with wrong length: errors %d samples %q, want %d errors naming the 7-byte reply", r.Errors, r.ErrorSamples, n)
	}

	// SET with -r patches 12-digit keys within the keyspace.
	rc.FlushAll(ctx)
	noErr(runOne(t, cfgFor("SET", func(c *Config) { c.Keyspace = 50 })))
	keys, _ := rc.Keys(ctx, "*").Result()
	re := regexp.MustCompile(`^key:0000000000[0-4][0-9]$`)
	if len(keys) < 40 || len(keys) > 50 {
		t.Errorf("SET -r 50 made %d keys, want 40..50", len(keys))
	}
	for _, k := range keys {
		if !re.MatchString(k) {
			t.Errorf("SET -r 50 made key %q, want key:0000000000NN below 50", k)
		}
	}

	noErr(runOne(t, cfgFor("INCR", nil)))
	if v := intOf(rc.Get(ctx, "counter:__rand_int__").Int64()); v != n {
		t.Errorf("INCR ran %d times but counter is %d", n, v)
	}

	rc.Del(ctx, "mylist")
	noErr(runOne(t, cfgFor("LPUSH", nil)))
	noErr(runOne(t, cfgFor("RPUSH", nil)))
	if l := intOf(rc.LLen(ctx, "mylist").Result()); l != 2*n {
		t.Errorf("LPUSH+RPUSH: LLEN mylist = %d, want %d", l, 2*n)
	}
	noErr(runOne(t, cfgFor("LPOP", nil)))
	r = runOne(t, cfgFor("RPOP", nil))
	noErr(r)
	if l := intOf(rc.LLen(ctx, "mylist").Result()); l != 0 || r.Misses != 0 {
		t.Errorf("LPOP+RPOP: LLEN mylist = %d, misses %d; want 0, 0", l, r.Misses)
	}

	noErr(runOne(t, cfgFor("SADD", func(c *Config) { c.Keyspace = 1000 })))
	card := intOf(rc.SCard(ctx, "myset").Result())
	if card < 800 || card > 1000 {
		t.Errorf("SADD -r 1000: SCARD myset = %d, want 800..1000", card)
	}
	r = runOne(t, cfgFor("SPOP", nil))
	if r.Errors != 0 || r.Misses != n-card {
		t.Errorf("SPOP: errors %d misses %d, want 0 and %d", r.Errors, r.Misses, n-card)
	}
	if c := intOf(rc.SCard(ctx, "myset").Result()); c != 0 {
		t.Errorf("SPOP: SCARD myset = %d after %d pops, want 0", c, n)
	}

	noErr(runOne(t, cfgFor("HSET", func(c *Config) { c.Keyspace = 100000 })))
	if l := intOf(rc.HLen(ctx, "myhash").Result()); l < n-100 {
		t.Errorf("HSET: HLEN myhash = %d, want about %d", l, n)
	}

	noErr(runOne(t, cfgFor("ZADD", func(c *Config) { c.Keyspace = 100000 })))
	zc := intOf(rc.ZCard(ctx, "myzset").Result())
	if zc < n-100 {
		t.Errorf("ZADD: ZCARD myzset = %d, want about %d", zc, n)
	}
	r = runOne(t, cfgFor("ZPOPMIN", nil))
	if r.Errors != 0 {
		t.Errorf("ZPOPMIN: %d errors %q", r.Errors, r.ErrorSamples)
	}
	if c := intOf(rc.ZCard(ctx, "myzset").Result()); c != 0 {
		t.Errorf("ZPOPMIN: ZCARD myzset = %d after %d pops of %d, want 0", c, n, zc)
	}

	// LRANGE tests prepare the list themselves and check element counts.
	rc.Del(ctx, "mylist")
	for _, lt := range []string{"LRANGE_100", "LRANGE_300", "LRANGE_500", "LRANGE_600"} {
		noErr(runOne(t, cfgFor(lt, nil)))
	}
	noErr(runOne(t, cfgFor(lpushForLRANGE, nil)))

	// MSET sets 10 keys per command.
	rc.FlushAll(ctx)
	r = runOne(t, Config{Addr: s.Addr, Clients: 1, Requests: 1, Keyspace: 1 << 40, Tests: []string{"mset"}})
	if r.Errors != 0 {
		t.Errorf("MSET: %v", r.ErrorSamples)
	}
	if k := intOf(rc.DBSize(ctx).Result()); k != 10 {
		t.Errorf("one MSET made %d keys, want 10", k)
	}

	noErr(runOne(t, cfgFor("XADD", nil)))
	if l := intOf(rc.XLen(ctx, "mystream").Result()); l != n {
		t.Errorf("XADD: XLEN mystream = %d, want %d", l, n)
	}

	// MIXED: sets and gets in the given ratio, zipf keys.
	rc.FlushAll(ctx)
	rc.ConfigResetStat(ctx)
	const m = 22000
	r = runOne(t, Config{Addr: s.Addr, Clients: 4, Pipeline: 4, Requests: m, Keyspace: 10000, Tests: []string{"MIXED"}, Ratio: "1:10", KeyPattern: "zipf"})
	if r.Errors != 0 || r.Requests != m {
		t.Errorf("MIXED: requests %d errors %d %q", r.Requests, r.Errors, r.ErrorSamples)
	}
	sets, gets := cmdCalls(t, rc, "set"), cmdCalls(t, rc, "get")
	if sets+gets != m || gets < 8*sets || gets > 12*sets {
		t.Errorf("MIXED 1:10 sent %d SET and %d GET, want %d in all at about 1:10", sets, gets, m)
	}
	// Zipf: the most popular key is far more popular than under uniform.
	if k := intOf(rc.DBSize(ctx).Result()); k > 1500 {
		t.Errorf("MIXED zipf over 10000 keys touched %d distinct keys with ~2000 SETs; want a skewed (smaller) set", k)
	}
}

func cmdCalls(t *testing.T, rc interface {
	Info(context.Context, ...string) *redis.StringCmd
}, cmd string) int64 {
	t.Helper()
	info, err := rc.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(info, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_"+cmd+":calls="); ok {
			v, _, _ := strings.Cut(rest, ",")
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	return 0
}

// TestErrorsCounted: a command against a key of the wrong type is an
// error reply, counted and sampled, never a success.
func TestErrorsCounted(t *testing.T) {
	s := startRedis(t)
	rc := s.client(t, "")
	rc.Set(context.Background(), "myset", "a string", 0)
	r := runOne(t, Config{Socket: s.Socket, Clients: 2, Requests: 500, Tests: []string{"SADD"}})
	if r.Errors != 500 || len(r.ErrorSamples) == 0 || !strings.Contains(r.ErrorSamples[0], "WRONGTYPE") {
		t.Errorf("SADD on a string: errors %d samples %q, want 500 WRONGTYPE errors", r.Errors, r.ErrorSamples)
	}
	// LRANGE_600 against a list of 10 elements: every reply is wrong.
	rc.RPush(context.Background(), "short", "a")
	cfg := Config{Addr: s.Addr, Clients: 2, Requests: 100}
	cfg.setDefaults()
	d, _ := lookupTest("LRANGE_600")
	rc.Del(context.Background(), "mylist")
	rc.RPush(context.Background(), "mylist", 1, 2, 3, 4, 5, 6, 7, 8, 9, 10)
	r, err := runTest(context.Background(), &cfg, d)
	if err != nil {
		t.Fatal(err)
	}
	if r.Errors != 100 || len(r.ErrorSamples) == 0 || !strings.Contains(r.ErrorSamples[0], "array of 10 elements, want an array of 600") {
		t.Errorf("LRANGE_600 on 10 elements: errors %d samples %q", r.Errors, r.ErrorSamples)
	}
}

func TestPassword(t *testing.T) {
	s := startRedis(t, "--requirepass", "sesame")
	_, err := Run(context.Background(), Config{Addr: s.Addr, Clients: 2, Requests: 10, Tests: []string{"PING"}, Password: "wrong"})
	if err == nil || !strings.Contains(err.Error(), "WRONGPASS") {
		t.Errorf("wrong password: err = %v, want a WRONGPASS error", err)
	}
	_, err = Run(context.Background(), Config{Addr: s.Addr, Clients: 2, Requests: 10, Tests: []string{"SET"}})
	if err == nil || !strings.Contains(err.Error(), "NOAUTH") {
		t.Errorf("no password: err = %v, want a NOAUTH error", err)
	}
	res, err := Run(context.Background(), Config{Addr: s.Addr, Clients: 2, Requests: 10, Tests: []string{"ping"}, Password: "sesame"})
	if err != nil || len(res) != 2 || res[0].Errors+res[1].Errors != 0 {
		t.Errorf("right password: %v %+v", err, res)
	}
}

// TestLockStep runs the multiplexing worker mode.
func TestLockStep(t *testing.T) {
	s := startRedis(t)
	r := runOne(t, Config{Addr: s.Addr, Clients: 8, Threads: 2, Pipeline: 5, Requests: 10003, Tests: []string{"INCR"}})
	if r.Errors != 0 || r.Requests != 10003 {
		t.Errorf("threads=2: requests %d errors %d", r.Requests, r.Errors)
	}
	if v, _ := s.client(t, "").Get(context.Background(), "counter:__rand_int__").Int64(); v != 10003 {
		t.Errorf("threads=2: counter = %d, want 10003", v)
	}
}

// TestDurationWarmup: duration mode measures only the window.
func TestDurationWarmup(t *testing.T) {
	s := startRedis(t)
	rc := s.client(t, "")
	start := time.Now()
	r := runOne(t, Config{Addr: s.Addr, Clients: 10, Pipeline: 4, Duration: 700 * time.Millisecond, Warmup: 300 * time.Millisecond, Tests: []string{"INCR"}})
	took := time.Since(start)
	if r.Elapsed != 700*time.Millisecond || took < time.Second || took > 3*time.Second {
		t.Errorf("elapsed %v, wall %v; want 700ms measured in about 1s", r.Elapsed, took)
	}
	total, _ := rc.Get(context.Background(), "counter:__rand_int__").Int64()
	if r.Requests <= 0 || r.Requests >= total || r.Errors != 0 {
		t.Errorf("measured %d requests of %d sent (errors %d): warmup must be excluded", r.Requests, total, r.Errors)
	}
	if r.ClientCPU <= 0 || r.ClientCPU > 2*700*time.Millisecond || r.ClientMaxRSS <= 0 {
		t.Errorf("client CPU %v, max RSS %d: implausible", r.ClientCPU, r.ClientMaxRSS)
	}
}

// TestRateHeld: the open loop holds its arrival rate within 1%.
func TestRateHeld(t *testing.T) {
	s := startRedis(t)
	rc := s.client(t, "")
	rc.ConfigResetStat(context.Background())
	// Server-side arrivals over 1.5 s in the middle of the run.
	arrivals := make(chan int64, 1)
	go func() {
		time.Sleep(500 * time.Millisecond)
		sample := func() (int64, time.Time) { // count, at the middle of the INFO call
			a := time.Now()
			n := cmdCalls(t, rc, "set")
			return n, a.Add(time.Since(a) / 2)
		}
		n0, t0 := sample()
		time.Sleep(1500 * time.Millisecond)
		n1, t1 := sample()
		arrivals <- int64(float64(n1-n0) / t1.Sub(t0).Seconds())
	}()
	r := runOne(t, Config{Addr: s.Addr, Clients: 10, Rate: 2000, Duration: 2500 * time.Millisecond, Warmup: 200 * time.Millisecond, Tests: []string{"SET"}})
	server := <-arrivals
	t.Logf("rate 2000/s: sent %.1f/s, completed %.1f/s (%d requests), server saw %d/s; p50 %.3f ms p99 %.3f ms",
		r.SentPerSec, r.OpsPerSec, r.Requests, server, r.P50Ms, r.P99Ms)
	if ratio := r.SentPerSec / 2000; ratio < 0.99 || ratio > 1.01 || r.Errors != 0 {
		t.Errorf("rate 2000/s: sent %.1f/s (ratio %.4f, errors %d), want within 1%%", r.SentPerSec, ratio, r.Errors)
	}
	if ratio := r.OpsPerSec / 2000; ratio < 0.99 || ratio > 1.01 {
		t.Errorf("rate 2000/s: completed %.1f/s, want within 1%%", r.OpsPerSec)
	}
	// The server-side sample depends on this test's own timing on a
	// shared machine: 5%.
	if ratio := float64(server) / 2000; ratio < 0.95 || ratio > 1.05 {
		t.Errorf("rate 2000/s: server counted %d SET/s, want 2000 within 5%%", server)
	}
	// Request mode with a rate sends exactly the requests asked for.
	r = runOne(t, Config{Socket: s.Socket, Clients: 3, Rate: 5000, Requests: 1000, Tests: []string{"GET"}})
	if r.Requests != 1000 || r.Elapsed < 180*time.Millisecond || r.Elapsed > 400*time.Millisecond {
		t.Errorf("1000 requests at 5000/s: got %d in %v, want 1000 in about 200ms", r.Requests, r.Elapsed)
	}
}

// TestCoordinatedOmission: a 0.5 s server stall shows in the open loop's
// p99 (latency from intended send time), while a closed loop hides it.
func TestCoordinatedOmission(t *testing.T) {
	s := startRedis(t)
	rc := s.client(t, "")
	stall := func() {
		time.Sleep(800 * time.Millisecond)
		if err := rc.Do(context.Background(), "DEBUG", "SLEEP", "0.5").Err(); err != nil {
			t.Errorf("DEBUG SLEEP: %v", err)
		}
	}
	go stall()
	open := runOne(t, Config{Addr: s.Addr, Clients: 10, Rate: 2000, Duration: 2 * time.Second, Tests: []string{"GET"}})
	go stall()
	closed := runOne(t, Config{Addr: s.Addr, Clients: 10, Duration: 2 * time.Second, Tests: []string{"GET"}})
	t.Logf("open loop: p50 %.3f p99 %.3f max %.3f ms; closed loop: p50 %.3f p99 %.3f max %.3f ms (%d requests)",
		open.P50Ms, open.P99Ms, open.MaxMs, closed.P50Ms, closed.P99Ms, closed.MaxMs, closed.Requests)
	if open.P99Ms < 300 || open.MaxMs < 450 || open.MaxMs > 1000 {
		t.Errorf("open loop with a 500ms stall: p99 %.1f ms max %.1f ms, want p99 ≥ 300 and max ≈ 500", open.P99Ms, open.MaxMs)
	}
	if closed.MaxMs < 450 {
		t.Errorf("closed loop with a 500ms stall: max %.1f ms, want ≥ 450", closed.MaxMs)
	}
	if closed.P99Ms > open.P99Ms/3 {
		t.Errorf("closed loop p99 %.1f ms should hide the stall (open loop p99 %.1f ms)", closed.P99Ms, open.P99Ms)
	}
}

// TestServerKilled: a server that dies mid-run ends Run with an error.
func TestServerKilled(t *testing.T) {
	s := startRedis(t)
	go func() {
		time.Sleep(300 * time.Millisecond)
		s.cmd.Process.Kill()
	}()
	start := time.Now()
	_, err := Run(context.Background(), Config{Addr: s.Addr, Clients: 10, Duration: 10 * time.Second, Tests: []string{"SET"}})
	if err == nil {
		t.Fatal("Run against a killed server returned no error")
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("Run took %v to notice the killed server", d)
	}
	t.Logf("killed server: %v", err)
}

// TestServerHung: a server that stops answering fails after Timeout;
// cancelling the context ends a run promptly.
func TestServerHung(t *testing.T) {
	s := startRedis(t)
	go func() {
		time.Sleep(200 * time.Millisecond)
		s.cmd.Process.Signal(syscall.SIGSTOP)
	}()
	defer s.cmd.Process.Signal(syscall.SIGCONT)
	start := time.Now()
	_, err := Run(context.Background(), Config{Addr: s.Addr, Clients: 5, Duration: 10 * time.Second, Timeout: 500 * time.Millisecond, Tests: []string{"SET"}})
	if err == nil || !strings.Contains(err.Error(), "no reply within 500ms") || time.Since(start) > 3*time.Second {
		t.Errorf("hung server: err = %v after %v, want a no-reply error within ~1s", err, time.Since(start))
	}

	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start = time.Now()
	s.cmd.Process.Signal(syscall.SIGCONT)
	go func() {
		time.Sleep(100 * time.Millisecond)
		s.cmd.Process.Signal(syscall.SIGSTOP)
	}()
	_, err = Run(ctx, Config{Addr: s.Addr, Clients: 5, Duration: 10 * time.Second, Tests: []string{"GET"}})
	if err == nil || time.Since(start) > 2*time.Second {
		t.Errorf("cancelled run: err = %v after %v, want an error within ~300ms", err, time.Since(start))
	}
}
