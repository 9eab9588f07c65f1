package loadgen

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/redis-variants/redis-variants/loadgen/resp"
)

// randPlaceholder is redis-benchmark's key placeholder; with a keyspace
// (-r) every occurrence is replaced in place by a 12-digit random number.
const randPlaceholder = "__rand_int__"

// check describes the valid replies to one command.
type check struct {
	kind  resp.Kind
	line  string // expected text of a simple string ("" = any)
	n     int64  // expected bulk length / array count (-1 = any)
	alt   int64  // another accepted array count (-1 = none)
	nilOK bool   // a nil reply is valid (counted as a miss)
}

// command is one pre-encoded command and where its placeholders are.
type command struct {
	buf   []byte
	rand  []int // offsets of randPlaceholder in buf
	check check
}

func newCommand(c check, inline bool, args ...string) command {
	var buf []byte
	if inline {
		buf = resp.AppendInline(nil, args...)
	} else {
		buf = resp.AppendCommand(nil, args...)
	}
	cmd := command{buf: buf, check: c}
	for off := 0; ; {
		i := strings.Index(string(buf[off:]), randPlaceholder)
		if i < 0 {
			break
		}
		cmd.rand = append(cmd.rand, off+i)
		off += i + len(randPlaceholder)
	}
	return cmd
}

// testDef is one benchmark test.
type testDef struct {
	name   string // canonical name used in Config.Tests and Result.Test
	title  string // redis-benchmark's title (its CSV "test" column)
	lrange int    // elements an LRANGE test reads (0 = not an LRANGE test)
	// commands builds the test's commands; MIXED returns SET then GET.
	commands func(cfg *Config) []command
}

func anyInt() check { return check{kind: resp.Integer, n: -1, alt: -1} }
func ok(s string) check {
	return check{kind: resp.SimpleString, line: s, n: -1, alt: -1}
}
func bulk(n int64, nilOK bool) check {
	return check{kind: resp.BulkString, n: n, alt: -1, nilOK: nilOK}
}
func array(n, alt int64) check { return check{kind: resp.Array, n: n, alt: alt} }

func data(cfg *Config) string { return strings.Repeat("x", cfg.DataSize) }

func lrangeTest(n int, last int) testDef {
	name := "LRANGE_" + strconv.Itoa(n)
	return testDef{
		name:   name,
		title:  fmt.Sprintf("%s (first %d elements)", name, last+1),
		lrange: last + 1,
		commands: func(cfg *Config) []command {
			return []command{newCommand(array(int64(last+1), -1), false, "LRANGE", "mylist", "0", strconv.Itoa(last))}
		},
	}
}

// lpushForLRANGE is redis-benchmark's preparation test for LRANGE_*.
// LPushForLRANGE is the LPUSH pass redis-benchmark (and -t here) runs before LRANGE tests.
const LPushForLRANGE = lpushForLRANGE

const lpushForLRANGE = "LPUSH (needed to benchmark LRANGE)"

// testDefs lists the tests in redis-benchmark's order, MIXED last.
var testDefs = []testDef{
	{name: "PING_INLINE", title: "PING_INLINE", commands: func(*Config) []command {
		return []command{newCommand(ok("PONG"), true, "PING")}
	}},
	{name: "PING_MBULK", title: "PING_MBULK", commands: func(*Config) []command {
		return []command{newCommand(ok("PONG"), false, "PING")}
	}},
	{name: "SET", title: "SET", commands: func(cfg *Config) []command {
		return []command{newCommand(ok("OK"), false, "SET", "key:"+randPlaceholder, data(cfg))}
	}},
	{name: "GET", title: "GET", commands: func(cfg *Config) []command {
		return []command{newCommand(bulk(int64(cfg.DataSize), true), false, "GET", "key:"+randPlaceholder)}
	}},
	{name: "INCR", title: "INCR", commands: func(*Config) []command {
		return []command{newCommand(anyInt(), false, "INCR", "counter:"+randPlaceholder)}
	}},
	{name: "LPUSH", title: "LPUSH", commands: func(cfg *Config) []command {
		return []command{newCommand(anyInt(), false, "LPUSH", "mylist", data(cfg))}
	}},
	{name: "RPUSH", title: "RPUSH", commands: func(cfg *Config) []command {
		return []command{newCommand(anyInt(), false, "RPUSH", "mylist", data(cfg))}
	}},
	{name: "LPOP", title: "LPOP", commands: func(*Config) []command {
		return []command{newCommand(bulk(-1, true), false, "LPOP", "mylist")}
	}},
	{name: "RPOP", title: "RPOP", commands: func(*Config) []command {
		return []command{newCommand(bulk(-1, true), false, "RPOP", "mylist")}
	}},
	{name: "SADD", title: "SADD", commands: func(*Config) []command {
		return []command{newCommand(anyInt(), false, "SADD", "myset", "element:"+randPlaceholder)}
	}},
	{name: "HSET", title: "HSET", commands: func(cfg *Config) []command {
		return []command{newCommand(anyInt(), false, "HSET", "myhash", "element:"+randPlaceholder, data(cfg))}
	}},
	{name: "SPOP", title: "SPOP", commands: func(*Config) []command {
		return []command{newCommand(bulk(-1, true), false, "SPOP", "myset")}
	}},
	{name: "ZADD", title: "ZADD", commands: func(cfg *Config) []command {
		score := "0"
		if cfg.Keyspace > 0 {
			score = randPlaceholder
		}
		return []command{newCommand(anyInt(), false, "ZADD", "myzset", score, "element:"+randPlaceholder)}
	}},
	{name: "ZPOPMIN", title: "ZPOPMIN", commands: func(*Config) []command {
		return []command{newCommand(array(0, 2), false, "ZPOPMIN", "myzset")}
	}},
	{name: lpushForLRANGE, title: lpushForLRANGE, commands: func(cfg *Config) []command {
		return []command{newCommand(anyInt(), false, "LPUSH", "mylist", data(cfg))}
	}},
	lrangeTest(100, 99),
	lrangeTest(300, 299),
	lrangeTest(500, 499),
	lrangeTest(600, 599),
	{name: "MSET", title: "MSET (10 keys)", commands: func(cfg *Config) []command {
		args := []string{"MSET"}
		for i := 0; i < 10; i++ {
			args = append(args, "key:"+randPlaceholder, data(cfg))
		}
		return []command{newCommand(ok("OK"), false, args...)}
	}},
	{name: "XADD", title: "XADD", commands: func(cfg *Config) []command {
		return []command{newCommand(bulk(-1, false), false, "XADD", "mystream", "*", "myfield", data(cfg))}
	}},
	{name: "MIXED", title: "MIXED", commands: func(cfg *Config) []command {
		return []command{
			newCommand(ok("OK"), false, "SET", "key:"+randPlaceholder, data(cfg)),
			newCommand(bulk(int64(cfg.DataSize), true), false, "GET", "key:"+randPlaceholder),
		}
	}},
}

