package variants

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// nameRE is a Docker repository path component: names become image
// references ("redis-variants/<name>:<id>") and file names.
var nameRE = regexp.MustCompile(`^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$`)

const maxNameLen = 100

type origin struct {
	desc string
	node *yaml.Node
}

type resolver struct {
	c     *collector
	rf    *rawFile
	names map[string]origin
	total int // variants produced so far (bounded by MaxCombinations)
}

// pending is an error found while resolving one variant, emitted once the
// variant's name is known.
type pending struct {
	node *yaml.Node
	path string
	msg  string
}

type pendings []pending

func (p *pendings) add(f fval, format string, args ...any) {
	*p = append(*p, pending{f.node, f.path, fmt.Sprintf(format, args...)})
}

// emit reports pending errors; errors from fields outside own (defaults,
// matrix axes) are prefixed with the variant they broke.
func (r *resolver) emit(ps pendings, own, name string) bool {
	for _, p := range ps {
		msg := p.msg
		if own == "" || !strings.HasPrefix(p.path, own) {
			msg = fmt.Sprintf("variant %q: %s", name, msg)
		}
		r.c.add(SeverityError, p.node, p.path, msg)
	}
	return len(ps) == 0
}

func resolve(c *collector, rf *rawFile) *Plan {
	p := &Plan{Sources: rf.sources, Profiles: DefaultProfiles(), Runtimes: DefaultRuntimes()}
	for k, v := range rf.profiles {
		p.Profiles[k] = v
	}
	if rf.runtimesSet {
		p.Runtimes = rf.runtimes
	}
	r := &resolver{c: c, rf: rf, names: map[string]origin{}}
	refs := rf.references
	if !rf.referencesSet && (len(rf.variants) > 0 || len(rf.matrix) > 0) {
		refs = []entry{defaultReference(rf)}
	}
	for _, e := range refs {
		if v, ok := r.reference(e); ok {
			p.References = append(p.References, v)
		}
	}
	for _, e := range rf.variants {
		if v, ok := r.variantEntry(e); ok {
			p.Variants = append(p.Variants, v)
		}
	}
	for _, m := range rf.matrix {
		p.Variants = append(p.Variants, r.expand(m)...)
	}
	if root := deref(rf.root); root != nil && root.Kind == yaml.MappingNode && len(rf.references)+len(rf.variants)+len(rf.matrix) == 0 {
		c.errf(rf.root, "", "the file defines no references, variants or matrix: nothing to build")
	}
	for i := range p.References {
		p.References[i].ID = ID(p.References[i])
	}
	for i := range p.Variants {
		p.Variants[i].ID = ID(p.Variants[i])
	}
	p.Variants = Draws(p.Variants)
	for _, v := range p.Variants {
		if v.Layout < 2 {
			continue
		}
		n := &yaml.Node{Line: v.Pos.Line, Column: v.Pos.Column}
		if len(v.Name) > maxNameLen {
			c.errf(n, "", "%q: layout draw %d of %q: the name is longer than %d characters (shorten the variant's name)", v.Name, v.Layout, v.DrawOf, maxNameLen)
			continue
		}
		r.claim(v.Name, n, "", fmt.Sprintf("layout draw %d of %q", v.Layout, v.DrawOf))
	}
	same := map[string]Variant{}
	for _, v := range p.All() {
		if prev, dup := same[v.ID]; dup {
			c.add(SeverityWarning, &yaml.Node{Line: v.Pos.Line, Column: v.Pos.Column}, "", fmt.Sprintf("%q and %q build the same image (ID %s)", prev.Name, v.Name, v.ID))
			continue
		}
		same[v.ID] = v
	}
	if rf.experiment != nil {
		c.checkClaims(p, rf.experiment, rf.claimNodes)
		p.Experiment = rf.experiment
	}
	return p
}

// DefaultReference is the reference a file without a references: section
// is ranked against: the base image's own redis-server package, what a
// release engineer on that distribution ships today. (An empty
// references: list asks for none.)
const DefaultReference = "stock-debian"

func defaultReference(rf *rawFile) entry {
	at := rf.root
	if d := deref(rf.root); d != nil && len(d.Content) > 0 {
		at = d.Content[0]
	}
	path := "references (default)"
	f := func(s string) fval { return fval{node: at, path: path, s: s} }
	return entry{node: at, path: path, l: layer{
		"name":        f(DefaultReference),
		"kind":        f(KindDistro),
		"description": f("the base image's own redis-server package (the file names no references)"),
	}}
}

