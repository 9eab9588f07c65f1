package bench

import (
	"context"
	"fmt"
	"maps"
	"math"
	"math/rand"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/redis-variants/redis-variants/rank"
	"github.com/redis-variants/redis-variants/variants"
)

// Extension is what the bench added after the fixed design to bring the
// primary family's intervals within the profile's target (bench.json).
type Extension struct {
	Target  float64        `json:"target"`  // the half-width worked toward (a share: 0.01 = ±1%)
	Rounds  int            `json:"rounds"`  // rounds run
	Added   int            `json:"added"`   // replicates added, the A/A control's included
	Stopped string         `json:"stopped"` // why it stopped
	Elapsed time.Duration  `json:"elapsed"` // time spent adding them
	Pairs   []ExtendedPair `json:"pairs"`   // every pair of the primary family (and the controls) when it stopped
}

// ExtendedPair is one pair's state when the extension stopped.
type ExtendedPair struct {
	Pair       string   `json:"pair"`
	Replicates int      `json:"replicates"` // complete replicates
	Added      int      `json:"added"`      // replicates the extension scheduled for it
	HalfWidth  rank.Num `json:"half_width"` // the score's simultaneous half-width (null for a control)
}

// Why the extension stopped.
const (
	StopReached = "every pair of the primary family is within the target"
	StopCapped  = "the pairs still wider than the target have max_replicates"
	StopTime    = "the profile's extend time would be passed by the next round"
	StopBudget  = "the bench's time budget would be passed by the next round"
)

// extendBase is the number of k's first added replicate: after the
// planned ones and every stand-in they may get, so that a resumed bench
// numbers each replicate as the first run did.
func (s *session) extendBase(k rank.PairKey) int {
	return s.planned[k] + maxStandIns(s.planned[k])
}

