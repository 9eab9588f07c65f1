package sbom

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis-variants/redis-variants/variants"
)

// gcc compiles a C file into out with args, or fails t.
func gcc(t *testing.T, src, out string, args ...string) {
	t.Helper()
	c := filepath.Join(t.TempDir(), "x.c")
	if err := os.WriteFile(c, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("gcc", append([]string{"-o", out, c}, args...)...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, b)
	}
}

func write(t *testing.T, root, rel, body string) {
	t.Helper()
	p := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

const dpkgStatus = `Package: libc6
Status: install ok installed
Maintainer: GNU Libc Maintainers <debian-glibc@lists.debian.org>
Architecture: amd64
Source: glibc
Version: 2.36-9+deb12u10

Package: libmimalloc2.0
Status: install ok installed
Architecture: amd64
Source: mimalloc
Version: 2.0.9+ds-2

Package: gone
Status: deinstall ok config-files
Architecture: amd64
Version: 1
`

// TestScan scans three root filesystems built here, each with a
// redis-server whose ELF says how it allocates: a bundled jemalloc (its
// je_ symbols, its version string), mimalloc linked from a Debian package,
// and libc's malloc. The scan names the allocator the binary links, links
// it to the right package (STATIC_LINK to the bundled jemalloc,
// DYNAMIC_LINK to the package owning libmimalloc.so.2), and reads a source
// tree's bundled dependencies from their own headers.
func TestScan(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Fatalf("this test compiles its fixtures with the host's gcc: %v", err)
	}
	libs := t.TempDir()
	// a stand-in libmimalloc.so.2: what matters is the binary's DT_NEEDED
	gcc(t, "void *mi_malloc(unsigned long n) { return 0; }", filepath.Join(libs, "libmimalloc.so.2"), "-shared", "-fPIC", "-Wl,-soname,libmimalloc.so.2")
	const main = `#include <stdio.h>
int main(void) { puts("hi"); return 0; }`
	type want struct {
		alloc, link, linked string
	}
	for _, c := range []struct {
		name string
		src  string
		args []string
		want want
	}{
		{"jemalloc", main + `
const char *zmalloc_lib = "jemalloc-5.3.0";
void *je_malloc(unsigned long n) { return 0; }`, nil, want{variants.AllocJemalloc, "STATIC_LINK", "jemalloc 5.3.0"}},
		{"mimalloc", main, []string{"-Wl,--no-as-needed", "-L" + libs, "-l:libmimalloc.so.2"}, want{variants.AllocMimalloc, "DYNAMIC_LINK", "libmimalloc2.0 2.0.9+ds-2"}},
		{"libc", main, nil, want{variants.AllocLibc, "DYNAMIC_LINK", "libc6 2.36-9+deb12u10"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			gcc(t, c.src, filepath.Join(root, "usr/local/bin/redis-server"), c.args...)
			write(t, root, "var/lib/dpkg/status", dpkgStatus)
			write(t, root, "var/lib/dpkg/info/libc6:amd64.list", "/lib/x86_64-linux-gnu/libc.so.6\n")
			write(t, root, "var/lib/dpkg/info/libmimalloc2.0:amd64.list", "/usr/lib/x86_64-linux-gnu/libmimalloc.so.2\n")
			doc, err := Scan(root, Options{Name: "sbom", Namespace: "https://example.invalid/x", Created: time.Now().UTC().Format(time.RFC3339), Tool: "test"})
			if err != nil {
				t.Fatal(err)
			}
			if got := len(doc.Find("gone")); got != 0 {
				t.Errorf("a removed package (config-files) is listed")
			}
			srv := doc.Servers()
			if len(srv) != 1 {
				t.Fatalf("servers %+v, want one", srv)
			}
			s := srv[0]
			if s.Fact(FactAllocator) != c.want.alloc || s.Fact(FactPath) != "/usr/local/bin/redis-server" || s.Fact(FactLibc) != variants.LibcGlibc || len(s.Checksums) != 1 {
				t.Errorf("server %+v: want allocator %s at /usr/local/bin/redis-server on glibc with its sha256", s, c.want.alloc)
			}
			var linked []string
			for _, p := range doc.Related(s, c.want.link) {
				linked = append(linked, p.Name+" "+p.VersionInfo)
			}
			if !strings.Contains(strings.Join(linked, ", "), c.want.linked) {
				t.Errorf("%s of the server: %v, want %s", c.want.link, linked, c.want.linked)
			}
			seen := map[Relationship]bool{}
			for _, r := range doc.Relationships {
				if seen[r] {
					t.Errorf("relationship %+v twice", r)
				}
				seen[r] = true
			}
			if c.name == "mimalloc" {
				lib := doc.Find("libmimalloc2.0")
				if len(lib) != 1 || lib[0].Fact(FactRole) != "allocator" || lib[0].ExternalRefs[0].Locator != "pkg:deb/debian/libmimalloc2.0@2.0.9+ds-2?arch=amd64" {
					t.Errorf("libmimalloc2.0: %+v, want the allocator role and its purl", lib)
				}
			}
			if _, err := json.Marshal(doc); err != nil {
				t.Fatal(err)
			}
		})
	}
	t.Run("source tree", func(t *testing.T) {
		root := t.TempDir()
		write(t, root, "src/redis/src/version.h", "#define REDIS_VERSION \"7.0.15\"\n#define REDIS_VERSION_NUM 0x0007000f\n")
		write(t, root, "src/redis/deps/jemalloc/VERSION", "5.2.1-0-g0\n")
		write(t, root, "src/redis/deps/lua/src/lua.h", "#define LUA_RELEASE\t\"Lua 5.1.5\"\n")
		write(t, root, "src/redis/deps/hiredis/hiredis.h", "#define HIREDIS_MAJOR 1\n#define HIREDIS_MINOR 0\n#define HIREDIS_PATCH 3\n")
		write(t, root, "src/redis/deps/hdr_histogram/hdr_histogram.h", "/* */\n")
		doc, err := Scan(root, Options{Name: "sbom-bolted", Params: Params{RedisSHA256: "4b1dc4ee6d622a09fff9c6777191209750fb5e5a725ef78ea012d6eef4c22982", RedisSource: "debian:pool/main/r/redis/redis_7.0.15.orig.tar.gz"}})
		if err != nil {
			t.Fatal(err)
		}
		src := doc.Find("redis")
		if len(src) != 1 || src[0].VersionInfo != "7.0.15" || src[0].Checksums[0].Value != "4b1dc4ee6d622a09fff9c6777191209750fb5e5a725ef78ea012d6eef4c22982" || src[0].DownloadLocation != "debian:pool/main/r/redis/redis_7.0.15.orig.tar.gz" {
			t.Fatalf("source %+v", src)
		}
		got := map[string]string{}
		for _, p := range doc.Related(src[0], "CONTAINS") {
			got[p.Name] = p.VersionInfo
		}
		for name, v := range map[string]string{"jemalloc": "5.2.1", "lua": "5.1.5", "hiredis": "1.0.3", "hdr_histogram": ""} {
			if gv, ok := got[name]; !ok || gv != v {
				t.Errorf("bundled %s: %q (listed %v), want %q", name, gv, ok, v)
			}
		}
		if _, ok := got["fast_float"]; ok {
			t.Error("fast_float listed for a tree without it (Redis 7)")
		}
	})
}