// merge overlays layers, lowest first. A layer that names redis without
// source (or source without redis) clears the other from lower layers.
func merge(layers ...layer) layer {
	out := layer{}
	for _, l := range layers {
		_, hasR := l["redis"]
		_, hasS := l["source"]
		if hasS && !hasR {
			delete(out, "redis")
		}
		if hasR && !hasS {
			delete(out, "source")
		}
		for k, v := range l {
			out[k] = v
		}
	}
	return out
}

func (r *resolver) checkName(f fval) bool {
	if f.s == "" {
		r.c.errf(f.node, f.path, "name is empty")
		return false
	}
	if len(f.s) > maxNameLen || !nameRE.MatchString(f.s) {
		r.c.errf(f.node, f.path, "%q is not a valid name: use lowercase letters and digits separated by . _ or - (at most %d characters)", f.s, maxNameLen)
		return false
	}
	return true
}

// claim records a name, reporting a collision with an earlier one.
func (r *resolver) claim(name string, n *yaml.Node, path, desc string) bool {
	if prev, dup := r.names[name]; dup {
		where := ""
		if prev.node != nil {
			where = fmt.Sprintf(" (line %d)", prev.node.Line)
		}
		r.c.errf(n, path, "duplicate name %q: %s collides with %s%s", name, desc, prev.desc, where)
		return false
	}
	r.names[name] = origin{desc: desc, node: n}
	return true
}

// source returns the file's source of that name, else the built-in
// catalogue's (which then joins the plan's sources, so fetch gets it).
func (r *resolver) source(name string) (Source, bool) {
	if src, ok := r.rf.sources[name]; ok {
		return src, true
	}
	src, ok := CatalogueSource(name)
	if ok {
		r.rf.sources[name] = src
	}
	return src, ok
}

// resolveSource fills v.Source and v.Redis from the redis/source fields.
func (r *resolver) resolveSource(v *Variant, eff layer, at fval, ps *pendings) {
	fs, hasS := eff["source"]
	fr, hasR := eff["redis"]
	switch {
	case hasS:
		src, ok := r.source(fs.s)
		if !ok {
			ps.add(fs, "no source named %q%s%s", fs.s, suggest(fs.s, slices.Sorted(maps.Keys(r.rf.sources))), accepted(slices.Sorted(maps.Keys(r.rf.sources))))
			return
		}
		v.Source, v.Redis = src, src.Version
		if hasR && fr.s != src.Version {
			ps.add(fr, "redis %s does not match source %q, which is version %s", fr.s, src.Name, src.Version)
		}
	case hasR:
		src, ok := r.source("redis-" + fr.s)
		if !ok {
			ps.add(fr, "%s", unknownRelease(fr.s))
			return
		}
		v.Source, v.Redis = src, src.Version
	default:
		var redis []string
		for name := range r.rf.sources {
			if strings.HasPrefix(name, "redis-") {
				redis = append(redis, name)
			}
		}
		if len(redis) == 1 {
			v.Source = r.rf.sources[redis[0]]
			v.Redis = v.Source.Version
			return
		}
		ps.add(at, "no Redis version: set redis: (here or under defaults) or source:")
	}
}

