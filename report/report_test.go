package report

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"image/png"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/redis-variants/redis-variants/loadgen"
	"github.com/redis-variants/redis-variants/rank"
	"github.com/redis-variants/redis-variants/variants"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// fixture is a deterministic synthetic run: two references, three
// variants (20% faster, same as stock, 20% slower), two runtimes, three
// benchmarks, eight trials each, with latency histograms.
func fixture(t testing.TB) ([]rank.Trial, rank.Ranking, Context) {
	t.Helper()
	fixtureOnce.Do(func() { fix.trials, fix.ranking, fix.ctx = makeFixture(t) })
	return fix.trials, fix.ranking, fix.ctx
}

var (
	fixtureOnce sync.Once
	fix         struct {
		trials  []rank.Trial
		ranking rank.Ranking
		ctx     Context
	}
)

func makeFixture(t testing.TB) ([]rank.Trial, rank.Ranking, Context) {
	r := rand.New(rand.NewPCG(42, 1))
	speed := map[string]float64{"stock": 1, "official": 1.02, "fast": 1.2, "same": 1, "slow": 0.8}
	images := []string{"official", "stock", "fast", "same", "slow"}
	var ts []rank.Trial
	seq := 0
	for _, rt := range []string{"host", "bridge"} {
		rtf := map[string]float64{"host": 1, "bridge": 0.85}[rt]
		for _, test := range []string{"GET", "SET", "LRANGE_100"} {
			base := map[string]float64{"GET": 120000, "SET": 110000, "LRANGE_100": 40000}[test]
			for rep := 0; rep < 8; rep++ {
				for _, img := range images {
					ops := base * speed[img] * rtf * math.Exp(0.03*r.NormFloat64())
					h := hdrhistogram.New(1, 60_000_000, 3)
					med := 50 / ops * 1e6 // µs for 50 clients
					for i := 0; i < 400; i++ {
						h.RecordValue(int64(med * math.Exp(0.35*r.NormFloat64())))
					}
					enc, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
					if err != nil {
						t.Fatal(err)
					}
					ts = append(ts, rank.Trial{
						Variant: img, VariantID: "id-" + img, Reference: img == "stock" || img == "official",
						Runtime: rt, Test: test, Clients: 50, Pipeline: 1, Rep: rep, Seq: seq,
						OpsPerSec: ops, Requests: int64(ops * 5), AvgMs: med / 1000,
						P50Ms: float64(h.ValueAtQuantile(50)) / 1000, P99Ms: float64(h.ValueAtQuantile(99)) / 1000,
						P999Ms: float64(h.ValueAtQuantile(99.9)) / 1000, MaxMs: float64(h.Max()) / 1000,
						Hist: string(enc), ServerCPUNsPerOp: 1e9 / ops * 0.7, ClientCPUShare: 0.55,
						RSSBytes: 8 << 20, Fragmentation: 1.1, CPUModel: "Synthetic CPU @ 2.0GHz",
					})
					seq++
				}
			}
		}
	}
	th := rank.DefaultThresholds()
	th.Primary = "stock"
	th.Experiment = &variants.Experiment{Number: 5, Title: "six builds", Source: "a blog post", Here: "Redis 7.0.15, not 6.2.4.", Claims: []variants.Claim{
		{Label: "the tuned build", Published: "+4.4%", Ratio: 1.044, Measure: variants.MeasureThroughput, A: "fast", B: "stock", Runtime: "host"},
		{Label: "NAT", Published: "about 2x", Ratio: 2, Measure: variants.MeasureThroughput, A: "host", B: "bridge", Runtimes: true},
		{Label: "tail", Published: "23.60 vs 16.22 us", Ratio: 1.455, Measure: "p99.9", A: "host", B: "bridge", Runtimes: true},
	}}
	ctx := Context{
		RunID:   "20261129-000000",
		Profile: "quick: 50 clients, 5 s per trial, 1 s warm-up",
		Host:    "2 CPUs, Linux 6.1, Docker 20.10",
		Images: []ImageInfo{
			{Name: "fast", Kind: "variant", Image: "redis-variants/fast:0123456789ab", Digest: "sha256:0123456789abcdef0123", Compiler: "gcc-12", Flags: "-O3 -march=x86-64-v3 LTO full", Allocator: "jemalloc", Build: "ok 3m0s", Verify: "passed (quick)"},
		},
	}
	// Co-scheduled pairs under host: each image vs stock, and the A/A
	// control, 4 replicates (sides swapped in 2) x 3 windows per test.
	var reps []rank.Replicate
	for _, img := range images {
		for rep := 0; rep < 4; rep++ {
			ru := rank.Replicate{PairKey: rank.PairKey{Image: img, Runtime: "host", Base: "stock", BaseRuntime: "host"},
				Rep: rep, Seq: seq, Swapped: rep%2 == 1, ImageReference: img == "stock" || img == "official", CPUModel: "Synthetic CPU @ 2.0GHz"}
			seq++
			for _, test := range []string{"GET", "SET", "LRANGE_100"} {
				for w := 0; w < 3; w++ {
					lr := math.Log(speed[img]) + 0.004*r.NormFloat64()
					ru.Windows = append(ru.Windows, rank.Window{Test: test, Pipeline: 1, Index: w, LogRatio: lr,
						Image: rank.SideStats{Requests: 100000, CPUNanos: 150e6, CPUShare: 0.5},
						Base:  rank.SideStats{Requests: 100000, CPUNanos: uint64(150e6 * math.Exp(lr)), CPUShare: 0.5}})
				}
			}
			reps = append(reps, ru)
		}
	}
	rk := rank.Rank(ts, reps, th)
	rk.Experiment = rank.AnswerClaims(&rk)
	// The memory workload: three servers an image (the A/A control's too),
	// the libc build holding more, jemalloc defragmenting.
	var mem []rank.MemoryTrial
	for rep := 0; rep < 3; rep++ {
		for _, im := range []struct {
			name, alloc string
			rss         float64
			control     bool
		}{{"stock", "jemalloc-5.3.0", 100e6, false}, {"stock", "jemalloc-5.3.0", 100e6, true}, {"fast", "jemalloc-5.3.0", 99e6, false}, {"slow", "libc", 130e6, false}} {
			rss := im.rss * (1 + 0.005*r.NormFloat64())
			st := loadgen.MemStats{UsedMemory: 80e6, UsedMemoryRSS: int64(rss), FragRatio: rss / 80e6, Allocator: im.alloc}
			res := loadgen.MemoryResult{Dataset: 48 << 20, Phases: []loadgen.MemoryPhase{{Name: "fill", OpsPerSec: 60000, After: st}, {Name: "overwrite", After: st}, {Name: "delete", After: st}}}
			if im.alloc != "libc" {
				st.AllocatorFragRatio = 1.2
				res.Phases[2].After = st
				d := st
				d.UsedMemoryRSS = int64(rss * 0.92)
				res.Defrag, res.DefragCPU = true, 400*time.Millisecond
				res.Phases = append(res.Phases, loadgen.MemoryPhase{Name: "defrag", After: d})
			}
			mem = append(mem, rank.MemoryTrial{Image: im.name, Control: im.control, Rep: rep, Allocator: im.alloc, Result: res, PeakBytes: int64(rss * 1.1), Reference: im.name == "stock"})
		}
	}
	rk.Memory = rank.Memory(mem, "stock")
	return ts, rk, ctx
}

