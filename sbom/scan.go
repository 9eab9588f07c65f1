package sbom

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/redis-variants/redis-variants/variants"
	"github.com/redis-variants/redis-variants/verify"
)

// Params are what the build knows and a filesystem does not: the source
// archive the Redis tree came from. BuildKit passes them to the generator
// as BUILDKIT_SCAN_<KEY> (attest:sbom=generator=...,KEY=VALUE).
type Params struct {
	RedisSHA256 string // the source archive's sha256
	RedisSource string // where it came from (a URL, the Debian pool path)
	Variant     string // the variant the image is
	Allocator   string // the allocator the spec asks for (recorded, never trusted)
}

// Param keys, as passed through attest:sbom.
const (
	ParamRedisSHA256 = "REDIS_SHA256"
	ParamRedisSource = "REDIS_SOURCE"
	ParamVariant     = "VARIANT"
	ParamAllocator   = "ALLOCATOR"
)

// Options say what a scan names and when.
type Options struct {
	Name      string // the document's name (BuildKit's target name: sbom, sbom-<stage>)
	Namespace string // a URI unique to this document
	Created   string // RFC 3339
	Tool      string // the creator, e.g. redis-variants-sbom-<version>
	Params    Params
}

// maxBinary bounds the size of a binary read whole (a redis-server is
// 3–30 MB).
const maxBinary = 256 << 20

// Scan catalogues the root filesystem at root: the Debian (dpkg) or
// Alpine (apk) packages installed, every redis-server binary (its sha256,
// its C library, the allocator it links and how: a STATIC_LINK to the
// bundled jemalloc, a DYNAMIC_LINK to the package owning the library),
// and a Redis source tree under src/ (its version, the archive's sha256
// from the params, each bundled dependency's version from its own
// headers).
func Scan(root string, o Options) (*Document, error) {
	b := newBuilder(o.Name, o.Namespace, o.Created, o.Tool)
	top := b.add("Root", Package{Name: o.Name, Purpose: "CONTAINER"}, map[string]string{FactRole: "root", "variant": o.Params.Variant})
	b.relate("SPDXRef-DOCUMENT", "DESCRIBES", top)

	pkgs, owners, err := osPackages(root)
	if err != nil {
		return nil, err
	}
	pkgID := map[string]string{}
	for _, p := range pkgs {
		id := b.add("Package", p.Package, map[string]string{FactRole: "os-package"})
		pkgID[p.Name] = id
		b.relate(top, "CONTAINS", id)
	}
	servers, err := findServers(root)
	if err != nil {
		return nil, err
	}
	for _, rel := range servers {
		if err := addServer(b, root, rel, top, pkgID, owners, o.Params); err != nil {
			return nil, err
		}
	}
	if err := addSourceTree(b, root, top, o.Params); err != nil {
		return nil, err
	}
	return &b.doc, nil
}

// osPackage is a package from a package database.
type osPackage struct {
	Package
	Files []string
}

