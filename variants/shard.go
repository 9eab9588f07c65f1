package variants

import (
	"fmt"
	"strconv"
	"strings"
)

// Shard is one of Count parts of a variants file, for a matrix larger
// than one CI runner: shard Index (1-based) holds every reference (each
// runner measures its images against the primary reference, with its own
// A/A control) and every Count-th build spec in file order, starting at
// the Index-th, each spec with its layout draws. The zero Shard is the
// whole file.
type Shard struct {
	Index int `json:"index"`
	Count int `json:"count"`
}

// ParseShard reads "i/n" (1 ≤ i ≤ n); "" is the whole file.
func ParseShard(s string) (Shard, error) {
	if strings.TrimSpace(s) == "" {
		return Shard{}, nil
	}
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(strings.TrimSpace(a))
	n, err2 := strconv.Atoi(strings.TrimSpace(b))
	if !ok || err1 != nil || err2 != nil {
		return Shard{}, fmt.Errorf("shard %q: want i/n, as 2/4", s)
	}
	if n < 1 || i < 1 || i > n {
		return Shard{}, fmt.Errorf("shard %q: want 1 ≤ i ≤ n", s)
	}
	return Shard{Index: i, Count: n}, nil
}

// Whole says whether s is the whole file.
func (s Shard) Whole() bool { return s.Count <= 1 }

func (s Shard) String() string {
	if s.Whole() {
		return "1/1"
	}
	return fmt.Sprintf("%d/%d", s.Index, s.Count)
}

// Specs are the build specs of the plan's variants in file order (a
// spec's layout draws are not specs of their own).
func (p *Plan) Specs() []string {
	var out []string
	for _, v := range p.Variants {
		if v.DrawOf == "" {
			out = append(out, v.Name)
		}
	}
	return out
}

// ShardOf returns the part of p that shard s holds: every reference, and
// the variants of every s.Count-th build spec from the s.Index-th on. The
// plan returned records s. A shard that would hold no variant is an error
// (more shards than specs).
func (p *Plan) ShardOf(s Shard) (*Plan, error) {
	if s.Whole() {
		return p, nil
	}
	specs := p.Specs()
	if s.Index > len(specs) {
		return nil, fmt.Errorf("shard %s: %s has %d build specs, fewer than %d shards", s, p.File, len(specs), s.Count)
	}
	mine := map[string]bool{}
	for k := s.Index - 1; k < len(specs); k += s.Count {
		mine[specs[k]] = true
	}
	q := *p
	q.Variants = nil
	for _, v := range p.Variants {
		if mine[v.SpecName()] {
			q.Variants = append(q.Variants, v)
		}
	}
	q.Shard = &s
	return &q, nil
}
