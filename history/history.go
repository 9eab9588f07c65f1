// Package history merges the rankings of several runs, from several
// machines, into one table: rows are CPU models (with their x86-64 level),
// columns a property of the variants (allocator, compiler, -O level, or the
// variant itself), and each cell the score against the stock reference,
// with its interval, of the best variant of that column on that CPU. It
// answers questions like "which allocator wins on which CPU generation".
//
// Scores are only compared within a row: each is a ratio to the reference
// measured on the same machine in the same run, which is what makes results
// from different machines comparable at all.
package history

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/redis-variants/redis-variants/builder"
	"github.com/redis-variants/redis-variants/rank"
	"github.com/redis-variants/redis-variants/results"
	"github.com/redis-variants/redis-variants/variants"
)

// Groupings (Options.By).
const (
	ByAllocator = "allocator"
	ByCompiler  = "compiler"
	ByOpt       = "opt"
	ByVariant   = "variant"
)

// Groupings lists the valid values of Options.By.
var Groupings = []string{ByAllocator, ByCompiler, ByOpt, ByVariant}

// Metrics (Options.Metric): what a cell's score is.
const (
	MetricSpeed  = "speed"  // the speed score against the reference
	MetricMemory = "memory" // the memory workload: the reference's RSS after the churn over the variant's (> 1: less memory)
)

// Options configure Load and Build.
type Options struct {
	Runtime   string // runtime configuration ("" = "host")
	Reference string // reference scores are against ("" = each run's stock distro-package reference, else the ranking's primary)
	By        string // column grouping ("" = ByAllocator)
	Metric    string // MetricSpeed ("") or MetricMemory
}

func (o Options) withDefaults() Options {
	if o.Runtime == "" {
		o.Runtime = "host"
	}
	if o.By == "" {
		o.By = ByAllocator
	}
	if o.Metric == "" {
		o.Metric = MetricSpeed
	}
	return o
}

// Result is one variant's score in one run.
type Result struct {
	Run       string  `json:"run"` // run folder
	CPUModel  string  `json:"cpu_model"`
	Level     string  `json:"x86_64_level"` // the machine's x86-64 level, "" when unknown
	Variant   string  `json:"variant"`
	ID        string  `json:"id,omitempty"`
	Compiler  string  `json:"compiler,omitempty"` // e.g. gcc-12
	Opt       string  `json:"opt,omitempty"`      // e.g. O3
	Allocator string  `json:"allocator,omitempty"`
	Reference string  `json:"reference"`
	Score     float64 `json:"score"`
	Lo        float64 `json:"lo"`
	Hi        float64 `json:"hi"`
	Verdict   string  `json:"verdict"` // against Reference: faster, slower, tie
	Rank      int     `json:"rank"`    // best rank of its rank interval
	RankHi    int     `json:"rank_hi"` // worst (as rank.Entry.RankHi)
}

// Group returns r's column under grouping by.
func (r Result) Group(by string) string {
	var g string
	switch by {
	case ByCompiler:
		g = r.Compiler
	case ByOpt:
		g = r.Opt
	case ByVariant:
		g = r.Variant
	default:
		g = r.Allocator
	}
	if g == "" {
		return "unknown"
	}
	return g
}

// RunDirs returns every run folder under root (folders holding a
// ranking.json), sorted.
func RunDirs(root string) ([]string, error) {
	ents, err := os.ReadDir(root)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			if _, err := os.Stat(filepath.Join(root, e.Name(), results.RankingFile)); err == nil {
				out = append(out, filepath.Join(root, e.Name()))
			}
		}
	}
	sort.Strings(out)
	return out, nil
}

// Load reads the results of every run folder in dirs. A folder that cannot
// be read is a warning, not an error, so one broken run does not hide the
// others; the error is for when no folder gave anything.
func Load(dirs []string, opt Options) ([]Result, []string, error) {
	opt = opt.withDefaults()
	var out []Result
	var warnings []string
	seen := map[string]bool{}
	for _, d := range dirs {
		abs, _ := filepath.Abs(d)
		if seen[abs] {
			continue
		}
		seen[abs] = true
		rs, w, err := LoadRun(d, opt)
		warnings = append(warnings, w...)
		if err != nil {
			warnings = append(warnings, err.Error())
			continue
		}
		out = append(out, rs...)
	}
	if len(out) == 0 {
		if len(dirs) == 0 {
			return nil, warnings, errors.New("no run folders to read")
		}
		return nil, warnings, fmt.Errorf("no results under runtime %s in %d run folder(s): %s", opt.Runtime, len(dirs), strings.Join(warnings, "; "))
	}
	return out, warnings, nil
}

