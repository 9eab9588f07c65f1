package bench

import (
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/redis-variants/redis-variants/engine"
	"github.com/redis-variants/redis-variants/machine"
	"github.com/redis-variants/redis-variants/rank"
	"github.com/redis-variants/redis-variants/results"
	"github.com/redis-variants/redis-variants/variants"
)

// The simulations run the bench's own code (the design, the sides, the
// layout draws each replicate runs, the stand-ins for lost benchmarks, the
// extension rounds toward the profile's target, the window judgement, the
// records in a run folder) and the rank stage's own analysis over a noise
// model in place of the Docker Engine and the generators (simMeter, a
// pairMeter), on simulated time. What they check is the promise of each
// interval the report prints: that it covers what it says it covers as
// often as its level says, under noise that holds what the estimator does
// not assume.

// simNoise is the model of the machine and the builds, from what was
// measured on this project's 2-vCPU VMs (shared/world.md; README).
type simNoise struct {
	name string
	// the machine, per window
	wave     float64 // sd of the vCPU's common log speed wave (0.16), AR(1) from window to window
	unshared float64 // share of the wave one server sees alone (they sample it at other instants)
	jitter   float64 // scale of each server's own t(3) jitter, log
	burstP   float64 // chance per window that a steal burst lands on one server
	burst    float64 // a burst's size, log, times |t(3)|
	// the servers, per replicate
	slotBias   float64 // slot A's bias, drawn in ±slotBias a campaign, log
	replicateS float64 // sd of a fresh server's own speed on a test, log (hash seeds, its memory)
	outlierP   float64 // chance that a fresh server is an outlier on a test
	outlier    float64 // scale of such an outlier, log, times t(3)
	// the builds and the runs
	layout    float64 // sd of a layout draw's own log speed (per binary: the same binary in every run)
	runEffect float64 // sd of each entry's run effect, log (per run)
	interact  float64 // image × wave: a tuned build's log ratio grows by interact × the machine's log speed
	runSpeed  float64 // sd of the machine's log speed over a whole run (the part of the wave a run keeps)
	// lost benchmarks: lossImage loses a benchmark in about lossP of its
	// replicates, on the slow side of the wave (where it is also slower,
	// with interact > 0): the stand-ins have to make up for them
	lossImage string
	lossP     float64
	// unequal is a spec whose layouts move it 3 times as much as the
	// others' (the pooled layout variance assumes they move alike)
	unequal string
	// spreadBy and layoutBy scale an entry's own replicate noise and its
	// layout draws' spread (0 in layoutBy: its draws are alike), so that
	// the images do not behave alike: what this machine shows (the musl
	// reference 1.4% a replicate, the others 0.5-0.9%)
	spreadBy, layoutBy map[string]float64
}

// measuredSim is fitted to this machine kind's runs: windows of one
// replicate within 0.5-1% (sd), fresh servers of one image about 1% a
// test apart, one replicate in ~30 with a test 15-20% off; layout draws
// of a build spec 0.5% apart (sd; a first guess, below what Mytkowicz et
// al. report for whole programs, checked against the runs' Layout draws
// section).
func measuredSim() simNoise {
	return simNoise{name: "measured", wave: 0.16, unshared: 0.03, jitter: 0.003, burstP: 0.05, burst: 0.04, slotBias: 0.01,
		replicateS: 0.006, outlierP: 0.03, outlier: 0.05, layout: 0.005}
}

// The noise models the bars are checked under: the measured one, and
// each effect the estimator does not assume added to it.
func simModels() []simNoise {
	m := measuredSim()
	with := func(name string, f func(*simNoise)) simNoise { n := m; n.name = name; f(&n); return n }
	return []simNoise{
		m,
		with("layout-1.5%", func(n *simNoise) { n.layout = 0.015 }),
		with("run-effect", func(n *simNoise) { n.runEffect = 0.004; n.runSpeed = 0.08; n.interact = 0.05 }),
		with("image×wave", func(n *simNoise) { n.interact = 0.08 }),
		with("lost-replicates", func(n *simNoise) { n.interact = 0.05; n.lossImage = "plus1"; n.lossP = 0.25 }),
		with("steal-storm", func(n *simNoise) { n.burstP = 0.25; n.burst = 0.06 }),
		with("layout-unequal", func(n *simNoise) { n.unequal = "plus1" }),
		heterogeneousSim(),
	}
}

// heterogeneousSim is the noise this machine's runs show when the images
// do not behave alike (issue 52): residual noise 3x apart between specs
// (a quiet twin-a at 0.5x, a noisy twin-b at 1.5x), layout variance zero
// for some specs (twin-a, plus1) and 1.5x the measured for another
// (twin-b), the extension in the loop, and replicates lost on the slow
// side of the wave by one image only (twin-b, the noisy one).
func heterogeneousSim() simNoise {
	n := measuredSim()
	n.name = "heterogeneous"
	n.interact = 0.05
	n.lossImage, n.lossP = "twin-b", 0.25
	n.spreadBy = map[string]float64{"twin-a": 0.5, "twin-b": 1.5, "big": 1.5}
	n.layoutBy = map[string]float64{"twin-a": 0, "plus1": 0, "twin-b": 1.5}
	return n
}