// tuned resolves a from-source variant from merged fields.
func (r *resolver) tuned(eff layer, at fval) (Variant, pendings) {
	var ps pendings
	v := Variant{Kind: KindVariant, Name: eff["name"].s, Description: eff["description"].s, Pos: r.pos(at.node)}
	if f, ok := eff["kind"]; ok && f.s != KindVariant {
		ps.add(f, "kind %q belongs under references, not variants", f.s)
	}
	v.Base = DefaultBase
	fb, hasBase := eff["base"]
	if hasBase {
		v.Base = fb.s
	}
	base, baseOK := Bases[v.Base]
	if !baseOK {
		ps.add(fb, "unknown base image %q%s%s", v.Base, suggest(v.Base, slices.Sorted(maps.Keys(Bases))), accepted(slices.Sorted(maps.Keys(Bases))))
	}
	r.resolveSource(&v, eff, at, &ps)

	// Compiler: family and version, checked against what the base provides.
	fc, hasComp := eff["compiler"]
	if !hasComp {
		fc = at
	}
	comp := Compiler{Family: FamilyGCC}
	if hasComp {
		comp = fc.comp
	}
	compOK := true
	switch comp.Family {
	case FamilyGCC, FamilyClang:
		if !baseOK {
			compOK = false
			break
		}
		avail := base.GCC
		if comp.Family == FamilyClang {
			avail = base.Clang
		}
		if comp.Version == "" {
			comp.Version = avail[0]
		}
		if !contains(avail, comp.Version) {
			var acc []string
			for _, a := range avail {
				acc = append(acc, comp.Family+"-"+a)
			}
			sort.Strings(acc)
			ps.add(fc, "%s %s is not provided by %s%s", comp.Family, comp.Version, v.Base, accepted(acc))
			compOK = false
		}
	case FamilyZig:
		var have []string
		for name := range r.rf.sources {
			if ver, ok := strings.CutPrefix(name, "zig-"); ok {
				have = append(have, ver)
			}
		}
		sort.Strings(have)
		if comp.Version == "" {
			if len(have) == 0 {
				ps.add(fc, "zig comes from the source cache: add a source named zig-<version> under sources")
				compOK = false
				break
			}
			comp.Version = have[len(have)-1]
		}
		if _, known := zigLLVM[comp.Version]; !known {
			ps.add(fc, "unknown zig version %q%s", comp.Version, accepted(prefixed("zig-", slices.Sorted(maps.Keys(zigLLVM)))))
			compOK = false
			break
		}
		src, ok := r.source("zig-" + comp.Version)
		if !ok {
			ps.add(fc, "zig %s comes from the source cache: add a source named zig-%s under sources", comp.Version, comp.Version)
			compOK = false
			break
		}
		v.Toolchain = src
	}
	v.Compiler = comp

	v.Opt = "O2"
	if f, ok := eff["opt"]; ok {
		v.Opt = f.s
	}
	fp, hasPlat := eff["platform"]
	if hasPlat && fp.s != PlatformAMD64 {
		v.Platform = fp.s
	}
	_, cross := CrossFor(v.PlatformOf())
	if cross {
		r.crossChecks(&v, comp, compOK, eff, fp, &ps)
	} else if f, ok := eff["mcpu"]; ok && f.s != "" {
		ps.add(f, "mcpu: only with platform %s (on %s name the CPU with march and mtune)", PlatformARM64, PlatformAMD64)
	}
	if compOK && !cross {
		for _, key := range []string{"march", "mtune"} {
			f, ok := eff[key]
			if !ok || f.s == "" {
				continue
			}
			known := cpuNames(comp)
			if key == "mtune" {
				known = tuneNames(comp)
			}
			if !contains(known, f.s) {
				hint := suggest(f.s, known)
				if newer := newerCompilers(f.s); newer != "" {
					hint = " (it needs " + newer + ")"
				}
				ps.add(f, "-%s=%s is not known to %s %s%s%s", key, f.s, comp.Family, comp.Version, hint, accepted(known))
			}
		}
	}
	v.March, v.Mtune = eff["march"].s, eff["mtune"].s
	if g, ok := gravitons[v.Mtune]; ok && cross {
		v.Mtune = g
	}
	if comp.Family == FamilyZig {
		if why := ZigMtuneRefusal(v.March, v.Mtune); why != "" {
			ps.add(eff["mtune"], "%s", why)
		}
	}
	v.LTO = "off"
	if f, ok := eff["lto"]; ok {
		v.LTO = f.s
		if f.s == "thin" && comp.Family == FamilyGCC {
			ps.add(f, "gcc has no thin LTO (accepted with gcc: off, full)")
		}
	}
	zig, musl := comp.Family == FamilyZig, v.Libc == LibcMusl || eff["libc"].s == LibcMusl
	if f, ok := eff["pgo"]; ok && f.pgo != nil {
		v.PGO = &PGO{Train: r.training(f.pgo.Train)}
		refuseTraining(&ps, f, "pgo", "zig cc has no profile-guided build here (accepted with gcc and clang)", zig, musl)
	}
	if f, ok := eff["bolt"]; ok && f.bolt != nil {
		v.BOLT = &BOLT{Train: r.training(f.bolt.Train)}
		refuseTraining(&ps, f, "bolt", "not with zig cc here (accepted with gcc and clang: zig's linker is not asked for --emit-relocs)", zig, musl)
	}
	v.CFlags = append([]string(nil), eff["cflags"].list...)
	v.LDFlags = append([]string(nil), eff["ldflags"].list...)
	v.Allocator = AllocJemalloc
	if f, ok := eff["allocator"]; ok {
		v.Allocator = f.s
	}
	v.TLS = eff["tls"].b
	if f, ok := eff["layouts"]; ok && f.n > 1 {
		v.Layouts = f.n
	}
	v.Libc = LibcGlibc
	if f, ok := eff["libc"]; ok {
		v.Libc = f.s
	}
	if v.Libc == LibcMusl {
		r.checkMusl(v, eff, &ps)
	}
	return v, ps
}