// TestGenerate runs the generator protocol over two filesystems, the
// image and a scanned stage, as BuildKit mounts them.
func TestGenerate(t *testing.T) {
	run := t.TempDir()
	core := filepath.Join(run, "src/core/sbom")
	extra := filepath.Join(run, "src/extras/sbom-bolted")
	write(t, core, "var/lib/dpkg/status", dpkgStatus)
	write(t, extra, "src/redis/src/version.h", "#define REDIS_VERSION \"7.0.15\"\n")
	out := filepath.Join(run, "out")
	os.MkdirAll(out, 0o755)
	env := map[string]string{
		"BUILDKIT_SCAN_DESTINATION":   out,
		"BUILDKIT_SCAN_SOURCE":        core,
		"BUILDKIT_SCAN_SOURCE_EXTRAS": filepath.Join(run, "src/extras"),
		"BUILDKIT_SCAN_REDIS_SHA256":  "abc",
		"BUILDKIT_SCAN_VARIANT":       "v1",
	}
	files, err := Generate(func(k string) string { return env[k] }, "test", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 || filepath.Base(files[0]) != "sbom.spdx.json" || filepath.Base(files[1]) != "sbom-bolted.spdx.json" {
		t.Fatalf("wrote %v, want sbom.spdx.json and sbom-bolted.spdx.json", files)
	}
	var st Statement
	b, _ := os.ReadFile(files[1])
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	if st.Type != StatementType || st.PredicateType != PredicateSPDX || st.Predicate.Name != "sbom-bolted" || st.Predicate.SPDXVersion != "SPDX-2.3" {
		t.Errorf("statement %s %s %s %s", st.Type, st.PredicateType, st.Predicate.Name, st.Predicate.SPDXVersion)
	}
	if src := st.Predicate.Find("redis"); len(src) != 1 || src[0].Checksums[0].Value != "abc" {
		t.Errorf("the stage's source: %+v, want the archive's sha256 from BUILDKIT_SCAN_REDIS_SHA256", src)
	}
	if _, err := Generate(func(string) string { return "" }, "test", time.Now()); err == nil {
		t.Error("Generate outside BuildKit: no error")
	}
}

// TestAttrs: an attested push asks for provenance in mode max and names
// the archive the build used, with the location of that archive (a
// fallback's when its checksum is the fallback's), in one CSV value.
func TestAttrs(t *testing.T) {
	v := variants.Variant{Name: "v1", Allocator: "mimalloc", Source: variants.Source{URL: "https://up/r.tgz", SHA256: "aaa",
		Fallbacks: []variants.Fallback{{URL: "debian:pool/r.orig.tar.gz", SHA256: "bbb"}}}}
	a := Attrs("127.0.0.1:5000/redis-variants-sbom@sha256:ccc", v, "bbb")
	if a["attest:provenance"] != "mode=max" {
		t.Errorf("provenance %q", a["attest:provenance"])
	}
	want := "generator=127.0.0.1:5000/redis-variants-sbom@sha256:ccc,REDIS_SHA256=bbb,REDIS_SOURCE=debian:pool/r.orig.tar.gz,VARIANT=v1,ALLOCATOR=mimalloc"
	if a["attest:sbom"] != want {
		t.Errorf("sbom %q, want %q", a["attest:sbom"], want)
	}
}
