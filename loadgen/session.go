package loadgen

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/redis/go-redis/v9"
)

// A Session keeps one generator's connections to a server open across
// windows, so that a window measures the server and not the generator's
// start-up: no process to start, no connection to open, no warm-up of the
// generator's own inside the measured time. Windows of one call run back
// to back on one uninterrupted load, and a window starts at an instant the
// caller names, so that two sessions (the two servers of a co-scheduled
// pair) start theirs together and a third party (the bench, reading the
// servers' cgroups) knows where each measured interval begins and ends.
type Session struct {
	cfg   Config
	conns []*conn
	ctl   *redis.Client
	bad   error // set once a window failed: the connections are not usable
}

// Windows is one call of Session.Run: load Test at Pipeline from Start
// (wall clock), unmeasured for Warmup, then Count measured intervals of
// Duration each, back to back, then Tail more of unmeasured load, so that
// the load goes on past the last interval's end while the caller reads
// what it reads there.
type Windows struct {
	Test     string        `json:"test"`
	Pipeline int           `json:"pipeline"`
	Start    time.Time     `json:"start"`
	Warmup   time.Duration `json:"warmup"`
	Duration time.Duration `json:"duration"`
	Count    int           `json:"count"`
	Tail     time.Duration `json:"tail"`
}

// Bounds returns the instants at which the measured intervals begin and
// the last one ends (Count+1 instants).
func (w Windows) Bounds() []time.Time {
	out := make([]time.Time, 0, w.Count+1)
	for i := 0; i <= w.Count; i++ {
		out = append(out, w.Start.Add(w.Warmup+time.Duration(i)*w.Duration))
	}
	return out
}

// MaxLate is how far past a window's Start the load may begin before the
// window is refused: later, the intervals the caller reads its figures
// over would not be the ones loaded.
const MaxLate = 10 * time.Millisecond

// ErrLate: a window's start instant had passed when its load could begin.
var ErrLate = errors.New("the window's start instant had passed")

// Open connects cfg.Clients connections to cfg's server. cfg's Tests,
// Pipeline, Duration, Warmup and Requests are ignored: each Run says its
// own.
func Open(ctx context.Context, cfg Config) (*Session, error) {
	if cfg.Requests == 0 && cfg.Duration == 0 {
		cfg.Duration = time.Second // setDefaults wants a mode; Run sets its own
	}
	if err := cfg.setDefaults(); err != nil {
		return nil, fmt.Errorf("loadgen: %w", err)
	}
	if cfg.Rate > 0 {
		return nil, errors.New("loadgen: a session runs closed-loop load (no --rate)")
	}
	s := &Session{cfg: cfg, ctl: cfg.control()}
	if err := s.ctl.Ping(ctx).Err(); err != nil {
		s.ctl.Close()
		return nil, fmt.Errorf("loadgen: connecting to %s: %w", cfg.target(), err)
	}
	conns, err := dialAll(ctx, &s.cfg)
	if err != nil {
		closeAll(conns)
		s.ctl.Close()
		return nil, fmt.Errorf("loadgen: connecting to %s: %w", cfg.target(), err)
	}
	s.conns = conns
	return s, nil
}

// Clients is how many connections the session holds.
func (s *Session) Clients() int { return len(s.conns) }

// Run runs w on the session's connections and returns one Result per
// measured interval. A failed Run leaves the session unusable.
func (s *Session) Run(ctx context.Context, w Windows) ([]Result, error) {
	if s.bad != nil {
		return nil, fmt.Errorf("loadgen: session unusable after an earlier failure: %w", s.bad)
	}
	if w.Count < 1 || w.Duration <= 0 {
		return nil, fmt.Errorf("loadgen: a window run needs a count and a duration (got %d x %s)", w.Count, w.Duration)
	}
	defs, err := resolveTests([]string{w.Test})
	if err != nil || len(defs) != 1 {
		return nil, fmt.Errorf("loadgen: test %q: want exactly one test (%v)", w.Test, err)
	}
	d := defs[0]
	cfg := s.cfg
	cfg.Tests, cfg.Pipeline, cfg.Requests = []string{d.name}, max(w.Pipeline, 1), 0
	cfg.Duration, cfg.Warmup = w.Duration, w.Warmup
	if d.lrange > 0 {
		if err := fillList(ctx, s.ctl, &cfg, d.lrange); err != nil {
			return nil, fmt.Errorf("loadgen: preparing %s: %w", d.name, err)
		}
	}
	t := newTest(&cfg, d)
	// The test clock's zero is w.Start, on this process's monotonic clock.
	t.clk = clock{base: time.Now().Add(time.Until(w.Start))}
	if late := -time.Until(w.Start); late > MaxLate {
		return nil, fmt.Errorf("loadgen: %s: %w by %s", d.name, ErrLate, late.Round(time.Microsecond))
	}
	t.win = window{start: int64(w.Warmup), n: w.Count, d: int64(w.Duration)}
	t.win.end = t.win.start + int64(w.Count)*int64(w.Duration)
	t.win.stop = t.win.end + int64(max(w.Tail, 0))
	if t.win.end < 0 || t.win.end == math.MaxInt64 {
		return nil, fmt.Errorf("loadgen: window run too long")
	}
	res, err := t.run(ctx, s.conns)
	if err != nil {
		s.bad = err
		return nil, fmt.Errorf("loadgen: test %s against %s: %w", d.name, cfg.target(), err)
	}
	return res, nil
}

// Close closes the session's connections.
func (s *Session) Close() error {
	closeAll(s.conns)
	s.conns = nil
	return s.ctl.Close()
}
