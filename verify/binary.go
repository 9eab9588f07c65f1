package verify

import (
	"bytes"
	"debug/elf"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/redis-variants/redis-variants/variants"
)

// BinaryInfo is what an ELF binary records about how it was built.
type BinaryInfo struct {
	Comments     []string // .comment: compiler identities, e.g. "GCC: (Debian 12.2.0-14) 12.2.0"
	CommandLines []string // .GCC.command.line: gcc -frecord-gcc-switches / clang -frecord-command-line
	Needed       []string // DT_NEEDED shared libraries
	Symbols      bool     // whether it has a symbol table (not stripped)
	JemallocSyms bool     // defines je_malloc* symbols (a statically linked jemalloc, like Redis's bundled one)
	Interp       string   // PT_INTERP, the dynamic loader ("" for a static binary)
	BOLTNote     string   // .note.bolt_info: BOLT's revision and options ("" when BOLT did not rewrite it)
	Machine      string   // the ELF machine, as debug/elf names it (EM_X86_64, EM_AARCH64)
}

// ReadBinary parses an ELF binary.
func ReadBinary(data []byte) (*BinaryInfo, error) {
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("reading ELF binary: %w", err)
	}
	defer f.Close()
	info := &BinaryInfo{Machine: f.Machine.String()}
	strs := func(name string) ([]string, error) {
		s := f.Section(name)
		if s == nil {
			return nil, nil
		}
		b, err := s.Data()
		if err != nil {
			return nil, fmt.Errorf("reading ELF section %s: %w", name, err)
		}
		var out []string
		for _, p := range bytes.Split(b, []byte{0}) {
			if t := strings.TrimSpace(string(p)); t != "" && !slices.Contains(out, t) {
				out = append(out, t)
			}
		}
		return out, nil
	}
	if info.Comments, err = strs(".comment"); err != nil {
		return nil, err
	}
	if info.CommandLines, err = strs(".GCC.command.line"); err != nil {
		return nil, err
	}
	bolt, err := strs(".note.bolt_info")
	if err != nil {
		return nil, err
	}
	for _, p := range bolt {
		// the note's name is "BOLT"; its text starts "BOLT revision: "
		if i := strings.Index(p, "BOLT"); i >= 0 && p != "BOLT" {
			info.BOLTNote = strings.TrimSpace(strings.Join([]string{info.BOLTNote, p[i:]}, " "))
		}
	}
	info.Needed, _ = f.ImportedLibraries()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			b := make([]byte, p.Filesz)
			if _, err := p.ReadAt(b, 0); err == nil {
				info.Interp = strings.TrimRight(string(b), "\x00")
			}
		}
	}
	if syms, err := f.Symbols(); err == nil && len(syms) > 0 {
		info.Symbols = true
		for _, s := range syms {
			if strings.HasPrefix(s.Name, "je_malloc") && s.Section != elf.SHN_UNDEF {
				info.JemallocSyms = true
				break
			}
		}
	}
	return info, nil
}

// Flags is what one recorded command line says.
type Flags struct {
	Opt   string // effective -O level ("O2"; "O0" when none is recorded)
	March string
	Mtune string
	LTO   bool // -flto*, or GCC's link-time ("GNU GIMPLE ... -fltrans") record
	Line  string
	// TargetCPU and Features are what zig cc hands its clang
	// (-Xclang -target-cpu X, -Xclang -target-feature +f): zig resolves
	// -march itself and records no -march.
	TargetCPU string
	Features  []string // enabled ("+") features, without the "+"
	Mcpu      string   // -mcpu= (arm64)
}

// zigNative describes a zig command line that targets more than the
// x86-64 baseline: the build CPU's features, which is what native means.
func (f Flags) zigNative() (string, bool) {
	if f.TargetCPU == "" {
		return "", false
	}
	has := func(x string) bool { return slices.Contains(f.Features, x) }
	ok := has("sse4.2") || has("avx2") || f.TargetCPU != "x86-64" && f.TargetCPU != "baseline"
	return fmt.Sprintf("-target-cpu %s with %d features enabled (avx2: %v, avx512f: %v)", f.TargetCPU, len(f.Features), has("avx2"), has("avx512f")), ok
}