// simEntry is one entry of a simulated campaign.
type simEntry struct {
	name      string
	truth     float64 // the build spec's (or binary's) true speed over the primary reference's
	reference bool    // a fixed binary: one draw
	spread    float64 // its fresh servers' spread, times replicateS (1 if 0)
}

// simEntries mirror the default file: the primary reference, two more
// references (one with a wider spread, as the musl build here), and four
// tuned specs of four layout draws each: two identical specs (twin-a,
// twin-b), one a true 1% faster than the primary reference, one 9%.
func simEntries() []simEntry {
	return []simEntry{
		{name: "stock", truth: 1, reference: true},
		{name: "official", truth: 1.03, reference: true},
		{name: "alpine", truth: 0.85, reference: true, spread: 2},
		{name: "twin-a", truth: 1.05},
		{name: "twin-b", truth: 1.05},
		{name: "plus1", truth: 1.01},
		{name: "big", truth: 1.09},
	}
}

// simFile is the variants file whose quick profile and layout draws the
// campaigns take: the default one (SIM_FILE to try another design).
func simFile() string {
	if f := os.Getenv("SIM_FILE"); f != "" {
		return f
	}
	return "../variants.yaml"
}

// simDraws is how many layout draws a tuned spec is built as: the
// default file's layouts (SIM_DRAWS to try another).
var simDraws = func() int {
	if v := os.Getenv("SIM_DRAWS"); v != "" {
		var n int
		if _, err := fmt.Sscan(v, &n); err == nil && n > 0 {
			return n
		}
	}
	f, err := variants.Load(simFile())
	if err != nil {
		return 4
	}
	for _, v := range f.Variants {
		if v.Kind == variants.KindVariant && v.Layouts > 0 {
			return v.Layouts
		}
	}
	return 4
}()

// simBuild is one build of the campaign's entries: each tuned spec's
// draws' own log speeds (a run series shares its builds).
type simBuild map[string][]float64

func newSimBuild(r *rand.Rand, nz simNoise, es []simEntry) simBuild {
	b := simBuild{}
	for _, e := range es {
		n := simDraws
		if e.reference {
			n = 1
		}
		ds := make([]float64, n)
		sd := nz.layout
		if e.name == nz.unequal {
			sd *= 3
		}
		if k, ok := nz.layoutBy[e.name]; ok {
			sd *= k
		}
		for i := range ds {
			if !e.reference {
				ds[i] = sd * r.NormFloat64()
			}
		}
		b[e.name] = ds
	}
	return b
}

// simRun is one run's conditions: the slot bias, each entry's run effect
// and the machine's speed for the run.
type simRun struct {
	seed  uint64
	slot  float64
	rho   map[string]float64
	speed float64
}

func newSimRun(r *rand.Rand, nz simNoise, es []simEntry, seed uint64) simRun {
	ru := simRun{seed: seed, slot: (2*r.Float64() - 1) * nz.slotBias, rho: map[string]float64{}, speed: nz.runSpeed * r.NormFloat64()}
	for _, e := range es {
		if e.name != "stock" {
			ru.rho[e.name] = nz.runEffect * r.NormFloat64()
		}
	}
	return ru
}

// simClock is the session's simulated time.
type simClock struct{ t time.Time }

func (c *simClock) now() time.Time          { return c.t }
func (c *simClock) advance(d time.Duration) { c.t = c.t.Add(d) }

// simMeter measures pairs from the noise model: a replicate's pair of
// fresh servers gets its own speeds, each window the machine's wave.
type simMeter struct {
	nz      simNoise
	entries map[string]simEntry
	build   simBuild
	run     simRun
	clock   *simClock
}

// The simulated time a replicate takes: start, then each benchmark
// (about the 6.2 s a replicate of three benchmarks took on AMD).
const (
	simStart = 500 * time.Millisecond
	simBench = 1900 * time.Millisecond
)

func studentT3(r *rand.Rand) float64 {
	z := r.NormFloat64()
	c := 0.0
	for range 3 {
		x := r.NormFloat64()
		c += x * x
	}
	return z / math.Sqrt(c/3)
}

func (m *simMeter) open(ctx context.Context, rep *rank.Replicate) (pairRun, error) {
	m.clock.advance(simStart)
	h := fnv.New64a()
	fmt.Fprintf(h, "%s#%d", rep.PairKey, rep.Rep)
	r := rand.New(rand.NewPCG(m.run.seed, h.Sum64()))
	draw := 0
	if rep.Draw > 1 {
		draw = rep.Draw - 1
	}
	return &simPair{m: m, rep: rep, r: r, draw: draw, wave: m.nz.wave * r.NormFloat64(), proc: map[string][2]float64{}}, nil
}

type simPair struct {
	m    *simMeter
	rep  *rank.Replicate
	r    *rand.Rand
	draw int
	wave float64
	proc map[string][2]float64 // per test: each server's own speed on these fresh processes
}

