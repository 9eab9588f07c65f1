package bench

import (
	"context"
	"fmt"
	"math/rand"
	"strings"
	"time"

	"github.com/redis-variants/redis-variants/rank"
)

// Sequential is what a sequential bench (profile looks > 1) saw at each
// look and what it gave the next round (bench.json).
type Sequential struct {
	Looks   int           `json:"looks"`   // the most the profile allowed
	Taken   []Look        `json:"taken"`   // every look taken, the first after the first replicates
	Added   int           `json:"added"`   // replicates the later rounds ran, the A/A control's included
	Stopped string        `json:"stopped"` // why no further round was run
	Elapsed time.Duration `json:"elapsed"` // time the later rounds took
}

// Look is one look at the decision: per runtime, the leader, whether it
// is settled, the entries not yet separated from it, and the pairs the
// next round gives Replicates each (none after the last look).
type Look struct {
	Look      int            `json:"look"`
	Decisions []LookDecision `json:"decisions"`
	Next      []string       `json:"next,omitempty"` // the pairs the next round measures
}

// LookDecision is one runtime's decision at a look.
type LookDecision struct {
	Runtime string   `json:"runtime"`
	Leader  string   `json:"leader"`
	Settled bool     `json:"settled"`
	Open    []string `json:"open,omitempty"` // entries not yet separated from the leader
}

// Why a sequential bench stopped looking.
const (
	StopSettled   = "every decision is settled"
	StopLastLook  = "the profile's last look was taken"
	StopNoLeader  = "no decision could be made from what was measured"
	StopLookAfter = "the bench's time budget would be passed by the next round"
)

// lookBase is the number of k's first replicate in round m (m ≥ 2),
// and of the round's first stand-in: each round has 2R + L numbers (R =
// Replicates, L = k's layout draws) after the planned ones and every
// stand-in they may get, so that a resumed bench numbers each replicate
// as the first run did. The round's R replicates are shifted so that
// they take the next R draws in turn (replicate n runs draw n mod L):
// where a spec has more draws than a round has replicates, each round
// measures draws the ones before did not, and the draw-level interval
// narrows with the draws' own spread. Its stand-ins (at most R) follow.
func (s *session) lookBase(k rank.PairKey, m int) (first, standIns int) {
	r := s.o.Profile.Replicates
	_, l := s.imageSide(k)
	b := s.extendBase(k) + (m-2)*(2*r+l)
	want := (m - 1) * r % l
	return b + ((want-b%l)%l+l)%l, b + r + l
}

