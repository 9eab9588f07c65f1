package variants

import (
	"strings"
	"testing"
)

func TestShards(t *testing.T) {
	const file = `
defaults: {layouts: 2, redis: 7.0.15}
references:
  - {name: stock-debian, kind: distro-package}
  - {name: official, image: redis:7.0.15}
variants:
  - {name: a, compiler: gcc-12, opt: O2}
  - {name: b, compiler: gcc-12, opt: O3}
  - {name: c, compiler: gcc-12, opt: O1, layouts: 1}
`
	p, err := Parse("test.yaml", []byte(file))
	if err != nil {
		t.Fatal(err)
	}
	names := func(p *Plan) string {
		var out []string
		for _, v := range p.All() {
			out = append(out, v.Name)
		}
		return strings.Join(out, " ")
	}
	seen := map[string]int{}
	for i, want := range []string{
		"stock-debian official a a.l2 c",
		"stock-debian official b b.l2",
	} {
		s, err := ParseShard(strings.Join([]string{string(rune('1' + i)), "2"}, "/"))
		if err != nil {
			t.Fatal(err)
		}
		q, err := p.ShardOf(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := names(q); got != want {
			t.Errorf("shard %s: %q, want %q", s, got, want)
		}
		if q.Shard == nil || *q.Shard != s {
			t.Errorf("shard %s: the plan records %v", s, q.Shard)
		}
		for _, v := range q.Variants {
			seen[v.Name]++
		}
	}
	// every variant is in exactly one shard
	for _, v := range p.Variants {
		if seen[v.Name] != 1 {
			t.Errorf("%s is in %d shards, want 1", v.Name, seen[v.Name])
		}
	}
	if len(p.Variants) != 5 || p.Shard != nil {
		t.Errorf("ShardOf changed the whole plan: %q, shard %v", names(p), p.Shard)
	}
	whole, _ := p.ShardOf(Shard{})
	if whole != p {
		t.Error("the zero shard is not the whole plan")
	}
	if _, err := p.ShardOf(Shard{Index: 4, Count: 4}); err == nil || !strings.Contains(err.Error(), "3 build specs") {
		t.Errorf("shard 4/4 of 3 specs: %v, want an error naming the 3 specs", err)
	}
	for _, bad := range []string{"0/2", "3/2", "1/0", "x/2", "1-2", "1/2/3"} {
		if _, err := ParseShard(bad); err == nil {
			t.Errorf("ParseShard(%q): no error", bad)
		}
	}
}