func TestMarkdownGolden(t *testing.T) {
	_, r, ctx := fixture(t)
	got := Markdown(r, ctx)
	golden := filepath.Join("testdata", "report.md.golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("reading golden file (run go test -update to create it): %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("report.md differs from %s (rerun with -update if the change is intended):\n%s", golden, got)
	}
	// Independent of the golden file: the facts the report must state.
	md := string(got)
	for _, want := range []string{
		"## Ranking under `host`", "## Ranking under `bridge`", "| 1 | `fast` |", "**faster**", "**slower**", "| tie |",
		"## Runtime effects", "bridge networking vs host networking", "## How this was measured", "Synthetic CPU @ 2.0GHz",
		"### LRANGE_100", "`stock` (reference)",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
}

func TestCSV(t *testing.T) {
	_, r, _ := fixture(t)
	b, err := CSV(r)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		t.Fatalf("report.csv does not parse: %v", err)
	}
	if len(rows) != len(r.Cells)+1 {
		t.Fatalf("%d rows, want %d cells + header", len(rows), len(r.Cells))
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	for _, h := range []string{"verdict_vs_stock", "ratio_vs_official", "ops_median", "cpu_ns_per_op"} {
		if _, ok := col[h]; !ok {
			t.Fatalf("no column %s in %v", h, rows[0])
		}
	}
	seen := map[string]bool{}
	for _, row := range rows[1:] {
		seen[row[col["image"]]+"/"+row[col["verdict_vs_stock"]]] = true
	}
	if !seen["stock/reference"] || !seen["slow/slower"] || !seen["same/tie"] {
		t.Errorf("verdicts in CSV: %v", seen)
	}
}

func TestJSONDocument(t *testing.T) {
	ts, r, ctx := fixture(t)
	b, err := JSON(r, ts, ctx)
	if err != nil {
		t.Fatal(err)
	}
	var d Document
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("report.json does not decode: %v", err)
	}
	if len(d.Trials) != len(ts) || d.Trials[0].Hist == "" || d.Ranking.Trials != len(ts) || d.Context.RunID != ctx.RunID {
		t.Errorf("report.json lost data: %d trials, hist %q, ranking trials %d", len(d.Trials), d.Trials[0].Hist[:10], d.Ranking.Trials)
	}
}

