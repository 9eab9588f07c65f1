package pipeline

import (
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"

	"github.com/redis-variants/redis-variants/rank"
	"github.com/redis-variants/redis-variants/results"
)

// Compare prints on c.Out whether the rankings of run folders a and b
// agree under runtime ("" = a's first ranked runtime): the per-image z
// between their primary scores and Kendall's τ of their orders, as a
// Markdown table or, with asJSON, as JSON.
func Compare(c Config, a, b, runtime string, asJSON bool) error {
	var rs [2]rank.Ranking
	for i, dir := range []string{a, b} {
		rk, err := (&results.Run{Dir: dir}).Ranking()
		if err != nil {
			return fmt.Errorf("%s (run `redis-variants rank --run %s`): %w", dir, dir, err)
		}
		rs[i] = *rk
	}
	rt := runtime
	if rt == "" && len(rs[0].Standings) > 0 {
		rt = rs[0].Standings[0].Runtime
	}
	ag := rank.Agree(rs[0], rs[1], rt)
	out := c.Out
	if asJSON {
		js, err := json.MarshalIndent(ag, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(out, "%s\n", js)
		return err
	}
	fmt.Fprintf(out, "Runs %s (A) and %s (B) under %s, each image vs the primary reference:\n\n", filepath.Base(a), filepath.Base(b), rt)
	fmt.Fprintln(out, "| image | A | B | z (A vs B) |")
	fmt.Fprintln(out, "|---|---:|---:|---:|")
	for _, im := range ag.Images {
		fmt.Fprintf(out, "| `%s` | %.4f | %.4f | %+.2f |\n", im.Image, float64(im.A), float64(im.B), float64(im.Z))
	}
	fmt.Fprintf(out, "\nlargest |z|: %s; Kendall τ over the %d separated pairs: %s; over every pair: %s\n",
		f2(float64(ag.MaxAbsZ)), ag.TauPairs, f2(float64(ag.Tau)), f2(float64(ag.TauAll)))
	return nil
}

func f2(f float64) string {
	if math.IsNaN(f) {
		return "n/a"
	}
	return fmt.Sprintf("%.2f", f)
}