// LoadRun reads one run folder: its ranking (ranking.json), the variants'
// properties (plan.json, else the build results), the CPU model (the
// ranking's, else the trials', else machine.json) and the machine's x86-64
// level (machine.json, else the build label io.redis-variants.build.x86-64-level).
func LoadRun(dir string, opt Options) ([]Result, []string, error) {
	opt = opt.withDefaults()
	run := &results.Run{Dir: dir}
	rk, err := run.Ranking()
	if err != nil {
		return nil, nil, fmt.Errorf("run %s: %w", dir, err)
	}
	st, ok := rk.Standing(opt.Runtime)
	if !ok {
		return nil, nil, fmt.Errorf("run %s: no standings for runtime %s (it has %s)", dir, opt.Runtime, strings.Join(rk.Runtimes, ", "))
	}
	var warnings []string
	plan, perr := run.Plan()
	hasPlan := perr == nil
	builds, _, err := results.LoadBuilds(run)
	if err != nil {
		warnings = append(warnings, fmt.Sprintf("run %s: %v", dir, err))
	}
	mi, _ := run.Machine()

	cpu := strings.Join(rk.CPUModels, " + ")
	if cpu == "" {
		cpu = trialCPU(run)
	}
	if cpu == "" {
		cpu = mi.CPUModel
	}
	if cpu == "" {
		cpu = "unknown CPU"
		warnings = append(warnings, fmt.Sprintf("run %s: no CPU model recorded", dir))
	}
	level := mi.Level
	switch {
	case mi.Arch != "" && mi.Arch != "amd64":
		level = mi.Arch // an arm64 machine's row: no x86-64 level, its architecture
	case level == "":
		level = buildLevel(builds)
	}

	lookup := func(name string) (variants.Variant, bool) {
		if hasPlan {
			if v, ok := plan.Lookup(name); ok {
				return v, true
			}
		}
		if b, ok := builds[name]; ok && b.Variant.Name != "" {
			return b.Variant, true
		}
		return variants.Variant{}, false
	}
	ref := opt.Reference
	if ref == "" {
		for _, r := range rk.References {
			if v, ok := lookup(r); ok && v.Kind == variants.KindDistro {
				ref = r
				break
			}
		}
	}
	if ref == "" {
		ref = st.Primary
	}
	if !contains(rk.References, ref) {
		return nil, warnings, fmt.Errorf("run %s: %q is not one of its references (%s)", dir, ref, strings.Join(rk.References, ", "))
	}
	if opt.Metric == MetricMemory {
		return memoryResults(dir, rk, cpu, level, lookup, warnings)
	}
	var out []Result
	for _, e := range st.Entries {
		if e.Reference {
			continue
		}
		v, ok := lookup(e.Image)
		if !ok {
			warnings = append(warnings, fmt.Sprintf("run %s: variant %q is in the ranking but not in plan.json or builds/", dir, e.Image))
		} else if v.IsReference() {
			continue
		}
		r := Result{Run: dir, CPUModel: cpu, Level: level, Variant: e.Image, ID: v.ID, Opt: v.Opt,
			Allocator: v.Allocator, Reference: ref, Rank: e.Rank, RankHi: e.RankHi}
		if v.Compiler.Family != "" {
			r.Compiler = v.Compiler.String()
		}
		found := false
		for _, s := range e.Versus {
			if s.Reference == ref {
				r.Score, r.Lo, r.Hi, r.Verdict = float64(s.Score), float64(s.Lo), float64(s.Hi), s.Verdict
				found = !s.Score.IsNaN()
			}
		}
		if !found {
			warnings = append(warnings, fmt.Sprintf("run %s: %s has no score against %s under %s", dir, e.Image, ref, opt.Runtime))
			continue
		}
		out = append(out, r)
	}
	return out, warnings, nil
}

// memoryResults are a run's memory figures as history results: the score
// is the primary reference's RSS after the churn over the variant's
// (> 1: less memory for the same data), its interval inverted to match.
func memoryResults(dir string, rk *rank.Ranking, cpu, level string, lookup func(string) (variants.Variant, bool), warnings []string) ([]Result, []string, error) {
	if rk.Memory == nil {
		return nil, warnings, fmt.Errorf("run %s: no memory workload (its profile had memory: off, or the run predates it)", dir)
	}
	var out []Result
	for _, e := range rk.Memory.Entries {
		v, ok := lookup(e.Image)
		if e.Reference || ok && v.IsReference() || e.Ratio.IsNaN() {
			continue
		}
		verdict := map[string]string{rank.Less: rank.Faster, rank.More: rank.Slower}[e.Verdict]
		if verdict == "" {
			verdict = rank.Tie
		}
		r := Result{Run: dir, CPUModel: cpu, Level: level, Variant: e.Image, ID: v.ID, Opt: v.Opt, Allocator: v.Allocator,
			Reference: rk.Memory.Primary, Rank: e.Rank, RankHi: e.RankHi, Score: 1 / float64(e.Ratio), Lo: 1 / float64(e.Hi), Hi: 1 / float64(e.Lo), Verdict: verdict}
		if v.Compiler.Family != "" {
			r.Compiler = v.Compiler.String()
		}
		if r.Allocator == "" {
			r.Allocator = e.Allocator
		}
		out = append(out, r)
	}
	return out, warnings, nil
}