// logTruth is the true log speed of the side's binary over the primary
// reference's in this run: the spec, its draw's layout, the run effect.
func (p *simPair) logTruth(name string, draw int) float64 {
	e := p.m.entries[name]
	return math.Log(e.truth) + p.m.build[name][draw] + p.m.run.rho[name]
}

func (p *simPair) measure(ctx context.Context, bn rank.Bench, first, n int) ([]rank.Window, []string, error) {
	m, nz, r := p.m, p.m.nz, p.r
	m.clock.advance(simBench)
	img, base := m.entries[p.rep.Image], m.entries[p.rep.Base]
	proc, ok := p.proc[bn.Test]
	if !ok {
		own := func(e simEntry) float64 {
			s := nz.replicateS
			if e.spread > 0 {
				s *= e.spread
			}
			if k, ok := nz.spreadBy[e.name]; ok {
				s *= k
			}
			l := s * r.NormFloat64()
			if r.Float64() < nz.outlierP {
				l += nz.outlier * studentT3(r)
			}
			return l
		}
		proc = [2]float64{own(img), own(base)}
		p.proc[bn.Test] = proc
	}
	wins := make([]rank.Window, n)
	reasons := make([]string, n)
	for k := range n {
		p.wave = 0.7*p.wave + math.Sqrt(1-0.49)*nz.wave*r.NormFloat64()
		wave := p.wave - m.run.speed // the run's speed: negative is slow
		side := func(name string, draw int, own float64, inSlotA bool) float64 {
			l := -p.logTruth(name, draw) + wave + nz.unshared*nz.wave*r.NormFloat64() + nz.jitter*studentT3(r) + own
			if !m.entries[name].reference {
				l += nz.interact * wave // a tuned build gains more where the machine is fast
			}
			if inSlotA {
				l += m.run.slot
			}
			return l
		}
		li := side(img.name, p.draw, proc[0], !p.rep.Swapped)
		lb := side(base.name, 0, proc[1], p.rep.Swapped)
		steal := 0.0
		if r.Float64() < nz.burstP {
			b := nz.burst * math.Abs(studentT3(r))
			steal = b / 2
			if r.IntN(2) == 0 {
				li += b
			} else {
				lb += b
			}
		}
		busy := 1.0
		if img.name == nz.lossImage && wave > 0 && r.Float64() < 2*nz.lossP {
			busy = 0.85 // the generators could not keep the pair busy: the window is rejected
		}
		const reqs = 500000
		w := rank.Window{Test: bn.Test, Pipeline: bn.Pipeline, Index: first + k, Started: m.clock.now(), Wall: time.Second,
			Steal: steal, CoreBusy: busy, ClientBusy: 0.4, Load: results.Load{Clients: 25},
			Image: rank.SideStats{Requests: reqs, CPUNanos: uint64(reqs * 1000 * math.Exp(li)), CPUShare: (1 - steal) / 2},
			Base:  rank.SideStats{Requests: reqs, CPUNanos: uint64(reqs * 1000 * math.Exp(lb)), CPUShare: (1 - steal) / 2}}
		reasons[k] = finishWindow(&w, MinSaturation)
		wins[k] = w
	}
	return wins, reasons, nil
}

func (p *simPair) close() {}

// simEngine is the Engine of a simulated bench: it has nothing to sweep
// and starts no server (the meter stands in for every pair).
type simEngine struct{}

func (simEngine) SweepMatching(context.Context, map[string]string) (int, error) { return 0, nil }
func (simEngine) StartServer(context.Context, engine.ServerSpec) (*engine.Server, error) {
	return nil, fmt.Errorf("simulated bench: no server is started")
}
func (simEngine) WaitReady(context.Context, *engine.Server, time.Duration) error { return nil }
func (simEngine) Remove(context.Context, string) error                           { return nil }
func (simEngine) CPUUsageNanos(context.Context, string) (uint64, error)          { return 0, nil }

// simProfile is the quick profile of the default file, without the
// standalone trials and the memory servers (which do not rank).
func simProfile(t testing.TB) variants.Profile {
	t.Helper()
	p, err := variants.Load(simFile())
	if err != nil {
		t.Fatal(err)
	}
	q := p.Profiles["quick"]
	q.Memory = nil
	return q
}

// simImages are the campaign's images as the bench gets them.
func simImages(es []simEntry) []Image {
	var out []Image
	for _, e := range es {
		im := Image{Name: e.name, ImageID: "sha256:sim-" + e.name, Ref: "sim/" + e.name, Reference: e.reference, Verified: "passed"}
		if !e.reference {
			for k := 2; k <= simDraws; k++ {
				n := variants.DrawName(e.name, k)
				im.Draws = append(im.Draws, Image{Name: n, ImageID: "sha256:sim-" + n, Ref: "sim/" + n, Verified: "passed"})
			}
		}
		out = append(out, im)
	}
	return out
}

// simRoot is where the campaigns' run folders go: memory when the
// machine has /dev/shm (each campaign writes ~300 records).
func simRoot(t testing.TB) string {
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		if d, err := os.MkdirTemp("/dev/shm", "redis-variants-sim-"); err == nil {
			t.Cleanup(func() { os.RemoveAll(d) })
			return d
		}
	}
	return t.TempDir()
}