// ParseFlags reads one .GCC.command.line entry; the last of each option wins.
func ParseFlags(line string) Flags {
	f := Flags{Opt: "O0", Line: line}
	toks := strings.Fields(line)
	// next returns the value after toks[i], skipping zig's -Xclang markers.
	next := func(i int) string {
		for j := i + 1; j < len(toks); j++ {
			if toks[j] != "-Xclang" {
				return toks[j]
			}
		}
		return ""
	}
	for i, tok := range toks {
		switch {
		case tok == "-target-cpu":
			f.TargetCPU = next(i)
		case tok == "-target-feature":
			if v := next(i); strings.HasPrefix(v, "+") {
				f.Features = append(f.Features, v[1:])
			}
		case tok == "-O":
			f.Opt = "O1"
		case strings.HasPrefix(tok, "-O"):
			f.Opt = tok[1:]
		case strings.HasPrefix(tok, "-march="):
			f.March = strings.TrimPrefix(tok, "-march=")
		case strings.HasPrefix(tok, "-mtune="):
			f.Mtune = strings.TrimPrefix(tok, "-mtune=")
		case strings.HasPrefix(tok, "-mcpu="):
			f.Mcpu = strings.TrimPrefix(tok, "-mcpu=")
		case strings.HasPrefix(tok, "-flto") && tok != "-flto=0" || tok == "-fltrans" || tok == "-fwpa":
			f.LTO = true
		}
	}
	if strings.HasPrefix(line, "GNU GIMPLE") {
		f.LTO = true
	}
	return f
}

// RedisFlags returns the recorded command lines of Redis's own sources
// (Redis 7's src/Makefile compiles them with -std=c11, Redis 8's with
// -std=gnu11 and -g -ggdb; the bundled deps use c99, gnu99, jemalloc's
// gnu11 with -g3, or the compiler's default); when none can be told apart,
// all of them. own reports which.
func (b *BinaryInfo) RedisFlags() (fl []Flags, own bool) {
	for _, l := range b.CommandLines {
		if isRedisOwn(l) {
			fl = append(fl, ParseFlags(l))
		}
	}
	if len(fl) > 0 {
		return fl, true
	}
	for _, l := range b.CommandLines {
		fl = append(fl, ParseFlags(l))
	}
	return fl, false
}

func isRedisOwn(line string) bool {
	toks := strings.Fields(line)
	return slices.Contains(toks, "-std=c11") ||
		slices.Contains(toks, "-std=gnu11") && slices.Contains(toks, "-ggdb")
}

// ObjectsOptCheck fails when any recorded object, Redis's own or a bundled
// dependency's, was compiled without optimisation while the spec asks for
// some: a dependency whose make flags were overridden (Redis 8's jemalloc
// under `make CFLAGS=...`) compiles at -O0 and shows only here, since the
// -O level check reads Redis's own sources. Dependencies keep their own
// levels (lua -O2, linenoise -Os): only -O0 is an error.
func ObjectsOptCheck(b *BinaryInfo, v variants.Variant) Check {
	c := Check{Name: "binary objects -O"}
	want := strings.TrimPrefix(v.Opt, "-")
	var bad []string
	levels := map[string]int{}
	for _, l := range b.CommandLines {
		f := ParseFlags(l)
		levels["-"+f.Opt]++
		if f.Opt == "O0" {
			bad = append(bad, l)
		}
	}
	var seen []string
	for l, n := range levels {
		seen = append(seen, fmt.Sprintf("%s ×%d", l, n))
	}
	sort.Strings(seen)
	c.Detail = fmt.Sprintf("%d distinct recorded command lines: %s", len(b.CommandLines), strings.Join(seen, ", "))
	switch {
	case len(b.CommandLines) == 0:
		c.Detail = "the binary records no command lines: the objects' -O cannot be confirmed"
	case want == "O0" || want == "":
		c.NotApplicable = true
		c.Detail = "spec -O0: any level is what it asks for, nothing to hold the objects to; " + c.Detail
	case len(bad) == 0:
		c.OK = true
	default:
		for i, l := range bad {
			if len(l) > 160 {
				bad[i] = l[:160] + "…"
			}
		}
		c.Detail = fmt.Sprintf("MISMATCH: spec -%s but %d recorded command line(s) show no optimisation (-O0): %s", want, len(bad), strings.Join(bad, " | "))
	}
	return c
}