// crossChecks resolves and checks the fields of a variant cross-compiled
// for another platform (arm64): its compiler, CPU names and the features
// that cannot be had across architectures here.
func (r *resolver) crossChecks(v *Variant, comp Compiler, compOK bool, eff layer, fp fval, ps *pendings) {
	at := func(key string) fval {
		if f, ok := eff[key]; ok {
			return f
		}
		return fp
	}
	if comp.Family == FamilyZig {
		ps.add(at("compiler"), "platform %s: not with zig cc here (accepted with gcc, Debian's aarch64-linux-gnu cross compiler, and clang --target=aarch64-linux-gnu)", v.Platform)
		compOK = false
	}
	if f, ok := eff["libc"]; ok && f.s == LibcMusl {
		ps.add(f, "platform %s: not with libc musl (Debian's musl-tools target the build machine only)", v.Platform)
	}
	if f, ok := eff["bolt"]; ok && f.bolt != nil {
		ps.add(f, "platform %s: no BOLT here (its instrumented binary would train under emulation, and Debian's bolt runs on the build machine's code only)", v.Platform)
	}
	if f, ok := eff["march"]; ok && f.s != "" {
		switch {
		case f.s == "native":
			ps.add(f, "-march=native names the build machine's CPU, an x86-64: a %s image is cross-compiled; name an architecture version or set mcpu (a Neoverse core or graviton2/3/4)", v.Platform)
		case !contains(arm64Arches, f.s):
			ps.add(f, "-march=%s is not an arm64 architecture version%s%s", f.s, suggest(f.s, arm64Arches), accepted(arm64Arches))
		}
	}
	if !compOK {
		return
	}
	for _, key := range []string{"mcpu", "mtune"} {
		f, ok := eff[key]
		if !ok || f.s == "" {
			continue
		}
		if f.s == "native" {
			ps.add(f, "-%s=native names the build machine's CPU, an x86-64: name an arm64 core or graviton2/3/4", key)
			continue
		}
		name, err := Arm64CPU(comp, f.s)
		if err != nil {
			ps.add(f, "%v", err)
			continue
		}
		if key == "mcpu" {
			v.Mcpu = name
		}
	}
}

// refuseTraining refuses a trained build (field pgo or bolt) that cannot
// train here: with zig cc (for why), or with musl.
func refuseTraining(ps *pendings, f fval, field, why string, zig, musl bool) {
	switch {
	case zig:
		ps.add(f, "%s: %s", field, why)
	case musl:
		ps.add(f, "%s: not with libc musl (the training runs the instrumented server in the glibc build stage)", field)
	}
}

// training fills t's unset fields from the file's quick profile (the
// built-in one when the file has none).
func (r *resolver) training(t Training) Training {
	q, ok := r.rf.profiles["quick"]
	if !ok {
		q = DefaultProfiles()["quick"]
	}
	if len(t.Tests) == 0 {
		t.Tests = slices.Clone(q.Tests)
	}
	if len(t.Pipelines) == 0 {
		t.Pipelines = slices.Clone(q.Pipelines)
	}
	if t.Clients == 0 {
		t.Clients = q.Clients
	}
	if t.DataSize == 0 {
		t.DataSize = q.DataSize
	}
	if t.Keyspace == 0 {
		t.Keyspace = q.Keyspace
	}
	if t.Requests == 0 {
		t.Requests = DefaultTrainingRequests
	}
	return t
}

// checkMusl refuses the musl builds that cannot work here, with the reason.
func (r *resolver) checkMusl(v Variant, eff layer, ps *pendings) {
	fl := eff["libc"]
	at := func(key string) fval {
		if f, ok := eff[key]; ok {
			return f
		}
		return fl
	}
	if v.Compiler.Family == FamilyClang {
		ps.add(at("compiler"), "libc musl: Debian packages no musl sysroot for clang; build musl with gcc (Debian's musl-gcc) or zig (its bundled musl)")
	}
	switch v.Allocator {
	case AllocJemalloc, AllocLibc:
	default:
		ps.add(at("allocator"), "libc musl: allocator %s has no musl build here (Debian's library is built against glibc); with musl use jemalloc (Redis's bundled one, as the Alpine image does) or libc (musl's own malloc)", v.Allocator)
	}
	if v.TLS {
		ps.add(at("tls"), "libc musl: tls needs OpenSSL built against musl, which Debian does not package")
	}
	if v.Compiler.Family == FamilyGCC && NeedsCXX(v.Redis) {
		ps.add(at("compiler"), "libc musl: Redis %s needs a C++ compiler (deps/fast_float), and Debian has no C++ standard library for musl; build it with zig (zig c++ brings its own)", v.Redis)
	}
}

