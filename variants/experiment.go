package variants

import (
	"fmt"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Experiment is a variants file's account of the published measurement it
// reproduces (its experiment: section): the claims the publication made,
// each with the comparison of this run that answers it. The rank stage
// finds each claim's figure in the ranking (results.ClaimResult) and the
// report puts the two side by side.
type Experiment struct {
	Number int    `json:"number,omitempty"`
	Title  string `json:"title"`
	Source string `json:"source,omitempty"` // where and by whom it was published
	// Here says how this file's workload differs from the published one
	// (release, pipeline, machine), in a sentence or two.
	Here   string  `json:"here,omitempty"`
	Claims []Claim `json:"claims"`
}

// Claim is one published figure and the comparison of this run that
// answers it: A over B, two runtimes (for Image) or two images (under
// Runtime), on Measure.
type Claim struct {
	Label     string `json:"label"`
	Published string `json:"published"` // the figure as published, in words
	// Ratio is the published figure as a ratio comparable with this
	// run's (A over B on Measure); 0: the publication gives none.
	Ratio   float64 `json:"published_ratio,omitempty"`
	Measure string  `json:"measure"` // MeasureThroughput or a latency percentile (p50, p95, p99, p99.9)
	// A and B are the two runtimes or the two images compared, A over B.
	A        string `json:"a"`
	B        string `json:"b"`
	Runtimes bool   `json:"runtimes"`          // A and B are runtimes (else images)
	Image    string `json:"image,omitempty"`   // runtimes compared: the image (default: the primary reference)
	Runtime  string `json:"runtime,omitempty"` // images compared: the runtime (default: the first ranked)
	Test     string `json:"test,omitempty"`    // "" = over all benchmarks
	Pipeline int    `json:"pipeline,omitempty"`
	Pos      Pos    `json:"pos"`
}

// What a claim measures: throughput (ops/s, or server CPU per operation
// where co-scheduled: > 1 means A is faster) or a latency percentile of
// the fixed-rate measure (> 1 means A is slower).
const MeasureThroughput = "throughput"

// Measures lists what a claim can measure.
var Measures = []string{MeasureThroughput, "p50", "p95", "p99", "p99.9"}

var (
	experimentFields = []string{"number", "title", "source", "here", "claims"}
	claimFields      = []string{"label", "published", "published_ratio", "measure", "compare", "image", "runtime", "test", "pipeline"}
)

// claimNodes keeps the nodes a claim's names came from, to check them
// once the plan's images and runtimes are known.
type claimNodes struct {
	compare, image, runtime *yaml.Node
}

func (c *collector) decodeExperiment(n *yaml.Node) (*Experiment, []claimNodes) {
	e := &Experiment{}
	var nodes []claimNodes
	var claimsNode *yaml.Node
	for _, p := range c.pairs(n, "experiment", experimentFields) {
		fp := join("experiment", p.key)
		switch p.key {
		case "number":
			e.Number, _ = c.integer(p.v, fp)
		case "title":
			e.Title, _ = c.str(p.v, fp)
		case "source":
			e.Source, _ = c.str(p.v, fp)
		case "here":
			e.Here, _ = c.str(p.v, fp)
		case "claims":
			claimsNode = p.v
			elems, _ := c.seq(p.v, fp)
			for i, el := range elems {
				cl, cn, ok := c.decodeClaim(el, index(fp, i))
				if ok {
					e.Claims = append(e.Claims, cl)
					nodes = append(nodes, cn)
				}
			}
		}
	}
	if dn := deref(n); dn != nil && dn.Kind == yaml.MappingNode {
		if e.Title == "" {
			c.errf(dn, "experiment.title", "an experiment needs a title")
		}
		if claimsNode == nil {
			c.errf(dn, "experiment.claims", "an experiment needs claims: the published figures this file answers")
		}
	}
	return e, nodes
}

func (c *collector) decodeClaim(n *yaml.Node, path string) (Claim, claimNodes, bool) {
	cl := Claim{Measure: MeasureThroughput}
	var cn claimNodes
	good := true
	for _, p := range c.pairs(n, path, claimFields) {
		fp := join(path, p.key)
		ok := true
		switch p.key {
		case "label":
			cl.Label, ok = c.str(p.v, fp)
		case "published":
			cl.Published, ok = c.str(p.v, fp)
		case "published_ratio":
			var s string
			if s, ok = c.str(p.v, fp); ok {
				v, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(s), "x"), 64)
				if err != nil || !(v > 0) {
					c.errf(deref(p.v), fp, "%q: want the published figure as a ratio above 0 (2.29 for 2.29x, 0.5 for half)", s)
					ok = false
				} else {
					cl.Ratio = v
				}
			}
		case "measure":
			cl.Measure, ok = c.enum(p.v, fp, Measures)
		case "compare":
			cn.compare = p.v
			elems, sok := c.seq(p.v, fp)
			if ok = sok && len(elems) == 2; sok && !ok {
				c.errf(deref(p.v), fp, "compare names two runtimes or two images, A over B; got %d", len(elems))
			}
			if ok {
				cl.A, ok = c.str(elems[0], index(fp, 0))
				b, bok := c.str(elems[1], index(fp, 1))
				cl.B, ok = b, ok && bok
			}
		case "image":
			cn.image = p.v
			cl.Image, ok = c.str(p.v, fp)
		case "runtime":
			cn.runtime = p.v
			cl.Runtime, ok = c.str(p.v, fp)
		case "test":
			var ts []string
			if ts, ok = c.testNames([]*yaml.Node{p.v}, fp); ok && len(ts) == 1 {
				cl.Test = ts[0]
			}
		case "pipeline":
			if cl.Pipeline, ok = c.integer(p.v, fp); ok && cl.Pipeline < 1 {
				c.errf(deref(p.v), fp, "pipeline %d: want 1 or more", cl.Pipeline)
				ok = false
			}
		}
		good = good && ok
	}
	dn := deref(n)
	if dn == nil || dn.Kind != yaml.MappingNode {
		return cl, cn, false
	}
	cl.Pos = Pos{File: c.file, Line: dn.Line, Column: dn.Column}
	for _, req := range []struct {
		set  bool
		name string
	}{{cl.Label != "", "label"}, {cl.Published != "", "published"}, {cn.compare != nil, "compare"}} {
		if !req.set && good {
			c.errf(dn, join(path, req.name), "a claim needs %s", req.name)
			good = false
		}
	}
	if cl.Pipeline > 0 && cl.Test == "" && good {
		c.errf(dn, join(path, "pipeline"), "a pipeline names one benchmark: give its test too")
		good = false
	}
	return cl, cn, good
}