// CompilerCheck compares the compiler identity in .comment with the spec.
func CompilerCheck(b *BinaryInfo, c variants.Compiler) Check {
	ch := Check{Name: "binary compiler"}
	var clang, gcc []string
	for _, s := range b.Comments {
		switch {
		case strings.Contains(s, "clang version"):
			clang = append(clang, s)
		case strings.HasPrefix(s, "GCC:"):
			gcc = append(gcc, s)
		}
	}
	recorded := strings.Join(b.Comments, " | ")
	if len(b.Comments) == 0 {
		ch.Detail = "the binary has no .comment section: the compiler cannot be confirmed"
		return ch
	}
	switch c.Family {
	case "gcc":
		ok := len(gcc) > 0 && len(clang) == 0
		if ok && c.Version != "" {
			ok = false
			for _, s := range gcc {
				if strings.Contains(s, ") "+c.Version+".") || strings.HasSuffix(s, ") "+c.Version) {
					ok = true
				}
			}
		}
		ch.OK = ok
	case "clang":
		ch.OK = len(clang) > 0
		if ch.OK && c.Version != "" {
			ch.OK = false
			for _, s := range clang {
				if strings.Contains(s, "clang version "+c.Version+".") || strings.Contains(s, "clang version "+c.Version+" ") {
					ch.OK = true
				}
			}
		}
	case "zig":
		// zig cc is clang inside; its .comment names clang (and zig's bootstrap).
		ch.OK = len(clang) > 0
	default:
		ch.Detail = fmt.Sprintf("unknown compiler family %q in the spec; binary records: %s", c.Family, recorded)
		return ch
	}
	if ch.OK {
		ch.Detail = fmt.Sprintf("spec %s; binary records %s", c, recorded)
	} else {
		ch.Detail = fmt.Sprintf("MISMATCH: spec %s but the binary records %s", c, recorded)
	}
	return ch
}

// FlagChecks compares the -O level, -march, -mtune and LTO recorded in the
// binary with the spec. A binary that records no command line fails them:
// without the record the flags cannot be confirmed.
func FlagChecks(b *BinaryInfo, v variants.Variant) []Check {
	if len(b.CommandLines) == 0 {
		msg := "the binary has no .GCC.command.line section (built without -frecord-gcc-switches/-frecord-command-line): its flags cannot be confirmed"
		return []Check{{Name: "binary -O level", Detail: msg}}
	}
	fl, own := b.RedisFlags()
	scope := "Redis's own sources (Redis 7's -std=c11, Redis 8's -std=gnu11 -ggdb)"
	if !own {
		scope = "all recorded command lines (Redis's own could not be told apart)"
	}
	var out []Check
	// -O level
	levels := distinct(fl, func(f Flags) string { return f.Opt })
	want := strings.TrimPrefix(v.Opt, "-")
	c := Check{Name: "binary -O level"}
	if own {
		c.OK = len(levels) == 1 && levels[0] == want
	} else {
		c.OK = slices.Contains(levels, want)
	}
	c.Detail = fmt.Sprintf("spec -%s; %s record %s", want, scope, dashed(levels))
	if !c.OK {
		c.Detail = "MISMATCH: " + c.Detail
		if v.Compiler.Family == "zig" {
			c.Detail += " (zig cc passes its own optimization level to its clang: the binary was not built at the level the spec asks for)"
		}
	}
	out = append(out, c)
	// -march / -mtune: the spec's value must be what Redis's sources were built with.
	type cpuFlag struct {
		name, want string
		get        func(Flags) string
	}
	cpuFlags := []cpuFlag{
		{"binary -march", v.March, func(f Flags) string { return f.March }},
		{"binary -mtune", v.Mtune, func(f Flags) string { return f.Mtune }},
	}
	if _, cross := variants.CrossFor(v.PlatformOf()); cross {
		cpuFlags = append(cpuFlags, cpuFlag{"binary -mcpu", v.Mcpu, func(f Flags) string { return f.Mcpu }})
	}
	for _, m := range cpuFlags {
		got := distinct(fl, m.get)
		c := Check{Name: m.name}
		switch {
		case m.want == "" && slices.ContainsFunc(append(slices.Clone(v.CFlags), v.LDFlags...), func(f string) bool { return strings.HasPrefix(f, strings.TrimPrefix(m.name, "binary ")+"=") }):
			c.NotApplicable = true
			c.Detail = fmt.Sprintf("spec: set through cflags/ldflags, not this field; recorded %s", orNone(got))
		case m.want == "" && v.Compiler.Family == variants.FamilyZig:
			c.NotApplicable = true
			c.Detail = fmt.Sprintf("spec: compiler default, which zig cc picks itself (the build CPU); recorded %s", orNone(got))
		case m.want == "":
			// the compiler's default: gcc records it (x86-64, generic),
			// clang records none; anything else was set by someone
			c.OK = !slices.ContainsFunc(got, func(g string) bool { return g != "" && g != "x86-64" && g != "generic" })
			c.Detail = fmt.Sprintf("spec: compiler default; %s record %s", scope, orNone(got))
		case m.want == "native" && v.Compiler.Family == "zig":
			// zig cc resolves native itself: it records the CPU and
			// its features for its clang instead of -march.
			c.OK = len(fl) > 0
			var desc string
			for _, f := range fl {
				d, ok := f.zigNative()
				c.OK = c.OK && ok
				desc = d
			}
			c.Detail = fmt.Sprintf("spec native; zig cc recorded %s", orNone([]string{desc}))
		case m.want == "native":
			// gcc records -march=native as the CPU it resolved to.
			c.OK = len(got) > 0 && !slices.Contains(got, "")
			c.Detail = fmt.Sprintf("spec native; recorded %s", orNone(got))
		default:
			c.OK = len(got) == 1 && got[0] == m.want || !own && slices.Contains(got, m.want)
			c.Detail = fmt.Sprintf("spec %s; %s record %s", m.want, scope, orNone(got))
		}
		if !c.OK {
			c.Detail = "MISMATCH: " + c.Detail
		}
		out = append(out, c)
	}
	// LTO
	lto := false
	for _, f := range fl {
		lto = lto || f.LTO
	}
	wantLTO := v.LTO != "" && v.LTO != "off"
	out = append(out, ObjectsOptCheck(b, v))
	c = Check{Name: "binary LTO", OK: lto == wantLTO}
	c.Detail = fmt.Sprintf("spec lto=%s; recorded command lines %s link-time optimization", orOff(v.LTO), map[bool]string{true: "show", false: "do not show"}[lto])
	if !c.OK {
		c.Detail = "MISMATCH: " + c.Detail
	}
	return append(out, c)
}

