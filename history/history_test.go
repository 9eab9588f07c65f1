package history

import (
	"bytes"
	"encoding/csv"
	"encoding/xml"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redis-variants/redis-variants/builder"
	"github.com/redis-variants/redis-variants/rank"
	"github.com/redis-variants/redis-variants/results"
	"github.com/redis-variants/redis-variants/variants"
)

type score struct {
	name, alloc         string
	vsStock             [3]float64 // score, lo, hi against stock-debian
	verdict             string
	vsOfficial          float64
	compilerFamily, opt string
}

type runFixture struct {
	id         string
	cpuRanking string // CPU model in ranking.json ("" = only in the trials)
	cpuTrials  string
	machine    string // machine.json x86_64_level ("" = none; level from build labels)
	arch       string // machine.json arch ("" = none)
	buildLevel string
	primary    string
	scores     []score
}

func writeRun(t *testing.T, root string, f runFixture) string {
	t.Helper()
	run, err := results.Open(filepath.Join(root, f.id))
	if err != nil {
		t.Fatal(err)
	}
	plan := variants.Plan{References: []variants.Variant{
		{Name: "official", Kind: variants.KindOfficial, Allocator: "jemalloc"},
		{Name: "stock-debian", Kind: variants.KindDistro, Allocator: "jemalloc"},
	}}
	st := rank.Standings{Runtime: "host", Primary: f.primary}
	for _, ref := range []string{"official", "stock-debian"} {
		st.Entries = append(st.Entries, rank.Entry{Image: ref, Reference: true, Score: 1, Lo: 1, Hi: 1,
			Versus: []rank.Score{{Reference: "stock-debian", Score: 1, Lo: 0.97, Hi: 1.03, Verdict: "tie"}}})
	}
	for i, s := range f.scores {
		fam, opt := s.compilerFamily, s.opt
		if fam == "" {
			fam = "gcc"
		}
		if opt == "" {
			opt = "O2"
		}
		v := variants.Variant{Name: s.name, Kind: variants.KindVariant, ID: "abcdef012345", Redis: "7.0.15",
			Compiler: variants.Compiler{Family: fam, Version: "12"}, Opt: opt, Allocator: s.alloc}
		plan.Variants = append(plan.Variants, v)
		b := builder.Result{Variant: v, Status: builder.StatusOK, Labels: map[string]string{"io.redis-variants.build.x86-64-level": f.buildLevel}}
		if err := run.WriteJSON("builds/"+s.name+".json", b); err != nil {
			t.Fatal(err)
		}
		st.Entries = append(st.Entries, rank.Entry{Image: s.name, Rank: i + 1, Score: rank.Num(s.vsStock[0]),
			Versus: []rank.Score{
				{Reference: "official", Score: rank.Num(s.vsOfficial), Lo: rank.Num(s.vsOfficial - 0.02), Hi: rank.Num(s.vsOfficial + 0.02), Verdict: "faster"},
				{Reference: "stock-debian", Score: rank.Num(s.vsStock[0]), Lo: rank.Num(s.vsStock[1]), Hi: rank.Num(s.vsStock[2]), Verdict: s.verdict},
			}})
	}
	rk := rank.Ranking{References: []string{"official", "stock-debian"}, Runtimes: []string{"host"}, Standings: []rank.Standings{st}}
	if f.cpuRanking != "" {
		rk.CPUModels = []string{f.cpuRanking}
	}
	must(t, run.WriteJSON("plan.json", plan))
	must(t, run.WriteJSON("ranking.json", rk))
	if f.cpuTrials != "" {
		must(t, run.WriteJSON("trials/x/host/SET-P1-0.json", rank.Trial{Variant: "x", CPUModel: f.cpuTrials, OpsPerSec: 1}))
	}
	if f.machine != "" || f.arch != "" {
		must(t, run.WriteJSON("machine.json", map[string]string{"x86_64_level": f.machine, "arch": f.arch}))
	}
	return run.Dir
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

const (
	xeon = "Intel(R) Xeon(R) CPU E5-2680 v4 @ 2.40GHz"
	epyc = "AMD EPYC 9654 96-Core Processor"
)

// fixtures: two runs on a Xeon (the later one re-measured jemalloc), one
// on an EPYC whose ranking names no CPU (the trials do) and whose primary
// reference is the official image, and a folder that is not a run.
func fixtures(t *testing.T) (string, []string) {
	root := t.TempDir()
	a := writeRun(t, root, runFixture{id: "20261101-000000", cpuRanking: xeon, buildLevel: "v3", primary: "stock-debian", scores: []score{
		{name: "gcc-o2-jemalloc", alloc: "jemalloc", vsStock: [3]float64{1.10, 1.05, 1.15}, verdict: "faster", vsOfficial: 1.01},
		{name: "gcc-o2-mimalloc", alloc: "mimalloc", vsStock: [3]float64{1.20, 1.16, 1.25}, verdict: "faster", vsOfficial: 1.1, compilerFamily: "clang"},
		{name: "gcc-o2-libc", alloc: "libc", vsStock: [3]float64{0.98, 0.95, 1.01}, verdict: "tie", vsOfficial: 0.9, opt: "O3"},
	}})
	b := writeRun(t, root, runFixture{id: "20261102-000000", cpuTrials: epyc, machine: "v4", buildLevel: "v3", primary: "official", scores: []score{
		{name: "gcc-o2-jemalloc", alloc: "jemalloc", vsStock: [3]float64{1.15, 1.10, 1.19}, verdict: "faster", vsOfficial: 1.05},
		{name: "gcc-o2-mimalloc", alloc: "mimalloc", vsStock: [3]float64{1.12, 1.08, 1.16}, verdict: "faster", vsOfficial: 1.02},
		{name: "gcc-o2-libc", alloc: "libc", vsStock: [3]float64{1.00, 0.97, 1.03}, verdict: "tie", vsOfficial: 0.93},
	}})
	c := writeRun(t, root, runFixture{id: "20261103-000000", cpuRanking: xeon, buildLevel: "v3", primary: "stock-debian", scores: []score{
		{name: "gcc-o2-jemalloc", alloc: "jemalloc", vsStock: [3]float64{1.12, 1.08, 1.15}, verdict: "faster", vsOfficial: 1.03},
	}})
	broken := filepath.Join(root, "20261104-000000")
	must(t, results.WriteFile(filepath.Join(broken, "ranking.json"), []byte("{not json")))
	return root, []string{a, b, c, broken}
}

func TestLoadAndBuildByAllocator(t *testing.T) {
	_, dirs := fixtures(t)
	rs, warnings, err := Load(dirs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 7 {
		t.Errorf("%d results, want 7 (3+3+1; references left out)", len(rs))
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "20261104-000000") {
		t.Errorf("warnings %q: want one, about the broken run", warnings)
	}
	for _, r := range rs {
		if r.Reference != "stock-debian" {
			t.Errorf("%s in %s scored against %s: want the stock reference even where the primary is another", r.Variant, r.Run, r.Reference)
		}
	}
	tb, err := Build(rs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(tb.Columns, ",") != "jemalloc,libc,mimalloc" || len(tb.Rows) != 2 {
		t.Fatalf("columns %v, %d rows", tb.Columns, len(tb.Rows))
	}
	x, e := tb.Rows[0], tb.Rows[1]
	if x.CPUModel != xeon || x.Level != "v3" || len(x.Runs) != 2 || e.CPUModel != epyc || e.Level != "v4" || len(e.Runs) != 1 {
		t.Fatalf("rows %+v / %+v: want the Xeon (v3, from build labels, 2 runs) then the EPYC (v4 from machine.json, CPU from trials)", x, e)
	}
	// Xeon: the later run's jemalloc counts; mimalloc is best and separated.
	if j := x.Cells[0].Result; j.Score != 1.12 || !strings.HasSuffix(j.Run, "20261103-000000") {
		t.Errorf("Xeon jemalloc = %+v, want 1.12 from the later run", j)
	}
	if !x.Cells[2].Best || x.Cells[0].Best || x.Cells[0].TiedBest || x.Cells[1].TiedBest {
		t.Errorf("Xeon marks %+v", x.Cells)
	}
	// EPYC: jemalloc best, mimalloc's interval overlaps it: tied.
	if !e.Cells[0].Best || !e.Cells[2].TiedBest || e.Cells[1].TiedBest {
		t.Errorf("EPYC marks %+v", e.Cells)
	}
	if got := CellText(x.Cells[1]); got != "≈0.980 [0.950, 1.010]" {
		t.Errorf("libc cell %q: want the tie with the reference marked", got)
	}
	if got := CellText(e.Cells[2]); got != "=1.120 [1.080, 1.160]" {
		t.Errorf("EPYC mimalloc cell %q: want the tie with the best marked", got)
	}

	var md bytes.Buffer
	must(t, tb.Markdown(&md))
	for _, want := range []string{
		"| CPU (x86-64 level) | runs | jemalloc | libc | mimalloc |",
		"| " + xeon + " (v3) | 2 | 1.120 [1.080, 1.150] gcc-o2-jemalloc | ≈0.980 [0.950, 1.010] gcc-o2-libc | **1.200 [1.160, 1.250]** gcc-o2-mimalloc |",
		"| " + epyc + " (v4) | 1 | **1.150 [1.100, 1.190]** gcc-o2-jemalloc |",
		"Score vs stock-debian",
	} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md.String())
		}
	}

	var cb bytes.Buffer
	must(t, tb.CSV(&cb))
	recs, err := csv.NewReader(&cb).ReadAll()
	if err != nil || len(recs) != 7 || recs[0][0] != "cpu_model" {
		t.Fatalf("csv: %v, %d records", err, len(recs))
	}
	if r := recs[3]; r[0] != xeon || r[3] != "mimalloc" || r[7] != "1.2" || r[11] != "true" {
		t.Errorf("csv row %v", r)
	}

	var hb bytes.Buffer
	must(t, tb.HTML(&hb))
	page := hb.String()
	i, j := strings.Index(page, "<svg"), strings.Index(page, "</svg>")
	if i < 0 || j < i {
		t.Fatal("no inline SVG in the page")
	}
	if err := wellFormed(page[i : j+len("</svg>")]); err != nil {
		t.Errorf("SVG is not well-formed XML: %v", err)
	}
	if strings.Count(page[i:j], "<rect") != 6+3 { // 6 bars + 3 legend swatches
		t.Errorf("SVG has %d rects, want 9", strings.Count(page[i:j], "<rect"))
	}
	for _, want := range []string{"Intel(R) Xeon(R)", `<td class="best">1.200 [1.160, 1.250]`} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(page, "<script") || strings.Contains(page, "http://") && !strings.Contains(page, `xmlns="http://www.w3.org/2000/svg"`) {
		t.Error("page is not self-contained")
	}
}

