package variants

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/redis-variants/redis-variants/loadgen"
	"gopkg.in/yaml.v3"
)

// Limits that keep a hostile or broken file from exhausting memory.
const (
	// MaxFileSize is the largest variants file Load and Parse accept.
	MaxFileSize = 1 << 20
	// MaxNodes bounds the YAML nodes visited, counting every alias
	// expansion again (a "billion laughs" file hits it at once).
	MaxNodes = 100_000
	// MaxCombinations bounds the variants one file may expand to.
	MaxCombinations = 1000
)

// Load reads, validates and expands the variants file at path.
func Load(path string) (*Plan, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("loading variants: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("loading variants: reading %s: %w", path, err)
	}
	return Parse(path, data)
}

// Parse validates and expands a variants file held in memory; name is
// used in diagnostics and Plan.File. Errors are returned as *Error
// holding every mistake found.
func Parse(name string, data []byte) (*Plan, error) {
	c := &collector{file: name}
	if len(data) > MaxFileSize {
		c.errf(nil, "", "file is larger than %d bytes; refusing to parse it", MaxFileSize)
		return nil, &Error{Diagnostics: c.diags}
	}
	root := c.parseYAML(data)
	if root == nil {
		errs, _ := c.split()
		return nil, &Error{Diagnostics: errs}
	}
	raw := decodeFile(c, root)
	plan := resolve(c, raw)
	errs, warns := c.split()
	if len(errs) > 0 {
		return nil, &Error{Diagnostics: errs}
	}
	plan.File = name
	plan.Warnings = warns
	return plan, nil
}

var yamlLineRE = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// parseYAML parses data into a node tree, reporting syntax errors with
// their line, and refusing trees that expand beyond MaxNodes.
func (c *collector) parseYAML(data []byte) (root *yaml.Node) {
	defer func() {
		if r := recover(); r != nil {
			c.errf(nil, "", "yaml: internal parser error: %v", r)
			root = nil
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			c.errf(nil, "", "file is empty")
			return nil
		}
		c.yamlErr(data, err)
		return nil
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		c.errf(&extra, "", "more than one YAML document; put everything in one")
		return nil
	} else if !errors.Is(err, io.EOF) {
		c.yamlErr(data, err)
		return nil
	}
	budget := MaxNodes
	if !countNodes(&doc, &budget) {
		c.errf(nil, "", "file expands to more than %d YAML nodes (aliases multiplying?); refusing it", MaxNodes)
		return nil
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		c.errf(nil, "", "file is empty")
		return nil
	}
	return doc.Content[0]
}

func (c *collector) yamlErr(data []byte, err error) {
	msg := err.Error()
	var te *yaml.TypeError
	if errors.As(err, &te) {
		msg = strings.Join(te.Errors, "; ")
	}
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		text := "yaml syntax: " + m[2]
		// yaml.v3 reports where the enclosing block starts; find the line
		// where parsing first fails with the same message.
		if at := problemLine(data, msg); at > line && len(data) <= 256<<10 {
			text += fmt.Sprintf(" (in the block starting at line %d)", line)
			line = at
		}
		c.add(SeverityError, &yaml.Node{Line: line, Column: firstColumn(data, line)}, "", text)
		return
	}
	c.errf(nil, "", "yaml syntax: %s", strings.TrimPrefix(msg, "yaml: "))
}

// countNodes walks n following aliases and reports whether it stays
// within budget. Alias cycles also run out of budget.
func countNodes(n *yaml.Node, budget *int) bool {
	if n == nil {
		return true
	}
	*budget--
	if *budget < 0 {
		return false
	}
	if n.Kind == yaml.AliasNode {
		return countNodes(n.Alias, budget)
	}
	for _, ch := range n.Content {
		if !countNodes(ch, budget) {
			return false
		}
	}
	return true
}

// ---- raw file structure ----

// fval is one field value as written, normalized, with where it came from.
type fval struct {
	node   *yaml.Node
	path   string
	s      string // normalized scalar
	b      bool
	n      int // "layouts"
	list   []string
	lnodes []*yaml.Node
	comp   Compiler
	pgo    *PGO  // "pgo": the training as written (zero fields take defaults in resolve)
	bolt   *BOLT // "bolt": likewise
}

// layer is a set of fields at one level (defaults, matrix, combination, entry).
type layer map[string]fval

type entry struct {
	node *yaml.Node
	path string
	l    layer
}

type axis struct {
	key    string
	node   *yaml.Node
	path   string
	values []fval
}

type rawMatrix struct {
	entry   // common fields; l["name"] is the template
	axes    []axis
	include []entry
	exclude []entry
}

type rawFile struct {
	root          *yaml.Node
	defaults      layer
	sources       map[string]Source
	sourceNodes   map[string]*yaml.Node
	references    []entry
	referencesSet bool // a references: key, even an empty one (no default reference then)
	variants      []entry
	matrix        []rawMatrix
	runtimes      []Runtime
	runtimesSet   bool
	profiles      map[string]Profile
	experiment    *Experiment
	claimNodes    []claimNodes
}

var (
	buildFields     = []string{"redis", "source", "base", "compiler", "opt", "march", "mtune", "lto", "pgo", "bolt", "cflags", "ldflags", "allocator", "tls", "libc", "layouts", "platform", "mcpu"}
	variantFields   = append([]string{"name", "kind", "description", "image"}, buildFields...)
	referenceFields = []string{"name", "kind", "description", "base", "redis", "source", "image", "recipe"}
	matrixFields    = append([]string{"name", "description", "axes", "include", "exclude"}, buildFields...)
	includeFields   = append([]string{"name", "description"}, buildFields...)
	topFields       = []string{"defaults", "sources", "references", "variants", "matrix", "runtimes", "profiles", "experiment"}
	sourceFields    = []string{"version", "url", "path", "sha256", "fallbacks"}
	fallbackFields  = []string{"url", "sha256"}
	pgoFields       = []string{"train"}
	trainingFields  = []string{"tests", "pipelines", "clients", "data_size", "keyspace", "requests"}
	runtimeFields   = []string{"name", "network", "seccomp", "server_cpus", "client_cpus", "cpu_limit", "spin"}
	profileFields   = []string{"tests", "clients", "pipelines", "data_size", "keyspace", "duration", "warmup", "warmup_next", "trials", "replicates", "windows", "axis_replicates", "runtimes", "budget", "max_trials", "memory", "latency", "resolution", "target", "max_replicates", "extend", "looks"}
	memoryFields    = []string{"target", "sizes", "overwrite", "delete", "defrag", "replicates"}
	latencyFields   = []string{"test", "rate", "clients", "trials", "duration", "warmup", "images"}
	kinds           = []string{KindVariant, KindDistro, KindOfficial, KindImage}
	recipes         = []string{RecipeOfficial, RecipeOfficialAlpine}
	libcs           = []string{LibcGlibc, LibcMusl}
)

