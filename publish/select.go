package publish

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/redis-variants/redis-variants/builder"
	"github.com/redis-variants/redis-variants/rank"
	"github.com/redis-variants/redis-variants/results"
	"github.com/redis-variants/redis-variants/variants"
	"github.com/redis-variants/redis-variants/verify"
)

// Label and annotation keys Publish adds (the builder's own labels, e.g.
// io.redis-variants.name/id/spec, are kept and repeated as annotations).
const (
	KeyName          = "io.redis-variants.name"
	KeyID            = "io.redis-variants.id"
	KeySpec          = "io.redis-variants.spec"
	KeyRedisVersion  = "io.redis-variants.redis.version"
	KeyRun           = "io.redis-variants.run"
	KeyRuntime       = "io.redis-variants.runtime"
	KeyCPU           = "io.redis-variants.cpu"
	KeyRank          = "io.redis-variants.rank"
	KeyScore         = "io.redis-variants.score"           // against the primary reference
	KeyScoreRef      = "io.redis-variants.score.reference" // the primary reference
	KeyScoreInterval = "io.redis-variants.score.interval"  // "lo,hi"
	KeyScores        = "io.redis-variants.scores"          // JSON: every reference's score, interval, verdict
	KeyVersusPrefix  = "io.redis-variants.versus."         // + reference: "1.0830 [1.0510, 1.1200] faster"
	KeyVerify        = "io.redis-variants.verify"          // one-line verify summary
	KeyVerifyStatus  = "io.redis-variants.verify.status"
	KeyReportJSON    = "io.redis-variants.report.json.sha256"
	KeyReportMD      = "io.redis-variants.report.md.sha256"
	KeyBestTiedWith  = "io.redis-variants.best.tied-with" // variants that share the best image's rank
	KeyMemory        = "io.redis-variants.memory"         // JSON: the memory workload's figures (RSS ratio to the primary reference, interval, verdict, rank, fragmentation, allocator)
	KeyISALevel      = verify.LabelISALevel

	KeyOCITitle       = "org.opencontainers.image.title"
	KeyOCIVersion     = "org.opencontainers.image.version"
	KeyOCIDescription = "org.opencontainers.image.description"
	KeyOCICreated     = "org.opencontainers.image.created"
	KeyOCISource      = "org.opencontainers.image.source"
	KeyOCIRevision    = "org.opencontainers.image.revision"
)

// Refusal is an image not published, and why (results.Refusal).
type Refusal = results.Refusal

// Selected is one image chosen for publishing, with everything that will
// be attached to it.
type Selected struct {
	Variant variants.Variant
	Build   builder.Result
	Entry   rank.Entry
	Level   string // ISA level the binary needs: v1..v4, "native", or "" when unknown
	// Tags are tag names only, e.g. "7.0.15-gcc-o3", "7.0.15-best", "7.0.15-best-v3".
	Tags []string
	// Meta goes both into the image config's labels and the manifest's annotations.
	Meta map[string]string
	// Twins are its spec's verified builds for other platforms: pushed
	// beside it, with Tags naming the index of them all.
	Twins []Twin
}

// Selection is what Publish would push.
type Selection struct {
	Run      string // run folder
	Runtime  string
	Images   []Selected
	Refused  []Refusal
	Warnings []string
}

var levelRank = map[string]int{"v1": 1, "v2": 2, "v3": 3, "v4": 4}

// Level returns the x86-64 level a variant's binary needs: the image label
// io.redis-variants.isa.level when the build recorded it, else what its
// -march says ("x86-64-v3" → v3, "native" → native, none → v1), else "".
func Level(v variants.Variant, labels map[string]string) string {
	if l := labels[KeyISALevel]; l != "" {
		return strings.TrimPrefix(l, "x86-64-")
	}
	switch m := v.March; {
	case m == "" || m == "x86-64":
		return "v1"
	case m == "native":
		return "native"
	case strings.HasPrefix(m, "x86-64-v"):
		return strings.TrimPrefix(m, "x86-64-")
	}
	return ""
}

var tagBad = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// TagName turns parts into a valid OCI tag: [A-Za-z0-9_][A-Za-z0-9_.-]{0,127},
// other characters replaced by '-'.
func TagName(parts ...string) string {
	t := tagBad.ReplaceAllString(strings.Join(parts, "-"), "-")
	t = strings.TrimLeft(t, ".-")
	if t == "" {
		t = "latest"
	}
	if len(t) > 128 {
		t = t[:128]
	}
	return t
}

// VariantTag is the tag of a variant's image: <redis-version>-<variant>.
func VariantTag(v variants.Variant) string { return TagName(v.Redis, v.Name) }