// checkClaims resolves each claim's compare against the plan: two runtimes
// (then image, if given, must be an image of the plan) or two images
// (then runtime, if given, must be a runtime of the plan). A latency
// claim compares runtimes.
func (c *collector) checkClaims(p *Plan, e *Experiment, nodes []claimNodes) {
	isRuntime := func(s string) bool {
		for _, rt := range p.Runtimes {
			if rt.Name == s {
				return true
			}
		}
		return false
	}
	isImage := func(s string) bool {
		for _, v := range p.All() {
			if v.Name == s || v.SpecName() == s {
				return true
			}
		}
		return false
	}
	var runtimes, images []string
	for _, rt := range p.Runtimes {
		runtimes = append(runtimes, rt.Name)
	}
	for _, v := range p.All() {
		images = append(images, v.Name)
	}
	for i := range e.Claims {
		cl, cn := &e.Claims[i], nodes[i]
		path := fmt.Sprintf("experiment.claims[%d]", i)
		switch {
		case isRuntime(cl.A) && isRuntime(cl.B):
			cl.Runtimes = true
			if cl.Runtime != "" {
				c.errf(deref(cn.runtime), join(path, "runtime"), "compare names two runtimes: give the image they run (image:), not a runtime")
			}
			if cl.Image != "" && !isImage(cl.Image) {
				c.errf(deref(cn.image), join(path, "image"), "unknown image %q%s%s", cl.Image, suggest(cl.Image, images), accepted(images))
			}
		case isImage(cl.A) && isImage(cl.B):
			if cl.Measure != MeasureThroughput {
				c.errf(deref(cn.compare), join(path, "compare"), "a latency claim (measure %s) compares runtimes: the fixed-rate measure compares each runtime with the first", cl.Measure)
			}
			if cl.Image != "" {
				c.errf(deref(cn.image), join(path, "image"), "compare names two images: give the runtime they run under (runtime:), not an image")
			}
			if cl.Runtime != "" && !isRuntime(cl.Runtime) {
				c.errf(deref(cn.runtime), join(path, "runtime"), "unknown runtime %q%s%s", cl.Runtime, suggest(cl.Runtime, runtimes), accepted(runtimes))
			}
		default:
			all := append(append([]string{}, runtimes...), images...)
			for j, s := range []string{cl.A, cl.B} {
				if !isRuntime(s) && !isImage(s) {
					c.errf(deref(cn.compare).Content[j], index(join(path, "compare"), j), "%q is neither a runtime nor an image of this file%s%s", s, suggest(s, all), accepted(all))
				}
			}
			if (isRuntime(cl.A) || isRuntime(cl.B)) && (isImage(cl.A) || isImage(cl.B)) {
				c.errf(deref(cn.compare), join(path, "compare"), "compare names two runtimes or two images, not one of each (%q, %q)", cl.A, cl.B)
			}
		}
	}
}