func wellFormed(s string) error {
	d := xml.NewDecoder(strings.NewReader(s))
	for {
		_, err := d.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

func TestOtherGroupingsAndReference(t *testing.T) {
	root, dirs := fixtures(t)
	rs, _, err := Load(dirs[:3], Options{})
	if err != nil {
		t.Fatal(err)
	}
	tb, _ := Build(rs, Options{By: ByCompiler})
	if strings.Join(tb.Columns, ",") != "clang-12,gcc-12" {
		t.Errorf("by compiler: columns %v", tb.Columns)
	}
	if c := tb.Rows[0].Cells[1]; c.Variants != 2 || c.Result.Variant != "gcc-o2-jemalloc" {
		t.Errorf("Xeon gcc-12 cell %+v: want the better of its two variants", c)
	}
	tb, _ = Build(rs, Options{By: ByOpt})
	if strings.Join(tb.Columns, ",") != "O2,O3" {
		t.Errorf("by opt: columns %v", tb.Columns)
	}
	tb, _ = Build(rs, Options{By: ByVariant})
	if len(tb.Columns) != 3 {
		t.Errorf("by variant: columns %v", tb.Columns)
	}
	if _, err := Build(rs, Options{By: "color"}); err == nil || !strings.Contains(err.Error(), "allocator, compiler, opt, variant") {
		t.Errorf("unknown grouping: %v", err)
	}

	rs, _, err = Load(dirs[:3], Options{Reference: "official"})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		if r.Reference != "official" || r.Verdict != "faster" {
			t.Errorf("%+v: want scores against official", r)
		}
	}
	if _, _, err := Load(dirs[:3], Options{Runtime: "bridge"}); err == nil || !strings.Contains(err.Error(), "no standings for runtime bridge") {
		t.Errorf("unknown runtime: %v", err)
	}
	found, err := RunDirs(root)
	if err != nil || len(found) != 4 {
		t.Errorf("RunDirs = %v %v, want the 4 folders with a ranking.json", found, err)
	}
	if found, _ := RunDirs(filepath.Join(root, "nope")); len(found) != 0 {
		t.Errorf("RunDirs of a missing folder: %v", found)
	}
}

// TestMemoryMetric: with --metric memory a cell is the reference's RSS
// after the churn over the variant's (> 1: less memory), its interval
// inverted, the best per allocator and CPU the one holding the least; a
// run without a memory workload is an error naming it.
func TestMemoryMetric(t *testing.T) {
	root := t.TempDir()
	dir := writeRun(t, root, runFixture{id: "20261201-000000", cpuRanking: epyc, buildLevel: "v4", primary: "stock-debian", scores: []score{
		{name: "gcc-o2-jemalloc", alloc: "jemalloc", vsStock: [3]float64{1.1, 1.05, 1.15}, verdict: "faster", vsOfficial: 1},
		{name: "gcc-o2-libc", alloc: "libc", vsStock: [3]float64{1, 0.97, 1.03}, verdict: "tie", vsOfficial: 1},
	}})
	if _, _, err := LoadRun(dir, Options{Metric: MetricMemory}); err == nil || !strings.Contains(err.Error(), "no memory workload") {
		t.Fatalf("a run without memory figures: %v", err)
	}
	run := &results.Run{Dir: dir}
	rk, err := run.Ranking()
	must(t, err)
	rk.Memory = &rank.MemoryRanking{Primary: "stock-debian", Entries: []rank.MemoryEntry{
		{Image: "gcc-o2-jemalloc", Allocator: "jemalloc-5.3.0", Rank: 1, Ratio: 0.8, Lo: 0.78, Hi: 0.82, Verdict: rank.Less},
		{Image: "stock-debian", Reference: true, Rank: 2, Ratio: 1, Lo: 1, Hi: 1, Verdict: rank.Self},
		{Image: "gcc-o2-libc", Allocator: "libc", Rank: 3, Ratio: 1.25, Lo: 1.2, Hi: 1.3, Verdict: rank.More},
	}}
	must(t, run.WriteRanking(rk))
	rs, _, err := LoadRun(dir, Options{Metric: MetricMemory})
	if err != nil || len(rs) != 2 {
		t.Fatalf("LoadRun: %v %+v", err, rs)
	}
	tab, err := Build(rs, Options{Metric: MetricMemory})
	must(t, err)
	var md strings.Builder
	must(t, tab.Markdown(&md))
	for _, want := range []string{"Memory vs stock-debian", "**1.250 [1.220, 1.282]** gcc-o2-jemalloc", "0.800 [0.769, 0.833] gcc-o2-libc"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("memory table lacks %q:\n%s", want, md.String())
		}
	}
}