// looks runs a sequential bench's later rounds (see variants.Profile.Looks).
// At look m (the first after the planned replicates and their stand-ins)
// it ranks every replicate of the rounds so far with the real analysis,
// at look m's share of alpha, and reads each runtime's decision: a
// settled one needs nothing more; an open one gives the next round's
// Replicates to the leader's pair, to the pair of each entry not yet
// separated from the leader, and to the runtime's A/A control (so that it
// spans the same stretch of the run). The round's replicates spread over
// the layout draws, each on the side its draw has had less, shuffled
// together. Which pairs a round measures depends only on the rounds
// before it, so a resumed bench replays the plan and finishes what it
// left.
func (s *session) looks(ctx context.Context) error {
	p := s.o.Profile
	if p.Looks <= 1 || len(s.slots) == 0 || s.sum.BudgetSpent {
		return nil
	}
	seq := &Sequential{Looks: p.Looks}
	s.sum.Sequential = seq
	start := s.now()
	defer func() { seq.Elapsed = s.since(start) }()
	th := rank.DefaultThresholds()
	th.Looks = p.Looks
	for m := 1; ; m++ {
		var upTo []rank.Replicate
		for _, r := range s.replicates() {
			if r.Look <= m {
				upTo = append(upTo, r)
			}
		}
		rk := rank.Rank(nil, upTo, th)
		look := Look{Look: m}
		var keys []rank.PairKey
		for _, d := range rk.Decisions {
			ld := LookDecision{Runtime: d.Runtime, Leader: d.Leader, Settled: d.Settled}
			if !d.Settled {
				ld.Open = d.Tied()
				for _, im := range append([]string{d.Leader}, ld.Open...) {
					k := rank.PairKey{Image: im, Runtime: d.Runtime, Base: s.primary, BaseRuntime: d.Runtime}
					if _, ok := s.planned[k]; ok && im != s.primary {
						keys = append(keys, k)
					}
				}
				if c := (rank.PairKey{Image: s.primary, Runtime: d.Runtime, Base: s.primary, BaseRuntime: d.Runtime}); s.planned[c] > 0 && len(keys) > 0 {
					keys = append(keys, c)
				}
			}
			look.Decisions = append(look.Decisions, ld)
		}
		var stop string
		switch {
		case len(rk.Decisions) == 0:
			stop = StopNoLeader
		case len(keys) == 0:
			stop = StopSettled
		case m >= p.Looks:
			stop = StopLastLook
		}
		if stop == "" {
			for _, k := range keys {
				look.Next = append(look.Next, k.String())
			}
		}
		seq.Taken = append(seq.Taken, look)
		s.logLook(look, m, p.Looks)
		if stop != "" {
			seq.Stopped = stop
			break
		}
		batch := s.lookSlots(keys, m+1)
		todo := 0
		for i := range batch {
			if s.done(unit{pair: &batch[i]}) < s.size(unit{pair: &batch[i]}) {
				todo++
			}
		}
		est := time.Duration(todo) * s.pace()
		if s.budget > 0 && s.since(s.start)+est > s.budget {
			seq.Stopped = StopLookAfter
			s.logf("looks: %s (%d replicates at %s each)\n", seq.Stopped, todo, s.pace().Round(100*time.Millisecond))
			break
		}
		rng := rand.New(rand.NewSource(s.seed ^ int64(0x6c6f6f6b00+m)))
		rng.Shuffle(len(batch), func(i, j int) { batch[i], batch[j] = batch[j], batch[i] })
		line := fmt.Sprintf("looks: round %d: %d replicates of %s (about %s)", m+1, len(batch), strings.Join(look.Next, ", "), est.Round(time.Second))
		fmt.Fprintln(s.log, line)
		s.o.Progress.Println("%s", line)
		s.look = m + 1
		// A replicate of the round that comes out short (a benchmark
		// lost, or given up) gets a stand-in on its draw and side at the
		// end of the round, at most Replicates a pair a round; the queue
		// grows in the batch's order, so a resumed bench schedules the
		// same stand-ins under the same numbers.
		standIns := map[rank.PairKey]int{}
		for i := 0; i < len(batch); i++ {
			sl := batch[i]
			if err := ctx.Err(); err != nil {
				return err
			}
			if before := s.done(unit{pair: &sl}); before < s.size(unit{pair: &sl}) {
				s.ctr.Grow(s.size(unit{pair: &sl}))
				if err := s.replicate(ctx, &sl); err != nil {
					return err
				}
				seq.Added++
				s.ctr.Add(max(s.done(unit{pair: &sl})-before, 0), s.last)
			}
			rep := s.repByRel[PairRel(sl.key, sl.rep)]
			if rep == nil || rep.Failed == "" && len(rep.Lost) == 0 || standIns[sl.key] >= p.Replicates {
				continue
			}
			was := rep.Rep
			if sl.replaces != nil {
				was = *sl.replaces
			}
			_, sb := s.lookBase(sl.key, m+1)
			ns := pairSlot{key: sl.key, rep: sb + standIns[sl.key], swapped: rep.Swapped, imageRef: sl.imageRef, replaces: &was, extension: true}
			standIns[sl.key]++
			s.logf("  %s #%d: short (%s): stand-in #%d at the end of the round\n", sl.key, rep.Rep, shortWhy(rep), ns.rep)
			batch = append(batch, ns)
		}
	}
	fmt.Fprintf(s.log, "looks: stopped after look %d of %d, %d replicate(s) added: %s\n", len(seq.Taken), p.Looks, seq.Added, seq.Stopped)
	return nil
}

// lookSlots are round m's replicates of the pairs keys: Replicates each,
// numbered from lookBase, each on the side its layout draw (its pair, for
// an image of one binary) has had fewer replicates on so far, a draw
// with as many of each drawing its side from the seed. A replicate the
// session already holds keeps the side it was run with.
func (s *session) lookSlots(keys []rank.PairKey, m int) []pairSlot {
	r := s.o.Profile.Replicates
	var out []pairSlot
	for _, k := range keys {
		imageRef, draws := s.imageSide(k)
		a, b := map[int]int{}, map[int]int{} // per draw (rep mod draws): unswapped, swapped
		for _, rep := range s.repByRel {
			if rep.PairKey != k || rep.Failed != "" || rep.Look >= m {
				continue
			}
			if rep.Swapped {
				b[rep.Rep%draws]++
			} else {
				a[rep.Rep%draws]++
			}
		}
		rng := rand.New(rand.NewSource(s.seed ^ int64(m)<<32 ^ int64(len(k.String()))))
		base, _ := s.lookBase(k, m)
		for i := range r {
			n := base + i
			d := n % draws
			sw := b[d] < a[d]
			if a[d] == b[d] {
				sw = rng.Intn(2) == 1
			}
			if old := s.repByRel[PairRel(k, n)]; old != nil {
				sw = old.Swapped
			}
			if sw {
				b[d]++
			} else {
				a[d]++
			}
			out = append(out, pairSlot{key: k, rep: n, swapped: sw, imageRef: imageRef, extension: true})
		}
	}
	return out
}

// logLook writes one look's decisions to the bench log and progress.
func (s *session) logLook(l Look, m, looks int) {
	for _, d := range l.Decisions {
		state := "settled"
		if !d.Settled {
			state = "open against " + strings.Join(d.Open, ", ")
		}
		line := fmt.Sprintf("looks: look %d of %d under %s: leader %s, %s", m, looks, d.Runtime, d.Leader, state)
		fmt.Fprintln(s.log, line)
		s.o.Progress.Println("%s", line)
	}
}

// lookOf is the look a new replicate of the session belongs to (0 in a
// fixed design).
func (s *session) lookOf() int {
	if s.o.Profile.Looks <= 1 {
		return 0
	}
	return max(s.look, 1)
}