func TestCDFs(t *testing.T) {
	ts, r, _ := fixture(t)
	cdfs, errs := CDFs(r, ts)
	if len(errs) != 0 {
		t.Fatalf("decode errors: %v", errs)
	}
	if len(cdfs) != len(r.Runtimes)*len(r.Benches) {
		t.Fatalf("%d CDFs, want %d", len(cdfs), len(r.Runtimes)*len(r.Benches))
	}
	for _, c := range cdfs {
		if len(c.Series) != len(r.Images) {
			t.Fatalf("%s/%s: %d series, want %d", c.Runtime, c.Bench, len(c.Series), len(r.Images))
		}
		for _, s := range c.Series {
			if s.Count != 8*400 {
				t.Errorf("%s/%s/%s: %d latencies merged, want 3200", c.Runtime, c.Bench, s.Image, s.Count)
			}
			for i := 1; i < len(s.Points); i++ {
				if s.Points[i][0] < s.Points[i-1][0] || s.Points[i][1] < s.Points[i-1][1] {
					t.Fatalf("%s/%s/%s: CDF not monotone at %d: %v", c.Runtime, c.Bench, s.Image, i, s.Points)
				}
			}
			// The median of the merged histogram sits near the trials' p50.
			cs, _ := r.Cell(rank.Cell{Image: s.Image, Runtime: c.Runtime, Test: c.Bench, Pipeline: 1})
			var p50 float64
			for _, p := range s.Points {
				if p[1] >= 0.5 {
					p50 = p[0]
					break
				}
			}
			if math.Abs(p50/cs.P50Ms-1) > 0.1 {
				t.Errorf("%s/%s/%s: CDF median %.4f ms vs trials' p50 %.4f ms", c.Runtime, c.Bench, s.Image, p50, cs.P50Ms)
			}
		}
	}
	bad := append([]rank.Trial(nil), ts[:2]...) // a copy: the fixture is shared
	bad[0].Hist = "not a histogram"
	_, errs = CDFs(r, bad)
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), bad[0].Variant) {
		t.Errorf("bad histogram: errors %v, want one naming the trial", errs)
	}
}

func TestHTMLSelfContained(t *testing.T) {
	ts, r, ctx := fixture(t)
	b, err := HTML(r, ts, ctx)
	if err != nil {
		t.Fatal(err)
	}
	h := string(b)
	for _, bad := range []string{"src=", "<link", "@import", "url("} {
		if strings.Contains(h, bad) {
			t.Errorf("report.html references an outside resource (%q)", bad)
		}
	}
	if strings.Count(h, "http") != strings.Count(h, "http://www.w3.org/2000/svg") {
		t.Error("report.html mentions a URL other than the SVG namespace")
	}
	if n := strings.Count(h, `class="bar `); n < 2*5 {
		t.Errorf("%d score bars, want at least 10", n)
	}
	if n := strings.Count(h, `<svg class="cdf"`); n != 6 {
		t.Errorf("%d CDF charts, want 6", n)
	}
}