// extend adds replicates round by round (see variants.Profile.Target):
// each pair of the primary family whose simultaneous interval is wider
// than the target gets about the replicates that would bring it within
// (the width falls as one over the square root of their number), at most
// as many again as it has and no more than max_replicates in all, the
// sides balanced; each runtime's A/A control gets as many as the pair that
// got most, so that it covers the same stretch of the run. The round's
// replicates are shuffled together. A round starts only if it fits in the
// extend time and the budget at the replicates' measured pace. Only
// widths decide, never the estimates.
func (s *session) extend(ctx context.Context) error {
	p := s.o.Profile
	if p.Target <= 0 || p.MaxReplicates <= p.Replicates || p.Extend <= 0 || len(s.slots) == 0 || s.sum.BudgetSpent {
		return nil
	}
	ext := &Extension{Target: p.Target}
	s.sum.Extension = ext
	start := s.now()
	defer func() { ext.Elapsed = s.since(start) }()
	rng := rand.New(rand.NewSource(s.seed ^ 0x657874656e64))
	th := rank.DefaultThresholds()
	added := map[rank.PairKey]int{}
	next := map[rank.PairKey]int{}
	for k := range s.planned {
		next[k] = s.extendBase(k)
	}
	// Replicates an interrupted extension left on disk count as added;
	// unfinished ones are finished in the first round.
	var pending []pairSlot
	for _, rep := range s.repByRel {
		k := rep.PairKey
		if _, ok := s.planned[k]; !ok || rep.Rep < s.extendBase(k) {
			continue
		}
		added[k]++
		next[k] = max(next[k], rep.Rep+1)
		if rep.Failed == "" && s.done(unit{pair: &pairSlot{key: k, rep: rep.Rep}}) < s.size(unit{pair: &pairSlot{key: k}}) {
			pending = append(pending, pairSlot{key: k, rep: rep.Rep, swapped: rep.Swapped, imageRef: rep.ImageReference, extension: true})
		} else {
			ext.Added++
		}
	}
	sort.Slice(pending, func(i, j int) bool {
		return PairRel(pending[i].key, pending[i].rep) < PairRel(pending[j].key, pending[j].rep)
	})
	for {
		reps := s.replicates()
		hw := rank.Precision(reps, th)
		complete, swapped := map[rank.PairKey]int{}, map[rank.PairKey]int{}
		for _, r := range reps {
			if r.Failed == "" && r.Complete(s.benches) {
				complete[r.PairKey]++
				if r.Swapped {
					swapped[r.PairKey]++
				}
			}
		}
		ext.Pairs = s.extendedPairs(hw, complete, added)
		plan := planRound(hw, complete, swapped, s.planned, s.primary, p, 0)
		pace := s.pace()
		left := p.Extend - s.since(start)
		if time.Duration(len(pending)+plan.size())*pace > left && len(plan.keys) > 0 {
			// As many a pair as fit, an even number, at least the two
			// that keep the sides balanced (a round that does not fit
			// even so is not started, below).
			fit := int(left/pace) - len(pending)
			plan = planRound(hw, complete, swapped, s.planned, s.primary, p, max(2, fit/len(plan.keys)&^1))
		}
		batch := append(pending, plan.slots(s, next)...)
		pending = nil
		if len(batch) == 0 {
			ext.Stopped = plan.stop
			break
		}
		est := time.Duration(len(batch)) * pace
		if s.since(start)+est > p.Extend {
			ext.Stopped = StopTime
			s.logf("extend: %s (%d replicates at %s each would take %s; %s of %s spent)\n", ext.Stopped, len(batch), pace.Round(100*time.Millisecond), est.Round(time.Second), s.since(start).Round(time.Second), p.Extend)
			break
		}
		if s.budget > 0 && s.since(s.start)+est > s.budget {
			ext.Stopped = StopBudget
			s.logf("extend: %s\n", ext.Stopped)
			break
		}
		ext.Rounds++
		for k, n := range plan.add {
			added[k] += n
		}
		rng.Shuffle(len(batch), func(i, j int) { batch[i], batch[j] = batch[j], batch[i] })
		line := fmt.Sprintf("extend: round %d toward ±%.2f%%: %s; %d replicates (about %s)", ext.Rounds, 100*p.Target, strings.Join(plan.wide, ", "), len(batch), est.Round(time.Second))
		fmt.Fprintln(s.log, line)
		s.o.Progress.Println("%s", line)
		for i := range batch {
			sl := &batch[i]
			s.ctr.Grow(s.size(unit{pair: sl}))
			before := s.done(unit{pair: sl})
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := s.replicate(ctx, sl); err != nil {
				return err
			}
			ext.Added++
			s.ctr.Add(max(s.done(unit{pair: sl})-before, 0), s.last)
		}
	}
	fmt.Fprintf(s.log, "extend: stopped after %d round(s), %d replicate(s) added: %s\n", ext.Rounds, ext.Added, ext.Stopped)
	return nil
}

// round is what one round of the extension adds: replicates per pair,
// the sides each should be on, and why it adds none.
type round struct {
	keys []rank.PairKey       // in order
	add  map[rank.PairKey]int // replicates to add
	a, b map[rank.PairKey]int // complete replicates unswapped and swapped so far
	wide []string             // the pairs wider than the target, for the log
	stop string               // why nothing is added, when nothing is
}