// osPackages reads dpkg's status database (and which package owns which
// file, from its .list files) or apk's installed database.
func osPackages(root string) ([]osPackage, map[string]string, error) {
	owners := map[string]string{}
	status, err := os.ReadFile(filepath.Join(root, "var/lib/dpkg/status"))
	if err == nil {
		pkgs := parseDpkg(status)
		for _, p := range pkgs {
			for _, arch := range []string{"", ":amd64", ":arm64"} {
				list, err := os.ReadFile(filepath.Join(root, "var/lib/dpkg/info", p.Name+arch+".list"))
				if err != nil {
					continue
				}
				for _, f := range strings.Split(string(list), "\n") {
					if f != "" {
						owners[f] = p.Name
					}
				}
			}
		}
		return pkgs, owners, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, nil, err
	}
	installed, err := os.ReadFile(filepath.Join(root, "lib/apk/db/installed"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, owners, nil
	}
	if err != nil {
		return nil, nil, err
	}
	pkgs := parseApk(installed)
	for _, p := range pkgs {
		for _, f := range p.Files {
			owners["/"+f] = p.Name
		}
	}
	return pkgs, owners, nil
}

// parseDpkg reads the installed packages of a dpkg status file.
func parseDpkg(b []byte) []osPackage {
	var out []osPackage
	for _, para := range bytes.Split(b, []byte("\n\n")) {
		f := map[string]string{}
		sc := bufio.NewScanner(bytes.NewReader(para))
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if k, v, ok := strings.Cut(line, ": "); ok && !strings.HasPrefix(line, " ") {
				f[k] = v
			}
		}
		if f["Package"] == "" || !strings.Contains(f["Status"], "installed") || strings.Contains(f["Status"], "not-installed") || strings.Contains(f["Status"], "config-files") {
			continue
		}
		src := f["Source"]
		if src != "" {
			src = "built package from: " + src
		}
		purl := fmt.Sprintf("pkg:deb/debian/%s@%s?arch=%s", f["Package"], f["Version"], f["Architecture"])
		out = append(out, osPackage{Package: Package{
			Name: f["Package"], VersionInfo: f["Version"], Supplier: supplier(f["Maintainer"]), SourceInfo: src,
			ExternalRefs: []ExternalRef{{Category: "PACKAGE-MANAGER", Type: "purl", Locator: purl}},
		}})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// parseApk reads apk's installed database: P name, V version, A arch, F
// folder and R file lines.
func parseApk(b []byte) []osPackage {
	var out []osPackage
	for _, para := range bytes.Split(b, []byte("\n\n")) {
		var p osPackage
		arch, dir := "", ""
		for _, line := range strings.Split(string(para), "\n") {
			k, v, ok := strings.Cut(line, ":")
			if !ok {
				continue
			}
			switch k {
			case "P":
				p.Name = v
			case "V":
				p.VersionInfo = v
			case "A":
				arch = v
			case "F":
				dir = v
			case "R":
				p.Files = append(p.Files, path.Join(dir, v))
			}
		}
		if p.Name == "" {
			continue
		}
		p.ExternalRefs = []ExternalRef{{Category: "PACKAGE-MANAGER", Type: "purl", Locator: fmt.Sprintf("pkg:apk/alpine/%s@%s?arch=%s", p.Name, p.VersionInfo, arch)}}
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func supplier(m string) string {
	if m == "" {
		return ""
	}
	return "Organization: " + m
}

// findServers returns the redis-server files under root (relative, with a
// leading /), skipping the kernel's filesystems and symbolic links.
func findServers(root string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == root {
				return err
			}
			return nil // an unreadable folder: nothing of ours is there
		}
		rel := "/" + filepath.ToSlash(strings.TrimPrefix(p, root))
		rel = path.Clean(rel)
		if d.IsDir() {
			switch rel {
			case "/proc", "/sys", "/dev", "/run", "/tmp":
				if p != root {
					return filepath.SkipDir
				}
			}
			return nil
		}
		if d.Name() == "redis-server" && d.Type().IsRegular() {
			out = append(out, rel)
		}
		return nil
	})
	return out, err
}

// zmallocLib is the allocator name Redis compiles in (INFO mem_allocator).
var zmallocLib = regexp.MustCompile(`\b(jemalloc-\d+\.\d+\.\d+|tcmalloc-\d+\.\d+)\b`)

// addServer adds one redis-server binary with what links it to its
// allocator and C library.
func addServer(b *builder, root, rel, top string, pkgID, owners map[string]string, prm Params) error {
	data, err := readLimited(filepath.Join(root, rel))
	if err != nil {
		return err
	}
	info, err := verify.ReadBinary(data)
	if err != nil {
		return fmt.Errorf("%s: %w", rel, err)
	}
	sum := sha256.Sum256(data)
	alloc := verify.AllocatorFromBinary(info)
	facts := map[string]string{FactRole: "server", FactPath: rel, FactLibc: info.Libc(), FactAllocator: alloc}
	if alloc == "" {
		facts[FactAllocator] = "unknown (stripped)"
	}
	if prm.Allocator != "" {
		facts["spec-allocator"] = prm.Allocator
	}
	var compilers []string
	compilers = append(compilers, info.Comments...)
	p := Package{Name: "redis-server", VersionInfo: serverVersion(root, data), Purpose: "APPLICATION",
		Checksums: []Checksum{{"SHA256", hex.EncodeToString(sum[:])}}}
	if len(compilers) > 0 {
		p.SourceInfo = "compiled by: " + strings.Join(compilers, "; ")
	}
	if owner, ok := owners[rel]; ok {
		p.Supplier = "Organization: Debian (package " + owner + ")"
	}
	id := b.add("Binary", p, facts)
	b.relate(top, "CONTAINS", id)
	// its allocator
	switch alloc {
	case variants.AllocJemalloc:
		ver := ""
		if m := zmallocLib.FindSubmatch(data); m != nil {
			ver = strings.TrimPrefix(string(m[1]), "jemalloc-")
		}
		aid := b.add("Bundled", Package{Name: "jemalloc", VersionInfo: ver, Purpose: "LIBRARY",
			SourceInfo:   "Redis's bundled deps/jemalloc, statically linked (its je_ symbols are in the binary)",
			ExternalRefs: []ExternalRef{{Category: "PACKAGE-MANAGER", Type: "purl", Locator: "pkg:github/jemalloc/jemalloc@" + ver}}},
			map[string]string{FactRole: "allocator"})
		b.relate(id, "STATIC_LINK", aid)
	}
	// the libraries it needs, each to the package that owns it
	for _, lib := range info.Needed {
		owner := ownerOf(root, lib, owners)
		lid, ok := pkgID[owner]
		if !ok {
			continue
		}
		b.relate(id, "DYNAMIC_LINK", lid)
		if a := verify.LibraryAllocator(lib); a != "" && a == alloc {
			b.setFact(lid, FactRole, "allocator")
		}
	}
	return nil
}

// ownerOf is the package that owns the shared library lib, looked up in
// the usual library folders.
func ownerOf(root, lib string, owners map[string]string) string {
	for _, dir := range []string{"/lib", "/usr/lib", "/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/local/lib"} {
		p := path.Join(dir, lib)
		if o, ok := owners[p]; ok {
			return o
		}
		// the list may name the library through a merged /usr
		if o, ok := owners["/usr"+p]; ok && !strings.HasPrefix(p, "/usr/") {
			return o
		}
		if real, err := filepath.EvalSymlinks(filepath.Join(root, p)); err == nil {
			if o, ok := owners["/"+strings.TrimPrefix(filepath.ToSlash(strings.TrimPrefix(real, root)), "/")]; ok {
				return o
			}
		}
	}
	return ""
}

var versionRe = regexp.MustCompile(`#define REDIS_VERSION "([^"]+)"`)

// serverVersion is the Redis version of a server: from the tree beside it
// (src/version.h), else the build-info this tool's images carry, else "".
func serverVersion(root string, _ []byte) string {
	for _, f := range []string{"src/redis/src/version.h"} {
		if b, err := os.ReadFile(filepath.Join(root, f)); err == nil {
			if m := versionRe.FindSubmatch(b); m != nil {
				return string(m[1])
			}
		}
	}
	if b, err := os.ReadFile(filepath.Join(root, "usr/local/share/redis-variants/build-info.json")); err == nil {
		if m := regexp.MustCompile(`v=([0-9][0-9.]*)`).FindSubmatch(b); m != nil {
			return string(m[1])
		}
	}
	return ""
}

// bundled are Redis's vendored dependencies: where their version is, and
// how to read it.
var bundled = []struct {
	name, file string
	re         *regexp.Regexp
	join       bool // the version is the submatches joined with dots
}{
	{"jemalloc", "deps/jemalloc/VERSION", regexp.MustCompile(`^([0-9][0-9.]*)`), false},
	{"lua", "deps/lua/src/lua.h", regexp.MustCompile(`#define LUA_RELEASE\s+"Lua ([0-9.]+)"`), false},
	{"hiredis", "deps/hiredis/hiredis.h", regexp.MustCompile(`(?s)#define HIREDIS_MAJOR (\d+)\s*#define HIREDIS_MINOR (\d+)\s*#define HIREDIS_PATCH (\d+)`), true},
	{"hdr_histogram", "deps/hdr_histogram/hdr_histogram.h", nil, false},
	{"fast_float", "deps/fast_float/fast_float.h", regexp.MustCompile(`(?s)#define FASTFLOAT_VERSION_MAJOR (\d+)\s*#define FASTFLOAT_VERSION_MINOR (\d+)\s*#define FASTFLOAT_VERSION_PATCH (\d+)`), true},
	{"linenoise", "deps/linenoise/linenoise.h", nil, false},
}

// addSourceTree adds a Redis source tree found at src/redis (the build
// stage's), with its bundled dependencies.
func addSourceTree(b *builder, root, top string, prm Params) error {
	tree := filepath.Join(root, "src/redis")
	vh, err := os.ReadFile(filepath.Join(tree, "src/version.h"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	ver := ""
	if m := versionRe.FindSubmatch(vh); m != nil {
		ver = string(m[1])
	}
	src := Package{Name: "redis", VersionInfo: ver, Purpose: "SOURCE", DownloadLocation: prm.RedisSource,
		LicenseDeclared: "BSD-3-Clause", Supplier: "Organization: Redis Ltd.",
		ExternalRefs: []ExternalRef{{Category: "PACKAGE-MANAGER", Type: "purl", Locator: "pkg:github/redis/redis@" + ver}}}
	if prm.RedisSHA256 != "" {
		src.Checksums = []Checksum{{"SHA256", prm.RedisSHA256}}
	}
	sid := b.add("Source", src, map[string]string{FactRole: "source", FactPath: "/src/redis"})
	b.relate(top, "CONTAINS", sid)
	for _, d := range bundled {
		body, err := os.ReadFile(filepath.Join(tree, d.file))
		if err != nil {
			continue // not bundled in this version (fast_float came with Redis 8)
		}
		v := ""
		if d.re != nil {
			if m := d.re.FindSubmatch(body); m != nil {
				var parts []string
				for _, s := range m[1:] {
					parts = append(parts, string(s))
				}
				v = strings.Join(parts, ".")
			}
		}
		id := b.add("Bundled", Package{Name: d.name, VersionInfo: v, Purpose: "LIBRARY",
			SourceInfo: "vendored in the Redis source tree at " + path.Dir(d.file)},
			map[string]string{FactRole: "bundled", FactPath: "/src/redis/" + path.Dir(d.file)})
		b.relate(sid, "CONTAINS", id)
	}
	for _, s := range b.doc.Packages {
		if s.Fact(FactRole) == "server" && strings.HasPrefix(s.Fact(FactPath), "/src/redis/") {
			b.relate(s.SPDXID, "GENERATED_FROM", sid)
		}
	}
	return nil
}

func readLimited(p string) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() > maxBinary {
		return nil, fmt.Errorf("%s: %d bytes, more than a redis-server could be", p, st.Size())
	}
	b := make([]byte, st.Size())
	_, err = io.ReadFull(f, b)
	return b, err
}
