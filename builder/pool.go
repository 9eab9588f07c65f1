package builder

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/redis-variants/redis-variants/variants"
)

// Endpoint is one buildkitd of a pool and how many builds it takes at once.
type Endpoint struct {
	Addr string
	Jobs int
}

// ParseEndpoint reads ADDR or ADDR,jobs=N (jobs: def when not given).
func ParseEndpoint(s string, def int) (Endpoint, error) {
	addr, opt, _ := strings.Cut(strings.TrimSpace(s), ",")
	e := Endpoint{Addr: addr, Jobs: max(def, 1)}
	if addr == "" {
		return e, fmt.Errorf("builder %q: no address", s)
	}
	if opt != "" {
		v, ok := strings.CutPrefix(opt, "jobs=")
		n, err := strconv.Atoi(v)
		if !ok || err != nil || n < 1 {
			return e, fmt.Errorf("builder %q: want ADDR or ADDR,jobs=N (N ≥ 1)", s)
		}
		e.Jobs = n
	}
	return e, nil
}

// Pool spreads builds over several buildkitd daemons, each with its own
// job limit: a build takes the first free slot of any builder still
// answering. A build that fails on a builder that then no longer answers
// (it went away mid-run) is retried on another; that builder takes no more
// builds. A build that fails on a builder that still answers is the
// build's own failure, and is not retried.
type Pool struct {
	members []*member
	free    chan *member // one token per job slot of a live member
	gone    chan struct{}

	mu   sync.Mutex
	live int
}

type member struct {
	b    *Builder
	addr string
	dead bool // under Pool.mu
}

var _ Interface = (*Pool)(nil)

// NewPool connects to every endpoint with opt (its Host and Jobs are each
// endpoint's). An endpoint that does not answer at start is an error that
// names it.
func NewPool(ctx context.Context, opt Options, eps []Endpoint) (*Pool, error) {
	if len(eps) == 0 {
		return nil, errors.New("builder pool: no builders")
	}
	p := &Pool{gone: make(chan struct{})}
	total := 0
	for _, e := range eps {
		total += e.Jobs
	}
	p.free = make(chan *member, total)
	for _, e := range eps {
		o := opt
		o.Host, o.Jobs = e.Addr, e.Jobs
		b, err := New(ctx, o)
		if err != nil {
			p.Close()
			return nil, fmt.Errorf("builder %s: %w", e.Addr, err)
		}
		m := &member{b: b, addr: e.Addr}
		p.members = append(p.members, m)
		for range e.Jobs {
			p.free <- m
		}
	}
	p.live = len(p.members)
	return p, nil
}

// Close closes every connection.
func (p *Pool) Close() error {
	var errs []error
	for _, m := range p.members {
		errs = append(errs, m.b.Close())
	}
	return errors.Join(errs...)
}

// First is the pool's first builder: the one SkipUpToDate and the
// recorder consult (they only read Docker Engine and the run folder).
func (p *Pool) First() *Builder { return p.members[0].b }

// Build implements Interface.
func (p *Pool) Build(ctx context.Context, v variants.Variant) Result {
	var lost []string
	for {
		var m *member
		select {
		case m = <-p.free:
		case <-p.gone:
			return Result{Variant: v, Image: ImageRef(v), Status: StatusFailed,
				Error: fmt.Sprintf("building variant %q: no builder left (%s stopped answering)", v.Name, strings.Join(lost, ", "))}
		case <-ctx.Done():
			return Result{Variant: v, Image: ImageRef(v), Status: StatusFailed,
				Error: fmt.Sprintf("building variant %q: interrupted while waiting for a builder: %v", v.Name, ctx.Err())}
		}
		if p.isDead(m) {
			continue // a slot of a builder that went away: dropped
		}
		r := m.b.Build(ctx, v)
		r.Builder = m.addr
		if r.Status != StatusFailed || ctx.Err() != nil || m.b.answers(ctx) {
			p.free <- m
			if len(lost) > 0 {
				r.Retried = lost
			}
			return r
		}
		// The builder went away: its slots are dropped, the build tried
		// again elsewhere.
		lost = append(lost, m.addr)
		p.kill(m)
		m.b.say(v.Name, fmt.Sprintf("builder %s stopped answering (%s); trying another", m.addr, r.Error))
	}
}

func (p *Pool) isDead(m *member) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return m.dead
}

func (p *Pool) kill(m *member) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if m.dead {
		return
	}
	m.dead = true
	p.live--
	if p.live == 0 {
		close(p.gone)
	}
}

// BuildAll builds vs over the pool through the stack every run uses:
// All over Record(SkipUpToDate(pool)); see Builder.BuildAll.
func (p *Pool) BuildAll(ctx context.Context, vs []variants.Variant) ([]Result, error) {
	b := p.First()
	var stack Interface = p
	if !b.opt.Force && b.opt.Push == "" && b.opt.OCIDir == "" && b.opt.CacheTo == "" {
		stack = SkipUpToDate(b, stack)
	}
	return All(ctx, Record(b.opt.Run, b.opt.Progress, stack), vs)
}