func distinct(fl []Flags, get func(Flags) string) []string {
	var out []string
	for _, f := range fl {
		if s := get(f); !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out
}

func dashed(ls []string) string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = "-" + l
	}
	return strings.Join(out, ", ")
}

func orNone(ls []string) string {
	var out []string
	for _, l := range ls {
		if l == "" {
			l = "(none)"
		}
		out = append(out, l)
	}
	if len(out) == 0 {
		return "(none)"
	}
	return strings.Join(out, ", ")
}

func orOff(s string) string {
	if s == "" {
		return "off"
	}
	return s
}

// AllocatorFromBinary says what the binary links for malloc, as far as its
// ELF tells: the DT_NEEDED allocator library, or a static jemalloc.
func AllocatorFromBinary(b *BinaryInfo) string {
	for _, n := range b.Needed {
		if a := LibraryAllocator(n); a != "" {
			return a
		}
	}
	if b.JemallocSyms {
		return variants.AllocJemalloc
	}
	if !b.Symbols {
		return "" // stripped: cannot tell bundled jemalloc from libc
	}
	return variants.AllocLibc
}

// LibraryAllocator is the allocator a shared library (a DT_NEEDED name,
// as libmimalloc.so.2) is, in the spec's words; "" for any other library.
func LibraryAllocator(lib string) string {
	switch {
	case strings.HasPrefix(lib, "libjemalloc"):
		return variants.AllocJemallocSystem
	case strings.HasPrefix(lib, "libmimalloc"):
		return variants.AllocMimalloc
	case strings.HasPrefix(lib, "libtcmalloc"):
		return variants.AllocTcmalloc
	}
	return ""
}

// Libc is the C library the binary runs on, from its dynamic loader and
// the libraries it needs: "glibc" (ld-linux, libc.so.6), "musl"
// (ld-musl), "static" (no loader: musl when zig or musl-gcc linked it,
// glibc's static link is warned against at plan time).
func (b *BinaryInfo) Libc() string {
	switch {
	case strings.Contains(b.Interp, "ld-musl"):
		return variants.LibcMusl
	case strings.Contains(b.Interp, "ld-linux") || slices.Contains(b.Needed, "libc.so.6"):
		return variants.LibcGlibc
	case b.Interp == "" && len(b.Needed) == 0:
		return "static"
	}
	return "unknown (loader " + b.Interp + ")"
}

// LibcCheck compares the C library the binary runs on with the spec: a
// musl spec passes with musl's loader or a static binary that links no
// glibc, a glibc spec only with glibc's.
func LibcCheck(b *BinaryInfo, want string) Check {
	if want == "" {
		want = variants.LibcGlibc
	}
	got := b.Libc()
	c := Check{Name: "libc", OK: got == want || (want == variants.LibcMusl && got == "static")}
	c.Detail = fmt.Sprintf("spec %s; binary: %s (loader %q, needs %s)", want, got, b.Interp, orNone(b.Needed))
	if !c.OK {
		c.Detail = "MISMATCH: " + c.Detail
	}
	return c
}

// ArchCheck compares the binary's ELF machine with the platform v's image
// is for: an arm64 variant must hold aarch64 code, whatever ran it here.
func ArchCheck(b *BinaryInfo, v variants.Variant) Check {
	want := "EM_X86_64"
	if c, ok := variants.CrossFor(v.PlatformOf()); ok {
		want = c.ELF
	}
	return Check{Name: "binary architecture", OK: b.Machine == want,
		Detail: fmt.Sprintf("platform %s wants %s; the binary is %s", v.PlatformOf(), want, b.Machine)}
}