// warn reports the questionable but valid choices in a tuned variant.
func (r *resolver) warn(v Variant, eff layer) {
	c := r.c
	if f := eff["march"]; f.s == "native" {
		c.warnf(f.node, f.path, "-march=native: the image only runs on CPUs like the build machine's")
	}
	if f := eff["mtune"]; f.s == "native" && eff["march"].s != "native" {
		c.warnf(f.node, f.path, "-mtune=native: tuned for the build machine's CPU; results elsewhere may differ")
	}
	if v.Opt == "Ofast" {
		f := eff["opt"]
		c.warnf(f.node, f.path, "-Ofast implies -ffast-math, which breaks the IEEE float semantics Redis relies on (INCRBYFLOAT, sorted-set scores)")
	}
	if v.Compiler.Family == FamilyZig {
		if x := ZigClangOpt(v.Opt); len(x) > 0 {
			f := eff["opt"]
			if f.node == nil {
				f = eff["compiler"]
			}
			got, _ := ZigCCLevel(v.Opt)
			c.warnf(f.node, f.path, "zig cc %s compiles -%s at -%s (its ReleaseFast mode, with -DNDEBUG): the build hands -%s to its clang (%s) so that the binary is at the level named; verify reads it from the recorded command line",
				v.Compiler.Version, v.Opt, got, v.Opt, strings.Join(x, " "))
		}
	}
	for _, key := range []string{"cflags", "ldflags"} {
		f := eff[key]
		for i, flag := range f.list {
			n, path := f.lnodes[i], index(f.path, i)
			if f.lnodes[i] == f.node { // written as one string
				path = f.path
			}
			switch {
			case key == "cflags" && (flag == "-O" || (strings.HasPrefix(flag, "-O") && !strings.HasPrefix(flag, "-Ox"))):
				c.warnf(n, path, "%s belongs in the opt field; in cflags it fights the one the build sets", flag)
			case strings.HasPrefix(flag, "-march="):
				c.warnf(n, path, "%s belongs in the march field", flag)
			case strings.HasPrefix(flag, "-mtune="):
				c.warnf(n, path, "%s belongs in the mtune field", flag)
			case flag == "-flto" || strings.HasPrefix(flag, "-flto="):
				c.warnf(n, path, "%s belongs in the lto field (off, thin, full)", flag)
			case flag == "-ffast-math":
				c.warnf(n, path, "-ffast-math breaks the IEEE float semantics Redis relies on (INCRBYFLOAT, sorted-set scores)")
			case strings.HasPrefix(flag, "-Werror"):
				c.warnf(n, path, "%s: Redis's bundled dependencies (jemalloc, lua, hiredis) are known not to build warning-free", flag)
			case (flag == "-static" || flag == "-static-pie") && !v.IsMusl():
				c.warnf(n, path, "%s: a static glibc binary cannot use NSS (getaddrinfo) or dlopen, so modules will not load", flag)
			case strings.HasPrefix(flag, "-fsanitize="):
				if v.Allocator == AllocJemalloc || v.Allocator == AllocJemallocSystem {
					c.warnf(n, path, "%s with allocator %s: sanitizers need the libc allocator (allocator: libc)", flag, v.Allocator)
				}
			}
		}
	}
}

func prefixed(p string, list []string) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = p + s
	}
	return out
}

func (r *resolver) pos(n *yaml.Node) Pos {
	if n == nil {
		return Pos{File: r.c.file}
	}
	return Pos{File: r.c.file, Line: n.Line, Column: n.Column}
}

func (r *resolver) variantEntry(e entry) (Variant, bool) {
	at := fval{node: e.node, path: e.path}
	fn, hasName := e.l["name"]
	if !hasName {
		if !isNull(e.node) && deref(e.node).Kind == yaml.MappingNode {
			r.c.errf(e.node, e.path, "variant needs a name")
		} else if isNull(e.node) {
			r.c.errf(e.node, e.path, "expected a mapping, got null")
		}
		return Variant{}, false
	}
	if _, img := e.l["image"]; img {
		return r.imageEntry(e, fn, false)
	}
	eff := merge(r.rf.defaults, e.l)
	v, ps := r.tuned(eff, at)
	ok := r.checkName(fn)
	ok = r.emit(ps, e.path, v.Name) && ok
	ok = r.claim(v.Name, fn.node, fn.path, e.path) && ok
	if ok {
		r.warn(v, eff)
	}
	r.total++
	return v, ok
}

