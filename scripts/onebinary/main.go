// Command onebinary ranks run folders twice: as rank does (a build spec's
// replicates over its layout draws, the draws random) and as the tool did
// before layout draws (every replicate of a spec taken as the same binary:
// the crossover interval), and prints each image's verdict against the
// primary reference and every separated pair both ways, so that a reader
// sees which verdicts the wider claim keeps and which it gives up.
//
//	go run ./scripts/onebinary runs/A runs/B runs/C
package main

import (
	"context"
	"fmt"
	"os"
	"sort"

	"github.com/redis-variants/redis-variants/rank"
	"github.com/redis-variants/redis-variants/results"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: onebinary RUN...")
		os.Exit(2)
	}
	for _, dir := range os.Args[1:] {
		if err := compare(dir); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", dir, err)
			os.Exit(1)
		}
	}
}

func compare(dir string) error {
	run, err := results.Open(dir)
	if err != nil {
		return err
	}
	reps, skipped, err := results.LoadReplicates(run)
	if err != nil {
		return err
	}
	if len(skipped) > 0 {
		return fmt.Errorf("unreadable replicates: %v", skipped)
	}
	ctx := context.Background()
	spec, err := (&rank.Ranker{}).Rank(ctx, nil, reps)
	if err != nil {
		return err
	}
	one := make([]rank.Replicate, len(reps))
	copy(one, reps)
	for i := range one {
		one[i].Draw = 0
	}
	bin, err := (&rank.Ranker{}).Rank(ctx, nil, one)
	if err != nil {
		return err
	}
	fmt.Printf("## %s\n\n| image | one binary [Holm CI] | verdict | build spec [Holm CI] | verdict |\n|---|---|---|---|---|\n", dir)
	type row struct{ b, s rank.PairResult }
	rows := map[string]*row{}
	for _, p := range bin.Pairs {
		if p.Family == rank.FamilyPrimary && p.Test == "" {
			rows[p.Image+"@"+p.Runtime] = &row{b: p}
		}
	}
	for _, p := range spec.Pairs {
		if r := rows[p.Image+"@"+p.Runtime]; r != nil && p.Family == rank.FamilyPrimary && p.Test == "" {
			r.s = p
		}
	}
	keys := make([]string, 0, len(rows))
	for k := range rows {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		r := rows[k]
		fmt.Printf("| `%s` | %.4f [%.4f, %.4f] | %s | %.4f [%.4f, %.4f] (%d draws) | %s |\n", r.b.Image,
			float64(r.b.Ratio), float64(r.b.Lo), float64(r.b.Hi), r.b.Verdict,
			float64(r.s.Ratio), float64(r.s.Lo), float64(r.s.Hi), r.s.Draws, r.s.Verdict)
	}
	for _, sb := range bin.Standings {
		ss, ok := spec.Standing(sb.Runtime)
		if !ok {
			continue
		}
		var stand, flip, gained int
		var flips []string
		for _, p := range sb.Pairs {
			sep := ss.Separated(p.Higher, p.Lower)
			switch {
			case p.Separated && sep:
				stand++
			case p.Separated:
				flip++
				flips = append(flips, fmt.Sprintf("%s > %s", p.Higher, p.Lower))
			case sep:
				gained++
			}
		}
		fmt.Printf("\n%s: of the %d pairs the one-binary family separates, the build-spec family keeps %d and ties %d %v; it separates %d the other did not\n\n",
			sb.Runtime, stand+flip, stand, flip, flips, gained)
	}
	return nil
}
