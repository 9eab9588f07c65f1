package verify

import (
	"strings"
	"testing"

	"github.com/redis-variants/redis-variants/variants"
)

// PGOChecks fail a build whose profile was not used: sources without a
// profile (gcc), too many functions without data or an out-of-date
// profile (clang), Redis objects compiled without the profile flag, or a
// label naming another profile.
func TestPGOChecks(t *testing.T) {
	gccLine := "GNU C17 12.2.0 -mtune=generic -march=x86-64 -O3 -std=c11 -fprofile-use=/pgo/gcda -fprofile-partial-training"
	clangLine := "/usr/lib/llvm-16/bin/clang -cc1 -O3 -std=c11 -fprofile-instr-use=/pgo/redis.profdata"
	sum := strings.Repeat("ab", 32)
	labels := map[string]string{labelPrefix + "pgo.profile": sum}
	gcc := variants.Variant{Compiler: variants.Compiler{Family: variants.FamilyGCC, Version: "12"}, PGO: &variants.PGO{}}
	clang := variants.Variant{Compiler: variants.Compiler{Family: variants.FamilyClang, Version: "16"}, PGO: &variants.PGO{}}
	cases := []struct {
		name   string
		v      variants.Variant
		lines  []string
		report string
		labels map[string]string
		failed []string
	}{
		{"gcc used", gcc, []string{gccLine}, "profile_sha256 " + sum + "\nfiles_without_profile 0\nmismatched 0\n", labels, nil},
		{"gcc missing files", gcc, []string{gccLine}, "profile_sha256 " + sum + "\nfiles_without_profile 3\n", labels, []string{"pgo profile used"}},
		{"gcc without the flag", gcc, []string{strings.Replace(gccLine, " -fprofile-use=/pgo/gcda", "", 1)}, "profile_sha256 " + sum + "\n", labels, []string{"pgo flags"}},
		{"clang used", clang, []string{clangLine}, "profile_sha256 " + sum + "\nfunctions 0\nfunctions_without_profile 0\n", labels, nil},
		{"clang partly", clang, []string{clangLine}, "profile_sha256 " + sum + "\nfunctions 1000\nfunctions_without_profile 30\n", labels, []string{"pgo profile used"}},
		{"clang out of date", clang, []string{clangLine}, "profile_sha256 " + sum + "\nmismatched 2\n", labels, []string{"pgo profile used"}},
		{"another profile's label", clang, []string{clangLine}, "profile_sha256 " + sum + "\n", map[string]string{labelPrefix + "pgo.profile": "cd"}, []string{"pgo label"}},
		{"no report", gcc, []string{gccLine}, "", labels, []string{"pgo profile used", "pgo label"}},
	}
	for _, c := range cases {
		var failed []string
		for _, ch := range PGOChecks(&BinaryInfo{CommandLines: c.lines}, ParsePGOReport([]byte(c.report)), c.labels, c.v) {
			if !ch.OK {
				failed = append(failed, ch.Name)
			}
		}
		if strings.Join(failed, ",") != strings.Join(c.failed, ",") {
			t.Errorf("%s: failed %v, want %v", c.name, failed, c.failed)
		}
	}
}