// BestTag is <redis-version>-best, or <redis-version>-best-<level>.
func BestTag(redis, level string) string {
	if level == "" {
		return TagName(redis, "best")
	}
	return TagName(redis, "best", level)
}

// candidate is a ranked entry with what the selection needs to know about it.
type candidate struct {
	entry rank.Entry
	v     variants.Variant
	build builder.Result
	level string
}

// Select decides what Publish would push from run's ranking, builds and
// verify reports, without touching Docker Engine or a registry.
//
// Candidates are the ranked entries under opts.Runtime in ranking order.
// References are never published; a variant that did not build, did not
// pass verification or has no score is refused with the reason. Of the
// rest, the first opts.Top (all when 0) are selected, or those named in
// opts.Only. <redis>-best goes to the best eligible variant overall and
// <redis>-best-<level> to the best eligible variant whose binary needs at
// most that x86-64 level (one tag per level some eligible image needs;
// "native" images get none), each only when that image is selected, so a
// best tag never points at anything but the best.
func Select(run *results.Run, opts Options) (*Selection, error) {
	opts = opts.withDefaults()
	rk, err := run.Ranking()
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("run %s has no ranking.json: rank it first (redis-variants rank)", run.Dir)
		}
		return nil, err
	}
	st, ok := rk.Standing(opts.Runtime)
	if !ok {
		return nil, fmt.Errorf("ranking of run %s has no standings for runtime %q (it has: %s)", run.Dir, opts.Runtime, strings.Join(rk.Runtimes, ", "))
	}
	builds, _, err := results.LoadBuilds(run)
	if err != nil {
		return nil, err
	}
	plan, _ := run.Plan() // nil without plan.json: the builds' variants stand in
	reports, _, err := results.LoadVerifications(run)
	if err != nil {
		return nil, err
	}

	sel := &Selection{Run: run.Dir, Runtime: opts.Runtime}
	only := map[string]bool{}
	for _, n := range opts.Only {
		only[n] = true
	}
	eligible, refused, seen := eligibleCandidates(run, st, builds, plan, opts, only)
	sel.Refused = append(sel.Refused, refused...)
	for _, n := range opts.Only {
		if !seen[n] {
			sel.Refused = append(sel.Refused, Refusal{Variant: n, Reason: fmt.Sprintf("%q is not ranked under runtime %s in %s", n, opts.Runtime, run.Path(results.RankingFile))})
		}
	}

	// Which eligible candidates are selected.
	var chosen []candidate
	for _, c := range eligible {
		if len(only) > 0 {
			if only[c.v.Name] {
				chosen = append(chosen, c)
			}
			continue
		}
		if opts.Top > 0 && len(chosen) >= opts.Top {
			break
		}
		chosen = append(chosen, c)
	}

	// Best tags, over every eligible candidate, per Redis version.
	best := map[string][]string{} // variant name -> best tags
	tied := map[string][]string{}
	isChosen := map[string]bool{}
	for _, c := range chosen {
		isChosen[c.v.Name] = true
	}
	byName := map[string]candidate{}
	for _, c := range eligible {
		byName[c.v.Name] = c
	}
	assign := func(tag string, pick func(candidate) bool, redis string) {
		var first *candidate
		for i := range eligible {
			c := &eligible[i]
			if c.v.Redis != redis || !pick(*c) {
				continue
			}
			if first == nil {
				first = c
				continue
			}
			if st.Tied(c.v.Name, first.v.Name) && tag == BestTag(redis, "") {
				tied[first.v.Name] = append(tied[first.v.Name], c.v.Name)
			}
		}
		if first == nil {
			return
		}
		// The verdict decides: a best tag only for an image the ranking
		// separated from the runner-up (a reference sharing its rank
		// counts: the best is then not known to beat it).
		var with []string
		for _, e := range st.Entries {
			if e.Image == first.v.Name || !st.Tied(e.Image, first.v.Name) {
				continue
			}
			// a rival for this tag: a reference (it runs anywhere) or a
			// publishable image the tag's CPUs can run (one that failed
			// or skipped verification is no product to choose instead)
			if c, ok := byName[e.Image]; e.Reference || ok && c.v.Redis == redis && pick(c) {
				with = append(with, e.Image)
			}
		}
		if len(with) > 0 {
			if tag == BestTag(redis, "") {
				tied[first.v.Name] = with
			}
			sel.Warnings = append(sel.Warnings, fmt.Sprintf("tag %s not given: %q is tied with %s under runtime %s (its labels say so)", tag, first.v.Name, strings.Join(with, ", "), st.Runtime))
			return
		}
		if !isChosen[first.v.Name] {
			sel.Warnings = append(sel.Warnings, fmt.Sprintf("tag %s not moved: the best variant for it, %q, is not among those published", tag, first.v.Name))
			return
		}
		best[first.v.Name] = append(best[first.v.Name], tag)
	}
	redisVersions := map[string]bool{}
	for _, c := range eligible {
		redisVersions[c.v.Redis] = true
	}
	for _, rv := range slices.Sorted(maps.Keys(redisVersions)) {
		assign(BestTag(rv, ""), func(candidate) bool { return true }, rv)
		levels := map[string]bool{}
		for _, c := range eligible {
			if c.v.Redis == rv && levelRank[c.level] > 0 {
				levels[c.level] = true
			}
		}
		for _, l := range slices.Sorted(maps.Keys(levels)) {
			max := levelRank[l]
			assign(BestTag(rv, l), func(c candidate) bool {
				r := levelRank[c.level]
				return r > 0 && r <= max
			}, rv)
		}
	}

	reportSums := reportDigests(run)
	for _, c := range chosen {
		s := Selected{Variant: c.v, Build: c.build, Entry: c.entry, Level: c.level}
		s.Tags = append([]string{VariantTag(c.v)}, best[c.v.Name]...)
		s.Meta = meta(run, rk, st, c, reports[c.v.Name], reportSums, tied[c.v.Name])
		var warnings []string
		s.Twins, warnings = twinsOf(run, c, builds, reports)
		sel.Warnings = append(sel.Warnings, warnings...)
		sel.Images = append(sel.Images, s)
	}
	return sel, nil
}