// planRound decides a round from the primary family's half-widths hw and
// the complete replicates (swapped: how many of them swapped) per pair.
// No pair gets more than most (0 = no such bound).
func planRound(hw map[rank.PairKey]float64, complete, swapped, planned map[rank.PairKey]int, primary string, p variants.Profile, most int) round {
	r := round{add: map[rank.PairKey]int{}, a: map[rank.PairKey]int{}, b: map[rank.PairKey]int{}}
	top := map[string]int{} // per runtime: the most any pair gets
	capped := 0
	for _, k := range sortedKeys(hw) {
		h := hw[k]
		if h <= p.Target {
			continue
		}
		n := complete[k]
		room := p.MaxReplicates - n
		if room <= 0 {
			capped++
			continue
		}
		need := 2
		if n > 0 && !math.IsNaN(h) {
			need = int(math.Ceil(float64(n)*(h/p.Target)*(h/p.Target))) - n
		}
		need = min(max(need+need%2, 2), max(n, 2), room)
		if most > 0 {
			need = min(need, most)
		}
		r.wide = append(r.wide, fmt.Sprintf("%s ±%.2f%% at %d", k.Image, 100*h, n))
		r.keys = append(r.keys, k)
		r.add[k] = need
		top[k.Runtime] = max(top[k.Runtime], need)
	}
	for _, rt := range slices.Sorted(maps.Keys(top)) {
		c := rank.PairKey{Image: primary, Runtime: rt, Base: primary, BaseRuntime: rt}
		if _, ok := planned[c]; !ok {
			continue
		}
		if n := min(top[rt], p.MaxReplicates-complete[c]); n > 0 {
			r.keys = append(r.keys, c)
			r.add[c] = n
		}
	}
	for _, k := range r.keys {
		r.a[k], r.b[k] = complete[k]-swapped[k], swapped[k]
	}
	switch {
	case len(r.keys) > 0:
	case capped > 0:
		r.stop = StopCapped
	default:
		r.stop = StopReached
	}
	return r
}

// size is how many replicates the round adds.
func (r round) size() int {
	n := 0
	for _, a := range r.add {
		n += a
	}
	return n
}

// slots are the round's replicates, numbered from next (which they
// advance), each pair's sides balanced.
func (r round) slots(s *session, next map[rank.PairKey]int) []pairSlot {
	var out []pairSlot
	for _, k := range r.keys {
		out = append(out, s.newSlots(k, r.add[k], r.a[k], r.b[k], next)...)
	}
	return out
}

// newSlots are n fresh replicates of k, numbered from next[k], each with
// its image on the side the pair has had fewer complete replicates on
// (a, b: unswapped, swapped).
func (s *session) newSlots(k rank.PairKey, n, a, b int, next map[rank.PairKey]int) []pairSlot {
	imageRef, _ := s.imageSide(k)
	out := make([]pairSlot, 0, n)
	for i := 0; i < n; i++ {
		sw := b < a
		if sw {
			b++
		} else {
			a++
		}
		out = append(out, pairSlot{key: k, rep: next[k], swapped: sw, imageRef: imageRef, extension: true})
		next[k]++
	}
	return out
}

// imageSide is what a new replicate of k needs of its image side: whether
// it is a reference (a fixed binary) and how many layout draws it has (1
// for one binary, the A/A control's included).
func (s *session) imageSide(k rank.PairKey) (imageRef bool, draws int) {
	im, ok := s.byName[k.Image]
	if !ok || k.Image == s.primary {
		return true, 1
	}
	return im.Reference, 1 + len(im.Draws)
}

// extendedPairs is every pair of the primary family and every control,
// as they stand.
func (s *session) extendedPairs(hw map[rank.PairKey]float64, complete, added map[rank.PairKey]int) []ExtendedPair {
	var out []ExtendedPair
	for _, k := range sortedKeys(s.planned) {
		h, prim := hw[k]
		if !prim && k.Kind() != rank.KindControl {
			continue
		}
		e := ExtendedPair{Pair: k.String(), Replicates: complete[k], Added: added[k], HalfWidth: rank.Num(math.NaN())}
		if prim {
			e.HalfWidth = rank.Num(h)
		}
		out = append(out, e)
	}
	return out
}

// replicates is every replicate the session holds, in a fixed order.
func (s *session) replicates() []rank.Replicate {
	rels := make([]string, 0, len(s.repByRel))
	for rel := range s.repByRel {
		rels = append(rels, rel)
	}
	sort.Strings(rels)
	out := make([]rank.Replicate, 0, len(rels))
	for _, rel := range rels {
		out = append(out, *s.repByRel[rel])
	}
	return out
}

// pace is the mean time a replicate took in this session (6 s before any
// has been timed).
func (s *session) pace() time.Duration {
	if s.repTimed == 0 {
		return 6 * time.Second
	}
	return s.repTime / time.Duration(s.repTimed)
}

func sortedKeys[V any](m map[rank.PairKey]V) []rank.PairKey {
	keys := make([]rank.PairKey, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
	return keys
}