// simRunFolder opens the run folder dir for a simulated bench under
// prof, its one runtime calibrated (25 clients a benchmark).
func simRunFolder(t testing.TB, dir string, prof variants.Profile) (*results.Run, variants.Runtime) {
	t.Helper()
	run, err := results.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	host, _ := machine.Read()
	rt := variants.Runtime{Name: "host", Network: "host", ServerCPUs: "0", ClientCPUs: "1"}
	cal := results.Calibration{Image: "stock", ImageRef: "sim/stock", Runtime: rt.Name, CPUModel: host.CPUModel, Duration: prof.Duration}
	for _, b := range profileBenches(prof) {
		cal.Benches = append(cal.Benches, results.BenchCalibration{Bench: b, Load: results.Load{Clients: 25}})
	}
	if err := run.WriteJSON(results.CalibrationFile, cal); err != nil {
		t.Fatal(err)
	}
	return run, rt
}

// simBencher is the real Bencher on run, its time the simulated clock's
// and its pairs measured by meter.
func simBencher(t testing.TB, run *results.Run, rt variants.Runtime, prof variants.Profile, seed int64, clock *simClock, meter pairMeter) *Bencher {
	t.Helper()
	b, err := New(Options{Run: run, Engine: simEngine{}, Runtimes: []variants.Runtime{rt}, Profile: prof, Primary: "stock",
		Trials: -1, Seed: seed, Generator: InProcess{}, Settle: -1})
	if err != nil {
		t.Fatal(err)
	}
	b.now, b.meter = clock.now, meter
	return b
}

// simCampaign benches the entries once through the real Bencher with m
// underneath and ranks what it wrote with the rank stage.
func simCampaign(t testing.TB, root string, prof variants.Profile, es []simEntry, m *simMeter, seed int64) (*rank.Ranking, Summary) {
	t.Helper()
	dir, err := os.MkdirTemp(root, "run-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	run, rt := simRunFolder(t, dir, prof)
	m.clock = &simClock{t: time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC)}
	b := simBencher(t, run, rt, prof, seed, m.clock, m)
	sum, err := b.Bench(context.Background(), simImages(es))
	if err != nil {
		t.Fatalf("simulated bench: %v", err)
	}
	reps, skipped, err := results.LoadReplicates(run)
	if err != nil || len(skipped) > 0 {
		t.Fatalf("reading the simulated run: %v %v", err, skipped)
	}
	th := rank.DefaultThresholds()
	th.Resolution = prof.Resolution // the answer's precision, as the pipeline sets it
	th.Looks = prof.Looks
	rk, err := (&rank.Ranker{Thresholds: th}).Rank(context.Background(), nil, reps)
	if err != nil {
		t.Fatal(err)
	}
	return rk, sum
}

// simSetup is what every simulation starts from: the quick profile, the
// campaign's entries (and by name) and the folder for its run folders.
func simSetup(t *testing.T) (variants.Profile, []simEntry, map[string]simEntry, string) {
	t.Helper()
	if testing.Short() {
		t.Skip("whole simulated campaigns: make test runs them")
	}
	es := simEntries()
	entries := map[string]simEntry{}
	for _, e := range es {
		entries[e.name] = e
	}
	return simProfile(t), es, entries, simRoot(t)
}

// simTally counts what the bars are about over many campaigns.
type simTally struct {
	campaigns int
	// per-interval families at 95%: covered, intervals
	score, scoreSpec, perTest, control [2]int
	simultaneous                       int // campaigns whose Bonferroni intervals over every pair of the family all cover
	familyErrors                       int // campaigns with a separated pair that is truly equal or reversed in the run
	specErrors                         int // ... whose build specs are equal or reversed (the claim a reader may take)
	twinTie, plus1Found, aaAlarm       int
	badPrint                           int
	replicates, standIns, extension    int
	looks                              int // looks a sequential bench took, over the campaigns
	resolution                         []float64
	layoutShare                        []float64
	noAnswer                           int       // campaigns whose ranking gives no answer
	shipWrong, shipRight               int       // the decision settled on an entry not truly the fastest (tied with it included); on the true fastest
	minDF                              float64   // the fewest df of any estimate with an interval
	widest                             []float64 // each campaign's widest primary half-width
}

func (a *simTally) cov(c [2]int) float64 { return float64(c[0]) / float64(max(c[1], 1)) }
func (a *simTally) frac(n int) float64   { return float64(n) / float64(max(a.campaigns, 1)) }