// eligibleCandidates walks the standings in rank order and returns the
// variants that may be published, the refusals of the others (each named
// one, and those --top would have taken), and every ranked name. plan is
// the run's plan.json (nil: none).
func eligibleCandidates(run *results.Run, st rank.Standings, builds map[string]results.Build, plan *variants.Plan, opts Options, only map[string]bool) (eligible []candidate, refused []Refusal, seen map[string]bool) {
	seen = map[string]bool{}
	for _, e := range st.Entries {
		seen[e.Image] = true
		b, built := builds[e.Image]
		v := b.Variant
		if v.Name == "" && plan != nil {
			v, _ = plan.Lookup(e.Image)
		}
		if v.Name == "" {
			v.Name = e.Image
		}
		named := only[e.Image]
		isRef := e.Reference || (v.Kind != "" && v.IsReference())
		if plan != nil {
			if pv, ok := plan.Lookup(e.Image); ok && pv.IsReference() {
				isRef = true
			}
		}
		if isRef {
			if named {
				refused = append(refused, Refusal{Variant: e.Image, Reason: fmt.Sprintf("%q is a reference: references are never published", e.Image)})
			}
			continue
		}
		refuse := func(why string) {
			// Unnamed variants ranked below what --top takes are not worth a refusal line.
			if named || len(only) == 0 && (opts.Top <= 0 || len(eligible) < opts.Top) {
				refused = append(refused, Refusal{Variant: e.Image, Reason: why})
			}
		}
		if !built {
			refuse(fmt.Sprintf("variant %q has no build result (no %s)", e.Image, run.Path("builds", e.Image+".json")))
			continue
		}
		if v.Kind == variants.KindImage || b.Pulled != nil {
			// Someone else's image, pulled to be ranked: never republished under this tool's name.
			refused = append(refused, Refusal{Variant: e.Image, Reason: fmt.Sprintf("%q is a pulled image (%s), not built here: pulled images are never published", e.Image, v.Image)})
			continue
		}
		if b.Status != builder.StatusOK {
			refuse(fmt.Sprintf("variant %q did not build (status %s)", e.Image, b.Status))
			continue
		}
		if b.Image == "" {
			refuse(fmt.Sprintf("variant %q has no image reference in its build result", e.Image))
			continue
		}
		if ok, why := verify.Passed(run, e.Image, b.ConfigDigest); !ok {
			refuse(why)
			continue
		}
		if e.Score.IsNaN() {
			refuse(fmt.Sprintf("variant %q has no score against %s under runtime %s", e.Image, st.Primary, opts.Runtime))
			continue
		}
		if v.Redis == "" {
			refuse(fmt.Sprintf("variant %q: its spec names no Redis version", e.Image))
			continue
		}
		eligible = append(eligible, candidate{entry: e, v: v, build: b, level: Level(v, b.Labels)})
	}
	return eligible, refused, seen
}

// reportDigests returns the sha256 of report.json and report.md, when present.
func reportDigests(run *results.Run) map[string]string {
	out := map[string]string{}
	for key, rel := range map[string]string{KeyReportJSON: "report.json", KeyReportMD: "report.md"} {
		b, err := os.ReadFile(run.Path(rel))
		if err != nil {
			continue
		}
		sum := sha256.Sum256(b)
		out[key] = "sha256:" + hex.EncodeToString(sum[:])
	}
	return out
}