func (r *resolver) reference(e entry) (Variant, bool) {
	at := fval{node: e.node, path: e.path}
	fn, hasName := e.l["name"]
	if !hasName {
		if isNull(e.node) {
			r.c.errf(e.node, e.path, "expected a mapping, got null")
		} else if deref(e.node).Kind == yaml.MappingNode {
			r.c.errf(e.node, e.path, "reference needs a name")
		}
		return Variant{}, false
	}
	var ps pendings
	kind := e.l["kind"].s
	if kind == "" {
		_, img := e.l["image"]
		_, rec := e.l["recipe"]
		switch {
		case rec:
			kind = KindOfficial
		case img:
			kind = KindImage
		default:
			ps.add(at, "reference needs a kind (accepted: %s, %s, %s)", KindDistro, KindOfficial, KindImage)
		}
	}
	if kind == KindImage {
		return r.imageEntry(e, fn, true)
	}
	v := Variant{Kind: kind, Name: fn.s, Description: e.l["description"].s, Pos: r.pos(e.node), Reference: true}
	v.Base = DefaultBase
	fb, hasBase := e.l["base"]
	if !hasBase {
		fb, hasBase = r.rf.defaults["base"]
	}
	if hasBase {
		v.Base = fb.s
	}
	base, baseOK := Bases[v.Base]
	if !baseOK {
		ps.add(fb, "unknown base image %q%s%s", v.Base, suggest(v.Base, slices.Sorted(maps.Keys(Bases))), accepted(slices.Sorted(maps.Keys(Bases))))
	}
	switch kind {
	case KindVariant:
		ps.add(e.l["kind"], "tuned variants belong under variants, not references")
	case KindDistro:
		for _, key := range []string{"source", "image", "recipe", "libc"} {
			if f, ok := e.l[key]; ok {
				ps.add(f, "%s does not apply to a %s reference (it installs the base image's redis-server package)", key, KindDistro)
			}
		}
		if baseOK {
			v.Redis = base.RedisPkg
			if f, ok := e.l["redis"]; ok && f.s != base.RedisPkg {
				ps.add(f, "%s ships redis %s, not %s%s", v.Base, base.RedisPkg, f.s, accepted([]string{base.RedisPkg}))
			}
		}
		v.Allocator = AllocJemallocSystem // Debian builds with USE_SYSTEM_JEMALLOC
		v.TLS = true
	case KindOfficial:
		eff := merge(pick(r.rf.defaults, "redis", "source"), e.l)
		r.resolveSource(&v, eff, at, &ps)
		if baseOK {
			v.Compiler = Compiler{Family: FamilyGCC, Version: base.GCC[0]}
		}
		v.Recipe = RecipeOfficial
		if f, ok := e.l["recipe"]; ok {
			v.Recipe = f.s
		}
		v.Opt, v.LTO, v.Allocator, v.TLS, v.Libc = "O2", "off", AllocJemalloc, true, LibcGlibc
		suffix := ""
		if v.Recipe == RecipeOfficialAlpine && NeedsCXX(v.Redis) {
			ps.add(e.l["recipe"], "recipe official-alpine: Redis %s needs a C++ compiler on musl (Alpine's g++), which Debian does not package; no stand-in can be rebuilt here (an image entry can still pull redis:%s-alpine)", v.Redis, v.Redis)
		}
		if v.Recipe == RecipeOfficialAlpine {
			// Alpine's image: musl, the bundled jemalloc, Alpine's gcc,
			// rebuilt here with Debian's musl-gcc; TLS off, as Debian has
			// no musl OpenSSL (the pulled image has it).
			v.Libc, v.TLS, suffix = LibcMusl, false, "-alpine"
		}
		v.Image = e.l["image"].s
		if v.Image == "" && v.Redis != "" {
			v.Image = "redis:" + v.Redis + suffix
		}
		if f, ok := e.l["image"]; ok {
			if err := CheckImageRef(v.Image); err != nil {
				ps.add(f, "%v", err)
			}
		}
	}
	ok := r.checkName(fn)
	ok = r.emit(ps, e.path, v.Name) && ok
	ok = r.claim(v.Name, fn.node, fn.path, e.path) && ok
	return v, ok
}

// imageEntry resolves an entry that names an existing image: a reference
// of kind image, or an entry under variants ranked like a tuned one. The
// image is pulled, never built, so build fields do not apply to it.
func (r *resolver) imageEntry(e entry, fn fval, reference bool) (Variant, bool) {
	var ps pendings
	f := e.l["image"]
	v := Variant{Kind: KindImage, Name: fn.s, Description: e.l["description"].s, Pos: r.pos(e.node), Image: f.s, Reference: reference}
	for _, key := range append(append([]string(nil), buildFields...), "recipe", "kind") {
		if key == "redis" {
			continue
		}
		if g, ok := e.l[key]; ok && !(key == "kind" && g.s == KindImage) {
			ps.add(g, "%s does not apply to an image entry: %s is pulled as it is, not built (to rebuild a recipe use kind official)", key, f.s)
		}
	}
	if f.s == "" {
		ps.add(f, "image needs a reference, e.g. redis:7.0.15 or registry.example.com/team/redis@sha256:<digest>")
	} else if err := CheckImageRef(f.s); err != nil {
		ps.add(f, "%v", err)
	}
	v.Redis = e.l["redis"].s
	if v.Redis == "" {
		v.Redis = RedisFromImage(f.s)
	}
	ok := r.checkName(fn)
	ok = r.emit(ps, e.path, v.Name) && ok
	ok = r.claim(v.Name, fn.node, fn.path, e.path) && ok
	if !reference {
		r.total++
	}
	return v, ok
}