func contains(s []string, x string) bool {
	for _, y := range s {
		if y == x {
			return true
		}
	}
	return false
}

// trialCPU returns the CPU models recorded in the run's trials (read as
// rank's trials, with the run folder's one loader; bad files say nothing).
func trialCPU(run *results.Run) string {
	trials, _, _ := results.LoadDir[rank.Trial](run, "trials", nil)
	models := map[string]bool{}
	for _, t := range trials {
		if t.CPUModel != "" {
			models[t.CPUModel] = true
		}
	}
	return strings.Join(slices.Sorted(maps.Keys(models)), " + ")
}

// buildLevel is the most common build-machine level among the builds.
func buildLevel(builds map[string]builder.Result) string {
	count := map[string]int{}
	for _, b := range builds {
		if l := b.Labels["io.redis-variants.build.x86-64-level"]; l != "" {
			count[l]++
		}
	}
	best := ""
	for l, n := range count {
		if n > count[best] || n == count[best] && l < best {
			best = l
		}
	}
	return best
}

// Cell is one (CPU, column) cell of the table.
type Cell struct {
	Result   *Result `json:"result,omitempty"` // the best-scoring variant of the column on this CPU (nil: none)
	Variants int     `json:"variants"`         // variants that fell in the cell
	Best     bool    `json:"best"`             // the highest score in its row
	TiedBest bool    `json:"tied_best"`        // not the highest, but its interval overlaps the best's
}

// Row is one CPU model (and x86-64 level).
type Row struct {
	CPUModel string   `json:"cpu_model"`
	Level    string   `json:"x86_64_level"`
	Runs     []string `json:"runs"`
	Cells    []Cell   `json:"cells"` // aligned with Table.Columns
}

// Label is the row's name: "CPU model (v3)".
func (r Row) Label() string {
	if r.Level == "" {
		return r.CPUModel
	}
	return fmt.Sprintf("%s (%s)", r.CPUModel, r.Level)
}

// Table is the merged view.
type Table struct {
	By         string   `json:"by"`
	Metric     string   `json:"metric"`
	Runtime    string   `json:"runtime"`
	References []string `json:"references"` // the references the scores are against
	Columns    []string `json:"columns"`
	Rows       []Row    `json:"rows"`
}

// Build groups results into a table. When one variant (by name) was
// measured on the same CPU in several runs, the latest run (by folder name,
// which sorts by time) counts.
func Build(rs []Result, opt Options) (Table, error) {
	opt = opt.withDefaults()
	if !contains(Groupings, opt.By) {
		return Table{}, fmt.Errorf("unknown grouping %q (want one of %s)", opt.By, strings.Join(Groupings, ", "))
	}
	type rowKey struct{ cpu, level string }
	latest := map[rowKey]map[string]Result{}
	runs := map[rowKey]map[string]bool{}
	refs := map[string]bool{}
	cols := map[string]bool{}
	for _, r := range rs {
		k := rowKey{r.CPUModel, r.Level}
		if latest[k] == nil {
			latest[k], runs[k] = map[string]Result{}, map[string]bool{}
		}
		runs[k][r.Run] = true
		if old, ok := latest[k][r.Variant]; !ok || filepath.Base(r.Run) > filepath.Base(old.Run) {
			latest[k][r.Variant] = r
		}
	}
	for _, m := range latest {
		for _, r := range m {
			cols[r.Group(opt.By)] = true
			refs[r.Reference] = true
		}
	}
	t := Table{By: opt.By, Metric: opt.Metric, Runtime: opt.Runtime, Columns: slices.Sorted(maps.Keys(cols)), References: slices.Sorted(maps.Keys(refs))}
	colIdx := map[string]int{}
	for i, c := range t.Columns {
		colIdx[c] = i
	}
	var keys []rowKey
	for k := range latest {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].level != keys[j].level {
			return keys[i].level < keys[j].level
		}
		return keys[i].cpu < keys[j].cpu
	})
	for _, k := range keys {
		row := Row{CPUModel: k.cpu, Level: k.level, Runs: slices.Sorted(maps.Keys(runs[k])), Cells: make([]Cell, len(t.Columns))}
		var names []string
		for n := range latest[k] {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			r := latest[k][n]
			c := &row.Cells[colIdx[r.Group(opt.By)]]
			c.Variants++
			if c.Result == nil || r.Score > c.Result.Score {
				rr := r
				c.Result = &rr
			}
		}
		best := -1
		for i, c := range row.Cells {
			if c.Result != nil && !math.IsNaN(c.Result.Score) && (best < 0 || c.Result.Score > row.Cells[best].Result.Score) {
				best = i
			}
		}
		if best >= 0 {
			b := row.Cells[best].Result
			row.Cells[best].Best = true
			for i := range row.Cells {
				c := &row.Cells[i]
				if i != best && c.Result != nil && !(c.Result.Hi < b.Lo) {
					c.TiedBest = true
				}
			}
		}
		t.Rows = append(t.Rows, row)
	}
	return t, nil
}