// layoutCheck is appended to the page under test only (never to the
// report itself): after the page's own script has run, it records on
// <html> how far the page scrolls sideways (and the widest elements that
// stick out of the viewport outside a scroll box), and any Markdown syntax
// left in the document's text (bold, code, links, headings, table rows,
// list markers), so --dump-dom shows both.
const layoutCheck = `<script>
document.addEventListener('DOMContentLoaded', function(){
  var root = document.documentElement, W = window.innerWidth;
  var over = root.scrollWidth - W, bad = [];
  document.querySelectorAll('body *').forEach(function(el){
    if (el.closest('.scroll')) return;
    var r = el.getBoundingClientRect();
    if (r.width > 0 && r.right > W + 1) bad.push(el.tagName.toLowerCase() + (el.className && el.className.baseVal === undefined ? '.' + el.className : '') + '(' + Math.round(r.right) + ')');
  });
  root.setAttribute('data-overflow', over + (bad.length ? ' ' + bad.slice(0, 6).join(' ') : ''));
  var body = document.body.cloneNode(true);
  body.querySelectorAll('script,style').forEach(function(s){ s.remove(); });
  var text = body.textContent, md = [];
  [/\*\*[^*\n]+\*\*/, /` + "`" + `[^` + "`" + `\n]+` + "`" + `/, /\]\([^)\s]*\)/, /^\s*#{1,6} \S/m, /\|\s*-{3,}\s*\|/, /^\s*[-*] \S/m].forEach(function(re){
    var m = text.match(re); if (m) md.push(m[0].trim().slice(0, 60));
  });
  root.setAttribute('data-markdown', md.join(' ; '));
});
</script>`

// TestHTMLInChromium renders the report and loads it in headless Chromium
// at a laptop's width and a phone's, with --dump-dom and --screenshot in
// one run each: the DOM after the page's script ran must show every CDF
// drawn, no error recorded by the page's error hook, no horizontal
// overflow of the page (wide tables and charts scroll inside their own
// box) and no Markdown syntax in its text; Chromium's stderr
// (--enable-logging=stderr --v=0) must hold no CONSOLE line, which is
// where uncaught exceptions and console messages go; each PNG must have
// the window's size and be far from blank. The screenshots and the
// reports are kept as artefacts: under $RV_ARTIFACTS/report-html, else
// .state/artifacts/report-html in the repository.
func TestHTMLInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("headless Chromium test skipped in -short mode")
	}
	bin := chromium(t)
	ts, r, ctx := fixture(t)
	dir := t.TempDir()
	if err := Write(dir, r, ts, ctx); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{MarkdownFile, CSVFile, JSONFile, HTMLFile} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Fatalf("Write did not write %s: %v", f, err)
		}
	}
	page, err := os.ReadFile(filepath.Join(dir, HTMLFile))
	if err != nil {
		t.Fatal(err)
	}
	checked := strings.Replace(string(page), "</body>", layoutCheck+"\n</body>", 1)
	if err := os.WriteFile(filepath.Join(dir, "checked.html"), []byte(checked), 0o644); err != nil {
		t.Fatal(err)
	}
	arts := artifactsDir(t)
	for _, f := range []string{MarkdownFile, HTMLFile} {
		if b, err := os.ReadFile(filepath.Join(dir, f)); err == nil {
			os.WriteFile(filepath.Join(arts, f), b, 0o644)
		}
	}
	url := "file://" + filepath.Join(dir, "checked.html")
	for _, size := range []struct {
		name string
		w, h int
	}{{"laptop", 1280, 900}, {"phone", 390, 844}} {
		t.Run(size.name, func(t *testing.T) {
			shot := filepath.Join(arts, "report-"+size.name+".png")
			dom, logs := runChromium(t, bin, dir, "--dump-dom", "--screenshot="+shot, fmt.Sprintf("--window-size=%d,%d", size.w, size.h), url)
			i := strings.Index(dom, "<html")
			if i < 0 {
				t.Fatalf("--dump-dom printed no document: %.300s", dom)
			}
			htmlTag := dom[i : i+strings.IndexByte(dom[i:], '>')+1]
			if strings.Contains(htmlTag, "data-js-errors") {
				t.Errorf("script errors on the page: %s", htmlTag)
			}
			if !strings.Contains(htmlTag, `data-cdfs-drawn="6"`) {
				t.Errorf("the inline script did not draw the 6 CDFs: %s", htmlTag)
			}
			if !strings.Contains(htmlTag, `data-overflow="0"`) && !strings.Contains(htmlTag, `data-overflow="-`) {
				t.Errorf("the page overflows sideways at %d px: %s", size.w, htmlTag)
			}
			if !strings.Contains(htmlTag, `data-markdown=""`) {
				t.Errorf("Markdown syntax in the page's text: %s", htmlTag)
			}
			if n := strings.Count(dom, `class="line`); n != 6*5 {
				t.Errorf("%d CDF lines in the DOM, want 30", n)
			}
			for _, l := range strings.Split(logs, "\n") {
				if strings.Contains(l, "CONSOLE") || strings.Contains(l, "Uncaught") {
					t.Errorf("browser console: %s", l)
				}
			}
			checkScreenshot(t, shot, size.w, size.h)
		})
	}
	// The answer comes first: the page's first section after the title.
	h1 := strings.Index(string(page), "<h1>")
	if a := strings.Index(string(page), `<section class="answer"`); a < h1 || strings.Contains(string(page)[h1:a], "<table") || strings.Contains(string(page)[h1:a], "<ul") {
		t.Errorf("the answer is not the first thing after the title")
	}
}