func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 100; i++ {
		n = n.Alias
	}
	return n
}

func describe(n *yaml.Node) string {
	n = deref(n)
	if n == nil {
		return "nothing"
	}
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!null":
			return "null"
		case "!!bool":
			return "a boolean"
		case "!!int", "!!float":
			return "a number (" + n.Value + ")"
		}
		return fmt.Sprintf("the string %q", n.Value)
	}
	return "an alias"
}

func isNull(n *yaml.Node) bool {
	n = deref(n)
	return n == nil || (n.Kind == yaml.ScalarNode && n.Tag == "!!null")
}

type pair struct {
	key  string
	k, v *yaml.Node
}

// pairs returns the key/value pairs of a mapping with YAML merge keys
// (<<) applied, reporting duplicate and unknown keys. known == nil
// accepts every key. A null node is an empty mapping.
func (c *collector) pairs(n *yaml.Node, path string, known []string) []pair {
	n = deref(n)
	if isNull(n) {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		c.errf(n, path, "expected a mapping, got %s", describe(n))
		return nil
	}
	ps := c.mergedPairs(n, path, 0)
	if known == nil {
		return ps
	}
	out := ps[:0:0]
	for _, p := range ps {
		if !contains(known, p.key) {
			c.errf(p.k, join(path, p.key), "unknown field%s%s", suggest(p.key, known), accepted(known))
			continue
		}
		out = append(out, p)
	}
	return out
}

func (c *collector) mergedPairs(n *yaml.Node, path string, depth int) []pair {
	if depth > 20 {
		c.errf(n, path, "merge keys nested too deeply")
		return nil
	}
	var explicit, merged []pair
	seen := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := deref(n.Content[i]), n.Content[i+1]
		if k == nil || k.Kind != yaml.ScalarNode {
			c.errf(k, path, "keys must be strings, got %s", describe(k))
			continue
		}
		if k.Tag == "!!merge" {
			mv := deref(v)
			var srcs []*yaml.Node
			switch {
			case mv != nil && mv.Kind == yaml.MappingNode:
				srcs = []*yaml.Node{mv}
			case mv != nil && mv.Kind == yaml.SequenceNode:
				for _, e := range mv.Content {
					srcs = append(srcs, deref(e))
				}
			}
			for _, s := range srcs {
				if s == nil || s.Kind != yaml.MappingNode {
					c.errf(k, path, "<< must merge a mapping or a list of mappings, got %s", describe(s))
					continue
				}
				merged = append(merged, c.mergedPairs(s, path, depth+1)...)
			}
			if len(srcs) == 0 {
				c.errf(k, path, "<< must merge a mapping or a list of mappings, got %s", describe(mv))
			}
			continue
		}
		if prev, dup := seen[k.Value]; dup {
			c.errf(k, join(path, k.Value), "field is already set at line %d", prev.Line)
			continue
		}
		seen[k.Value] = k
		explicit = append(explicit, pair{k.Value, k, v})
	}
	// Merged mappings: the first one to set a key wins; explicit keys win over all.
	out := make([]pair, 0, len(explicit)+len(merged))
	for _, p := range merged {
		if seen[p.key] != nil {
			continue
		}
		seen[p.key] = p.k
		out = append(out, p)
	}
	return append(out, explicit...)
}

// seq returns the elements of a list; null is an empty list.
func (c *collector) seq(n *yaml.Node, path string) ([]*yaml.Node, bool) {
	n = deref(n)
	if isNull(n) {
		return nil, true
	}
	if n.Kind != yaml.SequenceNode {
		c.errf(n, path, "expected a list, got %s", describe(n))
		return nil, false
	}
	out := make([]*yaml.Node, len(n.Content))
	for i, e := range n.Content {
		out[i] = deref(e)
	}
	return out, true
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func index(path string, i int) string { return fmt.Sprintf("%s[%d]", path, i) }

// str decodes a scalar as a string.
func (c *collector) str(n *yaml.Node, path string) (string, bool) {
	n = deref(n)
	if n == nil || n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		c.errf(n, path, "expected a string, got %s", describe(n))
		return "", false
	}
	return strings.TrimSpace(n.Value), true
}

func (c *collector) boolean(n *yaml.Node, path string) (bool, bool) {
	n = deref(n)
	if n != nil && n.Kind == yaml.ScalarNode && n.Tag == "!!bool" {
		var b bool
		if err := n.Decode(&b); err == nil {
			return b, true
		}
	}
	c.errf(n, path, "expected true or false, got %s", describe(n))
	return false, false
}

func (c *collector) integer(n *yaml.Node, path string) (int, bool) {
	n = deref(n)
	if n != nil && n.Kind == yaml.ScalarNode && n.Tag == "!!int" {
		v, err := strconv.ParseInt(strings.ReplaceAll(n.Value, "_", ""), 0, 32)
		if err == nil {
			return int(v), true
		}
	}
	c.errf(n, path, "expected a whole number, got %s", describe(n))
	return 0, false
}