// add counts one campaign's ranking: truth is each entry's true log
// ratio to the primary reference in this run, spec its build spec's.
func (a *simTally) add(t testing.TB, rk *rank.Ranking, sum Summary, truth, spec map[string]float64) {
	t.Helper()
	a.campaigns++
	if a.campaigns == 1 {
		a.minDF = math.Inf(1)
	}
	if !rk.Answer.Given {
		a.noAnswer++
	}
	widest := 0.0
	for _, p := range rk.Pairs {
		if p.Lo.IsNaN() || !(p.DF > 0) {
			continue
		}
		a.minDF = math.Min(a.minDF, float64(p.DF))
		if p.Family == rank.FamilyPrimary {
			widest = math.Max(widest, p.HalfWidth())
		}
	}
	a.widest = append(a.widest, widest)
	if d, ok := rk.Decision("host"); ok && d.Settled {
		best := true
		for n, tr := range truth {
			if n != d.Leader && !(truth[d.Leader]-tr > 1e-9) {
				best = false
			}
		}
		if best {
			a.shipRight++
		} else {
			a.shipWrong++
		}
	}
	const conf = 0.95
	cover := func(c *[2]int, e rank.Estimate, tr float64, level float64) {
		lo, hi := rank.Interval(e, level)
		if math.IsNaN(lo) {
			return
		}
		c[1]++
		if math.Log(lo) <= tr && tr <= math.Log(hi) {
			c[0]++
		}
	}
	type est struct {
		name string
		e    rank.Estimate
	}
	var prim []est
	for _, p := range rk.Pairs {
		switch {
		case p.Kind == rank.KindControl && p.Test == "":
			cover(&a.control, p.Estimate, 0, conf)
			if float64(p.P) < 0.05 {
				a.aaAlarm++
			}
		case p.Kind == rank.KindControl:
		case p.Family == rank.FamilyPrimary:
			cover(&a.score, p.Estimate, truth[p.Image], conf)
			cover(&a.scoreSpec, p.Estimate, spec[p.Image], conf)
			prim = append(prim, est{p.Image, p.Estimate})
			if (p.Verdict == rank.Tie) != (p.Lo <= 1 && 1 <= p.Hi) {
				a.badPrint++
			}
			if p.Image == "plus1" && p.Verdict == rank.Faster {
				a.plus1Found++
			}
		case p.Test != "" && p.Kind == rank.KindImage:
			cover(&a.perTest, p.Estimate, truth[p.Image], conf)
		}
	}
	// The family: every pair of entries, the primary reference's score 0
	// with no error, at the Bonferroni level over all of them.
	prim = append(prim, est{"stock", rank.Estimate{LogMean: 0, SE: 0, DF: rank.Num(math.Inf(1))}})
	m := len(prim) * (len(prim) - 1) / 2
	all := true
	for i := range prim {
		for j := i + 1; j < len(prim); j++ {
			x, y := prim[i].e, prim[j].e
			va, vb := float64(x.SE*x.SE), float64(y.SE*y.SE)
			df := float64(x.DF)
			switch {
			case va == 0:
				df = float64(y.DF)
			case vb > 0:
				df = (va + vb) * (va + vb) / (va*va/float64(x.DF) + vb*vb/float64(y.DF))
			}
			d := rank.Estimate{LogMean: x.LogMean - y.LogMean, SE: rank.Num(math.Sqrt(va + vb)), DF: rank.Num(df)}
			var c [2]int
			cover(&c, d, truth[prim[i].name]-truth[prim[j].name], 1-(1-conf)/float64(m))
			if c[0] != c[1] {
				all = false
			}
		}
	}
	if all {
		a.simultaneous++
	}
	st, _ := rk.Standing("host")
	wrong, wrongSpec := false, false
	for _, p := range st.Pairs {
		if p.Separated && !(truth[p.Higher]-truth[p.Lower] > 1e-9) {
			wrong = true
		}
		if p.Separated && !(spec[p.Higher]-spec[p.Lower] > 1e-9) {
			wrongSpec = true
		}
		if (p.Higher == "twin-a" && p.Lower == "twin-b" || p.Higher == "twin-b" && p.Lower == "twin-a") && !p.Separated {
			a.twinTie++
		}
	}
	if wrong {
		a.familyErrors++
	}
	if wrongSpec {
		a.specErrors++
	}
	a.replicates += sum.Replicates
	a.standIns += sum.StandIns
	if sum.Extension != nil {
		a.extension += sum.Extension.Added
	}
	if sum.Sequential != nil {
		a.extension += sum.Sequential.Added
		a.looks += len(sum.Sequential.Taken)
	}
	a.resolution = append(a.resolution, float64(rk.Resolution.Median))
	for _, l := range rk.Layouts {
		a.layoutShare = append(a.layoutShare, float64(l.Share))
	}
}

func (a *simTally) row(name string) string {
	pct := func(x float64) string { return fmt.Sprintf("%.1f%%", 100*x) }
	return fmt.Sprintf("| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %.0f (%.1f stand-ins, %.1f added) | ±%.2f%% | %s | %.2f | ±%.2f%% | %s | %s |",
		name, a.campaigns, pct(a.cov(a.score)), pct(a.cov(a.scoreSpec)), pct(a.cov(a.perTest)), pct(a.cov(a.control)),
		pct(a.frac(a.simultaneous)), pct(a.frac(a.familyErrors)), pct(a.frac(a.specErrors)), pct(a.frac(a.plus1Found)), pct(a.frac(a.twinTie)), pct(a.frac(a.aaAlarm)),
		float64(a.replicates)/float64(a.campaigns), float64(a.standIns)/float64(a.campaigns), float64(a.extension)/float64(a.campaigns),
		100*median(a.resolution), pct(a.frac(a.noAnswer)), a.minDF, 100*maxOf(a.widest), pct(a.frac(a.shipRight)), pct(a.frac(a.shipWrong)))
}