func pick(l layer, keys ...string) layer {
	out := layer{}
	for _, k := range keys {
		if v, ok := l[k]; ok {
			out[k] = v
		}
	}
	return out
}

func without(l layer, keys ...string) layer {
	out := layer{}
	for k, v := range l {
		if !contains(keys, k) {
			out[k] = v
		}
	}
	return out
}

var placeholderRE = regexp.MustCompile(`\{([^{}]*)\}`)

// checkTemplate validates a matrix name template.
func (r *resolver) checkTemplate(f fval) bool {
	ok := true
	for _, m := range placeholderRE.FindAllStringSubmatch(f.s, -1) {
		if !contains(buildFields, m[1]) {
			r.c.errf(f.node, f.path, "unknown placeholder {%s} in name template%s%s", m[1], suggest(m[1], buildFields), accepted(buildFields))
			ok = false
		}
	}
	rest := placeholderRE.ReplaceAllString(f.s, "")
	if strings.ContainsAny(rest, "{}") {
		r.c.errf(f.node, f.path, "unbalanced { } in name template %q", f.s)
		ok = false
	}
	return ok
}

var nameJunkRE = regexp.MustCompile(`[^a-z0-9._-]+`)

// expandName fills a name template from a resolved variant and makes the
// result a valid name (lowercase, odd characters replaced by "-").
func expandName(tmpl string, v Variant) string {
	s := placeholderRE.ReplaceAllStringFunc(tmpl, func(ph string) string {
		switch ph[1 : len(ph)-1] {
		case "compiler":
			return v.Compiler.String()
		case "opt":
			return v.Opt
		case "march":
			return orDefault(v.March)
		case "mtune":
			return orDefault(v.Mtune)
		case "mcpu":
			return orDefault(v.Mcpu)
		case "platform":
			return v.Arch()
		case "lto":
			return v.LTO
		case "pgo":
			if v.PGO != nil {
				return "pgo"
			}
			return "nopgo"
		case "bolt":
			if v.BOLT != nil {
				return "bolt"
			}
			return "nobolt"
		case "allocator":
			return v.Allocator
		case "base":
			return v.Base
		case "redis":
			return v.Redis
		case "source":
			return v.Source.Name
		case "layouts":
			return fmt.Sprintf("l%d", max(1, v.Layouts))
		case "tls":
			if v.TLS {
				return "tls"
			}
			return "notls"
		case "libc":
			return v.Libc
		case "cflags":
			return flagsName(v.CFlags)
		case "ldflags":
			return flagsName(v.LDFlags)
		}
		return ph
	})
	s = nameJunkRE.ReplaceAllString(strings.ToLower(s), "-")
	return strings.Trim(s, "-._")
}

func orDefault(s string) string {
	if s == "" {
		return "default"
	}
	return s
}

func flagsName(flags []string) string {
	if len(flags) == 0 {
		return "none"
	}
	parts := make([]string, len(flags))
	for i, f := range flags {
		parts[i] = strings.TrimLeft(f, "-")
	}
	return strings.Join(parts, "-")
}

func fvalText(f fval) string {
	if f.comp.Family != "" {
		return f.comp.String()
	}
	if f.node != nil && f.node.Kind == yaml.ScalarNode {
		return f.node.Value
	}
	if f.list != nil {
		return "[" + strings.Join(f.list, " ") + "]"
	}
	return f.s
}

// matches reports whether an exclude value selects a combination's value.
func matches(want, got fval) bool {
	if want.comp.Family != "" || got.comp.Family != "" {
		if want.comp.Family != got.comp.Family {
			return false
		}
		return want.comp.Version == "" || want.comp.Version == got.comp.Version
	}
	if want.list != nil || got.list != nil {
		return strings.Join(want.list, "\x00") == strings.Join(got.list, "\x00")
	}
	return want.s == got.s && want.b == got.b
}