// Tests returns every supported test name, in redis-benchmark's order.
func Tests() []string {
	out := make([]string, len(testDefs))
	for i, d := range testDefs {
		out[i] = d.name
	}
	return out
}

// DefaultTests returns the tests redis-benchmark runs without -t.
func DefaultTests() []string {
	out := Tests()
	return out[:len(out)-1] // all but MIXED
}

func lookupTest(name string) (*testDef, bool) {
	for i := range testDefs {
		d := &testDefs[i]
		if strings.EqualFold(name, d.name) || strings.EqualFold(name, d.title) {
			return d, true
		}
	}
	return nil, false
}

// ParseTests parses a -t value the way redis-benchmark does: comma
// separated, case-insensitive; "ping" selects both pings, "lrange" every
// LRANGE_*, and any LRANGE selection adds "LPUSH (needed to benchmark
// LRANGE)". The result is in redis-benchmark's order. "" selects
// DefaultTests.
func ParseTests(s string) ([]string, error) {
	if strings.TrimSpace(s) == "" {
		return DefaultTests(), nil
	}
	sel := map[string]bool{}
	for _, f := range strings.Split(s, ",") {
		f = strings.ToLower(strings.TrimSpace(f))
		if f == "" {
			continue
		}
		switch f {
		case "ping":
			sel["ping_inline"], sel["ping_mbulk"] = true, true
			continue
		case "lrange":
			for _, d := range testDefs {
				if d.lrange > 0 {
					sel[strings.ToLower(d.name)] = true
				}
			}
			continue
		}
		d, found := lookupTest(f)
		if !found {
			return nil, fmt.Errorf("unknown test %q in -t %q (known: %s, ping, lrange)", f, s, strings.Join(Tests(), ", "))
		}
		sel[strings.ToLower(d.name)] = true
	}
	var out []string
	for _, d := range testDefs {
		if d.lrange > 0 && sel[strings.ToLower(d.name)] {
			sel[strings.ToLower(lpushForLRANGE)] = true
		}
	}
	for _, d := range testDefs {
		if sel[strings.ToLower(d.name)] {
			out = append(out, d.name)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("-t %q selects no test", s)
	}
	return out, nil
}

// resolveTests maps Config.Tests to definitions, expanding "ping" and
// "lrange" in place; order is kept.
func resolveTests(names []string) ([]*testDef, error) {
	if len(names) == 0 {
		names = DefaultTests()
	}
	var out []*testDef
	for _, n := range names {
		switch strings.ToLower(strings.TrimSpace(n)) {
		case "ping", "lrange":
			exp, _ := ParseTests(n)
			for _, e := range exp {
				d, _ := lookupTest(e)
				out = append(out, d)
			}
			continue
		}
		d, found := lookupTest(strings.TrimSpace(n))
		if !found {
			return nil, fmt.Errorf("unknown test %q (known: %s)", n, strings.Join(Tests(), ", "))
		}
		out = append(out, d)
	}
	return out, nil
}