// trained decodes `pgo:` or `bolt:`, each `true|false` or `{train:
// {tests, pipelines, clients, data_size, keyspace, requests}}`; nil means
// off.
func (c *collector) trained(n *yaml.Node, path string) (*Training, bool) {
	nn := deref(n)
	if nn != nil && nn.Kind == yaml.ScalarNode {
		b, ok := c.boolean(n, path)
		if !ok || !b {
			return nil, ok
		}
		return &Training{}, true
	}
	if nn == nil || nn.Kind != yaml.MappingNode {
		c.errf(nn, path, "expected true, false or a mapping with train, got %s", describe(nn))
		return nil, false
	}
	p, ok := &struct{ Train Training }{}, true
	for _, kv := range c.pairs(nn, path, pgoFields) {
		tp := join(path, kv.key)
		tn := deref(kv.v)
		if tn == nil || tn.Kind != yaml.MappingNode {
			c.errf(tn, tp, "expected a mapping of %s, got %s", strings.Join(trainingFields, ", "), describe(tn))
			ok = false
			continue
		}
		for _, f := range c.pairs(tn, tp, trainingFields) {
			fp := join(tp, f.key)
			var fok bool
			switch f.key {
			case "tests":
				var elems []*yaml.Node
				if elems, fok = c.seq(f.v, fp); fok {
					p.Train.Tests, fok = c.testNames(elems, fp)
				}
			case "pipelines":
				var elems []*yaml.Node
				elems, fok = c.seq(f.v, fp)
				for i, e := range elems {
					d, dok := c.integer(e, index(fp, i))
					if dok && d < 1 {
						c.errf(e, index(fp, i), "pipeline depth must be at least 1, got %d", d)
						dok = false
					}
					fok = fok && dok
					p.Train.Pipelines = append(p.Train.Pipelines, d)
				}
			default:
				var d int
				d, fok = c.integer(f.v, fp)
				if fok && d < 1 {
					c.errf(f.v, fp, "%s must be at least 1, got %d", f.key, d)
					fok = false
				}
				switch f.key {
				case "clients":
					p.Train.Clients = d
				case "data_size":
					p.Train.DataSize = d
				case "keyspace":
					p.Train.Keyspace = d
				case "requests":
					p.Train.Requests = d
				}
			}
			ok = ok && fok
		}
	}
	return &p.Train, ok
}

// testNames decodes a list of load-generator test names (upper-cased),
// each checked against the tests the generator has.
func (c *collector) testNames(elems []*yaml.Node, path string) ([]string, bool) {
	var out []string
	ok := true
	for i, e := range elems {
		s, sok := c.str(e, index(path, i))
		if !sok {
			ok = false
			continue
		}
		u := strings.ToUpper(s)
		if !contains(benchTests, u) {
			c.errf(e, index(path, i), "unknown test %q%s%s", s, suggest(u, benchTests), accepted(benchTests))
			ok = false
			continue
		}
		out = append(out, u)
	}
	return out, ok
}

// enum decodes a string and checks it against list, case-insensitively.
func (c *collector) enum(n *yaml.Node, path string, list []string) (string, bool) {
	s, ok := c.str(n, path)
	if !ok {
		return "", false
	}
	for _, a := range list {
		if strings.EqualFold(a, s) {
			return a, true
		}
	}
	c.errf(deref(n), path, "unknown value %q%s%s", s, suggest(s, list), accepted(list))
	return "", false
}

// normOpt maps the spellings of an optimization level (O3, o3, -O3, 3) to
// the canonical one.
func normOpt(s string) (string, bool) {
	t := strings.TrimPrefix(strings.TrimSpace(s), "-")
	if len(t) > 0 && (t[0] == 'O' || t[0] == 'o') {
		t = t[1:]
	}
	switch strings.ToLower(t) {
	case "0", "1", "2", "3":
		return "O" + t, true
	case "s":
		return "Os", true
	case "fast":
		return "Ofast", true
	}
	return "", false
}

// parseCompiler splits "gcc-12", "gcc12", "clang" or "zig-0.11.0".
func parseCompiler(s string) Compiler {
	s = strings.ToLower(strings.TrimSpace(s))
	if fam, ver, ok := strings.Cut(s, "-"); ok {
		return Compiler{Family: fam, Version: ver}
	}
	if i := strings.IndexAny(s, "0123456789"); i > 0 {
		return Compiler{Family: s[:i], Version: s[i:]}
	}
	return Compiler{Family: s}
}

// field decodes one spec field. It reports type and enum mistakes; checks
// that need other fields (base, compiler) happen in resolve.
func (c *collector) field(key string, n *yaml.Node, path string) (fval, bool) {
	v := fval{node: deref(n), path: path}
	var ok bool
	switch key {
	case "name", "description", "redis", "source", "image":
		v.s, ok = c.str(n, path)
	case "base":
		v.s, ok = c.str(n, path)
		v.s = strings.ToLower(v.s)
	case "march", "mtune":
		v.s, ok = c.str(n, path)
		v.s = strings.ToLower(strings.TrimPrefix(strings.TrimPrefix(v.s, "-"+key+"="), "="))
	case "kind":
		var s string
		if s, ok = c.str(n, path); ok && strings.EqualFold(s, "distro") {
			v.s = KindDistro
		} else if ok {
			v.s, ok = c.enum(n, path, kinds)
		}
	case "recipe":
		v.s, ok = c.enum(n, path, recipes)
	case "libc":
		v.s, ok = c.enum(n, path, libcs)
	case "platform":
		var s string
		if s, ok = c.str(n, path); ok {
			if v.s, ok = NormPlatform(s); !ok {
				c.errf(v.node, path, "unknown platform %q%s", s, accepted(platforms))
			}
		}
	case "mcpu":
		v.s, ok = c.str(n, path)
		v.s = strings.ToLower(strings.TrimPrefix(v.s, "-mcpu="))
	case "opt":
		var s string
		if s, ok = c.str(n, path); ok {
			if v.s, ok = normOpt(s); !ok {
				c.errf(v.node, path, "unknown optimization level %q%s%s", s, suggest(s, opts), accepted(opts))
			}
		}
	case "lto":
		if nn := deref(n); nn != nil && nn.Kind == yaml.ScalarNode && nn.Tag == "!!bool" {
			var b bool
			b, ok = c.boolean(n, path)
			v.s = map[bool]string{true: "full", false: "off"}[b]
		} else if s, sok := c.str(n, path); sok {
			switch strings.ToLower(s) {
			case "true", "on", "yes":
				v.s, ok = "full", true
			case "false", "no":
				v.s, ok = "off", true
			default:
				v.s, ok = c.enum(n, path, ltos)
			}
		}
	case "pgo", "bolt":
		var t *Training
		if t, ok = c.trained(n, path); t != nil && key == "pgo" {
			v.pgo = &PGO{Train: *t}
		} else if t != nil {
			v.bolt = &BOLT{Train: *t}
		}
	case "allocator":
		v.s, ok = c.enum(n, path, allocators)
	case "tls":
		v.b, ok = c.boolean(n, path)
	case "layouts":
		if v.n, ok = c.integer(n, path); ok && (v.n < 1 || v.n > MaxLayouts) {
			c.errf(v.node, path, "layouts: %d draws: from 1 (one build) to %d", v.n, MaxLayouts)
			ok = false
		}
	case "cflags", "ldflags":
		nn := deref(n)
		if nn != nil && nn.Kind == yaml.ScalarNode && nn.Tag == "!!str" {
			v.list = strings.Fields(nn.Value)
			ok = true
			for _, f := range v.list {
				v.lnodes = append(v.lnodes, nn)
				if why := BadFlag(f); why != "" {
					c.errf(nn, path, "flag %q: %s", f, why)
					ok = false
				}
			}
			return v, ok
		}
		elems, sok := c.seq(n, path)
		ok = sok
		for i, e := range elems {
			s, eok := c.str(e, index(path, i))
			if !eok {
				ok = false
				continue
			}
			if s == "" {
				c.errf(e, index(path, i), "empty flag")
				ok = false
				continue
			}
			if why := BadFlag(s); why != "" {
				c.errf(e, index(path, i), "flag %q: %s", s, why)
				ok = false
				continue
			}
			v.list = append(v.list, s)
			v.lnodes = append(v.lnodes, e)
		}
	case "compiler":
		nn := deref(n)
		if nn != nil && nn.Kind == yaml.MappingNode {
			ok = true
			for _, p := range c.pairs(nn, path, []string{"family", "version"}) {
				s, sok := c.str(p.v, join(path, p.key))
				if !sok {
					ok = false
					continue
				}
				if p.key == "family" {
					v.comp.Family = strings.ToLower(s)
				} else {
					v.comp.Version = s
				}
			}
			if !ok {
				return v, false
			}
			if v.comp.Family == "" {
				c.errf(nn, path, "compiler needs a family%s", accepted(families))
				return v, false
			}
		} else {
			var s string
			if s, ok = c.str(n, path); !ok {
				return v, false
			}
			v.comp = parseCompiler(s)
		}
		if !contains(families, v.comp.Family) {
			c.errf(v.node, path, "unknown compiler family %q%s%s", v.comp.Family, suggest(v.comp.Family, families), accepted(families))
			return v, false
		}
	default:
		c.errf(n, path, "internal: no decoder for field %q", key)
	}
	return v, ok
}