// expand turns one matrix entry into variants.
func (r *resolver) expand(m rawMatrix) []Variant {
	c := r.c
	tmpl, hasTmpl := m.l["name"]
	var keys []string
	for _, a := range m.axes {
		keys = append(keys, a.key)
	}
	if !hasTmpl {
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = "{" + k + "}"
		}
		tmpl = fval{node: m.node, path: join(m.path, "name"), s: strings.Join(parts, "-")}
	} else if !r.checkTemplate(tmpl) {
		return nil
	}
	common := without(m.l, "name", "description")

	// Cartesian product, first axis outermost.
	size := 1
	for _, a := range m.axes {
		size *= len(a.values)
		if size > MaxCombinations {
			break
		}
	}
	if r.total+size > MaxCombinations {
		c.errf(m.node, m.path, "matrix expands to more than %d variants in all; refusing it", MaxCombinations)
		return nil
	}
	var combos []layer
	if len(m.axes) > 0 && size > 0 {
		combos = []layer{{}}
		for _, a := range m.axes {
			var next []layer
			for _, base := range combos {
				for _, val := range a.values {
					l := layer{}
					for k, v := range base {
						l[k] = v
					}
					l[a.key] = val
					next = append(next, l)
				}
			}
			combos = next
		}
	}
	// Exclusions.
	used := make([]bool, len(m.exclude))
	for i, ex := range m.exclude {
		for k, f := range ex.l {
			if !contains(keys, k) {
				c.errf(f.node, f.path, "%q is not an axis of this matrix, so it cannot exclude anything%s", k, accepted(keys))
				used[i] = true // reported already
			}
		}
		if len(ex.l) == 0 && !isNull(ex.node) {
			used[i] = true
		}
	}
	var kept []layer
	for _, combo := range combos {
		excluded := false
		for i, ex := range m.exclude {
			if len(ex.l) == 0 {
				continue
			}
			all := true
			for k, f := range ex.l {
				if got, ok := combo[k]; !ok || !matches(f, got) {
					all = false
					break
				}
			}
			if all {
				used[i] = true
				excluded = true
			}
		}
		if !excluded {
			kept = append(kept, combo)
		}
	}
	for i, ex := range m.exclude {
		if !used[i] && len(combos) > 0 {
			c.warnf(ex.node, ex.path, "exclude matches no combination")
		}
	}
	if len(combos) > 0 && len(kept) == 0 && len(m.include) == 0 {
		c.errf(m.node, m.path, "every one of the %d combinations is excluded, so the matrix expands to nothing", len(combos))
	}

	var out []Variant
	add := func(l layer, at fval, own, desc string, name fval, hasName bool) {
		eff := merge(r.rf.defaults, common, l)
		v, ps := r.tuned(eff, at)
		if hasName {
			v.Name = name.s
		} else {
			v.Name = expandName(tmpl.s, v)
			name = fval{node: tmpl.node, path: tmpl.path, s: v.Name}
		}
		ok := true
		if !nameRE.MatchString(v.Name) || len(v.Name) > maxNameLen {
			c.errf(name.node, name.path, "%s: name %q is not valid: use lowercase letters and digits separated by . _ or -", desc, v.Name)
			ok = false
		}
		ok = r.emit(ps, own, v.Name) && ok
		ok = r.claim(v.Name, name.node, name.path, desc) && ok
		if ok {
			r.warn(v, eff)
			out = append(out, v)
		}
		r.total++
	}
	for _, combo := range kept {
		var parts []string
		for _, k := range keys {
			parts = append(parts, k+": "+fvalText(combo[k]))
		}
		at := fval{node: m.node, path: m.path}
		desc := fmt.Sprintf("%s combination {%s}", m.path, strings.Join(parts, ", "))
		add(combo, at, "", desc, fval{}, false)
	}
	for _, inc := range m.include {
		if isNull(inc.node) {
			c.errf(inc.node, inc.path, "expected a mapping, got null")
			continue
		}
		if deref(inc.node).Kind != yaml.MappingNode {
			continue
		}
		at := fval{node: inc.node, path: inc.path}
		name, hasName := inc.l["name"]
		if hasName && !r.checkName(name) {
			continue
		}
		add(without(inc.l, "name", "description"), at, inc.path, inc.path, name, hasName)
	}
	return out
}

// newerCompilers names the compiler releases that know a CPU the chosen
// one does not, or "" when none does.
func newerCompilers(cpu string) string {
	switch {
	case contains(cpuGen13, cpu):
		return "gcc 13 or later, clang 16 or later, zig 0.11.0 or later"
	case contains(cpuGen14, cpu):
		return "gcc 14 or later, clang 17 or later, zig 0.12.0 or later"
	case contains(cpuZnver5, cpu):
		return "gcc 14 or later, clang 19 or later, zig 0.14.0 or later"
	}
	return ""
}