func fmtNum(n rank.Num) string {
	if n.IsNaN() {
		return "n/a"
	}
	return strconv.FormatFloat(float64(n), 'f', 4, 64)
}

// identityMeta is what every published image's labels and annotations
// say of what it is: the build's OCI labels (created, source, revision)
// kept as annotations too, its name, ID and spec, its Redis, the run.
func identityMeta(run *results.Run, v variants.Variant, b builder.Result) map[string]string {
	m := map[string]string{}
	for _, k := range []string{KeyOCICreated, KeyOCISource, KeyOCIRevision} {
		if x := b.Labels[k]; x != "" {
			m[k] = x
		}
	}
	spec, _ := json.Marshal(withoutPos(v))
	m[KeyName] = v.Name
	m[KeyID] = v.ID
	m[KeySpec] = string(spec)
	m[KeyRedisVersion] = v.Redis
	m[KeyRun] = filepath.Base(run.Dir)
	return m
}

// meta is what goes into labels and annotations for one image.
func meta(run *results.Run, rk *rank.Ranking, st rank.Standings, c candidate, rep verify.Report, sums map[string]string, tiedWith []string) map[string]string {
	v, e := c.v, c.entry
	m := identityMeta(run, v, c.build)
	m[KeyRuntime] = st.Runtime
	if len(rk.CPUModels) > 0 {
		m[KeyCPU] = strings.Join(rk.CPUModels, "; ")
	}
	if c.level != "" {
		m[KeyISALevel] = c.level
	}
	m[KeyRank] = strconv.Itoa(e.Rank) // its rank interval, "1" or "1-3"
	if e.RankHi > e.Rank {
		m[KeyRank] += "-" + strconv.Itoa(e.RankHi)
	}
	m[KeyScore] = fmtNum(e.Score)
	m[KeyScoreRef] = st.Primary
	m[KeyScoreInterval] = fmtNum(e.Lo) + "," + fmtNum(e.Hi)
	type score struct {
		Reference string   `json:"reference"`
		Score     rank.Num `json:"score"`
		Lo        rank.Num `json:"lo"`
		Hi        rank.Num `json:"hi"`
		PAdj      rank.Num `json:"p_adj"`
		Verdict   string   `json:"verdict"`
	}
	var scores []score
	for _, s := range e.Versus {
		scores = append(scores, score{s.Reference, s.Score, s.Lo, s.Hi, s.PAdj, s.Verdict})
		m[KeyVersusPrefix+s.Reference] = fmt.Sprintf("%s [%s, %s] %s", fmtNum(s.Score), fmtNum(s.Lo), fmtNum(s.Hi), s.Verdict)
	}
	if b, err := json.Marshal(scores); err == nil {
		m[KeyScores] = string(b)
	}
	if rk.Memory != nil {
		for _, me := range rk.Memory.Entries {
			if me.Image != v.Name {
				continue
			}
			type memory struct {
				Reference string   `json:"reference"`
				Ratio     rank.Num `json:"rss_ratio"`
				Lo        rank.Num `json:"lo"`
				Hi        rank.Num `json:"hi"`
				Verdict   string   `json:"verdict"`
				Rank      int      `json:"rank"`
				RSS       rank.Num `json:"rss_bytes"`
				Frag      rank.Num `json:"fragmentation"`
				Allocator string   `json:"allocator"`
			}
			if b, err := json.Marshal(memory{rk.Memory.Primary, me.Ratio, me.Lo, me.Hi, me.Verdict, me.Rank, me.RSS.Mean, me.Frag.Mean, me.Allocator}); err == nil {
				m[KeyMemory] = string(b)
			}
		}
	}
	m[KeyVerifyStatus] = rep.Status
	m[KeyVerify] = rep.Summary()
	for k, x := range sums {
		m[k] = x
	}
	if len(tiedWith) > 0 {
		m[KeyBestTiedWith] = strings.Join(tiedWith, ",")
	}
	m[KeyOCITitle] = "redis-variants " + v.Name
	m[KeyOCIVersion] = v.Redis
	desc := fmt.Sprintf("Redis %s built with %s -%s", v.Redis, v.Compiler, v.Opt)
	if v.March != "" {
		desc += " -march=" + v.March
	}
	if v.LTO != "" && v.LTO != "off" {
		desc += " LTO " + v.LTO
	}
	desc += ", allocator " + v.Allocator
	desc += fmt.Sprintf("; %s× %s [%s, %s] under runtime %s", fmtNum(e.Score), st.Primary, fmtNum(e.Lo), fmtNum(e.Hi), st.Runtime)
	if m[KeyCPU] != "" {
		desc += " on " + m[KeyCPU]
	}
	m[KeyOCIDescription] = desc
	return m
}

func withoutPos(v variants.Variant) variants.Variant {
	v.Pos = variants.Pos{}
	return v
}
