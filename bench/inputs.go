package bench

import (
	"fmt"
	"strings"

	"github.com/redis-variants/redis-variants/variants"
)

// SelectRuntimes returns the runtimes of plan named in names (all when
// names is empty); an unknown name is an error.
func SelectRuntimes(all []variants.Runtime, names []string) ([]variants.Runtime, error) {
	if len(names) == 0 {
		return all, nil
	}
	by := map[string]variants.Runtime{}
	var known []string
	for _, rt := range all {
		by[rt.Name] = rt
		known = append(known, rt.Name)
	}
	var out []variants.Runtime
	for _, n := range names {
		rt, ok := by[n]
		if !ok {
			return nil, fmt.Errorf("--runtime %s: no such runtime (have %s)", n, strings.Join(known, ", "))
		}
		out = append(out, rt)
	}
	return out, nil
}