// artifactsDir is where the Chromium test keeps its screenshots.
func artifactsDir(t *testing.T) string {
	dir := os.Getenv("RV_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join("..", ".state", "artifacts")
	}
	dir = filepath.Join(dir, "report-html")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	abs, _ := filepath.Abs(dir)
	t.Logf("screenshots and reports kept in %s", abs)
	return abs
}

// checkScreenshot: a PNG of the window's size, far from blank.
func checkScreenshot(t *testing.T, shot string, w, h int) {
	t.Helper()
	f, err := os.Open(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot is not a PNG: %v", err)
	}
	bnd := img.Bounds()
	if bnd.Dx() != w || bnd.Dy() != h {
		t.Errorf("screenshot %v, want %d×%d", bnd, w, h)
	}
	colors := map[uint32]bool{}
	ink := 0
	for y := bnd.Min.Y; y < bnd.Max.Y; y += 2 {
		for x := bnd.Min.X; x < bnd.Max.X; x += 2 {
			r, g, b, _ := img.At(x, y).RGBA()
			colors[(r>>12)<<8|(g>>12)<<4|b>>12] = true
			if r < 0xe000 || g < 0xe000 || b < 0xe000 {
				ink++
			}
		}
	}
	total := bnd.Dx() * bnd.Dy() / 4
	t.Logf("%s: %d colours, %.1f%% ink", filepath.Base(shot), len(colors), 100*float64(ink)/float64(total))
	if len(colors) < 20 || float64(ink)/float64(total) < 0.02 {
		t.Errorf("screenshot looks blank: %d colours, %d of %d sampled pixels not white", len(colors), ink, total)
	}
}

func chromium(t *testing.T) string {
	for _, p := range []string{os.Getenv("CHROMIUM"), "/usr/bin/chromium", "/usr/bin/chromium-browser"} {
		if p == "" {
			continue
		}
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	t.Fatal("headless Chromium not found at /usr/bin/chromium (install Debian's package: apt-get install -y chromium, or set CHROMIUM)")
	return ""
}

// runChromium runs headless Chromium on url with a throw-away profile and
// returns its stdout and stderr.
func runChromium(t *testing.T, bin, dir string, args ...string) (stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + t.TempDir(), "--enable-logging=stderr", "--v=0"}
	cmd := exec.CommandContext(ctx, bin, append(base, args...)...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	cmd.Dir = dir
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %v: %v\n%s", args, err, e.String())
	}
	return o.String(), e.String()
}

// The contrasts the ranking holds get their own table, named with their
// label; a ranking without any has no such section.
func TestContrastsSection(t *testing.T) {
	var r rank.Ranking
	if strings.Contains(string(Markdown(r, Context{})), "## Contrasts") {
		t.Fatal("a contrasts section without contrasts")
	}
	r.Thresholds.Contrasts = []rank.Contrast{{Image: "gcc-pgo", Versus: "gcc", Label: "PGO vs the same flags without it"}}
	r.Contrasts = []rank.PairResult{
		{PairKey: rank.PairKey{Image: "gcc-pgo", Base: "gcc", Runtime: "host"}, Test: "LRANGE_100", Pipeline: 16, Family: rank.FamilyContrast,
			Estimate: rank.Estimate{Ratio: 1.21, Lo: 1.18, Hi: 1.24}, Verdict: rank.Faster},
		{PairKey: rank.PairKey{Image: "gcc-pgo", Base: "gcc", Runtime: "host"}, Family: rank.FamilyContrast,
			Estimate: rank.Estimate{Ratio: 1.004, Lo: 0.99, Hi: 1.02}, Verdict: rank.Tie},
	}
	md := string(Markdown(r, Context{}))
	for _, want := range []string{
		"## Contrasts",
		"| `gcc-pgo` | `gcc` (PGO vs the same flags without it) | `host` | LRANGE_100 P16 | 1.210 [1.180, 1.240] | **faster** |",
		"| score (geometric mean) | 1.004 [0.990, 1.020] | tie |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
}
