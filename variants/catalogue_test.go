package variants

import (
	"slices"
	"strings"
	"testing"
)

// TestCatalogueReleases checks the embedded copy of Redis's published
// hashes against figures stated elsewhere: 7.0.15's upstream sha256 (as in
// variants.yaml) with Debian's repacked tarball as its fallback, a
// release Debian does not carry without one, sha1-only releases left out.
func TestCatalogueReleases(t *testing.T) {
	s, ok := CatalogueSource("redis-7.0.15")
	if !ok {
		t.Fatal("redis-7.0.15 is not in the catalogue")
	}
	if s.SHA256 != "98066f5363504b26c34dd20fbcc3c957990d764cdf42576c836fc021073f4341" || s.URL != "https://download.redis.io/releases/redis-7.0.15.tar.gz" {
		t.Errorf("redis-7.0.15 = %+v", s)
	}
	if len(s.Fallbacks) != 1 || s.Fallbacks[0].URL != "debian:pool/main/r/redis/redis_7.0.15.orig.tar.gz" || s.Fallbacks[0].SHA256 != "4b1dc4ee6d622a09fff9c6777191209750fb5e5a725ef78ea012d6eef4c22982" {
		t.Errorf("redis-7.0.15 fallbacks = %+v", s.Fallbacks)
	}
	s, ok = CatalogueSource("redis-7.2.4")
	if !ok || s.SHA256 != "8d104c26a154b29fd67d6568b4f375212212ad41e0c2caa3d66480e78dbd3b59" || len(s.Fallbacks) != 0 {
		t.Errorf("redis-7.2.4 = %+v, %v", s, ok)
	}
	if _, ok := CatalogueSource("redis-2.8.0"); ok {
		t.Error("redis-2.8.0 (published with a sha1 only) is in the catalogue")
	}
	if _, ok := CatalogueSource("zig-0.11.0"); !ok {
		t.Error("zig-0.11.0 is not in the catalogue")
	}
	all := RedisReleases()
	if len(all) < 150 || !slices.IsSortedFunc(all, compareVersions) {
		t.Errorf("%d releases, sorted %v", len(all), slices.IsSortedFunc(all, compareVersions))
	}
	for ver := range debianPool {
		if _, ok := CatalogueSource("redis-" + ver); !ok {
			t.Errorf("Debian pool version %s has no upstream entry", ver)
		}
	}
	if got := NearestReleases("7.2.99", 3); !slices.Equal(got, []string{"7.2.13", "7.2.14", "7.2.15"}) {
		t.Errorf("NearestReleases(7.2.99) = %v", got)
	}
	if i, j := slices.Index(all, "8.10-rc1"), slices.Index(all, "8.8.1"); i < j {
		t.Errorf("8.10-rc1 sorts before 8.8.1: %v", all[i-1:i+2])
	}
}

// TestMinimalFile: one line with a version and no sources: or
// references: plans, with the catalogue's source and the default
// reference; a file's own source wins; an empty references: list asks for
// none; an unknown version is refused at its line with the nearest ones.
func TestMinimalFile(t *testing.T) {
	p, err := Parse("min.yaml", []byte("variants: [{name: mine, redis: 7.2.4, opt: O3}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.References) != 1 || p.References[0].Name != DefaultReference || p.References[0].Kind != KindDistro {
		t.Errorf("references = %+v", p.References)
	}
	if v := p.Variants[0]; v.Source.Name != "redis-7.2.4" || v.Redis != "7.2.4" || v.Opt != "O3" {
		t.Errorf("variant = %+v", v)
	}
	if _, ok := p.Sources["redis-7.2.4"]; !ok {
		t.Errorf("plan sources %v lack the catalogue's redis-7.2.4 (fetch would not get it)", p.Sources)
	}
	own := "sources: {redis-7.2.4: {url: \"file:///x.tar.gz\", sha256: " + strings.Repeat("ab", 32) + "}}\nreferences: []\n"
	p, err = Parse("own.yaml", []byte(own+"variants: [{name: mine, redis: 7.2.4}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if p.Variants[0].Source.URL != "file:///x.tar.gz" || len(p.References) != 0 {
		t.Errorf("own source %+v, references %v", p.Variants[0].Source, p.References)
	}
	_, err = Parse("bad.yaml", []byte("variants:\n  - {name: mine, redis: 7.2.99}\n"))
	if err == nil || !strings.Contains(err.Error(), "bad.yaml:2:25: variants[0].redis: redis 7.2.99 is neither under sources: nor in the built-in catalogue") ||
		!strings.Contains(err.Error(), "7.2.13, 7.2.14, 7.2.15") {
		t.Errorf("unknown version: %v", err)
	}
}

// TestStarterParses: the file init writes parses for every base and level,
// with the level's -march and the base's newest clang.
func TestStarterParses(t *testing.T) {
	for base := range Bases {
		for _, level := range []string{"v1", "v2", "v3", "v4"} {
			b, err := Starter(StarterMachine{CPUModel: "Test CPU", Level: level, Base: base})
			if err != nil {
				t.Fatalf("%s %s: %v", base, level, err)
			}
			p, err := Parse("starter.yaml", b)
			if err != nil {
				t.Fatalf("%s %s: the starter file does not parse: %v\n%s", base, level, err, b)
			}
			if len(p.References) != 2 || len(p.Variants) != 4 {
				t.Errorf("%s %s: %d references, %d variants", base, level, len(p.References), len(p.Variants))
			}
			want := "x86-64"
			if level != "v1" {
				want += "-" + level
			}
			if p.Variants[0].March != want {
				t.Errorf("%s %s: first variant's march %q, want %q", base, level, p.Variants[0].March, want)
			}
			if c := p.Variants[2].Compiler; c.Family != FamilyClang || c.Version != "19" {
				t.Errorf("%s: clang variant uses %v, want the newest clang (19)", base, c)
			}
		}
	}
	if _, err := Starter(StarterMachine{Base: "ubuntu:22.04"}); err == nil {
		t.Error("Starter accepted an unknown base")
	}
}