// TestArm64Row: a run from an arm64 host (bench --images there, its
// results merged with --from) is a row of its own, labelled with its
// architecture rather than the x86-64 level its images' build machine had.
func TestArm64Row(t *testing.T) {
	root, dirs := fixtures(t)
	const n1 = "Arm Neoverse-N1 (e.g. AWS Graviton2)"
	arm := writeRun(t, root, runFixture{id: "20261105-000000", cpuRanking: n1, arch: "arm64", buildLevel: "v3", primary: "stock-debian", scores: []score{
		{name: "gcc-o2-jemalloc", alloc: "jemalloc", vsStock: [3]float64{1.05, 1.01, 1.09}, verdict: "faster", vsOfficial: 1.0},
	}})
	rs, _, err := Load(append(dirs, arm), Options{})
	if err != nil {
		t.Fatal(err)
	}
	tb, err := Build(rs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, r := range tb.Rows {
		if r.CPUModel == n1 {
			found = true
			if r.Level != "arm64" || r.Label() != n1+" (arm64)" || len(r.Runs) != 1 {
				t.Errorf("arm64 row %+v (label %q), want level arm64 from machine.json, one run", r, r.Label())
			}
		}
	}
	if !found || len(tb.Rows) != 3 {
		t.Errorf("%d rows, arm64 row found %v: want the Xeon, the EPYC and the arm64 machine", len(tb.Rows), found)
	}
}