// layerOf decodes a mapping of spec fields. Fields that fail to decode are
// left out (their error is already reported).
func (c *collector) layerOf(n *yaml.Node, path string, known []string, skip ...string) layer {
	l := layer{}
	for _, p := range c.pairs(n, path, known) {
		if contains(skip, p.key) {
			continue
		}
		if v, ok := c.field(p.key, p.v, join(path, p.key)); ok {
			l[p.key] = v
		}
	}
	return l
}

// ---- top level ----

func decodeFile(c *collector, root *yaml.Node) *rawFile {
	rf := &rawFile{root: root, sources: map[string]Source{}, sourceNodes: map[string]*yaml.Node{}, defaults: layer{}}
	root = deref(root)
	if root.Kind != yaml.MappingNode {
		c.errf(root, "", "expected a mapping with %s at the top, got %s", strings.Join(topFields, ", "), describe(root))
		return rf
	}
	ps := c.mergedPairs(root, "", 0)
	for _, p := range ps {
		if strings.HasPrefix(p.key, "x-") {
			continue // extension fields hold YAML anchors
		}
		switch p.key {
		case "defaults":
			rf.defaults = c.layerOf(p.v, "defaults", buildFields)
		case "sources":
			c.decodeSources(rf, p.v)
		case "references":
			rf.referencesSet = true
			elems, _ := c.seq(p.v, "references")
			for i, e := range elems {
				path := index("references", i)
				rf.references = append(rf.references, entry{node: e, path: path, l: c.layerOf(e, path, referenceFields)})
			}
		case "variants":
			elems, _ := c.seq(p.v, "variants")
			for i, e := range elems {
				path := index("variants", i)
				rf.variants = append(rf.variants, entry{node: e, path: path, l: c.layerOf(e, path, variantFields)})
			}
		case "matrix":
			elems, _ := c.seq(p.v, "matrix")
			for i, e := range elems {
				rf.matrix = append(rf.matrix, c.decodeMatrix(e, index("matrix", i)))
			}
		case "runtimes":
			rf.runtimesSet = true
			rf.runtimes = c.decodeRuntimes(p.v)
		case "profiles":
			rf.profiles = c.decodeProfiles(p.v)
		case "experiment":
			rf.experiment, rf.claimNodes = c.decodeExperiment(p.v)
		default:
			c.errf(p.k, p.key, "unknown field%s%s; fields starting with x- are ignored", suggest(p.key, topFields), accepted(topFields))
		}
	}
	return rf
}

func (c *collector) decodeMatrix(n *yaml.Node, path string) rawMatrix {
	m := rawMatrix{entry: entry{node: n, path: path, l: layer{}}}
	ps := c.pairs(n, path, matrixFields)
	axesSet := false
	for _, p := range ps {
		fp := join(path, p.key)
		switch p.key {
		case "axes":
			axesSet = true
			for _, ap := range c.pairs(p.v, fp, buildFields) {
				ax := axis{key: ap.key, node: ap.k, path: join(fp, ap.key)}
				vals, ok := c.seq(ap.v, ax.path)
				if !ok {
					continue
				}
				for i, e := range vals {
					if v, ok := c.field(ap.key, e, index(ax.path, i)); ok {
						ax.values = append(ax.values, v)
					}
				}
				if len(vals) == 0 {
					c.errf(ap.k, ax.path, "axis is empty, so the matrix expands to nothing")
				}
				if len(ax.values) > 0 {
					m.axes = append(m.axes, ax)
				} else if len(vals) > 0 {
					m.axes = append(m.axes, ax) // all values bad: errors already reported
				}
			}
		case "include":
			elems, _ := c.seq(p.v, fp)
			for i, e := range elems {
				ip := index(fp, i)
				m.include = append(m.include, entry{node: e, path: ip, l: c.layerOf(e, ip, includeFields)})
			}
		case "exclude":
			elems, _ := c.seq(p.v, fp)
			for i, e := range elems {
				ip := index(fp, i)
				m.exclude = append(m.exclude, entry{node: e, path: ip, l: c.layerOf(e, ip, buildFields)})
			}
		default:
			if v, ok := c.field(p.key, p.v, fp); ok {
				m.l[p.key] = v
			}
		}
	}
	if !axesSet && len(m.include) == 0 {
		c.errf(n, path, "matrix needs axes (a mapping of field: [values]) or include")
	}
	return m
}