func maxOf(x []float64) float64 {
	m := math.NaN()
	for _, v := range x {
		if math.IsNaN(m) || v > m {
			m = v
		}
	}
	return m
}

const simHeader = "| model | campaigns | score 95% covers the run's truth | covers the spec | per-test 95% | A/A 95% | family simultaneous | family error in the run | about the specs | +1% found | identical specs tied | A/A p<.05 | replicates a campaign | median resolution | no answer | fewest df | widest half-width | ship the true fastest | ship another |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|"

func median(x []float64) float64 {
	s := append([]float64(nil), x...)
	sort.Float64s(s)
	if len(s) == 0 {
		return math.NaN()
	}
	return s[len(s)/2]
}

// simCampaigns is how many campaigns each model runs (SIM_CAMPAIGNS).
func simCampaigns(t testing.TB, def int) int {
	if v := os.Getenv("SIM_CAMPAIGNS"); v != "" {
		var n int
		if _, err := fmt.Sscan(v, &n); err == nil && n > 0 {
			return n
		}
		t.Fatalf("SIM_CAMPAIGNS=%q: want a positive number", v)
	}
	return def
}

// simBand is how far a share measured over n trials may sit from its
// nominal level p: 1.5 points, or the simulation's own 99% sampling band
// where n trials cannot resolve 1.5 points.
func simBand(p float64, n int) float64 {
	return max(0.015, 2.576*math.Sqrt(p*(1-p)/float64(max(n, 1))))
}

// simTruths are each entry's true log ratio to the primary reference in
// run ru of build b (what a single run's interval covers: the spec, its
// draws being a sample of its layouts, moved by the run's effect and, for
// a tuned build, by the run's machine speed), and its spec's.
func simTruths(es []simEntry, nz simNoise, ru simRun) (truth, spec map[string]float64) {
	truth, spec = map[string]float64{}, map[string]float64{}
	for _, e := range es {
		spec[e.name] = math.Log(e.truth)
		truth[e.name] = spec[e.name] + ru.rho[e.name] + nz.interact*ru.speed*b2f(!e.reference)
	}
	return truth, spec
}

// TestSimulatedCampaigns runs whole quick-profile campaigns of the
// default file's shape through the bench and the rank stage under each
// noise model and checks the bars: each 95% interval family covers its
// truth no less than 1.5 points under 95% and no more than 3 over
// (simBand: the score of each image, of each image on each test, the A/A
// control), the family's simultaneous
// intervals cover together in at least 95% less that, its verdicts are
// wrong (a truly equal or reversed pair separated) in at most 5% plus
// that, two identical build specs are tied in at least 95%, and every
// printed interval agrees with its verdict. A true 1% faster build spec
// is found in far fewer than the 80% the issue asked (see simPowerFloor).
// The seeds are fixed: the same figures on every machine.
// SIM_CAMPAIGNS=1000 go test -run TestSimulatedCampaigns -v ./bench
// prints the table the README gives.
func TestSimulatedCampaigns(t *testing.T) {
	prof, es, entries, root := simSetup(t)
	n := simCampaigns(t, 150)
	models := simModels()
	rows := make([]string, len(models))
	t.Run("models", func(t *testing.T) {
		for mi, nz := range models {
			if only := os.Getenv("SIM_MODEL"); only != "" && only != nz.name {
				continue
			}
			t.Run(nz.name, func(t *testing.T) {
				t.Parallel()
				var a simTally
				r := rand.New(rand.NewPCG(uint64(2026+mi), 12))
				for k := range n {
					seed := uint64(mi)<<32 | uint64(k)
					m := &simMeter{nz: nz, entries: entries, build: newSimBuild(r, nz, es), run: newSimRun(r, nz, es, seed)}
					rk, sum := simCampaign(t, root, prof, es, m, int64(seed)+1)
					truth, spec := simTruths(es, nz, m.run)
					a.add(t, rk, sum, truth, spec)
				}
				rows[mi] = a.row(nz.name)
				t.Log(rows[mi])
				a.check(t, nz)
			})
		}
	})
	var out []string
	for _, r := range rows {
		if r != "" {
			out = append(out, r)
		}
	}
	t.Logf("simulated campaigns (quick profile, 7 entries, %d layout draws a tuned spec, %d campaigns a model):\n%s\n%s", simDraws, n, simHeader, strings.Join(out, "\n"))
}

// simPowerFloor is the share of quick campaigns that must find the true
// 1% faster build spec in the full ranking: the quick profile's looks
// give replicates to the decision's open comparisons, not to plus1 (far
// behind the leader, it keeps its first 6 replicates, one a draw, on
// draws − 2 df), so the full ranking finds it in about 14% of campaigns
// under the measured noise (29.7% with the fixed 12 replicates before
// the looks); the floor is that less its sampling band. The full
// ranking's power is the full profile's work (--profile full).
const simPowerFloor = 0.10

