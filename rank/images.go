package rank

import (
	"fmt"
	"sort"
	"strings"
)

// oneImageEach says whether every name the records use describes one
// image: a name whose trials, replicates or memory servers name two image
// IDs (the file edited and that entry rebuilt between two benches of a run)
// would mix two builds into one estimate, so it is an error that names
// both and a record of each. Records that name no image (made before
// records named their images) are not judged.
func oneImageEach(trials []Trial, reps []Replicate, mem []MemoryTrial) error {
	seen := map[string]map[string]string{} // name → image ID → a record of it
	add := func(name, id, rec string) {
		if name == "" || id == "" {
			return
		}
		if seen[name] == nil {
			seen[name] = map[string]string{}
		}
		if _, ok := seen[name][id]; !ok {
			seen[name][id] = rec
		}
	}
	for _, t := range trials {
		add(t.Variant, t.ImageID, fmt.Sprintf("trial %s %s P%d #%d", t.Runtime, t.Test, t.Pipeline, t.Rep))
	}
	for _, r := range reps {
		rec := fmt.Sprintf("replicate %s #%d", r.PairKey, r.Rep)
		add(r.ImageName(), r.ImageID, rec)
		add(r.Base, r.BaseID, rec)
	}
	for _, m := range mem {
		add(m.Image, m.ImageID, fmt.Sprintf("memory server %s #%d", m.Name(), m.Rep))
	}
	var bad []string
	for name, ids := range seen {
		if len(ids) < 2 {
			continue
		}
		var each []string
		for id, rec := range ids {
			each = append(each, fmt.Sprintf("%s (%s)", id, rec))
		}
		sort.Strings(each)
		bad = append(bad, fmt.Sprintf("%q: %s", name, strings.Join(each, ", ")))
	}
	if len(bad) == 0 {
		return nil
	}
	sort.Strings(bad)
	return fmt.Errorf("rank: the records describe more than one image under one name, which would mix two builds into one estimate: %s; benchmark again (bench --run on the same folder sets the other image's records aside)",
		strings.Join(bad, "; "))
}