var shaRE = regexp.MustCompile(`^[0-9a-f]{64}$`)

func (c *collector) sha(n *yaml.Node, path string, parent *yaml.Node) string {
	if n == nil {
		c.errf(parent, path, "sha256 is required: a source without a checksum cannot be verified")
		return ""
	}
	s, ok := c.str(n, path)
	if !ok {
		return ""
	}
	s = strings.ToLower(strings.TrimPrefix(s, "sha256:"))
	if !shaRE.MatchString(s) {
		c.errf(deref(n), path, "%q is not a sha256 checksum (64 hex digits)", s)
		return ""
	}
	return s
}

var urlSchemes = []string{"https://", "http://", "file://", "debian:", "npm:"}

func (c *collector) url(n *yaml.Node, path string) string {
	s, ok := c.str(n, path)
	if !ok {
		return ""
	}
	for _, p := range urlSchemes {
		if strings.HasPrefix(s, p) && len(s) > len(p) {
			return s
		}
	}
	c.errf(deref(n), path, "unsupported URL %q%s", s, accepted([]string{"https://…", "http://…", "file://…", "debian:<pool path>", "npm:<package>@<version>"}))
	return ""
}

var sourceNameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9._+-]*$`)

func (c *collector) decodeSources(rf *rawFile, n *yaml.Node) {
	for _, p := range c.pairs(n, "sources", nil) {
		path := join("sources", p.key)
		if !sourceNameRE.MatchString(p.key) {
			c.errf(p.k, path, "source names are lowercase letters, digits and . _ + - (like redis-7.0.15)")
			continue
		}
		src := Source{Name: p.key}
		if _, ver, ok := strings.Cut(p.key, "-"); ok {
			src.Version = ver
		}
		got := map[string]*yaml.Node{}
		for _, f := range c.pairs(p.v, path, sourceFields) {
			got[f.key] = f.v
		}
		if !isNull(p.v) && deref(p.v).Kind != yaml.MappingNode {
			continue // type error already reported
		}
		if v := got["version"]; v != nil {
			src.Version, _ = c.str(v, join(path, "version"))
		}
		if v := got["url"]; v != nil {
			src.URL = c.url(v, join(path, "url"))
		}
		if v := got["path"]; v != nil {
			src.Path, _ = c.str(v, join(path, "path"))
		}
		src.SHA256 = c.sha(got["sha256"], join(path, "sha256"), p.k)
		if v := got["fallbacks"]; v != nil {
			elems, _ := c.seq(v, join(path, "fallbacks"))
			for i, e := range elems {
				fp := index(join(path, "fallbacks"), i)
				fg := map[string]*yaml.Node{}
				for _, f := range c.pairs(e, fp, fallbackFields) {
					fg[f.key] = f.v
				}
				fb := Fallback{SHA256: c.sha(fg["sha256"], join(fp, "sha256"), e)}
				if fg["url"] == nil {
					c.errf(e, fp, "fallback needs a url")
				} else {
					fb.URL = c.url(fg["url"], join(fp, "url"))
				}
				src.Fallbacks = append(src.Fallbacks, fb)
			}
		}
		if got["url"] == nil && got["path"] == nil && len(src.Fallbacks) == 0 {
			c.errf(p.k, path, "source needs a url, a path or fallbacks")
		}
		rf.sources[p.key] = src
		rf.sourceNodes[p.key] = p.k
	}
}

// DefaultRuntimes are used when the file has no runtimes section.
func DefaultRuntimes() []Runtime {
	return []Runtime{
		{Name: "host", Network: "host", Seccomp: "default", ServerCPUs: "0", ClientCPUs: "1"},
		{Name: "bridge", Network: "bridge", Seccomp: "default", ServerCPUs: "0", ClientCPUs: "1"},
		{Name: "host-unconfined", Network: "host", Seccomp: "unconfined", ServerCPUs: "0", ClientCPUs: "1"},
		{Name: "unix", Network: "unix", Seccomp: "default", ServerCPUs: "0", ClientCPUs: "1"},
	}
}

var cpusetRE = regexp.MustCompile(`^[0-9]+(-[0-9]+)?(,[0-9]+(-[0-9]+)?)*$`)

func (c *collector) decodeRuntimes(n *yaml.Node) []Runtime {
	elems, ok := c.seq(n, "runtimes")
	if ok && len(elems) == 0 {
		c.errf(deref(n), "runtimes", "runtimes is empty; omit it for the defaults (host, bridge, host-unconfined, unix)")
	}
	var out []Runtime
	names := map[string]*yaml.Node{}
	for i, e := range elems {
		path := index("runtimes", i)
		rt := Runtime{Seccomp: "default", ServerCPUs: "0", ClientCPUs: "1"}
		good := true
		var seccompNode, limitNode *yaml.Node
		for _, p := range c.pairs(e, path, runtimeFields) {
			fp := join(path, p.key)
			var s string
			var ok bool
			switch p.key {
			case "name":
				if s, ok = c.str(p.v, fp); ok {
					if !nameRE.MatchString(s) {
						c.errf(deref(p.v), fp, "%q is not a valid name: use lowercase letters, digits and . _ -", s)
						ok = false
					} else if prev := names[s]; prev != nil {
						c.errf(deref(p.v), fp, "duplicate runtime name %q (first at line %d)", s, prev.Line)
						ok = false
					} else {
						names[s] = deref(p.v)
						rt.Name = s
					}
				}
			case "network":
				rt.Network, ok = c.enum(p.v, fp, networks)
			case "seccomp":
				rt.Seccomp, ok = c.enum(p.v, fp, seccomps)
				seccompNode = p.v
			case "spin":
				rt.Spin, ok = c.boolean(p.v, fp)
			case "cpu_limit":
				limitNode = p.v
				if s, ok = c.str(p.v, fp); ok {
					v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
					if err != nil || !(v > 0 && v <= 1024) {
						c.errf(deref(p.v), fp, "%q: want the server's CPU limit in CPUs, like Docker's --cpus (0.5, 2), above 0", s)
						ok = false
					} else {
						rt.CPULimit = v
					}
				}
			case "server_cpus", "client_cpus":
				if s, ok = c.str(p.v, fp); ok {
					if s != "" && !cpusetRE.MatchString(s) {
						c.errf(deref(p.v), fp, "%q is not a cpuset like 0, 0-3 or 0,2", s)
						ok = false
					} else if p.key == "server_cpus" {
						rt.ServerCPUs = s
					} else {
						rt.ClientCPUs = s
					}
				}
			}
			good = good && ok
		}
		if isNull(e) || deref(e).Kind != yaml.MappingNode {
			if isNull(e) {
				c.errf(e, path, "expected a mapping, got null")
			}
			continue
		}
		if rt.Name == "" && good {
			c.errf(e, path, "runtime needs a name")
			good = false
		}
		if rt.Network == "" && good {
			c.errf(e, path, "runtime needs a network%s", accepted(networks))
			good = false
		}
		// a server without a container has no filter and no cgroup of Docker's
		if rt.Network == NetworkNative && good {
			if seccompNode != nil && rt.Seccomp != "default" {
				c.errf(deref(seccompNode), join(path, "seccomp"), "a native server (network: native) runs without a container: it has no seccomp filter to set")
				good = false
			}
			if limitNode != nil {
				c.errf(deref(limitNode), join(path, "cpu_limit"), "a native server (network: native) runs without a container: a CPU quota needs a cgroup, pin it with server_cpus instead")
				good = false
			}
		}
		if good {
			out = append(out, rt)
		}
	}
	return out
}

// DefaultProfiles returns the built-in quick and full profiles.
func DefaultProfiles() map[string]Profile {
	quick := Profile{
		Name:           "quick",
		Tests:          []string{"SET", "GET", "LRANGE_100"},
		Clients:        50,
		Pipelines:      []int{64}, // server-bound with headroom: two generators on one vCPU fell short of two servers in its slow spells at P16 and P32 here; at P64 they use 30-80% of it
		DataSize:       3,
		Keyspace:       100000,
		Duration:       1e9,
		Warmup:         1e9, // after 300 ms, fresh pairs' first windows fell to 75-88% busy here
		WarmupNext:     300e6,
		Trials:         1,
		Replicates:     6, // one on each of a spec's 6 layout draws, and as many again at each later look for the pairs still deciding
		Looks:          3,
		Windows:        1,
		AxisReplicates: 4,
		Runtimes:       RuntimesFirst,
		Budget:         40 * 60e9, // a safety stop: a replicate takes about 5.6 s here
		Resolution:     0.025,     // 12 replicates gave ±0.70–1.22% on AMD, ±1.22–2.26% on Intel (2026-12-02/03): the widest answer the quick profile may give
		// No width-driven extension (Target 0): adding replicates where a
		// spec's 5-df interval looked wide selected on a variance estimate
		// that noisy, and the simulations' intervals covered 93.7%, not
		// 95% (issue 52). The looks add replicates only where the decision
		// is still open, each look at its own share of alpha.
		// The short form: 32 MiB of four value sizes, 3 servers each.
		Memory: &MemoryProfile{Target: 32 << 20, Sizes: "64:40,1K:30,4K:20,16K:10", Overwrite: 0.5, Delete: 0.3, Defrag: 3e9, Replicates: 3},
	}
	full := quick
	full.Name = "full"
	full.Tests = []string{"SET", "GET", "LPUSH", "LRANGE_100", "INCR", "HSET", "ZADD", "MSET"}
	full.Pipelines = []int{16}
	full.Trials = 3
	full.Replicates = 48
	full.Windows = 2
	full.AxisReplicates = 8
	full.Runtimes = RuntimesFirst
	full.Budget = 3 * 3600e9
	full.Resolution = 0.005
	full.Target = 0.005
	full.MaxReplicates = 96
	full.Extend = 30 * 60e9
	full.Looks = 1 // the full ranking of every pair, fixed design and width-driven extension
	full.Memory = &MemoryProfile{Target: 512 << 20, Sizes: "uniform:64-16K", Overwrite: 0.5, Delete: 0.3, Defrag: 30e9, Replicates: 6}
	return map[string]Profile{"quick": quick, "full": full}
}

// share reads a share written as a percentage (1.5%) or a fraction
// (0.015), above 0 and below 1; what says what the share is, for the error.
func (c *collector) share(n *yaml.Node, path, what string) (float64, bool) {
	s, ok := c.str(n, path)
	if !ok {
		return 0, false
	}
	num, pct := strings.CutSuffix(strings.TrimSpace(s), "%")
	v, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if pct {
		v /= 100
	}
	if err != nil || !(v > 0 && v < 1) {
		c.errf(deref(n), path, "%q: want %s, as a percentage (1.5%%) or a fraction (0.015), above 0 and below 100%%", s, what)
		return 0, false
	}
	return v, true
}

func (c *collector) duration(n *yaml.Node, path string, allowZero bool) (d time.Duration, ok bool) {
	s, ok := c.str(n, path)
	if !ok {
		return 0, false
	}
	v, err := time.ParseDuration(s)
	if err != nil || v < 0 || (!allowZero && v == 0) {
		c.errf(deref(n), path, "expected a positive duration like 3s, 500ms or 2m, got %q", s)
		return 0, false
	}
	return v, true
}

func (c *collector) decodeProfiles(n *yaml.Node) map[string]Profile {
	builtin := DefaultProfiles()
	out := map[string]Profile{}
	for _, p := range c.pairs(n, "profiles", nil) {
		path := join("profiles", p.key)
		if !nameRE.MatchString(p.key) {
			c.errf(p.k, path, "%q is not a valid profile name: use lowercase letters, digits and . _ -", p.key)
			continue
		}
		pr, ok := builtin[p.key]
		if !ok {
			pr = builtin["quick"]
		}
		pr.Name = p.key
		pr.Tests = append([]string(nil), pr.Tests...)
		pr.Pipelines = append([]int(nil), pr.Pipelines...)
		setMax, setLooks := false, false
		for _, f := range c.pairs(p.v, path, profileFields) {
			fp := join(path, f.key)
			switch f.key {
			case "tests":
				elems, ok := c.seq(f.v, fp)
				if !ok {
					continue
				}
				if len(elems) == 0 {
					c.errf(deref(f.v), fp, "a profile needs at least one test%s", accepted(benchTests))
					continue
				}
				pr.Tests, _ = c.testNames(elems, fp)
			case "pipelines":
				elems, ok := c.seq(f.v, fp)
				if !ok {
					continue
				}
				if len(elems) == 0 {
					c.errf(deref(f.v), fp, "a profile needs at least one pipeline depth (1 = no pipelining)")
					continue
				}
				pr.Pipelines = nil
				for i, e := range elems {
					if v, ok := c.integer(e, index(fp, i)); ok {
						if v < 1 {
							c.errf(e, index(fp, i), "pipeline depth must be at least 1")
							continue
						}
						pr.Pipelines = append(pr.Pipelines, v)
					}
				}
			case "max_trials":
				c.errf(f.k, fp, "max_trials was removed: the number of windows is fixed before measuring (replicates, windows), so no result depends on when the run stopped")
			case "runtimes":
				s, ok := c.str(f.v, fp)
				if !ok {
					continue
				}
				if s != RuntimesFirst && s != RuntimesAll {
					c.errf(deref(f.v), fp, "unknown value %q%s", s, accepted([]string{RuntimesFirst, RuntimesAll}))
					continue
				}
				pr.Runtimes = s
			case "clients", "data_size", "keyspace", "trials", "replicates", "windows", "axis_replicates", "looks":
				v, ok := c.integer(f.v, fp)
				if !ok {
					continue
				}
				lo := 1
				// replicates: 0 is standalone trials only (no co-scheduled
				// pairs, so no calibration): for a path no pair can saturate
				if f.key == "keyspace" || f.key == "trials" || f.key == "axis_replicates" || f.key == "replicates" {
					lo = 0
				}
				if v < lo {
					c.errf(deref(f.v), fp, "must be at least %d", lo)
					continue
				}
				switch f.key {
				case "clients":
					pr.Clients = v
				case "data_size":
					pr.DataSize = v
				case "keyspace":
					pr.Keyspace = v
				case "trials":
					pr.Trials = v
				case "replicates":
					pr.Replicates = v
				case "windows":
					pr.Windows = v
				case "axis_replicates":
					pr.AxisReplicates = v
				case "looks":
					if v > MaxLooks {
						c.errf(deref(f.v), fp, "at most %d looks: each spends a share of the decision's 5%% error, and more of them leave each too little", MaxLooks)
						continue
					}
					pr.Looks, setLooks = v, true
				}
			case "duration", "budget":
				if d, ok := c.duration(f.v, fp, false); ok {
					if f.key == "duration" {
						pr.Duration = d
					} else {
						pr.Budget = d
					}
				}
			case "warmup", "warmup_next":
				if d, ok := c.duration(f.v, fp, true); ok {
					if f.key == "warmup" {
						pr.Warmup = d
					} else {
						pr.WarmupNext = d
					}
				}
			case "memory":
				pr.Memory = c.memoryProfile(f.v, fp, pr.Memory)
			case "latency":
				pr.Latency = c.latencyProfile(f.v, fp, pr.Latency)
			case "resolution":
				if v, ok := c.share(f.v, fp, "the widest interval half-width the answer may have"); ok {
					pr.Resolution = v
				}
			case "target":
				if v, ok := c.share(f.v, fp, "the interval half-width the bench adds replicates toward"); ok {
					pr.Target = v
				}
			case "max_replicates":
				if v, ok := c.integer(f.v, fp); ok {
					pr.MaxReplicates, setMax = v, true
				}
			case "extend":
				if d, ok := c.duration(f.v, fp, true); ok {
					pr.Extend = d
				}
			}
		}
		if !setMax && pr.MaxReplicates < pr.Replicates {
			pr.MaxReplicates = pr.Replicates // more fixed replicates than the inherited cap: none added
		}
		if pr.Target > 0 && pr.MaxReplicates < pr.Replicates {
			c.errf(p.k, path, "max_replicates (%d) is below replicates (%d): it counts the fixed replicates too", pr.MaxReplicates, pr.Replicates)
		}
		if pr.MaxReplicates%2 != 0 {
			c.errf(p.k, path, "max_replicates (%d) must be even: replicates are added two at a time, one with each side first", pr.MaxReplicates)
		}
		if pr.Target > 0 && pr.Resolution > 0 && pr.Target > pr.Resolution {
			c.errf(p.k, path, "target (±%.2f%%) is wider than resolution (±%.2f%%): the bench would stop adding replicates short of what the answer needs", 100*pr.Target, 100*pr.Resolution)
		}
		if !setLooks && (pr.Target > 0 || pr.Replicates < 2) {
			pr.Looks = 1 // an inherited sequential design gives way to a target, or to no pairs
		}
		if pr.Looks > 1 && pr.Target > 0 {
			c.errf(p.k, path, "looks (%d) and target (±%.2f%%) are two ways of adding replicates after the first: the looks give them to the comparisons the decision is still waiting on, the target to every interval wider than it; choose one", pr.Looks, 100*pr.Target)
		}
		if pr.Looks > 1 && pr.Replicates < 2 {
			c.errf(p.k, path, "looks (%d) needs replicates of at least 2: each look adds that many to the pairs still deciding", pr.Looks)
		}
		if pr.Replicates%2 != 0 {
			c.errf(p.k, path, "replicates (%d) must be even: each pair is measured with the sides swapped in half of its replicates", pr.Replicates)
		}
		if pr.AxisReplicates%2 != 0 {
			c.errf(p.k, path, "axis_replicates (%d) must be even: the sides are swapped in half of them", pr.AxisReplicates)
		}
		out[p.key] = pr
	}
	return out
}

// latencyProfile reads a profile's latency section over base (nil: the
// defaults): off (or false) turns the measure off. rate is a share of the
// slowest cell's capacity (50%, 0.5) or requests/s (20000).
func (c *collector) latencyProfile(n *yaml.Node, path string, base *LatencyProfile) *LatencyProfile {
	if d := deref(n); d != nil && d.Kind == yaml.ScalarNode && (d.Value == "off" || d.Value == "false") {
		return nil
	}
	l := DefaultLatency()
	if base != nil {
		l = *base
	}
	for _, f := range c.pairs(n, path, latencyFields) {
		fp := join(path, f.key)
		switch f.key {
		case "test":
			if s, ok := c.str(f.v, fp); ok {
				if u := strings.ToUpper(s); contains(benchTests, u) {
					l.Test = u
				} else {
					c.errf(deref(f.v), fp, "unknown test %q%s%s", s, suggest(u, benchTests), accepted(benchTests))
				}
			}
		case "rate":
			s, ok := c.str(f.v, fp)
			if !ok {
				continue
			}
			if strings.HasSuffix(strings.TrimSpace(s), "%") {
				if v, ok := c.share(f.v, fp, "the share of the slowest cell's capacity to send at"); ok {
					l.Share, l.Rate = v, 0
				}
				continue
			}
			v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
			switch {
			case err == nil && v > 0 && v < 1:
				l.Share, l.Rate = v, 0
			case err == nil && v >= 1 && v <= 1e8:
				l.Rate, l.Share = v, 0
			default:
				c.errf(deref(f.v), fp, "%q: want a share of the slowest cell's capacity (50%% or 0.5) or requests/s in total (20000)", s)
			}
		case "clients", "trials":
			if v, ok := c.integer(f.v, fp); ok {
				if v < 1 || f.key == "trials" && v < 2 {
					c.errf(deref(f.v), fp, "%d: want at least %d", v, map[bool]int{true: 2, false: 1}[f.key == "trials"])
					continue
				}
				if f.key == "clients" {
					l.Clients = v
				} else {
					l.Trials = v
				}
			}
		case "duration", "warmup":
			if d, ok := c.duration(f.v, fp, f.key == "warmup"); ok {
				if f.key == "duration" {
					l.Duration = d
				} else {
					l.Warmup = d
				}
			}
		case "images":
			if v, ok := c.enum(f.v, fp, []string{LatencyPrimary, LatencyAll}); ok {
				l.Images = v
			}
		}
	}
	return &l
}

// memoryProfile reads a profile's memory section over base (the built-in
// one): off (or false) turns the workload off.
func (c *collector) memoryProfile(n *yaml.Node, path string, base *MemoryProfile) *MemoryProfile {
	if d := deref(n); d != nil && d.Kind == yaml.ScalarNode && (d.Value == "off" || d.Value == "false") {
		return nil
	}
	m := MemoryProfile{Target: 64 << 20, Sizes: "uniform:64-16K", Overwrite: 0.5, Delete: 0.3, Replicates: 3}
	if base != nil {
		m = *base
	}
	for _, f := range c.pairs(n, path, memoryFields) {
		fp := join(path, f.key)
		switch f.key {
		case "target":
			s, ok := c.str(f.v, fp)
			if !ok {
				continue
			}
			b, err := loadgen.ParseBytes(s)
			if err != nil || b <= 0 {
				c.errf(deref(f.v), fp, "%q is not a size: want bytes with a unit, like 64MiB or 1GiB", s)
				continue
			}
			m.Target = b
		case "sizes":
			s, ok := c.str(f.v, fp)
			if !ok {
				continue
			}
			if _, err := loadgen.ParseSizes(s); err != nil {
				c.errf(deref(f.v), fp, "%v", err)
				continue
			}
			m.Sizes = s
		case "overwrite", "delete":
			s, ok := c.str(f.v, fp)
			if !ok {
				continue
			}
			v, err := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64)
			if strings.HasSuffix(s, "%") {
				v /= 100
			}
			if err != nil || v < 0 || v > 1 || f.key == "delete" && v >= 1 {
				c.errf(deref(f.v), fp, "%q: want a share in [0, 1) (0.3 or 30%%)", s)
				continue
			}
			if f.key == "overwrite" {
				m.Overwrite = v
			} else {
				m.Delete = v
			}
		case "defrag":
			if d, ok := c.duration(f.v, fp, true); ok {
				m.Defrag = d
			}
		case "replicates":
			if v, ok := c.integer(f.v, fp); ok {
				if v < 1 {
					c.errf(deref(f.v), fp, "must be at least 1 (memory: off turns the workload off)")
					continue
				}
				m.Replicates = v
			}
		}
	}
	return &m
}

// yamlError returns the error yaml.v3 gives for data ("" when it parses).
func yamlError(data []byte) (msg string) {
	defer func() {
		if recover() != nil {
			msg = "panic"
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			return ""
		}
		if err != nil {
			return err.Error()
		}
	}
}

// problemLine finds, by bisection over line prefixes, the first line
// whose inclusion makes the parser fail with msg; 0 when it cannot tell.
func problemLine(data []byte, msg string) int {
	var ends []int // ends[i] = offset just past line i+1
	for i, b := range data {
		if b == '\n' {
			ends = append(ends, i+1)
		}
	}
	if len(ends) == 0 || ends[len(ends)-1] != len(data) {
		ends = append(ends, len(data))
	}
	fails := func(n int) bool { return yamlError(data[:ends[n-1]]) == msg }
	lo, hi := 1, len(ends) // invariant: fails(hi)
	if !fails(hi) {
		return 0
	}
	for steps := 0; lo < hi && steps < 32; steps++ {
		mid := (lo + hi) / 2
		if fails(mid) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return hi
}

// firstColumn is the column of the first non-blank character of a line.
func firstColumn(data []byte, line int) int {
	lines := bytes.SplitN(data, []byte("\n"), line+1)
	if line < 1 || line > len(lines) {
		return 0
	}
	l := lines[line-1]
	for i, b := range l {
		if b != ' ' && b != '\t' {
			return i + 1
		}
	}
	return 0
}

// BadFlag says why f cannot be a compiler or linker flag ("" when it can).
// The flags reach the build through a shell (word-split, globbed) and
// make (which expands $(...), including $(shell ...)), so only characters
// neither gives a meaning are taken: a flag with a space would silently
// become two, one with $ or a backquote could run commands in the build.
func BadFlag(f string) string {
	for _, r := range f {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		case strings.ContainsRune("-_+,.=:/@%", r):
		case r == ' ' || r == '\t' || r == '\n':
			return "a flag holds no white space (one list item is one flag: write two items for two flags)"
		default:
			return fmt.Sprintf("%q is not allowed in a flag (the flags reach a shell and make, which would expand it); allowed: letters, digits and - _ + , . = : / @ %%", r)
		}
	}
	return ""
}