func (a *simTally) check(t *testing.T, nz simNoise) {
	t.Helper()
	// Under-coverage is a false claim: at most the band below. Over-
	// coverage is caution that costs power (heavy-tailed noise makes a t
	// interval conservative: the per-test intervals here cover 96-97%):
	// at most twice the band above.
	within := func(what string, c [2]int, want float64) {
		got, band := a.cov(c), simBand(want, c[1])
		if got < want-band || got > want+2*band {
			t.Errorf("%s: %s covered %.1f%% of %d, want %.0f%% (−%.1f, +%.1f)", nz.name, what, 100*got, c[1], 100*want, 100*band, 200*band)
		}
	}
	within("each image's score interval", a.score, 0.95)
	within("each image's per-test interval", a.perTest, 0.95)
	within("the A/A control's interval", a.control, 0.95)
	if band := simBand(0.95, a.campaigns); a.frac(a.simultaneous) < 0.95-band {
		t.Errorf("%s: the family's simultaneous intervals all covered in %.1f%% of campaigns, want ≥ %.1f%%", nz.name, 100*a.frac(a.simultaneous), 100*(0.95-band))
	}
	if band := simBand(0.05, a.campaigns); a.frac(a.familyErrors) > 0.05+band {
		t.Errorf("%s: a truly equal or reversed pair separated in %.1f%% of campaigns, want ≤ %.1f%%", nz.name, 100*a.frac(a.familyErrors), 100*(0.05+band))
	}
	// with a run effect, two identical specs differ in any one run: a
	// single run's tie is not promised there (the merged runs' is,
	// TestSimulatedRunSeries)
	if band := simBand(0.95, a.campaigns); nz.runEffect == 0 && a.frac(a.twinTie) < 0.95-band {
		t.Errorf("%s: identical build specs tied in %.1f%% of campaigns, want ≥ %.1f%% (95%% less the simulation's band)", nz.name, 100*a.frac(a.twinTie), 100*(0.95-band))
	}
	if nz.name == "measured" && a.frac(a.plus1Found) < simPowerFloor {
		t.Errorf("%s: a true 1%% faster build spec found in %.1f%% of campaigns, want ≥ %.0f%% (the quick profile's full ranking; the decision is its question)", nz.name, 100*a.frac(a.plus1Found), 100*simPowerFloor)
	}
	// the decision's claim "ship X" is wrong (X not strictly the fastest
	// in the run) in at most 5% of campaigns, less the band
	if band := simBand(0.05, a.campaigns); a.frac(a.shipWrong) > 0.05+band {
		t.Errorf("%s: the decision settled on an entry that is not the fastest in %.1f%% of campaigns, want ≤ %.1f%%", nz.name, 100*a.frac(a.shipWrong), 100*(0.05+band))
	}
	if a.badPrint > 0 {
		t.Errorf("%s: %d printed intervals disagree with their verdicts", nz.name, a.badPrint)
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// TestSimulatedRunSeries runs series of three campaigns of the same
// builds (the same layout draws in each, as three runs of one file on one
// machine), each run with its own conditions, and merges each series as
// compare and history do (rank.Merge: one run effect for every image).
// The merged 95% intervals claim the build specs on this machine kind
// (each run's layout error is kept whole, the runs sharing their draws):
// they must cover the specs within the band; how often they cover these
// binaries (the spec and its draws' own layouts) is reported. Identical
// specs must tie in 95% of merged series, with a run effect too.
func TestSimulatedRunSeries(t *testing.T) {
	prof, es, entries, root := simSetup(t)
	n := simCampaigns(t, 150) / 3
	m := measuredSim()
	models := []simNoise{m, func() simNoise {
		x := m
		x.name = "run-effect"
		x.runEffect = 0.004
		x.runSpeed = 0.08
		x.interact = 0.05
		return x
	}()}
	rows := make([]string, len(models))
	t.Run("models", func(t *testing.T) {
		for mi, nz := range models {
			t.Run(nz.name, func(t *testing.T) {
				t.Parallel()
				r := rand.New(rand.NewPCG(uint64(4052+mi), 3))
				var cover, coverSpec [2]int
				tied, found, tauRuns := 0, 0, 0
				var taus []float64
				for k := range n {
					build := newSimBuild(r, nz, es)
					var runs []rank.RunScores
					for j := range 3 {
						seed := uint64(100+mi)<<32 | uint64(3*k+j)
						sm := &simMeter{nz: nz, entries: entries, build: build, run: newSimRun(r, nz, es, seed)}
						rk, _ := simCampaign(t, root, prof, es, sm, int64(seed)+1)
						runs = append(runs, rank.RunScores{Name: fmt.Sprintf("run-%d", j), Ranking: *rk})
					}
					mg, err := rank.Merge(runs, "host", rank.DefaultThresholds())
					if err != nil {
						t.Fatal(err)
					}
					if mg.RunEffect != nil {
						tauRuns++
						taus = append(taus, float64(mg.RunEffect.Tau))
					}
					for _, im := range mg.Images {
						spec := math.Log(entries[im.Image].truth)
						bin := spec
						for _, d := range build[im.Image] {
							bin += d / float64(len(build[im.Image]))
						}
						lo, hi := rank.Interval(im.Estimate, 0.95)
						if math.IsNaN(lo) {
							continue
						}
						cover[1]++
						coverSpec[1]++
						if math.Log(lo) <= bin && bin <= math.Log(hi) {
							cover[0]++
						}
						if math.Log(lo) <= spec && spec <= math.Log(hi) {
							coverSpec[0]++
						}
					}
					if mg.Standings.Tied("twin-a", "twin-b") {
						tied++
					}
					for _, p := range mg.Standings.Pairs {
						if p.Higher == "plus1" && p.Lower == "stock" && p.Separated {
							found++
						}
					}
				}
				f := func(c [2]int) float64 { return float64(c[0]) / float64(max(c[1], 1)) }
				rows[mi] = fmt.Sprintf("| %s | %d series of 3 | %.1f%% | %.1f%% | %.1f%% | %.1f%% | %.2f%% |", nz.name, n, 100*f(cover), 100*f(coverSpec),
					100*float64(tied)/float64(n), 100*float64(found)/float64(n), 100*median(taus))
				t.Log(rows[mi])
				if got, band := f(coverSpec), simBand(0.95, coverSpec[1]); math.Abs(got-0.95) > band {
					t.Errorf("%s: merged intervals covered the build specs in %.1f%% of %d, want 95%% ± %.1f", nz.name, 100*got, coverSpec[1], 100*band)
				}
				if got, band := float64(tied)/float64(n), simBand(0.95, n); got < 0.95-band {
					t.Errorf("%s: identical specs tied in %.1f%% of %d merged series, want ≥ %.1f%% (95%% less its band)", nz.name, 100*got, n, 100*(0.95-band))
				}
			})
		}
	})
	t.Logf("merged series (three quick campaigns of the same builds, rank.Merge):\n| model | series | merged 95%% covers the binaries | covers the spec | identical specs tied | +1%% found | run effect tau (median) |\n|---|---|---:|---:|---:|---:|---:|\n%s", strings.Join(rows, "\n"))
}

// TestSimulatedDecision runs the decision's two questions through the
// real bench and rank stage, under the measured noise and the
// heterogeneous one: with two identical specs at the top ("tied
// leaders"), "ship X" must be claimed in at most 5% of campaigns (less
// the simulation's band); with one spec a true 2% ahead of the next
// ("2% lead"), how often it is settled as the fastest is the power,
// reported (the quick profile's design finds it in about half the runs
// here; the issue asks 90%, see the closing note).
// SIM_CAMPAIGNS=1000 go test -run TestSimulatedDecision -v ./bench
func TestSimulatedDecision(t *testing.T) {
	prof, _, _, root := simSetup(t)
	n := simCampaigns(t, 150)
	sets := []struct {
		name string
		top  [3]float64 // twin-a, twin-b, big
	}{
		{"tied leaders", [3]float64{1.071, 1.071, 1.05}},
		{"2% lead", [3]float64{1.05, 1.05, 1.071}},
	}
	var rows []string
	for _, set := range sets {
		es := simEntries()
		for i := range es {
			switch es[i].name {
			case "twin-a":
				es[i].truth = set.top[0]
			case "twin-b":
				es[i].truth = set.top[1]
			case "big":
				es[i].truth = set.top[2]
			}
		}
		entries := map[string]simEntry{}
		for _, e := range es {
			entries[e.name] = e
		}
		for mi, nz := range []simNoise{measuredSim(), heterogeneousSim()} {
			var a simTally
			r := rand.New(rand.NewPCG(uint64(5200+mi), uint64(len(set.name))))
			for k := range n {
				seed := uint64(52+mi)<<32 | uint64(k)
				m := &simMeter{nz: nz, entries: entries, build: newSimBuild(r, nz, es), run: newSimRun(r, nz, es, seed)}
				rk, sum := simCampaign(t, root, prof, es, m, int64(seed)+1)
				truth, spec := simTruths(es, nz, m.run)
				a.add(t, rk, sum, truth, spec)
			}
			rows = append(rows, fmt.Sprintf("| %s | %s | %d | %.1f%% | %.1f%% | %.1f%% | ±%.2f%% | %.1f | %.1f |", set.name, nz.name, a.campaigns,
				100*a.frac(a.shipRight), 100*a.frac(a.shipWrong), 100*a.frac(a.noAnswer), 100*median(a.resolution),
				float64(a.replicates)/float64(a.campaigns), float64(a.looks)/float64(a.campaigns)))
			if band := simBand(0.05, a.campaigns); a.frac(a.shipWrong) > 0.05+band {
				t.Errorf("%s, %s: \"ship\" an entry that is not the fastest in %.1f%% of campaigns, want ≤ %.1f%%", set.name, nz.name, 100*a.frac(a.shipWrong), 100*(0.05+band))
			}
		}
	}
	t.Logf("the decision (%d layout draws a spec, %d campaigns a row):\n| campaigns | noise | n | \"ship\" the true fastest | \"ship\" another | no answer | the ranking's median resolution | replicates a campaign | looks a campaign |\n|---|---|---:|---:|---:|---:|---:|---:|---:|\n%s", simDraws, n, strings.Join(rows, "\n"))
}
